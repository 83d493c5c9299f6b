// run_ut fed record by record (probe/run_ut_stream.h): a bounded queue, worker threads that check with
// run_ut's own ApiChecker (RecordChecker), and a writer that puts the rows in acceptance order.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
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
#include "support/Timestamp.h"

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

  std::mutex m;
  std::condition_variable cv_work, cv_room, cv_written;
  struct Item {
    std::size_t index;
    std::string api;  // empty: not checked, nothing to write
    online::Frame record;
  };
  std::deque<Item> queue;
  std::map<std::size_t, std::optional<rut::ApiRows>> ready;  // checked, waiting for earlier ones
  rut::RecordBook book;  // the files' run, and the names taken with their records' digests
  std::string run_id_path;
  std::ofstream digests;  // "api<TAB>digest" per API accepted for checking, so a resume still compares
  std::size_t next_index = 0, next_write = 0, outstanding = 0;
  std::uint64_t held_bytes = 0;  // tensor bytes of the records queued or being checked
  bool writing = false, closing = false, stopped = false, finished = false;
  std::exception_ptr failure;
  RunUtStreamSummary summary;
  std::vector<std::thread> workers;
  std::optional<std::stop_callback<std::function<void()>>> on_stop;

  void start(std::stop_token stop) {
    const RunUtOptions& o = options.run_ut;
    if (options.capacity == 0) throw Error(ErrorKind::InvalidArgument, "capacity must be at least 1");
    framework = o.framework.value_or(Framework::PyTorch);
    if (framework != Framework::PyTorch && framework != Framework::MindSpore)
      throw Error(ErrorKind::InvalidArgument,
                  "run_ut checks as pytorch or mindspore, not " + std::string(to_string(framework)), {},
                  "framework");
    std::string ts = o.timestamp.empty() ? detail::local_timestamp() : o.timestamp;
    paths = stream_paths(o.out_dir, ts, options.rank);
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
      lock = rut::claim_outputs(paths, false);
      // As run_ut: without a fixed timestamp a taken name moves on to the next free second.
      for (int tries = 0; !lock.is_open() && o.timestamp.empty() && tries < 600; ++tries) {
        paths = stream_paths(o.out_dir, detail::next_timestamp(paths.timestamp), options.rank);
        lock = rut::claim_outputs(paths, false);
      }
      if (!lock.is_open()) throw rut::outputs_exist_error(paths);
    }
    run_id_path = beside_result(paths, ".run_id");
    const std::string digests_file = beside_result(paths, ".digests");
    digests.open(digests_file, std::ios::binary | (resume ? std::ios::app : std::ios::trunc));
    if (!digests) throw Error(ErrorKind::Io, "cannot open the record digests of the files", digests_file);
    summary.run_ut.result_csv = paths.result;
    summary.run_ut.details_csv = paths.details;
    std::string error_dir;
    if (o.save_error_data) {
      const rut::RunUtConfig config =
          o.config_path.empty() ? rut::RunUtConfig{} : rut::load_run_ut_config(o.config_path);
      const fs::path base = config.error_data_path.empty() ? fs::path(paths.result).parent_path()
                                                           : fs::path(config.error_data_path);
      error_dir = (base / ("ut_error_data" + paths.timestamp +
                           (options.rank ? "_rank" + std::to_string(*options.rank) : std::string())))
                      .string();
    }
    checker =
        std::make_unique<rut::RecordChecker>(options.run_ut, framework, *registry, *standards, error_dir);
    writer = std::make_unique<rut::OutputWriter>(paths, rut::run_ut_format(framework));
    on_stop.emplace(std::move(stop), [this] {
      std::lock_guard guard(m);
      stopped = true;
      cv_work.notify_all();
      cv_room.notify_all();
      cv_written.notify_all();
    });
    const int threads =
        o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    for (int i = 0; i < threads; ++i) workers.emplace_back([this] { work(); });
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

  // Takes a record under the lock: decides whether it is checked and gives it its place in the output.
  // First record for a name wins only against resends of the same bytes: another run's record is refused,
  // and the same name with other content is an error, since either could hide the record that counts.
  void accept(std::unique_lock<std::mutex>&, online::Frame&& record) {
    ++summary.records;
    Item item{next_index++, {}, std::move(record)};
    const std::string& rid = item.record.run_id();
    std::optional<std::string> api;
    if (rid == book.run_id().value_or(rid)) api = checker->api_of(item.record);
    bool fixed_run = false;
    const rut::Admission admission = book.admit(rid, api, item.record.digest, &fixed_run);
    if (fixed_run) {
      summary.run_id = rid;
      try {
        keep_run_id(rid);
      } catch (...) {
        if (!failure) failure = std::current_exception();
        wake_all();
      }
    }
    switch (admission) {
      case rut::Admission::OtherRun:
        ++summary.other_runs;
        problem(item.record.header.path() + ": " + item.record.entry().key + " belongs to run " + shown(rid) +
                ", not to run " + shown(*book.run_id()) + " of " + paths.result + "; not checked");
        break;
      case rut::Admission::Check:
        digests << rut::RecordBook::digest_line(*api, item.record.digest) << std::flush;
        if (!digests && !failure) {
          failure =
              std::make_exception_ptr(Error(ErrorKind::Io, "cannot write the record digests of the files",
                                            beside_result(paths, ".digests")));
          wake_all();
        }
        item.api = std::move(*api);
        break;
      case rut::Admission::Repeat:
        ++summary.repeated;
        break;
      case rut::Admission::Conflict:
        ++summary.conflicts;
        problem(item.record.header.path() + ": " + item.record.entry().key +
                " was already received with other content; this copy is not checked");
        break;
      case rut::Admission::Ignored:
        ++summary.ignored;
        break;
    }
    ++outstanding;
    if (item.api.empty()) {
      ready.emplace(item.index, std::nullopt);
    } else {
      held_bytes += bytes_of(item.record);
      summary.peak_outstanding_bytes = std::max(summary.peak_outstanding_bytes, held_bytes);
      queue.push_back(std::move(item));
      cv_work.notify_one();
    }
  }

  bool open() const { return !stopped && !closing && !failure; }

  static std::uint64_t bytes_of(const online::Frame& record) {
    std::uint64_t n = 0;
    for (const Tensor& t : record.tensors) n += t.nbytes();
    return n;
  }

  // Whether a record of `bytes` may be taken now: below both bounds, or the only one.
  bool room_for(std::uint64_t bytes) const {
    return outstanding < options.capacity &&
           (held_bytes == 0 || held_bytes + bytes <= options.max_outstanding_bytes);
  }

  void work() {
    for (;;) {
      Item item;
      {
        std::unique_lock lock(m);
        cv_work.wait(lock,
                     [&] { return stopped || failure || !queue.empty() || (closing && queue.empty()); });
        if (stopped || failure || queue.empty()) return;
        item = std::move(queue.front());
        queue.pop_front();
      }
      std::optional<rut::ApiRows> rows;
      try {
        rows.emplace(checker->check(item.api, item.record));
      } catch (...) {
        std::lock_guard lock(m);
        if (!failure) failure = std::current_exception();
        wake_all();
        return;
      }
      const std::uint64_t bytes = bytes_of(item.record);
      item.record = {};  // the tensors are not needed while the rows wait for their turn
      std::unique_lock lock(m);
      held_bytes -= bytes;
      cv_room.notify_all();
      ready.emplace(item.index, std::move(rows));
      write_ready(lock);
    }
  }

  // Writes every row group whose predecessors are written; one thread at a time, the lock released while
  // writing. A stop leaves the rest unwritten (each API is whole on disk, so the files stay resumable).
  void write_ready(std::unique_lock<std::mutex>& lock) {
    if (writing) return;
    writing = true;
    while (!stopped && !failure) {
      auto it = ready.find(next_write);
      if (it == ready.end()) break;
      std::optional<rut::ApiRows> rows = std::move(it->second);
      ready.erase(it);
      if (rows) {
        lock.unlock();
        try {
          writer->write(*rows);
        } catch (...) {
          lock.lock();
          if (!failure) failure = std::current_exception();
          break;
        }
        lock.lock();
        if (rows->result) {
          rut::count(summary.run_ut, rows->result->forward, rows->result->backward);
          ++summary.run_ut.checked;
        }
      }
      ++next_write;
      --outstanding;
      cv_room.notify_all();
      cv_written.notify_all();
    }
    writing = false;
    cv_written.notify_all();
    if (failure) wake_all();
  }

  void wake_all() {
    cv_work.notify_all();
    cv_room.notify_all();
    cv_written.notify_all();
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

bool RunUtStream::push(online::Frame record) {
  Impl& s = *impl_;
  std::unique_lock lock(s.m);
  const std::uint64_t bytes = Impl::bytes_of(record);
  s.cv_room.wait(lock, [&] { return !s.open() || s.room_for(bytes); });
  if (!s.open()) return false;
  s.accept(lock, std::move(record));
  s.write_ready(lock);  // an ignored record may be the next one to write
  return true;
}

bool RunUtStream::try_push(online::Frame& record) {
  Impl& s = *impl_;
  std::unique_lock lock(s.m);
  if (!s.open() || !s.room_for(Impl::bytes_of(record))) return false;
  s.accept(lock, std::move(record));
  s.write_ready(lock);
  return true;
}

bool RunUtStream::accepting() const {
  std::lock_guard lock(impl_->m);
  return impl_->open();
}

RunUtStreamSummary RunUtStream::finish() {
  Impl& s = *impl_;
  {
    std::unique_lock lock(s.m);
    if (!s.finished) {
      s.closing = true;
      s.cv_work.notify_all();
      s.cv_room.notify_all();
      s.cv_written.wait(lock, [&] { return s.stopped || s.failure || s.outstanding == 0; });
    }
  }
  for (auto& t : s.workers) t.join();
  s.workers.clear();
  std::unique_lock lock(s.m);
  // A pushing thread may be writing rows that became due behind an ignored record.
  s.cv_written.wait(lock, [&] { return !s.writing; });
  if (!s.finished) {
    s.finished = true;
    s.summary.dropped = s.outstanding;
    s.summary.run_ut.cancelled = s.stopped;
    s.summary.run_ut.tensor_bytes = s.checker->tensor_bytes();
    s.summary.run_ut.error_data_dir = s.checker->error_data_dir_written();
    s.summary.run_ut.error_data_failures = s.checker->error_data_failures();
    s.summary.run_ut.error_data_problem = s.checker->error_data_problem();
    s.queue.clear();
    s.ready.clear();
    s.writer.reset();  // flushes and closes the files before the lock is released
  }
  if (s.failure) std::rethrow_exception(s.failure);
  return s.summary;
}

RunUtStreamSummary RunUtStream::summary() const {
  std::lock_guard lock(impl_->m);
  return impl_->summary;
}

}  // namespace probe
