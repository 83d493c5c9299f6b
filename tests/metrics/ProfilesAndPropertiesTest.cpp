// What the `probe` profile changes (DECISIONS D1-D3), and property tests of the fused kernel against a plain
// two-pass reference written from precheck.md §2 on random and adversarial data.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "probe/output_compare.h"
#include "probe/parallel.h"

namespace probe {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

Tensor make(const std::vector<double>& v, DType t) {
  return Tensor::from_values<double>(v, Shape{static_cast<std::int64_t>(v.size())}).to(t);
}

TEST(Profiles, D1AnyErrorWinsInProbeProfile) {
  EXPECT_EQ(aggregate_statuses({Status::Error, Status::Warning}, Aggregation::LastNonPass), Status::Warning);
  EXPECT_EQ(aggregate_statuses({Status::Warning, Status::Error}, Aggregation::LastNonPass), Status::Error);
  EXPECT_EQ(aggregate_statuses({Status::Error, Status::Warning}, Aggregation::Worst), Status::Error);
  EXPECT_EQ(aggregate_statuses({Status::Skip}, Aggregation::Worst), Status::Pass);
  // Two outputs: the first fails the cosine check (error), the second is a Warning (fp32: 双千 passes,
  // 双万 = 1999/2000 fails, max abs 0.005).
  std::vector<double> ones(2000, 10.0), neg(2000, -10.0), warn(2000, 10.0);
  warn[0] = 10.005;
  OutputCompareInput in;
  in.full_api_name = "Torch.foo.0";
  in.bench_output = Value({Value(make(ones, DType::Float64)), Value(make(ones, DType::Float64))}, true);
  in.device_output = Value({Value(make(neg, DType::Float32)), Value(make(warn, DType::Float32))}, true);
  auto ms = compare_output(in, Standards::builtin(Profile::MsProbe));
  ASSERT_EQ(ms.rows.size(), 2u);
  EXPECT_EQ(ms.rows[0].status, Status::Error);
  EXPECT_EQ(ms.rows[1].status, Status::Warning);
  EXPECT_EQ(ms.forward_status, Status::Warning);
  EXPECT_EQ(compare_output(in, Standards::builtin(Profile::Probe)).forward_status, Status::Error);
}

TEST(Profiles, D2SmallValueAtolForBf16) {
  // bf16 API, absolute-threshold standard: bench values below 2^-10 with an error of 2^-20.
  std::vector<double> b = {0x1p-12, 0x1p-13, 1.0, 2.0}, d = {0x1p-12 + 0x1p-19, 0x1p-13, 1.0, 2.0};
  Tensor bench = make(b, DType::Float32), device = make(d, DType::BFloat16);
  auto msprobe = Standards::builtin(Profile::MsProbe), probe = Standards::builtin(Profile::Probe);
  EXPECT_EQ(device.at(0), 0x1p-12 + 0x1p-19);  // representable in bf16
  DetailRow ms = compare_item("mul", Value(bench), Value(device), msprobe);
  DetailRow pr = compare_item("mul", Value(bench), Value(device), probe);
  EXPECT_EQ(ms.abs_err_ratio.format(), "0.50000000000000");  // 1e-16: a 2^-19 error fails
  EXPECT_EQ(pr.abs_err_ratio.format(), "0.00000000000000");  // DECISIONS D2: 2^-16
  // Benchmark standard (fp16 here): the small-value error ratio changes the same way.
  Tensor d16 = make(d, DType::Float16);
  EXPECT_EQ(compare_item("relu_like", Value(bench), Value(d16), msprobe).small_value_err_ratio.format(),
            "0.50000000000000");
  EXPECT_EQ(compare_item("relu_like", Value(bench), Value(d16), probe).small_value_err_ratio.format(),
            "0.00000000000000");
}

TEST(Profiles, D3MindSporeMaxAbsThreshold) {
  Tensor b = make({1, 2, 3}, DType::Float32), t = make({1, 2, 3.0005}, DType::Float32);
  auto ms = compare_mindspore(Value(b), Value(t), Standards::builtin(Profile::MsProbe));
  auto pr = compare_mindspore(Value(b), Value(t), Standards::builtin(Profile::Probe));
  EXPECT_EQ(ms.status, Status::Pass);
  EXPECT_EQ(pr.status, Status::Error);
  EXPECT_EQ(pr.message, "max absolute difference is greater than threshold: 0.0001 ");
  auto invalid = compare_mindspore(Value(b), Value(NoneValue{}), Standards::builtin(Profile::MsProbe));
  EXPECT_EQ(invalid.status, Status::Error);
  EXPECT_TRUE(invalid.cosine.is_blank());
}

// ---- property tests --------------------------------------------------------------------------------

struct Ref {
  std::int64_t lt[3] = {}, fin = 0, gt = 0, ls = 0, bsmall = 0, bsmall_err = 0, sel = 0, ane = 0, asm_ = 0,
               ase = 0, ne = 0;
  double max_abs = -1, max_rel = -1, mse = 0, relsum = 0;
  bool nan_abs = false;
};

// Obviously-correct reference for a float32 device and float64 bench (all arithmetic float64, §2.2-§2.8).
Ref reference_f32_f64(const std::vector<double>& b, const std::vector<float>& d, const MetricParams& p) {
  Ref r;
  const double eps = 0x1p-52;
  for (std::size_t i = 0; i < b.size(); ++i) {
    double dv = d[i], bv = b[i];
    double ae = std::fabs(dv - bv);
    double rel = ae / (std::fabs(bv) + eps);
    bool fin = std::isfinite(dv) && std::isfinite(static_cast<float>(bv));
    const double t[3] = {0.01, 0.001, 0.0001};
    for (int k = 0; k < 3; ++k) r.lt[k] += rel < t[k];
    r.fin += fin;
    float g = static_cast<float>(bv);
    r.gt += d[i] > g;
    r.ls += d[i] < g;
    if (std::isnan(ae))
      r.nan_abs = true;
    else
      r.max_abs = std::max(r.max_abs, ae);
    bool small = fin && std::fabs(bv) <= p.small_value;
    r.bsmall += small;
    r.bsmall_err += small && ae > p.small_value_atol_benchmark;
    bool sel = fin && !small;
    r.sel += sel;
    if (sel) {
      r.max_rel = std::max(r.max_rel, rel);
      r.relsum += rel;
      r.mse += ae * ae;
    }
    r.asm_ += small;
    r.ase += small && ae > p.small_value_atol_absolute;
    r.ane += sel && rel > p.rtol;
    r.ne += !(dv == bv);
  }
  return r;
}

std::vector<double> adversarial_bench(std::mt19937_64& rng, std::size_t n) {
  std::vector<double> v(n);
  std::normal_distribution<double> nd;
  std::uniform_int_distribution<int> pick(0, 19);
  const double specials[] = {0.0,   -0.0,  kInf,   -kInf, kNan, 1e-300,
                             4e-45, 1e-39, 3.4e38, 1e300, 1e-7, 0x1p-20};
  for (auto& x : v) {
    int k = pick(rng);
    x = k < 12 ? specials[k] : nd(rng) * std::pow(10.0, static_cast<int>(pick(rng)) - 10);
  }
  return v;
}

TEST(MetricsProperties, Float32DeviceMatchesTwoPassReference) {
  std::mt19937_64 rng(7);
  for (std::size_t n : {1u, 5u, 8u, 100u, 129u, 8193u, 20000u}) {
    for (int adversarial = 0; adversarial < 2; ++adversarial) {
      std::vector<double> b(n);
      std::normal_distribution<double> nd;
      if (adversarial)
        b = adversarial_bench(rng, n);
      else
        for (auto& x : b) x = nd(rng);
      std::vector<float> d(n);
      for (std::size_t i = 0; i < n; ++i) d[i] = static_cast<float>(b[i] * (1 + 1e-4 * nd(rng)));
      if (adversarial && n > 3) d[1] = std::numeric_limits<float>::quiet_NaN(), d[2] = 1e-44f;
      MetricParams p;
      TensorMetrics m =
          compute_metrics(Tensor::from_values<double>(b, Shape{static_cast<std::int64_t>(n)}),
                          Tensor::from_values<float>(d, Shape{static_cast<std::int64_t>(n)}), p);
      Ref r = reference_f32_f64(b, d, p);
      const double N = static_cast<double>(n);
      SCOPED_TRACE(::testing::Message() << "n=" << n << " adversarial=" << adversarial);
      EXPECT_EQ(m.hundredth.value, r.lt[0] / N);
      EXPECT_EQ(m.thousandth.value, r.lt[1] / N);
      EXPECT_EQ(m.ten_thousandth.value, r.lt[2] / N);
      EXPECT_EQ(m.error_balance.value, std::fabs(static_cast<double>(r.gt - r.ls)) / N);
      EXPECT_EQ(m.binary_err_rate.value, r.ne / N);
      if (r.nan_abs) {
        EXPECT_TRUE(std::isnan(m.max_abs_err.value));
      } else {
        EXPECT_EQ(m.max_abs_err.value, r.max_abs);
      }
      EXPECT_EQ(m.max_rel_err.value, r.max_rel < 0 ? 0 : r.max_rel);
      if (r.sel) {
        EXPECT_NEAR(m.mean_rel_err.value, r.relsum / r.sel, 1e-12 * (1 + r.relsum / r.sel));
      }
      double factor = N / (static_cast<double>(r.sel) + 0.0001) + 0.0001;
      double rmse = std::sqrt(r.mse / N * factor);
      if (std::isfinite(rmse)) {
        EXPECT_NEAR(m.rmse.value, rmse, 1e-12 * (1 + rmse));
      }
      EXPECT_EQ(m.small_value_err_ratio.value, r.bsmall ? static_cast<double>(r.bsmall_err) / r.bsmall : 0.0);
      EXPECT_EQ(m.abs_err_ratio.value, r.asm_ ? static_cast<double>(r.ase) / r.asm_ : 0.0);
      EXPECT_EQ(m.rel_err_ratio.value,
                (r.fin - r.asm_) ? static_cast<double>(r.ane) / (r.fin - r.asm_) : 0.0);
    }
  }
}

// Every dtype pair the kernel accepts gives the same cells whatever the thread count.
TEST(MetricsProperties, ThreadCountIndependence) {
  std::mt19937_64 rng(11);
  const std::size_t n = 300000;
  std::vector<double> b = adversarial_bench(rng, n), d(n);
  std::normal_distribution<double> nd;
  for (std::size_t i = 0; i < n; ++i) d[i] = b[i] + 1e-3 * nd(rng);
  for (DType bt : {DType::Float64, DType::Float32, DType::Float16}) {
    for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64}) {
      Tensor bench = make(b, bt), device = make(d, dt);
      auto cells = [&] {
        TensorMetrics m = compute_metrics(bench, device, MetricParams{});
        std::string s;
        for (const MetricValue* v :
             {&m.cosine, &m.max_abs_err, &m.hundredth, &m.thousandth, &m.error_balance, &m.rmse,
              &m.small_value_err_ratio, &m.max_rel_err, &m.mean_rel_err, &m.inf_nan_err_ratio,
              &m.rel_err_ratio, &m.abs_err_ratio, &m.ulp_max, &m.ulp_mean, &m.ulp_ratio, &m.binary_err_rate})
          s += v->format(17) + ",";
        return s + std::to_string(m.ms_cosine) + std::to_string(m.dump_euc);
      };
      set_num_threads(1);
      std::string one = cells();
      set_num_threads(2);
      std::string two = cells();
      set_num_threads(3);
      EXPECT_EQ(one, two) << name(bt) << " vs " << name(dt);
      EXPECT_EQ(two, cells());
    }
  }
}

TEST(MetricsProperties, IntegersBoolsAndEdgeStructures) {
  auto cfg = Standards::builtin(Profile::MsProbe);
  Tensor i8 = make({1, 2}, DType::Int8);
  EXPECT_EQ(compare_item("x", Value(i8), Value(i8), cfg).message,
            "Bench out dtype is int8 but npu output dtype is int8, cannot compare.");
  EXPECT_EQ(
      compare_item("x", Value(make({1, 2}, DType::Int32)), Value(make({1, 2}, DType::Int64)), cfg).status,
      Status::Pass);
  EXPECT_EQ(
      compare_item("x", Value(make({1, 0}, DType::UInt8)), Value(make({1, 0}, DType::UInt8)), cfg).status,
      Status::Pass);
  EXPECT_EQ(
      compare_item("x", Value(make({1, 2}, DType::Float32)), Value(make({1, 2}, DType::Int64)), cfg).status,
      Status::Error);
  EXPECT_EQ(compare_item("x", Value(true), Value(std::int64_t{1}), cfg).status, Status::Pass);
  EXPECT_EQ(compare_item("x", Value(std::int64_t{1}), Value(true), cfg).message,
            "bench and npu output type is different.");
  EXPECT_EQ(compare_item("x", Value(1.5), Value(1.5), cfg).binary_err_rate, MetricValue::integer(0));
  EXPECT_EQ(compare_item("x", Value(kNan), Value(kNan), cfg).status, Status::Error);
  DetailRow shape = compare_item("x", Value(make({1, 2, 3}, DType::Float32)),
                                 Value(Tensor::zeros(DType::Float32, Shape{3, 1})), cfg);
  EXPECT_EQ(shape.message, "The shape of benchtorch.Size([3]) and nputorch.Size([3, 1]) not equal.");
  OutputCompareInput in;
  in.full_api_name = "Torch.foo.0";
  in.bench_output = Value({Value(1.0), Value(2.0)});
  in.device_output = Value({Value(1.0)});
  EXPECT_THROW(compare_output(in, cfg), Error);
  in.full_api_name = "Functional.conv2d";
  EXPECT_THROW(compare_output(in, cfg), Error);
  // Dropout (precheck §3.2): 120 elements, 60 vs 0 zeros -> error; no detail rows.
  std::vector<double> b(120), d(120, 1.0);
  for (std::size_t i = 0; i < 120; ++i) b[i] = (i % 2) ? 1 : 0;
  OutputCompareInput dr;
  dr.full_api_name = "Functional.dropout.0";
  dr.bench_output = Value(make(b, DType::Float32));
  dr.device_output = Value(make(d, DType::Float32));
  auto r = compare_output(dr, cfg);
  EXPECT_EQ(r.forward_status, Status::Error);
  EXPECT_TRUE(r.rows.empty());
}

}  // namespace
}  // namespace probe
