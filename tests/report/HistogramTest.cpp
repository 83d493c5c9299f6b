// The report's element-error histograms: the metrics pass's relative-error and ULP bins against numpy's
// (tests/data/report/make_histogram_fixtures.py), the error bound scan's bins against its own verdict,
// run_ut's sidecar file and the page's embedded data and plots.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "common/RunCli.h"
#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "probe/csv.h"
#include "probe/error.h"
#include "probe/error_histogram.h"
#include "probe/metrics.h"
#include "probe/precision_standard.h"
#include "probe/report.h"
#include "probe/tensor_file.h"
#include "standards/ErrorBound.h"

namespace {

using probe::ErrorHistogram;
using probe::HistogramUnit;
using probe::testing::run_cli;
using probe::testing::ScratchDir;
using probe::testing::slurp;

const std::string kDir = std::string(PROBE_TEST_DATA_DIR) + "/report/histograms/";

rapidjson::Document expected_counts() {
  rapidjson::Document d;
  const std::string text = slurp(kDir + "expected.json");
  d.Parse(text.c_str(), text.size());
  EXPECT_FALSE(d.HasParseError());
  return d;
}

void expect_matches(const rapidjson::Value& e, const ErrorHistogram& h, const std::string& what) {
  EXPECT_EQ(std::string(e["unit"].GetString()), std::string(probe::to_string(h.unit))) << what;
  EXPECT_EQ(h.zero, e["zero"].GetInt64()) << what;
  EXPECT_EQ(h.below, e["below"].GetInt64()) << what;
  EXPECT_EQ(h.above, e["above"].GetInt64()) << what;
  EXPECT_EQ(h.nonfinite, e["nonfinite"].GetInt64()) << what;
  for (int x = ErrorHistogram::kMinExp; x < ErrorHistogram::kMaxExp; ++x) {
    const std::string key = std::to_string(x);
    const std::int64_t want = e["bins"].HasMember(key.c_str()) ? e["bins"][key.c_str()].GetInt64() : 0;
    EXPECT_EQ(h.counts[static_cast<std::size_t>(x - ErrorHistogram::kMinExp)], want)
        << what << " bin 2^" << x;
  }
}

TEST(ErrorHistogram, BinsArePowersOfTwo) {
  ErrorHistogram h;
  h.add(0);
  h.add(1.0);        // [2^0, 2^1)
  h.add(1.9999999);  // [2^0, 2^1)
  h.add(0.5);        // [2^-1, 2^0)
  h.add(std::ldexp(1.0, -41));
  h.add(std::ldexp(1.0, 24));
  h.add(std::numeric_limits<double>::infinity());
  h.add(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(h.zero, 1);
  EXPECT_EQ(h.counts[static_cast<std::size_t>(0 - ErrorHistogram::kMinExp)], 2);
  EXPECT_EQ(h.counts[static_cast<std::size_t>(-1 - ErrorHistogram::kMinExp)], 1);
  EXPECT_EQ(h.below, 1);
  EXPECT_EQ(h.above, 2);
  EXPECT_EQ(h.nonfinite, 1);
  EXPECT_EQ(h.total(), 8);
}

// The metrics pass's histogram equals numpy's binning of the same pairs, and leaves every metric as it was.
TEST(ErrorHistogram, MetricsPassMatchesNumpy) {
  const auto expected = expected_counts();
  const probe::Standards standards = probe::Standards::builtin();
  struct Case {
    const char* name;
    HistogramUnit unit;
    probe::DType device;
  };
  for (const Case c : {Case{"rel_f32", HistogramUnit::RelativeError, probe::DType::Float32},
                       Case{"ulp_f16", HistogramUnit::Ulp, probe::DType::Float16}}) {
    const probe::Tensor b = probe::load_npy(kDir + c.name + "_bench.npy");
    const probe::Tensor d = probe::load_npy(kDir + c.name + "_device.npy");
    ASSERT_EQ(d.dtype(), c.device) << c.name;
    probe::MetricParams p = standards.metric_params(c.device);
    // The fixture's ULP format: float16's smallest normal exponent and mantissa bits.
    if (c.unit == HistogramUnit::Ulp) {
      ASSERT_EQ(p.ulp_min_eb, -14);
      ASSERT_EQ(p.ulp_mantissa_bits, 10);
    }
    const probe::TensorMetrics off = probe::compute_metrics(b, d, p);
    EXPECT_FALSE(off.histogram) << "off by default";
    p.histogram = c.unit;
    const probe::TensorMetrics on = probe::compute_metrics(b, d, p);
    ASSERT_TRUE(on.histogram) << c.name;
    EXPECT_EQ(on.histogram->total(), b.numel()) << c.name;
    expect_matches(expected[c.name], *on.histogram, c.name);
    EXPECT_EQ(on.cosine.format(), off.cosine.format()) << c.name;
    EXPECT_EQ(on.max_rel_err.format(), off.max_rel_err.format()) << c.name;
    EXPECT_EQ(on.ulp_mean.format(), off.ulp_mean.format()) << c.name;
    EXPECT_EQ(on.rmse.format(), off.rmse.format()) << c.name;
  }
}

// D14's histogram: every element once, and the elements at or above 1 (their bound) are the ones the verdict
// counts beyond it; the verdict itself does not change.
TEST(ErrorHistogram, ErrorBoundScanCountsWhatTheVerdictCounts) {
  const probe::Tensor b = probe::load_npy(kDir + "rel_f32_bench.npy");
  const probe::Tensor d = probe::load_npy(kDir + "rel_f32_device.npy");
  const probe::detail::BoundFamily* family = probe::detail::bound_family("exp");
  ASSERT_NE(family, nullptr);
  const probe::Verdict plain = probe::detail::error_bound_verdict(*family, b, d, nullptr, 1, 3);
  const probe::Verdict v = probe::detail::error_bound_verdict(*family, b, d, nullptr, 1, 3, true);
  EXPECT_FALSE(plain.histogram);
  ASSERT_TRUE(v.histogram);
  EXPECT_EQ(v.histogram->unit, HistogramUnit::BoundUnits);
  EXPECT_EQ(v.histogram->total(), b.numel());
  std::int64_t beyond = v.histogram->above + v.histogram->nonfinite;
  for (int x = 0; x < ErrorHistogram::kMaxExp; ++x)
    beyond += v.histogram->counts[static_cast<std::size_t>(x - ErrorHistogram::kMinExp)];
  ASSERT_FALSE(v.criteria.empty());
  EXPECT_EQ(static_cast<double>(beyond), v.criteria[0].value);
  EXPECT_GT(beyond, 0);
  EXPECT_EQ(v.status, plain.status);
  EXPECT_EQ(v.message, plain.message);
  // Element by element: the exp family's bound of an element depends on that element alone, so the verdict
  // of each one-element pair ("largest error / bound") is its ratio; binned, they are the scan's histogram.
  ErrorHistogram each;
  const double* bp = b.data<double>();
  const float* dp = d.data<float>();
  for (std::int64_t i = 0; i < b.numel(); ++i) {
    probe::Tensor b1 = probe::Tensor::zeros(probe::DType::Float64, probe::Shape{1});
    probe::Tensor d1 = probe::Tensor::zeros(probe::DType::Float32, probe::Shape{1});
    b1.mutable_data<double>()[0] = bp[i];
    d1.mutable_data<float>()[0] = dp[i];
    const probe::Verdict one = probe::detail::error_bound_verdict(*family, b1, d1, nullptr, 1, 1);
    const double ratio = one.criteria.at(1).value;
    const bool mismatch = !std::isfinite(bp[i]) || !std::isfinite(static_cast<double>(dp[i]));
    each.add(std::isinf(ratio) && mismatch ? std::numeric_limits<double>::quiet_NaN() : ratio);
  }
  EXPECT_EQ(each.zero, v.histogram->zero);
  EXPECT_EQ(each.below, v.histogram->below);
  EXPECT_EQ(each.above, v.histogram->above);
  EXPECT_EQ(each.nonfinite, v.histogram->nonfinite);
  EXPECT_EQ(each.counts, v.histogram->counts);
}

// run_ut --report writes the sidecar for the flagged output only; the report reads it, embeds the trimmed
// bins and draws one plot; the msprobe-format CSVs are the bytes a run without --report writes.
TEST(ErrorHistogram, RunUtSidecarReachesThePage) {
  ScratchDir with("probe-hist"), without("probe-hist");
  const std::string dump = std::string(PROBE_SOURCE_DIR) + "/examples/dump/dump.json";
  for (const auto* dir : {&with, &without}) {
    const auto cli = run_cli("run_ut -api_info '" + dump + "' -o '" + dir->path().string() +
                             "' -q --timestamp 20260101000000" + (dir == &with ? " --report" : ""));
    ASSERT_EQ(cli.code, 0) << cli.out;
  }
  for (const char* f :
       {"accuracy_checking_details_20260101000000.csv", "accuracy_checking_result_20260101000000.csv"})
    EXPECT_EQ(slurp(with.file(f)), slurp(without.file(f))) << f;
  EXPECT_FALSE(std::filesystem::exists(without.file("accuracy_checking_histograms_20260101000000.csv")));
  const std::string details = with.file("accuracy_checking_details_20260101000000.csv");
  ASSERT_EQ(probe::error_histogram_path(details),
            with.file("accuracy_checking_histograms_20260101000000.csv"));
  const auto sidecar = probe::csv_read_file(probe::error_histogram_path(details));
  ASSERT_EQ(sidecar.size(), 2u) << "header and the one flagged output";
  EXPECT_EQ(sidecar[0], probe::error_histogram_header());
  EXPECT_EQ(sidecar[1][0], "Functional.gelu.0.forward.output.0");
  EXPECT_EQ(sidecar[1][1], "error / bound");

  const probe::RunUtReport r =
      probe::read_run_ut_report(with.file("accuracy_checking_result_20260101000000.csv"), details);
  const auto flagged = probe::flagged_order(r);
  ASSERT_EQ(flagged.size(), 1u);
  const probe::ReportOutput& o = r.outputs[flagged[0]];
  ASSERT_TRUE(o.histogram);
  // The elements at or beyond their bound are the "N of M elements beyond their bound" of its Message.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(o.message, m, std::regex("(\\d+) of (\\d+) elements beyond"))) << o.message;
  std::int64_t beyond = o.histogram->above + o.histogram->nonfinite;
  for (int x = 0; x < ErrorHistogram::kMaxExp; ++x)
    beyond += o.histogram->counts[static_cast<std::size_t>(x - ErrorHistogram::kMinExp)];
  EXPECT_EQ(beyond, std::stoll(m[1]));
  EXPECT_EQ(o.histogram->total(), std::stoll(m[2]));

  rapidjson::Document j;
  const std::string json = probe::run_ut_report_json(r);
  j.Parse(json.c_str(), json.size());
  ASSERT_FALSE(j.HasParseError());
  ASSERT_EQ(j["histograms"].Size(), 1u);
  const auto& h = j["histograms"][0];
  EXPECT_EQ(h["output"].GetUint64(), flagged[0]);
  EXPECT_EQ(std::string(h["unit"].GetString()), "error / bound");
  // The bins from the first to the last non-empty one, starting at min_exp.
  const int min_exp = h["min_exp"].GetInt();
  const auto& counts = h["counts"];
  ASSERT_GT(counts.Size(), 0u);
  EXPECT_GT(counts[0].GetInt64(), 0);
  EXPECT_GT(counts[counts.Size() - 1].GetInt64(), 0);
  std::int64_t sum =
      h["zero"].GetInt64() + h["below"].GetInt64() + h["above"].GetInt64() + h["nonfinite"].GetInt64();
  for (rapidjson::SizeType k = 0; k < counts.Size(); ++k) {
    EXPECT_EQ(counts[k].GetInt64(), o.histogram->counts[static_cast<std::size_t>(
                                        min_exp + static_cast<int>(k) - ErrorHistogram::kMinExp)]);
    sum += counts[k].GetInt64();
  }
  EXPECT_EQ(sum, o.histogram->total());

  const std::string html = probe::run_ut_report_html(r);
  EXPECT_NE(html.find("<svg id=\"hist-0\""), std::string::npos);
  EXPECT_EQ(html.find("<svg id=\"hist-1\""), std::string::npos);
  EXPECT_NE(html.find("class=\"bar beyond\""), std::string::npos);
}

// A resumed run may append an output's histogram again (killed between the sidecar and the result row): the
// report keeps the last row of a name.
TEST(ErrorHistogram, SidecarsLastRowOfAnOutputWins) {
  ScratchDir dir("probe-hist");
  const std::string dump = std::string(PROBE_SOURCE_DIR) + "/examples/dump/dump.json";
  const auto cli = run_cli("run_ut -api_info '" + dump + "' -o '" + dir.path().string() +
                           "' -q --report --timestamp 20260101000000");
  ASSERT_EQ(cli.code, 0) << cli.out;
  const std::string sidecar = dir.file("accuracy_checking_histograms_20260101000000.csv");
  probe::CsvRow again(probe::error_histogram_header().size(), "0");
  again[0] = "Functional.gelu.0.forward.output.0";
  again[1] = "ulp";
  again[2] = "7";  // zero
  {
    probe::CsvWriter w(sidecar, probe::error_histogram_header());
    w.write_row(again);
  }
  const auto r = probe::read_run_ut_report(dir.file("accuracy_checking_result_20260101000000.csv"),
                                           dir.file("accuracy_checking_details_20260101000000.csv"));
  const auto flagged = probe::flagged_order(r);
  ASSERT_EQ(flagged.size(), 1u);
  const auto& h = r.outputs[flagged[0]].histogram;
  ASSERT_TRUE(h);
  EXPECT_EQ(h->unit, HistogramUnit::Ulp);
  EXPECT_EQ(h->zero, 7);
  EXPECT_EQ(h->total(), 7);
}

TEST(ErrorHistogram, MalformedSidecarNamesTheFile) {
  ScratchDir dir("probe-hist");
  const std::string dump = std::string(PROBE_SOURCE_DIR) + "/examples/dump/dump.json";
  const auto cli = run_cli("run_ut -api_info '" + dump + "' -o '" + dir.path().string() +
                           "' -q --report --timestamp 20260101000000");
  ASSERT_EQ(cli.code, 0) << cli.out;
  const std::string sidecar = dir.file("accuracy_checking_histograms_20260101000000.csv");
  std::string text = slurp(sidecar);
  const auto comma = text.rfind(',');
  text.replace(comma + 1, std::string::npos, "x\n");
  std::ofstream(sidecar, std::ios::binary | std::ios::trunc) << text;
  try {
    probe::read_run_ut_report(dir.file("accuracy_checking_result_20260101000000.csv"),
                              dir.file("accuracy_checking_details_20260101000000.csv"));
    FAIL() << "a count that is not a number was read";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.kind(), probe::ErrorKind::Format);
    EXPECT_NE(std::string(e.what()).find("accuracy_checking_histograms_20260101000000.csv"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
