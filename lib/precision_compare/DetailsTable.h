// A run_ut details CSV as msprobe's api_precision_compare sees it through pandas.read_csv: columns by
// name, pandas' missing-value strings, and per-column type inference (which decides how copied cells print).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "probe/csv.h"

namespace probe::precision_compare {

/// Why a row could not be judged: msprobe's message (goes into the CSVs) plus where it came from.
struct RowSkip {
  std::string message;  ///< exact msprobe text, e.g. "ERROR: Input data is an empty string"
  std::string file;
  std::size_t row = 0;
  std::string column;
  std::string detail;  ///< probe's own explanation for the user (not written to the CSVs)
};

/// Python `float(s)`: surrounding whitespace, sign, digits with single underscores, inf/infinity/nan.
std::optional<double> parse_python_float(std::string_view s);

class DetailsTable {
 public:
  enum class Kind { Object, Int, Float };  ///< pandas column dtype

  /// Reads `path`; `role` ("NPU"/"GPU") is used in messages. Throws probe::Error on unusable files.
  DetailsTable(const std::string& path, std::string role);
  /// Builds from parsed rows (first row = header), for tests and in-memory use.
  DetailsTable(std::vector<CsvRow> rows, std::string path, std::string role);

  const std::string& path() const noexcept { return path_; }
  const std::string& role() const noexcept { return role_; }
  std::size_t rows() const noexcept { return rows_.size(); }
  std::optional<std::size_t> column(std::string_view name) const;
  /// Throws probe::Error listing every missing required column.
  void require_columns(const std::vector<std::string>& names) const;

  /// The cell text ("" for cells past the end of a short row).
  const std::string& raw(std::size_t row, std::size_t col) const;
  /// pandas would read this cell as NaN ("", "nan", "NULL", "N/A", ...).
  bool is_na(std::size_t row, std::size_t col) const;
  Kind kind(std::size_t col) const { return kinds_.at(col); }
  /// msprobe convert_str_to_float on the pandas value; throws RowSkip with msprobe's message.
  double to_float(std::size_t row, std::size_t col) const;
  /// The cell as msprobe writes it back after pandas read it (float columns print "%.14f", NaN prints "nan").
  std::string copied(std::size_t row, std::size_t col) const;
  /// Name of column `col` (for messages).
  const std::string& column_name(std::size_t col) const { return header_.at(col); }
  /// 1-based data-row number of `row` as users count it (the header is row 0).
  std::size_t row_number(std::size_t row) const { return row_numbers_.at(row); }

 private:
  void build(std::vector<CsvRow> rows);
  std::string path_, role_;
  CsvRow header_;
  std::vector<CsvRow> rows_;
  std::vector<std::size_t> row_numbers_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<Kind> kinds_;
};

}  // namespace probe::precision_compare
