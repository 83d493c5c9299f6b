// The self-contained HTML report of run_ut's output (also the online checker's and server's: the same CSVs).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "probe/error_histogram.h"
#include "probe/export.h"
#include "probe/grad_compare.h"
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
  /// The element errors' distribution, from run_ut's histogram sidecar (flagged outputs of a run with
  /// --report); nullopt when there is none.
  std::optional<ErrorHistogram> histogram;
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

/// Reads a result CSV and its details CSV (run_ut's, the online checker's or server's), and the histogram
/// sidecar beside the details CSV when there is one (error_histogram_path). Throws probe::Error (Io,
/// Format) naming the file and the column.
PROBE_API RunUtReport read_run_ut_report(const std::string& result_csv, const std::string& details_csv);

/// Indices into `report.outputs` of the flagged outputs (error, then Warning), each group by error over
/// bound, then by max relative error, largest first: the page's flagged list and the terminal's table.
PROBE_API std::vector<std::size_t> flagged_order(const RunUtReport& report);

/// The terminal's table of the worst flagged outputs (flagged_order, at most `max_rows`): API, direction,
/// status, criterion, value and limit, every line at most `width` (>= 40) columns, long cells cut with "~".
/// The headers say what the numbers are: "worst err" and "bound" when a bound rule (D14, D16) judged every
/// row shown, "value" and "threshold" when run_ut's rule did, else "value" and "bound|thr" with each limit
/// marked "b " or "t ".
/// Empty when nothing is flagged.
PROBE_API std::string worst_outputs_table(const RunUtReport& report, std::size_t max_rows, int width);

/// The JSON the page embeds: summary, flagged outputs (worst first), every output, SKIP reasons grouped.
PROBE_API std::string run_ut_report_json(const RunUtReport& report);

/// The whole page: one HTML file with its CSS, JS, data and SVG plots inline, no network, no other file.
PROBE_API std::string run_ut_report_html(const RunUtReport& report);

/// One row of a compare result CSV (one input, output or parameter of a dump entry).
struct PROBE_API CompareReportRow {
  std::string name, bench_name, dtype, shape;
  double cosine = 0, max_abs = 0, max_rel = 0;  ///< NaN when absent; statistics mode: the maxima's
  std::string verdict;  ///< "Accuracy Reached or Not" (real data) or "Result" (statistics, md5) as written
  double npu_stats[4] = {}, bench_stats[4] = {};  ///< max, min, mean, l2norm; NaN when absent
  double stat_rel = 0;   ///< the largest relative error of the four statistics (NaN when none is a number)
  bool differs = false;  ///< an output row that makes its entry different by compare -da's rule
  std::string message, stack;
};

/// A compare result CSV, read, with the first entry that differs by compare -da's rule
/// (data/diff_analyze.json: an output row whose Max/Min/Mean/Norm relative error exceeds its threshold, or
/// whose md5 differs).
struct PROBE_API CompareReport {
  std::string csv;
  std::string mode;  ///< "real data", "statistics" or "md5", from the header
  std::vector<CompareReportRow> rows;
  long long first_diff = -1;  ///< index of the first row that differs; -1 when none
};

/// Reads compare's compare_result_<ts>.csv. Throws probe::Error (Io, Format) naming the file and column.
PROBE_API CompareReport read_compare_report(const std::string& csv);

/// The JSON the compare page embeds.
PROBE_API std::string compare_report_json(const CompareReport& report);

/// The compare page: cosine, max abs and max relative error along execution order with the first
/// different entry marked, every row in a table, statistics side by side and the stack of a selected row.
PROBE_API std::string compare_report_html(const CompareReport& report);

/// Writes the compare page of `csv` to `out_dir/report_compare_<ts>.html` and returns its path.
PROBE_API std::string write_compare_report(const std::string& csv, const std::string& out_dir);

/// One row of an api_precision_compare details CSV: one output judged NPU against GPU, both against the CPU
/// bench.
struct PROBE_API PrecisionReportRow {
  std::string name;
  std::string result;     ///< 比对结果: pass, Warning, error, SKIP
  std::string algorithm;  ///< 比对算法, e.g. 标杆比对法 (benchmark comparison)
  std::vector<std::pair<std::string, double>>
      ratios;                         ///< every "…比值" column that holds a number (NPU / GPU)
  std::vector<std::string> verdicts;  ///< each ratio's 判定结果 cell ("" when none)
  std::string worst_metric;  ///< the ratio column judged worst (error before Warning, then the largest ratio)
  double worst_ratio = 0;    ///< its value; NaN when no ratio is a number
  std::string message;
};

/// api_precision_compare's result and details CSVs, read.
struct PROBE_API PrecisionReport {
  std::string result_csv, details_csv;
  std::vector<ReportApi> apis;  ///< the result CSV's rows (Forward/Backward Test Success)
  std::vector<PrecisionReportRow> rows;
};

/// Reads api_precision_compare_result_<ts>.csv and api_precision_compare_details_<ts>.csv. Throws
/// probe::Error (Io, Format) naming the file and column.
PROBE_API PrecisionReport read_precision_report(const std::string& result_csv,
                                                const std::string& details_csv);

/// The JSON the api_precision_compare page embeds.
PROBE_API std::string precision_report_json(const PrecisionReport& report);

/// The api_precision_compare page: the three-way verdicts per direction, the flagged outputs first with the
/// metric that failed, each output's worst NPU/GPU error ratio along execution order, every output in a
/// table.
PROBE_API std::string precision_report_html(const PrecisionReport& report);

/// Writes the api_precision_compare page to `out_dir/report_precision_<ts>.html` and returns its path.
PROBE_API std::string write_precision_report(const std::string& result_csv, const std::string& details_csv,
                                             const std::string& out_dir);

/// The terminal's table of compare's worst rows (at most `max_rows`): the rows that differ by -da's rule or
/// are not accurate ("No", md5 "Different"), largest max relative error first; name, verdict, cosine, max abs
/// and max relative error, every line at most `width` (>= 40) columns. Empty when no row is flagged.
PROBE_API std::string worst_compare_table(const CompareReport& report, std::size_t max_rows, int width);

/// grad_compare's output, read back: one entry per OUT/rank{R}/similarities.csv (ascending rank), each with
/// its steps, rows (parameters, then "summary") and first suspicious step (grad_first_suspicious_step).
struct PROBE_API GradReport {
  std::string dir;
  std::vector<GradRankComparison> ranks;
};

/// Reads every rank{R}/similarities.csv under `dir`. Throws probe::Error: Io when there is none, Format
/// naming the file, row and step of a cell that is not a number or a header that is not "step,<steps>".
PROBE_API GradReport read_grad_report(const std::string& dir);

/// The JSON the grad_compare page embeds.
PROBE_API std::string grad_report_json(const GradReport& report);

/// The grad_compare page: per rank, every parameter's similarity and the summary against step with the first
/// suspicious step marked, and the similarities in a table.
PROBE_API std::string grad_report_html(const GradReport& report);

/// Writes the grad_compare page of `dir` to `out_dir/report_grad_<ts>.html` and returns its path.
PROBE_API std::string write_grad_report(const std::string& dir, const std::string& out_dir);

/// The pages of `dir`: run_ut's (the newest accuracy_checking_result_<ts>*.csv with its details CSV; one page
/// per `_rank<N>` pair of that stamp, as the online server writes them),
/// compare's (the newest compare_result_*.csv), api_precision_compare's (the newest
/// api_precision_compare_result_*.csv with its details CSV) and grad_compare's (rank{R}/similarities.csv),
/// each written to `out_dir` (empty: `dir`);
/// returns their paths. Throws probe::Error (Io) when `dir` holds none of them.
PROBE_API std::vector<std::string> write_report(const std::string& dir, const std::string& out_dir = {});

/// Writes the report of one result/details pair to `out_dir/report_<ts>.html` and returns its path.
PROBE_API std::string write_run_ut_report(const std::string& result_csv, const std::string& details_csv,
                                          const std::string& out_dir);

}  // namespace probe
