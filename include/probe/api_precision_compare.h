// `api_precision_compare`: judges an NPU run_ut details CSV against a GPU one (both benched on the CPU)
// with msprobe's new precision standard and writes msprobe HEAD's result and details CSVs.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace probe {

/// What to compare and where to write. Inputs may come from probe, msprobe HEAD or msprobe 1.0.4 (DECISIONS
/// D11).
struct ApiPrecisionCompareOptions {
  std::string npu_csv;            ///< details CSV of the device under test
  std::string gpu_csv;            ///< details CSV of the reference device
  std::string out_dir = ".";      ///< created (0750) if missing
  std::string profile = "probe";  ///< a profile of the thresholds data: "probe" or "msprobe"
  std::string timestamp;          ///< 14 digits for the file names; empty = local time now
  std::string thresholds_file;    ///< empty = api_precision_compare.json from probe's data directory
};

/// A row that could not be judged (SKIP row written, as msprobe does) or was left out, with its location.
struct ApiPrecisionCompareNote {
  std::string file;     ///< input file the problem is in
  std::size_t row = 0;  ///< 1-based data row in that file (the header is row 0)
  std::string column;   ///< offending column, if one
  std::string message;  ///< what happened
};

/// Counts of what was written, plus the rows that need the user's attention.
struct ApiPrecisionCompareSummary {
  std::string result_csv, details_csv;  ///< final paths of the two outputs
  std::size_t detail_rows = 0, result_rows = 0;
  std::size_t forward_pass = 0, forward_error = 0, forward_skip = 0;  ///< over result rows
  std::vector<ApiPrecisionCompareNote> skipped;  ///< rows that became SKIP because of their input cells
  std::vector<ApiPrecisionCompareNote> missing_in_gpu;  ///< NPU rows without a GPU row (ignored, as msprobe)
};

/// Runs the comparison. Outputs appear under their final names only when complete; throws probe::Error.
ApiPrecisionCompareSummary run_api_precision_compare(const ApiPrecisionCompareOptions& options);

}  // namespace probe
