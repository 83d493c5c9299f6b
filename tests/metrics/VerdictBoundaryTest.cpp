// Every documented threshold of run_ut's compare stage, hit exactly and just missed, with hand-made
// vectors (precheck.md §2.3-§2.9, §3.1, §4.3). Each expected verdict is derived by hand in the comment
// next to it from the spec; nothing here comes from probe's own output. Profile msprobe throughout
// (the probe profile changes bf16 and small-value rules, DECISIONS D2/D12).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "probe/output_compare.h"

namespace probe {
namespace {

const Standards& msprobe_config() {
  static const Standards cfg = Standards::builtin(Profile::MsProbe);
  return cfg;
}

// `n` copies of `fill` with `at[i] = v` overrides, as a 1-d tensor of the given element type.
template <class T, class Conv>
Tensor vec(std::size_t n, double fill, std::vector<std::pair<std::size_t, double>> at, Conv conv) {
  std::vector<T> v(n, conv(fill));
  for (auto [i, x] : at) v[i] = conv(x);
  return Tensor::from_values<T>(v, Shape{static_cast<std::int64_t>(n)});
}
Tensor f64(std::size_t n, double fill, std::vector<std::pair<std::size_t, double>> at = {}) {
  return vec<double>(n, fill, std::move(at), [](double x) { return x; });
}
Tensor f32(std::size_t n, double fill, std::vector<std::pair<std::size_t, double>> at = {}) {
  return vec<float>(n, fill, std::move(at), [](double x) { return static_cast<float>(x); });
}
Tensor f16(std::size_t n, double fill, std::vector<std::pair<std::size_t, double>> at = {}) {
  return vec<float16_t>(n, fill, std::move(at), [](double x) { return to_float16(x); });
}
Tensor bf16(std::size_t n, double fill, std::vector<std::pair<std::size_t, double>> at = {}) {
  return vec<bfloat16_t>(n, fill, std::move(at), [](double x) { return to_bfloat16(x); });
}

DetailRow judge(const char* api, const Tensor& bench, const Tensor& device) {
  return compare_item(api, Value(bench), Value(device), msprobe_config());
}

bool has(const DetailRow& r, const char* text) { return r.message.find(text) != std::string::npos; }

// §2.3: ok iff cos > 0.99. b = (1, 0), d = (1, y): both maxima are 1, so cos = 1 / sqrt(1 + y^2).
// y = 0.14249228262288752 (= sqrt(1/0.99^2 - 1) rounded) gives numpy's float64 cosine exactly 0.99
// (checked with numpy: (d @ b) / (norm(d) * norm(b)) == 0.99), so it fails; y = 0.1424 gives
// 0.990010.. and passes the cosine step. float64 device: float32 has no y that lands on 0.99 exactly.
// Both then end in error (element 1 has rel = y / eps), so the cells tell the steps apart: a cosine
// failure leaves 最大绝对误差 SPACE and says so.
TEST(VerdictBoundary, CosineExactly099IsAnError) {
  DetailRow at = judge("gelu", f64(2, 1.0, {{1, 0.0}}), f64(2, 1.0, {{1, 0.14249228262288752}}));
  ASSERT_EQ(at.cosine.value, 0.99);
  EXPECT_EQ(at.status, Status::Error);
  EXPECT_TRUE(has(at, "Cosine similarity is less than 0.99")) << at.message;
  EXPECT_TRUE(at.max_abs.is_blank());

  DetailRow above = judge("gelu", f64(2, 1.0, {{1, 0.0}}), f64(2, 1.0, {{1, 0.1424}}));
  ASSERT_GT(above.cosine.value, 0.99);
  EXPECT_FALSE(has(above, "Cosine similarity is less than 0.99")) << above.message;
  EXPECT_FALSE(above.max_abs.is_blank());
}

// §2.4: pass iff max_abs < 0.001 (strict). d = 0 where b = 0.001 gives |0 - 0.001| = 0.001 exactly
// (float64, no rounding in a subtraction from zero). 1000 elements, the other 999 equal (1.0): cosine
// 0.9999995 > 0.99. At 0.001 the max-abs step does not pass, so the dual ratios decide: element 0 has
// rel = 0.001 / (0.001 + 2^-52) >= 0.001, thousandth = 999/1000 = 0.999, not > 1 - 0.001 -> error.
// Just below (b = 2^-10 = 0.0009765625) the max-abs step passes.
TEST(VerdictBoundary, MaxAbsExactly0001IsNotAPassFloat32AndFloat64) {
  for (bool fp64 : {false, true}) {
    SCOPED_TRACE(fp64 ? "float64 device" : "float32 device");
    auto dev = [&](double at0) { return fp64 ? f64(1000, 1.0, {{0, at0}}) : f32(1000, 1.0, {{0, at0}}); };
    DetailRow at = judge("gelu", f64(1000, 1.0, {{0, 0.001}}), dev(0.0));
    ASSERT_EQ(at.max_abs.value, 0.001);
    EXPECT_EQ(at.status, Status::Error);
    EXPECT_TRUE(has(at, "Relative error is greater than 0.001, consider as error")) << at.message;

    DetailRow below = judge("gelu", f64(1000, 1.0, {{0, 0x1p-10}}), dev(0.0));
    EXPECT_EQ(below.status, Status::Pass);
    EXPECT_TRUE(has(below, "Max abs error is less than 0.001, consider as pass")) << below.message;
  }
}

// float16 device: max_abs is a float32 number (§2.13), and float32 has no 0.001; its neighbours are
// 0.0009999999310821295 (pass) and 0.0010000000474974513 (not a pass). d = 0, b = that float32 value.
// With 1000 elements and one bad element: hundredth 0.999 passes, thousandth 0.999 fails -> Warning.
TEST(VerdictBoundary, MaxAbsAroundThousandthFloat16) {
  const double below = 0.0009999999310821295, above = 0.0010000000474974513;
  DetailRow p = judge("gelu", f32(1000, 1.0, {{0, below}}), f16(1000, 1.0, {{0, 0.0}}));
  EXPECT_EQ(p.status, Status::Pass) << p.message;
  DetailRow w = judge("gelu", f32(1000, 1.0, {{0, above}}), f16(1000, 1.0, {{0, 0.0}}));
  EXPECT_EQ(w.max_abs.value, above);
  EXPECT_EQ(w.status, Status::Warning) << w.message;
}

// §2.5 / §3.1 step 4, the spec's own example: 100 elements, one with rel >= 0.01 (b = 1, d = 1.25,
// rel = 0.25 / (1 + 2^-23)); cosine 0.99969, max_abs 0.25. hundredth = 99/100 = 0.99 (== 1 - 0.01 in
// float64), not > 0.99 -> error. With 101 elements hundredth = 100/101 > 0.99 passes, thousandth
// 100/101 < 0.999 fails -> Warning. Same for bf16 (both sides to float32, eps 2^-8).
TEST(VerdictBoundary, OneBadInHundredIsAnErrorFloat16AndBFloat16) {
  for (bool is_bf16 : {false, true}) {
    SCOPED_TRACE(is_bf16 ? "bfloat16" : "float16");
    auto dev = [&](std::size_t n) { return is_bf16 ? bf16(n, 1.0, {{7, 1.25}}) : f16(n, 1.0, {{7, 1.25}}); };
    DetailRow hundred = judge("gelu", f32(100, 1.0), dev(100));
    ASSERT_EQ(hundred.hundredth.value, 0.99);
    EXPECT_EQ(hundred.status, Status::Error);
    EXPECT_TRUE(has(hundred, "Relative error is greater than 0.01, consider as error")) << hundred.message;

    DetailRow more = judge("gelu", f32(101, 1.0), dev(101));
    EXPECT_EQ(more.status, Status::Warning) << more.message;
  }
}

// §3.1 step 4, thousandth for fp16/bf16: one element with 0.001 <= rel < 0.01 (fp16: d = 1 + 2^-8,
// rel = 0.0039; bf16: d = 1 + 2^-7, rel = 0.0078125 / (1 + 2^-8) = 0.0078), max_abs >= 0.001.
// 1000 elements: hundredth 1 passes, thousandth 999/1000 = 0.999 not > 0.999 -> Warning.
// 1001 elements: thousandth 1000/1001 > 0.999 -> pass.
TEST(VerdictBoundary, OneInThousandIsAWarningFloat16AndBFloat16) {
  for (bool is_bf16 : {false, true}) {
    SCOPED_TRACE(is_bf16 ? "bfloat16" : "float16");
    const double off = is_bf16 ? 1 + 0x1p-7 : 1 + 0x1p-8;
    auto dev = [&](std::size_t n) { return is_bf16 ? bf16(n, 1.0, {{3, off}}) : f16(n, 1.0, {{3, off}}); };
    DetailRow thousand = judge("gelu", f32(1000, 1.0), dev(1000));
    ASSERT_EQ(thousand.thousandth.value, 0.999);
    EXPECT_EQ(thousand.hundredth.value, 1.0);
    EXPECT_EQ(thousand.status, Status::Warning) << thousand.message;
    DetailRow more = judge("gelu", f32(1001, 1.0), dev(1001));
    EXPECT_EQ(more.status, Status::Pass) << more.message;
  }
}

// §3.1 step 5, float32/float64 devices. Thousandth: one element b = 1, d = 1.5 (rel 0.5) in 1000 ->
// 0.999 -> error; in 1001 -> thousandth passes, ten-thousandth 1000/1001 fails -> Warning.
// Ten-thousandth: one element b = 10, d = 10.005 (rel 0.0005: counts as good for 0.001, bad for
// 0.0001; max_abs 0.005) in 10000 -> 0.9999 not > 0.9999 -> Warning; in 10001 -> pass.
TEST(VerdictBoundary, ThousandthAndTenThousandthFloat32AndFloat64) {
  for (bool fp64 : {false, true}) {
    SCOPED_TRACE(fp64 ? "float64 device" : "float32 device");
    auto dev = [&](std::size_t n, double fill, double at) {
      return fp64 ? f64(n, fill, {{5, at}}) : f32(n, fill, {{5, at}});
    };
    DetailRow t1000 = judge("gelu", f64(1000, 1.0), dev(1000, 1.0, 1.5));
    ASSERT_EQ(t1000.thousandth.value, 0.999);
    EXPECT_EQ(t1000.status, Status::Error) << t1000.message;
    DetailRow t1001 = judge("gelu", f64(1001, 1.0), dev(1001, 1.0, 1.5));
    EXPECT_EQ(t1001.status, Status::Warning) << t1001.message;

    DetailRow t10000 = judge("gelu", f64(10000, 10.0), dev(10000, 10.0, 10.005));
    ASSERT_EQ(t10000.ten_thousandth.value, 0.9999);
    EXPECT_EQ(t10000.thousandth.value, 1.0);
    EXPECT_EQ(t10000.status, Status::Warning) << t10000.message;
    DetailRow t10001 = judge("gelu", f64(10001, 10.0), dev(10001, 10.0, 10.005));
    EXPECT_EQ(t10001.status, Status::Pass) << t10001.message;
  }
}

// §2.9: ULP误差大于阈值占比 counts ulp_err > T (strict), T = 32 for float32 and 1 for fp16/bf16.
// b = 1 (eb = 0), so ulp = (d - 1) * 2^mantissa_bits: d = 1 + k * 2^-mantissa gives exactly k ULP.
// Two elements, one off by k: ratio 0 at k = T, 1/2 at k = T + 1 (float32: 32 vs 33, fp16 (10 bits):
// 1 vs 2, bf16 (7 bits): 1 vs 2). matmul is judged by the ULP standard (§4.1).
TEST(VerdictBoundary, UlpThresholdIsStrictForEachDtype) {
  struct Case {
    const char* name;
    int mantissa, threshold;
  };
  for (Case c : {Case{"float32", 23, 32}, Case{"float16", 10, 1}, Case{"bfloat16", 7, 1}}) {
    SCOPED_TRACE(c.name);
    auto run = [&](int k) {
      const double d = 1 + k * std::ldexp(1.0, -c.mantissa);
      const std::string n = c.name;
      Tensor dev = n == "float32"   ? f32(2, 1.0, {{1, d}})
                   : n == "float16" ? f16(2, 1.0, {{1, d}})
                                    : bf16(2, 1.0, {{1, d}});
      return judge("matmul", n == "float32" ? f64(2, 1.0) : f32(2, 1.0), dev);
    };
    DetailRow at = run(c.threshold);
    ASSERT_EQ(at.ulp_max.value, c.threshold);
    EXPECT_EQ(at.ulp_ratio.value, 0.0);
    DetailRow over = run(c.threshold + 1);
    EXPECT_EQ(over.ulp_max.value, c.threshold + 1);
    EXPECT_EQ(over.ulp_ratio.value, 0.5);
  }
}

// §2.7 benchmark standard, float32 (small_value 2^-20, atol 2^-30): small is |b| <= 2^-20 (inclusive),
// an error is abs_err > 2^-30 (strict). b = (2^-20, 1), d = (2^-20 + e, 1):
//   e = 2^-31: one small element, abs_err below atol -> ratio 0/1 = 0.0 (a float, not the integer "none");
//   e = 2^-30: abs_err == atol is not an error (numpy: 2^-30 > 2^-30 is False) -> 0.0. This case caught
//              the standards file's "9.313225746154785e-10" parsed one ulp short of 2^-30 (rapidjson's
//              default number parsing is not correctly rounded);
//   e = 2^-29: ratio 1/1 = 1.0;
//   b0 = next double above 2^-20: no small element -> integer 0 (§2.7 "integer 0 if no small values").
TEST(VerdictBoundary, SmallValueThresholdsFloat32Benchmark) {
  const double s = 0x1p-20;
  DetailRow below = judge("gelu", f64(2, 1.0, {{0, s}}), f32(2, 1.0, {{0, s + 0x1p-31}}));
  EXPECT_EQ(below.small_value_err_ratio.kind, MetricKind::Double);
  EXPECT_EQ(below.small_value_err_ratio.value, 0.0);
  DetailRow at = judge("gelu", f64(2, 1.0, {{0, s}}), f32(2, 1.0, {{0, s + 0x1p-30}}));
  EXPECT_EQ(at.small_value_err_ratio.kind, MetricKind::Double);
  EXPECT_EQ(at.small_value_err_ratio.value, 0.0);
  DetailRow over = judge("gelu", f64(2, 1.0, {{0, s}}), f32(2, 1.0, {{0, s + 0x1p-29}}));
  EXPECT_EQ(over.small_value_err_ratio.value, 1.0);
  DetailRow not_small =
      judge("gelu", f64(2, 1.0, {{0, std::nextafter(s, 1.0)}}), f32(2, 1.0, {{0, s + 0x1p-29}}));
  EXPECT_EQ(not_small.small_value_err_ratio.kind, MetricKind::Integer);
  EXPECT_EQ(not_small.small_value_err_ratio.value, 0.0);
}

// §2.8 absolute threshold, float16 (small_value 2^-10, atol 2^-16): b = (2^-10, 1) float32,
// d = (2^-10 + e, 1) float16 (fp16 spacing at 2^-10 is 2^-20, so both offsets are exact):
//   e = 2^-16: abs_err == atol -> 绝对误差错误率 0/1 = 0; e = 2^-15 -> 1/1 = 1.
// `add` is an absolute-threshold API (§4.1).
TEST(VerdictBoundary, SmallValueThresholdsFloat16AbsoluteThreshold) {
  const double s = 0x1p-10;
  DetailRow at_atol = judge("add", f32(2, 1.0, {{0, s}}), f16(2, 1.0, {{0, s + 0x1p-16}}));
  EXPECT_EQ(at_atol.abs_err_ratio.value, 0.0);
  DetailRow over = judge("add", f32(2, 1.0, {{0, s}}), f16(2, 1.0, {{0, s + 0x1p-15}}));
  EXPECT_EQ(over.abs_err_ratio.value, 1.0);
}

// §2.8 absolute threshold, float32 (small_value 2^-20, atol 2^-30), float64 bench: abs_err == 2^-30 exactly
// is not counted (numpy: 0), 2^-29 is. Same parsing hazard as the benchmark case above.
TEST(VerdictBoundary, SmallValueThresholdsFloat32AbsoluteThreshold) {
  const double s = 0x1p-20;
  DetailRow at_atol = judge("add", f64(2, 1.0, {{0, s}}), f32(2, 1.0, {{0, s + 0x1p-30}}));
  EXPECT_EQ(at_atol.abs_err_ratio.value, 0.0);
  DetailRow over = judge("add", f64(2, 1.0, {{0, s}}), f32(2, 1.0, {{0, s + 0x1p-29}}));
  EXPECT_EQ(over.abs_err_ratio.value, 1.0);
}

}  // namespace
}  // namespace probe
