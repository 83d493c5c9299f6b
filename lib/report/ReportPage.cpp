// The report pages' shared pieces: the SVG scatter plot, the style sheet and the table/hover script.
#include "report/ReportPage.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "report/ReportJson.h"

namespace probe::report {

namespace {

// Plot geometry (SVG user units).
constexpr int kWidth = 900, kHeight = 260, kLeft = 60, kRight = 10, kTop = 10, kBottom = 30;

}  // namespace

std::string scatter_svg(const ScatterPlot& plot, std::string& hover_json) {
  std::vector<std::pair<std::size_t, double>> pts;
  for (std::size_t i = 0; i < plot.count; ++i) {
    const double v = plot.value(i);
    if (std::isfinite(v)) pts.emplace_back(i, v);
  }
  const double line = plot.line;
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
  const double n = std::max<double>(1, static_cast<double>(plot.count) - 1);
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
      plot.id, kWidth, kHeight, kWidth, kHeight, plot.title);
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
  if (plot.mark) {
    const int x = px(*plot.mark);
    svg +=
        fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" class=\"mark\"/>", x, x, kTop, kTop + ph);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\">{}, in execution order ({} plotted)</text>",
                     kLeft + pw / 2, kHeight - 6, plot.x_label, pts.size());
  hover_json += fmt::format(
      "{}:{{\"column\":{},\"lo\":{},\"hi\":{},\"n\":{},\"left\":{},\"top\":{},\"pw\":{},\"ph\":{}}}",
      report::json_string(plot.id), report::json_string(plot.column), e_lo, e_hi, n, kLeft, kTop, pw, ph);
  // Drawn pass first, so the flagged points lie on top.
  for (std::string_view cls : {"pass", "skip", "warn", "err"}) {
    std::string d;
    for (auto& [i, v] : pts)
      if (plot.cls(i) == cls) d += fmt::format("M{} {}h0", px(i), py(v));
    if (!d.empty()) svg += fmt::format("<path class=\"pt {}\" d=\"{}\"/>", cls, d);
  }
  return svg + "</svg>";
}

namespace {

// The non-empty bins' range [first, last]; first > last when every bin is empty.
std::pair<int, int> used_bins(const ErrorHistogram& h) {
  int first = ErrorHistogram::kBins, last = -1;
  for (int b = 0; b < ErrorHistogram::kBins; ++b)
    if (h.counts[static_cast<std::size_t>(b)] > 0) first = std::min(first, b), last = b;
  return {first, last};
}

}  // namespace

std::string histogram_json(const ErrorHistogram& h) {
  const auto [first, last] = used_bins(h);
  std::string counts;
  for (int b = first; b <= last; ++b)
    counts += fmt::format("{}{}", b == first ? "" : ",", h.counts[static_cast<std::size_t>(b)]);
  return fmt::format(
      "\"unit\":{},\"min_exp\":{},\"counts\":[{}],\"zero\":{},\"below\":{},\"above\":{},\"nonfinite\":{}",
      json_string(to_string(h.unit)), first <= last ? first + ErrorHistogram::kMinExp : 0, counts, h.zero,
      h.below, h.above, h.nonfinite);
}

std::string histogram_svg(const std::string& id, const std::string& title, const ErrorHistogram& h) {
  struct Bar {
    std::string label;
    std::int64_t count;
    bool beyond;  // at or above 1 in bound units or ULPs
  };
  const bool has_one = h.unit != HistogramUnit::RelativeError;
  std::vector<Bar> bars;
  if (h.zero) bars.push_back({"0", h.zero, false});
  if (h.below) bars.push_back({fmt::format("<2^{}", ErrorHistogram::kMinExp), h.below, false});
  const auto [first, last] = used_bins(h);
  std::ptrdiff_t one_at = -1;  // the first bar of errors >= 1: the line at 1 is its left edge
  for (int b = first; b <= last; ++b) {
    const int e = b + ErrorHistogram::kMinExp;
    if (e >= 0 && one_at < 0) one_at = static_cast<std::ptrdiff_t>(bars.size());
    bars.push_back({fmt::format("2^{}", e), h.counts[static_cast<std::size_t>(b)], has_one && e >= 0});
  }
  if (h.above) {
    if (one_at < 0) one_at = static_cast<std::ptrdiff_t>(bars.size());
    bars.push_back({fmt::format(">=2^{}", ErrorHistogram::kMaxExp), h.above, has_one});
  }
  if (h.nonfinite) bars.push_back({"non-finite", h.nonfinite, true});
  std::int64_t most = 1;
  for (const Bar& b : bars) most = std::max(most, b.count);
  constexpr int kW = 900, kH = 200, kL = 60, kR = 10, kT = 10, kB = 40;
  const double pw = kW - kL - kR, ph = kH - kT - kB;
  const double bw = pw / static_cast<double>(std::max<std::size_t>(bars.size(), 1));
  const double top = std::log10(static_cast<double>(most) + 1);
  std::string svg = fmt::format(
      "<svg id=\"{}\" class=\"plot hist\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" "
      "role=\"img\"><title>{}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>",
      id, kW, kH, kW, kH, html_text(title), kL, kT, pw, ph);
  for (int e = 0; std::pow(10.0, e) <= static_cast<double>(most); ++e) {
    const double y = kT + ph * (1 - std::log10(std::pow(10.0, e) + 1) / top);
    svg += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"grid\"/><text x=\"{}\" "
        "y=\"{:.1f}\" class=\"tick\">1e{}</text>",
        kL, kW - kR, y, y, kL - 4, y + 4, e);
  }
  const std::size_t label_every = std::max<std::size_t>(1, (bars.size() + 11) / 12);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double hgt = ph * std::log10(static_cast<double>(b.count) + 1) / top;
    const double x = kL + bw * static_cast<double>(i);
    svg += fmt::format(
        "<rect class=\"bar{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"><title>{}: {} "
        "elements</title></rect>",
        b.beyond ? " beyond" : "", x + 1, kT + ph - hgt, std::max(1.0, bw - 2), hgt, html_text(b.label),
        b.count);
    if (i % label_every == 0)
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick mid\">{}</text>", x + bw / 2, kT + ph + 14,
                         html_text(b.label));
  }
  if (has_one && one_at >= 0) {
    const double x = kL + bw * static_cast<double>(one_at);
    svg += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" class=\"limit\"/>", x, x, kT,
                       kT + ph);
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" class=\"axis\">{} (bins [2^e, 2^(e+1)); bar height: log of the "
      "count)</text>",
      kL + pw / 2, kH - 6, to_string(h.unit));
  return svg + "</svg>";
}

std::string page_start(std::string_view title, std::string_view extra_style) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-"
      "Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src "
      "'unsafe-inline'\"><title>{}"
      "</title><style>{}{}</style></head><body>\n",
      title, kStyle, extra_style);
}

std::string table_section(const TableSection& s) {
  std::string h = fmt::format(
      "<h2>{}</h2><div class=\"controls\"><input id=\"q\" placeholder=\"{}\">{}<button id=\"prev\">&lt; "
      "previous</button><button id=\"next\">next &gt;</button> <span id=\"pageinfo\"></span></div>{}<table "
      "id=\"all-table\"></table>\n",
      s.heading, s.placeholder, s.selects, s.hint);
  if (!s.selected.empty())
    h += fmt::format("<h2>{}</h2><div id=\"selected\"></div><div id=\"tip\"></div>\n", s.selected);
  return h;
}

std::string page_end(std::string_view data_json, std::string_view plot_points, std::string_view script) {
  std::string h =
      fmt::format("<script type=\"application/json\" id=\"report-data\">{}</script>\n", data_json);
  if (!plot_points.empty())
    h += fmt::format("<script type=\"application/json\" id=\"plot-points\">{}</script>\n", plot_points);
  return h + fmt::format("<script>{}{}</script>\n</body></html>\n", kCommonScript, script);
}

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

const std::string_view kStyle = R"CSS(
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:24px}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f0f0f0;cursor:pointer;user-select:none}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.s-pass{color:#1a7f37}.s-Warning{color:#9a6700;font-weight:bold}.s-error{color:#cf222e;font-weight:bold}.s-SKIP{color:#777}
.plot .frame{fill:none;stroke:#999}.plot .mark{stroke:#8250df;stroke-width:2}.plot .grid{stroke:#eee}.plot .limit{stroke:#cf222e;stroke-dasharray:4 3}
.plot .tick{font-size:10px;text-anchor:end}.plot .axis{font-size:11px;text-anchor:middle}
.plot .pt{stroke-width:5;stroke-linecap:round;fill:none}
.plot .bar{fill:#6e7781}.plot .bar.beyond{fill:#cf222e}.plot .tick.mid{text-anchor:middle}
.plot .pass{stroke:#2da44e}.plot .warn{stroke:#d4a72c}.plot .err{stroke:#cf222e}.plot .skip{stroke:#999}
#tip{position:fixed;display:none;background:#fff;border:1px solid #888;padding:2px 6px;pointer-events:none;font-size:12px}
.msg{max-width:520px;white-space:pre-wrap;font-size:12px}
.controls input,.controls select{margin-right:8px}tr.sel td{background:#fff8c5}
)CSS";

// Sets body[data-jserror] on any uncaught error (what the headless-browser test reads). makeTable(o): o.rows
// (arrays), o.cols/o.heads (shown columns), o.table, o.q (text filter over o.textCols), o.selects ([select,
// column] pairs: equality filters), o.prev/o.next/o.info (paging), o.cls(column, value) (cell class),
// o.onclick(row index). hover(H, rows, C, label): names the row under the pointer in each plot of H.
const std::string_view kCommonScript = R"JS(
window.addEventListener('error',function(e){document.body.setAttribute('data-jserror',String(e.message));});
function el(t,a,txt){var e=document.createElement(t);if(a)for(var k in a)e.setAttribute(k,a[k]);if(txt!==undefined&&txt!==null)e.textContent=String(txt);return e;}
function fmt(v){if(v===null||v===undefined)return '';if(typeof v!=='number')return v;if(v===0)return '0';var a=Math.abs(v);return (a>=1e4||a<1e-3)?v.toExponential(3):String(+v.toPrecision(4));}
function makeTable(o){var view=[],page=0,per=100,sortCol=-1,sortDir=1;
function apply(){var s=o.q.value.toLowerCase();view=[];o.rows.forEach(function(r,i){
for(var k=0;k<o.selects.length;k++){var f=o.selects[k];if(f[0].value&&r[f[1]]!==f[0].value)return;}
if(s){var hit=false;o.textCols.forEach(function(c){if(String(r[c]===null?'':r[c]).toLowerCase().indexOf(s)>=0)hit=true;});if(!hit)return;}
view.push(i);});
if(sortCol>=0){var k=o.cols[sortCol];view.sort(function(a,b){var x=o.rows[a][k],y=o.rows[b][k];if(x===y)return a-b;if(x===null)return 1;if(y===null)return -1;return (x<y?-1:1)*sortDir;});}
page=0;draw();}
function draw(){var t=o.table;while(t.firstChild)t.removeChild(t.firstChild);var hr=el('tr');
o.heads.forEach(function(h,c){var th=el('th',null,h+(c===sortCol?(sortDir>0?' \u25b2':' \u25bc'):''));th.addEventListener('click',function(){if(sortCol===c)sortDir=-sortDir;else{sortCol=c;sortDir=1;}apply();});hr.appendChild(th);});t.appendChild(hr);
var n=Math.max(1,Math.ceil(view.length/per));page=Math.min(page,n-1);
view.slice(page*per,page*per+per).forEach(function(i){var r=o.rows[i];var tr=el('tr');o.cols.forEach(function(c){var v=r[c];var num=typeof v==='number';tr.appendChild(el('td',{'class':(num?'num ':'')+o.cls(c,v)},num?fmt(v):v));});
if(o.onclick)tr.addEventListener('click',function(){var s=t.querySelector('tr.sel');if(s)s.classList.remove('sel');tr.classList.add('sel');o.onclick(i);});t.appendChild(tr);});
o.info.textContent=view.length+' of '+o.rows.length+' rows, page '+(page+1)+' of '+n;}
o.prev.addEventListener('click',function(){if(page>0){page--;draw();}});
o.next.addEventListener('click',function(){if((page+1)*per<view.length){page++;draw();}});
[o.q].concat(o.selects.map(function(f){return f[0];})).forEach(function(e){e.addEventListener('input',apply);});apply();}
function hover(H,rows,C,label){var tip=document.getElementById('tip');
Object.keys(H).forEach(function(id){var svg=document.getElementById(id);var A=H[id];if(!svg)return;
var P=[],k=C[A.column];rows.forEach(function(o,i){var v=o[k];if(v===null)return;var t=v>0?Math.min(1,Math.max(0,(Math.log10(v)-A.lo)/(A.hi-A.lo))):0;P.push(A.left+A.pw*i/A.n,A.top+A.ph*(1-t),i);});
svg.addEventListener('mousemove',function(ev){var r=svg.getBoundingClientRect();var sx=svg.viewBox.baseVal.width/r.width;var x=(ev.clientX-r.left)*sx,y=(ev.clientY-r.top)*sx;var best=-1,bd=64;
for(var j=0;j<P.length;j+=3){var dx=P[j]-x,dy=P[j+1]-y,d=dx*dx+dy*dy;if(d<bd){bd=d;best=j;}}
if(best<0){tip.style.display='none';return;}tip.textContent=label(rows[P[best+2]]);tip.style.left=(ev.clientX+12)+'px';tip.style.top=(ev.clientY+12)+'px';tip.style.display='block';});
svg.addEventListener('mouseleave',function(){tip.style.display='none';});});}
)JS";

}  // namespace probe::report
