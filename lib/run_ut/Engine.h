// Internal: the part of run_ut that does not know what checking an API means — resume, worker
// threads with dump-order output, flushing per API, progress and the summary.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "probe/distributed.h"
#include "probe/run_ut.h"
#include "run_ut/OutputFiles.h"
#include "run_ut/RunRecord.h"

namespace probe::rut {

/// Summary roll-up of one result row (see probe::run_ut_api_outcome).
Status run_ut_outcome_impl(std::optional<Status> fwd, std::optional<Status> bwd);

/// Adds one result row's (forward, backward) statuses to a summary's counts.
void count(RunUtSummary& s, std::optional<Status> fwd, std::optional<Status> bwd);

struct EngineConfig {
  OutputPaths paths;
  bool resume = false;  ///< continue in existing files (skips APIs with a result row)
  Framework framework = Framework::PyTorch;
  int threads = 1;
  /// The caller already holds claim_outputs() for `paths`; otherwise run_engine claims them itself.
  bool outputs_claimed = false;
  /// When set, the files get a run record (RunRecord.h): a new run writes this fingerprint and a checkpoint
  /// after each API; a resume proves the files against it before continuing. Unset: no record (the online
  /// stream, engine tests).
  std::optional<RunFingerprint> fingerprint;
  /// With a fingerprint: continue result rows that have no run record (a file msprobe or an older probe
  /// wrote), which are checked only against the dump's API names; otherwise such a resume is refused.
  bool resume_foreign = false;
  /// Ranks to split the APIs across (nullptr or a group of 1: this process alone). Rank 0 alone touches the
  /// files (claimed by the caller on rank 0 only, `paths` the same on every rank); the others check and send
  /// their rows to it, round by round, so the files are those of one process.
  Distributed* group = nullptr;
  /// Cost of checking apis[i], for handing the heaviest out first across ranks; unset: all equal.
  std::function<double(std::size_t)> weight;
};

/// Proves (resume) or starts (new run) the run record and repairs resumed files; what they already hold.
ResumeState open_outputs(const std::vector<std::string>& apis, const EngineConfig& config,
                         const RunUtFormat& format);

/// Checks `apis[i]` with `check(i)` (called concurrently, must not throw for per-API problems)
/// and writes the rows in `apis` order. `tensor_bytes`, if given, is read for progress reports. A stop
/// request ends the run between two APIs (the files stay resumable) and sets the summary's `cancelled`.
RunUtSummary run_engine(const std::vector<std::string>& apis,
                        const std::function<ApiRows(std::size_t)>& check, const EngineConfig& config,
                        const RunUtProgressFn& progress,
                        const std::atomic<std::uint64_t>* tensor_bytes = nullptr, std::stop_token stop = {});

/// run_engine across `config.group`'s ranks (EngineRanks.cpp): in rounds of a few APIs per rank and thread,
/// each round's APIs claimed heaviest first (probe::run_work_queue), its rows gathered at rank 0 and written
/// in `apis` order. Every rank returns rank 0's summary. An Error on any rank is thrown on every rank.
RunUtSummary run_engine_ranks(const std::vector<std::string>& apis,
                              const std::function<ApiRows(std::size_t)>& check, const EngineConfig& config,
                              const RunUtProgressFn& progress, const std::atomic<std::uint64_t>* tensor_bytes,
                              std::stop_token stop);

}  // namespace probe::rut
