// `probe run_ut` and `probe multi_run_ut`: msprobe's command lines (single-dash long flags,
// argparse-style long forms, unique prefixes, --flag=value) plus probe's own options.
#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "ArgParser.h"
#include "Cluster.h"
#include "Commands.h"
#include "Terminal.h"
#include "probe/error.h"
#include "probe/online_server.h"
#include "probe/report.h"
#include "probe/run_ut.h"

namespace probe::cli {
namespace {

enum class Opt {
  ApiInfo,
  Out,
  SaveErrorData,
  Jit,
  Device,
  CsvPath,
  ResumeForeign,
  FilterApi,
  Config,
  Threads,
  Seed,
  Profile,
  Framework,
  Timestamp,
  DeviceRunner,
  MaxApiElements,
  MaxApiFlops,
  Quiet,
  Online,
  Host,
  Port,
  RankList,
  NfsPath,
  TlsPath,
  Producers,
  IdleTimeout,
  QueueSize,
  Resume,
  NoChecksum,
  Report,
};

std::vector<FlagSpec> flags(bool multi) {
  auto flag = [](Opt opt, std::vector<std::string> spellings, Arity arity) {
    return FlagSpec{static_cast<int>(opt), std::move(spellings), arity};
  };
  std::vector<FlagSpec> f = {
      flag(Opt::ApiInfo, {"-api_info", "--api_info_file"}, Arity::One),
      flag(Opt::Out, {"-o", "--out_path"}, Arity::One),
      flag(Opt::SaveErrorData, {"-save_error_data", "--save_error_data"}, Arity::None),
      flag(Opt::Jit, {"-j", "--jit_compile"}, Arity::None),
      flag(Opt::Device, {"-d", "--device"}, Arity::OneOrMore),
      flag(Opt::CsvPath, {"-csv_path", "--result_csv_path"}, Arity::One),
      flag(Opt::ResumeForeign, {"--resume_foreign"}, Arity::None),
      flag(Opt::FilterApi, {"-f", "--filter_api"}, Arity::None),
      flag(Opt::Config, {"-config", "--config_path"}, Arity::One),
      flag(Opt::Threads,
           multi ? std::vector<std::string>{"-n", "--num_splits", "--threads"}
                 : std::vector<std::string>{"-n", "--threads"},
           Arity::One),
      flag(Opt::Seed, {"--seed"}, Arity::One),
      flag(Opt::Profile, {"--profile"}, Arity::One),
      flag(Opt::Framework, {"--framework"}, Arity::One),
      flag(Opt::Timestamp, {"--timestamp"}, Arity::One),
      flag(Opt::DeviceRunner, {"--device_runner"}, Arity::One),
      flag(Opt::MaxApiElements, {"--max_api_elements"}, Arity::One),
      flag(Opt::MaxApiFlops, {"--max_api_flops"}, Arity::One),
      flag(Opt::Quiet, {"-q", "--quiet"}, Arity::None),
      flag(Opt::Report, {"--report"}, Arity::None),
  };
  if (!multi) {
    const std::vector<FlagSpec> online = {
        flag(Opt::Online, {"--online", "--is_online"}, Arity::None),
        flag(Opt::Host, {"--host"}, Arity::One),
        flag(Opt::Port, {"--port"}, Arity::One),
        flag(Opt::RankList, {"--rank_list"}, Arity::OneOrMore),
        flag(Opt::NfsPath, {"--nfs_path"}, Arity::One),
        flag(Opt::TlsPath, {"--tls_path"}, Arity::One),
        flag(Opt::Producers, {"--producers"}, Arity::One),
        flag(Opt::IdleTimeout, {"--idle_timeout"}, Arity::One),
        flag(Opt::QueueSize, {"--queue_size"}, Arity::One),
        flag(Opt::Resume, {"--resume"}, Arity::None),
        flag(Opt::NoChecksum, {"--no_checksum"}, Arity::None),
    };
    f.insert(f.end(), online.begin(), online.end());
  }
  return f;
}

void print_help(bool multi) {
  const char* cmd = multi ? "multi_run_ut" : "run_ut";
  fmt::print(
      "usage: probe [-f pytorch|mindspore] {} -api_info DUMP.json [options]\n\n"
      "Checks every API of an msprobe dump against a float64 CPU bench and writes\n"
      "accuracy_checking_result_<ts>.csv and accuracy_checking_details_<ts>.csv (msprobe's format).\n"
      "Tensor dumps: the dumped outputs are the device side. Statistics dumps: inputs are generated\n"
      "from Max/Min/dtype/shape and the device side is a device runner (default: low-precision "
      "emulation).\n\n"
      "options (msprobe spellings first; long options may be abbreviated and written --opt=value):\n"
      "  -api_info, --api_info_file FILE   dump.json to check (required), or a step directory of a "
      "multi-rank\n"
      "                                    dump (rank*/dump.json): each rank into OUT/<rank dir>/, one "
      "timestamp\n"
      "  -o, --out_path DIR                output directory (default ./, created if missing)\n"
      "  -save_error_data                  save inputs and bench/device outputs of failing APIs as .npy\n"
      "                                    under <out>/ut_error_data<ts>/ (or config.json's "
      "error_data_path);\n"
      "                                    a failure to save is reported and exits non-zero, verdicts stand\n"
      "  -csv_path, --result_csv_path FILE resume: continue an interrupted run in this\n"
      "                                    accuracy_checking_result_<ts>.csv and its details file; refused\n"
      "                                    unless accuracy_checking_run_<ts>.jsonl beside them shows the "
      "same\n"
      "                                    dump, tensor files, options (--profile, --device_runner, -f,\n"
      "                                    -config, --seed, --max_api_*) and probe version, and unchanged "
      "rows\n"
      "  --resume_foreign                  with -csv_path: continue a result file without that record\n"
      "                                    (msprobe's own, an older probe's); its rows are only checked\n"
      "                                    against the dump's API names\n"
      "  -f, --filter_api                  skip forward entries identical to an earlier call of the same "
      "API\n"
      "  -config, --config_path FILE       config.json; its run_ut section gives white_list, black_list,\n"
      "                                    error_data_path\n"
      "  -d, --device ID [ID ...]          accepted for msprobe compatibility (no accelerator is used)\n"
      "  -j, --jit_compile                 accepted for msprobe compatibility (no effect)\n"
      "{}"
      "  --seed N                          seed of generated inputs (default 1234)\n"
      "  --profile probe|msprobe           thresholds and roll-up: probe's (default) or msprobe's exact "
      "ones\n"
      "                                    (from precision_standards.json: $PROBE_STANDARDS_FILE, else\n"
      "                                    $PROBE_DATA_DIR, the installed share/probe, the source data/)\n"
      "  --device_runner auto|emulated     device side: auto = the dumped outputs where the dump has their\n"
      "                                    files, else the registry's device runner; emulated = always the\n"
      "                                    registry's device runner (built-in low-precision emulation)\n"
      "  --timestamp YYYYmmddHHMMSS        fixed timestamp for the output file names (default: now)\n"
      "  --max_api_elements N              statistics dumps: SKIP an API whose generated inputs exceed N\n"
      "                                    elements in all, or whose result would (repeat, expand, arange,\n"
      "                                    new_full, interpolate, one_hot, outer, kron, cdist, tile, ...;\n"
      "                                    from shapes and arguments, before running; default 16777216;\n"
      "                                    0 = no limit); tensor dumps: SKIP an API whose result would\n"
      "                                    exceed both N and its dumped outputs\n"
      "  --max_api_flops N                 statistics dumps: SKIP a GEMM, convolution or attention API "
      "whose\n"
      "                                    float64 bench on generated inputs would exceed N floating-point\n"
      "                                    operations (default 2^37 = 137438953472, about 10 s; 0 = no "
      "limit)\n"
      "  -q, --quiet                       no progress on stderr\n"
      "  --report                          also write report_<ts>.html beside the CSVs: the self-contained\n"
      "                                    HTML report of the run (probe report; offline runs only)\n"
      "  -h, --help                        this help\n\n"
      "Rows are written in dump order whatever the thread count, flushed per API, so an interrupted run\n"
      "can be resumed with -csv_path. Exit code 0 when the run completes, whatever it found; Ctrl-C\n"
      "(SIGINT) or SIGTERM ends it after the API being written, exit code 130 (not under mpirun, whose\n"
      "launcher ends the ranks).\n"
      "{}",
      cmd,
      multi ? "  -n, --num_splits N                worker threads (1..64, default 8)\n"
            : "  -n, --threads N                   worker threads (default: all cores)\n",
      multi
          ? ""
          : "\nonline pre-check (msprobe's is_online; -config's run_ut section gives is_online, host, port,\n"
            "rank_list, nfs_path, tls_path, white_list, black_list; flags win over the file):\n"
            "  --online, --is_online             serve instead of reading a dump: training processes (probe\n"
            "                                    replay, probe::online::Client) send each API call over "
            "TCP;\n"
            "                                    each rank gets "
            "accuracy_checking_{result,details}_<ts>_rank<N>.csv\n"
            "  --host ADDR                       address to bind (IPv4/IPv6 literal; default 127.0.0.1)\n"
            "  --port N                          port to listen on (0: any free port; required)\n"
            "  --rank_list N [N ...]             ranks to check (default 0); others are acknowledged, "
            "dropped\n"
            "  --producers N                     end once N connections have sent STOP_ and none is still\n"
            "                                    sending (default 0: msprobe's rule, the first time no\n"
            "                                    connection is still sending)\n"
            "  --idle_timeout SECONDS            close a connection silent this long (default 600)\n"
            "  --queue_size N                    records per rank waiting for the workers before the server\n"
            "                                    answers BUSY_ (default 50)\n"
            "  --resume                          continue the files of the same -o, --timestamp and rank;\n"
            "                                    records of another run id than the files' (kept in\n"
            "                                    accuracy_checking_result_<ts>_rank<N>.run_id) are refused;\n"
            "                                    record digests are kept in .digests beside it\n"
            "  --no_checksum                     messages carry no CRC field (clients must agree)\n"
            "  --nfs_path DIR                    shared-directory mode instead of TCP: training processes "
            "write\n"
            "                                    {rank}_{step}_{seq}_{api}.rec files and start_/end_{rank} "
            "markers\n"
            "                                    into DIR (probe replay --nfs_path); each is checked and "
            "deleted;\n"
            "                                    one server per DIR (it holds DIR/.probe_server.lock); an\n"
            "                                    end_{rank} left without records of its rank is refused\n"
            "  --tls_path DIR                    mutual TLS (TLS 1.2/1.3, ECDHE with AES-GCM or ChaCha20):\n"
            "                                    DIR holds server.key, server.crt, ca.crt and optionally\n"
            "                                    crl.pem (PEM; the key unencrypted); every client must "
            "present\n"
            "                                    a certificate ca.crt verifies (in its dates, not revoked);\n"
            "                                    empty = plaintext. A bad file is an error naming it\n"
            "memory bounds (config.json run_ut keys only): max_connections (default 256),\n"
            "max_connection_bytes (bytes one connection may buffer; default 2 GiB + 40, one message of the\n"
            "largest frame; a larger message closes that connection), max_buffered_bytes (all connections\n"
            "together; default twice that; a connection whose next message does not fit is not read until\n"
            "there is room), max_outstanding_bytes (tensor bytes of the records one rank holds decoded "
            "until\n"
            "they are checked; default 2 GiB; one record is always taken)\n"
            "The server prints \"listening on ADDR:PORT\" (or \"watching DIR\") and ends when every producer "
            "has\n"
            "sent STOP_ (end marker) and\n"
            "all records are written; SIGINT/SIGTERM end it early with resumable files (exit code 130).\n"
            "A rank's files belong to one run (the run id of its first record; probe replay --run_id): a\n"
            "record of another run, or of an API already received with other content, is not checked,\n"
            "is named on stderr and makes the exit code 4 (an identical resend is dropped silently).\n");
  fmt::print("{}", kExitCodesNote);
}

[[noreturn]] void bad(const std::string& msg) { command_line_error(msg); }

struct OnlineFlags {
  bool online = false, resume = false, checksum = true;
  std::optional<std::string> host, nfs_path, tls_path;
  std::optional<long long> port;
  std::optional<std::vector<std::uint64_t>> rank_list;
  std::size_t producers = 0, queue_size = 50;
  long long idle_timeout_s = 600;
};

// SIGINT/SIGTERM request a stop instead of killing the process. The handler only writes a byte to a pipe
// (async-signal-safe, whichever thread the signal lands on); a watcher thread turns it into the stop request.
// A second signal, from a user who does not want to wait for the API being written, ends the process at
// once (the default action), which the flushed files survive as they survive any kill.
int g_signal_pipe = -1;
volatile std::sig_atomic_t g_signalled = 0;

extern "C" void on_stop_signal(int sig) {
  if (g_signalled) {
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  g_signalled = 1;
  if (g_signal_pipe >= 0) {
    const char byte = 1;
    [[maybe_unused]] auto n = ::write(g_signal_pipe, &byte, 1);
  }
}

class SignalStop {
 public:
  SignalStop() {
    if (::pipe2(fds_, O_CLOEXEC) != 0) throw Error(ErrorKind::Io, "cannot create the signal pipe");
    g_signal_pipe = fds_[1];
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
    thread_ = std::thread([this] {
      char byte = 0;
      while (::read(fds_[0], &byte, 1) < 0 && errno == EINTR) {
      }
      if (byte == 1) source_.request_stop();
    });
  }
  ~SignalStop() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
    g_signal_pipe = -1;
    const char done = 2;
    [[maybe_unused]] auto n = ::write(fds_[1], &done, 1);
    thread_.join();
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  SignalStop(const SignalStop&) = delete;
  SignalStop& operator=(const SignalStop&) = delete;
  std::stop_token token() const { return source_.get_token(); }

 private:
  int fds_[2] = {-1, -1};
  struct sigaction old_int_ {
  }, old_term_{};
  std::stop_source source_;
  std::thread thread_;
};

int run_online(const RunUtOptions& o, OnlineFlags f, bool quiet) {
  online::OnlineConfig limits;  // max_connections, max_connection_bytes, max_buffered_bytes: config.json only
  if (!o.config_path.empty()) {
    const online::OnlineConfig c = online::load_online_config(o.config_path);
    if (!f.host) f.host = c.host;
    if (!f.port && c.port) f.port = *c.port;
    if (!f.rank_list) f.rank_list = c.rank_list;
    if (!f.nfs_path) f.nfs_path = c.nfs_path;
    if (!f.tls_path) f.tls_path = c.tls_path;
    limits = c;
  }
  const bool shared = f.nfs_path && !f.nfs_path->empty();
  if (!shared && !f.port) bad("online run_ut needs --port (or run_ut.port in -config), or --nfs_path");
  if (!o.result_csv.empty()) bad("-csv_path does not apply to online run_ut: use --resume with --timestamp");
  if (f.resume && o.timestamp.empty()) bad("--resume needs the --timestamp of the run to continue");
  online::ServerOptions so;
  if (f.host && !f.host->empty()) so.host = *f.host;
  so.port = static_cast<std::uint16_t>(f.port.value_or(0));
  if (shared) so.shared_dir = *f.nfs_path;
  if (f.tls_path) so.tls_dir = *f.tls_path;
  if (f.rank_list) so.rank_list = *f.rank_list;
  so.wire.checksum = f.checksum;
  so.producers = f.producers;
  so.idle_timeout = std::chrono::seconds(f.idle_timeout_s);
  if (limits.max_connections) so.max_connections = *limits.max_connections;
  if (limits.max_connection_bytes) so.max_connection_bytes = *limits.max_connection_bytes;
  if (limits.max_buffered_bytes) so.max_buffered_bytes = *limits.max_buffered_bytes;
  if (limits.max_outstanding_bytes) so.stream.max_outstanding_bytes = *limits.max_outstanding_bytes;
  so.stream.run_ut = o;
  so.stream.resume = f.resume;
  so.stream.capacity = f.queue_size;
  so.log = [quiet](std::string_view line) {
    if (!quiet) fmt::print(stderr, "run_ut online: {}\n", line);
  };
  SignalStop signals;
  online::Server server(so);
  if (shared)
    fmt::print("watching {}\n", so.shared_dir);
  else
    fmt::print("listening on {}:{}{}\n", so.host, server.port(),
               so.tls_dir.empty() ? std::string() : " with mutual TLS (" + so.tls_dir + ")");
  std::fflush(stdout);
  const online::ServerSummary s = server.run(signals.token());
  fmt::print(
      "connections {} messages {} crc_errors {} busy {} duplicates {} other_ranks {} closed_bad {} "
      "closed_idle {} lost {} tls_refused {} buffer_waits {}\n",
      s.connections, s.messages, s.crc_errors, s.busy, s.duplicates, s.other_ranks, s.closed_bad,
      s.closed_idle, s.lost, s.tls_refused, s.buffer_waits);
  std::size_t refused = 0;
  for (const auto& [rank, r] : s.ranks) {
    fmt::print(
        "rank {}: apis {} pass {} warning {} error {} skip {} (ignored {}, repeated {}, dropped {}, "
        "conflicts {}, other_runs {}) run_id {}\n",
        rank, r.run_ut.apis, r.run_ut.pass, r.run_ut.warning, r.run_ut.error, r.run_ut.skip, r.ignored,
        r.repeated, r.dropped, r.conflicts, r.other_runs, r.run_id.empty() ? "(none)" : r.run_id);
    fmt::print("result: {}\ndetails: {}\n", r.run_ut.result_csv, r.run_ut.details_csv);
    for (const std::string& line : r.problems) fmt::print(stderr, "probe run_ut: rank {}: {}\n", rank, line);
    if (r.problems.size() < r.conflicts + r.other_runs)
      fmt::print(stderr, "probe run_ut: rank {}: {} more\n", rank,
                 r.conflicts + r.other_runs - r.problems.size());
    refused += r.conflicts + r.other_runs;
  }
  if (s.cancelled) {
    fmt::print(stderr,
               "probe run_ut: interrupted; the files are resumable: run again with --resume and --timestamp "
               "set to the 14 digits in their names\n");
    return 130;
  }
  if (refused) {
    // A record refused unchecked may be the one that counts: the rows written do not clear the run.
    fmt::print(stderr,
               "probe run_ut: {} record(s) not checked: another copy of the same API with other content, or "
               "another run's\n",
               refused);
    return exit_code(ErrorKind::Format);
  }
  return 0;
}

// The directory of the run's result CSV: where --report writes the page.
std::string report_dir(const std::string& result_csv) {
  const auto parent = std::filesystem::path(result_csv).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

class Progress {
 public:
  explicit Progress(bool quiet) : quiet_(quiet), tty_(::isatty(STDERR_FILENO) == 1) {}
  void update(const RunUtProgress& p) {
    if (quiet_) return;
    auto now = Clock::now();
    if (!started_) {
      started_ = true;
      start_ = now;
      first_done_ = p.done;
      last_print_ = tty_ ? now - std::chrono::hours(1) : now;
    }
    bool final = p.done >= p.total;
    double since_print = std::chrono::duration<double>(now - last_print_).count();
    // A bar refreshes ten times a second; a log (not a terminal) gets a line every 10 s and at the end.
    bool due = tty_ ? since_print >= 0.1 : (since_print >= 10.0 && p.done != first_done_);
    if (!due && !final) return;
    if (!tty_ && p.done == first_done_ && !final) return;
    last_print_ = now;
    double elapsed = std::chrono::duration<double>(now - start_).count();
    double rate = elapsed > 0 ? static_cast<double>(p.done - first_done_) / elapsed : 0.0;
    std::string eta = rate > 0 ? hms(static_cast<double>(p.total - p.done) / rate) : "--:--";
    double pct = p.total ? 100.0 * static_cast<double>(p.done) / static_cast<double>(p.total) : 100.0;
    if (tty_) {
      // The bar takes what the counters leave of the terminal's width (at most 30), none in a narrow one,
      // so the line never wraps; the text is cut last.
      std::string text =
          fmt::format(" {}/{} APIs {:5.1f}% {:.1f} API/s ETA {}", p.done, p.total, pct, rate, eta);
      const int columns = terminal_columns() - 1;
      const int bar = std::min(30, columns - static_cast<int>(text.size()) - 2);
      std::string line;
      if (bar >= 5) {
        const int filled = p.total ? static_cast<int>(static_cast<std::size_t>(bar) * p.done / p.total) : bar;
        line.append(1, '[').append(filled, '#').append(bar - filled, '.').append(1, ']');
      }
      line += text;
      if (static_cast<int>(line.size()) > columns)
        line.resize(static_cast<std::size_t>(std::max(columns, 1)));
      fmt::print(stderr, "\r{}\x1b[K", line);
      if (final) fmt::print(stderr, "\n");
    } else {
      fmt::print(stderr, "run_ut: {}/{} APIs ({:.1f}%), {:.1f} API/s, ETA {}\n", p.done, p.total, pct, rate,
                 eta);
    }
    std::fflush(stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  static std::string hms(double s) {
    auto t = static_cast<long long>(s + 0.5);
    return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                     : fmt::format("{}:{:02}", t / 60, t % 60);
  }
  bool quiet_, tty_;
  bool started_ = false;
  std::size_t first_done_ = 0;
  Clock::time_point start_, last_print_;
};

// What the CLI prints of one finished run (one rank directory of a step); false when its error data could not
// all be saved.
bool print_run(const RunUtSummary& s, bool report) {
  if (s.dataflow)
    fmt::print(
        "dataflow (D16): {} inputs linked to the outputs they are, {} tensors' gradients checked; {} "
        "tensors ({:.1f} MB) hashed, pre-pass {:.2f} s, checks {:.2f} s\n",
        s.dataflow_links, s.dataflow_tensors, s.dataflow_hashed, s.dataflow_hashed_bytes / 1e6,
        s.dataflow_link_seconds, s.dataflow_check_seconds);
  // The worst flagged outputs come before the summary line, which stays the last line before the paths.
  // The table is a view of files the run completed: a CSV it cannot read costs the table, not the run.
  try {
    fmt::print("{}",
               worst_outputs_table(read_run_ut_report(s.result_csv, s.details_csv), 5, terminal_columns()));
  } catch (const Error& e) {
    fmt::print(stderr, "probe run_ut: no table of the worst outputs: {}\n", e.what());
  }
  if (job().rank() == 0)
    for (const std::string& entry : s.unmatched_list_entries)
      fmt::print(stderr, "probe run_ut: warning: -config run_ut.{} names no API of this dump\n", entry);
  fmt::print("apis {} pass {} warning {} error {} skip {} (forward: error {}, backward: error {} skip {})\n",
             s.apis, s.pass, s.warning, s.error, s.skip, s.forward_error, s.backward_error, s.backward_skip);
  if (s.ranks > 1)
    fmt::print(
        "ranks {}: {} rounds, {:.3f} MB of rows gathered; rank 0 waited {:.2f} s for them and wrote them "
        "in {:.2f} s, of {:.2f} s\n",
        s.ranks, s.rounds, s.gathered_bytes / 1e6, s.gather_seconds, s.write_seconds, s.seconds);
  fmt::print("result: {}\ndetails: {}\n", s.result_csv, s.details_csv);
  if (report && job().rank() == 0)
    fmt::print("report: {}\n", write_run_ut_report(s.result_csv, s.details_csv, report_dir(s.result_csv)));
  if (!s.error_data_dir.empty()) fmt::print("error data: {}\n", s.error_data_dir);
  if (s.error_data_failures > 0) {
    fmt::print(stderr,
               "probe run_ut: could not save the error data of {} failing API(s) (their verdicts stand); "
               "first: {}\n",
               s.error_data_failures, s.error_data_problem);
    return false;
  }
  return true;
}

// A run stopped by SIGINT/SIGTERM: its files hold every API finished before the stop and resume.
int interrupted(const RunUtSummary& s) {
  fmt::print(stderr,
             "probe run_ut: interrupted; the files hold the APIs finished so far: to resume, run the same "
             "command with -csv_path {} instead of -o\n",
             s.result_csv);
  return 130;
}

int run(Args args, bool multi) {
  const auto fl = flags(multi);
  RunUtOptions o;
  bool quiet = false, have_api_info = false, report = false;
  std::vector<long long> devices;
  int num_splits = 8;
  bool threads_given = false;
  OnlineFlags online;
  for (const ParsedFlag& f : parse_args(args, fl).flags) {
    const std::string& arg = f.written;
    const std::string value = f.values.empty() ? std::string() : f.value();
    if (f.id == kHelpFlag) {
      print_help(multi);
      return 0;
    }
    switch (static_cast<Opt>(f.id)) {
      case Opt::ApiInfo:
        o.api_info = value;
        have_api_info = true;
        break;
      case Opt::Out:
        o.out_dir = value;
        break;
      case Opt::SaveErrorData:
        o.save_error_data = true;
        break;
      case Opt::Jit:
        break;
      case Opt::Device: {
        devices.clear();
        for (const std::string& d : f.values) devices.push_back(parse_integer(d, arg));
        std::set<long long> uniq(devices.begin(), devices.end());
        if (uniq.size() != devices.size()) bad("device id must be unique");
        for (auto d : devices)
          if (d < 0 || d > 4095) bad("device id must be in 0..4095, got " + std::to_string(d));
        break;
      }
      case Opt::CsvPath:
        o.result_csv = value;
        break;
      case Opt::ResumeForeign:
        o.resume_foreign = true;
        break;
      case Opt::FilterApi:
        o.filter_api = true;
        break;
      case Opt::Config:
        o.config_path = value;
        break;
      case Opt::Threads: {
        long long n = parse_integer(value, arg);
        if (multi && (n < 1 || n > 64)) bad(arg + " must be in 1..64, got " + value);
        if (n < 1 || n > 4096) bad(arg + " must be in 1..4096, got " + value);
        num_splits = static_cast<int>(n);
        threads_given = true;
        break;
      }
      case Opt::Seed: {
        long long s = parse_integer(value, arg);
        if (s < 0) bad("--seed must be >= 0");
        o.seed = static_cast<std::uint64_t>(s);
        break;
      }
      case Opt::Profile:
        if (value != "probe" && value != "msprobe")
          bad("--profile must be probe or msprobe, got '" + value + "'");
        o.profile = parse_profile(value);
        break;
      case Opt::Framework:
        if (const auto fw = parse_framework(value))
          o.framework = *fw;
        else
          bad("-f/--framework must be pytorch or mindspore, got '" + value + "'");
        break;
      case Opt::Timestamp:
        o.timestamp = value;
        break;
      case Opt::DeviceRunner:
        if (value != "auto" && value != "emulated")
          bad("--device_runner must be auto or emulated, got '" + value + "'");
        o.device_side = value == "auto" ? DeviceSide::Auto : DeviceSide::Runner;
        break;
      case Opt::MaxApiElements: {
        long long n = parse_integer(value, arg);
        if (n < 0) bad(arg + " must be >= 0, got " + value);
        o.max_api_elements = static_cast<std::uint64_t>(n);
        break;
      }
      case Opt::MaxApiFlops: {
        const long long n = parse_integer(value, arg);
        if (n < 0) bad(arg + " must be >= 0, got " + value);
        o.max_api_flops = static_cast<double>(n);
        break;
      }
      case Opt::Quiet:
        quiet = true;
        break;
      case Opt::Report:
        report = true;
        break;
      case Opt::Online:
        online.online = true;
        break;
      case Opt::Host:
        online.host = value;
        break;
      case Opt::Port: {
        const long long n = parse_integer(value, arg);
        if (n < 0 || n > 65535) bad(arg + " must be in 0..65535, got " + value);
        online.port = n;
        break;
      }
      case Opt::RankList: {
        std::vector<std::uint64_t> ranks;
        for (const std::string& r : f.values) {
          const long long n = parse_integer(r, arg);
          if (n < 0) bad(arg + " ranks must be >= 0, got " + r);
          ranks.push_back(static_cast<std::uint64_t>(n));
        }
        online.rank_list = ranks;
        break;
      }
      case Opt::NfsPath:
        online.nfs_path = value;
        break;
      case Opt::TlsPath:
        online.tls_path = value;
        break;
      case Opt::Producers: {
        const long long n = parse_integer(value, arg);
        if (n < 0) bad(arg + " must be >= 0, got " + value);
        online.producers = static_cast<std::size_t>(n);
        break;
      }
      case Opt::IdleTimeout: {
        const long long n = parse_integer(value, arg);
        if (n < 1 || n > 86400) bad(arg + " must be in 1..86400 seconds, got " + value);
        online.idle_timeout_s = n;
        break;
      }
      case Opt::QueueSize: {
        const long long n = parse_integer(value, arg);
        if (n < 1 || n > 100000) bad(arg + " must be in 1..100000, got " + value);
        online.queue_size = static_cast<std::size_t>(n);
        break;
      }
      case Opt::Resume:
        online.resume = true;
        break;
      case Opt::NoChecksum:
        online.checksum = false;
        break;
    }
  }
  if (o.resume_foreign && o.result_csv.empty()) bad("--resume_foreign applies only with -csv_path");
  if (!multi && !online.online && !o.config_path.empty())
    online.online = online::load_online_config(o.config_path).is_online;
  if (online.online) {
    if (job().size() > 1) bad("online run_ut serves one port: start it as one process, not under mpirun");
    if (report) bad("--report applies to offline run_ut; run probe report on the server's -o directory");
    if (have_api_info) bad("-api_info does not apply to online run_ut (the records arrive over the network)");
    if (threads_given) o.threads = num_splits;
    return run_online(o, online, quiet);
  }
  if (!have_api_info || o.api_info.empty()) bad("-api_info/--api_info_file DUMP.json is required");
  if (multi) {
    // msprobe caps processes at 8 per device; probe's threads share one CPU, the cap keeps the
    // same meaning for scripts that pass -n 64 -d 0.
    std::size_t ndev = devices.empty() ? 1 : devices.size();
    o.threads = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(num_splits), 8 * ndev));
  } else if (threads_given) {
    o.threads = num_splits;
  }
  // Under mpirun every rank checks a share of the APIs and rank 0 writes the files.
  o.group = &job();
  Progress progress(quiet);
  o.error_histograms = report;
  auto on_progress = [&](const RunUtProgress& p) { progress.update(p); };
  // Ctrl-C (SIGINT) or SIGTERM ends the run after the API being written, with files that resume, instead of
  // killing it wherever it is. Under mpirun each rank would see the signal at its own moment, so there the
  // default (the launcher ends the job; the files resume all the same) is kept.
  std::optional<SignalStop> signals;
  if (job().size() == 1) signals.emplace();
  const std::stop_token stop = signals ? signals->token() : std::stop_token{};
  std::error_code ec;
  if (std::filesystem::is_directory(o.api_info, ec)) {
    // A step directory of a multi-rank dump: every rank directory into <out>/<rank dir>/.
    bool saved = true;
    const RunUtSummary* cancelled = nullptr;
    const std::vector<RunUtRankSummary> ranks = run_ut_step(o, on_progress, stop);
    for (const RunUtRankSummary& r : ranks) {
      fmt::print("{}:\n", r.rank_dir);
      saved = print_run(r.summary, report && !r.summary.cancelled) && saved;
      if (r.summary.cancelled) cancelled = &r.summary;
    }
    if (cancelled) return interrupted(*cancelled);
    return saved ? 0 : exit_code(ErrorKind::Io);
  }
  const RunUtSummary s = run_ut(o, on_progress, stop);
  const bool saved = print_run(s, report && !s.cancelled);
  if (s.cancelled) return interrupted(s);
  if (!saved) return exit_code(ErrorKind::Io);
  return 0;
}

}  // namespace

int run_run_ut(Args args) { return run(args, false); }
int run_multi_run_ut(Args args) { return run(args, true); }

}  // namespace probe::cli
