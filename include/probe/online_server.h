// Online pre-check's receiving side (dump-and-compare §5): `probe run_ut` with `is_online`.
// Training processes (one connection per rank, probe/online_client.h or msprobe's framing) send each API call
// as a precheck frame (probe/precheck_frame.h) inside msprobe's TCP messages (probe/online_wire.h); the
// server acknowledges every message as msprobe's does and checks the records of each rank in its rank_list
// through a RunUtStream (probe/run_ut_stream.h), so each rank gets run_ut's CSVs with the rows offline run_ut
// gives. Plaintext TCP, mutual TLS (ServerOptions::tls_dir, msprobe's tls_path), or the shared-directory mode
// (ServerOptions::shared_dir, msprobe's nfs_path).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "probe/export.h"
#include "probe/online_wire.h"
#include "probe/precheck_frame.h"
#include "probe/run_ut_stream.h"

namespace probe::online {

/// config.json's run_ut keys of online pre-check (msprobe 1.0.4, seed 001).
struct PROBE_API OnlineConfig {
  bool is_online = false;
  std::string host;         ///< "" = not set
  std::optional<int> port;  ///< msprobe writes -1 for "not set"
  std::vector<std::uint64_t> rank_list = {0};
  std::string nfs_path, tls_path;
  /// probe's bounds on the server's memory (ServerOptions' fields of the same names); unset = the defaults.
  std::optional<std::size_t> max_connections;
  std::optional<std::uint64_t> max_connection_bytes, max_buffered_bytes;
  std::optional<std::uint64_t> max_outstanding_bytes;  ///< RunUtStreamOptions' field, per rank
};
/// Reads the run_ut section of config.json; throws probe::Error naming the file and field on bad content.
PROBE_API OnlineConfig load_online_config(const std::string& config_json);

inline constexpr std::size_t kDefaultMaxConnections = 256;
/// One message carrying a frame of FrameLimits' default max_frame_bytes (2 GiB), with header and CRC field.
inline constexpr std::uint64_t kDefaultMaxConnectionBytes =
    (std::uint64_t{1} << 31) + kMessageHeaderBytes + kCrcFieldBytes;
inline constexpr std::uint64_t kDefaultMaxBufferedBytes = 2 * kDefaultMaxConnectionBytes;

struct PROBE_API ServerOptions {
  std::string host = "127.0.0.1";  ///< address to bind (IPv4 or IPv6 literal); never a wildcard by default
  std::uint16_t port = 0;          ///< 0 = an ephemeral port (see Server::port())
  /// Only records of these ranks are checked (others are acknowledged and dropped, as msprobe); empty = all.
  std::vector<std::uint64_t> rank_list = {0};
  WireOptions wire;    ///< checksum on; max_payload_bytes is lowered to limits.max_frame_bytes
  FrameLimits limits;  ///< a message or frame beyond a bound closes its connection
  /// Per rank: run_ut options (out_dir, threads, config_path, ...), resume, and records outstanding before
  /// the server answers BUSY_ (msprobe's receive queue: 50). `rank` is set per rank by the server.
  RunUtStreamOptions stream;
  /// The run ends when this many connections have sent STOP_ and no connection is still sending (open and
  /// without STOP_); 0 = msprobe's rule: the first time, after a connection, that none is still sending.
  std::size_t producers = 0;
  /// A connection that sends nothing for this long is closed (msprobe: 10 min).
  std::chrono::milliseconds idle_timeout = std::chrono::minutes(10);
  /// Connections open at once (TCP); further connections are closed at once, with a logged reason.
  std::size_t max_connections = kDefaultMaxConnections;
  /// Bytes one connection may hold while a message arrives (header, CRC field and payload; a record parked
  /// after BUSY_ keeps its share). A message announcing more is a stream error that closes that connection
  /// only. The default holds one message of the largest frame `limits` allows.
  std::uint64_t max_connection_bytes = kDefaultMaxConnectionBytes;
  /// Bytes all connections together may hold. A connection whose next message does not fit in what is
  /// left is not read (back-pressure: its sender blocks in TCP) until other messages have been handed to
  /// the checker. Must be >= max_connection_bytes. The default: two messages of the largest frame.
  std::uint64_t max_buffered_bytes = kDefaultMaxBufferedBytes;
  /// With tls_dir: a connection whose TLS handshake has not succeeded this long after it was accepted is
  /// closed, however often its peer sends a byte (a stalled peer must not hold a slot for idle_timeout).
  std::chrono::milliseconds handshake_timeout = std::chrono::seconds(30);
  /// Non-empty: shared-directory mode (msprobe's nfs_path) instead of TCP: nothing is bound; run() polls this
  /// directory for `{rank}_{step}_{seq}_{api}.rec` record files (taken in seq order per rank and deleted) and
  /// `start_{rank}`/`end_{rank}` markers (Client with ClientOptions::shared_dir writes them). A rank counts
  /// as a producer: it ends with its end marker, or as lost after idle_timeout without a file. The
  /// constructor claims the directory for this server's life (an exclusive flock on the hidden file
  /// `.probe_server.lock` in it); a second server on the same directory throws probe::Error (Io) naming it.
  /// An `end_{rank}` marker found at construction without a record file of its rank is left from an earlier
  /// run and would end the rank at once: probe::Error (InvalidArgument) naming the file (it is not removed).
  std::string shared_dir;
  /// Non-empty: mutual TLS (msprobe's tls_path): this directory holds server.key, server.crt (PEM, the key
  /// unencrypted), ca.crt and optionally crl.pem. TLS 1.2 or 1.3 with ECDHE and AES-GCM/ChaCha20 ciphers;
  /// every client must present a certificate that ca.crt verifies, within its dates and, with crl.pem, not
  /// revoked. A connection whose handshake fails is closed with a logged reason; the others go on. The files
  /// are read by the constructor (probe::Error naming the file when one is missing, unreadable, encrypted,
  /// mismatched or out of its dates). Never combined with shared_dir (InvalidArgument).
  std::string tls_dir;
  /// Receives one line per event worth a log (connections, closed streams with the reason); may be empty.
  /// Called from the thread in run().
  std::function<void(std::string_view)> log;
};

struct PROBE_API ServerSummary {
  std::map<std::uint64_t, RunUtStreamSummary> ranks;  ///< per checked rank
  std::size_t connections = 0;                        ///< accepted (with TLS: whose handshake succeeded)
  std::size_t messages = 0;      ///< API messages with a good CRC (duplicates included, STOP_ excluded)
  std::size_t crc_errors = 0;    ///< answered ERROR
  std::size_t busy = 0;          ///< answered BUSY_
  std::size_t duplicates = 0;    ///< a seq seen before on the connection: acknowledged, not checked again
  std::size_t other_ranks = 0;   ///< records of ranks outside rank_list
  std::size_t stops = 0;         ///< STOP_ received
  std::size_t closed_bad = 0;    ///< connections closed for a message or frame that breaks the protocol
  std::size_t closed_idle = 0;   ///< connections closed by the idle timeout
  std::size_t buffer_waits = 0;  ///< times a connection was left unread until max_buffered_bytes had room
  std::size_t lost = 0;          ///< connections that ended without STOP_
  std::size_t tls_refused = 0;   ///< TLS connections closed in the handshake (certificate refused, not TLS,
                                 ///< or not finished within handshake_timeout)
  bool cancelled = false;        ///< the stop token ended the run (CSVs resumable with stream.resume)
};

/// A listening online pre-check server. run() is called once, from one thread; port() from any thread.
class PROBE_API Server {
 public:
  /// Binds and listens (throws probe::Error Io naming host and port when it cannot, InvalidArgument for a
  /// host that is not an address). `registry` and `standards` must outlive the server.
  Server(ServerOptions options, const RunnerRegistry& registry, const Standards& standards);
  /// The same with probe's built-in runners and Standards::builtin(options.stream.run_ut.profile).
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// The bound port (0 in shared-directory mode).
  std::uint16_t port() const;
  /// Serves until the producers are done (then KILL_ goes to every open connection and every rank's
  /// records are checked and written) or `stop` is requested (records not yet written are dropped; the
  /// files stay resumable). Throws probe::Error when a rank's files cannot be created or written.
  ServerSummary run(std::stop_token stop = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace probe::online
