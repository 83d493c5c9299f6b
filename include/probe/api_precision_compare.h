// `api_precision_compare`: judges an NPU run_ut details CSV against a GPU one (both benched on the CPU)
// with msprobe's new precision standard and writes msprobe HEAD's result and details CSVs.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <stop_token>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "probe/export.h"
#include "probe/precision_standard.h"

namespace probe {

/// Everything api_precision_compare judges with: dtype classes, API groups and thresholds of one profile of
/// data/api_precision_compare.json (precheck.md §4.3, §5.3). Take the shipped values from builtin(), read
/// another file with load() or text with parse(), or change fields by hand. Const use from many threads is
/// safe.
struct PROBE_API PrecisionCompareThresholds {
  std::unordered_set<std::string> unsupported_dtypes;  ///< SKIP rows, SKIP groups (float64, complex)
  std::unordered_set<std::string> fp8_dtypes;          ///< judged by ULP (out) / absolute (in)
  std::unordered_set<std::string> float_dtypes;        ///< anything else goes to binary consistency
  std::string zero_shape;                              ///< the Shape cell of an empty output, "(0,)"
  std::vector<std::pair<Standard, std::unordered_set<std::string>>> api_groups;  ///< first match wins
  std::map<std::string, double> minimum_err, accumulative_eb;                    ///< by dtype, with "default"
  double small_value_err = 0, rmse_err = 0, max_rel_err = 0, mean_rel_err = 0, eb_err = 0;  ///< ratios
  double thousandth_pass = 0;
  double ulp_fp32_mean = 0, ulp_fp32_proportion = 0, ulp_low_proportion = 0, ulp_proportion_ratio = 0;
  std::map<std::string, std::string> compare_messages;  ///< hint appended on forward error, by API name

  double min_err(const std::string& dtype) const;       ///< minimum_err[dtype], else its "default"
  double eb_threshold(const std::string& dtype) const;  ///< accumulative_eb[dtype], else its "default"

  /// The shipped api_precision_compare.json (found like every data file, else the compiled-in copy), with
  /// the API groups of Standards's data of the same profile.
  static PrecisionCompareThresholds builtin(Profile profile = Profile::Probe);
  /// A thresholds file; `{"from": FILE}` API groups are read from FILE (found like a data file).
  static PrecisionCompareThresholds load(const std::string& path, Profile profile);
  /// JSON text in memory; `{"from": ...}` API groups are taken from `standards` (whose profile is used),
  /// so nothing is read from disk. Errors name `origin`.
  static PrecisionCompareThresholds parse(std::string_view json, const Standards& standards,
                                          const std::string& origin = "<memory>");
};

/// What to compare and where to write. Inputs may come from probe, msprobe HEAD or msprobe 1.0.4 (DECISIONS
/// D11).
struct PROBE_API ApiPrecisionCompareOptions {
  std::string npu_csv;        ///< details CSV of the device under test
  std::string gpu_csv;        ///< details CSV of the reference device
  std::string out_dir = ".";  ///< created (0750) if missing
  /// Profile of the thresholds data; used by the overload without thresholds.
  Profile profile = Profile::Probe;
  std::string timestamp;  ///< 14 digits for the file names; empty = local time now
  /// Used by the overload without thresholds: empty = PrecisionCompareThresholds::builtin(profile).
  std::string thresholds_file;
};

/// A row that could not be judged (SKIP row written, as msprobe does) or was left out, with its location.
struct PROBE_API ApiPrecisionCompareNote {
  std::string file;     ///< input file the problem is in
  std::size_t row = 0;  ///< 1-based data row in that file (the header is row 0)
  std::string column;   ///< offending column, if one
  std::string message;  ///< what happened
};

/// Progress after each result row (one API) written.
struct PROBE_API ApiPrecisionCompareProgress {
  std::size_t npu_rows_done = 0, npu_rows = 0;  ///< NPU details rows handled before this row, of all
  std::size_t result_rows = 0;                  ///< APIs written so far
};
using ApiPrecisionCompareProgressFn = std::function<void(const ApiPrecisionCompareProgress&)>;

/// Counts of what was written, plus the rows that need the user's attention.
struct PROBE_API ApiPrecisionCompareSummary {
  std::string result_csv, details_csv;  ///< final paths of the two outputs
  std::size_t detail_rows = 0, result_rows = 0;
  std::size_t forward_pass = 0, forward_error = 0, forward_skip = 0;  ///< over result rows
  std::vector<ApiPrecisionCompareNote> skipped;  ///< rows that became SKIP because of their input cells
  std::vector<ApiPrecisionCompareNote> missing_in_gpu;  ///< NPU rows without a GPU row (ignored, as msprobe)
  /// True when `stop` was requested: both files are complete up to the last API written and hold no row of
  /// the APIs after it (the command has no resume: run it again for the rest).
  bool cancelled = false;
};

/// Runs the comparison with the caller's `thresholds` (options.profile and options.thresholds_file are not
/// used; nothing is read but the two CSVs). Outputs appear under their final names only when complete (or
/// cancelled); throws probe::Error. `progress` is called on the calling thread after each API's result row;
/// requesting `stop` (from any thread, e.g. from `progress`) ends the run before the next API.
PROBE_API ApiPrecisionCompareSummary run_api_precision_compare(
    const ApiPrecisionCompareOptions& options, const PrecisionCompareThresholds& thresholds,
    const ApiPrecisionCompareProgressFn& progress = {}, std::stop_token stop = {});

/// The same with options.thresholds_file, else PrecisionCompareThresholds::builtin(options.profile).
PROBE_API ApiPrecisionCompareSummary
run_api_precision_compare(const ApiPrecisionCompareOptions& options,
                          const ApiPrecisionCompareProgressFn& progress = {}, std::stop_token stop = {});

}  // namespace probe
