// The fused kernel's SIMD path (full 8-lane groups of finite values) against its scalar per-element path
// (tails, groups with non-finite lanes, float16 pairs): every metric must have identical bits, for lengths
// around the vector width, the 128-element pairwise leaves and the 8192-element numpy buffers, with
// NaN/Inf/zero/subnormal/threshold values placed in every lane, for every dtype pair and metric set.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include "metrics/KernelControl.h"
#include "probe/error.h"
#include "probe/metrics.h"
#include "probe/parallel.h"

namespace probe {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

// Exact bits, except that every NaN is one value: its sign and payload depend on which operand the
// compiler put first in a commutative operation, and msprobe prints every NaN as "nan".
std::string bits(double v) {
  if (std::isnan(v)) return "nan,";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx,",
                static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(v)));
  return buf;
}
std::string cell(const MetricValue& v) {
  return std::to_string(static_cast<int>(v.kind)) + ":" + bits(v.value) + v.text + ";";
}
// Every field of TensorMetrics, exactly.
std::string fingerprint(const TensorMetrics& m) {
  std::string s = std::to_string(m.count) + std::string(name(m.compute_dtype)) + m.cosine_message +
                  (m.cosine_ok ? "ok;" : "no;") + (m.dump_inf_nan_mismatch ? "mm;" : "-;");
  for (const MetricValue* v : {&m.cosine,
                               &m.max_abs_err,
                               &m.hundredth,
                               &m.thousandth,
                               &m.ten_thousandth,
                               &m.error_balance,
                               &m.rmse,
                               &m.small_value_err_ratio,
                               &m.max_rel_err,
                               &m.mean_rel_err,
                               &m.inf_nan_err_ratio,
                               &m.rel_err_ratio,
                               &m.abs_err_ratio,
                               &m.acc_inf_nan_err_ratio,
                               &m.acc_rel_err_ratio,
                               &m.acc_abs_err_ratio,
                               &m.binary_err_rate,
                               &m.ulp_max,
                               &m.ulp_mean,
                               &m.ulp_ratio})
    s += cell(*v);
  for (double v :
       {m.ms_cosine, m.ms_max_abs, m.ms_max_rel, m.dump_cosine, m.dump_euc, m.dump_max_abs, m.dump_max_rel,
        m.dump_one_thousandth, m.dump_five_thousandths, m.dump_norm_device, m.dump_norm_bench})
    s += bits(v);
  return s;
}

struct ScalarOnly {
  ScalarOnly() { detail::set_metrics_scalar_only(true); }
  ~ScalarOnly() { detail::set_metrics_scalar_only(false); }
};

// Every instruction set up to the CPU's best gives the scalar path's metrics bit for bit; `context` names
// the case in a failure.
void expect_every_isa_matches_scalar(const Tensor& bench, const Tensor& device, const MetricParams& p,
                                     const std::string& context) {
  const int best_isa = detail::metrics_isa();
  std::string scalar;
  {
    ScalarOnly guard;
    scalar = fingerprint(compute_metrics(bench, device, p));
  }
  for (int isa = 0; isa <= best_isa; ++isa) {
    detail::set_metrics_max_isa(isa);
    std::string simd = fingerprint(compute_metrics(bench, device, p));
    detail::set_metrics_max_isa(best_isa);
    ASSERT_EQ(simd, scalar) << context << " isa=" << isa;
  }
}

// Pattern 0: smooth data; 1: one special value per lane (each lane of some group gets each special, in
// bench or device); 2: dense specials; 3: values at the small-value/rtol thresholds, equal values, zeros;
// 4: values just below powers of two (ULP exponent boundaries) and just above float16 rounding ties.
void make_data(int pattern, std::size_t n, std::mt19937_64& rng, std::vector<double>& b,
               std::vector<double>& d) {
  std::normal_distribution<double> nd;
  std::uniform_int_distribution<int> pick(0, 1 << 20);
  b.resize(n);
  d.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    b[i] = nd(rng);
    d[i] = b[i] * (1 + 1e-3 * nd(rng));
  }
  const double specials[] = {kNan,  kInf, -kInf,   0.0,     -0.0, 1e-310, 3e-45,
                             1e-40, 5e-8, 0x1p-20, 0x1p-10, 1e39, 70000.0};
  const std::size_t ns = std::size(specials);
  if (pattern == 1) {
    for (std::size_t s = 0; s < 2 * ns; ++s) {
      for (std::size_t lane = 0; lane < 8; ++lane) {
        std::size_t i = ((s * 8 + lane) * 8 + lane + 8 * (s % 3)) % std::max<std::size_t>(n, 1);
        if (i >= n) continue;
        if (s < ns)
          b[i] = specials[s];
        else
          d[i] = specials[s - ns];
      }
    }
  } else if (pattern == 2) {
    for (std::size_t i = 0; i < n; ++i) {
      int k = pick(rng) % 40;
      if (k < static_cast<int>(ns)) b[i] = specials[k];
      k = pick(rng) % 40;
      if (k < static_cast<int>(ns)) d[i] = specials[k];
    }
  } else if (pattern == 3) {
    const double levels[] = {0x1p-20, 0x1p-10, 1.0, 0x1p-21, 0x1p-11, 0.999, 0.0, 1e-6, 1e-3};
    for (std::size_t i = 0; i < n; ++i) {
      int k = pick(rng);
      double lv = levels[k % std::size(levels)] * ((k >> 8) % 2 ? -1 : 1);
      b[i] = lv * (1 + 1e-4 * nd(rng) * ((k >> 9) % 2));
      switch ((k >> 10) % 4) {
        case 0:
          d[i] = b[i];
          break;
        case 1:
          d[i] = b[i] * (1 + 0x1p-11);
          break;
        case 2:
          d[i] = b[i] + 0x1p-31;
          break;
        default:
          d[i] = b[i] * (1 + 1e-2 * nd(rng));
          break;
      }
    }
  } else if (pattern == 4) {
    // Just below powers of two, where numpy's rounded log2 (the ULP exponent) already reaches the next
    // integer, across normal and subnormal binades of every dtype.
    for (std::size_t i = 0; i < n; ++i) {
      int k = pick(rng);
      const int e = (k % 300) - 160 + ((k >> 9) % 5 == 0 ? -900 : 0);
      const double below = std::ldexp(1.0, e) * (1 - std::ldexp(1.0, -(k >> 12) % 60));
      b[i] = (k >> 11) % 2 ? -below : below;
      d[i] = b[i] * (1 + 1e-3 * nd(rng));
      if (k % 3 == 0) {
        // Just above a float16 rounding tie: float64 -> float16 in one rounding goes up, through float32
        // (double rounding) it would tie to even and go down.
        b[i] = std::ldexp(1 + 0x1p-11 + std::ldexp(1.0, -30 - (k >> 4) % 20), (k >> 6) % 16 - 8);
        d[i] = b[i];
      }
    }
  }
}

Tensor make(const std::vector<double>& v, DType t) {
  return Tensor::from_values<double>(v, Shape{static_cast<std::int64_t>(v.size())}).to(t);
}

TEST(MetricsSimd, VectorAndScalarPathsAgreeBitForBit) {
  set_num_threads(2);
  // Every instruction set this CPU runs (SSE2, AVX2, AVX-512 copies of the same vector code).
  std::mt19937_64 rng(2024);
  const std::size_t lengths[] = {1,   7,   8,    9,    15,   16,   17,   127,          128,
                                 129, 135, 1000, 8191, 8192, 8193, 8200, 3 * 8192 + 77};
  std::vector<double> b, d;
  for (std::size_t n : lengths) {
    for (int pattern = 0; pattern < 5; ++pattern) {
      make_data(pattern, n, rng, b, d);
      for (DType bt : {DType::Float64, DType::Float32, DType::BFloat16, DType::Float16}) {
        for (DType dt : {DType::Float32, DType::BFloat16, DType::Float64, DType::Float16}) {
          Tensor bench = make(b, bt), device = make(d, dt);
          for (int flags = 0; flags < 4; ++flags) {
            // The full metric set everywhere; the reduced sets on the largest length only (fast suite).
            if (flags != 3 && n < 8192) continue;
            MetricParams p;
            p.compute_ulp = flags & 1;
            p.compute_extra = flags & 2;
            if (pattern == 3) p.small_value = 0x1p-10;  // bf16/fp16 profile threshold
            ASSERT_NO_FATAL_FAILURE(expect_every_isa_matches_scalar(
                bench, device, p,
                "n=" + std::to_string(n) + " pattern=" + std::to_string(pattern) +
                    " bench=" + std::string(name(bt)) + " device=" + std::string(name(dt)) +
                    " flags=" + std::to_string(flags)));
          }
        }
      }
    }
  }
}

// Thresholds away from the defaults, where the AVX2 kernel takes shortcuts: ULP exponents of a float64
// bench read from the exponent field (clamped to ulp_min_eb, zero benches at max(0, ulp_min_eb): pattern 2
// pairs zero benches with nonzero devices), and the
// dump-compare pass skipping its zero-bench check when no bench value of the leaf was small (only valid for
// small_value >= 0: zeros are not small below that).
TEST(MetricsSimd, ThresholdVariantsAgreeBitForBit) {
  set_num_threads(2);
  std::mt19937_64 rng(77);
  std::vector<double> b, d;
  for (int pattern : {0, 1, 2, 4}) {
    make_data(pattern, 2 * 8192 + 131, rng, b, d);
    for (DType dt : {DType::Float32, DType::Float64, DType::Float16}) {
      Tensor bench = make(b, DType::Float64), device = make(d, dt);
      for (int min_eb : {-1022, -126, -14, 0, 7}) {
        for (int mant : {10, 23, 52}) {
          for (double small : {0x1p-20, -1.0}) {
            if (small < 0 && (mant != 23 || min_eb != -126)) continue;
            MetricParams p;
            p.ulp_min_eb = min_eb;
            p.ulp_mantissa_bits = mant;
            p.small_value = small;
            ASSERT_NO_FATAL_FAILURE(expect_every_isa_matches_scalar(
                bench, device, p,
                "pattern=" + std::to_string(pattern) + " device=" + std::string(name(dt)) +
                    " min_eb=" + std::to_string(min_eb) + " mant=" + std::to_string(mant) +
                    " small=" + std::to_string(small)));
          }
        }
      }
    }
  }
}

// Relative errors far below every r threshold (a float32 device's rounding), where the AVX2 run_ut-set
// pass takes its quiet-leaf shortcut (r-threshold counts known, no r comparisons), next to leaves that
// are not quiet (one lane above rtol), leaves with non-finite groups, small and accumulative-small lanes
// (with |error| above the bound at large scale), and thresholds that rule the shortcut out (NaN).
TEST(MetricsSimd, QuietLeavesAgreeBitForBit) {
  set_num_threads(2);
  std::mt19937_64 rng(13);
  std::normal_distribution<double> nd;
  const std::size_t n = 3 * 8192 + 77;
  std::vector<double> b(n), d(n);
  for (double scale : {1.0, 1e5}) {
    for (std::size_t i = 0; i < n; ++i) {
      b[i] = scale * nd(rng);
      d[i] = b[i] * (1 + 1e-8 * nd(rng));
    }
    for (std::size_t leaf = 0; leaf < n / 128; leaf += 3) {
      const std::size_t i = leaf * 128 + (leaf * 37) % 128;
      switch (leaf % 4) {
        case 0:
          d[i] = b[i] * (1 + 0x1p-19);  // just above rtol: the leaf is not quiet
          break;
        case 1:
          b[i] = leaf % 8 == 1 ? kNan : kInf;  // a non-finite group in the middle of a leaf
          break;
        case 2:
          b[i] = 0x1p-21;  // a small bench value (r above the thresholds unless d is the same)
          d[i] = leaf % 8 == 2 ? b[i] : 0.0;
          break;
        default:
          b[i] = d[i] = 0.0;
          break;
      }
    }
    for (DType bt : {DType::Float64, DType::Float32}) {
      for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
        Tensor bench = make(b, bt), device = make(d, dt);
        for (int v = 0; v < 6; ++v) {
          MetricParams p;
          p.compute_ulp = v == 4 || v == 5;  // the ULP and every-metric kernels share the run_ut-set pass
          p.compute_extra = v == 5;
          if (v == 1) p.small_value = 0.5 * scale;
          if (v == 2) p.accumulative_small_value = 1e6;  // |error| above the bound at scale 1e5
          if (v == 3) p.rtol = kNan;
          ASSERT_NO_FATAL_FAILURE(expect_every_isa_matches_scalar(
              bench, device, p,
              "scale=" + std::to_string(scale) + " bench=" + std::string(name(bt)) +
                  " device=" + std::string(name(dt)) + " v=" + std::to_string(v)));
        }
      }
    }
  }
}

// A float32 mean over a partially selected array is summed by numpy over the compacted selection: the
// main pass compacts it (16-lane, 8-lane or scalar code), across several compacted 8192-element buffers.
TEST(MetricsSimd, CompactedMeanAgreesAcrossBlocks) {
  std::mt19937_64 rng(5);
  std::vector<double> b, d;
  make_data(3, 5 * 8192 + 3, rng, b, d);
  Tensor bench = make(b, DType::Float32), device = make(d, DType::BFloat16);
  MetricParams p;
  p.small_value = 0x1p-10;
  TensorMetrics simd = compute_metrics(bench, device, p);
  ScalarOnly guard;
  TensorMetrics scalar = compute_metrics(bench, device, p);
  EXPECT_EQ(simd.mean_rel_err, scalar.mean_rel_err);
  EXPECT_EQ(fingerprint(simd), fingerprint(scalar));
}

// The dump-compare-only pass (compute_run_ut off) gives exactly the dump-compare and MindSpore values of
// the full pass, on the SIMD and the scalar path, and refuses flag combinations it cannot serve.
TEST(MetricsSimd, DumpCompareOnlyPassMatchesFullPass) {
  std::mt19937_64 rng(11);
  std::vector<double> b, d;
  auto extra = [](const TensorMetrics& m) {
    std::string s = m.dump_inf_nan_mismatch ? "mm;" : "-;";
    for (double v :
         {m.ms_cosine, m.ms_max_abs, m.ms_max_rel, m.dump_cosine, m.dump_euc, m.dump_max_abs, m.dump_max_rel,
          m.dump_one_thousandth, m.dump_five_thousandths, m.dump_norm_device, m.dump_norm_bench})
      s += bits(v);
    return s;
  };
  for (int pattern = 0; pattern < 5; ++pattern) {
    make_data(pattern, 2 * 8192 + 45, rng, b, d);
    for (DType t : {DType::Float32, DType::Float16, DType::Float64}) {
      Tensor bench = make(b, t), device = make(d, t);
      MetricParams full;
      full.compute_ulp = false;
      MetricParams light = full;
      light.compute_run_ut = false;
      const TensorMetrics a = compute_metrics(bench, device, full), c = compute_metrics(bench, device, light);
      EXPECT_EQ(extra(a), extra(c)) << "pattern=" << pattern << " dtype=" << name(t);
      EXPECT_TRUE(c.rmse.is_blank() && c.max_abs_err.is_blank()) << "run_ut metrics must stay blank";
      ScalarOnly guard;
      EXPECT_EQ(extra(compute_metrics(bench, device, light)), extra(a)) << "scalar, pattern=" << pattern;
    }
  }
  MetricParams bad;
  bad.compute_run_ut = false;  // ULP is a run_ut metric
  Tensor x = make({1.0, 2.0}, DType::Float32);
  EXPECT_THROW(compute_metrics(x, x, bad), Error);
}

}  // namespace
}  // namespace probe
