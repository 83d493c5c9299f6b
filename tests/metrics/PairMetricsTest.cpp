// compare_pair (one kernel pass for everything `probe metrics` prints) must give exactly what the separate
// functions give: compare_item, compute_metrics with ULP and extra metrics, dump_compare and
// compare_mindspore, each of which is checked against numpy/msprobe elsewhere. The float64-bench /
// bfloat16-device case is also checked by hand: MindSpore's max |d - b| is taken over the float64 bench,
// not over the bench rounded to float32 that run_ut's metrics use.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "probe/error.h"
#include "probe/metric_table.h"
#include "probe/pair_metrics.h"

namespace probe {
namespace {

const Standards& cfg(Profile p) {
  static const Standards probe_cfg = Standards::builtin(Profile::Probe);
  static const Standards msprobe_cfg = Standards::builtin(Profile::MsProbe);
  return p == Profile::Probe ? probe_cfg : msprobe_cfg;
}

// Values spanning signs, tiny and zero benches, with a few non-finite ones when asked; the device is the
// bench with a relative error of about 1e-3 (so the rules do not all agree trivially).
std::vector<double> bench_values(std::size_t n, bool non_finite) {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> normal;
  std::vector<double> v(n);
  for (auto& x : v) x = normal(rng);
  for (std::size_t i = 0; i < n; i += 97) v[i] *= 1e-7;
  v[3] = 0.0;
  if (non_finite) {
    v[10] = std::numeric_limits<double>::quiet_NaN();
    v[20] = std::numeric_limits<double>::infinity();
  }
  return v;
}
std::vector<double> device_values(const std::vector<double>& bench, bool non_finite) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  std::vector<double> v(bench.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = bench[i] * (1 + 1e-3 * normal(rng));
  if (non_finite) {
    v[10] = std::numeric_limits<double>::quiet_NaN();
    v[20] = std::numeric_limits<double>::infinity();
    v[30] = -std::numeric_limits<double>::infinity();  // one mismatched position
  }
  return v;
}

Tensor as(DType t, const std::vector<double>& v) {
  return Tensor::from_values<double>(v, Shape{static_cast<std::int64_t>(v.size())}).to(t);
}

void expect_same(const MetricValue& a, const MetricValue& b, const std::string& what) {
  EXPECT_EQ(a.format(), b.format()) << what;
  EXPECT_EQ(a.kind, b.kind) << what;
}

void expect_same_row(const DetailRow& a, const DetailRow& b) { EXPECT_EQ(a.to_csv(), b.to_csv()); }

void check_pair(const char* api, DType bench_dtype, DType device_dtype, bool non_finite, Profile profile) {
  SCOPED_TRACE(std::string(api) + " " + std::string(name(bench_dtype)) + " vs " +
               std::string(name(device_dtype)) + (non_finite ? " non-finite" : "") + " " +
               std::string(to_string(profile)));
  // 40000 elements: several 8192-element blocks and a partial one, SIMD groups and scalar tails.
  const std::vector<double> b = bench_values(40000, non_finite);
  const Tensor bench = as(bench_dtype, b), device = as(device_dtype, device_values(b, non_finite));
  const Standards& c = cfg(profile);
  const PairMetrics pm = compare_pair(api, bench, device, c);

  expect_same_row(pm.row, compare_item(api, Value(bench), Value(device), c));
  const MindSporeRow ms = compare_mindspore(Value(bench), Value(device), c);
  ASSERT_TRUE(pm.mindspore.has_value());
  expect_same(pm.mindspore->cosine, ms.cosine, "mindspore cosine");
  expect_same(pm.mindspore->max_abs, ms.max_abs, "mindspore max abs");
  expect_same(pm.mindspore->max_rel, ms.max_rel, "mindspore max rel");
  EXPECT_EQ(pm.mindspore->status, ms.status);
  EXPECT_EQ(pm.mindspore->message, ms.message);

  ASSERT_TRUE(pm.metrics.has_value());
  ASSERT_TRUE(pm.dump.has_value());
  const DumpCompareResult dc = dump_compare(device, bench);
  expect_same(pm.dump->cosine, dc.cosine, "dump cosine");
  expect_same(pm.dump->euc_dist, dc.euc_dist, "dump euc");
  expect_same(pm.dump->max_abs, dc.max_abs, "dump max abs");
  expect_same(pm.dump->max_rel, dc.max_rel, "dump max rel");
  expect_same(pm.dump->one_thousandth, dc.one_thousandth, "dump 1/1000");
  expect_same(pm.dump->five_thousandths, dc.five_thousandths, "dump 5/1000");
  EXPECT_EQ(pm.dump->message, dc.message);

  // Every run_ut metric, ULP included, as one compute_metrics call with the device's parameters gives it.
  MetricParams p = c.metric_params(device.dtype());
  p.compute_ulp = true;
  p.compute_extra = false;
  const TensorMetrics m = compute_metrics(bench, device, p);
  const TensorMetrics& f = *pm.metrics;
  const std::pair<const MetricValue*, const MetricValue*> pairs[] = {
      {&f.cosine, &m.cosine},
      {&f.max_abs_err, &m.max_abs_err},
      {&f.hundredth, &m.hundredth},
      {&f.thousandth, &m.thousandth},
      {&f.ten_thousandth, &m.ten_thousandth},
      {&f.error_balance, &m.error_balance},
      {&f.rmse, &m.rmse},
      {&f.small_value_err_ratio, &m.small_value_err_ratio},
      {&f.max_rel_err, &m.max_rel_err},
      {&f.mean_rel_err, &m.mean_rel_err},
      {&f.inf_nan_err_ratio, &m.inf_nan_err_ratio},
      {&f.rel_err_ratio, &m.rel_err_ratio},
      {&f.abs_err_ratio, &m.abs_err_ratio},
      {&f.acc_inf_nan_err_ratio, &m.acc_inf_nan_err_ratio},
      {&f.acc_rel_err_ratio, &m.acc_rel_err_ratio},
      {&f.acc_abs_err_ratio, &m.acc_abs_err_ratio},
      {&f.binary_err_rate, &m.binary_err_rate},
      {&f.ulp_max, &m.ulp_max},
      {&f.ulp_mean, &m.ulp_mean},
      {&f.ulp_ratio, &m.ulp_ratio},
  };
  for (std::size_t i = 0; i < std::size(pairs); ++i)
    expect_same(*pairs[i].first, *pairs[i].second, "metric #" + std::to_string(i));
  EXPECT_EQ(f.cosine_message, m.cosine_message);

  const std::string device_name(torch_name(device.dtype()));
  if (c.new_standard_supported(device_name)) {
    ASSERT_TRUE(pm.standard.has_value());
    EXPECT_EQ(*pm.standard, c.standard_for(api, device_name));
  } else {
    EXPECT_FALSE(pm.standard.has_value());
  }
}

TEST(PairMetrics, EqualsTheSeparateFunctions) {
  const DType floats[] = {DType::Float64, DType::Float32, DType::Float16, DType::BFloat16};
  for (DType b : floats)
    for (DType d : floats)
      for (bool non_finite : {false, true}) check_pair("linear", b, d, non_finite, Profile::Probe);
  for (const char* api : {"mul", "abs", "__matmul__", "conv2d", "test_api"})
    for (Profile profile : {Profile::Probe, Profile::MsProbe}) {
      check_pair(api, DType::Float64, DType::Float32, true, profile);
      check_pair(api, DType::Float64, DType::BFloat16, false, profile);
      check_pair(api, DType::Float64, DType::Float16, false, profile);
    }
}

// Float64 bench, bfloat16 device: run_ut's metrics use the bench rounded to float32 (msprobe casts it),
// MindSpore's and dump compare's use it in float64. Hand-derived: bench 1 + 2^-30 rounds to 1.0f; the
// device holds bfloat16 1.0; so MindSpore's max |d - b| is 2^-30, run_ut's max abs error is 0.
TEST(PairMetrics, Float64BenchWithBfloat16DeviceKeepsFloat64ForMindSporeAndDumpCompare) {
  const std::vector<double> b = {1 + 0x1p-30, 2.0, 3.0};
  const Tensor bench = as(DType::Float64, b), device = as(DType::BFloat16, {1.0, 2.0, 3.0});
  const PairMetrics pm = compare_pair("linear", bench, device, cfg(Profile::MsProbe));
  ASSERT_TRUE(pm.metrics.has_value());
  EXPECT_EQ(pm.metrics->max_abs_err.value, 0.0);
  EXPECT_EQ(pm.metrics->ms_max_abs, 0x1p-30);
  EXPECT_EQ(pm.metrics->dump_max_abs, 0x1p-30);
  ASSERT_TRUE(pm.mindspore.has_value());
  EXPECT_EQ(pm.mindspore->max_abs.text, "9.313225746154785e-10");  // repr(2**-30)
}

// Pairs the kernel cannot read (integers, other shapes, empty) still get the row and the MindSpore row.
TEST(PairMetrics, PairsWithoutMetricsStillGetTheRowAndMindSpore) {
  const Tensor ints = Tensor::from_values<std::int64_t>({1, 2, 3}, Shape{3});
  const Tensor other = Tensor::from_values<std::int64_t>({1, 2, 4}, Shape{3});
  const PairMetrics pm = compare_pair("linear", ints, other, cfg(Profile::Probe));
  EXPECT_FALSE(pm.metrics.has_value());
  EXPECT_FALSE(pm.dump.has_value());
  EXPECT_EQ(pm.row.status, Status::Error);  // binary error rate 1/3
  EXPECT_EQ(pm.row.binary_err_rate.format(), "0.33333333333333");
  ASSERT_TRUE(pm.mindspore.has_value());
  EXPECT_EQ(pm.mindspore->max_abs.text, "1.0");  // |4 - 3|

  const Tensor a = as(DType::Float64, {1, 2}), c = as(DType::Float32, {1, 2, 3});
  const PairMetrics shape = compare_pair("linear", a, c, cfg(Profile::Probe));
  EXPECT_FALSE(shape.metrics.has_value());
  EXPECT_EQ(shape.row.status, Status::Error);
  ASSERT_TRUE(shape.mindspore.has_value());
  EXPECT_EQ(shape.mindspore->status, Status::Error);
  EXPECT_EQ(shape.mindspore->cosine.format(), " ");  // blank: the pair is not valid
}

// Parts left out are not computed (nullopt, blank or 0) and leave every other value as computing
// everything gives it; an API judged by the ULP standard still gets its ULP metrics (its row needs them).
TEST(PairMetrics, PartsLeftOutAreNotComputedAndTheRestIsUnchanged) {
  const std::vector<double> b = bench_values(40000, true);
  for (const char* api : {"mul", "linear"})
    for (DType device_dtype : {DType::Float32, DType::BFloat16, DType::Float16}) {
      SCOPED_TRACE(std::string(api) + " float64 vs " + std::string(name(device_dtype)));
      const Tensor bench = as(DType::Float64, b), device = as(device_dtype, device_values(b, true));
      const Standards& c = cfg(Profile::Probe);
      const PairMetrics all = compare_pair(api, bench, device, c);
      ASSERT_TRUE(all.metrics && all.dump && all.mindspore);
      const bool ulp_standard = all.standard == Standard::Ulp;
      for (const PairParts parts : {PairParts::run_ut_only(), PairParts{true, false, false},
                                    PairParts{false, true, false}, PairParts{false, false, true}}) {
        SCOPED_TRACE(::testing::Message() << "ulp " << parts.ulp << " dump " << parts.dump_compare
                                          << " mindspore " << parts.mindspore);
        const PairMetrics some = compare_pair(api, bench, device, c, parts);
        expect_same_row(some.row, all.row);
        EXPECT_EQ(some.standard, all.standard);
        ASSERT_TRUE(some.metrics.has_value());
        for (const MetricColumn& col : metric_table()) {
          const bool ulp = col.reported_by(Standard::Ulp);
          if (!ulp || parts.ulp || ulp_standard) {
            expect_same((*some.metrics).*col.value, (*all.metrics).*col.value, std::string(col.id));
          } else {
            EXPECT_TRUE(((*some.metrics).*col.value).is_blank()) << col.id;
          }
        }
        EXPECT_EQ(some.dump.has_value(), parts.dump_compare);
        if (some.dump) {
          expect_same(some.dump->cosine, all.dump->cosine, "dump cosine");
          expect_same(some.dump->max_rel, all.dump->max_rel, "dump max rel");
          EXPECT_EQ(some.dump->message, all.dump->message);
        }
        EXPECT_EQ(some.mindspore.has_value(), parts.mindspore);
        if (some.mindspore) {
          expect_same(some.mindspore->cosine, all.mindspore->cosine, "mindspore cosine");
          expect_same(some.mindspore->max_rel, all.mindspore->max_rel, "mindspore max rel");
          EXPECT_EQ(some.mindspore->status, all.mindspore->status);
        }
        if (!parts.dump_compare && !parts.mindspore) {
          EXPECT_EQ(some.metrics->dump_cosine, 0.0);
        }
      }
    }
  // Pairs without metrics: the MindSpore row only when asked for.
  const Tensor ints = Tensor::from_values<std::int64_t>({1, 2, 3}, Shape{3});
  EXPECT_FALSE(compare_pair("linear", ints, ints, cfg(Profile::Probe), PairParts::run_ut_only())
                   .mindspore.has_value());
  EXPECT_TRUE(compare_pair("linear", ints, ints, cfg(Profile::Probe), PairParts{false, false, true})
                  .mindspore.has_value());
}

TEST(PairMetrics, PartsParseFromTheCommandLineList) {
  auto same = [](const PairParts& a, const PairParts& b) {
    return a.ulp == b.ulp && a.dump_compare == b.dump_compare && a.mindspore == b.mindspore;
  };
  EXPECT_TRUE(same(parse_pair_parts("run_ut"), PairParts::run_ut_only()));
  EXPECT_TRUE(same(parse_pair_parts("all"), PairParts::all()));
  EXPECT_TRUE(same(parse_pair_parts("ulp,dump"), PairParts{true, true, false}));
  EXPECT_TRUE(same(parse_pair_parts("run_ut,mindspore"), PairParts{false, false, true}));
  for (const char* bad : {"", "ulp,", ",ulp", "ulp,,dump", "cosine", "ULP"}) {
    SCOPED_TRACE(bad);
    try {
      parse_pair_parts(bad);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find(std::string(bad)), std::string::npos) << e.what();
    }
  }
}

// When the probe profile's error bound (D14) judges a pair, and why not: mm is in the gemm family, which
// accumulates and so needs both the magnitude bench and the accumulation length; einsum has no bound; an
// empty API is an element-wise function, which needs neither; the msprobe profile never uses D14.
TEST(PairMetrics, ErrorBoundChoiceSaysWhyNot) {
  const Tensor m32 = Tensor::from_values<float>({2.0f, 0.5f}, Shape{2});
  const std::string tail = " (D14): run_ut's rule judged";
  {
    const PairErrorBoundChoice c = choose_pair_error_bound("Torch.mm.0.forward", Profile::MsProbe, &m32, 2);
    EXPECT_FALSE(c.bound.has_value());
    EXPECT_EQ(c.why_not, "");
  }
  EXPECT_EQ(choose_pair_error_bound("Torch.einsum", Profile::Probe, &m32, 2).why_not,
            "no error bound for Torch.einsum" + tail);
  EXPECT_EQ(choose_pair_error_bound("Torch.mm", Profile::Probe, nullptr, 0).why_not,
            "the error bound of Torch.mm (gemm family) needs magnitude and accumulation" + tail);
  EXPECT_EQ(choose_pair_error_bound("Torch.mm", Profile::Probe, &m32, 0).why_not,
            "the error bound of Torch.mm (gemm family) needs accumulation" + tail);
  EXPECT_EQ(choose_pair_error_bound("Torch.mm", Profile::Probe, nullptr, 3).why_not,
            "the error bound of Torch.mm (gemm family) needs magnitude" + tail);
  {
    const PairErrorBoundChoice c = choose_pair_error_bound("Torch.mm", Profile::Probe, &m32, 3, 7);
    ASSERT_TRUE(c.bound.has_value());
    EXPECT_EQ(c.why_not, "");
    EXPECT_EQ(c.bound->api, "Torch.mm");
    EXPECT_EQ(c.bound->options.rule, JudgeRule::ErrorBound);
    EXPECT_EQ(c.bound->options.accumulation, 3);
    EXPECT_EQ(c.bound->options.worst_count, 7u);
    ASSERT_TRUE(c.bound->options.magnitude.has_value());
    EXPECT_EQ(c.bound->options.magnitude->dtype(), DType::Float64);
    EXPECT_EQ(c.bound->options.magnitude->to_doubles(), (std::vector<double>{2.0, 0.5}));
  }
  {
    const PairErrorBoundChoice c = choose_pair_error_bound("", Profile::Probe, nullptr, 0);
    ASSERT_TRUE(c.bound.has_value());
    EXPECT_EQ(c.bound->api, "elementwise");
    EXPECT_FALSE(c.bound->options.magnitude.has_value());
  }
}

}  // namespace
}  // namespace probe
