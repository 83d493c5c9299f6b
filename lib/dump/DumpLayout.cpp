// Discovery of {root}/[graph|pynative/]step{N}/rank{R}/ directories (dump-and-compare §1.1).
#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>

#include "dump/StepRanks.h"
#include "probe/dump_layout.h"
#include "probe/error.h"
#include "support/FileOps.h"

namespace probe {

namespace fs = std::filesystem;

namespace {

// "step12" → 12; "rank" (not distributed) → -1 with matched = true. Mirrors msprobe's ^rank(0|[1-9][0-9]*)?$.
bool numbered(const std::string& name, std::string_view stem, bool number_optional,
              std::optional<long long>& out) {
  if (name.compare(0, stem.size(), stem) != 0) return false;
  const std::string digits = name.substr(stem.size());
  if (digits.empty()) return number_optional;
  if (digits.size() > 15 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  if (digits.size() > 1 && digits[0] == '0') return false;
  out = std::stoll(digits);
  return true;
}

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}
bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::vector<fs::path> subdirs(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (is_dir(it->path())) out.push_back(it->path());
  return out;
}

std::string dump_file_in(const fs::path& dir) {
  for (const char* name : {"dump.json", "debug.json"})
    if (is_file(dir / name)) return (dir / name).string();
  return {};
}

RankDump rank_at(const fs::path& dir, std::string dump_json) {
  RankDump r;
  r.dir = dir.string();
  r.dump_json = std::move(dump_json);
  if (is_file(dir / "stack.json")) r.stack_json = (dir / "stack.json").string();
  if (is_file(dir / "construct.json")) r.construct_json = (dir / "construct.json").string();
  if (is_dir(dir / "dump_tensor_data")) r.tensor_dir = (dir / "dump_tensor_data").string();
  // Name the step/rank from the directory names when they follow the layout.
  const std::string rank_name = dir.filename().string();
  if (numbered(rank_name, "rank", true, r.rank_index)) {
    r.rank = rank_name;
    const std::string step_name = dir.parent_path().filename().string();
    if (numbered(step_name, "step", false, r.step_index)) {
      r.step = step_name;
      const std::string mode = dir.parent_path().parent_path().filename().string();
      if (mode == "graph" || mode == "pynative") r.mode = mode;
    }
  }
  return r;
}

void scan_step(const fs::path& step_dir, std::vector<RankDump>& out) {
  for (const fs::path& d : subdirs(step_dir)) {
    std::optional<long long> idx;
    if (!numbered(d.filename().string(), "rank", true, idx)) continue;
    std::string json = dump_file_in(d);
    if (!json.empty()) out.push_back(rank_at(d, std::move(json)));
  }
}

void scan_root(const fs::path& root, std::vector<RankDump>& out) {
  for (const fs::path& d : subdirs(root)) {
    std::optional<long long> idx;
    if (numbered(d.filename().string(), "step", false, idx)) scan_step(d, out);
  }
}

}  // namespace

DumpLayout DumpLayout::discover(const std::string& path) {
  DumpLayout layout;
  layout.root = path;
  const fs::path p(path);
  std::error_code ec;
  detail::require_exists(path, "no such file or directory");
  if (is_file(p)) {
    layout.ranks.push_back(rank_at(p.parent_path().empty() ? fs::path(".") : p.parent_path(), path));
    return layout;
  }
  if (std::string json = dump_file_in(p); !json.empty()) {
    layout.ranks.push_back(rank_at(p, std::move(json)));
    return layout;
  }
  scan_step(p, layout.ranks);  // a step directory
  scan_root(p, layout.ranks);  // a dump root
  for (const char* mode : {"graph", "pynative"})
    if (is_dir(p / mode)) scan_root(p / mode, layout.ranks);
  if (layout.ranks.empty())
    throw Error(ErrorKind::Io, "no dump.json found (expected step*/rank*/dump.json below it)", path);
  std::sort(layout.ranks.begin(), layout.ranks.end(), [](const RankDump& a, const RankDump& b) {
    return std::make_tuple(a.mode, a.step_index.value_or(-1), a.step, a.rank_index.value_or(-1), a.rank) <
           std::make_tuple(b.mode, b.step_index.value_or(-1), b.step, b.rank_index.value_or(-1), b.rank);
  });
  return layout;
}

namespace detail {

std::map<long long, std::string> step_rank_dirs(const std::string& step, const char* field) {
  std::map<long long, std::string> dirs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(step, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with("rank") || !e.is_directory(ec)) continue;
    const std::string digits = name.substr(4);
    if (!digits.empty() && (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), ::isdigit)))
      continue;
    const long long r = digits.empty() ? 0 : std::stoll(digits);
    if (auto [it, fresh] = dirs.emplace(r, name); !fresh)
      throw Error(ErrorKind::InvalidArgument,
                  "'" + it->second + "' and '" + name + "' name the same rank " + std::to_string(r), step,
                  field);
  }
  if (ec) throw Error(ErrorKind::Io, "cannot list the step directory: " + ec.message(), step, field);
  return dirs;
}

}  // namespace detail
}  // namespace probe
