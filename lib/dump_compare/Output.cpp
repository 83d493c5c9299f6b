// compare.json, multi-rank pairing and the output files of `compare` (dump-and-compare §3.1, §3.10, §3.11).
#include <fmt/format.h>
#include <rapidjson/document.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xlsxwriter.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dump_compare/DumpCompareInternal.h"
#include "probe/csv.h"
#include "probe/error.h"
#include "support/FileOps.h"
#include "support/JsonDocument.h"
#include "support/RankWork.h"
#include "support/Timestamp.h"

namespace probe {
namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t kMaxJsonBytes = 10ull << 30;  // msprobe's limit on inputs

std::string read_small_file(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) throw Error(ErrorKind::Io, "cannot read compare.json: " + ec.message(), path);
  if (size > (16u << 20)) throw Error(ErrorKind::Format, "compare.json larger than 16 MiB", path);
  return detail::read_whole_file(path, "cannot open compare.json");
}

void make_out_dir(const std::string& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return;
  fs::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::Io, "cannot create the output directory: " + ec.message(), dir);
  ::chmod(dir.c_str(), 0750);
}

// Writes `path` through a temporary and moves it into place only if nothing is there: an earlier output
// is never overwritten, and an interrupted run never leaves a half-written file under the final name.
template <class WriteFn>
void write_new_file(const std::string& path, WriteFn&& write) {
  const std::string tmp = path + ".partial." + std::to_string(::getpid());
  std::error_code ec;
  fs::remove(tmp, ec);
  try {
    write(tmp);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  ::chmod(tmp.c_str(), 0640);
  detail::publish_new_file(tmp, path);
}

void refuse_existing(const std::string& path) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(path, ec)))
    throw Error(ErrorKind::InvalidArgument,
                "output file exists (an earlier compare); refusing to overwrite it: pass another "
                "--timestamp or -o",
                path);
}

void write_csv(const std::string& path, const DumpCompareTable& t) {
  write_new_file(path, [&](const std::string& tmp) {
    CsvWriter w(tmp, t.header);
    for (const auto& r : t.rows) w.write_row(r);
  });
}

void xlsx_check(lxw_error err, const std::string& path) {
  if (err != LXW_NO_ERROR) throw Error(ErrorKind::Io, std::string("xlsx: ") + lxw_strerror(err), path);
}

// Numbers and booleans as typed cells (pandas' writer), or everything as text when highlighting (openpyxl's
// path, §3.9); whole rows filled red or yellow.
void write_xlsx_to(const std::string& path, const DumpCompareTable& t, bool highlighted) {
  lxw_workbook* wb = workbook_new(path.c_str());
  if (!wb) throw Error(ErrorKind::Io, "cannot create the xlsx file", path);
  lxw_format* red = workbook_add_format(wb);
  format_set_bg_color(red, 0xFF0000);
  format_set_pattern(red, LXW_PATTERN_SOLID);
  lxw_format* yellow = workbook_add_format(wb);
  format_set_bg_color(yellow, 0xFFFF00);
  format_set_pattern(yellow, LXW_PATTERN_SOLID);
  constexpr std::size_t kSheetRows = 1048500;
  const std::size_t parts = t.rows.size() >= kSheetRows ? (t.rows.size() + kSheetRows - 1) / kSheetRows : 1;
  const std::size_t per = parts == 1 ? t.rows.size() : (t.rows.size() + parts - 1) / parts;
  for (std::size_t p = 0; p < parts; ++p) {
    const std::string name = parts > 1 ? fmt::format("part_{}", p) : highlighted ? "Sheet" : "Sheet1";
    lxw_worksheet* ws = workbook_add_worksheet(wb, name.c_str());
    for (std::size_t c = 0; c < t.header.size(); ++c)
      worksheet_write_string(ws, 0, static_cast<lxw_col_t>(c), t.header[c].c_str(), nullptr);
    const std::size_t begin = p * per, end = std::min(t.rows.size(), begin + per);
    for (std::size_t r = begin; r < end; ++r) {
      const auto row = static_cast<lxw_row_t>(r - begin + 1);
      lxw_format* fill = t.colours[r] == RowColour::Red      ? red
                         : t.colours[r] == RowColour::Yellow ? yellow
                                                             : nullptr;
      if (fill) worksheet_set_row(ws, row, LXW_DEF_ROW_HEIGHT, fill);
      for (std::size_t c = 0; c < t.rows[r].size(); ++c) {
        const auto col = static_cast<lxw_col_t>(c);
        const std::string& s = t.rows[r][c];
        const CellKind k = t.kinds[r][c];
        if (k == CellKind::Number && !highlighted) {
          const double v = std::strtod(s.c_str(), nullptr);
          if (std::isfinite(v)) {
            worksheet_write_number(ws, row, col, v, fill);
            continue;
          }
        } else if (k == CellKind::Number && highlighted) {
          const double v = std::strtod(s.c_str(), nullptr);
          if (std::isfinite(v)) {
            worksheet_write_number(ws, row, col, v, fill);
            continue;
          }
          worksheet_write_string(ws, row, col, (s + "\t").c_str(), fill);  // inf/nan as text + TAB
          continue;
        } else if (k == CellKind::Bool && !highlighted) {
          worksheet_write_boolean(ws, row, col, s == "True", fill);
          continue;
        }
        if (s.empty() && !highlighted) {
          if (fill) worksheet_write_blank(ws, row, col, fill);
          continue;
        }
        worksheet_write_string(ws, row, col, s.c_str(), fill);
      }
    }
  }
  xlsx_check(workbook_close(wb), path);
}

void write_xlsx(const std::string& path, const DumpCompareTable& t, bool highlighted) {
  write_new_file(path, [&](const std::string& tmp) { write_xlsx_to(tmp, t, highlighted); });
}

void write_advisor_to(const std::string& path, const DumpCompareTable& t) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(ErrorKind::Io, "cannot write the advisor file", path);
  if (t.first_suspect >= t.rows.size()) {
    out << "Line: NA\nSuspect Nodes: NA\nExpert Advice: NA\n";
  } else {
    const char* advice =
        t.mode == DumpCompareMode::RealData
            ? "The first API whose result is not accurate enough; check it and its inputs first."
        : t.mode == DumpCompareMode::Md5
            ? "The first API whose data differs between the two runs; check it and its inputs first."
            : "The first API whose statistics differ by more than half; check it and its inputs "
              "first.";
    out << "Line: " << t.first_suspect << "\nSuspect Nodes: " << t.rows[t.first_suspect][0]
        << "\nExpert Advice: " << advice << "\n";
  }
  out.close();
  if (!out) throw Error(ErrorKind::Io, "cannot write the advisor file", path);
}

void write_advisor(const std::string& path, const DumpCompareTable& t) {
  write_new_file(path, [&](const std::string& tmp) { write_advisor_to(tmp, t); });
}

// The caller's thresholds, progress callback and stop token, passed down to every file pair.
struct Control {
  const DumpCompareThresholds& thresholds;
  const DumpCompareProgressFn& progress;
  std::stop_token stop;
};

DumpCompareSummary::Output compare_pair(const std::string& npu_json, const std::string& bench_json,
                                        const std::string& stack_json, const std::string& suffix,
                                        const DumpCompareOptions& options, const std::string& ts,
                                        const Control& control) {
  const bool debug = fs::path(npu_json).filename() == "debug.json";
  const DumpCompareTable t = compare_dump_files(npu_json, bench_json, stack_json, options, control.thresholds,
                                                control.progress, control.stop);
  DumpCompareSummary::Output o;
  o.rank_suffix = suffix;
  o.cancelled = t.cancelled;
  o.mode = t.mode;
  o.rows = t.rows.size();
  o.suspects = t.suspects;
  o.unreadable = t.unreadable;
  o.first_unreadable = t.first_unreadable;
  o.unmatched = t.unmatched;
  const std::string stem = std::string(debug ? "debug_compare_result" : "compare_result") + suffix + "_" + ts;
  make_out_dir(options.out_dir);
  o.csv = (fs::path(options.out_dir) / (stem + ".csv")).string();
  if (options.write_xlsx) o.xlsx = (fs::path(options.out_dir) / (stem + ".xlsx")).string();
  if (!options.compare_only)
    o.advisor = (fs::path(options.out_dir) / ("advisor" + suffix + "_" + ts + ".txt")).string();
  // All or nothing: refuse before writing the first file when any of them is taken.
  for (const std::string* p : {&o.csv, &o.xlsx, &o.advisor})
    if (!p->empty()) refuse_existing(*p);
  write_csv(o.csv, t);
  if (!o.xlsx.empty()) write_xlsx(o.xlsx, t, options.highlight && !debug && t.mode != DumpCompareMode::Md5);
  if (!o.advisor.empty()) write_advisor(o.advisor, t);
  return o;
}

using dump_compare_detail::rank_dirs;

void put_output(detail::WireOut& out, const DumpCompareSummary::Output& o) {
  for (const std::string* v : {&o.rank_suffix, &o.csv, &o.xlsx, &o.advisor}) out.str(*v);
  out.u64(static_cast<std::uint64_t>(o.mode));
  out.u64(o.rows);
  out.u64(o.suspects);
  out.u64(o.unreadable);
  out.str(o.first_unreadable);
  out.u64(o.unmatched);
  out.u64(o.cancelled ? 1 : 0);
}

DumpCompareSummary::Output get_output(detail::WireIn& in) {
  DumpCompareSummary::Output o;
  for (std::string* v : {&o.rank_suffix, &o.csv, &o.xlsx, &o.advisor}) *v = in.str();
  o.mode = static_cast<DumpCompareMode>(in.u64());
  o.rows = in.u64();
  o.suspects = in.u64();
  o.unreadable = in.u64();
  o.first_unreadable = in.str();
  o.unmatched = in.u64();
  o.cancelled = in.u64() != 0;
  return o;
}

void compare_step(const std::string& npu_step, const std::string& bench_step,
                  const DumpCompareOptions& options, const std::string& ts, DumpCompareSummary& s,
                  const Control& control) {
  const auto npu_ranks = rank_dirs(npu_step), bench_ranks = rank_dirs(bench_step);
  if (npu_ranks.size() != bench_ranks.size())
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("the NPU step has {} rank directories, the bench step {}", npu_ranks.size(),
                            bench_ranks.size()),
                bench_step);
  if (npu_ranks.empty()) throw Error(ErrorKind::InvalidArgument, "no rank directories", npu_step);
  // The dump pairs in output order: per rank directory, dump.json then debug.json.
  struct Pair {
    fs::path npu, bench;
    std::string suffix;
  };
  std::vector<Pair> pairs;
  // A rank directory without a pair ends the compare there: one process writes the ranks before it first.
  std::optional<Error> missing;
  for (std::size_t i = 0; i < npu_ranks.size() && !missing; ++i) {
    const fs::path n = fs::path(npu_step) / npu_ranks[i].name, b = fs::path(bench_step) / bench_ranks[i].name;
    bool any = false;
    for (const char* file : {"dump.json", "debug.json"}) {
      if (!fs::is_regular_file(n / file) || !fs::is_regular_file(b / file)) continue;
      any = true;
      pairs.push_back({n / file, b / file, "_" + npu_ranks[i].name});
    }
    if (!any)
      missing.emplace(ErrorKind::Io, "no dump.json or debug.json present in both rank directories",
                      n.string(), npu_ranks[i].name);
  }
  // Stack is auto-detected per rank (stack.json beside the NPU file).
  auto compare = [&](const Pair& p) {
    return compare_pair(p.npu.string(), p.bench.string(), "", p.suffix, options, ts, control);
  };
  if (!options.group || options.group->size() == 1) {
    for (const Pair& p : pairs) {
      if (s.cancelled || control.stop.stop_requested()) {
        s.cancelled = true;
        return;
      }
      s.outputs.push_back(compare(p));
      s.cancelled = s.outputs.back().cancelled;
    }
    if (missing && !s.cancelled) throw *missing;
    return;
  }
  // Across ranks the whole step is checked first: no rank starts what the job would refuse.
  if (missing) throw *missing;
  // Across ranks: a pair's cost grows with its dump.json files (and the tensors they name).
  std::vector<double> weights;
  for (const Pair& p : pairs) {
    std::error_code ec;
    const auto size = [&](const fs::path& f) {
      const auto n = fs::file_size(f, ec);
      return ec ? 0.0 : static_cast<double>(n);
    };
    weights.push_back(size(p.npu) + size(p.bench));
  }
  const std::vector<std::string> outputs = detail::map_on_ranks(
      *options.group, weights,
      [&](std::size_t i) {
        detail::WireOut out;
        put_output(out, compare(pairs[i]));
        return std::move(out.bytes());
      },
      1, true);
  for (const std::string& bytes : outputs) {
    detail::WireIn in(bytes);
    s.outputs.push_back(get_output(in));
    s.cancelled = s.cancelled || s.outputs.back().cancelled;
  }
}

}  // namespace

namespace dump_compare_detail {
std::vector<RankDir> rank_dirs(const std::string& step_dir) {
  // ^rank(0|[1-9][0-9]*)?$ without <regex> (GCC 12 warns inside it under ASan).
  auto is_rank = [](const std::string& n) {
    if (n.rfind("rank", 0) != 0) return false;
    const std::string d = n.substr(4);
    if (d.empty() || d == "0") return true;
    return d[0] != '0' && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  std::vector<RankDir> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(step_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || !is_rank(name))
      throw Error(
          ErrorKind::InvalidArgument,
          "a multi-rank compare needs step directories holding only rank* directories, found '" + name + "'",
          step_dir);
    RankDir r{name, -1};
    if (name.size() > 4) {
      if (name.size() > 18) throw Error(ErrorKind::InvalidArgument, "rank number too large", step_dir, name);
      r.index = std::stoll(name.substr(4));
    }
    out.push_back(r);
  }
  if (ec) throw Error(ErrorKind::Io, "cannot list the directory: " + ec.message(), step_dir);
  std::sort(out.begin(), out.end(), [](const RankDir& a, const RankDir& b) { return a.index < b.index; });
  return out;
}

}  // namespace dump_compare_detail

CompareInput read_compare_json(const std::string& path) {
  const std::string text = read_small_file(path);
  const rapidjson::Document doc = detail::parse_json_document(text, path);
  if (!doc.IsObject()) throw Error(ErrorKind::Format, "compare.json must hold a JSON object", path);
  CompareInput in;
  // Read through a const view: comparing rapidjson's mutable member iterators is ambiguous under C++20's
  // reversed operators (clang -Wambiguous-reversed-operator); the const ones compare cleanly.
  const rapidjson::Value& root = doc;
  auto str = [&](const char* key, std::string& out, bool required) {
    auto it = root.FindMember(key);
    if (it == root.MemberEnd() || it->value.IsNull()) {
      if (required) throw Error(ErrorKind::Format, std::string("missing key '") + key + "'", path, key);
      return;
    }
    if (!it->value.IsString()) throw Error(ErrorKind::Format, "expected a string", path, key);
    out = it->value.GetString();
    if (required && out.empty()) throw Error(ErrorKind::Format, "empty path", path, key);
  };
  str("npu_path", in.npu_path, true);
  str("bench_path", in.bench_path, true);
  str("stack_path", in.stack_path, false);
  if (auto it = root.FindMember("is_print_compare_log"); it != root.MemberEnd()) {
    if (!it->value.IsBool())
      throw Error(ErrorKind::Format, "expected true or false", path, "is_print_compare_log");
    in.is_print_compare_log = it->value.GetBool();
  }
  return in;
}

namespace {

// True when `dir` holds an output of a compare stamped `ts` (compare_result*_ts.*, advisor*_ts.txt, ...).
bool stamp_taken(const std::string& dir, const std::string& ts) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.find("_" + ts + ".") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

DumpCompareSummary run_dump_compare(const CompareInput& input, const DumpCompareOptions& options,
                                    const DumpCompareProgressFn& progress, std::stop_token stop) {
  return run_dump_compare(input, options, DumpCompareThresholds{}, progress, std::move(stop));
}

DumpCompareSummary run_dump_compare(const CompareInput& input, const DumpCompareOptions& options,
                                    const DumpCompareThresholds& thresholds,
                                    const DumpCompareProgressFn& progress, std::stop_token stop) {
  const Control control{thresholds, progress, std::move(stop)};
  // Rank 0 picks the names for every rank.
  auto pick = [&] {
    std::string ts = options.timestamp.empty() ? detail::local_timestamp() : options.timestamp;
    // Without --timestamp a compare whose names are taken (an earlier run in the same second) moves on to
    // the next free second; with --timestamp an existing output is refused (never overwritten).
    for (int tries = 0; options.timestamp.empty() && tries < 600 && stamp_taken(options.out_dir, ts); ++tries)
      ts = detail::next_timestamp(ts);
    return ts;
  };
  const std::string ts = options.group ? detail::decide_on_root(*options.group, pick) : pick();
  if (ts.size() != 14 || !std::all_of(ts.begin(), ts.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw Error(ErrorKind::InvalidArgument, "expected 14 digits YYYYmmddHHMMSS", {}, "--timestamp");
  std::error_code ec;
  for (const std::string* p : {&input.npu_path, &input.bench_path})
    detail::require_exists(*p, "no such file or directory", p == &input.npu_path ? "npu_path" : "bench_path");
  for (const std::string* p : {&input.npu_path, &input.bench_path})
    if (fs::is_regular_file(*p, ec) && fs::file_size(*p, ec) > kMaxJsonBytes)
      throw Error(ErrorKind::InvalidArgument, "file larger than 10 GiB", *p);
  const bool npu_dir = fs::is_directory(input.npu_path), bench_dir = fs::is_directory(input.bench_path);
  if (npu_dir != bench_dir)
    throw Error(ErrorKind::InvalidArgument,
                "npu_path and bench_path must both be files or both be directories", input.bench_path,
                "bench_path");
  DumpCompareSummary s;
  if (!npu_dir) {
    s.outputs.push_back(
        compare_pair(input.npu_path, input.bench_path, input.stack_path, "", options, ts, control));
    s.cancelled = s.outputs.back().cancelled;
    return s;
  }
  // MindSpore jit dumps: {root}/{graph|pynative}/step*/rank*; each common step is compared into
  // {out}/{graph|pynative}/{step}/ (§3.11).
  bool mix = false;
  for (const char* mode : {"graph", "pynative"}) {
    const fs::path n = fs::path(input.npu_path) / mode, b = fs::path(input.bench_path) / mode;
    if (!fs::is_directory(n) || !fs::is_directory(b)) continue;
    mix = true;
    std::vector<std::string> steps;
    for (const auto& e : fs::directory_iterator(n, ec))
      if (e.is_directory() && fs::is_directory(b / e.path().filename()))
        steps.push_back(e.path().filename().string());
    std::sort(steps.begin(), steps.end());
    for (const auto& step : steps) {
      DumpCompareOptions o = options;
      o.out_dir = (fs::path(options.out_dir) / mode / step).string();
      compare_step((n / step).string(), (b / step).string(), o, ts, s, control);
    }
  }
  if (!mix) compare_step(input.npu_path, input.bench_path, options, ts, s, control);
  return s;
}

}  // namespace probe
