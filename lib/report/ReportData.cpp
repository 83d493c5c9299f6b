// Reading run_ut's result and details CSVs into the report's model, and the JSON the page embeds.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>

#include "probe/csv.h"
#include "probe/error.h"
#include "probe/report.h"
#include "report/ReportCsv.h"
#include "report/ReportJson.h"
#include "report/ReportPage.h"
#include "support/Text.h"

namespace probe {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The details CSV's columns the report reads, by their header (PyTorch's and the online checker's layout).
constexpr std::string_view kCosine = "余弦相似度";
constexpr std::string_view kMaxAbs = "最大绝对误差";
constexpr std::string_view kMaxRel = "相对误差最大值";

using detail::trim;
using report::cell;
using report::CsvTable;

double number_cell(const std::string& cell) {
  const std::string t = trim(cell);
  if (t.empty()) return kNaN;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() ? v : kNaN;
}

// The number right after `key` in `text` (from `from`), NaN when the key is absent or no number follows.
double number_after(std::string_view text, std::string_view key, std::size_t from = 0) {
  const auto p = text.find(key, from);
  if (p == std::string_view::npos) return kNaN;
  const std::string rest(text.substr(p + key.size(), 40));
  char* end = nullptr;
  const double v = std::strtod(rest.c_str(), &end);
  return end == rest.c_str() ? kNaN : v;
}

// The token right after `key` (up to a comma, semicolon or space), as printed.
std::string token_after(std::string_view text, std::string_view key, std::size_t from) {
  const auto p = text.find(key, from);
  if (p == std::string_view::npos) return {};
  const auto b = p + key.size();
  const auto e = text.find_first_of(",; \n", b);
  return std::string(text.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
}

Status parse_cell_status(const std::string& cell, const std::string& file, const std::string& column,
                         const std::string& api) {
  if (auto s = parse_status(trim(cell))) return *s;
  throw Error(ErrorKind::Format, fmt::format("unknown status '{}'", cell), file, column, api);
}

// Fills rule, criterion, value, threshold, ratio and the worst element from the Message: the error bound's
// (D14, D16) or run_ut's own rule ("Relative error is greater than 0.01, consider as error").
void explain(ReportOutput& o) {
  const std::string_view m = o.message;
  o.value = o.threshold = o.ratio = kNaN;
  if (m.find("run_ut's rule judged:") == std::string_view::npos) {
    if (const auto d14 = m.find("error bound (D14"); d14 != std::string_view::npos) {
      const auto close = m.find("):", d14);
      o.rule = std::string(m.substr(d14, close == std::string_view::npos ? 0 : close + 1 - d14));
    } else if (m.starts_with("dataflow (D16)")) {
      o.rule = "dataflow (D16)";
    }
  }
  if (!o.rule.empty()) {
    const double largest = number_after(m, "largest error/bound ");
    const auto worst = m.find("worst at [");
    if (worst != std::string_view::npos) {
      const auto close = m.find(']', worst);
      o.worst_index =
          std::string(m.substr(worst + 9, close == std::string_view::npos ? 0 : close - worst - 8));
      o.worst_device = token_after(m, "device ", worst);
      o.worst_bench = token_after(m, "bench ", worst);
      if (o.worst_bench.empty()) o.worst_bench = token_after(m, "sum ", worst);
      o.value = number_after(m, "error ", worst);
      o.threshold = number_after(m, "bound ", worst);
      if (std::isnan(o.threshold)) o.threshold = number_after(m, "> bound ", worst);
    }
    const auto beyond = m.find(" elements beyond");
    if (beyond != std::string_view::npos && o.status != Status::Pass) {
      const auto colon = m.rfind(": ", beyond);
      const auto from = colon == std::string_view::npos ? 0 : colon + 2;
      o.criterion = fmt::format("{} beyond bound", m.substr(from, beyond - from));
    } else {
      o.criterion = "largest error / bound";
    }
    if (!std::isnan(largest)) {
      o.ratio = largest;
    } else if (const double times = number_after(m, "(", m.rfind("bound "));
               !std::isnan(times) && m.find("x)", m.rfind("bound ")) != std::string_view::npos) {
      o.ratio = times;
    } else if (!std::isnan(o.value) && !std::isnan(o.threshold) && o.threshold > 0) {
      o.ratio = o.value / o.threshold;
    }
    return;
  }
  // run_ut's rule: the first non-blank line of the Message (after a D14 preamble, if any) is the criterion.
  std::string_view body = m;
  o.rule = "run_ut's rule";
  if (const auto judged = m.find("run_ut's rule judged:"); judged != std::string_view::npos) {
    o.rule = "run_ut's rule (no magnitude bench for D14)";
    body = m.substr(judged + 21);
  }
  std::string line;
  for (std::size_t b = 0; b < body.size() && line.empty();) {
    const auto e = body.find('\n', b);
    line = trim(body.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    b = e == std::string_view::npos ? body.size() : e + 1;
  }
  o.criterion = line;
  const auto than = line.find("than ");
  if (than != std::string::npos) {
    o.threshold = number_after(line, "than ", than);
    // MindSpore's "max absolute difference is greater than threshold: 0.0001".
    if (std::isnan(o.threshold)) o.threshold = number_after(line, "threshold: ", than);
    if (line.find("elative error") != std::string::npos ||
        line.find("elative difference") != std::string::npos)
      o.value = o.max_rel;
    else if (line.find("bs error") != std::string::npos ||
             line.find("bsolute difference") != std::string::npos)
      o.value = o.max_abs;
    else if (line.find("osine") != std::string::npos)
      o.value = o.cosine;
    if (line.find("greater than") != std::string::npos && o.threshold > 0 && !std::isnan(o.value))
      o.ratio = o.value / o.threshold;
  }
}

// The histogram sidecar (run_ut --report), when present: each row's counts into the output of its name (a
// resumed run may repeat an output: its last row wins).
void read_histograms(const std::string& details_csv, std::vector<ReportOutput>& outputs) {
  const std::string path = error_histogram_path(details_csv);
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return;
  const auto rows = csv_read_file(path);
  const CsvRow header = error_histogram_header();
  if (rows.empty() || rows[0].size() != header.size())
    throw Error(ErrorKind::Format,
                fmt::format("the header is not the {} columns of a histogram sidecar", header.size()), path);
  for (std::size_t k = 0; k < header.size(); ++k)
    if (trim(rows[0][k]) != header[k])
      throw Error(ErrorKind::Format, fmt::format("column {} is '{}', not '{}'", k + 1, rows[0][k], header[k]),
                  path, header[k]);
  std::map<std::string_view, std::size_t> by_name;
  for (std::size_t i = 0; i < outputs.size(); ++i) by_name.emplace(outputs[i].name, i);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const CsvRow& row = rows[i];
    if (row.size() == 1 && trim(row[0]).empty()) continue;
    if (row.size() != header.size())
      throw Error(ErrorKind::Format,
                  fmt::format("row {} has {} cells, the header {}", i + 1, row.size(), header.size()), path);
    ErrorHistogram h;
    const std::string unit = trim(row[1]);
    if (unit == to_string(HistogramUnit::BoundUnits))
      h.unit = HistogramUnit::BoundUnits;
    else if (unit == to_string(HistogramUnit::Ulp))
      h.unit = HistogramUnit::Ulp;
    else if (unit == to_string(HistogramUnit::RelativeError))
      h.unit = HistogramUnit::RelativeError;
    else
      throw Error(ErrorKind::Format, fmt::format("unknown unit '{}'", unit), path, "Unit", row[0]);
    std::vector<std::int64_t> c;
    for (std::size_t k = 2; k < row.size(); ++k) {
      const std::string t = trim(row[k]);
      char* end = nullptr;
      const long long v = std::strtoll(t.c_str(), &end, 10);
      if (t.empty() || end != t.c_str() + t.size() || v < 0)
        throw Error(ErrorKind::Format, fmt::format("'{}' is not a count", row[k]), path, header[k], row[0]);
      c.push_back(v);
    }
    h.zero = c[0];
    h.below = c[1];
    for (std::size_t b = 0; b < h.counts.size(); ++b) h.counts[b] = c[2 + b];
    h.above = c[2 + h.counts.size()];
    h.nonfinite = c[3 + h.counts.size()];
    if (auto it = by_name.find(trim(row[0])); it != by_name.end()) outputs[it->second].histogram = h;
  }
}

}  // namespace

namespace report {

std::vector<ReportApi> read_result_csv(const std::string& result_csv) {
  std::vector<ReportApi> apis;
  const CsvTable t = CsvTable::read(result_csv, "result");
  const int r_name = t.need("API name", "API Name"), r_fwd = t.need("Forward Test Success"),
            r_bwd = t.need("Backward Test Success"), r_msg = t.need("Message");
  for (const CsvRow& row : t.rows) {
    ReportApi a;
    a.name = cell(row, r_name);
    a.forward = cell(row, r_fwd);
    a.backward = cell(row, r_bwd);
    a.message = cell(row, r_msg);
    // A blank cell: no such direction (a parameter-gradient row has no forward).
    std::optional<Status> fwd, bwd;
    if (!trim(a.forward).empty())
      fwd = parse_cell_status(a.forward, result_csv, "Forward Test Success", a.name);
    if (!trim(a.backward).empty())
      bwd = parse_cell_status(a.backward, result_csv, "Backward Test Success", a.name);
    // An API counts as its worst direction, SKIP when its forward was skipped (run_ut's summary line).
    a.status = fwd ? *fwd : bwd ? *bwd : Status::Skip;
    if (fwd && *fwd != Status::Skip && bwd && *bwd != Status::Skip &&
        static_cast<int>(*bwd) > static_cast<int>(*fwd))
      a.status = *bwd;
    apis.push_back(std::move(a));
  }
  return apis;
}

std::string summary_json(const std::vector<ReportApi>& apis) {
  constexpr Status kOrder[] = {Status::Pass, Status::Warning, Status::Error, Status::Skip};
  const auto counts = [&](const std::array<std::size_t, 4>& c) {
    std::string s = "{";
    for (Status st : kOrder)
      s += fmt::format("{}{}:{}", s.size() > 1 ? "," : "", json_string(to_string(st)),
                       c[static_cast<int>(st)]);
    return s + "}";
  };
  std::array<std::size_t, 4> all{}, fwd{}, bwd{};
  for (const ReportApi& a : apis) {
    ++all[static_cast<int>(a.status)];
    if (auto s = parse_status(trim(a.forward))) ++fwd[static_cast<int>(*s)];
    if (auto s = parse_status(trim(a.backward))) ++bwd[static_cast<int>(*s)];
  }
  return fmt::format("\"apis\":{},\"status\":{},\"forward\":{},\"backward\":{}", apis.size(), counts(all),
                     counts(fwd), counts(bwd));
}

}  // namespace report

RunUtReport read_run_ut_report(const std::string& result_csv, const std::string& details_csv) {
  RunUtReport r;
  r.result_csv = result_csv;
  r.details_csv = details_csv;
  r.apis = report::read_result_csv(result_csv);
  std::map<std::string, std::size_t, std::less<>> by_name;
  for (std::size_t i = 0; i < r.apis.size(); ++i) by_name.emplace(r.apis[i].name, i);
  const CsvTable t = CsvTable::read(details_csv, "details");
  const int d_name = t.need("API Name"), d_dtype = t.need("DEVICE Dtype", "Tested Dtype"),
            d_shape = t.need("Shape"), d_cos = t.need(kCosine, "Cosine"),
            d_abs = t.need(kMaxAbs, "MaxAbsErr"), d_rel = t.need(kMaxRel, "MaxRelativeErr"),
            d_status = t.need("Status"), d_msg = t.need("Message");
  for (const CsvRow& row : t.rows) {
    ReportOutput o;
    o.name = cell(row, d_name);
    o.dtype = cell(row, d_dtype);
    o.shape = cell(row, d_shape);
    o.status = parse_cell_status(cell(row, d_status), details_csv, "Status", o.name);
    o.cosine = number_cell(cell(row, d_cos));
    o.max_abs = number_cell(cell(row, d_abs));
    o.max_rel = number_cell(cell(row, d_rel));
    o.message = cell(row, d_msg);
    // The row belongs to the longest result-CSV API name it starts with, followed by ".forward" or
    // ".backward" (matching whole names: a dumped name need not parse as an API name).
    for (const char* dir : {".forward", ".backward"}) {
      const auto p = o.name.rfind(dir);
      if (p == std::string::npos || p == 0) continue;
      if (by_name.contains(std::string_view(o.name).substr(0, p)) || o.api.empty()) {
        o.api = o.name.substr(0, p);
        o.direction = std::string(dir + 1);
      }
    }
    if (!by_name.contains(o.api)) o.api.clear();
    explain(o);
    r.outputs.push_back(std::move(o));
  }
  read_histograms(details_csv, r.outputs);
  return r;
}

std::vector<std::size_t> flagged_order(const RunUtReport& r) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < r.outputs.size(); ++i)
    if (r.outputs[i].status == Status::Error || r.outputs[i].status == Status::Warning) idx.push_back(i);
  const auto key = [&](std::size_t i) {
    const ReportOutput& o = r.outputs[i];
    const double ratio = std::isnan(o.ratio) ? -1.0 : o.ratio;
    const double rel = std::isnan(o.max_rel) ? -1.0 : o.max_rel;
    return std::tuple(o.status == Status::Error ? 0 : 1, -ratio, -rel);
  };
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  return idx;
}

std::string run_ut_report_json(const RunUtReport& r) {
  using report::json_number;
  using report::json_string;
  constexpr Status kOrder[] = {Status::Pass, Status::Warning, Status::Error, Status::Skip};
  const auto counts = [&](const std::array<std::size_t, 4>& c) {
    std::string s = "{";
    for (Status st : kOrder)
      s += fmt::format("{}{}:{}", s.size() > 1 ? "," : "", json_string(to_string(st)),
                       c[static_cast<int>(st)]);
    return s + "}";
  };
  std::map<std::string, std::array<std::size_t, 4>> dtypes;
  for (const ReportOutput& o : r.outputs)
    ++dtypes[trim(o.dtype).empty() ? std::string("(no dtype)") : o.dtype][static_cast<int>(o.status)];

  std::string j = "{\"kind\":\"run_ut\"";
  j += ",\"result_csv\":" + json_string(r.result_csv) + ",\"details_csv\":" + json_string(r.details_csv);
  j += ",\"summary\":{" + report::summary_json(r.apis) + ",\"dtypes\":[";
  bool first = true;
  for (const auto& [dtype, c] : dtypes) {
    j += fmt::format("{}[{},{}]", first ? "" : ",", json_string(dtype), counts(c));
    first = false;
  }
  j += "]}";
  j += ",\"columns\":[\"name\",\"api\",\"direction\",\"dtype\",\"shape\",\"status\",\"cosine\",\"max_abs\","
       "\"max_rel\",\"ratio\",\"rule\",\"criterion\",\"value\",\"threshold\",\"worst_index\",\"worst_bench\","
       "\"worst_device\",\"message\"]";
  // Cells that repeat across rows (API, direction, dtype, shape, status, rule, criterion) are indices into
  // "strings": at 10k APIs that halves the page.
  j += ",\"interned\":[\"api\",\"direction\",\"dtype\",\"shape\",\"status\",\"rule\",\"criterion\"]";
  std::map<std::string, std::size_t, std::less<>> ids;
  std::vector<std::string_view> strings;
  const auto id = [&](std::string_view s) {
    auto it = ids.find(s);
    if (it == ids.end()) {
      it = ids.emplace(std::string(s), strings.size()).first;
      strings.push_back(it->first);
    }
    return it->second;
  };
  std::string rows;
  for (std::size_t i = 0; i < r.outputs.size(); ++i) {
    const ReportOutput& o = r.outputs[i];
    const bool pass = o.status == Status::Pass;
    // A passed row's Message adds nothing the parsed fields do not show; leaving it out keeps 10k APIs small.
    rows += fmt::format("{}[{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}]", i ? ",\n" : "\n",
                        json_string(o.name), id(o.api), id(o.direction), id(o.dtype), id(o.shape),
                        id(to_string(o.status)), json_number(o.cosine), json_number(o.max_abs),
                        json_number(o.max_rel), json_number(o.ratio), id(o.rule), id(o.criterion),
                        json_number(o.value), json_number(o.threshold), json_string(o.worst_index),
                        json_string(o.worst_bench), json_string(o.worst_device),
                        json_string(pass ? std::string_view() : std::string_view(o.message)));
  }
  j += ",\"strings\":[";
  for (std::size_t k = 0; k < strings.size(); ++k) {
    if (k) j += ',';
    j += json_string(strings[k]);
  }
  j += "],\"outputs\":[" + rows;
  j += "],\"flagged\":[";
  first = true;
  for (std::size_t i : flagged_order(r)) {
    j += fmt::format("{}{}", first ? "" : ",", i);
    first = false;
  }
  // The flagged outputs' element-error histograms (run_ut --report's sidecar), worst first.
  j += "],\"histograms\":[";
  first = true;
  for (std::size_t i : flagged_order(r)) {
    if (!r.outputs[i].histogram) continue;
    j += fmt::format("{}{{\"output\":{},{}}}", first ? "" : ",", i,
                     report::histogram_json(*r.outputs[i].histogram));
    first = false;
  }
  j += "],\"skips\":[";
  // SKIP reasons grouped: every API with a SKIP direction, by its Message.
  std::map<std::string, std::vector<std::string>> reasons;
  std::vector<std::string> reason_order;
  for (const ReportApi& a : r.apis) {
    if (trim(a.forward) != to_string(Status::Skip) && trim(a.backward) != to_string(Status::Skip)) continue;
    const std::string reason = trim(a.message).empty() ? std::string("(no reason given)") : trim(a.message);
    auto [it, added] = reasons.try_emplace(reason);
    if (added) reason_order.push_back(reason);
    it->second.push_back(a.name);
  }
  first = true;
  for (const std::string& reason : reason_order) {
    const auto& names = reasons[reason];
    j += fmt::format("{}{{\"reason\":{},\"count\":{},\"apis\":[", first ? "" : ",", json_string(reason),
                     names.size());
    for (std::size_t k = 0; k < names.size() && k < 20; ++k) {
      if (k) j += ',';
      j += json_string(names[k]);
    }
    j += "]}";
    first = false;
  }
  j += "]}";
  return j;
}

}  // namespace probe
