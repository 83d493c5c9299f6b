// run_engine across the ranks of a probe::Distributed group. Each round takes the next few APIs in dump
// order; their checks are claimed heaviest first from the group's shared counter, so one costly API starts at
// once instead of ending the round alone; then every rank's rows go to rank 0, which writes the round in dump
// order with the same writer as one process, so the files are byte for byte those of one process. A kill
// loses at most the round in flight: rank 0's files hold whole APIs and resume with -csv_path under any rank
// count.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <new>

#include "run_ut/Engine.h"
#include "support/RankWork.h"

namespace probe::rut {
namespace {

using detail::get_error;
using detail::put_error;
using Out = detail::WireOut;
using In = detail::WireIn;

std::uint64_t status_code(std::optional<Status> s) { return s ? static_cast<std::uint64_t>(*s) + 1 : 0; }
std::optional<Status> status_of(std::uint64_t code) {
  if (code == 0) return std::nullopt;
  return static_cast<Status>(code - 1);
}

void put_rows(Out& out, std::size_t index, const ApiRows& rows) {
  out.u64(index);
  out.str(rows.name);
  out.u64(rows.details.size());
  for (const CsvRow& row : rows.details) {
    out.u64(row.size());
    for (const std::string& cell : row) out.str(cell);
  }
  out.u64(rows.histograms.size());
  for (const auto& [name, h] : rows.histograms) {
    out.str(name);
    out.u64(static_cast<std::uint64_t>(h.unit));
    for (std::int64_t v : {h.zero, h.below, h.above, h.nonfinite}) out.u64(static_cast<std::uint64_t>(v));
    for (std::int64_t v : h.counts) out.u64(static_cast<std::uint64_t>(v));
  }
  out.u64(rows.result ? 1 : 0);
  if (!rows.result) return;
  out.str(rows.result->api);
  out.u64(status_code(rows.result->forward));
  out.u64(status_code(rows.result->backward));
  out.u64(rows.result->message ? 1 : 0);
  if (rows.result->message) out.str(*rows.result->message);
}

ApiRows get_rows(In& in) {
  ApiRows rows;
  rows.name = in.str();
  rows.details.resize(in.u64());
  for (CsvRow& row : rows.details) {
    row.resize(in.u64());
    for (std::string& cell : row) cell = in.str();
  }
  rows.histograms.resize(in.u64());
  for (auto& [name, h] : rows.histograms) {
    name = in.str();
    h.unit = static_cast<HistogramUnit>(in.u64());
    for (std::int64_t* v : {&h.zero, &h.below, &h.above, &h.nonfinite})
      *v = static_cast<std::int64_t>(in.u64());
    for (std::int64_t& v : h.counts) v = static_cast<std::int64_t>(in.u64());
  }
  if (in.u64() == 0) return rows;
  ResultRow& r = rows.result.emplace();
  r.api = in.str();
  r.forward = status_of(in.u64());
  r.backward = status_of(in.u64());
  if (in.u64() != 0) r.message = in.str();
  return rows;
}

enum Decision : std::uint64_t { kGo = 0, kStop = 1, kFail = 2 };

// Rank 0's verdict after each step, broadcast: go on, stop (cancelled), or fail with an error.
std::uint64_t broadcast_decision(Distributed& g, std::string& message) {
  g.broadcast(message);
  In in(message);
  return in.u64();
}

void put_summary(Out& out, const RunUtSummary& s) {
  for (std::size_t v : {s.apis, s.pass, s.warning, s.error, s.skip, s.forward_error, s.backward_error,
                        s.backward_skip, s.checked})
    out.u64(v);
  out.u64(s.tensor_bytes);
  out.u64(s.cancelled ? 1 : 0);
  out.u64(s.ranks);
  out.u64(s.rounds);
  out.u64(s.gathered_bytes);
  for (double v : {s.gather_seconds, s.write_seconds, s.seconds}) out.f64(v);
}

void get_summary(In& in, RunUtSummary& s) {
  for (std::size_t* v : {&s.apis, &s.pass, &s.warning, &s.error, &s.skip, &s.forward_error, &s.backward_error,
                         &s.backward_skip, &s.checked})
    *v = in.u64();
  s.tensor_bytes = in.u64();
  s.cancelled = in.u64() != 0;
  s.ranks = in.u64();
  s.rounds = in.u64();
  s.gathered_bytes = in.u64();
  for (double* v : {&s.gather_seconds, &s.write_seconds, &s.seconds}) *v = in.f64();
}

#ifdef PROBE_TEST_HOOKS
// Test hook for the MPI fault tests (tests/mpi), compiled only into test builds: PROBE_TEST_KILL_RANK=<r>:<k>
// makes rank r SIGKILL itself as round k (1-based) starts, a rank dying while the others check and rank 0
// waits for its rows; rounds 1 .. k-1 are on disk by then, on every run.
void maybe_kill_rank_for_test(int rank, long round) {
  static const std::pair<int, long> at = [] {
    const char* v = std::getenv("PROBE_TEST_KILL_RANK");
    if (!v) return std::pair<int, long>{-1, 0};
    char* end = nullptr;
    const long r = std::strtol(v, &end, 10);
    return std::pair<int, long>{static_cast<int>(r), *end == ':' ? std::strtol(end + 1, nullptr, 10) : 1};
  }();
  if (rank == at.first && round == at.second) ::raise(SIGKILL);
}
#else
void maybe_kill_rank_for_test(int, long) {}
#endif

}  // namespace

RunUtSummary run_engine_ranks(const std::vector<std::string>& apis,
                              const std::function<ApiRows(std::size_t)>& check, const EngineConfig& config,
                              const RunUtProgressFn& progress, const std::atomic<std::uint64_t>* tensor_bytes,
                              std::stop_token stop) {
  Distributed& g = *config.group;
  const bool root = g.rank() == 0;
  const auto started = std::chrono::steady_clock::now();
  RunUtSummary summary;
  summary.result_csv = config.paths.result;
  summary.details_csv = config.paths.details;
  const RunUtFormat& format = run_ut_format(config.framework);

  // Rank 0 claims, proves and repairs the files; the others learn where to start (the resume's done-set, read
  // once) or the error that ends the run.
  detail::LockedFile lock;
  std::optional<OutputWriter> writer;
  const std::string start = detail::decide_on_root(g, [&] {
    if (!config.outputs_claimed) {
      lock = claim_outputs(config.paths, config.resume);
      if (!config.resume && !lock.is_open()) throw outputs_exist_error(config.paths);
    }
    const ResumeState resumed = open_outputs(apis, config, format);
    for (const auto& [f, b] : resumed.statuses) count(summary, f, b);
    writer.emplace(config.paths, format, config.fingerprint.has_value());
    Out out;
    out.u64(resumed.next);
    return std::move(out.bytes());
  });
  In start_in(start);
  const std::size_t next = start_in.u64();

  const std::size_t total = apis.size();
  std::size_t done = next;
  std::uint64_t bytes_elsewhere = 0;  // tensor bytes the other ranks loaded, as of the last round
  auto report = [&] {
    if (!progress || !root) return;
    RunUtProgress p;
    p.done = done;
    p.total = total;
    p.tensor_bytes = (tensor_bytes ? tensor_bytes->load() : 0) + bytes_elsewhere;
    progress(p);
  };
  report();
  const int threads = std::max(1, config.threads);
  // A round holds a few APIs per thread of every rank: enough that heaviest-first has room to balance, few
  // enough that a kill loses little and rank 0 holds little.
  const std::size_t round = static_cast<std::size_t>(g.size()) * static_cast<std::size_t>(threads) * 4;
  long rounds = 0;
  bool cancelled = false;
  for (std::size_t begin = next; begin < total && !cancelled; begin += round) {
    const std::size_t end = std::min(total, begin + round);
    std::vector<double> weights(end - begin, 1.0);
    if (config.weight)
      for (std::size_t k = 0; k < weights.size(); ++k) weights[k] = config.weight(begin + k);
    maybe_kill_rank_for_test(g.rank(), ++rounds);
    std::map<std::size_t, ApiRows> mine;
    std::mutex m;
    std::exception_ptr failure;
    try {
      run_work_queue(
          g, weights,
          [&](std::size_t k) {
            ApiRows rows = check(begin + k);
            std::lock_guard lock_rows(m);
            mine.emplace(begin + k, std::move(rows));
          },
          threads);
    } catch (...) {
      failure = std::current_exception();
    }
    Out out;
    out.u64(failure ? 1 : 0);
    if (failure) put_error(out, failure);
    out.u64(stop.stop_requested() ? 1 : 0);
    out.u64(tensor_bytes ? tensor_bytes->load() : 0);
    out.u64(mine.size());
    for (const auto& [index, rows] : mine) put_rows(out, index, rows);
    mine.clear();
    const auto gather_start = std::chrono::steady_clock::now();
    const std::vector<std::string> all = g.gather(out.bytes());
    const auto gathered = std::chrono::steady_clock::now();
    summary.gather_seconds += std::chrono::duration<double>(gathered - gather_start).count();
    ++summary.rounds;
    for (const std::string& bytes : all) summary.gathered_bytes += bytes.size();

    Out decision;
    if (root) {
      try {
        std::map<std::size_t, ApiRows> rows_of;
        std::optional<Error> first_error;
        bool stop_asked = false;
        bytes_elsewhere = 0;
        for (std::size_t r = 0; r < all.size(); ++r) {
          In in(all[r]);
          if (in.u64() != 0) {
            Error e = get_error(in, static_cast<int>(r));
            if (!first_error) first_error = std::move(e);
            continue;
          }
          stop_asked = in.u64() != 0 || stop_asked;
          const std::uint64_t rank_bytes = in.u64();
          if (r > 0) bytes_elsewhere += rank_bytes;
          for (std::uint64_t n = in.u64(); n > 0; --n) {
            const std::size_t index = in.u64();
            rows_of.emplace(index, get_rows(in));
          }
        }
        if (first_error) throw *first_error;
        if (rows_of.size() != end - begin)
          throw Error(ErrorKind::Internal, "run_ut: a round came back with " +
                                               std::to_string(rows_of.size()) + " of its " +
                                               std::to_string(end - begin) + " APIs");
        for (auto& [index, rows] : rows_of) {
          writer->write(rows);
          if (rows.result) {
            count(summary, rows.result->forward, rows.result->backward);
            ++summary.checked;
          }
          ++done;
          report();
        }
        summary.write_seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - gathered).count();
        decision.u64(stop_asked && done < total ? kStop : kGo);
      } catch (...) {
        decision.u64(kFail);
        put_error(decision, std::current_exception());
      }
    }
    const std::uint64_t verdict = broadcast_decision(g, decision.bytes());
    if (verdict == kFail) {
      In in(decision.bytes());
      in.u64();
      throw get_error(in, 0);
    }
    cancelled = verdict == kStop;
  }
  summary.cancelled = cancelled;
  summary.ranks = static_cast<std::size_t>(g.size());
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (root) summary.tensor_bytes = (tensor_bytes ? tensor_bytes->load() : 0) + bytes_elsewhere;
  // Every rank returns the run's summary, as one process would.
  Out s;
  if (root) put_summary(s, summary);
  g.broadcast(s.bytes());
  In in(s.bytes());
  get_summary(in, summary);
  return summary;
}

}  // namespace probe::rut
