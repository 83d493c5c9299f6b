// The grad_compare page: similarities per parameter and in total against step, per rank, with the first
// suspicious step (msprobe's documented rule) marked.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "probe/csv.h"
#include "probe/error.h"
#include "probe/grad_compare.h"
#include "probe/report.h"
#include "report/ReportJson.h"
#include "report/ReportPage.h"
#include "support/Text.h"

namespace probe {

namespace {

namespace fs = std::filesystem;
using detail::trim;

// The rank of a "rank{R}" directory name; -1 for any other name.
long long rank_of(const std::string& name) {
  if (!name.starts_with("rank") || name.size() == 4) return -1;
  long long r = 0;
  for (std::size_t i = 4; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || r > 1'000'000'000) return -1;
    r = r * 10 + (name[i] - '0');
  }
  return r;
}

double number(const std::string& cell, const std::string& file, const std::string& field,
              const std::string& row) {
  const std::string t = trim(cell);
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size())
    throw Error(ErrorKind::Format, fmt::format("'{}' is not a number", cell), file, field, row);
  return v;
}

GradRankComparison read_similarities(const std::string& file, long long rank) {
  const auto rows = csv_read_file(file);
  if (rows.empty() || trim(rows[0].at(0)) != "step")
    throw Error(ErrorKind::Format, "the header is not \"step,<steps>\" (grad_compare's similarities.csv)",
                file, "step");
  GradRankComparison r;
  r.rank = rank;
  r.file = file;
  for (std::size_t k = 1; k < rows[0].size(); ++k) {
    const double s = number(rows[0][k], file, "step", "header");
    if (s != std::floor(s))
      throw Error(ErrorKind::Format, "a step is not an integer", file, "step", rows[0][k]);
    r.steps.push_back(static_cast<long long>(s));
  }
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const CsvRow& row = rows[i];
    if (row.size() == 1 && trim(row[0]).empty()) continue;
    if (row.size() != rows[0].size())
      throw Error(ErrorKind::Format,
                  fmt::format("{} cells where the header has {}", row.size(), rows[0].size()), file, "",
                  row[0]);
    GradSimilarityRow g;
    g.name = row[0];
    for (std::size_t k = 1; k < row.size(); ++k)
      g.values.push_back(number(row[k], file, fmt::format("step {}", r.steps[k - 1]), g.name));
    r.rows.push_back(std::move(g));
  }
  r.first_suspicious_step = grad_first_suspicious_step(r.steps, r.rows);
  return r;
}

// Geometry of the line plots (SVG user units).
constexpr int kW = 900, kH = 280, kL = 60, kR = 10, kT = 10, kB = 36;

// Every row's similarity against step: parameters thin, "summary" thick; the floor 0.97 dashed; the first
// suspicious step a vertical line. Each line carries a <title> naming its row (the browser's tooltip).
std::string rank_svg(const GradRankComparison& r, std::size_t index) {
  double lo = 0.97;
  for (const GradSimilarityRow& row : r.rows)
    for (double v : row.values)
      if (std::isfinite(v)) lo = std::min(lo, v);
  lo = std::max(0.0, std::floor((lo - 0.005) * 100) / 100);
  const double pw = kW - kL - kR, ph = kH - kT - kB;
  const std::size_t n = r.steps.size();
  const auto px = [&](std::size_t i) {
    return kL + (n > 1 ? pw * static_cast<double>(i) / static_cast<double>(n - 1) : pw / 2);
  };
  const auto py = [&](double v) { return kT + ph * (1 - (std::clamp(v, lo, 1.0) - lo) / (1 - lo)); };
  std::string svg = fmt::format(
      "<svg id=\"grad-plot-{}\" class=\"plot grad\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" "
      "role=\"img\">"
      "<title>rank {}: similarity against step</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
      "class=\"frame\"/>",
      index, kW, kH, kW, kH, r.rank, kL, kT, pw, ph);
  for (int k = 0; k <= 4; ++k) {
    const double v = lo + (1 - lo) * k / 4;
    svg += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"grid\"/><text x=\"{}\" y=\"{:.1f}\" "
        "class=\"tick\">{:.3g}</text>",
        kL, kW - kR, py(v), py(v), kL - 4, py(v) + 4, v);
  }
  const std::size_t label_every = std::max<std::size_t>(1, (n + 11) / 12);
  for (std::size_t i = 0; i < n; i += label_every)
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick mid\">{}</text>", px(i), kT + ph + 14,
                       r.steps[i]);
  svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"limit\"/>", kL, kW - kR,
                     py(0.97), py(0.97));
  if (r.first_suspicious_step) {
    const auto it = std::find(r.steps.begin(), r.steps.end(), *r.first_suspicious_step);
    const double x = px(static_cast<std::size_t>(it - r.steps.begin()));
    svg += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" class=\"mark\" id=\"grad-mark-{}\"/>", x, x,
        kT, kT + ph, index);
  }
  // Parameters first, the summary last (on top).
  for (std::size_t k = 0; k < r.rows.size(); ++k) {
    const GradSimilarityRow& row = r.rows[k];
    std::string points;
    for (std::size_t i = 0; i < row.values.size() && i < n; ++i)
      if (std::isfinite(row.values[i]))
        points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", px(i), py(row.values[i]));
    const bool summary = row.name == "summary" && k + 1 == r.rows.size();
    svg += fmt::format("<polyline class=\"{}\" points=\"{}\"><title>{}</title></polyline>",
                       summary ? "line summary" : "line param", points, report::html_text(row.name));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\">step</text>", kL + pw / 2, kH - 4);
  return svg + "</svg>";
}

constexpr std::string_view kGradScript = R"JS(
(function(){
var D=JSON.parse(document.getElementById('report-data').textContent);
D.ranks.forEach(function(r,k){var box=document.getElementById('grad-table-'+k);var t=el('table');var hr=el('tr');hr.appendChild(el('th',null,'parameter / step'));
r.steps.forEach(function(s){hr.appendChild(el('th',{'class':'num'},s));});t.appendChild(hr);
r.rows.forEach(function(row){var tr=el('tr');tr.appendChild(el('td',null,row.name));row.values.forEach(function(v,i){
var bad=i===0?v<0.97:(row.values[i-1]-v>0.03);tr.appendChild(el('td',{'class':'num'+(bad?' s-error':'')+(r.steps[i]===r.first_suspicious?' sel':'')},v===null?'':v.toFixed(4)));});t.appendChild(tr);});
box.appendChild(t);});
document.body.setAttribute('data-ready','1');
})();
)JS";

}  // namespace

GradReport read_grad_report(const std::string& dir) {
  GradReport g;
  g.dir = dir;
  std::error_code ec;
  std::vector<std::pair<long long, std::string>> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const long long rank = rank_of(it->path().filename().string());
    const fs::path file = it->path() / "similarities.csv";
    if (rank >= 0 && fs::is_regular_file(file)) files.emplace_back(rank, file.string());
  }
  if (ec) throw Error(ErrorKind::Io, "cannot list the directory: " + ec.message(), dir);
  if (files.empty()) throw Error(ErrorKind::Io, "no rank{R}/similarities.csv (grad_compare's output)", dir);
  std::sort(files.begin(), files.end());
  for (const auto& [rank, file] : files) g.ranks.push_back(read_similarities(file, rank));
  return g;
}

std::string grad_report_json(const GradReport& g) {
  using report::json_number;
  using report::json_string;
  std::string j = "{\"kind\":\"grad_compare\",\"dir\":" + json_string(g.dir) + ",\"ranks\":[";
  for (std::size_t k = 0; k < g.ranks.size(); ++k) {
    const GradRankComparison& r = g.ranks[k];
    j +=
        fmt::format("{}{{\"rank\":{},\"file\":{},\"first_suspicious\":{},\"steps\":[", k ? "," : "", r.rank,
                    json_string(r.file),
                    r.first_suspicious_step ? std::to_string(*r.first_suspicious_step) : std::string("null"));
    for (std::size_t i = 0; i < r.steps.size(); ++i) j += fmt::format("{}{}", i ? "," : "", r.steps[i]);
    j += "],\"rows\":[";
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
      j += fmt::format("{}\n{{\"name\":{},\"values\":[", i ? "," : "", json_string(r.rows[i].name));
      for (std::size_t s = 0; s < r.rows[i].values.size(); ++s)
        j += fmt::format("{}{}", s ? "," : "", json_number(r.rows[i].values[s]));
      j += "]}";
    }
    j += "]}";
  }
  return j + "]}";
}

std::string grad_report_html(const GradReport& g) {
  std::string h = report::page_start("probe grad_compare report",
                                     ".plot .line{fill:none;stroke-width:1.5;stroke:#8c959f}.plot "
                                     ".line.summary{stroke:#0969da;stroke-width:3}");
  h += fmt::format("<h1>probe grad_compare report</h1><p>{} ({} rank{})</p>\n", report::html_text(g.dir),
                   g.ranks.size(), g.ranks.size() == 1 ? "" : "s");
  h +=
      "<p class=\"legend\">A parameter's similarity is the share of its gradient's elements whose direction "
      "agrees between the two runs; summary (blue) is that share over all parameters. Purple line: the first "
      "suspicious step by msprobe's documented rule (any row below 0.97 at the first step, or dropping by "
      "more "
      "than 0.03 from the previous step; dashed: 0.97). The rule is empirical: read the curves too; the "
      "pointer "
      "on a line names its row.</p>\n";
  for (std::size_t k = 0; k < g.ranks.size(); ++k) {
    const GradRankComparison& r = g.ranks[k];
    h += fmt::format(
        "<h2>rank {}</h2><p id=\"grad-first-{}\">first suspicious step: <b>{}</b></p>\n", r.rank, k,
        r.first_suspicious_step ? std::to_string(*r.first_suspicious_step) : std::string("none"));
    h += rank_svg(r, k) + "\n";
    h += fmt::format(
        "<h3>Similarities (red: below 0.97 at the first step or a drop over 0.03)</h3><div "
        "id=\"grad-table-{}\"></div>\n",
        k);
  }
  return h + report::page_end(grad_report_json(g), "", kGradScript);
}

std::string write_grad_report(const std::string& dir, const std::string& out_dir) {
  return report::write_page(grad_report_html(read_grad_report(dir)), out_dir, "report_grad_");
}

}  // namespace probe
