// Internal: what the report's pages share: the SVG scatter plot, the style sheet, the table/hover script.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "probe/error_histogram.h"

namespace probe::report {

/// One scatter plot of `value(i)` for i < count against execution order, log scale.
struct ScatterPlot {
  std::string id;      ///< the <svg> element's id
  std::string column;  ///< the embedded column plotted, for the script that names the point under the pointer
  std::string title;   ///< the plot's <title>
  std::string x_label;  ///< "output", "entry"
  std::size_t count = 0;
  std::function<double(std::size_t)> value;                ///< NaN: not plotted; <= 0: on the bottom edge
  std::function<std::string_view(std::size_t)> cls;        ///< "pass", "warn", "err" or "skip": the colour
  double line = std::numeric_limits<double>::quiet_NaN();  ///< a dashed horizontal reference (a bound)
  std::optional<std::size_t> mark;                         ///< a vertical marker at this index
};

/// The SVG of `plot`, one <path> per colour (a round cap on a zero-length segment is a dot: a few bytes a
/// point where a <circle> costs ~40). Appends `"id":{axis}` to `hover_json`: the script places the points
/// again from it and names the one under the pointer.
std::string scatter_svg(const ScatterPlot& plot, std::string& hover_json);

/// The SVG bar chart of one output's element-error histogram: one bar per non-empty special count (zero,
/// below, above, non-finite) and per power-of-two bin from the first to the last non-empty one, bar height on
/// a log scale of the count; for bound units and ULPs a dashed line at 1 and the bars at or above it red.
std::string histogram_svg(const std::string& id, const std::string& title, const ErrorHistogram& h);

/// `"min_exp":e,"counts":[...],"zero":..,"below":..,"above":..,"nonfinite":..,"unit":"..."`: `h` with its
/// bins trimmed to the first..last non-empty one (min_exp: the first's exponent).
std::string histogram_json(const ErrorHistogram& h);

/// The pages' style sheet.
extern const std::string_view kStyle;

/// Script helpers both pages use: el(), fmt(), makeTable() (filter, sort, 100 rows a page) and hover().
extern const std::string_view kCommonScript;

/// A page up to and with its <body> tag: the doctype, a Content-Security-Policy that allows inline style and
/// script only (the page loads nothing), `<title>`, the style sheet and `extra_style`.
std::string page_start(std::string_view title, std::string_view extra_style = {});

/// The table of every row of a page: its controls and, when `selected` is not empty, the pane showing the
/// clicked row.
struct TableSection {
  std::string_view heading;      ///< the <h2> above the table
  std::string_view placeholder;  ///< the filter box's (#q) placeholder
  std::string_view selects;      ///< the <select> filters' markup, between the filter box and the paging
  std::string_view hint;         ///< markup between the controls and the table ("" for none)
  std::string_view selected;     ///< the <h2> of the pane (#selected) and the tooltip (#tip); "" for neither
};
/// The section's markup: heading, controls (#q, the selects, #prev, #next, #pageinfo), #all-table, the pane.
std::string table_section(const TableSection& s);

/// A page's end: `data_json` (#report-data) and, when not empty, `plot_points` (#plot-points) as JSON script
/// elements, then kCommonScript and the page's `script`.
std::string page_end(std::string_view data_json, std::string_view plot_points, std::string_view script);

/// Writes `html` to `out_dir/<prefix><ts>.html` (created if missing; a fresh stamp when the name exists) and
/// returns the path. Throws probe::Error (Io) naming the file.
std::string write_page(const std::string& html, const std::string& out_dir, const std::string& prefix);

/// `s` with & < > " escaped for HTML text and attributes.
std::string html_text(std::string_view s);

}  // namespace probe::report
