// The decisions of api_precision_compare's standards on numbers (precheck.md §5.3), shared by the CSV
// command (lib/precision_compare/Judge.cpp, which renders them) and probe::judge() (in memory).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

#include "standards/Thresholds.h"

namespace probe::precision_compare {

/// A device metric relative to the second device's (msprobe's check_inf_or_nan / calc_ratio).
struct Ratio {
  double value = 0;  ///< NaN when either metric is NaN or infinite
  bool consistent = true;
  std::string message;  ///< "<column>同为同号inf或nan\n" / "<column>inf或nan不一致\n", else empty
};

/// |npu| / max(|gpu|, min_err); NaN/inf in either side gives NaN, consistent iff both are the same inf or
/// both NaN.
inline Ratio metric_ratio(double npu, double gpu, double min_err, std::string_view column) {
  if (std::isnan(npu) || std::isinf(npu) || std::isnan(gpu) || std::isinf(gpu)) {
    const bool consistent = (std::isinf(npu) || std::isinf(gpu))
                                ? (std::isinf(npu) && std::isinf(gpu) && npu == gpu)
                                : (std::isnan(npu) && std::isnan(gpu));
    return {std::numeric_limits<double>::quiet_NaN(), consistent,
            std::string(column) + (consistent ? "同为同号inf或nan\n" : "inf或nan不一致\n")};
  }
  // Overflow to inf is possible for |x| > ~1e304 and then judged pass, as in msprobe (ratio inf -> pass).
  return {std::fabs(npu) / std::max(std::fabs(gpu), min_err), true, {}};
}

/// A metric of the benchmark standard: the NPU value over the second device's (metric_ratio), judged
/// against `threshold`.
struct BenchmarkMetric {
  std::string_view id;            ///< its metric_table() id, which names the run_ut details column read
  double Thresholds::*threshold;  ///< the ratio's upper bound
  std::string_view criterion;     ///< probe::judge's name for the ratio
  bool decides;                   ///< error balance is reported but, as in msprobe HEAD, never decides
};

/// The benchmark standard's metrics, in the order of api_precision_compare's details columns.
inline constexpr std::array<BenchmarkMetric, 5> kBenchmarkMetrics{{
    {"small_value_err_ratio", &Thresholds::small_value_err, "small value error ratio / reference", true},
    {"rmse", &Thresholds::rmse_err, "rmse / reference", true},
    {"max_rel_err", &Thresholds::max_rel_err, "max relative error / reference", true},
    {"mean_rel_err", &Thresholds::mean_rel_err, "mean relative error / reference", true},
    {"error_balance", &Thresholds::eb_err, "error balance / reference", false},
}};

/// One benchmark metric: an inconsistent inf/nan fails, an undefined ratio passes, else ratio <= threshold.
inline bool benchmark_metric_pass(const Ratio& r, double threshold) {
  if (!r.consistent) return false;
  if (std::isnan(r.value) || std::isinf(r.value)) return true;
  return !(r.value > threshold);
}

inline bool binary_consistency_pass(double error_rate) { return error_rate == 0; }
/// inf/nan, relative and absolute error ratios of the absolute-threshold standard: each must be 0.
inline bool absolute_ratio_pass(double ratio) { return ratio == 0; }
inline bool accumulative_eb_pass(double eb, double threshold) { return eb <= threshold; }
inline bool thousandth_pass(double thousandth, const Thresholds& t) {
  return thousandth >= t.thousandth_pass;
}

/// ULP standard for float32/float16/bfloat16 rows (the ratio is p_npu over p_gpu, metric_ratio).
inline bool ulp_pass(bool float32, double mean_ulp, double proportion, double proportion_ratio,
                     const Thresholds& t) {
  if (float32)
    return mean_ulp < t.ulp_fp32_mean || proportion < t.ulp_fp32_proportion ||
           proportion_ratio < t.ulp_proportion_ratio;
  return proportion < t.ulp_low_proportion || proportion_ratio < t.ulp_proportion_ratio;
}
/// ULP standard for fp8 outputs: no second device.
inline bool fp8_ulp_pass(double proportion, const Thresholds& t) { return proportion < t.ulp_low_proportion; }

}  // namespace probe::precision_compare
