// msprobe_vectors.md §A.1, §C: metric values computed by msprobe HEAD's own code (numbers copied from the
// conformance document, never from probe).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "probe/metrics.h"

namespace probe {
namespace {

const double inf = std::numeric_limits<double>::infinity();
const double nan = std::numeric_limits<double>::quiet_NaN();

Tensor f16(std::initializer_list<double> v) {
  std::vector<float16_t> h;
  for (double x : v) h.push_back(to_float16(x));
  return Tensor::from_values<float16_t>(h, Shape{static_cast<std::int64_t>(h.size())});
}
Tensor bf16(std::initializer_list<double> v) {
  std::vector<bfloat16_t> h;
  for (double x : v) h.push_back(to_bfloat16(x));
  return Tensor::from_values<bfloat16_t>(h, Shape{static_cast<std::int64_t>(h.size())});
}
Tensor f32(std::initializer_list<double> v) {
  std::vector<float> h(v.begin(), v.end());
  return Tensor::from_values<float>(h, Shape{static_cast<std::int64_t>(h.size())});
}
Tensor f64(std::initializer_list<double> v) {
  std::vector<double> h(v.begin(), v.end());
  return Tensor::from_values<double>(h, Shape{static_cast<std::int64_t>(h.size())});
}

MetricParams fp16_params() {
  MetricParams p;
  p.small_value = 0x1p-10;
  p.small_value_atol_benchmark = 1e-16;
  p.small_value_atol_absolute = 0x1p-16;
  p.rtol = 0x1p-10;
  p.accumulative_bound = 0x1p-8;
  p.ulp_min_eb = -14;
  p.ulp_mantissa_bits = 10;
  p.ulp_threshold = 1;
  return p;
}
MetricParams bf16_params() {
  MetricParams p = fp16_params();
  p.small_value_atol_absolute = 1e-16;
  p.rtol = 0x1p-8;
  p.accumulative_bound = 0x1p-7;
  p.ulp_min_eb = -126;
  p.ulp_mantissa_bits = 7;
  return p;
}

void expect_cell(const MetricValue& v, const std::string& text) { EXPECT_EQ(v.format(), text); }

TEST(MetricsVectors, C6Float16) {
  Tensor b =
      f32({0.0, 0.00048828125, -0.000244140625, 0.0005000000237487257, 1.0, -2.0, 3.5, inf, nan, 100.0});
  Tensor d = f16({9.5367431640625e-07, 0.00048828125, -0.00024318695068359375, 0.0005002021789550781,
                  1.0009765625, -2.00390625, 3.5, inf, 1.0, 100.5});
  TensorMetrics m = compute_metrics(b, d, fp16_params());
  EXPECT_EQ(m.compute_dtype, DType::Float32);
  EXPECT_DOUBLE_EQ(m.small_value_err_ratio.value, 0.75);
  EXPECT_EQ(m.rmse.value, 0.2500099793695623);
  EXPECT_EQ(m.error_balance.value, 0.3);
  EXPECT_EQ(m.max_rel_err, MetricValue::f32(0.004999999888241291f));
  EXPECT_EQ(m.mean_rel_err, MetricValue::f32(0.0019824218470603228f));
  EXPECT_EQ(m.inf_nan_err_ratio.value, 0.5);
  EXPECT_EQ(m.rel_err_ratio.value, 0.5);
  EXPECT_EQ(m.abs_err_ratio, MetricValue::f64(0.0));
  EXPECT_EQ(m.acc_inf_nan_err_ratio.value, 0.5);
  EXPECT_EQ(m.acc_rel_err_ratio.value, 0.3333333333333333);
  EXPECT_EQ(m.acc_abs_err_ratio, MetricValue::f64(0.0));
  EXPECT_EQ(m.ulp_max.kind, MetricKind::Float32);
  EXPECT_TRUE(std::isnan(m.ulp_max.value));
  EXPECT_TRUE(std::isnan(m.ulp_mean.value));
  EXPECT_EQ(m.ulp_ratio.value, 0.3);
}

TEST(MetricsVectors, C6Float32) {
  Tensor b =
      f64({0.0, 4.76837158203125e-07, -2.9802322387695312e-08, 1e-07, 1.0, -2.0, 3.5, inf, -inf, 100.0});
  Tensor d =
      f32({9.313225746154785e-10, 4.768380676978268e-07, -2.9802322387695312e-08, 1.0000000116860974e-07,
           1.0000009536743164, -2.0000038146972656, 3.5, inf, inf, 100.00001525878906});
  TensorMetrics m = compute_metrics(b, d, MetricParams{});
  EXPECT_EQ(m.compute_dtype, DType::Float64);
  EXPECT_EQ(m.small_value_err_ratio, MetricValue::f64(0.0));
  EXPECT_EQ(m.rmse.value, 7.878701957175303e-06);
  EXPECT_EQ(m.error_balance.value, 0.4);
  EXPECT_EQ(m.max_rel_err, MetricValue::f64(1.9073486328125e-06));
  EXPECT_EQ(m.mean_rel_err.value, 7.534027099609375e-07);
  EXPECT_EQ(m.inf_nan_err_ratio.value, 0.5);
  EXPECT_EQ(m.rel_err_ratio.value, 0.25);
  EXPECT_EQ(m.abs_err_ratio.value, 0.0);
  EXPECT_EQ(m.acc_inf_nan_err_ratio.value, 0.5);
  EXPECT_EQ(m.acc_rel_err_ratio.value, 0.0);
  EXPECT_TRUE(std::isnan(m.ulp_max.value));
  EXPECT_EQ(m.ulp_ratio.value, 0.0);
}

TEST(MetricsVectors, C6BFloat16) {
  Tensor b = f32({0.0, 0.00048828125, 1.0, -2.0, 3.5, 100.0, 0.0010000000474974513, 7.0});
  Tensor d =
      bf16({0.000244140625, 0.00048828125, 1.0078125, -2.015625, 3.5, 101.0, 0.00099945068359375, 7.0});
  TensorMetrics m = compute_metrics(b, d, bf16_params());
  EXPECT_EQ(m.small_value_err_ratio.value, 0.5);
  EXPECT_EQ(m.rmse.value, 0.4083224883990516);
  EXPECT_EQ(m.error_balance.value, 0.125);
  EXPECT_EQ(m.max_rel_err, MetricValue::f32(0.009999609552323818f));
  EXPECT_EQ(m.mean_rel_err, MetricValue::f32(0.004281825851649046f));
  EXPECT_EQ(m.inf_nan_err_ratio, MetricValue::integer(0));
  EXPECT_EQ(m.rel_err_ratio.value, 0.5);
  EXPECT_EQ(m.abs_err_ratio.value, 0.5);
  EXPECT_EQ(m.ulp_max, MetricValue::f32(2.0f));
  EXPECT_EQ(m.ulp_mean, MetricValue::f32(0.5129070281982422f));
  EXPECT_EQ(m.ulp_ratio.value, 0.125);
}

TEST(MetricsVectors, C4InfNanRatio) {
  Tensor b = f32({1, inf, inf, nan, nan, -inf, 70000, 5});
  Tensor d = f16({1, inf, 5, nan, 1, inf, inf, inf});
  TensorMetrics m = compute_metrics(b, d, fp16_params());
  EXPECT_EQ(m.inf_nan_err_ratio.value, 0.42857142857142855);
}

TEST(MetricsVectors, C5ErrorBalanceWithNan) {
  TensorMetrics m = compute_metrics(f64({1, 2, 3, 4}), f32({1.5, nan, 2.0, 5.0}));
  EXPECT_EQ(m.error_balance.value, 0.25);
}

TEST(MetricsVectors, C1Cosine) {
  TensorMetrics a = compute_metrics(f64({1, 2, 3}), f64({1, 1.9, 3}));
  EXPECT_NEAR(a.cosine.value, 0.9997375534689601, 1e-15);
  EXPECT_TRUE(a.cosine_ok);
  TensorMetrics b = compute_metrics(f64({1, 2, 3}), f64({-1, -2, -3}));
  EXPECT_EQ(b.cosine.value, -1.0);
  EXPECT_FALSE(b.cosine_ok);
  TensorMetrics c = compute_metrics(f64({1, 0}), f64({0, 1}));
  EXPECT_EQ(c.cosine.value, 0.0);
  TensorMetrics d = compute_metrics(f64({1, 2, inf}), f64({1, 2, 3}));
  EXPECT_TRUE(std::isnan(d.cosine.value));
  EXPECT_EQ(d.cosine_message, "Dump data has NaN when comparing with Cosine Similarity.");
  TensorMetrics s = compute_metrics(f64({1}), f64({1}));
  EXPECT_TRUE(s.cosine.is_blank());
  EXPECT_TRUE(s.cosine_ok);
  TensorMetrics z = compute_metrics(f64({0, 0, 0}), f64({0, 0, 0}));
  EXPECT_EQ(z.cosine_message, "All the data in device and bench outputs are zero.");
  EXPECT_TRUE(z.cosine_ok);
  TensorMetrics dz = compute_metrics(f64({0, 1, 0}), f64({0, 0, 0}));
  EXPECT_EQ(dz.cosine_message, "All the data is zero in device dump data.");
  EXPECT_FALSE(dz.cosine_ok);
  TensorMetrics bz = compute_metrics(f64({0, 0, 0}), f64({0, 1, 0}));
  EXPECT_EQ(bz.cosine_message, "All the data is zero in bench dump data.");
}

TEST(MetricsVectors, C3Ulp) {
  {
    Tensor b = f32({0.0, 1.0, 1.5, -3.0, 9.999999974752427e-07, 1000.0, 9.5367431640625e-07});
    Tensor d = f16({0.0, 1.0009765625, 1.501953125, -3.00390625, 1.0132789611816406e-06, 1000.5,
                    1.0132789611816406e-06});
    TensorMetrics m = compute_metrics(b, d, fp16_params());
    // ulp_err = [0, 1, 2, 2, 0.22278404235839844, 1, 1]
    EXPECT_EQ(m.ulp_max, MetricValue::f32(2.0f));
    float s = 0;  // fewer than 8 elements: numpy adds sequentially
    for (float v : {0.0f, 1.0f, 2.0f, 2.0f, 0.22278404235839844f, 1.0f, 1.0f}) s += v;
    EXPECT_EQ(m.ulp_mean, MetricValue::f32(static_cast<float>(static_cast<double>(s) / 7)));
    EXPECT_EQ(m.ulp_ratio.value, 2.0 / 7);
  }
  {
    Tensor b = f64({0.0, 1.0, 1.5, -3.0, 1e-06, 1000.0, 9.5367431640625e-07});
    Tensor d = f32({1.1920928955078125e-07, 1.0000001192092896, 1.500000238418579, -2.999999523162842,
                    9.999999974752427e-07, 1000.0001220703125, 9.5367431640625e-07});
    TensorMetrics m = compute_metrics(b, d, MetricParams{});
    double s = 0;
    for (double v : {1.0, 1.0, 2.0, 2.0, 0.022207999601960182, 2.0, 0.0}) s += v;
    EXPECT_EQ(m.ulp_max, MetricValue::f64(2.0));
    EXPECT_EQ(m.ulp_mean.value, s / 7);
    EXPECT_EQ(m.ulp_ratio.value, 0.0);
  }
}

TEST(MetricsVectors, A1Float16Fixture) {
  // bench fp16 [1,1,9], device fp16 [5,2,1]: abs_err [4,1,8], rel (fp16) [3.996, 0.999, 0.8887]
  TensorMetrics m = compute_metrics(f16({1, 1, 9}), f16({5, 2, 1}), fp16_params());
  EXPECT_EQ(m.compute_dtype, DType::Float16);
  EXPECT_EQ(m.max_abs_err, MetricValue::f16(8.0));
  EXPECT_EQ(m.max_rel_err, MetricValue::f16(3.99609375));
  EXPECT_EQ(m.mean_rel_err.format(), "1.961");
  EXPECT_EQ(m.error_balance.value, 1.0 / 3);
  EXPECT_EQ(m.rmse.value, 5.196325627787292);
  EXPECT_EQ(m.rel_err_ratio.value, 1.0);
  EXPECT_EQ(m.inf_nan_err_ratio, MetricValue::integer(0));
}

TEST(MetricsVectors, A2MatmulFloat16) {
  TensorMetrics m =
      compute_metrics(f16({1, 2, 3}), f16({1.099609375, 2.099609375, 3.099609375}), fp16_params());
  EXPECT_NEAR(m.cosine.value, 0.9998603424452616, 1e-15);
  expect_cell(m.max_abs_err, "0.0996");
  EXPECT_EQ(m.hundredth.value, 0.0);
  expect_cell(m.ulp_max, "102.0");
  expect_cell(m.ulp_mean, "68.0");
  EXPECT_EQ(m.ulp_ratio.value, 1.0);
  TensorMetrics w =
      compute_metrics(f16({1, 2, 3}), f16({1.009765625, 2.009765625, 3.009765625}), fp16_params());
  expect_cell(w.max_abs_err, "0.009766");
  expect_cell(w.ulp_max, "10.0");
  expect_cell(w.ulp_mean, "6.6666665");
  MetricParams p32;
  TensorMetrics e =
      compute_metrics(f32({1, 2, 3}), f32({1.0099999904632568, 2.009999990463257, 3.009999990463257}), p32);
  expect_cell(e.max_abs_err, "0.00999999");
  // float32 device: ULP arithmetic in float64, printed %.14f (the table lists Python values).
  EXPECT_EQ(e.ulp_max, MetricValue::f64(83886.0));
  EXPECT_EQ(e.ulp_mean, MetricValue::f64(55924.0));
}

TEST(MetricsVectors, BMindSpore) {
  TensorMetrics m = compute_metrics(f32({1, 2, 3}), f32({1, 1.9, 3}));
  EXPECT_EQ(m.ms_cosine, 0.9997375533422421);
  EXPECT_EQ(m.ms_max_abs, 0.10000002384185791);
  EXPECT_EQ(m.ms_max_rel, 0.050000011920928955);
  TensorMetrics z = compute_metrics(f64({0, 0, 0}), f64({0, 1, 0}));
  EXPECT_EQ(z.ms_cosine, 1.0);
  EXPECT_EQ(z.ms_max_abs, 1.0);
  EXPECT_EQ(z.ms_max_rel, 1e8);
  TensorMetrics n = compute_metrics(f64({1, 2, 3}), f64({-1, -2, -3}));
  EXPECT_EQ(n.ms_cosine, -0.9999999985714284);
  EXPECT_EQ(n.ms_max_abs, 6.0);
  EXPECT_EQ(n.ms_max_rel, 2.0);
  TensorMetrics q = compute_metrics(f64({0, 2}), f64({1e-9, 2.0005}));
  EXPECT_EQ(q.ms_cosine, 1.0);
  EXPECT_EQ(q.ms_max_abs, 0.000500000000000167);
  EXPECT_EQ(q.ms_max_rel, 0.1);
}

TEST(MetricsVectors, C7OneElementDiffersInHundred) {
  std::vector<float> b(100, 1.0f);
  std::vector<float16_t> d(100, to_float16(1.0f));
  d[7] = to_float16(1.25f);
  TensorMetrics m = compute_metrics(Tensor::from_values<float>(b, Shape{100}),
                                    Tensor::from_values<float16_t>(d, Shape{100}), fp16_params());
  EXPECT_NEAR(m.cosine.value, 0.9996923081631771, 1e-15);
  EXPECT_EQ(m.max_abs_err, MetricValue::f32(0.25f));
  EXPECT_EQ(m.hundredth.value, 0.99);
}

}  // namespace
}  // namespace probe
