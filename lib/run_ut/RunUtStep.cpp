// run_ut over a step directory of a multi-rank dump: one output set per rank directory, mirroring the dump's
// layout (<out>/rank<N>/accuracy_checking_*_<ts>.csv), so each rank's files are those a run on its dump.json
// alone writes and resume as such.
#include <algorithm>
#include <filesystem>
#include <map>

#include "dump/StepRanks.h"
#include "probe/error.h"
#include "probe/run_ut.h"
#include "probe/runner.h"
#include "support/RankWork.h"
#include "support/Timestamp.h"

namespace probe {
namespace {

namespace fs = std::filesystem;

// rank<N> directories ("rank" alone is rank 0) in numeric order, as msprobe's dump writes them.
std::vector<std::string> step_rank_dirs(const std::string& step) {
  const std::map<long long, std::string> dirs = detail::step_rank_dirs(step, "-api_info");
  std::error_code ec;
  if (dirs.empty() && fs::is_regular_file(fs::path(step) / "dump.json", ec))
    throw Error(
        ErrorKind::InvalidArgument,
        "a rank directory (it holds dump.json), not a step directory holding rank* directories: pass " +
            (fs::path(step) / "dump.json").string() + ", or the step directory above it",
        step, "-api_info");
  if (dirs.empty())
    throw Error(ErrorKind::InvalidArgument, "no rank* directory in the step directory", step, "-api_info");
  std::vector<std::string> out;
  for (const auto& [r, name] : dirs) out.push_back(name);
  return out;
}

std::string result_name(const std::string& ts) { return "accuracy_checking_result_" + ts + ".csv"; }

}  // namespace

std::vector<RunUtRankSummary> run_ut_step(const RunUtOptions& options, const RunUtProgressFn& progress,
                                          std::stop_token stop) {
  const RunnerRegistry registry = RunnerRegistry::with_builtins();
  const Standards standards = Standards::builtin(options.profile);
  return run_ut_step(options, registry, standards, progress, std::move(stop));
}

std::vector<RunUtRankSummary> run_ut_step(const RunUtOptions& options, const RunnerRegistry& registry,
                                          const Standards& standards, const RunUtProgressFn& progress,
                                          std::stop_token stop) {
  std::error_code ec;
  if (!fs::is_directory(options.api_info, ec))
    throw Error(ErrorKind::InvalidArgument, "expected a step directory holding rank* directories",
                options.api_info, "-api_info");
  const std::vector<std::string> ranks = step_rank_dirs(options.api_info);
  // Where the step's outputs go and under which timestamp: a resume continues the step of the file it names
  // (<out>/<rank dir>/accuracy_checking_result_<ts>.csv); a new step takes the given timestamp or the first
  // second from now that no rank directory of the output has used. Rank 0 decides for the group.
  fs::path out_dir = options.out_dir;
  std::string ts = options.timestamp;
  if (!options.result_csv.empty()) {
    const std::string base = fs::path(options.result_csv).filename().string();
    ts = base.size() > 14 + 4 ? base.substr(base.size() - 4 - 14, 14) : "";
    if (!detail::is_timestamp(ts) || base != result_name(ts))
      throw Error(ErrorKind::InvalidArgument,
                  "-csv_path must name an accuracy_checking_result_<14 digits>.csv file", options.result_csv);
    out_dir = fs::path(options.result_csv).parent_path().parent_path();
  } else if (ts.empty()) {
    auto pick = [&] {
      std::string t = detail::local_timestamp();
      auto taken = [&](const std::string& c) {
        return std::any_of(ranks.begin(), ranks.end(), [&](const std::string& r) {
          return fs::exists(out_dir / r / result_name(c), ec);
        });
      };
      for (int tries = 0; tries < 600 && taken(t); ++tries) t = detail::next_timestamp(t);
      return t;
    };
    ts = options.group ? detail::decide_on_root(*options.group, pick) : pick();
  }
  // Which ranks resume, decided once (by rank 0 for the group) before any rank's files are claimed.
  auto resumed = [&] {
    std::string flags;
    for (const std::string& rank : ranks)
      flags += !options.result_csv.empty() && fs::exists(out_dir / rank / result_name(ts), ec) ? '1' : '0';
    return flags;
  };
  const std::string resumes = options.group ? detail::decide_on_root(*options.group, resumed) : resumed();
  std::vector<RunUtRankSummary> out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    RunUtOptions o = options;
    o.api_info = (fs::path(options.api_info) / ranks[i] / "dump.json").string();
    o.out_dir = (out_dir / ranks[i]).string();
    o.timestamp = ts;
    // A rank the interrupted step never reached has no files yet: it starts under the step's timestamp.
    o.result_csv = resumes[i] == '1' ? (out_dir / ranks[i] / result_name(ts)).string() : std::string();
    out.push_back({ranks[i], run_ut(o, registry, standards, progress, stop)});
    if (out.back().summary.cancelled) break;
  }
  return out;
}

}  // namespace probe
