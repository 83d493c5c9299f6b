// Checking operators while a C++ framework runs them (msprobe's online dispatch compare, seed 003,
// dump-and-compare §4): each check() hands one executed op to worker threads, which re-run it with the
// float64 bench runner, judge device vs bench, append CSV rows and save .npy files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "probe/dtype.h"
#include "probe/export.h"
#include "probe/precision_standard.h"
#include "probe/runner.h"
#include "probe/tensor.h"
#include "probe/value.h"

namespace probe {

/// Which ops get their tensors saved (PtdbgDispatch's dump_mode).
enum class OnlineDumpMode {
  Off,   ///< no tensor files
  All,   ///< every checked op
  List,  ///< ops named in OnlineCheckerOptions::api_list
  Auto,  ///< failing ops only (DECISIONS D8: what the documentation promises)
};
/// How an output is judged.
enum class OnlineRule {
  /// DECISIONS D8, the documented rule: fail if (cosine < 0.99 and max abs error > 0.001), cosine < 0.9, or
  /// max abs error > 1. The details CSV has msprobe compare's columns with "Accuracy Reached or Not".
  Documented,
  /// run_ut's judgement (compare_output with the standards of OnlineCheckerOptions::profile): details rows in
  /// run_ut's 23 columns, result pass/Warning/error.
  RunUt,
  /// DECISIONS D14, the error bound (the magnitude bench is the op's bench runner on the inputs' absolute
  /// values): run_ut's 23 columns, Status and Message from D14; ops D14 has no family for get run_ut's rule.
  ErrorBound,
};
/// What check() does when the queue is full.
enum class Backpressure {
  Block,  ///< wait for a free slot (nothing is lost)
  Drop,   ///< return false at once and count the op as dropped
};

/// A tensor in the caller's memory: `strides` in elements (empty = row-major contiguous, all >= 0).
/// check() copies it before returning, so the memory may be reused right after.
struct PROBE_API TensorView {
  const void* data = nullptr;
  DType dtype = DType::Float32;
  Shape shape;
  std::vector<std::int64_t> strides;
};
/// One argument or output of a checked op: a view of caller memory, or any probe::Value (scalars, lists,
/// owned tensors, which are copied too).
using OnlineArg = std::variant<TensorView, Value>;
/// Arguments of a checked op, positional then keyword, as the op's runner schema names them.
struct PROBE_API OnlineCall {
  std::vector<OnlineArg> args;
  std::vector<std::pair<std::string, OnlineArg>> kwargs;
};

/// Where a checked op ran, for the names of its CSV rows (DECISIONS D8, LibTorch adapter).
struct PROBE_API OnlineCallSite {
  /// Run by autograd's backward pass (a derivative op such as gelu_backward, or an mm computing a gradient):
  /// its details rows are `….backward.output.N` instead of `….forward.output.N` and its verdict is in the
  /// result file's "Backward Test Success" column.
  bool backward = false;
  /// The training step, when the caller knows it: every row name of the op starts with `step{N}.`.
  std::optional<std::uint64_t> step;
};

/// PtdbgDispatch's parameters plus the worker pool's.
struct PROBE_API OnlineCheckerOptions {
  std::string dump_path;  ///< must exist; the run directory msprobe_[tag_]rank{N}_{ts}/ is created in it
  std::string tag;        ///< [A-Za-z0-9_-]*, inserted in the directory name
  int rank = 0;           ///< N of "rank{N}" (msprobe: the device id)
  OnlineDumpMode dump_mode = OnlineDumpMode::Off;
  std::vector<std::string> api_list;  ///< ops saved in List mode (full name or name without prefix)
  /// Ops never checked (views, copies, factories, random ops): nullopt = the shipped list
  /// (data/online_dispatch.json, msprobe's aten_ops_blacklist). Matched like api_list.
  std::optional<std::vector<std::string>> black_list;
  OnlineRule rule = OnlineRule::ErrorBound;
  Profile profile = Profile::Probe;  ///< standards of OnlineRule::RunUt and ErrorBound's fallback
  Framework framework = Framework::PyTorch;
  int workers = 1;                  ///< bench/judge threads (>= 1)
  std::size_t queue_capacity = 64;  ///< ops waiting for a worker (>= 1)
  Backpressure backpressure = Backpressure::Block;
  /// For the names: 17 digits YYYYmmddHHMMSSmmm, or run_ut's 14 (YYYYmmddHHMMSS, milliseconds 000); empty =
  /// local time now. The run directory has msprobe's 17 digits, the CSVs its first 14.
  std::string timestamp;
};

/// Counts so far. Every check() call lands in exactly one of: blacklisted, dropped, unsupported, skipped,
/// passed, failed, or still pending.
struct PROBE_API OnlineCheckerSummary {
  std::size_t calls = 0;        ///< check() calls
  std::size_t blacklisted = 0;  ///< not checked: on the black list
  std::size_t dropped = 0;      ///< not checked: queue full under Backpressure::Drop
  std::size_t unsupported = 0;  ///< not checked: no bench runner (a SKIP row is written)
  std::size_t skipped = 0;      ///< the bench runner refused the call (a SKIP row with the reason)
  std::size_t passed = 0, failed = 0;
  std::size_t pending = 0;                   ///< queued or being checked
  std::vector<std::string> unsupported_ops;  ///< distinct op names without runner, sorted
  std::string run_dir, result_csv, details_csv;
};

/// The online checker. Thread-safe: any number of threads may call check(). Rows are appended (and flushed to
/// the OS) as ops complete, in completion order (call order with one worker), so a crash loses at most the
/// ops queued or in flight; .npy files are replaced atomically.
class PROBE_API OnlineChecker {
 public:
  /// Creates the run directory and CSV files (with headers). Throws Error: InvalidArgument for bad options,
  /// Io when dump_path is missing or not writable. `registry` supplies the bench runners.
  explicit OnlineChecker(OnlineCheckerOptions options,
                         RunnerRegistry registry = RunnerRegistry::with_builtins());
  /// Drains the queue (like flush()) and stops the workers.
  ~OnlineChecker();
  OnlineChecker(const OnlineChecker&) = delete;
  OnlineChecker& operator=(const OnlineChecker&) = delete;

  /// Queues op `api` ("Functional.gelu", "Aten.mm", or a bare aten name "mm" = "Aten.mm") with its inputs and
  /// the outputs the device produced; returns after copying them. Its call number counts per api in call
  /// order from 0, as in dumps and run_ut ("Aten.mm.0"; row names "Aten.mm.0.forward.output.0"); the
  /// documented rule writes msprobe's own names instead, counting from 1 ("Aten.mm_1_output"). Returns false
  /// when the op is not queued (black-listed or dropped). Throws InvalidArgument for an empty name or a
  /// malformed view (null data, negative stride, wrong stride count). `site` says whether the op ran in
  /// backward and in which step (row names only; the verdict is the same).
  bool check(std::string_view api, const OnlineCall& inputs, const std::vector<OnlineArg>& outputs,
             const OnlineCallSite& site = {});
  /// Blocks until every queued op has been checked and written.
  void flush();
  OnlineCheckerSummary summary() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// msprobe compare's documented columns, the details CSV header of OnlineRule::Documented.
PROBE_API const std::vector<std::string>& online_details_header();

}  // namespace probe
