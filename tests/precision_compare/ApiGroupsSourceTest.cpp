// The API groups (which algorithm judges an API) have one source, data/precision_standards.json, read by both
// run_ut (Standards) and api_precision_compare (Thresholds). These tests fail if the two commands'
// lists diverge, go missing, or a second copy reappears in data/api_precision_compare.json.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "TestUtil.h"
#include "common/Slurp.h"
#include "probe/error.h"
#include "probe/precision_standard.h"
#include "standards/Thresholds.h"

namespace probe {
namespace {

namespace pc = precision_compare;

const std::string kThresholds = PROBE_SOURCE_DIR "/data/api_precision_compare.json";
const std::string kStandards = PROBE_SOURCE_DIR "/data/precision_standards.json";

TEST(ApiGroupsSource, BothCommandsUseTheSameListsInTheSameOrder) {
  for (const char* profile : {"probe", "msprobe"}) {
    SCOPED_TRACE(profile);
    const auto standards = Standards::load(kStandards, parse_profile(profile)).api_groups();
    const auto thresholds = pc::load_thresholds(kThresholds, profile).api_groups;
    ASSERT_EQ(thresholds.size(), standards.size());
    for (std::size_t i = 0; i < standards.size(); ++i) {
      EXPECT_EQ(thresholds[i].first, standards[i].first) << i;
      EXPECT_EQ(std::set<std::string>(thresholds[i].second.begin(), thresholds[i].second.end()),
                std::set<std::string>(standards[i].second.begin(), standards[i].second.end()))
          << i;
    }
  }
}

// msprobe HEAD's api_precision_standard.yaml (precheck.md §4.2): one member of each group, and the group
// sizes.
TEST(ApiGroupsSource, ListsArePresentAndDecideTheAlgorithm) {
  const auto cfg = Standards::load(kStandards, Profile::MsProbe);
  ASSERT_EQ(cfg.api_groups().size(), 5u);
  std::size_t sizes[5];
  for (std::size_t i = 0; i < 5; ++i) sizes[i] = cfg.api_groups()[i].second.size();
  EXPECT_EQ(sizes[0], 30u);  // absolute threshold
  EXPECT_EQ(sizes[1], 62u);  // binary consistency
  EXPECT_EQ(sizes[2], 17u);  // ULP
  EXPECT_EQ(sizes[3], 2u);   // thousandth
  EXPECT_EQ(sizes[4], 1u);   // accumulative
  const auto t = pc::load_thresholds(kThresholds, "msprobe");
  auto apc = [&](const std::string& api) {
    for (const auto& [algorithm, apis] : t.api_groups)
      if (apis.count(api)) return algorithm;
    return Standard::Benchmark;
  };
  const std::pair<const char*, Standard> cases[] = {{"mul", Standard::AbsoluteThreshold},
                                                    {"__isub__", Standard::AbsoluteThreshold},
                                                    {"abs", Standard::BinaryConsistency},
                                                    {"type_as", Standard::BinaryConsistency},
                                                    {"matmul", Standard::Ulp},
                                                    {"sspaddmm", Standard::Ulp},
                                                    {"conv2d", Standard::Thousandth},
                                                    {"test_api", Standard::Accumulative},
                                                    {"softmax", Standard::Benchmark}};
  for (const auto& [api, standard] : cases) {
    EXPECT_EQ(cfg.standard_for(api, "torch.float16"), standard) << api;
    EXPECT_EQ(apc(api), standard) << api;
  }
}

TEST(ApiGroupsSource, StandardIdsRoundTrip) {
  for (Standard s : {Standard::Benchmark, Standard::AbsoluteThreshold, Standard::BinaryConsistency,
                     Standard::Ulp, Standard::Thousandth, Standard::Accumulative})
    EXPECT_EQ(parse_standard_id(standard_id(s)), s) << standard_id(s);
  EXPECT_EQ(standard_id(Standard::Ulp), "ulp_compare");
  EXPECT_EQ(standard_csv_name(Standard::AbsoluteThreshold), "绝对阈值法");
  EXPECT_EQ(parse_standard_id("ulp"), std::nullopt);
}

TEST(ApiGroupsSource, ShippedThresholdsKeepNoSecondCopy) {
  rapidjson::Document doc;
  doc.Parse(testing::slurp(kThresholds).c_str());
  ASSERT_FALSE(doc.HasParseError());
  const auto& groups = doc["common"]["api_groups"];
  ASSERT_TRUE(groups.IsObject());
  EXPECT_STREQ(groups["from"].GetString(), "precision_standards.json");
  // A const view: rapidjson's mutable member iterators compare ambiguously in C++20 (clang warns).
  for (const auto& p : std::as_const(doc)["profiles"].GetObject())
    EXPECT_FALSE(p.value.HasMember("api_groups")) << p.name.GetString();
}

// Everything a thresholds file needs besides api_groups (closes "common" and adds the profiles).
const char* kRest =
    R"json("unsupported_dtypes": [], "zero_shape": "(0,)", "fp8_dtypes": [], "float_dtypes": [],
  "minimum_err": {"default": 1}, "accumulative_error_eb_threshold": {"default": 1},
  "benchmark_error_threshold": {"small_value": 2, "rmse": 2, "max_rel_err": 10, "mean_rel_err": 2, "eb": 2},
  "thousandth_pass_value": 0.999, "compare_messages": {},
  "ulp": {"fp32_mean_ulp_err": 64, "fp32_proportion": 0.05, "low_precision_proportion": 0.001,
          "proportion_ratio": 1}}, "profiles": {"msprobe": {}}})json";

TEST(ApiGroupsSource, CustomFilesMayListGroupsInlineOrNameAMissingSource) {
  testing::ScratchDir dir("groups");
  std::ofstream(dir.file("inline.json"))
      << R"({"common": {"api_groups": [{"algorithm": "ulp_compare", "apis": ["softmax"]}], )" << kRest;
  const auto t = pc::load_thresholds(dir.file("inline.json"), "msprobe");
  ASSERT_EQ(t.api_groups.size(), 1u);
  EXPECT_EQ(t.api_groups[0].first, Standard::Ulp);
  EXPECT_EQ(t.api_groups[0].second.count("softmax"), 1u);

  std::ofstream(dir.file("missing.json"))
      << R"({"common": {"api_groups": {"from": "no_such_standards.json"}, )" << kRest;
  try {
    pc::load_thresholds(dir.file("missing.json"), "msprobe");
    FAIL() << "expected probe::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    EXPECT_NE(e.message().find("no_such_standards.json"), std::string::npos) << e.message();
  }
  std::ofstream(dir.file("bad.json")) << R"({"common": {"api_groups": {"form": "x"}, )" << kRest;
  try {
    pc::load_thresholds(dir.file("bad.json"), "msprobe");
    FAIL() << "expected probe::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format);
    EXPECT_EQ(e.field(), "api_groups.from");
  }
}

}  // namespace
}  // namespace probe
