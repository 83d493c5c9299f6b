// CSV files exactly as Python's csv module writes them for msprobe: UTF-8 with a BOM written
// once, CRLF row terminators, minimal quoting. Rows are flushed to disk as they are written.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "probe/export.h"

namespace probe {

/// One CSV row: already-formatted cells.
using CsvRow = std::vector<std::string>;

/// Appends rows to a CSV file. A new file gets the BOM and `header`; an existing one is continued.
class PROBE_API CsvWriter {
 public:
  /// Opens `path` for appending; writes BOM + header when the file is new or empty.
  CsvWriter(const std::string& path, const CsvRow& header);
  ~CsvWriter();
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  /// Writes one row and flushes it to the OS, so a killed process loses no completed row.
  void write_row(const CsvRow& row);
  /// Flushes and fsyncs the file (call at checkpoints where durability across power loss matters). Throws
  /// probe::Error (Io, naming the file) when either fails, e.g. on a full disk.
  void sync();
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

/// The one spreadsheet-formula policy of every CSV/xlsx cell probe copies from its inputs (API names, str
/// arguments): true when the cell, or any part after a ';', starts with = + - @ % (ASCII or full-width), TAB
/// or CR, and the cell is not a number Python's float() reads ("-1.5", "-inf").
PROBE_API bool csv_formula_risk(std::string_view cell);
/// `cell` with a leading apostrophe (spreadsheets' literal-text marker) when csv_formula_risk(cell).
PROBE_API std::string csv_escape_formula(std::string cell);

/// Encodes one row (no terminator) with minimal quoting.
PROBE_API std::string csv_encode_row(const CsvRow& row);

/// Parses CSV text (BOM optional, CRLF or LF, quoted fields with embedded newlines).
/// Throws probe::Error (Format) naming `file_for_errors` on an unterminated quote.
PROBE_API std::vector<CsvRow> csv_parse(std::string_view text, const std::string& file_for_errors = {});
/// Reads and parses a CSV file.
PROBE_API std::vector<CsvRow> csv_read_file(const std::string& path);

}  // namespace probe
