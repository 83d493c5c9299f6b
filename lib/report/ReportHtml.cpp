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
#include "support/FileOps.h"
#include "support/Timestamp.h"

namespace probe {

namespace report {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  out.reserve(s.size() + 2);
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '<':
      case '>':
      case '&':
        out += fmt::format("\\u{:04x}", c);
        break;
      default:
        if (c < 0x20)
          out += fmt::format("\\u{:04x}", c);
        else
          out += ch;
    }
  }
  return out + "\"";
}

std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "null"; }

}  // namespace report

namespace {

// Plot geometry (SVG user units).
constexpr int kWidth = 900, kHeight = 260, kLeft = 60, kRight = 10, kTop = 10, kBottom = 30;

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

// One scatter plot of `value(output)` against execution order, log scale, one <path> per verdict (a round
// cap on a zero-length segment is a dot: a few bytes per point where a <circle> costs ~40), plus the
// axis the script uses to place the points again and name the output under the pointer (`column`: the
// embedded column plotted). `line` draws a horizontal reference.
template <class Value>
std::string scatter_svg(const RunUtReport& r, std::string_view id, std::string_view column,
                        std::string_view title, Value value, double line, std::string& hover_json) {
  std::vector<std::pair<std::size_t, double>> pts;
  for (std::size_t i = 0; i < r.outputs.size(); ++i) {
    const double v = value(r.outputs[i]);
    if (std::isfinite(v)) pts.emplace_back(i, v);
  }
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  // Zero errors sit on the bottom edge: the axis spans the positive values only.
  for (auto& p : pts) {
    if (p.second <= 0) continue;
    lo = std::min(lo, p.second);
    hi = std::max(hi, p.second);
  }
  if (std::isfinite(line)) lo = std::min(lo, line), hi = std::max(hi, line);
  if (!(lo <= hi)) lo = 1e-3, hi = 1;
  const int e_lo = static_cast<int>(std::floor(std::log10(lo)));
  const int e_hi = std::max(e_lo + 1, static_cast<int>(std::ceil(std::log10(hi))));
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  const double n = std::max<double>(1, static_cast<double>(r.outputs.size()) - 1);
  const auto px = [&](std::size_t i) {
    return static_cast<int>(std::lround(kLeft + pw * static_cast<double>(i) / n));
  };
  const auto py = [&](double v) {
    const double t = v > 0 ? std::clamp((std::log10(v) - e_lo) / (e_hi - e_lo), 0.0, 1.0) : 0.0;
    return static_cast<int>(std::lround(kTop + ph * (1 - t)));
  };
  std::string svg = fmt::format(
      "<svg id=\"{}\" class=\"plot\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\">"
      "<title>{}</title>",
      id, kWidth, kHeight, kWidth, kHeight, title);
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>", kLeft, kTop, pw,
                     ph);
  const int step = std::max(1, (e_hi - e_lo + 7) / 8);
  for (int e = e_lo; e <= e_hi; e += step) {
    const int y = py(std::pow(10.0, e));
    svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" class=\"grid\"/>", kLeft,
                       kWidth - kRight, y, y);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"tick\">1e{}</text>", kLeft - 4, y + 4, e);
  }
  if (std::isfinite(line)) {
    const int y = py(line);
    svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" class=\"limit\"/>", kLeft,
                       kWidth - kRight, y, y);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\">output, in execution order ({} plotted)</text>",
                     kLeft + pw / 2, kHeight - 6, pts.size());
  hover_json += fmt::format(
      "{}:{{\"column\":{},\"lo\":{},\"hi\":{},\"n\":{},\"left\":{},\"top\":{},\"pw\":{},\"ph\":{}}}",
      report::json_string(id), report::json_string(column), e_lo, e_hi, n, kLeft, kTop, pw, ph);
  for (Status s : {Status::Pass, Status::Skip, Status::Warning, Status::Error}) {
    std::string d;
    for (auto& [i, v] : pts)
      if (r.outputs[i].status == s) d += fmt::format("M{} {}h0", px(i), py(v));
    if (!d.empty()) svg += fmt::format("<path class=\"pt {}\" d=\"{}\"/>", status_class(s), d);
  }
  return svg + "</svg>";
}

constexpr std::string_view kStyle = R"CSS(
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:24px}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f0f0f0;cursor:pointer;user-select:none}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.s-pass{color:#1a7f37}.s-Warning{color:#9a6700;font-weight:bold}.s-error{color:#cf222e;font-weight:bold}.s-SKIP{color:#777}
.plot .frame{fill:none;stroke:#999}.plot .grid{stroke:#eee}.plot .limit{stroke:#cf222e;stroke-dasharray:4 3}
.plot .tick{font-size:10px;text-anchor:end}.plot .axis{font-size:11px;text-anchor:middle}
.plot .pt{stroke-width:5;stroke-linecap:round;fill:none}
.plot .pass{stroke:#2da44e}.plot .warn{stroke:#d4a72c}.plot .err{stroke:#cf222e}.plot .skip{stroke:#999}
#tip{position:fixed;display:none;background:#fff;border:1px solid #888;padding:2px 6px;pointer-events:none;font-size:12px}
.msg{max-width:520px;white-space:pre-wrap;font-size:12px}
.controls input,.controls select{margin-right:8px}
)CSS";

// Renders the tables from the embedded JSON: summary, flagged, every output (filter, sort, 100 per page),
// SKIP reasons; names the API under the pointer in a plot. Sets body[data-ready] when done and
// body[data-jserror] on any uncaught error (what the headless-browser test reads).
constexpr std::string_view kScript = R"JS(
window.addEventListener('error',function(e){document.body.setAttribute('data-jserror',String(e.message));});
(function(){
var D=JSON.parse(document.getElementById('report-data').textContent);
var H=JSON.parse(document.getElementById('plot-points').textContent);
var C={};D.columns.forEach(function(c,i){C[c]=i;});
D.interned.forEach(function(c){var k=C[c];D.outputs.forEach(function(o){o[k]=D.strings[o[k]];});});
function el(t,a,txt){var e=document.createElement(t);if(a)for(var k in a)e.setAttribute(k,a[k]);if(txt!==undefined&&txt!==null)e.textContent=String(txt);return e;}
function fmt(v){if(v===null||v===undefined)return '';if(typeof v!=='number')return v;if(v===0)return '0';var a=Math.abs(v);return (a>=1e4||a<1e-3)?v.toExponential(3):String(+v.toPrecision(4));}
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
var cols=['name','status','dtype','shape','cosine','max_abs','max_rel','ratio','criterion'];
var heads=['output','status','dtype','shape','cosine','max abs error','max rel error','error / bound','criterion'];
var view=D.outputs.map(function(o,i){return i;});var page=0,per=100,sortCol=-1,sortDir=1;
var q=document.getElementById('q'),fs=document.getElementById('fstatus'),fd=document.getElementById('fdir');
var at=document.getElementById('all-table'),pg=document.getElementById('pageinfo');
function apply(){var s=q.value.toLowerCase(),st=fs.value,dr=fd.value;view=[];D.outputs.forEach(function(o,i){
if(st&&o[C.status]!==st)return;if(dr&&o[C.direction]!==dr)return;if(s&&o[C.name].toLowerCase().indexOf(s)<0&&(o[C.criterion]||'').toLowerCase().indexOf(s)<0)return;view.push(i);});
if(sortCol>=0){var k=C[cols[sortCol]];view.sort(function(a,b){var x=D.outputs[a][k],y=D.outputs[b][k];if(x===y)return a-b;if(x===null)return 1;if(y===null)return -1;return (x<y?-1:1)*sortDir;});}
page=0;draw();}
function draw(){while(at.firstChild)at.removeChild(at.firstChild);var hr=el('tr');heads.forEach(function(h,c){var th=el('th',null,h+(c===sortCol?(sortDir>0?' \u25b2':' \u25bc'):''));th.addEventListener('click',function(){if(sortCol===c)sortDir=-sortDir;else{sortCol=c;sortDir=1;}apply();});hr.appendChild(th);});at.appendChild(hr);
var n=Math.max(1,Math.ceil(view.length/per));page=Math.min(page,n-1);
view.slice(page*per,page*per+per).forEach(function(i){var o=D.outputs[i];var tr=el('tr');cols.forEach(function(c){var v=o[C[c]];var num=typeof v==='number';tr.appendChild(el('td',{'class':(num?'num':'')+(c==='status'?' s-'+v:'')+(c==='criterion'?' msg':'')},num?fmt(v):v));});at.appendChild(tr);});
pg.textContent=view.length+' of '+D.outputs.length+' outputs, page '+(page+1)+' of '+n;}
document.getElementById('prev').addEventListener('click',function(){if(page>0){page--;draw();}});
document.getElementById('next').addEventListener('click',function(){if((page+1)*per<view.length){page++;draw();}});
[q,fs,fd].forEach(function(e){e.addEventListener('input',apply);});apply();
var sk=document.getElementById('skips');
if(!D.skips.length){sk.appendChild(el('p',null,'No API was skipped.'));}else{var stb=el('table');var sh=el('tr');['reason','APIs','examples'].forEach(function(h){sh.appendChild(el('th',null,h));});stb.appendChild(sh);
D.skips.forEach(function(g){var tr=el('tr');tr.appendChild(el('td',{'class':'msg'},g.reason));tr.appendChild(el('td',{'class':'num'},g.count));tr.appendChild(el('td',null,g.apis.join(', ')+(g.count>g.apis.length?', ...':'')));stb.appendChild(tr);});sk.appendChild(stb);}
var tip=document.getElementById('tip');
Object.keys(H).forEach(function(id){var svg=document.getElementById(id);var A=H[id];if(!svg)return;
var P=[],k=C[A.column];D.outputs.forEach(function(o,i){var v=o[k];if(v===null)return;var t=v>0?Math.min(1,Math.max(0,(Math.log10(v)-A.lo)/(A.hi-A.lo))):0;P.push(A.left+A.pw*i/A.n,A.top+A.ph*(1-t),i);});
svg.addEventListener('mousemove',function(ev){var r=svg.getBoundingClientRect();var sx=svg.viewBox.baseVal.width/r.width;var x=(ev.clientX-r.left)*sx,y=(ev.clientY-r.top)*sx;var best=-1,bd=64;
for(var k=0;k<P.length;k+=3){var dx=P[k]-x,dy=P[k+1]-y,d=dx*dx+dy*dy;if(d<bd){bd=d;best=k;}}
if(best<0){tip.style.display='none';return;}var o=D.outputs[P[best+2]];tip.textContent=o[C.name]+' \u2014 '+o[C.status]+', error/bound '+fmt(o[C.ratio])+', max rel '+fmt(o[C.max_rel]);tip.style.left=(ev.clientX+12)+'px';tip.style.top=(ev.clientY+12)+'px';tip.style.display='block';});
svg.addEventListener('mouseleave',function(){tip.style.display='none';});});
document.body.setAttribute('data-ready','1');
})();
)JS";

std::string html_text(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string run_ut_report_html(const RunUtReport& r) {
  std::string hover = "{";
  const std::string ratio_svg = scatter_svg(
      r, "plot-ratio", "ratio",
      "largest element error over its bound, per output (log scale; dashed: the bound)",
      [](const ReportOutput& o) { return o.ratio; }, 1.0, hover);
  hover += ",";
  const std::string rel_svg = scatter_svg(
      r, "plot-maxrel", "max_rel", "max relative error per output (log scale)",
      [](const ReportOutput& o) { return o.max_rel; }, std::numeric_limits<double>::quiet_NaN(), hover);
  hover += "}";
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  h +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "script-src 'unsafe-inline'\">";
  h += "<title>probe run_ut report</title><style>" + std::string(kStyle) + "</style></head><body>\n";
  h += "<h1>probe run_ut report</h1><p>result: " + html_text(r.result_csv) +
       "<br>details: " + html_text(r.details_csv) + "</p>\n";
  h += "<h2>Summary</h2><div id=\"summary\"></div>\n";
  h += "<h2>Flagged outputs, worst first</h2><div id=\"flagged\"></div>\n";
  h += "<h2>Error against bound</h2><p class=\"legend\">colour: <span class=\"s-pass\">pass</span>, "
       "<span class=\"s-Warning\">Warning</span>, <span class=\"s-error\">error</span>; the pointer names "
       "the output.</p>\n<h3>Largest element error over its bound (error bound rows; dashed: the "
       "bound)</h3>\n" +
       ratio_svg + "\n<h3>Max relative error</h3>\n" + rel_svg + "\n";
  h += "<h2>Every output</h2><div class=\"controls\"><input id=\"q\" placeholder=\"filter by name or "
       "criterion\">"
       "<select id=\"fstatus\"><option value=\"\">any "
       "status</option><option>pass</option><option>Warning</option>"
       "<option>error</option><option>SKIP</option></select><select id=\"fdir\"><option value=\"\">any "
       "direction</option><option>forward</option><option>backward</option></select>"
       "<button id=\"prev\">&lt; previous</button><button id=\"next\">next &gt;</button> <span "
       "id=\"pageinfo\"></span></div><table id=\"all-table\"></table>\n";
  h += "<h2>SKIP reasons</h2><div id=\"skips\"></div><div id=\"tip\"></div>\n";
  h += "<script type=\"application/json\" id=\"report-data\">" + run_ut_report_json(r) + "</script>\n";
  h += "<script type=\"application/json\" id=\"plot-points\">" + hover + "</script>\n";
  h += "<script>" + std::string(kScript) + "</script>\n</body></html>\n";
  return h;
}

std::string write_run_ut_report(const std::string& result_csv, const std::string& details_csv,
                                const std::string& out_dir) {
  const std::string html = run_ut_report_html(read_run_ut_report(result_csv, details_csv));
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw Error(ErrorKind::Io, "cannot create the output directory: " + ec.message(), out_dir);
  std::string ts = detail::local_timestamp();
  std::string path;
  for (;; ts = detail::next_timestamp(ts)) {
    path = (std::filesystem::path(out_dir) / ("report_" + ts + ".html")).string();
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

std::string write_report(const std::string& dir, const std::string& out_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string best_result, best_details;
  const std::string prefix = "accuracy_checking_result_";
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix) || !name.ends_with(".csv")) continue;
    const std::string details =
        (it->path().parent_path() / ("accuracy_checking_details_" + name.substr(prefix.size()))).string();
    // The newest run: timestamps sort as text, and a rank suffix after the stamp keeps that order.
    if (fs::exists(details) && name > fs::path(best_result).filename().string()) {
      best_result = it->path().string();
      best_details = details;
    }
  }
  if (ec) throw Error(ErrorKind::Io, "cannot list the directory: " + ec.message(), dir);
  if (best_result.empty())
    throw Error(
        ErrorKind::Io,
        "no accuracy_checking_result_*.csv with its accuracy_checking_details_*.csv (run_ut's output)", dir);
  return write_run_ut_report(best_result, best_details, out_dir.empty() ? dir : out_dir);
}

}  // namespace probe
