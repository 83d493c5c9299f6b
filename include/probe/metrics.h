// Accuracy metrics of a (bench, device) tensor pair, computed by one fused pass exactly as msprobe
// computes them (numpy dtype promotion, epsilons, masks, float32 arithmetic where msprobe uses it),
// with each value tagged by how msprobe prints it in its CSVs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "probe/error_histogram.h"
#include "probe/export.h"
#include "probe/scalar_types.h"
#include "probe/tensor.h"

namespace probe {

/// How a CSV cell is printed: blank " ", a Python/numpy float64 ("%.14f"), a numpy float32 or float16
/// scalar (shortest repr, "0.011962891"), an integer ("0"), or text ("N/A", "pass", ...).
enum class MetricKind { Blank, Double, Float32, Float16, Integer, Text };

/// One metric value or CSV cell, carrying its print kind.
struct PROBE_API MetricValue {
  MetricKind kind = MetricKind::Blank;
  double value = 0;  ///< Double/Float32/Float16 (exactly representable in that type) and Integer
  std::string text;  ///< Text

  static MetricValue blank() { return {}; }
  static MetricValue f64(double v) { return {MetricKind::Double, v, {}}; }
  static MetricValue f32(float v) { return {MetricKind::Float32, static_cast<double>(v), {}}; }
  static MetricValue f16(double v) { return {MetricKind::Float16, v, {}}; }
  static MetricValue integer(std::int64_t v) { return {MetricKind::Integer, static_cast<double>(v), {}}; }
  static MetricValue str(std::string s) { return {MetricKind::Text, 0, std::move(s)}; }
  /// A value computed in numpy dtype `t` (float16/float32 keep their repr; anything else is float64).
  static MetricValue of_dtype(double v, DType t);

  bool is_blank() const noexcept { return kind == MetricKind::Blank; }
  bool is_number() const noexcept {
    return kind == MetricKind::Double || kind == MetricKind::Float32 || kind == MetricKind::Float16 ||
           kind == MetricKind::Integer;
  }
  /// The cell text exactly as msprobe writes it (`precision` decimals for float64 values).
  std::string format(int precision = 14) const;
  bool operator==(const MetricValue&) const = default;
};

/// Thresholds the fused pass needs to build its masks (one precision-standard dtype row, §4.3).
struct PROBE_API MetricParams {
  double small_value = 0x1p-20;  ///< benchmark/absolute small-value threshold on |bench|
  double small_value_atol_benchmark = 0x1p-30;
  double small_value_atol_absolute = 0x1p-30;
  double rtol = 0x1p-20;                ///< absolute-threshold relative tolerance
  double accumulative_bound = 0x1p-11;  ///< accumulative-error rtol and atol
  double accumulative_small_value = 1;
  int ulp_min_eb = -126, ulp_mantissa_bits = 23;
  double ulp_threshold = 32;  ///< ULP error counted above this
  bool compute_ulp = true;    ///< ULP needs a log2 per element; skip when not wanted
  bool compute_extra = true;  ///< dump-compare and MindSpore metrics
  /// The run_ut set (old rule, precision standards). Off (with compute_extra on, compute_ulp off): only the
  /// dump-compare and MindSpore metrics are filled, in a lighter pass; the others stay blank. With it on, a
  /// float64 bench beside a bfloat16 device is read as float32 (run_ut's rounding) by every metric; off,
  /// in float64.
  bool compute_run_ut = true;
  bool exact_numpy_means = true;  ///< float32 means over a masked subset summed as numpy sums them
  /// The report's element-error distribution (Ulp or RelativeError; off by default, and then free): filled
  /// into TensorMetrics::histogram from each block of the pass while it is in cache. Values are read in
  /// float64 as stored (no bfloat16 rounding of the bench).
  std::optional<HistogramUnit> histogram;
};

/// Every per-output metric of a float tensor pair (§2.2-§2.12, dump-compare §3.8, MindSpore §7.3).
/// Values are numpy-typed as msprobe computes them; unavailable ones are blank.
struct PROBE_API TensorMetrics {
  std::int64_t count = 0;
  DType compute_dtype = DType::Float64;  ///< numpy dtype of abs_err/rel_err (after bf16 -> float32)
  // Old rule.
  MetricValue cosine;  ///< blank for size 1 and all-zero cases (see cosine_message)
  bool cosine_ok = false;
  std::string cosine_message;
  MetricValue max_abs_err;
  MetricValue hundredth, thousandth, ten_thousandth;  ///< ratio of rel_err_origin < 0.01/0.001/0.0001
  // Benchmark standard.
  MetricValue error_balance, rmse, small_value_err_ratio, max_rel_err, mean_rel_err;
  // Absolute threshold standard.
  MetricValue inf_nan_err_ratio, rel_err_ratio, abs_err_ratio;
  // Accumulative error standard.
  MetricValue acc_inf_nan_err_ratio, acc_rel_err_ratio, acc_abs_err_ratio;
  // Binary consistency.
  MetricValue binary_err_rate;
  // ULP.
  MetricValue ulp_max, ulp_mean, ulp_ratio;
  // MindSpore checker (float64, blank when not computed).
  double ms_cosine = 0, ms_max_abs = 0, ms_max_rel = 0;
  // Dump compare, real-data mode (§3.8): raw float64 values before msprobe's 12-decimal rounding.
  bool dump_inf_nan_mismatch = false;
  double dump_cosine = 0, dump_euc = 0, dump_max_abs = 0, dump_max_rel = 0, dump_one_thousandth = 0,
         dump_five_thousandths = 0;
  double dump_norm_device = 0, dump_norm_bench = 0;
  std::optional<ErrorHistogram> histogram;  ///< MetricParams::histogram's, when asked for
};

/// Computes every metric of `bench` vs `device` (same shape, both floating; bool/int use
/// binary_error_rate). One fused, multi-threaded pass; results do not depend on the thread count.
/// Throws probe::Error (InvalidArgument) on different shapes or non-floating dtypes.
PROBE_API TensorMetrics compute_metrics(const Tensor& bench, const Tensor& device,
                                        const MetricParams& params = {});

/// count(bench != device) / N as msprobe's binary consistency computes it (NaN != NaN); any dtypes.
PROBE_API double binary_error_rate(const Tensor& bench, const Tensor& device);

/// The numpy dtype msprobe computes abs_err in: float16/float32/float64 after converting a bfloat16
/// device pair to float32 (§2.1, §2.2).
PROBE_API DType metric_compute_dtype(DType bench, DType device);

/// Dump-compare real-data metrics (§3.8) for an NPU/bench pair, as msprobe writes them: each is a
/// number rounded to 12 decimals (cosine 6 above 0.9999), or "unsupported", "Nan", "N/A", ...
struct PROBE_API DumpCompareResult {
  MetricValue cosine, euc_dist, max_abs, max_rel, one_thousandth, five_thousandths;
  std::string message;  ///< the text msprobe appends to Err_message
};
PROBE_API DumpCompareResult dump_compare(const Tensor& npu, const Tensor& bench);
/// compare's "Accuracy Reached or Not" verdict of one row: Unmatched when the shapes differ, None when
/// the cells cannot be judged.
enum class AccuracyReached { Yes, No, None, Unmatched };
/// The verdict's CSV text: "Yes", "No", "None", "Unmatched".
PROBE_API std::string_view to_string(AccuracyReached reached) noexcept;
/// "Accuracy Reached or Not" from the Cosine and MaxAbsErr cells (§3.8 step 4).
PROBE_API AccuracyReached dump_accuracy_reached(const MetricValue& cosine, const MetricValue& max_abs);

/// Statistics-mode diff of one statistic (§3.6): `{S} diff` and `{S}RelativeErr` cells, and whether
/// it triggers the "Need double check" warning.
struct PROBE_API StatDiff {
  MetricValue diff, relative;
  bool warning = false;
};
/// npu/bench are the dump's statistic values (nullopt when not numeric or unmatched).
PROBE_API StatDiff statistics_diff(std::optional<double> npu, std::optional<double> bench);

}  // namespace probe
