// The online pre-check server (probe/online_server.h). One thread runs a poll(2) loop over the listening
// socket, every connection and a wake-up pipe; checking happens on each rank's RunUtStream workers.
// POSIX sockets and poll rather than asio: a few connections (one per training rank) need no reactor
// framework, libprobe gains no dependency and no third-party type, and ThreadSanitizer sees every lock. With
// tls_dir, each connection's bytes pass through a TlsSession (online/Tls.h: OpenSSL over memory buffers) in
// the same loop: ciphertext from the socket in, plaintext to the message decoder out, acknowledgements
// encrypted on the way back.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_set>

#include "online/SharedDir.h"
#include "online/Tls.h"
#include "probe/error.h"
#include "probe/online_server.h"
#include "probe/runner.h"
#include "support/FileOps.h"

namespace probe::online {
namespace {

using Clock = std::chrono::steady_clock;

static_assert(kDefaultMaxConnectionBytes ==
                  FrameLimits{}.max_frame_bytes + kMessageHeaderBytes + kCrcFieldBytes,
              "the default per-connection bound holds one message of the largest default frame");

std::string errno_text() { return std::strerror(errno); }

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    throw Error(ErrorKind::Io, "cannot make a socket non-blocking: " + errno_text());
}

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

std::string peer_name(const sockaddr_storage& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
    ::inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(ntohs(in->sin_port));
  }
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a);
  ::inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf);
  return "[" + std::string(buf) + "]:" + std::to_string(ntohs(in6->sin6_port));
}

struct Connection {
  Fd fd;
  std::string name;
  MessageDecoder decoder;
  std::vector<std::byte> out;  // bytes for the socket not yet sent: acknowledgements (with TLS: ciphertext)
  std::size_t out_sent = 0;
  Clock::time_point accepted_at;
  Clock::time_point last_heard;
  std::unordered_set<std::uint64_t> seen;  // seqs acknowledged OK_
  bool stopped = false;                    // sent STOP_
  bool open = true;
  std::unique_ptr<detail::TlsSession> tls;  // with tls_dir
  bool authenticated = true;                // false until the TLS handshake has succeeded
  bool tls_ended = false;                   // the peer sent close_notify
  std::uint64_t reserved = 0;               // bytes of max_buffered_bytes held for the message arriving
  bool waiting = false;                     // not read until max_buffered_bytes has room for its message
  // A record waiting for room in its rank's stream (answered BUSY_); reading pauses meanwhile.
  std::optional<std::pair<MessageId, Frame>> parked;

  Connection(int socket, std::string peer, WireOptions wire)
      : fd(socket),
        name(std::move(peer)),
        decoder(wire, "connection " + name),
        accepted_at(Clock::now()),
        last_heard(accepted_at) {}

  void ack(AckCode code, const MessageId& id) {
    const auto bytes = encode_ack({code, id});
    if (tls) {
      try {
        tls->write(bytes);
        tls->drain(out);
      } catch (const Error&) {  // the session has failed: the next read reports it and closes the connection
      }
    } else {
      out.insert(out.end(), bytes.begin(), bytes.end());
    }
  }
};

}  // namespace

struct Server::Impl {
  ServerOptions options;
  std::unique_ptr<RunnerRegistry> own_registry;
  std::unique_ptr<Standards> own_standards;
  const RunnerRegistry* registry = nullptr;
  const Standards* standards = nullptr;
  Fd listener, wake_read, wake_write;
  Fd shared_lock;  // shared-directory mode: the flock on kSharedDirLock, held for the server's life
  std::unique_ptr<detail::TlsContext> tls;  // with tls_dir
  std::vector<std::byte> plain;             // decrypted bytes of the connection being read
  std::uint16_t bound_port = 0;
  bool ran = false;
  bool rank_failed = false;           // a rank's files could not be written: the run ends, run() rethrows
  std::uint64_t buffered_in_use = 0;  // the sum of every connection's `reserved`

  std::vector<std::unique_ptr<Connection>> connections;
  std::map<std::uint64_t, std::unique_ptr<RunUtStream>> streams;
  ServerSummary summary;

  void log(const std::string& line) const {
    if (options.log) options.log(line);
  }

  void check_limits() const {
    const std::uint64_t smallest = kMessageHeaderBytes + kCrcFieldBytes + kFrameOverhead;
    if (options.max_connections == 0)
      throw Error(ErrorKind::InvalidArgument, "must be at least 1", {}, "max_connections");
    if (options.max_connection_bytes < smallest)
      throw Error(ErrorKind::InvalidArgument,
                  "must be at least " + std::to_string(smallest) +
                      " (one message of the smallest frame), got " +
                      std::to_string(options.max_connection_bytes),
                  {}, "max_connection_bytes");
    if (options.max_buffered_bytes < options.max_connection_bytes)
      throw Error(ErrorKind::InvalidArgument,
                  "must be at least max_connection_bytes (" + std::to_string(options.max_connection_bytes) +
                      "), or a message one connection may send could never be read; got " +
                      std::to_string(options.max_buffered_bytes),
                  {}, "max_buffered_bytes");
  }

  void bind_and_listen() {
    check_limits();
    if (!options.shared_dir.empty()) {
      struct stat st {};
      if (::stat(options.shared_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw Error(ErrorKind::Io, "the shared directory does not exist or is not a directory",
                    options.shared_dir, "nfs_path");
      if (!options.tls_dir.empty())
        throw Error(ErrorKind::InvalidArgument,
                    "tls_path applies to TCP; the shared-directory mode (nfs_path) does not use it",
                    options.tls_dir, "tls_path");
      claim_shared_dir();
      refuse_stale_markers();
      make_wake_pipe();
      return;
    }
    // The certificates first: a bad file is reported before anything listens.
    if (!options.tls_dir.empty()) {
      tls = std::make_unique<detail::TlsContext>(options.tls_dir, detail::TlsRole::Server);
      log("mutual TLS: " + tls->description());
    }
    const std::string host = options.host.empty() ? "127.0.0.1" : options.host;
    sockaddr_storage addr{};
    socklen_t len = 0;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
    if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      v4->sin_port = htons(options.port);
      len = sizeof(sockaddr_in);
    } else if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(options.port);
      len = sizeof(sockaddr_in6);
    } else {
      throw Error(ErrorKind::InvalidArgument, "host must be an IPv4 or IPv6 address, got '" + host + "'", {},
                  "host");
    }
    const std::string where = host + " port " + std::to_string(options.port);
    listener = Fd(::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (listener.get() < 0) throw Error(ErrorKind::Io, "cannot create a socket: " + errno_text(), where);
    const int one = 1;
    ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0)
      throw Error(ErrorKind::Io, "cannot bind: " + errno_text(), where);
    if (::listen(listener.get(), 64) != 0)
      throw Error(ErrorKind::Io, "cannot listen: " + errno_text(), where);
    set_nonblocking(listener.get());
    sockaddr_storage bound{};
    socklen_t blen = sizeof bound;
    ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&bound), &blen);
    bound_port = ntohs(bound.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                                  : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
    make_wake_pipe();
  }

  // Two servers polling one directory would each take part of every rank's records and check them twice or
  // not at all, and neither would see all of a rank. The directory belongs to one server at a time: an
  // exclusive flock on a hidden file inside it (on NFS, Linux turns flock into an NFS lock, so servers on
  // other hosts are excluded too). The file is left in place: removing it would let a server that opened
  // the old file and one that creates a new one both hold "the" lock.
  void claim_shared_dir() {
    const std::string path = options.shared_dir + "/" + std::string(detail::kSharedDirLock);
    shared_lock = Fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640));
    if (shared_lock.get() < 0)
      throw Error(ErrorKind::Io, "cannot create the server's lock file: " + errno_text(), path, "nfs_path");
    if (::flock(shared_lock.get(), LOCK_EX | LOCK_NB) == 0) return;
    if (errno == EWOULDBLOCK)
      throw Error(ErrorKind::Io,
                  "another probe run_ut server is watching this shared directory (it holds " +
                      std::string(detail::kSharedDirLock) +
                      "); one directory serves one server at a time: give this one another nfs_path",
                  options.shared_dir, "nfs_path");
    throw Error(ErrorKind::Io, "cannot lock the server's lock file: " + errno_text(), path, "nfs_path");
  }

  // A client writes end_{rank} after its rank's last record, and only this server removes records, so an end
  // marker without a record of its rank is left from an earlier run (whose server took the records but not
  // the marker, or died). Taken now, it would end that rank at once: a run of 0 rows that exits 0. Refused
  // rather than removed: the directory may be shared by mistake, and the user should see that.
  void refuse_stale_markers() {
    std::set<std::uint64_t> with_records;
    std::vector<detail::SharedDirName> ends;
    for (const std::string& name : detail::list_shared_dir(options.shared_dir)) {
      auto parsed = detail::parse_shared_dir_name(name);
      if (!parsed) continue;
      if (parsed->kind == detail::SharedDirName::Kind::Record) with_records.insert(parsed->rank);
      if (parsed->kind == detail::SharedDirName::Kind::End) ends.push_back(*parsed);
    }
    for (const auto& e : ends)
      if (!with_records.count(e.rank)) {
        const std::string rank = std::to_string(e.rank);
        throw Error(ErrorKind::InvalidArgument,
                    "end_" + rank + " is left from an earlier run (no record file of rank " + rank +
                        " is here, and a client writes end_" + rank +
                        " after its records): it would end rank " + rank +
                        " at once with no rows; remove it, after checking that no training process still "
                        "writes here",
                    options.shared_dir + "/end_" + rank, "nfs_path");
      }
  }

  void make_wake_pipe() {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC) != 0)
      throw Error(ErrorKind::Io, "cannot create the wake-up pipe: " + errno_text());
    wake_read = Fd(pipe_fds[0]);
    wake_write = Fd(pipe_fds[1]);
  }

  bool rank_wanted(std::uint64_t rank) const {
    return options.rank_list.empty() ||
           std::find(options.rank_list.begin(), options.rank_list.end(), rank) != options.rank_list.end();
  }

  RunUtStream& stream_of(std::uint64_t rank, const std::stop_token& stop) {
    auto it = streams.find(rank);
    if (it != streams.end()) return *it->second;
    RunUtStreamOptions o = options.stream;
    o.rank = rank;
    o.on_refused = [this, rank](const std::string& line) {
      log("rank " + std::to_string(rank) + ": " + line);
    };
    auto stream = std::make_unique<RunUtStream>(o, *registry, *standards, stop);
    log("rank " + std::to_string(rank) + ": writing " + stream->summary().run_ut.result_csv);
    return *streams.emplace(rank, std::move(stream)).first->second;
  }

  void close(Connection& c, const std::string& why) {
    if (!c.open) return;
    if (c.tls) {
      try {
        c.tls->shutdown();  // close_notify after a finished handshake
        c.tls->drain(c.out);
      } catch (const Error&) {  // the session is broken; the socket closes anyway
      }
    }
    flush_now(c);
    c.open = false;
    c.parked.reset();
    release(c);
    c.fd.reset();
    if (!c.stopped && c.authenticated) ++summary.lost;
    log("connection " + c.name + " closed: " + why);
  }

  // Sends what the socket takes now; false when the peer is gone.
  bool flush_now(Connection& c) {
    while (c.out_sent < c.out.size()) {
      const ssize_t n = ::send(c.fd.get(), c.out.data() + c.out_sent, c.out.size() - c.out_sent,
                               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        c.out_sent += static_cast<std::size_t>(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return true;
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        return false;
      }
    }
    c.out.clear();
    c.out_sent = 0;
    return true;
  }

  void accept_all() {
    for (;;) {
      sockaddr_storage peer{};
      socklen_t len = sizeof peer;
      const int fd =
          ::accept4(listener.get(), reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN, or an aborted connection: nothing to take now
      const std::string name = peer_name(peer);
      const auto open_count =
          std::count_if(connections.begin(), connections.end(), [](const auto& c) { return c->open; });
      if (static_cast<std::size_t>(open_count) >= options.max_connections) {
        ::close(fd);
        log("connection " + name + " refused: " + std::to_string(options.max_connections) +
            " connections are open (max_connections)");
        continue;
      }
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      WireOptions wire = options.wire;
      const std::uint64_t head = kMessageHeaderBytes + (wire.checksum ? kCrcFieldBytes : 0);
      wire.max_payload_bytes = std::min(
          {wire.max_payload_bytes, options.limits.max_frame_bytes, options.max_connection_bytes - head});
      auto c = std::make_unique<Connection>(fd, name, wire);
      if (tls) {
        try {
          c->tls = std::make_unique<detail::TlsSession>(*tls);
        } catch (const Error& e) {
          log("connection " + name + " refused: " + e.what());
          continue;  // c closes the socket
        }
        c->authenticated = false;  // counted once the handshake succeeds
        log("connection " + name + " accepted; TLS handshake");
      } else {
        ++summary.connections;
        log("connection " + name + " accepted");
      }
      connections.push_back(std::move(c));
    }
  }

  // Handles one message; false when the connection must be closed (the reason is logged).
  bool handle(Connection& c, Message&& m, const std::stop_token& stop) {
    if (!m.crc_ok) {
      ++summary.crc_errors;
      c.ack(AckCode::Error, m.id);
      return true;
    }
    if (m.is_stop()) {
      ++summary.stops;
      c.stopped = true;
      c.ack(AckCode::Over, m.id);
      return true;
    }
    ++summary.messages;
    if (c.seen.count(m.id.seq)) {
      ++summary.duplicates;
      c.ack(AckCode::Ok, m.id);
      return true;
    }
    const std::string source = "rank " + std::to_string(m.id.rank) + " step " + std::to_string(m.id.step) +
                               " seq " + std::to_string(m.id.seq) + " from " + c.name;
    Frame frame;
    try {
      frame = decode_frame(m.payload, options.limits, source);
    } catch (const Error& e) {
      close(c, std::string(e.what()));
      ++summary.closed_bad;
      return false;
    }
    if (!rank_wanted(m.id.rank)) {
      ++summary.other_ranks;
      c.seen.insert(m.id.seq);
      c.ack(AckCode::Ok, m.id);
      return true;
    }
    RunUtStream& stream = stream_of(m.id.rank, stop);
    if (stream.try_push(frame)) {
      c.seen.insert(m.id.seq);
      c.ack(AckCode::Ok, m.id);
    } else if (!stream.accepting()) {
      rank_failed = true;
      log("rank " + std::to_string(m.id.rank) + ": its stream takes no more records; ending the run");
      return false;
    } else {
      ++summary.busy;
      c.ack(AckCode::Busy, m.id);
      c.parked.emplace(m.id, std::move(frame));
    }
    return true;
  }

  // A connection's share of max_buffered_bytes goes back once its message has left the decoder and is not
  // parked (a parked record keeps it: its frame is still held here).
  void release(Connection& c) {
    buffered_in_use -= c.reserved;
    c.reserved = 0;
  }

  // How many bytes a connection may read now: up to the end of its message's header freely (a few dozen
  // bytes), then up to the end of the message once the message's whole size is reserved from
  // max_buffered_bytes. 0: leave the connection unread (its sender blocks in TCP) until others release room.
  std::size_t read_room(Connection& c) {
    const std::size_t buffered = c.decoder.buffered();
    const auto want = c.decoder.message_bytes();
    if (!want) return c.decoder.header_bytes() - buffered;
    if (*want > options.max_connection_bytes) return 0;  // next() refuses it; never reached after a drain
    if (c.reserved < *want) {
      if (buffered_in_use - c.reserved + *want > options.max_buffered_bytes) {
        if (!c.waiting) {
          c.waiting = true;
          ++summary.buffer_waits;
          log("connection " + c.name + ": not read until " + std::to_string(*want) +
              " bytes for its next message are free (max_buffered_bytes " +
              std::to_string(options.max_buffered_bytes) + ", " + std::to_string(buffered_in_use) +
              " in use)");
        }
        return 0;
      }
      buffered_in_use += *want - c.reserved;
      c.reserved = *want;
      if (c.waiting) {
        c.waiting = false;
        c.last_heard = Clock::now();  // the idle clock stood still while the server was not reading
      }
    }
    return *want > buffered ? static_cast<std::size_t>(*want - buffered) : 0;
  }

  // Decodes and handles what a connection has buffered, up to a record that has to wait.
  void drain_decoder(Connection& c, const std::stop_token& stop) {
    while (c.open && !c.parked) {
      std::optional<Message> m;
      try {
        m = c.decoder.next();
      } catch (const Error& e) {
        ++summary.closed_bad;
        close(c, std::string(e.what()));
        return;
      }
      if (!m) return;
      const bool handled = handle(c, std::move(*m), stop);
      if (!c.parked) release(c);
      if (!handled) return;
    }
  }

  void retry_parked(Connection& c, const std::stop_token& stop) {
    if (!c.open || !c.parked) return;
    RunUtStream& stream = stream_of(c.parked->first.rank, stop);
    if (!stream.try_push(c.parked->second)) {
      if (!stream.accepting()) rank_failed = true;
      return;
    }
    c.seen.insert(c.parked->first.seq);
    c.ack(AckCode::Ok, c.parked->first);
    c.parked.reset();
    release(c);
    drain_decoder(c, stop);
  }

  // TLS: ciphertext in, plaintext to the decoder, handshake and alerts out; false when the connection closed.
  bool feed_tls(Connection& c, std::span<const std::byte> cipher) {
    plain.clear();
    bool session_open = true;
    try {
      c.tls->feed(cipher);
      session_open = c.tls->read(plain);
    } catch (const Error& e) {
      try {
        c.tls->drain(c.out);  // the alert tells the peer why
      } catch (const Error&) {
      }
      if (!c.authenticated) {
        ++summary.tls_refused;
        close(c, std::string("TLS handshake failed: ") + e.message());
      } else {
        ++summary.closed_bad;
        close(c, std::string("TLS error: ") + e.message());
      }
      return false;
    }
    c.tls->drain(c.out);
    if (!c.authenticated && c.tls->handshake_done()) {
      c.authenticated = true;
      ++summary.connections;
      log("connection " + c.name + " authenticated: " + c.tls->description());
    }
    c.decoder.feed(plain);
    c.tls_ended = !session_open;  // closed by read_from once the messages before it are handled
    return true;
  }

  void read_from(Connection& c, short revents, const std::stop_token& stop) {
    std::byte buffer[64 * 1024];
    for (int rounds = 0; rounds < 32 && c.open && !c.parked; ++rounds) {
      const std::size_t room = read_room(c);
      if (room == 0) {
        if (revents & (POLLHUP | POLLERR)) close(c, "the connection failed while it waited for buffer room");
        return;
      }
      // TLS: ciphertext comes in records of up to 16 KiB, so the plaintext may run up to one record past the
      // reservation; plaintext TCP stops exactly at the end of the message.
      const std::size_t take = c.tls ? std::min(sizeof buffer, std::max<std::size_t>(room, 17 * 1024))
                                     : std::min(room, sizeof buffer);
      const ssize_t n = ::recv(c.fd.get(), buffer, take, 0);
      if (n > 0) {
        c.last_heard = Clock::now();
        const std::span<const std::byte> got(buffer, static_cast<std::size_t>(n));
        if (!c.tls) {
          c.decoder.feed(got);
        } else if (!feed_tls(c, got)) {
          return;
        }
        drain_decoder(c, stop);
        if (c.tls_ended && c.open && !c.parked) {
          close(c, c.stopped ? std::string("finished")
                             : std::string("the peer ended the TLS session before STOP_"));
          return;
        }
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n == 0) {
        const std::size_t left = c.decoder.buffered();
        if (!c.authenticated) ++summary.tls_refused;
        close(c, !c.authenticated ? std::string("the peer closed the connection during the TLS handshake")
                 : c.stopped      ? std::string("finished")
                 : left           ? "the peer closed the connection in the middle of a message (" +
                              std::to_string(left) + " bytes of it received)"
                        : std::string("the peer closed the connection before STOP_"));
      } else {
        close(c, "receive failed: " + errno_text());
      }
      return;
    }
  }

  bool done() const {
    if (summary.connections == 0) return false;
    // msprobe: a connection stops being active with its STOP_; KILL_ then goes to those still open.
    const bool any_active = std::any_of(connections.begin(), connections.end(),
                                        [](const auto& c) { return c->open && !c->stopped; });
    if (any_active) return false;
    return options.producers == 0 || summary.stops >= options.producers;
  }

  void kill_all() {
    // msprobe's end of run: KILL_ to every connection still open, then close.
    for (auto& c : connections) {
      if (!c->open) continue;
      if (c->authenticated) c->ack(AckCode::Kill, {kKillSeq, 0, 0});  // not to a peer mid-handshake
      // Bounded: a peer that does not read cannot hold the run.
      const auto until = Clock::now() + std::chrono::seconds(2);
      while (c->out_sent < c->out.size() && Clock::now() < until) {
        if (!flush_now(*c)) break;
        pollfd p{c->fd.get(), POLLOUT, 0};
        ::poll(&p, 1, 50);
      }
      const bool was_stopped = c->stopped;
      c->stopped = true;  // not counted as lost: the server ended it
      close(*c, was_stopped ? "finished" : "the run ended");
    }
  }

  // Shared-directory mode: one poll of the directory per round, records of a rank in seq order.
  void run_shared_dir(const std::stop_token& stop) {
    const std::string& dir = options.shared_dir;
    struct Producer {
      Clock::time_point last_seen;
      bool ended = false;
    };
    std::map<std::uint64_t, Producer> producers;
    auto finished = [&] {
      if (producers.empty()) return false;
      for (const auto& [rank, p] : producers)
        if (!p.ended) return false;
      return options.producers == 0 || summary.stops >= options.producers;
    };
    auto producer = [&](std::uint64_t rank, Clock::time_point now) -> Producer& {
      auto [it, fresh] = producers.try_emplace(rank, Producer{now});
      if (fresh) {
        ++summary.connections;
        log("rank " + std::to_string(rank) + " started writing to " + dir);
      }
      return it->second;
    };
    // Names that could not be removed once taken (a directory named like a record): refused once, then
    // ignored while they stay; otherwise every poll would take them again, and at once.
    std::set<std::string> stuck;
    auto take = [&](const std::string& path) {
      if (::unlink(path.c_str()) == 0 || errno == ENOENT) return true;
      const int err = errno;
      stuck.insert(path.substr(dir.size() + 1));
      log("cannot remove " + path + " (" + std::strerror(err) + "); ignoring it from now on");
      return false;
    };
    while (!stop.stop_requested() && !rank_failed && !finished()) {
      std::vector<std::pair<detail::SharedDirName, std::string>> starts, ends, records;
      std::set<std::string> still_stuck;
      for (std::string& name : detail::list_shared_dir(dir)) {
        if (stuck.count(name)) {
          still_stuck.insert(std::move(name));
          continue;
        }
        auto parsed = detail::parse_shared_dir_name(name);
        if (!parsed) continue;  // not ours (temporaries start with '.')
        auto& list = parsed->kind == detail::SharedDirName::Kind::Start ? starts
                     : parsed->kind == detail::SharedDirName::Kind::End ? ends
                                                                        : records;
        list.emplace_back(std::move(*parsed), dir + "/" + name);
      }
      stuck.swap(still_stuck);  // a name removed by someone else may be used again
      const auto now = Clock::now();
      for (const auto& [n, path] : starts) {
        producer(n.rank, now).last_seen = now;
        take(path);
      }
      std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
        return std::tie(a.first.rank, a.first.seq) < std::tie(b.first.rank, b.first.seq);
      });
      for (const auto& [n, path] : records) {
        if (stop.stop_requested() || rank_failed) break;
        producer(n.rank, now).last_seen = Clock::now();
        std::vector<std::byte> bytes;
        try {
          bytes = detail::read_shared_file(path, options.limits.max_frame_bytes);
        } catch (const Error& e) {
          ++summary.closed_bad;
          log(std::string("record file refused: ") + e.what());
          take(path);
          continue;
        }
        take(path);  // one that cannot be removed is checked this once, then ignored
        ++summary.messages;
        Frame frame;
        try {
          frame = decode_frame(bytes, options.limits, path);
        } catch (const Error& e) {
          ++summary.closed_bad;
          log(std::string("record file refused: ") + e.what());
          continue;
        }
        if (!rank_wanted(n.rank)) {
          ++summary.other_ranks;
          continue;
        }
        RunUtStream& stream = stream_of(n.rank, stop);
        if (!stream.push(std::move(frame)) && !stop.stop_requested()) {
          rank_failed = true;
          log("rank " + std::to_string(n.rank) + ": its stream takes no more records; ending the run");
        }
      }
      for (const auto& [n, path] : ends) {
        const bool pending = std::any_of(records.begin(), records.end(),
                                         [&, rank = n.rank](const auto& r) { return r.first.rank == rank; });
        if (pending) continue;  // taken on the next round, after the rank's last records
        Producer& p = producer(n.rank, now);
        if (!p.ended) {
          p.ended = true;
          ++summary.stops;
          log("rank " + std::to_string(n.rank) + " finished");
        }
        take(path);
      }
      for (auto& [rank, p] : producers)
        if (!p.ended && Clock::now() - p.last_seen >= options.idle_timeout) {
          p.ended = true;
          ++summary.closed_idle;
          ++summary.lost;
          log("rank " + std::to_string(rank) + ": no file for " +
              std::to_string(options.idle_timeout.count()) + " ms (idle timeout)");
        }
      if (records.empty()) {
        pollfd p{wake_read.get(), POLLIN, 0};
        ::poll(&p, 1, 20);
      }
    }
  }

  ServerSummary run(std::stop_token stop) {
    if (ran) throw Error(ErrorKind::InvalidArgument, "Server::run() may be called once");
    ran = true;
    std::stop_callback wake(stop, [this] {
      const char byte = 1;
      [[maybe_unused]] auto n = ::write(wake_write.get(), &byte, 1);
    });
    if (!options.shared_dir.empty()) {
      run_shared_dir(stop);
      summary.cancelled = stop.stop_requested();
      return finish_streams();
    }
    std::vector<pollfd> fds;
    std::vector<Connection*> polled;
    while (!stop.stop_requested() && !done() && !rank_failed) {
      for (auto& c : connections) retry_parked(*c, stop);
      fds.clear();
      polled.clear();
      fds.push_back({listener.get(), POLLIN, 0});
      fds.push_back({wake_read.get(), POLLIN, 0});
      bool parked = false;
      auto next_deadline = Clock::now() + std::chrono::milliseconds(500);
      for (auto& c : connections) {
        if (!c->open) continue;
        short events = 0;
        if (!c->parked && read_room(*c) > 0) events |= POLLIN;
        if (c->out_sent < c->out.size()) events |= POLLOUT;
        parked = parked || c->parked.has_value();
        if (!c->waiting) next_deadline = std::min(next_deadline, c->last_heard + options.idle_timeout);
        if (!c->authenticated)
          next_deadline = std::min(next_deadline, c->accepted_at + options.handshake_timeout);
        fds.push_back({c->fd.get(), events, 0});
        polled.push_back(c.get());
      }
      auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_deadline - Clock::now());
      if (parked) wait = std::min(wait, std::chrono::milliseconds(5));
      const int timeout = static_cast<int>(std::max<std::int64_t>(0, wait.count()));
      const int ready = ::poll(fds.data(), fds.size(), timeout);
      if (ready < 0 && errno != EINTR) throw Error(ErrorKind::Io, "poll failed: " + errno_text());
      if (ready > 0) {
        if (fds[1].revents & POLLIN) {
          char sink[64];
          while (::read(wake_read.get(), sink, sizeof sink) > 0) {
          }
        }
        for (std::size_t i = 0; i < polled.size(); ++i) {
          Connection& c = *polled[i];
          const short rev = fds[i + 2].revents;
          if (!c.open || rev == 0) continue;
          if (rev & (POLLIN | POLLHUP | POLLERR)) read_from(c, rev, stop);
          if (c.open && (rev & POLLOUT) && !flush_now(c)) close(c, "send failed: the peer is gone");
        }
        if (fds[0].revents & POLLIN) accept_all();
      }
      const auto now = Clock::now();
      for (auto& c : connections) {
        if (!c->open) continue;
        if (c->out_sent < c->out.size() && !flush_now(*c)) {
          close(*c, "send failed: the peer is gone");
          continue;
        }
        if (!c->authenticated && now - c->accepted_at >= options.handshake_timeout) {
          ++summary.tls_refused;
          close(*c, "TLS handshake not finished after " + std::to_string(options.handshake_timeout.count()) +
                        " ms (handshake timeout)");
          continue;
        }
        if (now - c->last_heard >= options.idle_timeout && !c->parked && !c->waiting) {
          ++summary.closed_idle;
          close(*c, "idle for " + std::to_string(options.idle_timeout.count()) + " ms (idle timeout)");
        }
      }
      connections.erase(
          std::remove_if(connections.begin(), connections.end(), [](const auto& c) { return !c->open; }),
          connections.end());
    }
    summary.cancelled = stop.stop_requested();
    kill_all();
    connections.clear();
    return finish_streams();
  }

  ServerSummary finish_streams() {
    // Every accepted record is checked and written (or, after a stop, dropped) before the run returns.
    std::exception_ptr failure;
    for (auto& [rank, stream] : streams) {
      try {
        summary.ranks[rank] = stream->finish();
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
    }
    if (failure) std::rethrow_exception(failure);
    return summary;
  }
};

Server::Server(ServerOptions options, const RunnerRegistry& registry, const Standards& standards)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->registry = &registry;
  impl_->standards = &standards;
  impl_->bind_and_listen();
}

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->own_registry = std::make_unique<RunnerRegistry>(RunnerRegistry::with_builtins());
  impl_->own_standards = std::make_unique<Standards>(Standards::builtin(options.stream.run_ut.profile));
  impl_->registry = impl_->own_registry.get();
  impl_->standards = impl_->own_standards.get();
  impl_->options = std::move(options);
  impl_->bind_and_listen();
}

Server::~Server() = default;

std::uint16_t Server::port() const { return impl_->bound_port; }

ServerSummary Server::run(std::stop_token stop) { return impl_->run(std::move(stop)); }

}  // namespace probe::online
