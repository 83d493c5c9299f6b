// `probe metrics --metrics LIST`: the parts left out are neither printed nor computed, the rest is printed
// exactly as without the flag, and a bad list is an invalid-argument error naming the item. In the probe
// profile the verdict is the error bound's (DECISIONS D14) at every output scale.
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

// +1% on one element in 10,000 of a float32 output, +3% of a bfloat16 one, and one sign flip are errors at
// every output scale from 1e-9 to 1e4; the float64 result rounded once to the dtype passes. (Derived: D14's
// element-wise bound is (1 + 2^-10) 10 u |b| with u = 2^-24, or 2^-8 (1 + 9 2^-16) |b| for bfloat16,
// far below 1%, 3% - 0.4% (the bfloat16 rounding of the faulty value) and 2 |b|.)
TEST(MetricsCliErrorBound, OneElementFaultsAndSignFlipsAreErrorsAtEveryScale) {
  ScratchDir dir("probe-metrics-d14");
  const std::int64_t n = 10000;
  for (double scale : {1e-9, 1e-4, 1.0, 1e4}) {
    for (DType dtype : {DType::Float32, DType::BFloat16}) {
      std::vector<double> bench(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i)
        bench[static_cast<std::size_t>(i)] = scale * (1.5 + std::sin(0.37 * static_cast<double>(i)));
      const std::string b = dir.file("bench.npy");
      save_npy(b, Tensor::from_values(bench, Shape{n}));
      auto device_file = [&](double factor, std::int64_t at) {
        std::vector<double> d = bench;
        d[static_cast<std::size_t>(at)] *= factor;
        const Tensor t = Tensor::from_values(d, Shape{n}).to(dtype);
        const std::string f = dir.file(dtype == DType::BFloat16 ? "device.pt" : "device.npy");
        if (dtype == DType::BFloat16)
          save_pt(f, t);
        else
          save_npy(f, t);
        return f;
      };
      auto verdict = [&](double factor, std::int64_t at) {
        const auto r = run_cli("metrics '" + b + "' '" + device_file(factor, at) + "' --metrics run_ut");
        EXPECT_EQ(r.code, 0) << r.out;
        return parse_lines(r.out);
      };
      const std::string where = std::to_string(scale) + " " + std::string(torch_name(dtype));
      EXPECT_EQ(verdict(1.0, 0).at("status"), "pass") << where;
      const auto one = verdict(dtype == DType::BFloat16 ? 1.03 : 1.01, 4321);
      EXPECT_EQ(one.at("status"), "error") << where << " " << one.at("message");
      EXPECT_EQ(one.at("worst").rfind("[4321] ", 0), 0u) << one.at("worst");
      EXPECT_EQ(verdict(-1.0, 777).at("status"), "error") << where;
    }
  }
}

// An API that accumulates needs its magnitude bench; without it run_ut's rule judges and says why.
TEST(MetricsCliErrorBound, AccumulatingApiNeedsItsMagnitude) {
  ScratchDir dir("probe-metrics-d14-mm");
  // a = [[1, -1]], b = [[1], [1]]: a @ b = 0 exactly, |a| @ |b| = 2; a device value of 1e-7 is rounding
  // noise for K = 2 (bound ~ (1 + 2^-10) (2 + 2) 2^-24 * 2 = 4.8e-7) and must pass.
  save_npy(dir.file("b.npy"), Tensor::from_values<double>({0.0}, Shape{1, 1}));
  save_npy(dir.file("d.npy"), Tensor::from_values<float>({1e-7f}, Shape{1, 1}));
  save_npy(dir.file("m.npy"), Tensor::from_values<double>({2.0}, Shape{1, 1}));
  const std::string files = "'" + dir.file("b.npy") + "' '" + dir.file("d.npy") + "' --api Torch.mm ";
  const auto without = parse_lines(run_cli("metrics " + files).out);
  EXPECT_NE(without.at("message").find("needs magnitude and accumulation"), std::string::npos)
      << without.at("message");
  const auto r = run_cli("metrics " + files + "--magnitude '" + dir.file("m.npy") + "' --accumulation 2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(parse_lines(r.out).at("status"), "pass") << r.out;
  EXPECT_EQ(run_cli("metrics " + files + "--accumulation 0").code, 2);
  // --magnitude without --accumulation is not enough either.
  const auto no_k = run_cli("metrics " + files + "--magnitude '" + dir.file("m.npy") + "'");
  ASSERT_EQ(no_k.code, 0) << no_k.out;
  EXPECT_NE(parse_lines(no_k.out).at("message").find("needs accumulation (D14)"), std::string::npos)
      << no_k.out;
}

// DECISIONS D25: --exact-scalars drops D14's term for a Python number's rounding. mul in float16 (u = 2^-11)
// of a bench 1: a device 2 u away (1 + 2^-10, the next float16 above 1) is within the bound that allows
// for a rounded number, (1 + 2^-10)(2 u + 2 2^-24), and beyond the one for an exact number.
TEST(MetricsCliErrorBound, ExactScalarsFlagDropsTheScalarRoundingTerm) {
  ScratchDir dir("probe-metrics-d25-scalars");
  save_npy(dir.file("b.npy"), Tensor::from_values<double>({1.0}, Shape{1}));
  save_npy(dir.file("d.npy"),
           Tensor::from_values<double>({1.0 + std::ldexp(1.0, -10)}, Shape{1}).to(DType::Float16));
  const std::string files = "'" + dir.file("b.npy") + "' '" + dir.file("d.npy") + "' --api Torch.mul";
  const auto rounded = run_cli("metrics " + files);
  ASSERT_EQ(rounded.code, 0) << rounded.out;
  EXPECT_EQ(parse_lines(rounded.out).at("status"), "pass") << rounded.out;
  const auto exact = run_cli("metrics " + files + " --exact-scalars");
  ASSERT_EQ(exact.code, 0) << exact.out;
  EXPECT_EQ(parse_lines(exact.out).at("status"), "error") << exact.out;
}

}  // namespace
}  // namespace probe
