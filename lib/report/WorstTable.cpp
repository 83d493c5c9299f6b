// The short table of the worst flagged outputs that run_ut prints before its summary line.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "probe/report.h"

namespace probe {

namespace {

// `s` cut to `n` columns (bytes: names and criteria are ASCII), the cut marked with '~'.
std::string fit(std::string_view s, std::size_t n) {
  if (s.size() <= n) return std::string(s) + std::string(n - s.size(), ' ');
  if (n == 0) return {};
  return std::string(s.substr(0, n - 1)) + "~";
}

std::string number(double v) { return std::isfinite(v) ? fmt::format("{:.3g}", v) : std::string("-"); }

// A bound rule (D14's error bound, D16's dataflow) judges each element: its value is the worst element's
// error and its limit that element's bound. run_ut's rule compares one metric with a fixed threshold.
bool judged_by_bound(const ReportOutput& o) {
  return o.rule.starts_with("error bound") || o.rule.starts_with("dataflow");
}

}  // namespace

std::string worst_outputs_table(const RunUtReport& r, std::size_t max_rows, int width) {
  const std::vector<std::size_t> order = flagged_order(r);
  if (order.empty() || max_rows == 0) return {};
  // Columns: API and criterion share what the fixed ones leave; in a narrow terminal the direction, then the
  // threshold, then the criterion go, so that the API keeps at least 20 columns.
  struct Column {
    std::string_view title;
    std::size_t width;  // 0: shares the rest
    bool shown;
  };
  // The headers say what the numbers are: the worst element's error against its bound, or the criterion's
  // value against its threshold; a table holding both kinds marks each limit "b" (bound) or "t" (threshold).
  std::size_t bound_rows = 0, shown_rows = std::min(max_rows, order.size());
  for (std::size_t k = 0; k < shown_rows; ++k) bound_rows += judged_by_bound(r.outputs[order[k]]);
  const bool all_bound = bound_rows == shown_rows, mixed = bound_rows > 0 && !all_bound;
  const std::string_view value_title = all_bound ? "worst err" : "value";
  const std::string_view limit_title = all_bound ? "bound" : mixed ? "bound|thr" : "threshold";
  Column cols[] = {{"API", 0, true},       {"dir", 8, true},       {"status", 7, true},
                   {"criterion", 0, true}, {value_title, 9, true}, {limit_title, mixed ? 11u : 9u, true}};
  const std::size_t w = static_cast<std::size_t>(std::max(width, 40));
  const auto widths = [&](std::size_t& name_w, std::size_t& crit_w) {
    std::size_t fixed = 0, shown = 0;
    for (const Column& c : cols)
      if (c.shown) fixed += c.width, ++shown;
    const std::size_t rest = w - std::min(w, fixed + shown - 1);
    crit_w = cols[3].shown ? rest * 2 / 5 : 0;
    name_w = rest - crit_w;
  };
  std::size_t name_w = 0, crit_w = 0;
  for (int drop : {1, 5, 3}) {
    widths(name_w, crit_w);
    if (name_w >= 20) break;
    cols[drop].shown = false;
  }
  widths(name_w, crit_w);
  const auto line = [&](std::initializer_list<std::string_view> cells) {
    std::string l;
    std::size_t k = 0;
    for (std::string_view cell : cells) {
      const Column& c = cols[k];
      const std::size_t cw = c.width ? c.width : (k == 0 ? name_w : crit_w);
      if (c.shown) {
        if (!l.empty()) l += ' ';
        l += fit(cell, cw);
      }
      ++k;
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    return l + '\n';
  };
  std::string out =
      fmt::format("worst flagged outputs ({} of {}):\n", std::min(max_rows, order.size()), order.size());
  out += line({"API", "dir", "status", "criterion", value_title, limit_title});
  for (std::size_t k = 0; k < order.size() && k < max_rows; ++k) {
    const ReportOutput& o = r.outputs[order[k]];
    const std::string value = number(o.value),
                      threshold = (mixed ? (judged_by_bound(o) ? "b " : "t ") : "") + number(o.threshold);
    out += line(
        {o.api.empty() ? o.name : o.api, o.direction, to_string(o.status), o.criterion, value, threshold});
  }
  return out;
}

std::string worst_compare_table(const CompareReport& r, std::size_t max_rows, int width) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const CompareReportRow& x = r.rows[i];
    const std::string_view v = x.verdict;
    if (x.differs || v == "No" || v == "Different") order.push_back(i);
  }
  if (order.empty() || max_rows == 0) return {};
  const auto rel = [&](std::size_t i) { return std::isnan(r.rows[i].max_rel) ? -1.0 : r.rows[i].max_rel; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rel(a) > rel(b); });
  // Fixed columns: verdict 9, cosine 9, max abs 9, max rel 9, four spaces; the name takes the rest.
  const std::size_t w = static_cast<std::size_t>(std::max(width, 40));
  const std::size_t name_w = w - (4 * 9 + 4);
  const auto line = [&](std::string_view name, std::string_view verdict, std::string_view cos,
                        std::string_view abs, std::string_view rel_cell) {
    std::string l = fit(name, name_w);
    for (std::string_view c : {verdict, cos, abs, rel_cell}) {
      l += ' ';
      l += fit(c, 9);
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    return l + '\n';
  };
  std::string out =
      fmt::format("worst rows ({} of {} flagged):\n", std::min(max_rows, order.size()), order.size());
  out += line("NPU name", "verdict", "cosine", "max abs", "max rel");
  for (std::size_t k = 0; k < order.size() && k < max_rows; ++k) {
    const CompareReportRow& x = r.rows[order[k]];
    const std::string verdict = x.differs ? "differs" : x.verdict;
    out += line(x.name, verdict, number(x.cosine), number(x.max_abs), number(x.max_rel));
  }
  return out;
}

}  // namespace probe
