#include "probe/csv.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "probe/error.h"
#include "support/FileOps.h"

namespace probe {

std::string csv_encode_row(const CsvRow& row) {
  std::string out;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (i) out += ',';
    const std::string& cell = row[i];
    if (cell.find_first_of(",\"\r\n") == std::string::npos) {
      out += cell;
      continue;
    }
    out += '"';
    for (char c : cell) {
      if (c == '"') out += '"';
      out += c;
    }
    out += '"';
  }
  return out;
}

namespace {

bool formula_start(std::string_view s) {
  if (s.empty()) return false;
  if (std::string_view("=+-@%\t\r").find(s[0]) != std::string_view::npos) return true;
  // Full-width ＋ － ＝ ％ ＠, which spreadsheets also take as the start of a formula.
  for (std::string_view f : {"\xEF\xBC\x8B", "\xEF\xBC\x8D", "\xEF\xBC\x9D", "\xEF\xBC\x85", "\xEF\xBC\xA0"})
    if (s.substr(0, f.size()) == f) return true;
  return false;
}

// Python's float(): surrounding whitespace allowed, no hex.
bool python_float(std::string_view s) {
  std::string text(s);
  const char* b = text.c_str();
  while (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r') ++b;
  if (*b == 0 || (b[0] == '0' && (b[1] == 'x' || b[1] == 'X'))) return false;
  char* end = nullptr;
  std::strtod(b, &end);
  if (end == b) return false;
  while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r') ++end;
  return *end == 0;
}

}  // namespace

bool csv_formula_risk(std::string_view cell) {
  bool risk = formula_start(cell);
  for (std::size_t i = cell.find(';'); !risk && i != std::string_view::npos; i = cell.find(';', i + 1))
    risk = formula_start(cell.substr(i + 1));
  return risk && !python_float(cell);
}

std::string csv_escape_formula(std::string cell) {
  if (csv_formula_risk(cell)) cell.insert(0, 1, '\'');
  return cell;
}

CsvWriter::CsvWriter(const std::string& path, const CsvRow& header) : path_(path) {
  file_ = std::fopen(path.c_str(), "ab");
  if (!file_)
    throw Error(ErrorKind::Io, std::string("cannot open for writing: ") + std::strerror(errno), path);
  std::fseek(file_, 0, SEEK_END);
  if (std::ftell(file_) == 0) {
    static constexpr char kBom[] = "\xEF\xBB\xBF";
    std::fwrite(kBom, 1, 3, file_);
    write_row(header);
  }
}

CsvWriter::~CsvWriter() {
  if (file_) std::fclose(file_);
}

void CsvWriter::write_row(const CsvRow& row) {
  std::string line = csv_encode_row(row);
  line += "\r\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
    throw Error(ErrorKind::Io, std::string("write failed: ") + std::strerror(errno), path_);
}

void CsvWriter::sync() {
  if (std::fflush(file_) != 0)
    throw Error(ErrorKind::Io, std::string("flush failed: ") + std::strerror(errno), path_);
  if (::fsync(::fileno(file_)) != 0)
    throw Error(ErrorKind::Io, std::string("fsync failed: ") + std::strerror(errno), path_);
}

std::vector<CsvRow> csv_parse(std::string_view text, const std::string& file_for_errors) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<CsvRow> rows;
  CsvRow row;
  std::string cell;
  bool in_quotes = false, row_started = false;
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          cell += '"';
          ++i;
        } else
          in_quotes = false;
      } else {
        if (c == '\n') ++line;
        cell += c;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_quotes = true;
        row_started = true;
        break;
      case ',':
        row.push_back(std::move(cell));
        cell.clear();
        row_started = true;
        break;
      case '\r':
        if (i + 1 < text.size() && text[i + 1] == '\n') break;
        [[fallthrough]];
      case '\n':
        row.push_back(std::move(cell));
        cell.clear();
        rows.push_back(std::move(row));
        row.clear();
        row_started = false;
        ++line;
        break;
      default:
        cell += c;
        row_started = true;
    }
  }
  if (in_quotes)
    throw Error(ErrorKind::Format, "unterminated quoted field starting before line " + std::to_string(line),
                file_for_errors);
  if (row_started || !cell.empty()) {
    row.push_back(std::move(cell));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<CsvRow> csv_read_file(const std::string& path) {
  return csv_parse(detail::read_whole_file(path, "cannot open", true), path);
}

}  // namespace probe
