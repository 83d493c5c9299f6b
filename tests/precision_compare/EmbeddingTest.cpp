// api_precision_compare as a library call: thresholds the caller builds, progress, and cancellation.
// Verdicts are derived by hand in the comments from the rule "双千指标 >= thousandth_pass" (precheck.md
// §5.3).
#include <gtest/gtest.h>

#include <filesystem>
#include <stop_token>

#include "TestUtil.h"
#include "probe/api_precision_compare.h"
#include "probe/csv.h"
#include "probe/error.h"

namespace probe {
namespace {

using testing::Cells;
using testing::ScratchDir;

Cells thousandth_row(const std::string& api, const std::string& value) {
  return {{"API Name", api}, {"DEVICE Dtype", "torch.float32"}, {"Shape", "(4,)"}, {"双千指标", value}};
}

std::vector<CsvRow> data_rows(const std::string& path) {
  auto rows = csv_read_file(path);
  rows.erase(rows.begin());
  return rows;
}

constexpr std::size_t kResultColumn = 24;  // 比对结果 in api_precision_compare_details (§5.5)

TEST(PrecisionCompareEmbedding, InjectedThousandthThresholdChangesTheVerdict) {
  ScratchDir dir("embed_thresholds");
  // conv2d is judged by the thousandth standard; 0.998 < 0.999 (shipped) is error, 0.998 >= 0.997 passes.
  const auto csv = testing::write_details(dir.file("npu.csv"),
                                          {thousandth_row("Functional.conv2d.0.forward.output.0", "0.998")});
  auto o = testing::options_for(csv, csv, dir.file("shipped"));
  const auto shipped = run_api_precision_compare(o, PrecisionCompareThresholds::builtin(Profile::MsProbe));
  ASSERT_EQ(data_rows(shipped.result_csv).size(), 1u);
  EXPECT_EQ(data_rows(shipped.result_csv)[0][1], "error");

  auto lenient = PrecisionCompareThresholds::builtin(Profile::MsProbe);
  EXPECT_EQ(lenient.thousandth_pass, 0.999);
  lenient.thousandth_pass = 0.997;
  o.out_dir = dir.file("lenient");
  const auto s = run_api_precision_compare(o, lenient);
  EXPECT_EQ(data_rows(s.result_csv)[0][1], "pass");
  EXPECT_EQ(data_rows(s.details_csv)[0][kResultColumn], "pass");
  EXPECT_EQ(s.forward_pass, 1u);
  EXPECT_FALSE(s.cancelled);
}

TEST(PrecisionCompareEmbedding, ParsedThresholdsTakeTheirApiGroupsFromTheCallersStandards) {
  // The "from" file does not exist: parse() must not look for it. Every API group (hence conv2d's
  // thousandth standard) comes from the standards passed in; thousandth_pass 0.5 makes 0.6 a pass.
  const std::string json = R"json({"common": {
      "unsupported_dtypes": ["torch.float64"], "zero_shape": "(0,)", "fp8_dtypes": [],
      "float_dtypes": ["torch.float16", "torch.bfloat16", "torch.float32"],
      "api_groups": {"from": "no_such_standards_file.json"},
      "minimum_err": {"default": 1e-4}, "accumulative_error_eb_threshold": {"default": 1e-4},
      "benchmark_error_threshold": {"small_value": 2, "rmse": 2, "max_rel_err": 10, "mean_rel_err": 2, "eb": 2},
      "thousandth_pass_value": 0.5,
      "ulp": {"fp32_mean_ulp_err": 64, "fp32_proportion": 0.05, "low_precision_proportion": 0.001,
              "proportion_ratio": 1},
      "compare_messages": {}}, "profiles": {"probe": {}}})json";
  const auto t = PrecisionCompareThresholds::parse(json, Standards::builtin(Profile::Probe), "inline");
  EXPECT_EQ(t.thousandth_pass, 0.5);
  EXPECT_EQ(t.min_err("torch.float16"), 1e-4);  // only a "default" entry
  ASSERT_FALSE(t.api_groups.empty());

  ScratchDir dir("embed_parse");
  const auto csv = testing::write_details(dir.file("npu.csv"),
                                          {thousandth_row("Functional.conv2d.0.forward.output.0", "0.6"),
                                           thousandth_row("Functional.conv2d.1.forward.output.0", "0.4")});
  auto o = testing::options_for(csv, csv, dir.file("out"));
  o.thresholds_file = dir.file("ignored_when_thresholds_are_given.json");
  const auto s = run_api_precision_compare(o, t);
  const auto result = data_rows(s.result_csv);
  ASSERT_EQ(result.size(), 2u);
  EXPECT_EQ(result[0][1], "pass");   // 0.6 >= 0.5
  EXPECT_EQ(result[1][1], "error");  // 0.4 < 0.5

  // Text without the standards' profile is refused, as a file would be.
  EXPECT_THROW(PrecisionCompareThresholds::parse(R"({"common": {}, "profiles": {"msprobe": {}}})",
                                                 Standards::builtin(Profile::Probe)),
               Error);
}

TEST(PrecisionCompareEmbedding, StopAfterTheFirstApiLeavesCompleteFilesForThatApi) {
  ScratchDir dir("embed_stop");
  // conv2d.0 has two output rows (one API), conv2d.1 and conv2d.2 one each.
  const auto csv = testing::write_details(dir.file("npu.csv"),
                                          {thousandth_row("Functional.conv2d.0.forward.output.0", "1.0"),
                                           thousandth_row("Functional.conv2d.0.forward.output.1", "0.5"),
                                           thousandth_row("Functional.conv2d.1.forward.output.0", "1.0"),
                                           thousandth_row("Functional.conv2d.2.forward.output.0", "1.0")});
  auto o = testing::options_for(csv, csv, dir.file("out"));
  std::stop_source stop;
  std::vector<ApiPrecisionCompareProgress> seen;
  const auto s = run_api_precision_compare(
      o, PrecisionCompareThresholds::builtin(Profile::MsProbe),
      [&](const ApiPrecisionCompareProgress& p) {
        seen.push_back(p);
        stop.request_stop();
      },
      stop.get_token());
  EXPECT_TRUE(s.cancelled);
  // The first result row is written when conv2d.1's row starts the next API: two NPU rows handled.
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].npu_rows_done, 2u);
  EXPECT_EQ(seen[0].npu_rows, 4u);
  EXPECT_EQ(seen[0].result_rows, 1u);
  // Final names, complete for conv2d.0 (output.1 at 0.5 < 0.999 makes its forward error), nothing after.
  ASSERT_TRUE(std::filesystem::exists(s.result_csv));
  const auto result = data_rows(s.result_csv);
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0][0], "Functional.conv2d.0");
  EXPECT_EQ(result[0][1], "error");
  const auto details = data_rows(s.details_csv);
  ASSERT_EQ(details.size(), 2u);
  EXPECT_EQ(details[1][0], "Functional.conv2d.0.forward.output.1");
  EXPECT_EQ(s.result_rows, 1u);
  EXPECT_EQ(s.detail_rows, 2u);
  EXPECT_FALSE(std::filesystem::exists(s.result_csv + ".partial"));
}

TEST(PrecisionCompareEmbedding, StopBeforeTheStartWritesOnlyHeaders) {
  ScratchDir dir("embed_stop0");
  const auto csv = testing::write_details(dir.file("npu.csv"),
                                          {thousandth_row("Functional.conv2d.0.forward.output.0", "1.0")});
  std::stop_source stop;
  stop.request_stop();
  const auto s =
      run_api_precision_compare(testing::options_for(csv, csv, dir.file("out")), {}, stop.get_token());
  EXPECT_TRUE(s.cancelled);
  EXPECT_EQ(csv_read_file(s.result_csv).size(), 1u);
  EXPECT_EQ(csv_read_file(s.details_csv).size(), 1u);
}

}  // namespace
}  // namespace probe
