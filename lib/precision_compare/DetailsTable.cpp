#include "precision_compare/DetailsTable.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>

#include "probe/error.h"
#include "probe/number_format.h"
#include "support/FileOps.h"
#include "support/Text.h"

namespace probe::precision_compare {

namespace {

constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{2} << 30;

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

// pandas.read_csv's default na_values.
bool pandas_na(std::string_view s) {
  static constexpr std::string_view kNa[] = {
      "",     "#N/A", "#N/A N/A", "#NA",  "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
      "<NA>", "N/A",  "NA",       "NULL", "NaN",     "None",     "n/a",  "nan",  "null"};
  for (auto na : kNa)
    if (s == na) return true;
  return false;
}

bool is_int_text(std::string_view s) {
  s = detail::trim_view(s);
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  if (s.empty() || s.size() > 18)
    return false;  // longer ones would not fit int64 for sure; pandas goes float
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// Digits with single underscores between them (Python's float literal grammar).
bool take_digits(std::string_view s, std::size_t& i, std::string& out) {
  std::size_t start = i;
  while (i < s.size()) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      out += s[i++];
    } else if (s[i] == '_' && i > start && i + 1 < s.size() &&
               std::isdigit(static_cast<unsigned char>(s[i - 1])) &&
               std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      ++i;
    } else {
      break;
    }
  }
  return i > start;
}

}  // namespace

std::optional<double> parse_python_float(std::string_view s) {
  s = detail::trim_view(s);
  if (s.empty()) return std::nullopt;
  bool negative = false;
  std::string_view body = s;
  if (body[0] == '+' || body[0] == '-') {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (iequals(body, "inf") || iequals(body, "infinity"))
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  if (iequals(body, "nan")) return std::numeric_limits<double>::quiet_NaN();
  std::string clean = negative ? "-" : "";
  std::size_t i = 0;
  bool int_part = take_digits(body, i, clean);
  bool frac_part = false;
  if (i < body.size() && body[i] == '.') {
    clean += '.';
    ++i;
    frac_part = take_digits(body, i, clean);
  }
  if (!int_part && !frac_part) return std::nullopt;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    clean += 'e';
    ++i;
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) clean += body[i++];
    if (!take_digits(body, i, clean)) return std::nullopt;
  }
  if (i != body.size()) return std::nullopt;
  // The grammar is validated above, so strtod (C locale: probe never calls setlocale) sees only plain decimal
  // text and rounds correctly, overflowing to inf like Python.
  return std::strtod(clean.c_str(), nullptr);
}

DetailsTable::DetailsTable(const std::string& path, std::string role) : path_(path), role_(std::move(role)) {
  namespace fs = std::filesystem;
  detail::require_exists(path, "no such file");
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (!fs::is_regular_file(status)) throw Error(ErrorKind::InvalidArgument, "not a regular file", path);
  auto size = fs::file_size(path, ec);
  if (!ec && size > kMaxFileBytes)
    throw Error(ErrorKind::Unsupported, "file larger than 2 GiB; split the run_ut output", path);
  build(csv_read_file(path));
}

DetailsTable::DetailsTable(std::vector<CsvRow> rows, std::string path, std::string role)
    : path_(std::move(path)), role_(std::move(role)) {
  build(std::move(rows));
}

void DetailsTable::build(std::vector<CsvRow> rows) {
  if (rows.empty() || (rows[0].size() == 1 && rows[0][0].empty()))
    throw Error(ErrorKind::Format, "empty file; expected a run_ut accuracy_checking_details CSV", path_);
  header_ = std::move(rows[0]);
  for (std::size_t c = 0; c < header_.size(); ++c) index_.emplace(header_[c], c);  // first duplicate wins
  // run_ut writes two CSVs and the result CSV is the one users open; its rows are shorter than its header
  // (an empty Message is left out), which the ragged-row check below would report as a truncated file.
  if (index_.count("Forward Test Success") && index_.count("Backward Test Success") &&
      !index_.count("Status"))
    throw Error(
        ErrorKind::Format,
        "a run_ut result CSV (accuracy_checking_result_*.csv); api_precision_compare reads the details "
        "CSV written beside it (accuracy_checking_details_*.csv)",
        path_);
  for (std::size_t r = 1; r < rows.size(); ++r) {
    auto& row = rows[r];
    if (row.size() == 1 && row[0].empty()) continue;  // pandas skips blank lines
    // DECISIONS (ragged rows): pandas pads a short row with NaN, which turns a truncated or hand-edited
    // file into a column of errors; probe refuses any row whose cell count differs from the header's.
    if (row.size() != header_.size())
      throw Error(ErrorKind::Format,
                  "row " + std::to_string(r) + " has " + std::to_string(row.size()) +
                      " cells but the header has " + std::to_string(header_.size()) +
                      " (a truncated or edited file)",
                  path_, "row " + std::to_string(r));
    rows_.push_back(std::move(row));
    row_numbers_.push_back(r);
  }
  kinds_.assign(header_.size(), Kind::Object);
  for (std::size_t c = 0; c < header_.size(); ++c) {
    bool all_int = true, all_float = true, any_na = false;
    for (std::size_t r = 0; r < rows_.size() && all_float; ++r) {
      const std::string& s = raw(r, c);
      if (pandas_na(s)) {
        any_na = true;
        continue;
      }
      if (!is_int_text(s)) all_int = false;
      if (!all_int && (s.find('_') != std::string::npos || !parse_python_float(s))) all_float = false;
    }
    if (all_float) kinds_[c] = all_int && !any_na ? Kind::Int : Kind::Float;
  }
}

std::optional<std::size_t> DetailsTable::column(std::string_view name) const {
  auto it = index_.find(std::string(name));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

void DetailsTable::require_columns(const std::vector<std::string>& names) const {
  std::string missing;
  for (const auto& n : names)
    if (!column(n)) missing += (missing.empty() ? "" : ",") + n;
  if (missing.empty()) return;
  std::string hint;
  if (column("Forward Test Success"))
    hint = " (this looks like a result CSV; pass the accuracy_checking_details CSV)";
  else if (column("Tested Dtype"))
    hint = " (this looks like a MindSpore run_ut details CSV; api_precision_compare reads PyTorch ones)";
  else if (column("比对结果"))
    hint = " (this looks like an api_precision_compare output; pass a run_ut accuracy_checking_details CSV)";
  throw Error(ErrorKind::Format, "the " + role_ + " details CSV lacks the columns " + missing + hint, path_,
              "header");
}

const std::string& DetailsTable::raw(std::size_t row, std::size_t col) const {
  static const std::string kEmpty;
  const auto& r = rows_.at(row);
  return col < r.size() ? r[col] : kEmpty;
}

bool DetailsTable::is_na(std::size_t row, std::size_t col) const { return pandas_na(raw(row, col)); }

double DetailsTable::to_float(std::size_t row, std::size_t col) const {
  if (is_na(row, col)) return std::numeric_limits<double>::quiet_NaN();
  const std::string& s = raw(row, col);
  RowSkip skip{"", path_, row_number(row), column_name(col), ""};
  if (detail::trim_view(s).empty()) {
    skip.message = "ERROR: Input data is an empty string";
    skip.detail = "the " + role_ + " cell is blank";
    throw skip;
  }
  auto v = parse_python_float(s);
  if (!v) {
    skip.message = "ERROR: Input data cannot be converted to float";
    skip.detail = "the " + role_ + " cell '" + s + "' is not a number";
    throw skip;
  }
  return *v;
}

std::string DetailsTable::copied(std::size_t row, std::size_t col) const {
  switch (kind(col)) {
    case Kind::Float:
      return format_fixed(to_float(row, col), 14);
    case Kind::Int:
      return std::to_string(std::strtoll(std::string(detail::trim_view(raw(row, col))).c_str(), nullptr, 10));
    case Kind::Object:
      break;
  }
  return is_na(row, col) ? "nan" : raw(row, col);
}

}  // namespace probe::precision_compare
