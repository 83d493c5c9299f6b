// Offline API pre-check (msprobe `run_ut` / `multi_run_ut`): checks every API of a dump against a
// float64 bench and writes msprobe's accuracy_checking_result/details CSVs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "probe/distributed.h"
#include "probe/dump.h"
#include "probe/export.h"
#include "probe/precision_standard.h"
#include "probe/status.h"

namespace probe {

class RunnerRegistry;

/// Where run_ut takes the device side of an API from.
enum class DeviceSide {
  Auto,    ///< the dumped outputs where their files exist, else the registry's device runner (DECISIONS D6)
  Runner,  ///< always the registry's device runner (CLI: `--device_runner emulated`)
};

/// Everything `probe run_ut` can be told; defaults match msprobe's.
struct PROBE_API RunUtOptions {
  std::string api_info;        ///< dump.json to check (-api_info)
  std::string out_dir = "./";  ///< where new CSVs go (-o); created if missing
  std::string result_csv;      ///< resume into this accuracy_checking_result_<ts>.csv (-csv_path)
  /// Resume a result file that has no run record beside it (msprobe's own, an older probe's): its rows are
  /// checked only against the dump's API names (--resume_foreign). Without it such a resume is refused.
  bool resume_foreign = false;
  std::string config_path;  ///< config.json whose run_ut section holds white/black lists (-config)
  /// Write inputs and outputs of failing APIs as .npy under <out>/ut_error_data<ts>/ (-save_error_data);
  /// a failure to write is counted in RunUtSummary::error_data_failures, never turned into a verdict.
  bool save_error_data = false;
  bool filter_api = false;  ///< drop forward entries duplicating an earlier one (-f / --filter_api)
  /// Also write accuracy_checking_histograms_<ts>.csv beside the details CSV: each flagged output's
  /// element errors (error_histogram.h), binned by the passes that judge it, for the report (--report).
  bool error_histograms = false;
  /// Checker to imitate (file headers, name rules, per-output rule): PyTorch or MindSpore (MindTorch dumps
  /// are checked as PyTorch); unset = taken from dump.json ("framework", else the tensor type names).
  std::optional<Framework> framework;
  int threads = 0;            ///< APIs checked concurrently; 0 = all cores
  std::uint64_t seed = 1234;  ///< seed of random inputs generated from statistics dumps
  /// Thresholds/roll-up profile; used by the overload without standards (the other takes the profile of
  /// the standards it is given).
  Profile profile = Profile::Probe;
  std::string timestamp;  ///< 14-digit file timestamp; empty = local time at start
  DeviceSide device_side = DeviceSide::Auto;
  /// Statistics dumps: an API whose generated inputs hold more elements than this in all, or whose result
  /// (or largest intermediate) would, computed from shapes and arguments before the bench runs, is SKIP with
  /// the reason, so a tiny dump.json cannot demand minutes and gigabytes (0 = no limit). Tensor dumps: an
  /// API whose result would exceed both this and its dumped outputs is SKIP.
  std::uint64_t max_api_elements = std::uint64_t{1} << 24;
  /// Statistics dumps: an API on generated inputs whose float64 bench would spend more floating-point
  /// operations than this (GEMM, convolution and attention families, forward) is SKIP with the reason
  /// (0 = no limit). 2^37 is about ten seconds of float64 BLAS on two cores.
  double max_api_flops = 0x1p37;
  /// Ranks to split the APIs across (nullptr: this process alone; probe::mpi gives the ranks of an MPI job).
  /// Every rank calls run_ut with the same options; rank 0 picks the file names, alone reads a resumed file
  /// and writes both files, byte for byte those of one process. Each rank checks the APIs it claims, heaviest
  /// first, with its `threads`.
  Distributed* group = nullptr;
};

/// Progress after each API written: `done` of `total` APIs (resumed ones count as done).
struct PROBE_API RunUtProgress {
  std::size_t done = 0, total = 0;
  std::uint64_t tensor_bytes = 0;  ///< bytes of dumped tensors loaded so far in this run
};
using RunUtProgressFn = std::function<void(const RunUtProgress&)>;

/// Outcome of a whole run, counted over every API row in the result file (including resumed ones).
struct PROBE_API RunUtSummary {
  std::size_t apis = 0, pass = 0, warning = 0, error = 0, skip = 0;
  /// Per direction: APIs whose forward is error, whose backward is error, and whose backward is SKIP
  /// although their forward was checked (an API skipped as a whole counts only in `skip`).
  std::size_t forward_error = 0, backward_error = 0, backward_skip = 0;
  std::size_t checked = 0;         ///< APIs checked by this run (not taken over from a resumed file)
  std::uint64_t tensor_bytes = 0;  ///< bytes of dumped tensors this run loaded
  /// DECISIONS D16 (probe profile, tensor dumps): inputs linked to the outputs they are, tensors whose
  /// gradient was checked through their consumers, the tensors hashed to link them (and their bytes), the
  /// pre-pass's wall time (reading and hashing included) and the time spent in the checks.
  std::size_t dataflow_links = 0, dataflow_tensors = 0, dataflow_hashed = 0;
  std::uint64_t dataflow_hashed_bytes = 0;
  double dataflow_link_seconds = 0, dataflow_check_seconds = 0;
  bool dataflow = false;  ///< whether the pre-pass ran
  std::string result_csv, details_csv;
  std::string error_data_dir;  ///< set when -save_error_data wrote something
  /// Failing APIs whose error data could not be saved (their verdicts stand), and the first reason.
  std::size_t error_data_failures = 0;
  std::string error_data_problem;
  /// True when `stop` was requested: the files hold every API written so far and resume with -csv_path.
  bool cancelled = false;
  /// Entries of the -config file's run_ut.white_list / black_list that name no API of the dump, as
  /// "white_list: conv_2d" (a misspelt name silently skips every API, or none).
  std::vector<std::string> unmatched_list_entries;
  /// Across ranks (RunUtOptions::group): the ranks, the rounds of APIs, the row bytes rank 0 gathered, and
  /// rank 0's seconds waiting for the other ranks' rows (gather, including their imbalance) and writing them.
  std::size_t ranks = 1, rounds = 0;
  std::uint64_t gathered_bytes = 0;
  double gather_seconds = 0, write_seconds = 0, seconds = 0;  ///< seconds: the whole distributed run
};

/// Runs the pre-check with the caller's runners and standards: `registry`'s bench runners (and device
/// runners for the device side) and `standards` (whose profile wins over options.profile). Per-API problems
/// become SKIP/error rows; bad options or an unreadable dump.json throw probe::Error. `progress` is called
/// from the calling thread only, after each API written. Requesting `stop` (from any thread, e.g. from
/// `progress`) ends the run after the API being written; the summary then says `cancelled`. Runners are
/// called concurrently (options.threads): they must be thread-safe. `registry` and `standards` must outlive
/// the call; distinct calls may run concurrently.
PROBE_API RunUtSummary run_ut(const RunUtOptions& options, const RunnerRegistry& registry,
                              const Standards& standards, const RunUtProgressFn& progress = {},
                              std::stop_token stop = {});

/// The same with probe's built-in runners and Standards::builtin(options.profile).
PROBE_API RunUtSummary run_ut(const RunUtOptions& options, const RunUtProgressFn& progress = {},
                              std::stop_token stop = {});

/// One rank directory's part of run_ut_step.
struct PROBE_API RunUtRankSummary {
  std::string rank_dir;  ///< "rank0", "rank1", ... ("rank" alone is rank 0)
  RunUtSummary summary;
};

/// run_ut on a step directory of a multi-rank dump (options.api_info names it: rank*/dump.json, msprobe's
/// layout): every rank directory in rank order, each into options.out_dir/<rank dir>/ as
/// accuracy_checking_{result,details}_<ts>.csv, one timestamp for the whole step. With options.result_csv
/// (any rank's result file of an earlier step run) every rank's files resume, and a rank that has none yet
/// starts under the same timestamp. Stops at the first cancelled rank. Collective over options.group.
PROBE_API std::vector<RunUtRankSummary> run_ut_step(const RunUtOptions& options,
                                                    const RunnerRegistry& registry,
                                                    const Standards& standards,
                                                    const RunUtProgressFn& progress = {},
                                                    std::stop_token stop = {});
/// The same with probe's built-in runners and Standards::builtin(options.profile).
PROBE_API std::vector<RunUtRankSummary> run_ut_step(const RunUtOptions& options,
                                                    const RunUtProgressFn& progress = {},
                                                    std::stop_token stop = {});

/// The statuses of one API's result row rolled up for the summary (nullopt: a blank cell, no verdict).
PROBE_API Status run_ut_api_outcome(std::optional<Status> forward, std::optional<Status> backward);

}  // namespace probe
