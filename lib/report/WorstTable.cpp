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

}  // namespace

std::string worst_outputs_table(const RunUtReport& r, std::size_t max_rows, int width) {
  const std::vector<std::size_t> order = flagged_order(r);
  if (order.empty() || max_rows == 0) return {};
  // Fixed columns: direction 8, status 7, value 9, threshold 9, and one space between columns (5); the name
  // gets 3/5 and the criterion 2/5 of what is left.
  const std::size_t w = static_cast<std::size_t>(std::max(width, 40));
  constexpr std::size_t kFixed = 8 + 7 + 9 + 9 + 5;
  const std::size_t rest = w - kFixed;
  const std::size_t name_w = rest * 3 / 5, crit_w = rest - name_w;
  const auto line = [&](std::string_view name, std::string_view dir, std::string_view status,
                        std::string_view crit, std::string_view value, std::string_view threshold) {
    std::string l = fit(name, name_w) + ' ' + fit(dir, 8) + ' ' + fit(status, 7) + ' ' + fit(crit, crit_w) +
                    ' ' + fit(value, 9) + ' ' + fit(threshold, 9);
    while (!l.empty() && l.back() == ' ') l.pop_back();
    return l + '\n';
  };
  std::string out =
      fmt::format("worst flagged outputs ({} of {}):\n", std::min(max_rows, order.size()), order.size());
  out += line("output", "dir", "status", "criterion", "value", "threshold");
  for (std::size_t k = 0; k < order.size() && k < max_rows; ++k) {
    const ReportOutput& o = r.outputs[order[k]];
    out += line(o.name, o.direction, to_string(o.status), o.criterion, number(o.value), number(o.threshold));
  }
  return out;
}

}  // namespace probe
