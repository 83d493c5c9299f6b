// The report's CSV reader (ReportCsv.h).
#include "report/ReportCsv.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "probe/error.h"
#include "support/Text.h"

namespace probe::report {

CsvTable CsvTable::read(const std::string& file, std::string_view what) {
  std::vector<CsvRow> rows = csv_read_file(file);
  if (rows.empty()) throw Error(ErrorKind::Format, fmt::format("empty {} CSV (no header)", what), file);
  CsvTable t;
  t.file = file;
  t.header = std::move(rows.front());
  // A blank line reads as one empty (or all-blank) cell.
  const auto blank = [](const CsvRow& row) { return row.size() == 1 && detail::trim_view(row[0]).empty(); };
  std::remove_copy_if(std::make_move_iterator(rows.begin() + 1), std::make_move_iterator(rows.end()),
                      std::back_inserter(t.rows), blank);
  return t;
}

int CsvTable::find(std::string_view name, std::string_view alt) const {
  for (std::string_view n : {name, alt})
    for (std::size_t i = 0; i < header.size() && !n.empty(); ++i)
      if (detail::trim_view(header[i]) == n) return static_cast<int>(i);
  return -1;
}

int CsvTable::need(std::string_view name, std::string_view alt) const {
  const int c = find(name, alt);
  if (c < 0)
    throw Error(ErrorKind::Format, fmt::format("no column '{}' in the header", name), file,
                std::string(name));
  return c;
}

const std::string& cell(const CsvRow& row, int c) {
  static const std::string empty;
  return c >= 0 && static_cast<std::size_t>(c) < row.size() ? row[static_cast<std::size_t>(c)] : empty;
}

}  // namespace probe::report
