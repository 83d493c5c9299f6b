// The api_precision_compare page: the three-way verdicts (NPU against GPU, both against the CPU bench) per
// direction, the flagged outputs first with the metric that failed, each output's worst NPU/GPU error ratio.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
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
// api_precision_compare's details columns: a ratio of NPU to GPU error ends in 比值 ("ratio"), its verdict
// in 判定结果 ("verdict"); 比对结果 is the output's result and 比对算法 the algorithm that judged.
constexpr std::string_view kRatioSuffix = "比值", kVerdictSuffix = "判定结果";

using detail::trim;

int severity(std::string_view verdict) {
  const auto s = parse_status(verdict);
  return !s ? -1 : *s == Status::Error ? 3 : *s == Status::Warning ? 2 : *s == Status::Pass ? 1 : 0;
}

}  // namespace

PrecisionReport read_precision_report(const std::string& result_csv, const std::string& details_csv) {
  PrecisionReport r;
  r.result_csv = result_csv;
  r.details_csv = details_csv;
  r.apis = report::read_result_csv(result_csv);
  const report::CsvTable t = report::CsvTable::read(details_csv, "details");
  const int c_name = t.need("API Name", "API name"), c_result = t.need("比对结果"),
            c_algo = t.find("比对算法"), c_msg = t.find("Message");
  std::vector<std::pair<int, int>> ratio_cols;  // ratio column, its verdict column (-1: none)
  for (std::size_t i = 0; i < t.header.size(); ++i)
    if (trim(t.header[i]).ends_with(kRatioSuffix)) {
      const bool verdict_next = i + 1 < t.header.size() && trim(t.header[i + 1]).ends_with(kVerdictSuffix);
      ratio_cols.emplace_back(static_cast<int>(i), verdict_next ? static_cast<int>(i) + 1 : -1);
    }
  using report::cell;
  for (const CsvRow& row : t.rows) {
    PrecisionReportRow x;
    x.name = cell(row, c_name);
    x.result = trim(cell(row, c_result));
    x.algorithm = trim(cell(row, c_algo));
    x.message = cell(row, c_msg);
    x.worst_ratio = kNaN;
    std::tuple<int, double> worst{-2, 0.0};
    for (const auto& [c, v] : ratio_cols) {
      const std::string text = trim(cell(row, c));
      char* end = nullptr;
      const double ratio = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(ratio)) continue;
      const std::string verdict = trim(cell(row, v));
      x.ratios.emplace_back(trim(t.header[static_cast<std::size_t>(c)]), ratio);
      x.verdicts.push_back(verdict);
      // The worst: the most severe verdict, then the largest ratio.
      const std::tuple<int, double> key{severity(verdict), ratio};
      if (key > worst) {
        worst = key;
        x.worst_metric = x.ratios.back().first;
        x.worst_ratio = ratio;
      }
    }
    r.rows.push_back(std::move(x));
  }
  return r;
}

std::string precision_report_json(const PrecisionReport& r) {
  using report::json_number;
  using report::json_string;
  std::string j = "{\"kind\":\"api_precision_compare\",\"result_csv\":" + json_string(r.result_csv) +
                  ",\"details_csv\":" + json_string(r.details_csv);
  j += ",\"summary\":{" + report::summary_json(r.apis) + "}";
  j += ",\"columns\":[\"name\",\"result\",\"algorithm\",\"worst_metric\",\"worst_ratio\",\"message\","
       "\"ratios\"]";
  j += ",\"rows\":[";
  std::vector<std::size_t> flagged;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const PrecisionReportRow& x = r.rows[i];
    j += fmt::format("{}[{},{},{},{},{},{},[", i ? ",\n" : "\n", json_string(x.name), json_string(x.result),
                     json_string(x.algorithm), json_string(x.worst_metric), json_number(x.worst_ratio),
                     json_string(x.message));
    for (std::size_t k = 0; k < x.ratios.size(); ++k)
      j += fmt::format("{}[{},{},{}]", k ? "," : "", json_string(x.ratios[k].first),
                       json_number(x.ratios[k].second), json_string(x.verdicts[k]));
    j += "]]";
    if (x.result == to_string(Status::Error) || x.result == to_string(Status::Warning)) flagged.push_back(i);
  }
  // Flagged: errors before Warnings, each by the worst ratio, largest first.
  const auto key = [&](std::size_t i) {
    const double ratio = std::isnan(r.rows[i].worst_ratio) ? -1.0 : r.rows[i].worst_ratio;
    return std::tuple(r.rows[i].result == to_string(Status::Error) ? 0 : 1, -ratio);
  };
  std::stable_sort(flagged.begin(), flagged.end(),
                   [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  j += "],\"flagged\":[";
  for (std::size_t k = 0; k < flagged.size(); ++k) j += fmt::format("{}{}", k ? "," : "", flagged[k]);
  return j + "]}";
}

namespace {

std::string_view precision_class(const PrecisionReportRow& x) {
  const auto s = parse_status(x.result);
  if (!s) return "skip";
  return *s == Status::Error ? "err" : *s == Status::Warning ? "warn" : *s == Status::Pass ? "pass" : "skip";
}

constexpr std::string_view kPrecisionScript = R"JS(
(function(){
var D=JSON.parse(document.getElementById('report-data').textContent);
var H=JSON.parse(document.getElementById('plot-points').textContent);
var C={};D.columns.forEach(function(c,i){C[c]=i;});
var ST=['pass','Warning','error','SKIP'];
var t=el('table');var hr=el('tr');['','total'].concat(ST).forEach(function(h){hr.appendChild(el('th',null,h));});t.appendChild(hr);
[['APIs',D.summary.status],['forward',D.summary.forward],['backward',D.summary.backward]].forEach(function(r){var tr=el('tr');tr.appendChild(el('th',null,r[0]));
tr.appendChild(el('td',{'class':'num'},ST.reduce(function(a,s){return a+r[1][s];},0)));ST.forEach(function(s){tr.appendChild(el('td',{'class':'num s-'+s},r[1][s]));});t.appendChild(tr);});
document.getElementById('summary').appendChild(t);
var fl=document.getElementById('flagged');
if(!D.flagged.length){fl.appendChild(el('p',null,'No output is flagged.'));}else{var ft=el('table',{id:'flagged-table'});var fh=el('tr');
['output','result','worst metric (NPU error / GPU error)','ratio','algorithm','message'].forEach(function(h){fh.appendChild(el('th',null,h));});ft.appendChild(fh);
D.flagged.forEach(function(i){var o=D.rows[i];var tr=el('tr',{'class':'flagged-row'});tr.appendChild(el('td',null,o[C.name]));tr.appendChild(el('td',{'class':'s-'+o[C.result]},o[C.result]));
tr.appendChild(el('td',null,o[C.worst_metric]));tr.appendChild(el('td',{'class':'num'},fmt(o[C.worst_ratio])));tr.appendChild(el('td',null,o[C.algorithm]));tr.appendChild(el('td',{'class':'msg'},o[C.message]));ft.appendChild(tr);});fl.appendChild(ft);}
var sel=document.getElementById('selected');
function show(i){var o=D.rows[i];while(sel.firstChild)sel.removeChild(sel.firstChild);sel.appendChild(el('h3',null,o[C.name]));var st=el('table');var h2=el('tr');
['metric (NPU error / GPU error)','ratio','verdict'].forEach(function(h){h2.appendChild(el('th',null,h));});st.appendChild(h2);
o[C.ratios].forEach(function(m){var tr=el('tr');tr.appendChild(el('td',null,m[0]));tr.appendChild(el('td',{'class':'num'},fmt(m[1])));tr.appendChild(el('td',{'class':'s-'+m[2]},m[2]));st.appendChild(tr);});sel.appendChild(st);}
var RS=document.getElementById('fresult');ST.forEach(function(s){RS.appendChild(el('option',null,s));});
makeTable({rows:D.rows,cols:['name','result','worst_metric','worst_ratio','algorithm','message'].map(function(c){return C[c];}),
heads:['output','result','worst metric','NPU / GPU error','algorithm','message'],table:document.getElementById('all-table'),q:document.getElementById('q'),
textCols:[C.name,C.message,C.worst_metric],selects:[[RS,C.result]],prev:document.getElementById('prev'),next:document.getElementById('next'),info:document.getElementById('pageinfo'),
cls:function(c,v){return c===C.result?'s-'+v:(c===C.message?'msg':'');},onclick:show});
if(D.flagged.length)show(D.flagged[0]);
hover(H,D.rows,C,function(o){return o[C.name]+' \u2014 '+o[C.result]+', '+o[C.worst_metric]+' '+fmt(o[C.worst_ratio]);});
document.body.setAttribute('data-ready','1');
})();
)JS";

}  // namespace

std::string precision_report_html(const PrecisionReport& r) {
  std::string hover = "{";
  report::ScatterPlot plot;
  plot.id = "plot-ratio";
  plot.column = "worst_ratio";
  plot.title = "worst NPU error / GPU error ratio per output (log scale; dashed: equal errors)";
  plot.x_label = "output";
  plot.count = r.rows.size();
  plot.value = [&](std::size_t i) { return r.rows[i].worst_ratio; };
  plot.cls = [&](std::size_t i) { return precision_class(r.rows[i]); };
  plot.line = 1.0;
  const std::string svg = report::scatter_svg(plot, hover);
  hover += "}";
  std::string h = report::page_start("probe api_precision_compare report");
  h += "<h1>probe api_precision_compare report</h1><p>NPU against GPU, both against the CPU "
       "bench.<br>result: " +
       report::html_text(r.result_csv) + "<br>details: " + report::html_text(r.details_csv) + "</p>\n";
  h += "<h2>Summary</h2><div id=\"summary\"></div>\n<h2>Flagged outputs, worst first</h2><div "
       "id=\"flagged\"></div>\n";
  h += "<h2>NPU error against GPU error</h2><p class=\"legend\">colour: <span class=\"s-pass\">pass</span>, "
       "<span "
       "class=\"s-Warning\">Warning</span>, <span class=\"s-error\">error</span>; the pointer names the "
       "output.</p>\n" +
       svg + "\n";
  h += report::table_section(
      {.heading = "Every output",
       .placeholder = "filter by name, metric or message",
       .selects = "<select id=\"fresult\"><option value=\"\">any result</option></select>",
       .hint = "<p>Click a row for every ratio and its verdict.</p>",
       .selected = "Selected output"});
  return h + report::page_end(precision_report_json(r), hover, kPrecisionScript);
}

std::string write_precision_report(const std::string& result_csv, const std::string& details_csv,
                                   const std::string& out_dir) {
  return report::write_page(precision_report_html(read_precision_report(result_csv, details_csv)), out_dir,
                            "report_precision_");
}

}  // namespace probe
