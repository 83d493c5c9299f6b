// Internal: the report's input CSVs (run_ut's and api_precision_compare's result and details, compare's
// output) read one way: the header, the data rows without blank lines, columns found by their header.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "probe/csv.h"

namespace probe::report {

/// One CSV file: its header and its data rows.
struct CsvTable {
  std::string file;
  CsvRow header;
  std::vector<CsvRow> rows;  ///< the rows after the header, blank lines left out

  /// Reads `file`. Throws probe::Error (Format) "empty <what> CSV (no header)" naming the file, or what
  /// csv_read_file throws.
  static CsvTable read(const std::string& file, std::string_view what);
  /// The index of the first column headed `name` (surrounding blanks ignored), else of the first headed
  /// `alt` (MindSpore's spelling); -1 when neither.
  int find(std::string_view name, std::string_view alt = {}) const;
  /// find(), or probe::Error (Format) "no column '<name>' in the header" naming the file and the column.
  int need(std::string_view name, std::string_view alt = {}) const;
};

/// `row`'s cell in column `c`; "" when c < 0 or the row is shorter.
const std::string& cell(const CsvRow& row, int c);

}  // namespace probe::report
