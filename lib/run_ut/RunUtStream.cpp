// run_ut fed record by record (probe/run_ut_stream.h): a WorkerPool whose slots are the records in
// acceptance order, its workers checking with run_ut's own ApiChecker (RecordChecker) and writing the rows
// in that order.
#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include "probe/csv.h"
#include "probe/error.h"
#include "probe/precheck_frame.h"
#include "probe/run_ut_stream.h"
#include "probe/runner.h"
#include "run_ut/ApiSelection.h"
#include "run_ut/Engine.h"
#include "run_ut/OutputFiles.h"
#include "run_ut/RecordBook.h"
#include "run_ut/RecordChecker.h"
#include "run_ut/RunSetup.h"
#include "support/Timestamp.h"
#include "support/WorkerPool.h"

namespace probe {
namespace {

namespace fs = std::filesystem;

rut::OutputPaths stream_paths(const std::string& out_dir, const std::string& timestamp,
                              const std::optional<std::uint64_t>& rank) {
  rut::OutputPaths p = rut::new_output_paths(out_dir, timestamp);  // validates and creates the directory
  if (rank) {
    const std::string suffix = "_rank" + std::to_string(*rank) + ".csv";
    auto with_rank = [&](std::string& path) { path = path.substr(0, path.size() - 4) + suffix; };
    with_rank(p.result);
    with_rank(p.details);
  }
  return p;
}

// API names of the result rows already in a file, in file order (the header and a torn tail skipped), so
// that load_and_repair checks and repairs the file as it does for a dump whose prefix was written.
std::vector<std::string> written_apis(const std::string& result_csv) {
  std::string text = detail::read_whole_file(result_csv, "cannot open the result file to resume");
  const std::size_t last_break = text.rfind('\n');
  text.resize(last_break == std::string::npos ? 0 : last_break + 1);
  std::vector<std::string> names;
  std::vector<CsvRow> rows;
  try {
    rows = csv_parse(text, result_csv);
  } catch (const Error&) {
    return names;  // load_and_repair names what is wrong
  }
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (!rows[i].empty()) names.push_back(rows[i][0]);
  return names;
}

// A file kept beside the result file: its name with `extension` for ".csv".
std::string beside_result(const rut::OutputPaths& p, const char* extension) {
  return p.result.substr(0, p.result.size() - 4) + extension;
}

}  // namespace

struct RunUtStream::Impl {
  RunUtStreamOptions options;
  std::unique_ptr<RunnerRegistry> own_registry;
  std::unique_ptr<Standards> own_standards;
  const RunnerRegistry* registry = nullptr;
  const Standards* standards = nullptr;
  Framework framework = Framework::PyTorch;
  rut::OutputPaths paths;
  detail::LockedFile lock;
  std::unique_ptr<rut::RecordChecker> checker;
  std::unique_ptr<rut::OutputWriter> writer;

  // Guards what admission and writing share: the book, the digests file and the summary. Taken inside the
  // pool's lock (admission) and alone (writing, summary()), never around a call into the pool.
  mutable std::mutex m;
  rut::RecordBook book;  // the files' run, and the names taken with their records' digests
  std::string run_id_path;
  std::ofstream digests;  // "api<TAB>digest" per API accepted for checking, so a resume still compares
  bool stopped = false, finished = false;
  RunUtStreamSummary summary;
  // Checks on the workers and writes the rows in acceptance order (a slot per record; the bounds are
  // `capacity` records outstanding and `max_outstanding_bytes` of those being checked or waiting to be).
  std::unique_ptr<detail::WorkerPool> pool;
  std::optional<std::stop_callback<std::function<void()>>> on_stop;

  void start(std::stop_token stop) {
    const RunUtOptions& o = options.run_ut;
    if (options.capacity == 0) throw Error(ErrorKind::InvalidArgument, "capacity must be at least 1");
    framework = o.framework.value_or(Framework::PyTorch);
    rut::require_checker_framework(framework);
    paths =
        stream_paths(o.out_dir, o.timestamp.empty() ? detail::local_timestamp() : o.timestamp, options.rank);
    std::error_code ec;
    const bool resume = options.resume && fs::exists(paths.result, ec);
    if (resume) {
      if (!fs::is_regular_file(paths.details, ec))
        throw Error(ErrorKind::Io, "details file of the resumed result file does not exist", paths.details);
      lock = rut::claim_outputs(paths, true);
      const rut::ResumeState st =
          rut::load_and_repair(paths, rut::run_ut_format(framework), written_apis(paths.result));
      for (const auto& [f, b] : st.statuses) rut::count(summary.run_ut, f, b);
      // Files of an older probe have neither file: the first record's run id becomes theirs, and their
      // APIs compare as resends.
      std::optional<std::string> run_id;
      const std::string run_id_file = beside_result(paths, ".run_id");
      if (fs::exists(run_id_file, ec)) {
        std::string text = detail::read_whole_file(run_id_file, "cannot read the run id of the files");
        if (!text.empty() && text.back() == '\n') text.pop_back();
        if (!text.empty() && !online::valid_run_id(text))
          throw Error(ErrorKind::Format, "not a run id", run_id_file);
        run_id = text;
        summary.run_id = text;
      }
      const std::vector<std::string> done(st.done.begin(), st.done.end());
      const std::string digests_file = beside_result(paths, ".digests");
      if (fs::exists(digests_file, ec)) {
        const std::string text =
            detail::read_whole_file(digests_file, "cannot read the record digests of the files");
        const std::size_t intact = book.resume(std::move(run_id), done, text);
        if (intact < text.size()) {
          fs::resize_file(digests_file, intact, ec);
          if (ec)
            throw Error(ErrorKind::Io, "cannot cut the torn last line of the record digests: " + ec.message(),
                        digests_file);
        }
      } else {
        book.resume(std::move(run_id), done, {});
      }
    } else {
      lock = rut::claim_new_outputs(
          [&](const std::string& ts) { return stream_paths(o.out_dir, ts, options.rank); }, o.timestamp,
          paths);
    }
    run_id_path = beside_result(paths, ".run_id");
    const std::string digests_file = beside_result(paths, ".digests");
    digests.open(digests_file, std::ios::binary | (resume ? std::ios::app : std::ios::trunc));
    if (!digests) throw Error(ErrorKind::Io, "cannot open the record digests of the files", digests_file);
    summary.run_ut.result_csv = paths.result;
    summary.run_ut.details_csv = paths.details;
    std::string error_dir;
    if (o.save_error_data)
      error_dir = rut::error_data_dir(
          o.config_path.empty() ? rut::RunUtConfig{} : rut::load_run_ut_config(o.config_path), paths,
          options.rank ? "_rank" + std::to_string(*options.rank) : std::string());
    checker =
        std::make_unique<rut::RecordChecker>(options.run_ut, framework, *registry, *standards, error_dir);
    writer = std::make_unique<rut::OutputWriter>(paths, rut::run_ut_format(framework));
    detail::WorkerPool::Options po;
    po.threads =
        o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    po.order = detail::WorkerPool::Order::Slot;
    po.max_outstanding = options.capacity;
    po.max_bytes = options.max_outstanding_bytes;
    pool = std::make_unique<detail::WorkerPool>(po);
    on_stop.emplace(std::move(stop), [this] {
      {
        std::lock_guard guard(m);
        stopped = true;
      }
      pool->stop();
    });
  }

  void problem(std::string line) {
    if (options.on_refused) options.on_refused(line);
    if (summary.problems.size() < RunUtStreamSummary::kMaxProblems)
      summary.problems.push_back(std::move(line));
  }

  // Keeps the run id beside the files (a temporary file renamed over, so a resume never reads half of one).
  void keep_run_id(const std::string& id) {
    const std::string tmp = run_id_path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << id << '\n';
      out.flush();
      if (!out) throw Error(ErrorKind::Io, "cannot write the run id of the files", tmp);
    }
    std::error_code ec;
    fs::rename(tmp, run_id_path, ec);
    if (ec) throw Error(ErrorKind::Io, "cannot rename to " + run_id_path + ": " + ec.message(), tmp);
  }

  static std::string shown(const std::string& id) { return id.empty() ? "(none)" : id; }

  // Decides whether a record is checked when the pool grants it its slot (its place in the output; in slot
  // order, under the pool's lock) and returns the API to check, "" when it is not checked. First record for
  // a name wins only against resends of the same bytes: another run's record is refused, and the same name
  // with other content is an error, since either could hide the record that counts. A failure to keep the
  // run id or a digest fails the stream once the record is admitted.
  std::string accept(const online::Frame& record) {
    std::lock_guard guard(m);
    ++summary.records;
    std::exception_ptr failure;
    const std::string& rid = record.run_id();
    std::optional<std::string> api;
    if (rid == book.run_id().value_or(rid)) api = checker->api_of(record);
    bool fixed_run = false;
    const rut::Admission admission = book.admit(rid, api, record.digest, &fixed_run);
    if (fixed_run) {
      summary.run_id = rid;
      try {
        keep_run_id(rid);
      } catch (...) {
        failure = std::current_exception();
      }
    }
    std::string checked;
    switch (admission) {
      case rut::Admission::OtherRun:
        ++summary.other_runs;
        problem(record.header.path() + ": " + record.entry().key + " belongs to run " + shown(rid) +
                ", not to run " + shown(*book.run_id()) + " of " + paths.result + "; not checked");
        break;
      case rut::Admission::Check:
        digests << rut::RecordBook::digest_line(*api, record.digest) << std::flush;
        if (!digests && !failure)
          failure =
              std::make_exception_ptr(Error(ErrorKind::Io, "cannot write the record digests of the files",
                                            beside_result(paths, ".digests")));
        checked = std::move(*api);
        break;
      case rut::Admission::Repeat:
        ++summary.repeated;
        break;
      case rut::Admission::Conflict:
        ++summary.conflicts;
        problem(record.header.path() + ": " + record.entry().key +
                " was already received with other content; this copy is not checked");
        break;
      case rut::Admission::Ignored:
        ++summary.ignored;
        break;
    }
    if (failure) std::rethrow_exception(failure);
    return checked;
  }

  static std::uint64_t bytes_of(const online::Frame& record) {
    std::uint64_t n = 0;
    for (const Tensor& t : record.tensors) n += t.nbytes();
    return n;
  }

  // Admits `record` into a slot (waiting for room when `wait`) and queues its check and the writing of its
  // rows; false when the pool refused (full without `wait`, stopped, finished or failed), `record` untouched.
  bool take(online::Frame& record, bool wait) {
    const std::uint64_t bytes = bytes_of(record);
    std::string api;
    std::optional<detail::WorkerPool::Slot> slot = pool->reserve(bytes, wait, [&] {
      api = accept(record);
      return api.empty() ? std::uint64_t{0} : bytes;
    });
    if (!slot) return false;
    if (api.empty()) {
      pool->commit(std::move(*slot), {});
      return true;
    }
    pool->commit(std::move(*slot), [this, api, rec = std::make_shared<online::Frame>(std::move(record))]() {
      auto rows = std::make_shared<rut::ApiRows>(checker->check(api, *rec));
      return detail::WorkerPool::Delivery([this, rows] { write(*rows); });
    });
    return true;
  }

  // Writes one API's rows whole (its turn has come) and counts them.
  void write(const rut::ApiRows& rows) {
    writer->write(rows);
    if (!rows.result) return;
    std::lock_guard guard(m);
    rut::count(summary.run_ut, rows.result->forward, rows.result->backward);
    ++summary.run_ut.checked;
  }
};

RunUtStream::RunUtStream(const RunUtStreamOptions& options, const RunnerRegistry& registry,
                         const Standards& standards, std::stop_token stop)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  impl_->registry = &registry;
  impl_->standards = &standards;
  impl_->start(std::move(stop));
}

RunUtStream::RunUtStream(const RunUtStreamOptions& options, std::stop_token stop)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  impl_->own_registry = std::make_unique<RunnerRegistry>(RunnerRegistry::with_builtins());
  impl_->own_standards = std::make_unique<Standards>(Standards::builtin(options.run_ut.profile));
  impl_->registry = impl_->own_registry.get();
  impl_->standards = impl_->own_standards.get();
  impl_->start(std::move(stop));
}

RunUtStream::~RunUtStream() {
  try {
    finish();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor cannot report; finish() would have
  }
}

bool RunUtStream::push(online::Frame record) { return impl_->take(record, true); }

bool RunUtStream::try_push(online::Frame& record) { return impl_->take(record, false); }

bool RunUtStream::accepting() const { return impl_->pool->open(); }

RunUtStreamSummary RunUtStream::finish() {
  Impl& s = *impl_;
  const std::size_t dropped = s.pool->finish();
  const std::uint64_t peak = s.pool->peak_bytes();
  // Read before taking the stream's lock: the pool calls accept() (which takes it) under its own lock, so
  // the two locks are always taken pool first.
  const std::exception_ptr failure = s.pool->failure();
  std::lock_guard lock(s.m);
  if (!s.finished) {
    s.finished = true;
    s.summary.dropped = dropped;
    s.summary.peak_outstanding_bytes = peak;
    s.summary.run_ut.cancelled = s.stopped;
    s.summary.run_ut.tensor_bytes = s.checker->tensor_bytes();
    s.summary.run_ut.error_data_dir = s.checker->error_data_dir_written();
    s.summary.run_ut.error_data_failures = s.checker->error_data_failures();
    s.summary.run_ut.error_data_problem = s.checker->error_data_problem();
    s.writer.reset();  // flushes and closes the files before the lock is released
  }
  if (failure) std::rethrow_exception(failure);
  return s.summary;
}

RunUtStreamSummary RunUtStream::summary() const {
  const std::uint64_t peak = impl_->pool->peak_bytes();
  std::lock_guard lock(impl_->m);
  RunUtStreamSummary out = impl_->summary;
  if (!impl_->finished) out.peak_outstanding_bytes = peak;
  return out;
}

}  // namespace probe
