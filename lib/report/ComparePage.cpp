// The compare page: compare_result_<ts>.csv read, the first entry that differs by compare -da's rule, plots
// along execution order and a table whose selected row shows its statistics side by side and its stack.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "probe/csv.h"
#include "probe/error.h"
#include "probe/report.h"
#include "report/ReportCsv.h"
#include "report/ReportJson.h"
#include "report/ReportPage.h"
#include "support/DataFiles.h"
#include "support/FileOps.h"
#include "support/JsonDocument.h"
#include "support/Text.h"

namespace probe {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct DiffRule {
  std::vector<std::pair<std::string, double>> thresholds;  // statistics column -> relative error
  std::string md5_different;
};

// compare -da's rule, from the same data file compare reads (data/diff_analyze.json).
DiffRule load_diff_rule() {
  const std::string path = detail::data_file_path("diff_analyze.json");
  const std::string text = detail::read_whole_file(path, "cannot open the compare -da rule file");
  const rapidjson::Document doc = detail::parse_json_document(text, path);
  const rapidjson::Value& root = doc;
  DiffRule rule;
  if (!root.IsObject() || !root.HasMember("relative_error_thresholds") ||
      !root["relative_error_thresholds"].IsObject())
    throw Error(ErrorKind::Format, "expected {column: threshold}", path, "relative_error_thresholds");
  for (const auto& m : root["relative_error_thresholds"].GetObject()) {
    if (!m.value.IsNumber())
      throw Error(ErrorKind::Format, "expected a number", path,
                  fmt::format("relative_error_thresholds.{}", m.name.GetString()));
    rule.thresholds.emplace_back(m.name.GetString(), m.value.GetDouble());
  }
  if (!root.HasMember("md5_different") || !root["md5_different"].IsString())
    throw Error(ErrorKind::Format, "expected a string", path, "md5_different");
  rule.md5_different = root["md5_different"].GetString();
  return rule;
}

using detail::trim;

// A number cell; "12.5%" reads as 0.125; "N/A", "Nan", "" as NaN.
double number_cell(const std::string& cell) {
  std::string t = trim(cell);
  double scale = 1;
  if (!t.empty() && t.back() == '%') {
    t.pop_back();
    scale = 0.01;
  }
  if (t.empty()) return kNaN;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() && std::isfinite(v) ? v * scale : kNaN;
}

constexpr const char* kStatColumns[4] = {"max", "min", "mean", "l2norm"};

}  // namespace

CompareReport read_compare_report(const std::string& csv) {
  const report::CsvTable t = report::CsvTable::read(csv, "compare");
  using report::cell;
  CompareReport r;
  r.csv = csv;
  r.mode = t.find("Cosine") >= 0 ? "real data" : t.find("NPU MD5") >= 0 ? "md5" : "statistics";
  const int c_name = t.need("NPU Name"), c_bench = t.need("Bench Name"), c_dtype = t.need("NPU Dtype"),
            c_shape = t.need("NPU Tensor Shape");
  const int c_cos = t.find("Cosine"),
            c_abs = r.mode == "real data" ? t.find("MaxAbsErr") : t.find("Max diff"),
            c_rel = t.find("MaxRelativeErr");
  const int c_verdict = r.mode == "real data" ? t.find("Accuracy Reached or Not") : t.find("Result");
  const int c_msg = t.find("Err_message"), c_stack = t.find("NPU_Stack_Info");
  std::array<int, 4> c_npu{}, c_bench_stats{};
  for (int k = 0; k < 4; ++k) {
    c_npu[k] = t.find(fmt::format("NPU {}", kStatColumns[k]));
    c_bench_stats[k] = t.find(fmt::format("Bench {}", kStatColumns[k]));
  }
  const DiffRule rule = load_diff_rule();
  std::vector<std::pair<int, double>> rule_cols;
  // Statistics mode holds the statistics' relative errors as "…%" columns; real data mode's MaxRelativeErr is
  // the elements' and does not count.
  if (r.mode == "statistics")
    for (const auto& [name, threshold] : rule.thresholds)
      if (const int c = t.find(name); c >= 0) rule_cols.emplace_back(c, threshold);
  for (const CsvRow& row : t.rows) {
    CompareReportRow x;
    x.name = cell(row, c_name);
    x.bench_name = cell(row, c_bench);
    x.dtype = cell(row, c_dtype);
    x.shape = cell(row, c_shape);
    x.cosine = number_cell(cell(row, c_cos));
    x.max_abs = std::abs(number_cell(cell(row, c_abs)));
    x.max_rel = number_cell(cell(row, c_rel));
    x.verdict = cell(row, c_verdict);
    x.message = cell(row, c_msg);
    const std::string stack = cell(row, c_stack);
    if (stack != "N/A") x.stack = stack;
    x.stat_rel = kNaN;
    bool over = false;
    for (int k = 0; k < 4; ++k) {
      x.npu_stats[k] = number_cell(cell(row, c_npu[k]));
      x.bench_stats[k] = number_cell(cell(row, c_bench_stats[k]));
    }
    if (!rule_cols.empty()) {
      // Statistics mode: the "…%" columns, as compare -da reads them.
      for (const auto& [c, threshold] : rule_cols) {
        const std::string text = trim(cell(row, c));
        if (text.size() < 2 || text.back() != '%') continue;
        const double v = number_cell(text);
        x.stat_rel = std::isnan(x.stat_rel) ? v : std::max(x.stat_rel, v);
        over = over || v > threshold;
      }
    } else if (r.mode == "real data") {
      // Real data mode has no relative-error columns of the statistics: the same rule on the recorded
      // statistics, |npu - bench| / |bench| (a zero bench statistic never counts, as "N/A" does not).
      for (int k = 0; k < 4 && k < static_cast<int>(rule.thresholds.size()); ++k) {
        const double n = x.npu_stats[k], b = x.bench_stats[k];
        if (std::isnan(n) || std::isnan(b) || b == 0) continue;
        const double v = std::abs(n - b) / std::abs(b);
        x.stat_rel = std::isnan(x.stat_rel) ? v : std::max(x.stat_rel, v);
        over = over || v > rule.thresholds[static_cast<std::size_t>(k)].second;
      }
    }
    if (r.mode == "md5") over = trim(x.verdict) == rule.md5_different;
    x.differs = over && x.name.find(".output.") != std::string::npos;
    if (x.differs && r.first_diff < 0) r.first_diff = static_cast<long long>(r.rows.size());
    r.rows.push_back(std::move(x));
  }
  return r;
}

std::string compare_report_json(const CompareReport& r) {
  using report::json_number;
  using report::json_string;
  std::string j = "{\"kind\":\"compare\",\"csv\":" + json_string(r.csv) + ",\"mode\":" + json_string(r.mode);
  j += fmt::format(",\"first_diff\":{}",
                   r.first_diff < 0 ? std::string("null") : std::to_string(r.first_diff));
  j +=
      ",\"columns\":[\"name\",\"bench_name\",\"dtype\",\"shape\",\"cosine\",\"one_minus_cosine\",\"max_abs\","
      "\"max_rel\",\"verdict\",\"npu_max\",\"npu_min\",\"npu_mean\",\"npu_norm\",\"bench_max\",\"bench_min\","
      "\"bench_mean\",\"bench_norm\",\"stat_rel\",\"differs\",\"message\",\"stack\"],\"rows\":[";
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const CompareReportRow& x = r.rows[i];
    j += fmt::format("{}[{},{},{},{},{},{},{},{},{}", i ? ",\n" : "\n", json_string(x.name),
                     json_string(x.bench_name), json_string(x.dtype), json_string(x.shape),
                     json_number(x.cosine), json_number(std::isnan(x.cosine) ? kNaN : 1 - x.cosine),
                     json_number(x.max_abs), json_number(x.max_rel), json_string(x.verdict));
    for (const double* stats : {x.npu_stats, x.bench_stats})
      for (int k = 0; k < 4; ++k) {
        j += ',';
        j += json_number(stats[k]);
      }
    j += fmt::format(",{},{},{},{}]", json_number(x.stat_rel), x.differs ? "true" : "false",
                     json_string(x.message), json_string(x.stack));
  }
  return j + "]}";
}

namespace {

std::string_view compare_class(const CompareReportRow& x) {
  const std::string v = trim(x.verdict);
  if (x.differs || v == "No" || v == "Different") return "err";
  if (v == "Warning") return "warn";
  return "pass";
}

constexpr std::string_view kCompareScript = R"JS(
(function(){
var D=JSON.parse(document.getElementById('report-data').textContent);
var H=JSON.parse(document.getElementById('plot-points').textContent);
var C={};D.columns.forEach(function(c,i){C[c]=i;});
var fd=document.getElementById('first-diff');
if(D.first_diff===null){fd.textContent='No entry differs by compare -da\u2019s rule.';}else{var o=D.rows[D.first_diff];
fd.appendChild(el('span',null,'First different entry (compare -da\u2019s rule, marked in the plots): '));fd.appendChild(el('b',{id:'first-diff-name'},o[C.name]));
fd.appendChild(el('span',null,' \u2014 largest relative error of its statistics '+fmt(o[C.stat_rel])));}
var sel=document.getElementById('selected');
function show(i){var o=D.rows[i];while(sel.firstChild)sel.removeChild(sel.firstChild);sel.appendChild(el('h3',null,o[C.name]+' vs '+o[C.bench_name]));
var t=el('table');var hr=el('tr');['','max','min','mean','l2norm'].forEach(function(h){hr.appendChild(el('th',null,h));});t.appendChild(hr);
[['NPU','npu_'],['bench','bench_']].forEach(function(p){var tr=el('tr');tr.appendChild(el('th',null,p[0]));['max','min','mean','norm'].forEach(function(s){tr.appendChild(el('td',{'class':'num'},fmt(o[C[p[1]+s]])));});t.appendChild(tr);});
sel.appendChild(t);var st='';for(var k=i;k>=0&&!st;k--){st=D.rows[k][C.stack];}
sel.appendChild(el('pre',{'class':'msg'},st?('stack of its entry: '+st):'no stack recorded'));}
var VS=document.getElementById('fverdict');var seen={};D.rows.forEach(function(r){var v=r[C.verdict];if(v&&!seen[v]){seen[v]=1;VS.appendChild(el('option',null,v));}});
makeTable({rows:D.rows,cols:['name','dtype','shape','cosine','max_abs','max_rel','stat_rel','verdict','message'].map(function(c){return C[c];}),
heads:['NPU name','dtype','shape','cosine','max abs error','max rel error','statistics rel error','verdict','message'],
table:document.getElementById('all-table'),q:document.getElementById('q'),textCols:[C.name,C.message],selects:[[VS,C.verdict]],
prev:document.getElementById('prev'),next:document.getElementById('next'),info:document.getElementById('pageinfo'),
cls:function(c,v){return c===C.verdict?((v==='No'||v==='Different')?'s-error':(v==='Warning'?'s-Warning':'')):(c===C.message?'msg':'');},onclick:show});
if(D.first_diff!==null)show(D.first_diff);
hover(H,D.rows,C,function(o){return o[C.name]+' \u2014 cosine '+fmt(o[C.cosine])+', max abs '+fmt(o[C.max_abs])+', max rel '+fmt(o[C.max_rel])+(o[C.differs]?' (differs)':'');});
document.body.setAttribute('data-ready','1');
})();
)JS";

}  // namespace

std::string compare_report_html(const CompareReport& r) {
  std::string hover = "{";
  report::ScatterPlot plot;
  plot.x_label = "row";
  plot.count = r.rows.size();
  plot.cls = [&](std::size_t i) { return compare_class(r.rows[i]); };
  if (r.first_diff >= 0) plot.mark = static_cast<std::size_t>(r.first_diff);
  std::string svgs;
  const auto add = [&](const char* id, const char* column, const char* title, auto value) {
    plot.id = id;
    plot.column = column;
    plot.title = title;
    plot.value = value;
    if (hover.size() > 1) hover += ",";
    svgs += fmt::format("<h3>{}</h3>\n{}\n", title, report::scatter_svg(plot, hover));
  };
  if (r.mode == "real data")
    add("plot-cosine", "one_minus_cosine", "1 - cosine similarity (log scale)",
        [&](std::size_t i) { return 1 - r.rows[i].cosine; });
  add("plot-maxabs", "max_abs",
      r.mode == "real data" ? "max absolute error (log scale)" : "|Max diff| (log scale)",
      [&](std::size_t i) { return r.rows[i].max_abs; });
  add("plot-maxrel", "max_rel",
      r.mode == "real data" ? "max relative error (log scale)" : "relative error of the maxima (log scale)",
      [&](std::size_t i) { return r.rows[i].max_rel; });
  hover += "}";
  std::string h = report::page_start("probe compare report");
  h += fmt::format("<h1>probe compare report</h1><p>{} ({} mode, {} rows)</p>\n", report::html_text(r.csv),
                   report::html_text(r.mode), r.rows.size());
  h += "<p id=\"first-diff\"></p>\n<h2>Along execution order</h2><p class=\"legend\">colour: <span "
       "class=\"s-pass\">accurate</span>, <span class=\"s-Warning\">Warning</span>, <span "
       "class=\"s-error\">not "
       "accurate or different</span>; purple line: the first different entry; the pointer names the "
       "row.</p>\n" +
       svgs;
  h += report::table_section(
      {.heading = "Every row",
       .placeholder = "filter by name or message",
       .selects = "<select id=\"fverdict\"><option value=\"\">any verdict</option></select>",
       .hint = "<p>Click a row for its statistics and stack.</p>",
       .selected = "Selected row"});
  return h + report::page_end(compare_report_json(r), hover, kCompareScript);
}

std::string write_compare_report(const std::string& csv, const std::string& out_dir) {
  return report::write_page(compare_report_html(read_compare_report(csv)), out_dir, "report_compare_");
}

}  // namespace probe
