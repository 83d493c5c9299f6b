// `probe metrics --metrics LIST`: the parts left out are neither printed nor computed, the rest is printed
// exactly as without the flag, and a bad list is an invalid-argument error naming the item.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/RunCli.h"
#include "common/ScratchDir.h"
#include "probe/tensor_file.h"

namespace probe {
namespace {

using testing::run_cli;
using testing::ScratchDir;

// `probe metrics` text output: one "key value" line per printed item.
std::map<std::string, std::string> parse_lines(const std::string& out) {
  std::map<std::string, std::string> kv;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const std::size_t space = line.find(' ');
    const std::size_t value = line.find_first_not_of(' ', space);
    kv[line.substr(0, space)] = value == std::string::npos ? "" : line.substr(value);
  }
  return kv;
}

bool has_prefix(const std::map<std::string, std::string>& kv, const std::string& prefix) {
  for (const auto& [k, v] : kv)
    if (k.rfind(prefix, 0) == 0) return true;
  return false;
}

class MetricsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<double> bench(1000);
    std::vector<float> device(1000);
    for (std::size_t i = 0; i < bench.size(); ++i) {
      bench[i] = std::sin(0.01 * static_cast<double>(i)) + 0.5;
      device[i] = static_cast<float>(bench[i] * (i % 10 == 0 ? 1.0005 : 1.0));
    }
    save_npy(dir_.file("bench.npy"), Tensor::from_values(bench, Shape{1000}));
    save_npy(dir_.file("device.npy"), Tensor::from_values(device, Shape{1000}));
  }
  std::map<std::string, std::string> metrics(const std::string& flags) {
    const auto r =
        run_cli("metrics '" + dir_.file("bench.npy") + "' '" + dir_.file("device.npy") + "' " + flags);
    EXPECT_EQ(r.code, 0) << r.out;
    return parse_lines(r.out);
  }
  ScratchDir dir_{"probe-metrics-cli"};
};

TEST_F(MetricsCli, RunUtOnlyPrintsRunUtsMetricsAsComputingEverythingDoes) {
  const auto all = metrics("");
  ASSERT_TRUE(all.count("ulp_max") && all.count("dump_cosine") && all.count("mindspore_status"))
      << all.size();
  const auto run_ut = metrics("--metrics run_ut");
  EXPECT_FALSE(has_prefix(run_ut, "ulp_"));
  EXPECT_FALSE(has_prefix(run_ut, "dump_"));
  EXPECT_FALSE(has_prefix(run_ut, "mindspore_"));
  ASSERT_TRUE(run_ut.count("rmse") && run_ut.count("status") && run_ut.count("binary_err_rate"));
  for (const auto& [k, v] : run_ut) EXPECT_EQ(v, all.at(k)) << k;
  // Each part alone adds its own lines and nothing else.
  EXPECT_EQ(metrics("--metrics ulp").at("ulp_max"), all.at("ulp_max"));
  EXPECT_FALSE(has_prefix(metrics("--metrics ulp"), "dump_"));
  EXPECT_EQ(metrics("--metrics run_ut,dump").at("dump_cosine"), all.at("dump_cosine"));
  EXPECT_EQ(metrics("--metrics mindspore").at("mindspore_max_rel"), all.at("mindspore_max_rel"));
  EXPECT_EQ(metrics("--metrics ulp,dump,mindspore"), all);
}

// linear is judged by the ULP standard: its ULP metrics are part of run_ut's row, so they stay.
TEST_F(MetricsCli, AnApiJudgedByUlpKeepsItsUlpMetrics) {
  const auto all = metrics("--api linear");
  const auto run_ut = metrics("--api linear --metrics run_ut");
  EXPECT_EQ(run_ut.at("standard"), "ulp_compare");
  EXPECT_EQ(run_ut.at("ulp_max"), all.at("ulp_max"));
  EXPECT_EQ(run_ut.at("status"), all.at("status"));
}

TEST_F(MetricsCli, AnUnknownPartIsAnInvalidArgument) {
  for (const std::string bad : {"cosine", "ulp,", "run_ut,,ulp"}) {
    const auto r = run_cli("metrics '" + dir_.file("bench.npy") + "' '" + dir_.file("device.npy") +
                           "' --metrics '" + bad + "'");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(bad), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("status"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace probe
