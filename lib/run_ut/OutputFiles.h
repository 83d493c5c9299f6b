// Internal: run_ut's result/details CSV files, their names and headers, and resuming into them.
#pragma once

#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "probe/csv.h"
#include "probe/run_ut.h"

namespace probe::rut {

/// msprobe's empty cell.
inline const std::string kSpace = " ";

CsvRow result_header(RunUtFramework fw);
CsvRow details_header(RunUtFramework fw);

struct OutputPaths {
  std::string result, details;
  std::string timestamp;  ///< the 14 digits of the result file name
};

/// `<out>/accuracy_checking_{result,details}_<ts>.csv`; creates `out_dir` (0750) if missing.
OutputPaths new_output_paths(const std::string& out_dir, const std::string& timestamp);
/// Validates a -csv_path result file (name pattern, regular writable file) and finds its details file.
OutputPaths resume_output_paths(const std::string& result_csv);

/// What an earlier, possibly killed, run left in the files.
struct ResumeState {
  std::unordered_set<std::string> done;                       ///< full API names with a result row
  std::vector<std::pair<std::string, std::string>> statuses;  ///< (forward, backward) per result row
};

/// Reads the result and details files of an interrupted run and repairs what a kill can leave:
/// a torn last record is cut off, and details rows of APIs without a result row are dropped, so
/// that continuing gives the same files as an uninterrupted run. Throws Format on a foreign header.
ResumeState load_and_repair(const OutputPaths& paths, RunUtFramework fw);

/// One API's rows; `result` empty means no result row (MindSpore APIs with nothing to compare).
struct ApiRows {
  std::string name;
  std::vector<CsvRow> details;
  CsvRow result;
};

/// Full API name of a details row name (`<full>.forward.output.3` -> `<full>`).
std::string full_name_of_details_row(const std::string& row_name);

/// Appends API row groups: details rows first, then the result row, each flushed, so a kill
/// leaves at most one API half-written (repaired by load_and_repair).
class OutputWriter {
 public:
  OutputWriter(const OutputPaths& paths, RunUtFramework fw);
  void write(const ApiRows& rows);

 private:
  std::unique_ptr<CsvWriter> details_, result_;
};

}  // namespace probe::rut
