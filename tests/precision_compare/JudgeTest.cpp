// Each judgement rule of api_precision_compare (precheck.md §5.3, §5.4) on hand-made rows. Expected values
// are derived by hand in the comments from the thresholds of §4.3 and §5.3.
#include <gtest/gtest.h>

#include <cmath>

#include "TestUtil.h"
#include "precision_compare/DetailsTable.h"
#include "probe/api_precision_compare.h"
#include "probe/error.h"

namespace probe {
namespace {

using testing::Cells;
using testing::ScratchDir;

// Column positions in api_precision_compare_details (precheck.md §5.5).
enum : std::size_t {
  kSmallRatio = 1,
  kSmallStatus,
  kRmseRatio,
  kRmseStatus,
  kMaxRelRatio,
  kMaxRelStatus,
  kMeanRelRatio,
  kMeanRelStatus,
  kEbRatio,
  kEbStatus,
  kInfNan,
  kInfNanStatus,
  kRelErr,
  kRelErrStatus,
  kAbsErr,
  kAbsErrStatus,
  kErrorRate,
  kErrorRateStatus,
  kMeanUlp,
  kUlpProp,
  kUlpRatio,
  kUlpStatus,
  kThousandth,
  kThousandthStatus,
  kResult,
  kAlgorithm,
  kMessage
};

struct Outcome {
  std::vector<CsvRow> details, result;
  ApiPrecisionCompareSummary summary;
};

Outcome run_pair(const std::string& name, const std::vector<Cells>& npu, const std::vector<Cells>& gpu,
                 Profile profile = Profile::MsProbe) {
  ScratchDir dir(name);
  auto o = testing::options_for(testing::write_details(dir.file("npu.csv"), npu),
                                testing::write_details(dir.file("gpu.csv"), gpu), dir.file("out"));
  o.profile = profile;
  Outcome r;
  r.summary = run_api_precision_compare(o);
  r.details = csv_read_file(r.summary.details_csv);
  r.result = csv_read_file(r.summary.result_csv);
  r.details.erase(r.details.begin());
  r.result.erase(r.result.begin());
  return r;
}

Outcome run_same(const std::string& name, const std::vector<Cells>& rows) {
  return run_pair(name, rows, rows);
}

Cells row(const std::string& api, const std::string& dtype, Cells cells) {
  cells["API Name"] = api;
  cells["DEVICE Dtype"] = dtype;
  if (!cells.count("Shape")) cells["Shape"] = "(4,)";
  return cells;
}

TEST(PrecisionCompareJudge, BinaryConsistencyPassesOnlyAtZero) {
  auto r = run_same("binary",
                    {row("Torch.abs.0.forward.output.0", "torch.float16", {{"二进制一致错误率", "0.0"}}),
                     row("Torch.argmax.0.forward.output.0", "torch.int64", {{"二进制一致错误率", "0.25"}}),
                     row("Torch.empty_like.0.forward.output.0", " ", {})});
  ASSERT_EQ(r.details.size(), 3u);
  EXPECT_EQ(r.details[0][kErrorRate], "0.0");  // copied as written: the SPACE cell keeps the column textual
  EXPECT_EQ(r.details[0][kErrorRateStatus], "pass");
  EXPECT_EQ(r.details[0][kAlgorithm], "二进制一致法");
  EXPECT_EQ(r.details[0][kMessage], "");
  EXPECT_EQ(r.details[1][kResult], "error");  // int64 is not a float dtype: binary whatever the API
  EXPECT_EQ(r.details[1][kMessage], "ERROR: 二进制一致错误率超过阈值\n");
  EXPECT_EQ(r.result[1], (CsvRow{"Torch.argmax.0", "error", " ", ""}));
}

TEST(PrecisionCompareJudge, TopkForwardErrorCarriesItsHint) {
  auto r =
      run_same("topk", {row("Torch.topk.0.forward.output.0", "torch.int64", {{"二进制一致错误率", "0.5"}})});
  ASSERT_EQ(r.result.size(), 1u);
  EXPECT_EQ(r.result[0][1], "error");
  EXPECT_EQ(r.result[0][3].rfind("在npu上，topk的入参sorted=False时不生效", 0), 0u);
}

TEST(PrecisionCompareJudge, AbsoluteThresholdEachRatePassesOnlyAtZero) {
  auto r = run_same("absolute",
                    {row("Tensor.mul.0.forward.output.0", "torch.float16",
                         {{"inf/nan错误率", "0"}, {"相对误差错误率", "0.1"}, {"绝对误差错误率", "0"}}),
                     row("Tensor.mul.1.forward.output.0", "torch.float16",
                         {{"inf/nan错误率", "0.5"}, {"相对误差错误率", "0.1"}, {"绝对误差错误率", "1e-05"}}),
                     row("Tensor.mul.2.forward.output.0", "torch.float32",
                         {{"inf/nan错误率", "0"}, {"相对误差错误率", "0"}, {"绝对误差错误率", "0"}})});
  ASSERT_EQ(r.details.size(), 3u);
  EXPECT_EQ(r.details[0][kRelErr], "0.10000000000000");
  EXPECT_EQ(r.details[0][kRelErrStatus], "error");
  EXPECT_EQ(r.details[0][kInfNanStatus], "pass");
  EXPECT_EQ(r.details[0][kAlgorithm], "绝对阈值法");
  EXPECT_EQ(r.details[0][kMessage], "ERROR: 相对误差错误率超过阈值");
  // HEAD concatenates the three messages without separators.
  EXPECT_EQ(r.details[1][kMessage],
            "ERROR: inf/nan错误率超过阈值ERROR: 相对误差错误率超过阈值ERROR: 绝对误差错误率超过阈值");
  EXPECT_EQ(r.details[1][kAbsErr], "0.00001000000000");
  EXPECT_EQ(r.details[2][kResult], "pass");
  EXPECT_EQ(r.details[2][kMessage], "");
}

TEST(PrecisionCompareJudge, FilledRelativeErrorRateRoutesAnyApiToAbsoluteThreshold) {
  // vectors §A.3: conv2d, abs, matmul and mean rows with 相对误差错误率 '0' are all judged by the absolute
  // threshold.
  Cells zeros{{"inf/nan错误率", "0"}, {"相对误差错误率", "0"},   {"绝对误差错误率", "0"},
              {"双千指标", "0.999"},  {"二进制一致错误率", "0"}, {"小值域错误占比", "0"},
              {"均方根误差", "0"},    {"相对误差最大值", "0"},   {"相对误差平均值", "0"},
              {"误差均衡性", "0"},    {"ULP误差平均值", "0"},    {"ULP误差大于阈值占比", "0"}};
  auto r = run_same("route", {row("Functional.conv2d.0.forward.output.0", "torch.float16", zeros),
                              row("Torch.abs.0.forward.output.0", "torch.float16", zeros),
                              row("Torch.matmul.0.forward.output.0", "torch.float16", zeros),
                              row("Torch.mean.0.forward.output.0", "torch.float16", zeros)});
  ASSERT_EQ(r.details.size(), 4u);
  for (const auto& d : r.details) {
    EXPECT_EQ(d[kAlgorithm], "绝对阈值法") << d[0];
    EXPECT_EQ(d[kResult], "pass") << d[0];
  }
}

TEST(PrecisionCompareJudge, AllNumericRelativeErrorColumnIsNotASkip) {
  // DECISIONS D11: with pandas msprobe turns every row into a SKIP row when 相对误差错误率 holds only
  // numbers; probe judges them.
  auto r = run_same("numeric_col",
                    {row("Tensor.add.0.forward.output.0", "torch.float32",
                         {{"inf/nan错误率", "0"}, {"相对误差错误率", "0"}, {"绝对误差错误率", "0"}})});
  ASSERT_EQ(r.details.size(), 1u);
  EXPECT_EQ(r.details[0][kResult], "pass");
}

TEST(PrecisionCompareJudge, ThousandthPassesAtExactly0999) {
  auto r = run_same("thousandth",
                    {row("Functional.conv2d.0.forward.output.0", "torch.float32", {{"双千指标", "0.999"}}),
                     row("Functional.conv1d.0.forward.output.0", "torch.float32", {{"双千指标", "0.998"}}),
                     row("Torch.empty_like.0.forward.output.0", " ", {})});
  ASSERT_EQ(r.details.size(), 3u);
  EXPECT_EQ(r.details[0][kThousandth], "0.999");
  EXPECT_EQ(r.details[0][kThousandthStatus], "pass");
  EXPECT_EQ(r.details[0][kAlgorithm], "双千指标法");
  EXPECT_EQ(r.details[1][kResult], "error");
  EXPECT_EQ(r.details[1][kMessage], "ERROR: 双千指标不达标\n");
}

Cells bench(const std::string& small, const std::string& rmse, const std::string& max_rel,
            const std::string& mean_rel, const std::string& eb) {
  return {{"小值域错误占比", small},
          {"均方根误差", rmse},
          {"相对误差最大值", max_rel},
          {"相对误差平均值", mean_rel},
          {"误差均衡性", eb}};
}

TEST(PrecisionCompareJudge, BenchmarkRatiosThresholdsAndEbExcluded) {
  // float32 floor 2^-14: small 0/max(0,2^-14) = 0; rmse 0.3/0.1 = 2.9999999999999996 > 2 → error;
  // max_rel 1/0.1 = 10 (not > 10) → pass; mean_rel 0.2/0.1 = 2 → pass; eb 1/0.1 = 10 > 2 → error, not
  // counted.
  auto r = run_pair(
      "bench",
      {row("Functional.gelu.0.forward.output.0", "torch.float32", bench("0", "0.3", "1", "0.2", "1"))},
      {row("Functional.gelu.0.forward.output.0", "torch.float32", bench("0", "0.1", "0.1", "0.1", "0.1"))});
  ASSERT_EQ(r.details.size(), 1u);
  const auto& d = r.details[0];
  EXPECT_EQ(d[kSmallRatio], "0.00000000000000");
  EXPECT_EQ(d[kRmseRatio], "3.00000000000000");
  EXPECT_EQ(d[kRmseStatus], "error");
  EXPECT_EQ(d[kMaxRelRatio], "10.00000000000000");
  EXPECT_EQ(d[kMaxRelStatus], "pass");
  EXPECT_EQ(d[kMeanRelRatio], "2.00000000000000");
  EXPECT_EQ(d[kMeanRelStatus], "pass");
  EXPECT_EQ(d[kEbRatio], "10.00000000000000");
  EXPECT_EQ(d[kEbStatus], "error");
  EXPECT_EQ(d[kResult], "error");
  EXPECT_EQ(d[kAlgorithm], "标杆比对法");
  EXPECT_EQ(d[kMessage], "ERROR: 均方根误差比值超过阈值\n");

  // Only EB fails → 比对结果 pass.
  auto eb_only = run_pair(
      "bench_eb",
      {row("Functional.gelu.0.forward.output.0", "torch.float32", bench("0", "0", "0", "0", "1"))},
      {row("Functional.gelu.0.forward.output.0", "torch.float32", bench("0", "0", "0", "0", "0.1"))});
  EXPECT_EQ(eb_only.details[0][kEbStatus], "error");
  EXPECT_EQ(eb_only.details[0][kResult], "pass");
  EXPECT_EQ(eb_only.result[0], (CsvRow{"Functional.gelu.0", "pass", " ", ""}));
}

TEST(PrecisionCompareJudge, BenchmarkDenominatorFloorDependsOnDtype) {
  // GPU metric 0: fp16 floor 2^-11 → 2^-12/2^-11 = 0.5; bf16 floor 2^-8 → 2^-7/2^-8 = 2 (not > 2, pass);
  // fp32 floor 2^-14 → 2^-12/2^-14 = 4 > 2 → error.
  const std::string q = "0.000244140625", s = "0.0078125";
  auto r =
      run_pair("floor",
               {row("Functional.a.0.forward.output.0", "torch.float16", bench(q, "0", "0", "0", "0")),
                row("Functional.b.0.forward.output.0", "torch.bfloat16", bench(s, "0", "0", "0", "0")),
                row("Functional.c.0.forward.output.0", "torch.float32", bench(q, "0", "0", "0", "0"))},
               {row("Functional.a.0.forward.output.0", "torch.float16", bench("0", "0", "0", "0", "0")),
                row("Functional.b.0.forward.output.0", "torch.bfloat16", bench("0", "0", "0", "0", "0")),
                row("Functional.c.0.forward.output.0", "torch.float32", bench("0", "0", "0", "0", "0"))});
  ASSERT_EQ(r.details.size(), 3u);
  EXPECT_EQ(r.details[0][kSmallRatio], "0.50000000000000");
  EXPECT_EQ(r.details[1][kSmallRatio], "2.00000000000000");
  EXPECT_EQ(r.details[1][kSmallStatus], "pass");
  EXPECT_EQ(r.details[2][kSmallRatio], "4.00000000000000");
  EXPECT_EQ(r.details[2][kSmallStatus], "error");
  EXPECT_EQ(r.details[2][kMessage], "ERROR: 小值域错误比值超过阈值\n");
}

TEST(PrecisionCompareJudge, BenchmarkInfNanConsistency) {
  auto r =
      run_pair("infnan",
               {row("Functional.a.0.forward.output.0", "torch.float32", bench("0", "inf", "0", "0", "0")),
                row("Functional.b.0.forward.output.0", "torch.float32", bench("0", "inf", "0", "0", "0")),
                row("Functional.c.0.forward.output.0", "torch.float32", bench("nan", "0", "0", "0", "0"))},
               {row("Functional.a.0.forward.output.0", "torch.float32", bench("0", "inf", "0", "0", "0")),
                row("Functional.b.0.forward.output.0", "torch.float32", bench("0", "-inf", "0", "0", "0")),
                row("Functional.c.0.forward.output.0", "torch.float32", bench("1", "0", "0", "0", "0"))});
  ASSERT_EQ(r.details.size(), 3u);
  EXPECT_EQ(r.details[0][kRmseRatio], "nan");
  EXPECT_EQ(r.details[0][kRmseStatus], "pass");
  EXPECT_EQ(r.details[0][kResult], "pass");
  EXPECT_EQ(r.details[0][kMessage], "均方根误差同为同号inf或nan\n");
  EXPECT_EQ(r.details[1][kRmseStatus], "error");
  EXPECT_EQ(r.details[1][kMessage], "均方根误差inf或nan不一致\nERROR: 均方根误差比值超过阈值\n");
  EXPECT_EQ(r.details[2][kSmallStatus], "error");
  EXPECT_EQ(r.details[2][kMessage], "小值域错误占比inf或nan不一致\nERROR: 小值域错误比值超过阈值\n");
}

Cells ulp(const std::string& mean, const std::string& prop) {
  return {{"ULP误差平均值", mean}, {"ULP误差大于阈值占比", prop}};
}

TEST(PrecisionCompareJudge, UlpFloat32AndLowPrecisionRules) {
  // fp32: pass if mean < 64 or proportion < 0.05 or ratio < 1. Row a: mean 63 → pass although ratio 0.5/0.25
  // = 2. Row b: mean 64, proportion 0.05, ratio 2 → error. fp16 row c: 0.5/0.25 = 2 ≥ 1 and 0.5 ≥ 0.001 →
  // error. fp16 row d: 0.0009 < 0.001 → pass.
  auto r = run_pair("ulp",
                    {row("Torch.mm.0.forward.output.0", "torch.float32", ulp("63", "0.5")),
                     row("Torch.mm.1.forward.output.0", "torch.float32", ulp("64", "0.05")),
                     row("Torch.mm.2.forward.output.0", "torch.float16", ulp("1", "0.5")),
                     row("Torch.mm.3.forward.output.0", "torch.bfloat16", ulp("1", "0.0009"))},
                    {row("Torch.mm.0.forward.output.0", "torch.float32", ulp("1", "0.25")),
                     row("Torch.mm.1.forward.output.0", "torch.float32", ulp("1", "0.025")),
                     row("Torch.mm.2.forward.output.0", "torch.float16", ulp("1", "0.25")),
                     row("Torch.mm.3.forward.output.0", "torch.bfloat16", ulp("1", "0.5"))});
  ASSERT_EQ(r.details.size(), 4u);
  EXPECT_EQ(r.details[0][kMeanUlp], "63.00000000000000");
  EXPECT_EQ(r.details[0][kUlpRatio], "2.00000000000000");
  EXPECT_EQ(r.details[0][kUlpStatus], "pass");
  EXPECT_EQ(r.details[0][kAlgorithm], "ULP误差比对法");
  EXPECT_EQ(r.details[1][kUlpStatus], "error");
  EXPECT_EQ(r.details[1][kMessage], "ERROR: ULP误差不满足标准\n");
  EXPECT_EQ(r.details[2][kResult], "error");
  EXPECT_EQ(r.details[3][kResult], "pass");
}

TEST(PrecisionCompareJudge, UlpInconsistentInfNanLeavesStatusBlank) {
  auto r = run_pair("ulp_nan", {row("Torch.bmm.0.forward.output.0", "torch.float32", ulp("nan", "0"))},
                    {row("Torch.bmm.0.forward.output.0", "torch.float32", ulp("1", "0"))});
  ASSERT_EQ(r.details.size(), 1u);
  EXPECT_EQ(r.details[0][kUlpStatus], " ");
  EXPECT_EQ(r.details[0][kResult], "error");
  EXPECT_EQ(r.details[0][kMeanUlp], "nan");
  EXPECT_EQ(r.details[0][kMessage], "ULP误差平均值inf或nan不一致\nERROR: ULP误差不满足标准\n");
}

TEST(PrecisionCompareJudge, Fp8OutputUsesProportionOnly) {
  auto r = run_same("fp8", {row("Torch.foo.0.forward.output.0", "torch.float8_e4m3fn", ulp(" ", "0.0005")),
                            row("Torch.foo.1.forward.output.0", "torch.float8_e5m2", ulp(" ", "0.001"))});
  ASSERT_EQ(r.details.size(), 2u);
  EXPECT_EQ(r.details[0][kMeanUlp], " ");
  EXPECT_EQ(r.details[0][kUlpRatio], " ");
  EXPECT_EQ(r.details[0][kUlpProp], "0.00050000000000");
  EXPECT_EQ(r.details[0][kResult], "pass");
  EXPECT_EQ(r.details[1][kResult], "error");
}

TEST(PrecisionCompareJudge, AccumulativeNeedsItsRatesAndIsSkippedWhenBlank) {
  // test_api is the accumulative-error placeholder; its 相对误差错误率 blank → routed to it, then the blank
  // inf/nan错误率 raises msprobe's empty-string error → SKIP row written at once.
  auto r =
      run_same("accum", {row("Torch.test_api.0.forward.output.0", "torch.float16", {{"误差均衡性", "0"}})});
  ASSERT_EQ(r.details.size(), 1u);
  EXPECT_EQ(r.details[0][kResult], "SKIP");
  EXPECT_EQ(r.details[0][kMessage], "ERROR: Input data is an empty string");
  EXPECT_EQ(r.result[0], (CsvRow{"Torch.test_api.0.forward.output.0", "SKIP", "SKIP",
                                 "ERROR: Input data is an empty string"}));
  ASSERT_EQ(r.summary.skipped.size(), 1u);
  EXPECT_EQ(r.summary.skipped[0].column, "inf/nan错误率");
}

TEST(PrecisionCompareJudge, UnparsableNumberBecomesSkipRowNamingTheCell) {
  auto r = run_same("garbage",
                    {row("Torch.abs.0.forward.output.0", "torch.float16", {{"二进制一致错误率", "abc"}})});
  ASSERT_EQ(r.details.size(), 1u);
  EXPECT_EQ(r.details[0][kMessage], "ERROR: Input data cannot be converted to float");
  ASSERT_EQ(r.summary.skipped.size(), 1u);
  EXPECT_EQ(r.summary.skipped[0].row, 1u);
  EXPECT_EQ(r.summary.skipped[0].column, "二进制一致错误率");
  EXPECT_NE(r.summary.skipped[0].file.find("npu.csv"), std::string::npos);
}

TEST(PrecisionCompareJudge, SkipRowsAndUnsupportedDtypeGroups) {
  auto r = run_same(
      "skips",
      {row("Torch.empty_like.0.forward.output.0", " ",
           {{"Message", "Bench output is None, skip this test."}}),
       row("Torch.zeros.0.forward.output.0", "torch.float16", {{"Shape", "(0,)"}, {"Message", "empty"}}),
       row("Torch.cumsum.0.forward.output.0", "torch.float64", {{"Message", "f64"}}),
       row("Torch.view_as_complex.0.forward.output.0", "torch.complex64", {{"Message", "c64"}})});
  ASSERT_EQ(r.details.size(), 4u);
  for (const auto& d : r.details) EXPECT_EQ(d[kResult], "SKIP");
  EXPECT_EQ(r.details[2][kMessage], "f64");
  ASSERT_EQ(r.result.size(), 4u);
  EXPECT_EQ(r.result[0],
            (CsvRow{"Torch.empty_like.0", "SKIP", " ", "Bench output is None, skip this test."}));
  EXPECT_EQ(r.result[1], (CsvRow{"Torch.zeros.0", "SKIP", " ", "empty"}));
  EXPECT_EQ(r.result[2],
            (CsvRow{"Torch.cumsum.0", "SKIP", "SKIP", "This data type does not support benchmark compare."}));
  EXPECT_EQ(r.result[3][3], "This data type does not support benchmark compare.");
}

TEST(PrecisionCompareJudge, EmptyMessageCellStaysEmpty) {
  // DECISIONS D11: msprobe would print pandas' NaN as "nan" here.
  auto r = run_same("empty_msg", {row("Torch.empty_like.0.forward.output.0", " ", {{"Message", ""}})});
  ASSERT_EQ(r.details.size(), 1u);
  EXPECT_EQ(r.details[0][kMessage], "");
  EXPECT_EQ(r.result[0], (CsvRow{"Torch.empty_like.0", "SKIP", " ", ""}));
}

TEST(PrecisionCompareJudge, GroupsAggregateForwardAndBackwardPerConsecutiveRun) {
  auto pass = Cells{{"二进制一致错误率", "0"}};
  auto fail = Cells{{"二进制一致错误率", "1"}};
  std::vector<Cells> npu{
      row("Torch.abs.0.forward.output.0", "torch.int64", pass),
      row("Torch.abs.0.forward.output.1", " ", {{"Message", "none"}}),  // SKIP + pass → pass
      row("Torch.abs.0.backward.output.0", "torch.int64", fail),
      row("Torch.neg.0.forward.output.0", "torch.int64", pass)};
  std::vector<Cells> gpu = npu;
  npu.push_back(row("Torch.abs.0.forward.output.0", "torch.int64", fail));  // interleaved again: a new group
  auto r = run_pair("groups", npu, gpu);
  ASSERT_EQ(r.result.size(), 3u);
  EXPECT_EQ(r.result[0], (CsvRow{"Torch.abs.0", "pass", "error", ""}));
  EXPECT_EQ(r.result[1], (CsvRow{"Torch.neg.0", "pass", " ", ""}));
  EXPECT_EQ(r.result[2], (CsvRow{"Torch.abs.0", "error", " ", ""}));
  EXPECT_EQ(r.summary.forward_pass, 2u);
  EXPECT_EQ(r.summary.forward_error, 1u);
}

TEST(PrecisionCompareJudge, SevenPartNamesUseTheDottedApiName) {
  // Torch.linalg.vector_norm → API name linalg.vector_norm (benchmark); Aten.add.Tensor.0 → add.Tensor.
  auto r = run_same("seven", {row("Torch.linalg.vector_norm.0.forward.output.0", "torch.float32",
                                  bench("0", "0", "0", "0", "0"))});
  ASSERT_EQ(r.result.size(), 1u);
  EXPECT_EQ(r.result[0][0], "Torch.linalg.vector_norm.0");
  EXPECT_EQ(r.details[0][kAlgorithm], "标杆比对法");
}

TEST(PrecisionCompareJudge, InvalidNameIsASkipRowInBothFiles) {
  auto r = run_same("invalid", {row("Torch.relu.forward", "torch.float32", {})});
  ASSERT_EQ(r.details.size(), 1u);
  EXPECT_EQ(r.details[0][kResult], "SKIP");
  EXPECT_EQ(r.details[0][kMessage], "The API name Torch.relu.forward is invalid.");
  EXPECT_EQ(r.result[0],
            (CsvRow{"Torch.relu.forward", "SKIP", "SKIP", "The API name Torch.relu.forward is invalid."}));
}

TEST(PrecisionCompareJudge, NpuRowWithoutGpuRowIsLeftOutAndReported) {
  auto r = run_pair("missing",
                    {row("Torch.abs.0.forward.output.0", "torch.int64", {{"二进制一致错误率", "0"}}),
                     row("Torch.neg.0.forward.output.0", "torch.int64", {{"二进制一致错误率", "0"}})},
                    {row("Torch.abs.0.forward.output.0", "torch.int64", {{"二进制一致错误率", "0"}})});
  EXPECT_EQ(r.details.size(), 1u);
  EXPECT_EQ(r.result.size(), 1u);
  ASSERT_EQ(r.summary.missing_in_gpu.size(), 1u);
  EXPECT_EQ(r.summary.missing_in_gpu[0].row, 2u);
}

TEST(PrecisionCompareJudge, PandasColumnTypesDecideHowCopiedCellsPrint) {
  // A column holding only numbers is float64 in pandas, and msprobe prints its copied cells with %.14f;
  // a column of plain integers stays int64 and prints as written.
  auto floats = run_same("pd_float",
                         {row("Torch.abs.0.forward.output.0", "torch.int64", {{"二进制一致错误率", "0"}}),
                          row("Torch.abs.1.forward.output.0", "torch.int64", {{"二进制一致错误率", "0.5"}})});
  EXPECT_EQ(floats.details[0][kErrorRate], "0.00000000000000");
  EXPECT_EQ(floats.details[1][kErrorRate], "0.50000000000000");
  auto ints =
      run_same("pd_int", {row("Torch.abs.0.forward.output.0", "torch.int64", {{"二进制一致错误率", "0"}}),
                          row("Torch.abs.1.forward.output.0", "torch.int64", {{"二进制一致错误率", "1"}})});
  EXPECT_EQ(ints.details[0][kErrorRate], "0");
  EXPECT_EQ(ints.details[1][kErrorRate], "1");
}

TEST(PythonFloat, MatchesPythonFloatConstructor) {
  using precision_compare::parse_python_float;
  EXPECT_EQ(parse_python_float("   123.0   "), 123.0);
  EXPECT_EQ(parse_python_float("123.45"), 123.45);
  EXPECT_EQ(parse_python_float("1_000.5"), 1000.5);
  EXPECT_EQ(parse_python_float("-1e-05"), -1e-05);
  EXPECT_EQ(parse_python_float("1."), 1.0);
  EXPECT_EQ(parse_python_float(".5"), 0.5);
  EXPECT_EQ(parse_python_float("+2E3"), 2000.0);
  EXPECT_EQ(parse_python_float("1e400"), HUGE_VAL);
  EXPECT_EQ(parse_python_float("-Infinity"), -HUGE_VAL);
  EXPECT_TRUE(std::isnan(*parse_python_float("NaN")));
  for (const char* bad :
       {"", "   ", ".", "1__0", "_1", "1_", "0x10", "1e", "1.2.3", "abc", "--1", "1 2", "infinit"})
    EXPECT_FALSE(parse_python_float(bad).has_value()) << bad;
}

}  // namespace
}  // namespace probe
