// The training side of online pre-check (dump-and-compare §5.3): sends each API call to a
// `probe run_ut` server (probe/online_server.h) as a precheck frame in msprobe's TCP framing, with msprobe's
// flow control: per-connection sequence numbers, CRC-32 (on by default), a bounded send queue, a bounded
// window of unacknowledged messages, resends on ERROR, a pause on BUSY_, the STOP_/OVER_ handshake and an
// idle timeout. A lost connection is reported to the caller (probe::Error, Io), never waited on forever.
// With ClientOptions::tls_dir, everything goes through mutual TLS.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "probe/export.h"
#include "probe/online_wire.h"
#include "probe/precheck_frame.h"
#include "probe/runner.h"
#include "probe/value.h"

namespace probe::online {

struct PROBE_API ClientOptions {
  std::string host = "127.0.0.1";  ///< the server's address (IPv4 or IPv6 literal)
  std::uint16_t port = 0;
  WireOptions wire;    ///< checksum on (both sides must agree)
  FrameLimits limits;  ///< frames send() builds must respect these (the server's limits)
  Framework framework = Framework::PyTorch;  ///< names of dtypes and tensor types in the record
  std::size_t send_queue = 20;               ///< messages waiting to be sent (msprobe: 20)
  std::size_t window = 20;                   ///< messages sent but not acknowledged (msprobe: 20)
  int max_resends = 2;                       ///< resends after ERROR before the message is dropped
  /// How long send() waits for room in the queue before it throws (msprobe: 60 s, then drops).
  std::chrono::milliseconds send_timeout = std::chrono::seconds(60);
  std::chrono::milliseconds busy_pause = std::chrono::milliseconds(20);  ///< no new sends after BUSY_
  /// With messages in flight, no acknowledgement for this long counts as a lost connection (msprobe: 10 min).
  std::chrono::milliseconds idle_timeout = std::chrono::minutes(10);
  std::chrono::milliseconds connect_timeout = std::chrono::seconds(10);
  /// Non-empty: shared-directory mode (msprobe's nfs_path): no socket; send() writes the record file
  /// `{rank}_{step}_{seq}_{api}.rec` (temporary file + atomic link, never replacing a file) after a
  /// `start_{rank}` marker, close() writes `end_{rank}`. A record counts as acknowledged (`acked`) once a
  /// server has taken (removed) its file; close() waits for all of them within its timeout, and when the time
  /// runs out removes the files and markers still there and throws Io with the count not taken.
  std::string shared_dir;
  /// Non-empty: mutual TLS (msprobe's tls_path): this directory holds client.key, client.crt (PEM, the key
  /// unencrypted), ca.crt and optionally crl.pem. The server's certificate must verify against ca.crt, be
  /// within its dates (not revoked, with crl.pem) and name `host` (subjectAltName IP). Never combined with
  /// shared_dir (InvalidArgument).
  std::string tls_dir;
  /// The producer's run, carried in every record's frame header: a server checks each rank's records of one
  /// run only (its files keep the run id, and `--resume` refuses another). "" = process_run_id(); a job
  /// whose ranks or restarts must count as one run passes its own (valid_run_id(), else InvalidArgument).
  std::string run_id;
  /// On (the default): send() only queues the call; the record's statistics, frame and checksum are computed
  /// on the client's I/O thread, off the caller's (a training step's) path. send() copies each tensor once
  /// (the caller may overwrite it after send() returns), except a tensor over a LentStorage, which is read
  /// in place when the record is encoded (no copy on the caller's thread at all). A call found not encodable
  /// there is not thrown from send() but counted in stats().dropped with stats().drop_reason: the default
  /// changed so, because encoding every call on the caller's thread cost a training step several times its
  /// own time (README, "Checking while training"). Off: send() encodes on the caller's thread and throws
  /// InvalidArgument for a call it cannot encode (the contract before; lent tensors are then read at once).
  /// Ignored in shared-directory mode (no I/O thread: encoded on the caller's thread).
  bool encode_on_io_thread = true;
};

/// Memory a caller lends to send() instead of having it copied (ClientOptions::encode_on_io_thread): the
/// client reads it on its I/O thread when it encodes the record, and its owner calls preserve() before
/// changing it. Until then the owner keeps the memory alive; the memory held so is bounded by the client's
/// send_queue (records queued and not yet encoded; a record leaves the queue encoded, which lets its lent
/// memory go). A subclass says where the bytes are and how to tell that they changed behind the owner's
/// back (probe::torch's tensors: the tensor's version counter); a record with changed bytes is dropped and
/// counted (ClientStats::changed), never sent. A tensor over a LentStorage is for send() only.
class PROBE_API LentStorage : public Storage {
 public:
  ~LentStorage() override;
  LentStorage(const LentStorage&) = delete;
  LentStorage& operator=(const LentStorage&) = delete;
  /// The lent bytes (contiguous lent memory) or the storage's own copy of them.
  std::byte* data() noexcept override;
  std::size_t size() const noexcept override { return size_; }

  /// Owner side, before the lent bytes change: when the client has not read them yet, copies them into
  /// memory of the record's own (waiting while the client is reading them) and returns true; false when
  /// the client no longer needs them, or when they changed already (the record is then dropped).
  bool preserve();
  /// Whether the client no longer needs the lent memory (read, preserved, or its record dropped).
  bool settled() const;

  /// Client side, around reading the bytes to encode a record: begin_read() locks the storage (it stays
  /// locked until end_read(), also when it returns false) and returns false when the lent bytes changed
  /// since lending; end_read() lets the owner's memory go and unlocks.
  bool begin_read();
  void end_read() noexcept;

 protected:
  /// `size` bytes, at `contiguous` when the lent memory holds them contiguously (read in place), else
  /// nullptr (copy_lent() gathers them, on the reading thread).
  LentStorage(std::size_t size, const std::byte* contiguous);
  /// A contiguous copy of the lent bytes (`size` bytes from its data()).
  virtual std::shared_ptr<Storage> copy_lent() const = 0;
  /// False when the lent memory changed since lending.
  virtual bool lent_unchanged() const noexcept { return true; }
  /// Lets go of the lent memory (called once, under the lock, when no one needs it any more).
  virtual void release_lent() noexcept = 0;

 private:
  mutable std::mutex m_;
  std::size_t size_;
  const std::byte* lent_;
  std::shared_ptr<Storage> copy_;
  bool settled_ = false;
  bool changed_ = false;  // preserve() found the lent bytes changed already
};

/// A run id generated once per process (32 random hex digits): ClientOptions::run_id's default.
PROBE_API const std::string& process_run_id();

/// config.json's keys of the training side of online pre-check (msprobe 1.0.4, seed 001: task "tensor"):
/// `tensor.online_run_ut`, `tensor.host` (the server's address), `tensor.port`, `tensor.nfs_path` (when set,
/// host and port are not used) and `tensor.tls_path`. Unset keys stay empty.
struct PROBE_API OnlineClientConfig {
  bool online_run_ut = false;
  std::string host;
  std::optional<int> port;  ///< msprobe writes -1 for "not set"
  std::string nfs_path, tls_path;
};
/// Reads the `tensor` section of config.json; throws probe::Error naming the file and the field on bad
/// content.
PROBE_API OnlineClientConfig load_online_client_config(const std::string& config_json);

struct PROBE_API ClientStats {
  std::size_t sent = 0;     ///< API messages queued by send()
  std::size_t acked = 0;    ///< answered OK_ (shared directory: record files a server has taken)
  std::size_t resent = 0;   ///< sent again after ERROR
  std::size_t busy = 0;     ///< BUSY_ answers
  std::size_t dropped = 0;  ///< given up after max_resends ERRORs, or (encode_on_io_thread) not encodable
  std::string drop_reason;  ///< encode_on_io_thread: why the first call that could not be encoded was not
  /// Of dropped: records whose lent memory (LentStorage) changed before they were encoded (never sent).
  std::size_t changed = 0;
  bool stopped = false;  ///< the server answered STOP_ with OVER_
  bool killed = false;   ///< the server sent KILL_ (the run ended)
};

/// One connection to a server. send() may be called from any thread; records are numbered in call order.
class PROBE_API Client {
 public:
  /// Connects, with TLS including the handshake and the server's acceptance of this client's certificate
  /// (throws probe::Error Io naming host and port, and OpenSSL's reason, when it cannot within
  /// connect_timeout; probe::Error naming the file for a bad file in tls_dir).
  explicit Client(ClientOptions options);
  /// close() with a short wait; errors are swallowed (call close() to see them).
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// Sends forward API call `api_name` ("Functional.conv2d.0": prefix, name and call index, as in a dump
  /// key without ".forward") with its inputs and the outputs the device produced, tagged with `step` and
  /// `rank`. Returns once the call is queued (copies the tensors not lent,
  /// ClientOptions::encode_on_io_thread); blocks while the queue is full, at most send_timeout. Throws
  /// probe::Error: Io when the connection is lost or the queue stayed full; InvalidArgument for a call that
  /// cannot be encoded when encode_on_io_thread is off (on: counted in stats().dropped).
  void send(std::string_view api_name, const ApiCall& inputs, const std::vector<Value>& outputs,
            std::uint64_t step, std::uint64_t rank);
  /// send() with the call index appended: `api` ("Aten.mm.default") goes as "{api}.{k}", k counting this
  /// client's calls of `api` from 0 over its whole life, never reset per step (the server checks a name once
  /// per rank). Returns the name sent. Thread-safe; throws like send().
  std::string send_api(std::string_view api, const ApiCall& inputs, const std::vector<Value>& outputs,
                       std::uint64_t step, std::uint64_t rank);
  /// The same with a frame already encoded (probe/precheck_frame.h), e.g. from DumpRecords; it carries the
  /// run id it was encoded with (pass run_id() to DumpRecords::frame).
  void send_frame(std::vector<std::byte> frame, std::uint64_t step, std::uint64_t rank);
  /// Waits until every message is acknowledged, sends STOP_ and waits for OVER_, then closes, all within
  /// `timeout`. Throws probe::Error (Io) when the connection was lost, the server ended the run (KILL_)
  /// before acknowledging every record, or the time ran out before that (stats() says how far it got).
  /// Idempotent once it has succeeded.
  ClientStats close(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  /// Counts so far.
  ClientStats stats() const;
  /// The run id this client's records carry (ClientOptions::run_id or process_run_id()).
  const std::string& run_id() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The precheck frame of one forward API call, its header in dump.json's entry format (key
/// `api_name` + ".forward", tensors described as DumpWriter describes them, each naming its blob) with
/// `run_id` when not empty.
PROBE_API std::vector<std::byte> encode_api_frame(std::string_view api_name, const ApiCall& inputs,
                                                  const std::vector<Value>& outputs,
                                                  Framework framework = Framework::PyTorch,
                                                  const FrameLimits& limits = {},
                                                  std::string_view run_id = {});

}  // namespace probe::online
