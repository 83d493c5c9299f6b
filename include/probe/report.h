// The self-contained HTML report of run_ut's output (also the online checker's and server's: the same CSVs).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "probe/export.h"
#include "probe/status.h"

namespace probe {

/// One row of a run_ut details CSV (one output of one direction of one API), with what its Message says.
struct PROBE_API ReportOutput {
  std::string name;       ///< "Functional.gelu.0.forward.output.0"
  std::string api;        ///< the result CSV's API name the row belongs to; "" when none matches
  std::string direction;  ///< "forward" or "backward" (the segment after the API name)
  std::string dtype;      ///< the DEVICE Dtype cell
  std::string shape;
  Status status = Status::Skip;
  double cosine = 0, max_abs = 0, max_rel = 0;  ///< NaN when the cell is blank or not a number
  std::string rule;       ///< what judged: "error bound (D14, gemm family, K=32, bfloat16)", "run_ut's rule"
  std::string criterion;  ///< the failing (or, when passed, the tightest) criterion in words
  double value = 0, threshold = 0;  ///< the criterion's value and its threshold or bound; NaN when unknown
  double ratio = 0;                 ///< value / threshold (error over bound); NaN when unknown
  std::string worst_index, worst_bench, worst_device;  ///< the worst element, as the Message prints it
  std::string message;                                 ///< the Message cell
};

/// One row of a run_ut result CSV.
struct PROBE_API ReportApi {
  std::string name;
  std::string forward, backward;  ///< the cells as written ("pass", "SKIP", " ")
  Status status = Status::Pass;   ///< its worst direction; SKIP when its forward was skipped
  std::string message;
};

/// A run_ut result CSV and its details CSV, read.
struct PROBE_API RunUtReport {
  std::string result_csv, details_csv;
  std::vector<ReportApi> apis;
  std::vector<ReportOutput> outputs;  ///< in the details CSV's order (execution order)
};

/// Reads a result CSV and its details CSV (run_ut's, the online checker's or server's). Throws probe::Error
/// (Io, Format) naming the file and the column.
PROBE_API RunUtReport read_run_ut_report(const std::string& result_csv, const std::string& details_csv);

/// Indices into `report.outputs` of the flagged outputs (error, then Warning), each group by error over
/// bound, then by max relative error, largest first: the page's flagged list and the terminal's table.
PROBE_API std::vector<std::size_t> flagged_order(const RunUtReport& report);

/// The terminal's table of the worst flagged outputs (flagged_order, at most `max_rows`): API, direction,
/// status, criterion, value, threshold, every line at most `width` (>= 40) columns, long cells cut with "~".
/// Empty when nothing is flagged.
PROBE_API std::string worst_outputs_table(const RunUtReport& report, std::size_t max_rows, int width);

/// The JSON the page embeds: summary, flagged outputs (worst first), every output, SKIP reasons grouped.
PROBE_API std::string run_ut_report_json(const RunUtReport& report);

/// The whole page: one HTML file with its CSS, JS, data and SVG plots inline, no network, no other file.
PROBE_API std::string run_ut_report_html(const RunUtReport& report);

/// Finds the newest accuracy_checking_result_*.csv (with its details CSV) in `dir`, writes
/// `out_dir/report_<ts>.html` (`out_dir` empty: `dir`) and returns its path. Throws probe::Error (Io) when
/// `dir` holds no result/details pair.
PROBE_API std::string write_report(const std::string& dir, const std::string& out_dir = {});

/// Writes the report of one result/details pair to `out_dir/report_<ts>.html` and returns its path.
PROBE_API std::string write_run_ut_report(const std::string& result_csv, const std::string& details_csv,
                                          const std::string& out_dir);

}  // namespace probe
