// probe::gtest (include/probe/testing.h): the golden failure text, a REPRO line that `probe metrics`
// really re-judges, correctly rounded fp16/bf16 kernels passing, and biased kernels failing. Expected
// numbers are derived in the comments (numpy float64 where a formula is involved), never read from probe.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "common/ScratchDir.h"
#include "probe/scalar_types.h"
#include "probe/testing.h"

namespace probe {
namespace {

namespace fs = std::filesystem;
using probe::testing::args;
using probe::testing::IsAccurate;

Tensor f64(std::vector<double> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return Tensor::from_values<double>(v, Shape{n});
}

std::string shortest(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return "popen failed";
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ::pclose(p);
  return out;
}

// Every element one fp16 step of 2^-9 above the bench 1.0 (2 ulps of fp16 at 1: 2^-10 each).
// run_ut rule (precheck.md §2.3-§2.5, §3.1): all elements share the ratio, so the normalised vectors are
// equal and cosine = 1 (numpy: 1.0); max abs 2^-9 = 0.001953125 >= 0.001; rel 2^-9 < 0.01 for all
// (hundredth 1); rel >= 0.001 for all (thousandth 0) -> Warning.
// Benchmark standard against the correctly rounded result (all its metrics 0, floored at minimum_err
// 2^-11): rmse = sqrt(2^-18 * (4/4.0001 + 0.0001)) printed "%.14f" then / 2^-11: numpy 4.00014999842816;
// max rel 2^-9 / 2^-11 = 4 <= 10; mean rel 4 > 2; no small values (integer 0) -> 0; error balance 1 / 2^-11
// = 2048 (never decides). Worst: all four elements are 2 ulps off; ties keep index order.
// REPRO files of the helpers' default options go to a scratch directory of this run, not to /tmp.
class ReproDirEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { ::setenv("PROBE_REPRO_DIR", dir_.path().c_str(), 1); }

 private:
  probe::testing::ScratchDir dir_{"probe-gtest-repro"};
};
[[maybe_unused]] ::testing::Environment* const kReproDir =
    ::testing::AddGlobalTestEnvironment(new ReproDirEnvironment);

TEST(ProbeGtest, GoldenFailureText) {
  probe::testing::ScratchDir dir("probe-gtest");
  probe::testing::CheckOptions opt;
  opt.repro_dir = dir.path().string();
  const Tensor bench = f64({1, 1, 1, 1}), device = f64({1 + 0x1p-9, 1 + 0x1p-9, 1 + 0x1p-9, 1 + 0x1p-9});
  const probe::testing::Accuracy a = probe::testing::check_output("", bench, device, DType::Float16, opt);
  EXPECT_FALSE(a.accurate());
  const std::string repro = (dir.path() / "ProbeGtest.GoldenFailureText").string();
  const std::string want =
      "the device tensor is not accurate (torch.float16, shape (4,), profile probe)\n"
      // D14 without an API: an element-wise function, bound (1 + 2^-10) (2^-11 + 8 u + u / (1 - u)) + 2^-24
      // with u = 2^-24 (fp16's smallest subnormal last) = 0.0004893546574784614; 2^-9 is 3.99 times that.
      "  error bound (D14, decides): error (error bound)\n"
      "    elements beyond their error bound = 4 (needs == 0): FAIL\n"
      "    largest error / bound = 3.9912259343030065 (needs <= 1): FAIL (reported, never decides)\n"
      // D20: a float16 element-wise kernel rounding its intermediate results gets 3 2^-11 |b|; 2^-9 is
      // beyond.
      "    elements beyond the bound of a kernel rounding in the output dtype = 4 (needs == 0): FAIL\n"
      "    message: error bound (D14, transcendental family, K=1, float16): 4 of 4 elements beyond their "
      "bound; "
      "worst at [0]: device 1.00195312, bench 1, error 0.00195 > bound 0.000489 (3.99x)\n"
      "  run_ut rule: Warning (old rule)\n"
      "    cosine = 1 (needs > 0.99): pass\n"
      "    max abs error = 0.001953125 (needs < 0.001): FAIL\n"
      "    hundredth (share with rel. error < 0.01) = 1 (needs > 0.99): pass\n"
      "    thousandth (share with rel. error < 0.001) = 0 (needs > 0.999): FAIL\n"
      "    message: Relative error is greater than 0.001, consider as warning, skip other check and set to "
      "SPACE.\n"
      "  precision standard benchmark: error (benchmark)\n"
      "    small value error ratio / reference = 0 (needs <= 2): pass\n"
      "    rmse / reference = 4.00014999842816 (needs <= 2): FAIL\n"
      "    max relative error / reference = 4 (needs <= 10): pass\n"
      "    mean relative error / reference = 4 (needs <= 2): FAIL\n"
      "    error balance / reference = 2048 (needs <= 2): FAIL (reported, never decides)\n"
      "  worst elements:\n"
      "    [0] bench 1, device 1.001953125, abs err 0.001953125, rel err 0.001953125, 2 ulp, bound "
      "0.0004893546574784614\n"
      "    [1] bench 1, device 1.001953125, abs err 0.001953125, rel err 0.001953125, 2 ulp, bound "
      "0.0004893546574784614\n"
      "    [2] bench 1, device 1.001953125, abs err 0.001953125, rel err 0.001953125, 2 ulp, bound "
      "0.0004893546574784614\n"
      "__REPRO: probe metrics " +
      repro + "/bench.npy " + repro + "/device.npy --profile probe\n";
  EXPECT_EQ(probe::testing::describe(a, "the device tensor", "", bench, device, DType::Float16, opt), want);

  // The REPRO command re-judges the saved case: D14's verdict again.
  const std::string out = run(std::string(PROBE_CLI_PATH) + " metrics " + repro + "/bench.npy " + repro +
                              "/device.npy --profile probe");
  EXPECT_NE(out.find("device_dtype             torch.float16"), std::string::npos) << out;
  EXPECT_NE(out.find("status                   error"), std::string::npos) << out;
  EXPECT_NE(out.find("run_ut_status            Warning"), std::string::npos) << out;
}

// A 2-D output's worst elements are named by their index per dimension: in [2, 2] only element (1, 0)
// differs, in the msprobe profile (no error bound: the run_ut rule's worst elements).
TEST(ProbeGtest, WorstElementsOfA2DOutputAreRowAndColumn) {
  probe::testing::ScratchDir dir("probe-gtest-2d");
  probe::testing::CheckOptions opt;
  opt.repro_dir = dir.path().string();
  opt.profile = probe::Profile::MsProbe;
  const Tensor bench = f64({1, 1, 1, 1}).reshape({2, 2});
  const Tensor device = f64({1, 1, 1 + 0x1p-6, 1}).reshape({2, 2});
  const probe::testing::Accuracy a = probe::testing::check_output("", bench, device, DType::Float16, opt);
  const std::string text = probe::testing::describe(a, "the output", "", bench, device, DType::Float16, opt);
  EXPECT_NE(text.find("  worst elements:\n    [1, 0] bench 1, device 1.015625"), std::string::npos) << text;
}

// The next value of `dtype` above y (fp16: 10 stored mantissa bits, smallest normal 2^-14; bf16: 7 and
// 2^-126). A gap is 2^(exponent - mantissa bits); going up from a negative power of two crosses into the
// binade below, whose gap is half as wide.
double next_up(double y, DType dtype) {
  const int mantissa = dtype == DType::Float16 ? 10 : 7;
  const double min_normal = dtype == DType::Float16 ? 0x1p-14 : 0x1p-126;
  const double a = std::max(std::fabs(y), min_normal);
  const double gap = std::ldexp(1.0, std::ilogb(a) - mantissa);
  const bool negative_power_of_two =
      y < 0 && std::fabs(y) >= min_normal && std::ldexp(1.0, std::ilogb(y)) == -y;
  return y + (negative_power_of_two ? gap / 2 : gap);
}

// gelu(x) = x/2 (1 + erf(x / sqrt 2)) in float64 on the kernel's own inputs, then one rounding: the best
// any fp16/bf16 kernel can return. `bias_ulps` moves every result that many values up.
Tensor gelu_kernel(const Tensor& x, DType dtype, int bias_ulps = 0) {
  std::vector<double> out = x.to_doubles();
  for (double& e : out) e = 0.5 * e * (1 + std::erf(e / std::sqrt(2.0)));
  out = f64(out).to(dtype).to_doubles();  // round to the dtype
  for (double& e : out)
    for (int k = 0; k < bias_ulps; ++k) e = next_up(e, dtype);
  return f64(out).to(dtype).reshape(x.shape());
}

// 1001 inputs on [-3, 3] (step 0.006), held in the device dtype.
Tensor grid(DType dtype) {
  std::vector<double> v;
  for (int i = 0; i <= 1000; ++i) v.push_back(-3.0 + 0.006 * i);
  return f64(v).to(dtype);
}

// EXPECT_PROBE_ACCURATE judges gelu by D14 with the magnitude bench it computes from the call; its REPRO
// line must hand that bench to `probe metrics`, or the command falls back to run_ut's rule and passes the
// case. The kernel is gelu's tanh approximation in float32, which differs from erf's gelu by up to about
// 2e-4 near x = -1.2 (both formulas in numpy float64), some thousand times float32's rounding there: an
// error by the bound, a pass by run_ut's max abs error < 0.001.
TEST(ProbeGtest, ReproLineOfAnApiWithAMagnitudeBenchGivesTheSameVerdict) {
  const Tensor x = grid(DType::Float32);
  std::vector<double> y = x.to_doubles();
  for (double& e : y) e = 0.5 * e * (1 + std::tanh(0.7978845608028654 * (e + 0.044715 * e * e * e)));
  const Tensor device = f64(y).to(DType::Float32);
  const ::testing::AssertionResult r = probe::testing::api_accurate("Functional.gelu", args(x), {device});
  ASSERT_FALSE(r);
  const std::string text = r.message();
  EXPECT_NE(text.find("  error bound (D14, decides): error (error bound)"), std::string::npos) << text;
  EXPECT_NE(text.find("  run_ut rule: pass"), std::string::npos) << text;
  const std::size_t at = text.find("__REPRO: probe metrics ");
  ASSERT_NE(at, std::string::npos) << text;
  const std::size_t from = at + std::string("__REPRO: probe ").size();
  const std::string command = text.substr(from, text.find('\n', from) - from);
  EXPECT_NE(command.find(" --magnitude "), std::string::npos) << command;
  const std::string out = run(std::string(PROBE_CLI_PATH) + " " + command);
  EXPECT_NE(out.find("status                   error\n"), std::string::npos) << command << "\n" << out;
  EXPECT_EQ(out.find("needs magnitude"), std::string::npos) << out;
}

// DECISIONS D25: mul by 2 (exact in float16) judged without the term for a rounded Python number. 2.5 one
// float16 ulp (2^-9) off: beyond one rounding, (1 + 2^-10)(2^-11 + 2^-23) 2.5 = 0.00122, within two
// (0.00244), so it fails here, and the __REPRO command must pass --exact-scalars to give the same verdict.
TEST(ProbeGtest, ReproLineOfACallWithExactScalarsGivesTheSameVerdict) {
  const Tensor x = f64({0.75, 1.25, -1.5, 0.5}).to(DType::Float16);
  std::vector<double> y = x.to_doubles();
  for (double& e : y) e *= 2;
  y[1] += std::ldexp(1.0, -9);  // 2.5 -> the next float16
  const ::testing::AssertionResult r =
      probe::testing::api_accurate("Torch.mul", args(x, 2.0), {f64(y).to(DType::Float16)});
  ASSERT_FALSE(r);
  const std::string text = r.message();
  const std::size_t at = text.find("__REPRO: probe metrics ");
  ASSERT_NE(at, std::string::npos) << text;
  const std::size_t from = at + std::string("__REPRO: probe ").size();
  const std::string command = text.substr(from, text.find('\n', from) - from);
  EXPECT_NE(command.find(" --exact-scalars"), std::string::npos) << command;
  const std::string out = run(std::string(PROBE_CLI_PATH) + " " + command);
  EXPECT_NE(out.find("status                   error\n"), std::string::npos) << command << "\n" << out;
}

TEST(ProbeGtest, CorrectlyRoundedKernelsPass) {
  for (DType dtype : {DType::Float16, DType::BFloat16}) {
    const Tensor x = grid(dtype);
    EXPECT_PROBE_ACCURATE("Functional.gelu", args(x), gelu_kernel(x, dtype)) << torch_name(dtype);
  }
}

// One value up on every element: errors of 0.5..1.5 ulp. fp16: results in [1, 3] have gaps 2^-10..2^-9,
// so max abs >= 0.001, and relative errors up to 1.5 * 2^-10 ~ 0.0015 > 0.001 on far more than 0.1% of
// the elements -> Warning. bf16: just above a power of two 1.5 ulp is 1.5 * 2^-7 ~ 0.0117 relative
// > 0.01, on more than 1% of the elements -> error. Either fails.
TEST(ProbeGtest, OneUlpBiasedKernelsFail) {
  for (DType dtype : {DType::Float16, DType::BFloat16}) {
    const Tensor x = grid(dtype);
    EXPECT_NONFATAL_FAILURE(EXPECT_PROBE_ACCURATE("Functional.gelu", args(x), gelu_kernel(x, dtype, 1)),
                            "Functional.gelu output 0 is not accurate");
  }
}

// A kernel wrong at one element only, index 917: x = -3 + 0.006 * 917 = 2.502, 2.501953125 in fp16,
// gelu ~2.4866 where the fp16 gap is 2^-9; it returns 4 gaps too much. Every other element is correctly
// rounded (<= 0.5 ulp), so 917 (~4 ulps) must head the worst elements, with its input and device value.
TEST(ProbeGtest, FailureNamesTheWorstElement) {
  const Tensor x = grid(DType::Float16);
  Tensor y = gelu_kernel(x, DType::Float16);
  std::vector<double> v = y.to_doubles();
  v[917] += 4 * 0x1p-9;
  const Tensor bad = f64(v).to(DType::Float16);
  probe::testing::ScratchDir dir("probe-gtest");
  probe::testing::CheckOptions opt;
  opt.repro_dir = dir.path().string();
  const Tensor bench = Tensor::from_values<double>(
      [&] {
        std::vector<double> b = x.to_doubles();
        for (double& e : b) e = 0.5 * e * (1 + std::erf(e / std::sqrt(2.0)));
        return b;
      }(),
      Shape{1001});
  const probe::testing::Accuracy a = probe::testing::check_output("gelu", bench, bad, DType::Float16, opt);
  const std::string text = probe::testing::describe(a, "gelu", "gelu", bench, bad, DType::Float16, opt, &x);
  const std::string first =
      "  worst elements:\n    [917] input " + shortest(x.to_doubles()[917]) + ", bench ";
  EXPECT_NE(text.find(first), std::string::npos) << text;
  EXPECT_NE(text.find("device " + shortest(v[917]) + ","), std::string::npos) << text;
}

TEST(ProbeGtest, MatcherAndPredicateFormat) {
  const Tensor x = grid(DType::BFloat16);
  const Tensor good = gelu_kernel(x, DType::BFloat16), bad = gelu_kernel(x, DType::BFloat16, 1);
  std::vector<double> b = x.to_doubles();
  for (double& e : b) e = 0.5 * e * (1 + std::erf(e / std::sqrt(2.0)));
  const Tensor bench = f64(b);
  EXPECT_THAT(good, IsAccurate(bench, DType::BFloat16));
  // The device values may come widened (float32 holding bf16 values): the matcher takes them as `dtype`.
  EXPECT_THAT(good.to(DType::Float32), IsAccurate(bench, DType::BFloat16));
  // bf16 one value up: error by the run_ut rule (see OneUlpBiasedKernelsFail).
  EXPECT_NONFATAL_FAILURE(EXPECT_THAT(bad, IsAccurate(bench, DType::BFloat16)), "run_ut rule: error");
  EXPECT_PRED_FORMAT2(probe::testing::AssertAccurate, bench, good);
  EXPECT_NONFATAL_FAILURE(EXPECT_PRED_FORMAT2(probe::testing::AssertAccurate, bench, bad),
                          "__REPRO: probe metrics");
  // A standard given explicitly: ULP on the 1-ulp-biased result (more than half the elements above 1 ulp).
  EXPECT_NONFATAL_FAILURE(EXPECT_THAT(bad, IsAccurate(bench, DType::BFloat16, Standard::Ulp)),
                          "precision standard ulp_compare: error (ulp)");
}

// GoogleTest prints a Tensor through probe::PrintTo: dtype, shape and the first 8 elements (in flat
// order), not the object's bytes. The values below are exact in float16 / int32, so their shortest
// spelling is the literal.
TEST(ProbeGtest, TensorsPrintAsDtypeShapeAndFirstElements) {
  const Tensor h =
      Tensor::from_values<double>({0.5, -2.0, 1024.0, 0.25, 3.0, 6.5}, Shape{2, 3}).to(DType::Float16);
  EXPECT_EQ(::testing::PrintToString(h), "float16 (2, 3) [0.5, -2.0, 1024.0, 0.25, 3.0, 6.5]");
  const Tensor i = Tensor::from_values<std::int32_t>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Shape{10});
  EXPECT_EQ(::testing::PrintToString(i), "int32 (10,) [1, 2, 3, 4, 5, 6, 7, 8, ...]");
  // A failed matcher shows the device tensor that way.
  const Tensor bench = f64({1.0, 2.0, 3.0}), device = f64({1.0, 2.0, 4.0}).to(DType::Float32);
  EXPECT_NONFATAL_FAILURE(EXPECT_THAT(device, IsAccurate(bench, DType::Float32)),
                          "Actual: float32 (3,) [1.0, 2.0, 4.0]");
}

// D14 decides in the probe profile only, and its Warning (the reduced-precision band) is not accurate.
// bfloat16 mm, K = 256, magnitude 256, bench 20, device 20.5: beyond the float32-accumulation bound
// (1 + 2^-10) (2^-8 20 + (2^-24 + 8 sqrt(256) 2^-24) 256) = 0.080, within the bfloat16 band
// (1 + 2^-10) (2^-8 20 + (2^-24 + 4 2^-8) 256) = 4.08.
TEST(ProbeGtest, ErrorBoundWarningIsNotAccurateAndOnlyTheProbeProfileUsesTheBound) {
  probe::testing::CheckOptions opt;
  opt.magnitude = f64({256.0});
  opt.accumulation = 256;
  const auto a = probe::testing::check_output("Torch.mm", f64({20.0}), f64({20.5}), DType::BFloat16, opt);
  EXPECT_EQ(a.error_bound.method, Method::ErrorBound);
  EXPECT_EQ(a.error_bound.status, Status::Warning) << a.error_bound.message;
  EXPECT_FALSE(a.accurate());
  opt.profile = Profile::MsProbe;
  const auto ms = probe::testing::check_output("Torch.mm", f64({20.0}), f64({20.5}), DType::BFloat16, opt);
  EXPECT_EQ(ms.error_bound.method, Method::NotCompared);
}

TEST(ProbeGtest, WrongOutputCountOrDtypeFails) {
  const Tensor x = grid(DType::Float16);
  EXPECT_NONFATAL_FAILURE(EXPECT_PROBE_ACCURATE("Functional.gelu", args(x), (std::vector<Tensor>{})),
                          "gives 1 tensor output(s), the device 0");
  EXPECT_NONFATAL_FAILURE(
      EXPECT_PROBE_ACCURATE("Functional.gelu", args(x), gelu_kernel(x, DType::Float16).to(DType::Float32)),
      "has dtype torch.float32, torch gives torch.float16");
  EXPECT_NONFATAL_FAILURE(EXPECT_PROBE_ACCURATE("Functional.no_such_api", args(x), x), "bench runner");
}

}  // namespace
}  // namespace probe
