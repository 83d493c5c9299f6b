// The report page: HTML with inline CSS, the embedded JSON, SVG plots written here and a small hand-written
// script (table filter, sort and paging; plot hover). Nothing is loaded from the network or another file.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string_view>

#include "probe/error.h"
#include "probe/report.h"
#include "report/ReportJson.h"
#include "report/ReportPage.h"
#include "support/FileOps.h"
#include "support/JsonText.h"
#include "support/Timestamp.h"

namespace probe {

namespace report {

std::string json_string(std::string_view s) { return detail::json_quote(s, /*html_safe=*/true); }

std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "null"; }

}  // namespace report

namespace {

std::string_view status_class(Status s) {
  switch (s) {
    case Status::Pass:
      return "pass";
    case Status::Warning:
      return "warn";
    case Status::Error:
      return "err";
    case Status::Skip:
      break;
  }
  return "skip";
}

// Renders the run_ut page from the embedded JSON: summary, flagged, every output, SKIP reasons; names the
// output under the pointer in a plot. Sets body[data-ready] when done.
constexpr std::string_view kScript = R"JS(
(function(){
var D=JSON.parse(document.getElementById('report-data').textContent);
var H=JSON.parse(document.getElementById('plot-points').textContent);
var C={};D.columns.forEach(function(c,i){C[c]=i;});
D.interned.forEach(function(c){var k=C[c];D.outputs.forEach(function(o){o[k]=D.strings[o[k]];});});
var ST=['pass','Warning','error','SKIP'];
function countsRow(tr,c){ST.forEach(function(s){tr.appendChild(el('td',{'class':'num s-'+s},c[s]));});}
var sum=document.getElementById('summary');
var t=el('table');var hr=el('tr');['','total'].concat(ST).forEach(function(h){hr.appendChild(el('th',null,h));});t.appendChild(hr);
var tot=function(c){return ST.reduce(function(a,s){return a+c[s];},0);};
[['APIs',D.summary.status],['forward',D.summary.forward],['backward',D.summary.backward]].forEach(function(r){var tr=el('tr');tr.appendChild(el('th',null,r[0]));tr.appendChild(el('td',{'class':'num'},tot(r[1])));countsRow(tr,r[1]);t.appendChild(tr);});
D.summary.dtypes.forEach(function(d){var tr=el('tr');tr.appendChild(el('th',null,'outputs '+d[0]));tr.appendChild(el('td',{'class':'num'},tot(d[1])));countsRow(tr,d[1]);t.appendChild(tr);});
sum.appendChild(t);
var fl=document.getElementById('flagged');
if(!D.flagged.length){fl.appendChild(el('p',null,'No output is flagged.'));}else{
var ft=el('table',{id:'flagged-table'});var fh=el('tr');['API','direction','output','dtype','status','criterion','value','threshold / bound','error / bound','rule','worst element (index)','bench','device'].forEach(function(h){fh.appendChild(el('th',null,h));});ft.appendChild(fh);
D.flagged.forEach(function(i){var o=D.outputs[i];var tr=el('tr',{'class':'flagged-row'});
[o[C.api]||o[C.name],o[C.direction],o[C.name],o[C.dtype]].forEach(function(v){tr.appendChild(el('td',null,v));});
tr.appendChild(el('td',{'class':'s-'+o[C.status]},o[C.status]));tr.appendChild(el('td',{'class':'msg'},o[C.criterion]));
[o[C.value],o[C.threshold],o[C.ratio]].forEach(function(v){tr.appendChild(el('td',{'class':'num'},fmt(v)));});
[o[C.rule],o[C.worst_index],o[C.worst_bench],o[C.worst_device]].forEach(function(v){tr.appendChild(el('td',null,v));});
ft.appendChild(tr);});fl.appendChild(ft);}
makeTable({rows:D.outputs,cols:['name','status','dtype','shape','cosine','max_abs','max_rel','ratio','criterion'].map(function(c){return C[c];}),
heads:['output','status','dtype','shape','cosine','max abs error','max rel error','error / bound','criterion'],
table:document.getElementById('all-table'),q:document.getElementById('q'),textCols:[C.name,C.criterion],
selects:[[document.getElementById('fstatus'),C.status],[document.getElementById('fdir'),C.direction]],
prev:document.getElementById('prev'),next:document.getElementById('next'),info:document.getElementById('pageinfo'),
cls:function(c,v){return c===C.status?'s-'+v:(c===C.criterion?'msg':'');}});
var sk=document.getElementById('skips');
if(!D.skips.length){sk.appendChild(el('p',null,'No API was skipped.'));}else{var stb=el('table');var sh=el('tr');['reason','APIs','examples'].forEach(function(h){sh.appendChild(el('th',null,h));});stb.appendChild(sh);
D.skips.forEach(function(g){var tr=el('tr');tr.appendChild(el('td',{'class':'msg'},g.reason));tr.appendChild(el('td',{'class':'num'},g.count));tr.appendChild(el('td',null,g.apis.join(', ')+(g.count>g.apis.length?', ...':'')));stb.appendChild(tr);});sk.appendChild(stb);}
hover(H,D.outputs,C,function(o){return o[C.name]+' \u2014 '+o[C.status]+', error/bound '+fmt(o[C.ratio])+', max rel '+fmt(o[C.max_rel]);});
document.body.setAttribute('data-ready','1');
})();
)JS";

}  // namespace

std::string run_ut_report_html(const RunUtReport& r) {
  std::string hover = "{";
  const auto cls = [&](std::size_t i) { return status_class(r.outputs[i].status); };
  report::ScatterPlot plot;
  plot.id = "plot-ratio";
  plot.column = "ratio";
  plot.title = "largest element error over its bound, per output (log scale; dashed: the bound)";
  plot.x_label = "output";
  plot.count = r.outputs.size();
  plot.value = [&](std::size_t i) { return r.outputs[i].ratio; };
  plot.cls = cls;
  plot.line = 1.0;
  const std::string ratio_svg = report::scatter_svg(plot, hover);
  hover += ",";
  plot.id = "plot-maxrel";
  plot.column = "max_rel";
  plot.title = "max relative error per output (log scale)";
  plot.value = [&](std::size_t i) { return r.outputs[i].max_rel; };
  plot.line = std::numeric_limits<double>::quiet_NaN();
  const std::string rel_svg = report::scatter_svg(plot, hover);
  hover += "}";
  // The flagged outputs' histograms, worst first; the page draws the first kMaxHistograms (the embedded data
  // has them all).
  constexpr std::size_t kMaxHistograms = 50;
  std::string hist_svgs;
  std::size_t drawn = 0, with_histogram = 0;
  for (std::size_t i : flagged_order(r)) {
    const ReportOutput& o = r.outputs[i];
    if (!o.histogram) continue;
    ++with_histogram;
    if (drawn == kMaxHistograms) continue;
    const std::string title = fmt::format("{} ({}, {}): element errors in {}", o.name, to_string(o.status),
                                          o.dtype, to_string(o.histogram->unit));
    hist_svgs += "<h3>" + report::html_text(title) + "</h3>\n" +
                 report::histogram_svg(fmt::format("hist-{}", drawn), title, *o.histogram) + "\n";
    ++drawn;
  }
  if (with_histogram == 0)
    hist_svgs =
        "<p>No histograms: run_ut writes them for its flagged outputs when run with --report "
        "(accuracy_checking_histograms_&lt;ts&gt;.csv beside the details CSV).</p>\n";
  else if (with_histogram > drawn)
    hist_svgs += fmt::format("<p>The first {} of {} flagged outputs with a histogram are drawn.</p>\n", drawn,
                             with_histogram);
  std::string h = report::page_start("probe run_ut report");
  h += "<h1>probe run_ut report</h1><p>result: " + report::html_text(r.result_csv) +
       "<br>details: " + report::html_text(r.details_csv) + "</p>\n";
  h += "<h2>Summary</h2><div id=\"summary\"></div>\n";
  h += "<h2>Flagged outputs, worst first</h2><div id=\"flagged\"></div>\n";
  h += "<h2>Error against bound</h2><p class=\"legend\">colour: <span class=\"s-pass\">pass</span>, "
       "<span class=\"s-Warning\">Warning</span>, <span class=\"s-error\">error</span>; the pointer names "
       "the output.</p>\n<h3>Largest element error over its bound (error bound rows; dashed: the "
       "bound)</h3>\n" +
       ratio_svg + "\n<h3>Max relative error</h3>\n" + rel_svg + "\n";
  h += "<h2>Element errors of the flagged outputs</h2><p class=\"legend\">Each flagged output's elements by "
       "their error: over the D14 bound (error bound rows), in ULPs (ULP standard) or relative (the other "
       "rules); red: at or beyond 1 (the bound, one ULP), and non-finite mismatches.</p><div "
       "id=\"histograms\">\n" +
       hist_svgs + "</div>\n";
  h += report::table_section(
      {.heading = "Every output",
       .placeholder = "filter by name or criterion",
       .selects =
           "<select id=\"fstatus\"><option value=\"\">any status</option><option>pass</option><option>"
           "Warning</option><option>error</option><option>SKIP</option></select><select id=\"fdir\"><option "
           "value=\"\">any direction</option><option>forward</option><option>backward</option></select>",
       .hint = "",
       .selected = ""});
  h += "<h2>SKIP reasons</h2><div id=\"skips\"></div><div id=\"tip\"></div>\n";
  return h + report::page_end(run_ut_report_json(r), hover, kScript);
}

namespace report {

std::string write_page(const std::string& html, const std::string& out_dir, const std::string& prefix) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw Error(ErrorKind::Io, "cannot create the output directory: " + ec.message(), out_dir);
  std::string ts = detail::local_timestamp();
  std::string path;
  for (;; ts = detail::next_timestamp(ts)) {
    path = (std::filesystem::path(out_dir) / (prefix + ts + ".html")).string();
    if (!std::filesystem::exists(path, ec)) break;
  }
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << html;
    out.close();
    if (!out) throw Error(ErrorKind::Io, "cannot write the report", temp);
  }
  detail::publish_new_file(temp, path);
  return path;
}

}  // namespace report

std::string write_run_ut_report(const std::string& result_csv, const std::string& details_csv,
                                const std::string& out_dir) {
  return report::write_page(run_ut_report_html(read_run_ut_report(result_csv, details_csv)), out_dir,
                            "report_");
}

std::vector<std::string> write_report(const std::string& dir, const std::string& out_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string best_compare, best_precision, best_precision_details;
  // run_ut's pairs by stamp; the online server writes one pair per rank (`_rank<N>` after the stamp).
  struct Pair {
    std::string stamp, suffix, result, details;
  };
  std::vector<Pair> run_ut_pairs;
  const std::string result_prefix = "accuracy_checking_result_", compare_prefix = "compare_result_",
                    precision_prefix = "api_precision_compare_result_";
  const auto name_of = [](const std::string& p) { return fs::path(p).filename().string(); };
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.ends_with(".csv")) continue;
    // The newest run: timestamps sort as text.
    if (name.starts_with(result_prefix)) {
      const std::string rest = name.substr(result_prefix.size());
      const std::string details = (it->path().parent_path() / ("accuracy_checking_details_" + rest)).string();
      const std::string stamp = rest.substr(0, 14);
      if (fs::exists(details) && detail::is_timestamp(stamp))
        run_ut_pairs.push_back({stamp, rest.substr(14, rest.size() - 14 - 4), it->path().string(), details});
    } else if (name.starts_with(compare_prefix) && name > name_of(best_compare)) {
      best_compare = it->path().string();
    } else if (name.starts_with(precision_prefix)) {
      const std::string details = (it->path().parent_path() /
                                   ("api_precision_compare_details_" + name.substr(precision_prefix.size())))
                                      .string();
      if (fs::exists(details) && name > name_of(best_precision)) {
        best_precision = it->path().string();
        best_precision_details = details;
      }
    }
  }
  if (ec) throw Error(ErrorKind::Io, "cannot list the directory: " + ec.message(), dir);
  // grad_compare's output: rank{R}/similarities.csv.
  bool grad = false;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end && !grad; it.increment(ec))
    grad = it->path().filename().string().starts_with("rank") &&
           fs::is_regular_file(it->path() / "similarities.csv", ec);
  if (run_ut_pairs.empty() && best_compare.empty() && best_precision.empty() && !grad)
    throw Error(
        ErrorKind::Io,
        "no accuracy_checking_result_*.csv with its accuracy_checking_details_*.csv (run_ut's output), "
        "no compare_result_*.csv (compare's), no api_precision_compare_result_*.csv with its details "
        "CSV and no rank*/similarities.csv (grad_compare's)",
        dir);
  const std::string out = out_dir.empty() ? dir : out_dir;
  std::vector<std::string> pages;
  std::string newest;
  for (const Pair& p : run_ut_pairs) newest = std::max(newest, p.stamp);
  std::sort(run_ut_pairs.begin(), run_ut_pairs.end(),
            [](const Pair& a, const Pair& b) { return a.suffix < b.suffix; });
  for (const Pair& p : run_ut_pairs)
    if (p.stamp == newest)
      pages.push_back(report::write_page(run_ut_report_html(read_run_ut_report(p.result, p.details)), out,
                                         "report" + p.suffix + "_"));
  if (!best_compare.empty()) pages.push_back(write_compare_report(best_compare, out));
  if (!best_precision.empty())
    pages.push_back(write_precision_report(best_precision, best_precision_details, out));
  if (grad) pages.push_back(write_grad_report(dir, out));
  return pages;
}

}  // namespace probe
