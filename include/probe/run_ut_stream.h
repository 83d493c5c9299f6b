// run_ut over API records that arrive one by one (online pre-check): each record is a decoded
// precheck frame (probe/precheck_frame.h: one dump.json entry plus its tensors) instead of an entry of a
// dump file. Every record goes through run_ut's own per-API check and CSV writer, so a stream of the
// forward entries of a dump gives the rows that `run_ut` gives for that dump, in arrival order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "probe/export.h"
#include "probe/precheck_frame.h"
#include "probe/run_ut.h"

namespace probe {

/// What a stream is told besides run_ut's own options.
struct PROBE_API RunUtStreamOptions {
  /// run_ut's options: out_dir, config_path (white/black lists), framework (unset = PyTorch), threads
  /// (checking workers; 0 = all cores), seed, profile, timestamp, device_side, save_error_data and the
  /// generated-input bounds. api_info, result_csv and filter_api do not apply to a stream.
  RunUtOptions run_ut;
  /// Set: the files are accuracy_checking_{result,details}_<ts>_rank<N>.csv (msprobe's online names).
  std::optional<std::uint64_t> rank;
  /// Continue the files of an earlier stream with the same out_dir, timestamp and rank when they exist
  /// (their API rows are kept and those APIs are not checked again); create them otherwise. The files
  /// belong to one run: the first record's run id is kept beside them (the result file's name with
  /// `.run_id` for `.csv`), and a record of another run is refused (counted in other_runs), resumed or not.
  /// Each checked API's Frame::digest is kept in `.digests` beside them, so after a resume the same name
  /// with other content is still a conflict.
  bool resume = false;
  /// Records accepted but not yet written (queued, being checked, or waiting for an earlier one): push()
  /// blocks and try_push() refuses while this many are outstanding (>= 1).
  std::size_t capacity = 50;
  /// Tensor bytes of the outstanding records together: push() blocks and try_push() refuses a record that
  /// would go beyond it, except when nothing is outstanding (one record is always taken). The default
  /// holds one frame of the largest size FrameLimits allows.
  std::uint64_t max_outstanding_bytes = std::uint64_t{1} << 31;
  /// Called with each record refused as a conflict or another run's (the line `problems` keeps), from the
  /// thread whose push() took it, under the stream's lock (it must not call the stream); may be empty.
  std::function<void(const std::string&)> on_refused;
};

/// Counts of a stream besides run_ut's summary.
struct PROBE_API RunUtStreamSummary {
  RunUtSummary run_ut;      ///< rows, verdicts, files; `cancelled` after a stop
  std::size_t records = 0;  ///< records accepted by push()/try_push()
  std::size_t ignored = 0;  ///< records run_ut does not check on their own (module, backward keys)
  /// Records of an API already written or accepted, with the same content (a resend, or a row of a resumed
  /// file): not checked again.
  std::size_t repeated = 0;
  std::size_t dropped = 0;  ///< accepted but not written because the stream was stopped first
  /// Errors: records of an API already accepted whose content differs (Frame::digest), and records of
  /// another run than the stream's (Frame::run_id). Neither is checked; `problems` says which.
  std::size_t conflicts = 0, other_runs = 0;
  std::vector<std::string> problems;  ///< one line per conflict or refused run, the first kMaxProblems
  static constexpr std::size_t kMaxProblems = 20;
  /// The run the files belong to: the first record's run id, or the one kept beside resumed files.
  std::string run_id;
  std::uint64_t peak_outstanding_bytes = 0;  ///< the most tensor bytes outstanding records held at once
};

/// A run_ut output set fed record by record. Thread-safe: push() and try_push() may be called from any
/// threads; rows are written in the order records were accepted, each API flushed whole, so a stream killed
/// or stopped at any point leaves files that `resume` continues. Checking runs on options.run_ut.threads
/// worker threads owned by the stream.
class PROBE_API RunUtStream {
 public:
  /// Claims the output files (new, or continued with `resume`) and starts the workers. Throws probe::Error
  /// for bad options, unwritable or foreign files (as run_ut). `registry` and `standards` must outlive the
  /// stream. A stop request on `stop` ends checking after the APIs being written; the rest is dropped.
  RunUtStream(const RunUtStreamOptions& options, const RunnerRegistry& registry, const Standards& standards,
              std::stop_token stop = {});
  /// The same with probe's built-in runners and Standards::builtin(options.run_ut.profile).
  explicit RunUtStream(const RunUtStreamOptions& options, std::stop_token stop = {});
  /// finish(), ignoring a write error.
  ~RunUtStream();
  RunUtStream(const RunUtStream&) = delete;
  RunUtStream& operator=(const RunUtStream&) = delete;

  /// Accepts a record, blocking while `capacity` records are outstanding. Returns false (record not taken)
  /// once the stream is stopped, finished or failed.
  bool push(online::Frame record);
  /// Accepts a record only if there is room now; false leaves `record` untouched.
  bool try_push(online::Frame& record);
  /// False once the stream takes no more records (stopped, finished, or a write failed: finish() says why).
  bool accepting() const;
  /// Waits until every accepted record is written (or dropped after a stop), stops the workers and returns
  /// the summary; later calls return it again. Rethrows a write error (probe::Error, Io).
  RunUtStreamSummary finish();
  /// Counts so far (the files' paths are set from construction on).
  RunUtStreamSummary summary() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace probe
