// `probe replay`: sends every forward API record of a tensor dump to an online pre-check server
// (`probe run_ut` with is_online), as a training process would: the stand-in for tests, demos and load.
#include <fmt/core.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "ArgParser.h"
#include "Commands.h"
#include "probe/error.h"
#include "probe/online_client.h"
#include "probe/online_server.h"
#include "probe/precheck_frame.h"

namespace probe::cli {
namespace {

enum class Opt {
  ApiInfo,
  Config,
  Host,
  Port,
  Rank,
  Step,
  TlsPath,
  NfsPath,
  NoChecksum,
  Timeout,
  RunId,
  Quiet
};

constexpr std::string_view kHelp =
    R"(usage: probe replay -api_info DUMP.json (-config config.json | --host ADDR --port N) [options]

Sends every forward API record of a dump (inputs, kwargs and the dumped outputs, with their tensor
files) to an online pre-check server (probe run_ut with run_ut.is_online), in dump order, as a
training process would, then sends STOP_ and waits for the server's OVER_. Replaying a dump gives the
rows probe run_ut writes for that dump's forward APIs.

options:
  -api_info, --api_info_file FILE  dump.json to send (required)
  -config, --config_path FILE      config.json: msprobe's training-side keys tensor.host, tensor.port,
                                   tensor.nfs_path, tensor.tls_path, else the server's run_ut.host,
                                   run_ut.port (tls_path, nfs_path); flags win over both
  --host ADDR                      server address (IPv4 or IPv6 literal; default 127.0.0.1)
  --port N                         server port (required unless config.json has it)
  --rank N                         rank the records are tagged with (default 0)
  --step N                         step the records are tagged with (default 0)
  --tls_path DIR                   mutual TLS: DIR holds client.key, client.crt, ca.crt and optionally
                                   crl.pem (PEM; the key unencrypted); the server's certificate must
                                   verify against ca.crt and name the --host address (empty: plaintext)
  --nfs_path DIR                   shared-directory mode: write record files into DIR instead of TCP
  --run_id ID                      the run the records belong to (1 to 128 of [A-Za-z0-9._:-]; default
                                   a random id per process): a server checks one run per rank and
                                   keeps it beside its files, so replays that continue one run
                                   (run_ut --resume) must pass the same ID; printed at the end
  --no_checksum                    send no CRC field (the server must be told the same)
  --timeout SECONDS                how long the final handshake may take; with --nfs_path, how long to
                                   wait for a server to take the record files (default 600)
  -q, --quiet                      no progress line
  -h, --help                       this help

Exit code 0 only when the server acknowledged every record (with --nfs_path: took every record file,
within --timeout) and answered STOP_. Otherwise (a lost connection, KILL_ before every record was
acknowledged, no server taking the files) the count not acknowledged and the reason, and exit code 3;
with --nfs_path the files no server took are removed again.
)";

std::uint64_t non_negative(const std::string& value, const std::string& flag) {
  const long long v = parse_integer(value, flag);
  if (v < 0) command_line_error(flag + " must be >= 0, got " + value);
  return static_cast<std::uint64_t>(v);
}

}  // namespace

int run_replay(Args args) {
  auto flag = [](Opt opt, std::vector<std::string> spellings, Arity arity) {
    return FlagSpec{static_cast<int>(opt), std::move(spellings), arity};
  };
  const std::vector<FlagSpec> specs = {
      flag(Opt::ApiInfo, {"-api_info", "--api_info_file"}, Arity::One),
      flag(Opt::Config, {"-config", "--config_path"}, Arity::One),
      flag(Opt::Host, {"--host"}, Arity::One),
      flag(Opt::Port, {"--port"}, Arity::One),
      flag(Opt::Rank, {"--rank"}, Arity::One),
      flag(Opt::Step, {"--step"}, Arity::One),
      flag(Opt::TlsPath, {"--tls_path"}, Arity::One),
      flag(Opt::NfsPath, {"--nfs_path"}, Arity::One),
      flag(Opt::NoChecksum, {"--no_checksum"}, Arity::None),
      flag(Opt::Timeout, {"--timeout"}, Arity::One),
      flag(Opt::RunId, {"--run_id"}, Arity::One),
      flag(Opt::Quiet, {"-q", "--quiet"}, Arity::None),
  };
  std::string api_info, config, host, tls_path, nfs_path, run_id;
  std::optional<std::uint64_t> port;
  std::uint64_t rank = 0, step = 0, timeout_s = 600;
  bool checksum = true, quiet = false;
  for (const ParsedFlag& f : parse_args(args, specs).flags) {
    if (f.id == kHelpFlag) {
      fmt::print("{}{}", kHelp, kExitCodesNote);
      return 0;
    }
    const std::string value = f.values.empty() ? std::string() : f.value();
    switch (static_cast<Opt>(f.id)) {
      case Opt::ApiInfo:
        api_info = value;
        break;
      case Opt::Config:
        config = value;
        break;
      case Opt::Host:
        host = value;
        break;
      case Opt::Port: {
        const auto p = non_negative(value, f.written);
        if (p == 0 || p > 65535) command_line_error(f.written + " must be in 1..65535, got " + value);
        port = p;
        break;
      }
      case Opt::Rank:
        rank = non_negative(value, f.written);
        break;
      case Opt::Step:
        step = non_negative(value, f.written);
        break;
      case Opt::TlsPath:
        tls_path = value;
        break;
      case Opt::NfsPath:
        nfs_path = value;
        break;
      case Opt::NoChecksum:
        checksum = false;
        break;
      case Opt::Timeout:
        timeout_s = non_negative(value, f.written);
        break;
      case Opt::RunId:
        if (!online::valid_run_id(value))
          command_line_error(f.written + " must be 1 to 128 characters of [A-Za-z0-9._:-], got \"" + value +
                             "\"");
        run_id = value;
        break;
      case Opt::Quiet:
        quiet = true;
        break;
    }
  }
  if (api_info.empty()) command_line_error("-api_info/--api_info_file DUMP.json is required");
  if (!config.empty()) {
    // The training side's own keys (tensor.*, msprobe's client config) first, then the server's (run_ut.*).
    const online::OnlineClientConfig t = online::load_online_client_config(config);
    const online::OnlineConfig c = online::load_online_config(config);
    if (nfs_path.empty()) nfs_path = !t.nfs_path.empty() ? t.nfs_path : c.nfs_path;
    if (host.empty()) host = !t.host.empty() ? t.host : c.host;
    if (!port && t.port && *t.port > 0) port = static_cast<std::uint64_t>(*t.port);
    if (!port && c.port && *c.port > 0) port = static_cast<std::uint64_t>(*c.port);
    if (tls_path.empty()) tls_path = !t.tls_path.empty() ? t.tls_path : c.tls_path;
  }
  if (!port && nfs_path.empty())
    command_line_error("--port (or tensor.port / run_ut.port in -config), or --nfs_path, is required");
  const online::DumpRecords records = online::DumpRecords::open(api_info);
  online::ClientOptions o;
  if (!host.empty()) o.host = host;
  o.port = static_cast<std::uint16_t>(port.value_or(0));
  o.shared_dir = nfs_path;
  o.tls_dir = tls_path;
  o.wire.checksum = checksum;
  o.run_id = run_id;
  online::Client client(o);
  // Exit 0 only when every record was acknowledged (over TCP: OK_; shared directory: taken by a server);
  // otherwise the count and the reason.
  std::string failure;
  try {
    for (std::size_t i = 0; i < records.size(); ++i) {
      client.send_frame(records.frame(i, o.limits, client.run_id()), step, rank);
      if (!quiet) fmt::print(stderr, "\rreplay: {}/{} APIs sent", i + 1, records.size());
    }
  } catch (const Error& e) {
    failure = e.what();
  }
  if (!quiet) fmt::print(stderr, "\n");
  online::ClientStats s;
  if (failure.empty()) {
    try {
      s = client.close(std::chrono::seconds(timeout_s));
    } catch (const Error& e) {
      failure = e.what();
    }
  }
  if (!failure.empty()) s = client.stats();
  fmt::print("sent {} acknowledged {} resent {} busy {} dropped {} run_id {}\n", s.sent, s.acked, s.resent,
             s.busy, s.dropped, client.run_id());
  if (failure.empty() && s.acked < records.size())
    failure = s.dropped > 0 ? "given up after repeated ERROR answers (checksum mismatches)"
                            : "the server did not acknowledge them";
  if (failure.empty()) return 0;
  fmt::print(stderr, "probe replay: {} of {} records not acknowledged: {}\n", records.size() - s.acked,
             records.size(), failure);
  return exit_code(ErrorKind::Io);
}

}  // namespace probe::cli
