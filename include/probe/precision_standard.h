// Precision standards of msprobe's run_ut (precheck.md §3-§4, §7.3): which algorithm judges an API,
// and every threshold, loaded from a data file with two profiles (DECISIONS.md: `probe`, `msprobe`).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "probe/dtype.h"
#include "probe/export.h"
#include "probe/metrics.h"

namespace probe {

/// Judging profile: `probe` applies DECISIONS D1-D3, `msprobe` reproduces msprobe HEAD exactly.
enum class Profile { Probe, MsProbe };
/// Parses "probe" / "msprobe"; throws probe::Error (InvalidArgument) otherwise.
PROBE_API Profile parse_profile(std::string_view text);
PROBE_API std::string_view to_string(Profile p) noexcept;

/// New-precision-standard algorithms (§4.1).
enum class Standard { Benchmark, AbsoluteThreshold, BinaryConsistency, Ulp, Thousandth, Accumulative };
PROBE_API std::string_view standard_id(Standard s) noexcept;        ///< "absolute_threshold", ...
PROBE_API std::string_view standard_csv_name(Standard s) noexcept;  ///< "绝对阈值法", ...
/// The inverse of standard_id.
PROBE_API std::optional<Standard> parse_standard_id(std::string_view id) noexcept;

/// How direction statuses roll up into the API's Forward/Backward Test Success (§3.4, D1).
enum class Aggregation { LastNonPass, Worst };

/// All thresholds and API lists of one profile. Immutable once built: const use from many threads is safe.
class PROBE_API Standards {
 public:
  /// Loads `path` (JSON, see data/precision_standards.json) and selects `profile`.
  static Standards load(const std::string& path, Profile profile);
  /// The same from JSON text in memory; errors name `origin`.
  static Standards parse(std::string_view json, Profile profile, const std::string& origin = "<memory>");
  /// The shipped precision_standards.json: $PROBE_STANDARDS_FILE, else the first found in $PROBE_DATA_DIR,
  /// share/probe beside libprobe's file (a moved install), the configured share/probe, the source tree's
  /// data/, and last the copy compiled into libprobe, so it works with no file at all (README "Data files").
  static Standards builtin(Profile profile = Profile::Probe);
  /// Path builtin() reads ("<builtin>/precision_standards.json" for the compiled-in copy).
  static std::string default_path();

  Profile profile() const noexcept { return profile_; }
  /// §4.2: algorithm for an API name (base name, §6.3), device output dtype string and fp8 inputs.
  Standard standard_for(std::string_view api_name, std::string_view out_dtype, bool fp8_input = false) const;
  /// True if the device dtype gets the new precision standard (torch.float16/bfloat16/float32/fp8).
  bool new_standard_supported(std::string_view device_dtype) const;
  /// Mask thresholds of the fused kernel for a device dtype.
  MetricParams metric_params(DType device) const;
  /// §4.2's API groups in match order (the first group naming an API decides); api_precision_compare uses
  /// them too.
  const std::vector<std::pair<Standard, std::vector<std::string>>>& api_groups() const noexcept {
    return groups_;
  }

  double cosine_threshold = 0.99;    ///< old rule: cos > threshold
  double max_abs_threshold = 0.001;  ///< old rule: max_abs < threshold
  double mindspore_cosine = 0.99;    ///< MindSpore: cos > threshold
  double mindspore_max_abs = 0.001;  ///< MindSpore: max_abs < threshold (D3: 0.0001 in probe)
  double dropout_ratio = 0.1;
  std::int64_t dropout_min_numel = 100;
  Aggregation aggregation = Aggregation::LastNonPass;
  /// The report's element-error histograms (DetailRow::histogram, run_ut's D14 rows included); off by
  /// default, and then the judging passes do no extra work.
  bool error_histograms = false;

 private:
  struct DtypeRow {
    double small_value, atol_benchmark, atol_absolute, rtol, acc_bound, acc_small_value, ulp_threshold;
    int ulp_min_eb, ulp_mantissa;
  };
  struct Loader;
  friend struct Loader;
  Profile profile_ = Profile::MsProbe;
  std::vector<std::pair<Standard, std::vector<std::string>>> groups_;
  std::vector<std::string> supported_dtypes_, fp8_dtypes_, float_dtypes_;
  std::map<std::string, DtypeRow, std::less<>> rows_;  // by torch dtype string, plus "default"
};

}  // namespace probe
