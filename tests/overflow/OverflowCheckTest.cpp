// run_overflow_check against torch: the dumps of tests/data/overflow/ were written by torch
// (make_overflow_fixtures.py), and expected.json holds torch's verdicts (exact float64 result rounded to the
// output dtype by torch's .to()).
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "common/RunCli.h"
#include "common/ScratchDir.h"
#include "probe/csv.h"
#include "probe/error.h"
#include "probe/overflow_check.h"
#include "probe/tensor.h"

namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(PROBE_TEST_DATA_DIR) + "/overflow/";

using probe::OverflowVerdict;
using probe::testing::run_cli;
using probe::testing::ScratchDir;

rapidjson::Document load_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  rapidjson::Document d;
  d.Parse(ss.str().c_str());
  EXPECT_FALSE(d.HasParseError()) << path;
  return d;
}

// expected.json writes inf and nan as strings to stay strict JSON.
double number(const rapidjson::Value& v) {
  if (v.IsNumber()) return v.GetDouble();
  const std::string s = v.GetString();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  return s == "inf" ? HUGE_VAL : -HUGE_VAL;
}

void expect_same_double(double expected, double actual, const std::string& what) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << what;
  } else if (std::isinf(expected)) {
    EXPECT_EQ(expected, actual) << what;
  } else {
    EXPECT_NEAR(actual, expected, 1e-12 * std::fabs(expected)) << what;
  }
}

probe::Tensor f16(std::vector<double> values) {
  return probe::Tensor::from_values(values, {static_cast<std::int64_t>(values.size())})
      .to(probe::DType::Float16);
}

probe::Tensor f64(std::vector<double> values) {
  return probe::Tensor::from_values(values, {static_cast<std::int64_t>(values.size())});
}

}  // namespace

TEST(RunOverflowCheck, VerdictsAndElementsMatchTorch) {
  const ScratchDir scratch("overflow_check");
  probe::OverflowCheckOptions o;
  o.api_info = kData + "overflow_dump/dump.json";
  o.out_dir = scratch.file("out");
  o.timestamp = "20260101000000";
  const probe::OverflowCheckSummary s = probe::run_overflow_check(o);
  const rapidjson::Document expected = load_json(kData + "overflow_dump/expected.json");
  // Functional.relu.0 (inf in its input) and Torch.sum.0 (finite output) are not candidates; the all_reduce
  // is one but is not re-run.
  EXPECT_EQ(s.forward_apis, 12u);
  ASSERT_EQ(s.apis.size(), expected.MemberCount() + 1);
  EXPECT_EQ(s.normal, 7u);
  EXPECT_EQ(s.abnormal, 2u);
  EXPECT_EQ(s.skipped, 1u);
  for (const probe::OverflowApi& a : s.apis) {
    SCOPED_TRACE(a.api);
    if (a.api == "Distributed.all_reduce.0") {
      EXPECT_EQ(a.verdict, OverflowVerdict::Skip);
      EXPECT_NE(a.message.find("a communication op"), std::string::npos) << a.message;
      continue;
    }
    ASSERT_TRUE(expected.HasMember(a.api.c_str()));
    const rapidjson::Value& e = expected[a.api.c_str()];
    EXPECT_EQ(a.verdict, std::string(e["verdict"].GetString()) == "normal" ? OverflowVerdict::Normal
                                                                           : OverflowVerdict::Abnormal);
    ASSERT_EQ(a.outputs.size(), 1u);
    const probe::OverflowOutput& out = a.outputs[0];
    EXPECT_EQ(out.output_index, static_cast<std::size_t>(e["output_index"].GetInt()));
    EXPECT_EQ(out.element, e["element_index"].GetInt64());
    EXPECT_EQ(std::string(probe::to_string(out.kind)), e["kind"].GetString());
    expect_same_double(number(e["device"]), out.device, "device");
    expect_same_double(number(e["bench"]), out.bench, "bench");
  }
  EXPECT_EQ(s.csv, scratch.file("out") + "/overflow_check_result_20260101000000.csv");
}

TEST(RunOverflowCheck, CsvHoldsOneRowPerOverflowingOutput) {
  const ScratchDir scratch("overflow_csv");
  probe::OverflowCheckOptions o;
  o.api_info = kData + "overflow_dump/dump.json";
  o.out_dir = scratch.path().string();
  o.timestamp = "20260101000000";
  const probe::OverflowCheckSummary s = probe::run_overflow_check(o);
  const auto rows = probe::csv_read_file(s.csv);
  ASSERT_EQ(rows.size(), 11u);
  EXPECT_EQ(rows[0], (probe::CsvRow{"API Name", "Direction", "Output Index", "Element Index", "Device Value",
                                    "Bench Value", "Overflow Kind", "Verdict", "Message"}));
  // expected.json: element 5 of a*b was replaced by inf; the exact product there is -0.32223939895629883.
  EXPECT_EQ(rows[2], (probe::CsvRow{"Tensor.__mul__.0", "forward", "0", "5", "inf", "-0.32223939895629883",
                                    "inf_nan", "abnormal overflow", ""}));
  // 60000 + 60000 = 120000 saturated to float16's 65504: a normal overflow in saturation mode.
  EXPECT_EQ(rows[3], (probe::CsvRow{"Tensor.__add__.0", "forward", "0", "0", "65504.0", "120000.0",
                                    "saturation", "normal overflow", ""}));
  // An existing result is never replaced.
  EXPECT_THROW(probe::run_overflow_check(o), probe::Error);
}

TEST(RunOverflowCheck, StatisticsDumpJudgesGeneratedInputs) {
  probe::OverflowCheckOptions o;
  o.api_info = kData + "statistics_dump/dump.json";
  o.out_dir.clear();
  const probe::OverflowCheckSummary s = probe::run_overflow_check(o);
  const rapidjson::Document expected = load_json(kData + "statistics_dump/expected.json");
  ASSERT_EQ(s.apis.size(), expected.MemberCount());
  for (const probe::OverflowApi& a : s.apis) {
    SCOPED_TRACE(a.api);
    const std::string v = expected[a.api.c_str()]["verdict"].GetString();
    EXPECT_EQ(a.verdict, v == "normal" ? OverflowVerdict::Normal : OverflowVerdict::Abnormal);
    ASSERT_EQ(a.outputs.size(), 1u);
    EXPECT_TRUE(a.outputs[0].from_statistics);
    EXPECT_NE(a.message.find("inputs generated from statistics: input.0"), std::string::npos) << a.message;
  }
  EXPECT_TRUE(s.csv.empty());
}

// float16: max 65504 (0x7BFF); the next step would be 65536, so values from 65520 (the midpoint, rounding to
// the even 65536) round to inf and values below it round to 65504.
TEST(JudgeOverflow, SaturatedValueIsAnOverflowOnlyWhenTheExactValueRoundsToInf) {
  EXPECT_FALSE(probe::judge_overflow(f16({65504.0}), f64({65504.0}), probe::DType::Float16));
  EXPECT_FALSE(probe::judge_overflow(f16({65504.0}), f64({65519.9}), probe::DType::Float16));
  const auto o = probe::judge_overflow(f16({1.0, 65504.0}), f64({1.0, 65520.0}), probe::DType::Float16);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->verdict, OverflowVerdict::Normal);
  EXPECT_EQ(o->kind, probe::OverflowKind::Saturation);
  EXPECT_EQ(o->element, 1);
  const auto bad = probe::judge_overflow(f16({-65504.0}), f64({-3.0}), probe::DType::Float16);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->verdict, OverflowVerdict::Abnormal);
}

TEST(JudgeOverflow, ReportsTheFirstUnexplainedElement) {
  const double inf = HUGE_VAL, nan = std::numeric_limits<double>::quiet_NaN();
  // Element 0 overflows exactly (explained), element 2 is NaN where the exact value is 2: abnormal at 2.
  const auto o = probe::judge_overflow(f16({inf, 1.0, nan}), f64({1e6, 1.0, 2.0}), probe::DType::Float16);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->verdict, OverflowVerdict::Abnormal);
  EXPECT_EQ(o->element, 2);
  EXPECT_EQ(o->bench, 2.0);
  EXPECT_TRUE(std::isnan(o->device));
  // Every non-finite element explained: normal, reported at the first one.
  const auto n = probe::judge_overflow(f16({1.0, -inf}), f64({1.0, -1e6}), probe::DType::Float16);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->verdict, OverflowVerdict::Normal);
  EXPECT_EQ(n->element, 1);
  EXPECT_FALSE(probe::judge_overflow(f16({1.0, 2.0}), f64({1.0, 2.0}), probe::DType::Float16));
  EXPECT_THROW(probe::judge_overflow(f16({1.0}), f64({1.0, 2.0}), probe::DType::Float16), probe::Error);
}

TEST(JudgeOverflow, Bfloat16AndFloat32Ranges) {
  // 3.4e38 is beyond bfloat16's 3.3895e38 (it rounds to inf) but within float32's 3.40282e38.
  const double inf = HUGE_VAL;
  const auto b =
      probe::judge_overflow(f64({inf}).to(probe::DType::BFloat16), f64({3.4e38}), probe::DType::BFloat16);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->verdict, OverflowVerdict::Normal);
  const auto f =
      probe::judge_overflow(f64({inf}).to(probe::DType::Float32), f64({3.4e38}), probe::DType::Float32);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict, OverflowVerdict::Abnormal);
}

TEST(RunOverflowCheck, ApiWithoutRunnerIsSkippedWithTheReason) {
  const ScratchDir scratch("overflow_skip");
  const std::string dump = scratch.file("dump.json");
  std::ofstream(dump)
      << R"({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null,
 "data": {"Torch.no_such_api.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float16",
  "shape": [2], "Max": 1.0, "Min": 0.5, "Mean": 0.75, "Norm": 1.1, "requires_grad": false}], "input_kwargs": {},
  "output": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [2], "Max": Infinity, "Min": 1.0,
  "Mean": Infinity, "Norm": Infinity, "requires_grad": false}]}}})";
  probe::OverflowCheckOptions o;
  o.api_info = dump;
  o.out_dir = scratch.path().string();
  o.timestamp = "20260101000000";
  const probe::OverflowCheckSummary s = probe::run_overflow_check(o);
  ASSERT_EQ(s.apis.size(), 1u);
  EXPECT_EQ(s.apis[0].verdict, OverflowVerdict::Skip);
  EXPECT_NE(s.apis[0].message.find("no_such_api"), std::string::npos) << s.apis[0].message;
  EXPECT_EQ(s.skipped, 1u);
  EXPECT_EQ(probe::overflow_sentence(s.apis[0]), "");
  const auto rows = probe::csv_read_file(s.csv);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][7], "SKIP");
}

TEST(RunOverflowCheck, BadInputIsAnErrorNamingTheFile) {
  probe::OverflowCheckOptions o;
  o.api_info = kData + "no_such_dump.json";
  try {
    probe::run_overflow_check(o);
    FAIL() << "expected an error";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.kind(), probe::ErrorKind::Io);
    EXPECT_NE(std::string(e.what()).find("no_such_dump.json"), std::string::npos) << e.what();
  }
}

TEST(RunOverflowCheckCli, PrintsMsprobesSentencesAndExitCodes) {
  const ScratchDir scratch("overflow_cli");
  const auto r =
      run_cli("-f pytorch run_overflow_check -api_info '" + kData + "overflow_dump/dump.json' -out '" +
              scratch.path().string() + "' --timestamp 20260101000000");
  ASSERT_EQ(r.code, 0) << r.out;
  // stderr (the skipped communication op) and stdout arrive merged, in either order.
  std::string out = r.out;
  const std::string warning =
      "warning: Distributed.all_reduce.0 could not be re-run: a communication op: its output comes from the "
      "other ranks (nan_analyze on the step directory follows it to the rank where inf/NaN appeared)\n";
  const std::size_t w = out.find(warning);
  ASSERT_NE(w, std::string::npos) << out;
  out.erase(w, warning.size());
  EXPECT_EQ(out.substr(0, out.find("forward APIs")),
            "The Torch.exp.0 overflow is a normal overflow.\n"
            "The Tensor.__mul__.0 overflow is an abnormal overflow.\n"
            "The Tensor.__add__.0 overflow is a normal overflow.\n"
            "The Torch.mul.0 overflow is an abnormal overflow.\n"
            "The Torch.sqrt.0 overflow is a normal overflow.\n"
            "The Tensor.__mul__.1 overflow is a normal overflow.\n"
            "The Tensor.__add__.1 overflow is a normal overflow.\n"
            "The Tensor.to.0 overflow is a normal overflow.\n"
            "The Tensor.half.0 overflow is a normal overflow.\n");
  EXPECT_TRUE(fs::exists(scratch.file("overflow_check_result_20260101000000.csv")));
  // The same --timestamp again is refused; without one, runs in the same second get their own files.
  const std::string again = "run_overflow_check -api_info '" + kData + "overflow_dump/dump.json' -o '" +
                            scratch.path().string() + "'";
  EXPECT_EQ(run_cli(again + " --timestamp 20260101000000").code, 2);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(run_cli(again).code, 0);
  std::size_t csvs = 0;
  for (const auto& e : fs::directory_iterator(scratch.path()))
    csvs += e.path().filename().string().rfind("overflow_check_result_", 0) == 0;
  EXPECT_EQ(csvs, 4u);
  EXPECT_EQ(run_cli("run_overflow_check").code, 2);
  EXPECT_EQ(run_cli("run_overflow_check -api_info /nonexistent/dump.json").code, 3);
  const std::string bad = scratch.file("bad.json");
  std::ofstream(bad) << "{\"data\": ";
  const auto b = run_cli("run_overflow_check -api_info '" + bad + "' -o '" + scratch.path().string() + "'");
  EXPECT_EQ(b.code, 4) << b.out;
  EXPECT_NE(b.out.find("bad.json"), std::string::npos) << b.out;
  const auto h = run_cli("run_overflow_check --help");
  EXPECT_EQ(h.code, 0);
  for (const char* flag : {"-api_info", "--out_path", "--jit_compile", "--device", "--seed",
                           "--max_api_elements", "--timestamp"})
    EXPECT_NE(h.out.find(flag), std::string::npos) << flag;
}
