// The online pre-check client (probe/online_client.h). send() queues the call (by default with its tensors
// copied, or lent: LentStorage) and one I/O thread per client encodes each record when it moves from the
// queue into a bounded window, writes it, reads the acknowledgements and resends, so the caller never waits
// on the network except for room in the queue.
// With tls_dir the constructor runs the TLS handshake (online/Tls.h) and the I/O thread passes every byte
// through the session: messages are encrypted on their way to the socket, acknowledgements decrypted.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "dump_writer/RecordJson.h"
#include "online/SharedDir.h"
#include "online/Tls.h"
#include "probe/error.h"
#include "probe/online_client.h"

namespace probe::online {
namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text(int e) { return std::strerror(e); }

// A call whose encoding waits for the I/O thread (ClientOptions::encode_on_io_thread): its tensors are the
// caller's one copy.
struct DeferredCall {
  std::string api_name;
  ApiCall inputs;
  std::vector<Value> outputs;
};

struct Pending {
  MessageId id;
  std::vector<std::byte> bytes;  // the whole message as it goes on the wire
  int resends = 0;
  std::unique_ptr<DeferredCall> deferred;  // set: bytes are encoded by the I/O thread
};

// Buffers for the copies send() takes with encode_on_io_thread, reused once the I/O thread has encoded
// them: fresh memory for every copy would make the caller's thread clear new pages, which costs more than
// the copy itself.
class CopyPool : public std::enable_shared_from_this<CopyPool> {
 public:
  static constexpr std::size_t kMaxIdleBytes = std::size_t{256} << 20;

  std::shared_ptr<Storage> take(std::size_t size);
  void give(std::unique_ptr<std::byte[]> buffer, std::size_t capacity) {
    std::lock_guard lock(m_);
    if (idle_bytes_ + capacity > kMaxIdleBytes) return;  // freed
    idle_bytes_ += capacity;
    idle_.emplace(capacity, std::move(buffer));
  }

 private:
  std::mutex m_;
  std::multimap<std::size_t, std::unique_ptr<std::byte[]>> idle_;  // by capacity
  std::size_t idle_bytes_ = 0;
};

class PooledStorage final : public Storage {
 public:
  PooledStorage(std::shared_ptr<CopyPool> pool, std::unique_ptr<std::byte[]> buffer, std::size_t capacity,
                std::size_t size)
      : pool_(std::move(pool)), buffer_(std::move(buffer)), capacity_(capacity), size_(size) {}
  ~PooledStorage() override { pool_->give(std::move(buffer_), capacity_); }
  std::byte* data() noexcept override { return buffer_.get(); }
  std::size_t size() const noexcept override { return size_; }

 private:
  std::shared_ptr<CopyPool> pool_;
  std::unique_ptr<std::byte[]> buffer_;
  std::size_t capacity_, size_;
};

std::shared_ptr<Storage> CopyPool::take(std::size_t size) {
  std::unique_ptr<std::byte[]> buffer;
  std::size_t capacity = size;
  {
    std::lock_guard lock(m_);
    // The smallest idle buffer that fits and wastes at most half of itself.
    const auto it = idle_.lower_bound(size);
    if (it != idle_.end() && it->first <= 2 * size + 64) {
      capacity = it->first;
      buffer = std::move(it->second);
      idle_bytes_ -= capacity;
      idle_.erase(it);
    }
  }
  if (!buffer) buffer = std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(capacity, 1));
  return std::make_shared<PooledStorage>(shared_from_this(), std::move(buffer), capacity, size);
}

// `v` with every tensor copied into memory of its own (the caller may overwrite its tensors after send()),
// except tensors over lent memory, which the I/O thread reads in place (LentStorage).
Value owned_copy(const Value& v, CopyPool& pool) {
  if (v.is_tensor()) {
    const Tensor& t = v.tensor();
    if (dynamic_cast<const LentStorage*>(t.storage().get()) != nullptr) return v;
    const std::size_t n = static_cast<std::size_t>(t.nbytes());
    std::shared_ptr<Storage> storage = pool.take(n);
    if (n > 0) std::memcpy(storage->data(), t.bytes(), n);
    return Value(Tensor::from_storage(t.dtype(), t.shape(), std::move(storage)));
  }
  if (v.is_list()) {
    const auto& l = std::get<ValueList>(v.storage());
    std::vector<Value> items;
    items.reserve(l.items.size());
    for (const Value& e : l.items) items.push_back(owned_copy(e, pool));
    return Value(std::move(items), l.is_tuple);
  }
  return v;
}

// The distinct lent storages of a value (a storage may back several of a call's tensors).
void collect_lent(const Value& v, std::vector<LentStorage*>& out) {
  if (v.is_tensor()) {
    if (auto* lent = dynamic_cast<LentStorage*>(v.tensor().storage().get()))
      if (std::find(out.begin(), out.end(), lent) == out.end()) out.push_back(lent);
  } else if (v.is_list()) {
    for (const Value& e : std::get<ValueList>(v.storage()).items) collect_lent(e, out);
  }
}

// Reads a call's lent storages for as long as it lives: locked (so their owner's preserve() waits rather
// than letting the bytes change mid-read), and afterwards let go of.
class LentReading {
 public:
  explicit LentReading(const DeferredCall& c) {
    for (const Value& v : c.inputs.args) collect_lent(v, lent_);
    for (const auto& kv : c.inputs.kwargs) collect_lent(kv.second, lent_);
    for (const Value& v : c.outputs) collect_lent(v, lent_);
    // In address order: two clients reading records that share a storage never wait on each other in a cycle.
    std::sort(lent_.begin(), lent_.end());
    try {
      for (LentStorage* s : lent_) {
        const bool same = s->begin_read();  // locked either way
        ++locked_;
        if (!same) changed_ = true;
      }
    } catch (...) {  // no memory to gather a strided tensor: unlock what is locked
      for (std::size_t i = 0; i < locked_; ++i) lent_[i]->end_read();
      throw;
    }
  }
  ~LentReading() {
    for (std::size_t i = 0; i < locked_; ++i) lent_[i]->end_read();
  }
  LentReading(const LentReading&) = delete;
  LentReading& operator=(const LentReading&) = delete;
  bool changed() const { return changed_; }

 private:
  std::vector<LentStorage*> lent_;
  std::size_t locked_ = 0;
  bool changed_ = false;
};

}  // namespace

LentStorage::LentStorage(std::size_t size, const std::byte* contiguous) : size_(size), lent_(contiguous) {}

LentStorage::~LentStorage() = default;

std::byte* LentStorage::data() noexcept {
  // Writable only in the Storage interface's terms: nothing writes through a lent tensor.
  return copy_ ? copy_->data() : const_cast<std::byte*>(lent_);
}

bool LentStorage::preserve() {
  std::lock_guard lock(m_);
  if (settled_) return false;
  // Bytes that already changed are not worth keeping: the record is dropped when the client reads it.
  if (lent_unchanged())
    copy_ = copy_lent();
  else
    changed_ = true;
  settled_ = true;
  lent_ = nullptr;
  release_lent();
  return !changed_;
}

bool LentStorage::settled() const {
  std::lock_guard lock(m_);
  return settled_;
}

bool LentStorage::begin_read() {
  m_.lock();
  if (changed_) return false;
  if (copy_) return true;
  if (!lent_unchanged()) return false;
  if (lent_ == nullptr) {
    try {
      copy_ = copy_lent();
    } catch (...) {
      m_.unlock();
      throw;
    }
  }
  return true;
}

void LentStorage::end_read() noexcept {
  if (!settled_) {
    settled_ = true;
    release_lent();
  }
  lent_ = nullptr;
  m_.unlock();
}

std::vector<std::byte> encode_api_frame(std::string_view api_name, const ApiCall& inputs,
                                        const std::vector<Value>& outputs, Framework framework,
                                        const FrameLimits& limits, std::string_view run_id) {
  if (!run_id.empty() && !valid_run_id(run_id))
    throw Error(ErrorKind::InvalidArgument,
                "run_id is not 1 to " + std::to_string(kMaxRunIdBytes) + " characters of [A-Za-z0-9._:-]", {},
                "run_id", std::string(api_name));
  std::vector<Tensor> blobs;
  const std::string key = std::string(api_name) + ".forward";
  const std::string record = dump_writer::forward_record_json(key, inputs, outputs, framework, blobs);
  const char* fw = framework == Framework::MindSpore ? "mindspore" : "pytorch";
  const std::string run = run_id.empty() ? std::string() : "\"run_id\": \"" + std::string(run_id) + "\", ";
  const std::string header = "{" + run +
                             std::string("\"task\": \"tensor\", \"level\": \"L1\", \"framework\": \"") + fw +
                             "\", \"dump_data_dir\": \"frame\", \"data\": {" + record + "}}";
  return encode_frame(header, blobs, limits);
}

struct Client::Impl {
  ClientOptions options;
  std::unique_ptr<detail::SharedDirWriter> shared;  // shared-directory mode: no socket, no I/O thread
  std::unique_ptr<detail::TlsContext> tls_context;  // with tls_dir
  std::unique_ptr<detail::TlsSession> tls;
  std::string where;
  int fd = -1;
  int wake_read = -1, wake_write = -1;
  std::thread io;

  ~Impl() {
    if (fd >= 0) ::close(fd);
    if (wake_read >= 0) ::close(wake_read);
    if (wake_write >= 0) ::close(wake_write);
  }

  mutable std::mutex m;
  std::condition_variable cv;  // acknowledgements, state changes (close() waits on it)
  // send() waits on this one for room in a full queue: notified when the queue is down to half (so a caller
  // faster than the server sleeps once per send_queue/2 calls, not at every call) or the state changes.
  std::condition_variable room;
  std::deque<Pending> queue;
  std::map<std::uint64_t, Pending> in_flight;
  std::uint64_t next_seq = 0;
  bool stop_queued = false, closing = false, finished = false;
  std::string failure;  // non-empty: the connection is lost
  ClientStats stats;
  std::map<std::string, std::uint64_t, std::less<>> call_index;  // send_api's next k per API
  std::size_t encoding = 0;  // deferred calls being encoded by the I/O thread (in neither queue nor window)
  std::shared_ptr<CopyPool> copies = std::make_shared<CopyPool>();  // encode_on_io_thread's copies

  // I/O thread only (and the constructor's handshake before it starts).
  std::vector<std::byte> out;  // plaintext messages to send
  std::size_t out_sent = 0;
  std::vector<std::byte> net, plain;  // with TLS: ciphertext for the socket; decrypted acknowledgements
  std::size_t net_sent = 0;
  AckDecoder acks{"server"};
  Clock::time_point busy_until{}, last_ack = Clock::now();

  void connect_socket() {
    sockaddr_storage addr{};
    socklen_t len = 0;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
    if (::inet_pton(AF_INET, options.host.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      v4->sin_port = htons(options.port);
      len = sizeof(sockaddr_in);
    } else if (::inet_pton(AF_INET6, options.host.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(options.port);
      len = sizeof(sockaddr_in6);
    } else {
      throw Error(ErrorKind::InvalidArgument,
                  "host must be an IPv4 or IPv6 address, got '" + options.host + "'", {}, "host");
    }
    fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) throw Error(ErrorKind::Io, "cannot create a socket: " + errno_text(errno), where);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
      if (errno != EINPROGRESS) {
        const int e = errno;
        ::close(fd);
        fd = -1;
        throw Error(ErrorKind::Io, "cannot connect: " + errno_text(e), where);
      }
      pollfd p{fd, POLLOUT, 0};
      const int r = ::poll(&p, 1, static_cast<int>(options.connect_timeout.count()));
      int err = 0;
      socklen_t elen = sizeof err;
      if (r == 1) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
      if (r != 1 || err != 0) {
        ::close(fd);
        fd = -1;
        throw Error(ErrorKind::Io, r == 1 ? "cannot connect: " + errno_text(err) : "connect timed out",
                    where);
      }
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC) != 0) {
      ::close(fd);
      fd = -1;
      throw Error(ErrorKind::Io, "cannot create the wake-up pipe: " + errno_text(errno));
    }
    wake_read = pipe_fds[0];
    wake_write = pipe_fds[1];
  }

  // Constructor only: writes the pending ciphertext, waiting for the socket until `deadline`.
  void send_blocking(Clock::time_point deadline) {
    while (net_sent < net.size()) {
      const ssize_t n = ::send(fd, net.data() + net_sent, net.size() - net_sent, MSG_NOSIGNAL);
      if (n > 0) {
        net_sent += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        pollfd p{fd, POLLOUT, 0};
        if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) == 0)
          throw Error(ErrorKind::Io, "TLS handshake: the server takes no data (connect_timeout)", where);
        continue;
      }
      throw Error(ErrorKind::Io, "TLS handshake: send failed: " + errno_text(errno), where);
    }
    net.clear();
    net_sent = 0;
  }

  // Constructor only: the TLS handshake, up to the server's acceptance of this client's certificate, within
  // connect_timeout. A refusal (an alert, or the server closing) is an Error with OpenSSL's reason.
  void tls_handshake() {
    const auto deadline = Clock::now() + options.connect_timeout;
    auto refused = [&](const std::string& why) {
      return Error(ErrorKind::Io, "TLS handshake with the pre-check server failed: " + why, where);
    };
    std::byte buffer[16 * 1024];
    for (;;) {
      bool session_open = true;
      try {
        session_open = tls->read(plain);
        tls->drain(net);
      } catch (const Error& e) {
        try {  // the alert tells the server why, best effort
          tls->drain(net);
          [[maybe_unused]] auto n = ::send(fd, net.data(), net.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        } catch (const Error&) {
        }
        throw refused(e.message());
      }
      send_blocking(deadline);
      if (tls->established()) break;
      if (!session_open) throw refused("the server ended the TLS session");
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0)
        throw refused("no answer within " + std::to_string(options.connect_timeout.count()) +
                      " ms (connect_timeout)");
      pollfd p{fd, POLLIN, 0};
      const int r = ::poll(&p, 1, static_cast<int>(left.count()));
      if (r < 0 && errno != EINTR) throw refused("poll failed: " + errno_text(errno));
      if (r <= 0) continue;
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n > 0) {
        tls->feed(std::span(buffer, static_cast<std::size_t>(n)));
      } else if (n == 0) {
        throw refused(
            "the server closed the connection (a server without TLS, or one that refused this client without "
            "saying why)");
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        throw refused("receive failed: " + errno_text(errno));
      }
    }
    acks.feed(plain);  // nothing is expected before the first message, but nothing is lost either
    plain.clear();
  }

  // With TLS: the plaintext waiting in `out` is encrypted into `net`, which is what the socket takes.
  void seal() {
    if (!tls) return;
    if (out_sent < out.size()) tls->write(std::span(out).subspan(out_sent));
    out.clear();
    out_sent = 0;
    tls->drain(net);
  }

  // After OVER_/KILL_: close_notify, best effort (the server does not wait for it).
  void say_goodbye() {
    if (!tls) return;
    try {
      tls->shutdown();
      tls->drain(net);
    } catch (const Error&) {
      return;
    }
    if (net_sent < net.size()) {
      [[maybe_unused]] auto n =
          ::send(fd, net.data() + net_sent, net.size() - net_sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
  }

  void wake() const {
    const char byte = 1;
    [[maybe_unused]] auto n = ::write(wake_write, &byte, 1);
  }

  // Under the lock: the connection is gone; everyone waiting learns it.
  void fail(const std::string& why) {
    if (failure.empty()) failure = why;
    cv.notify_all();
    room.notify_all();
  }

  // The server ended the run (KILL_) while records were still queued or unacknowledged: they are lost.
  Error killed_error() const {
    const std::size_t unacked = stats.sent - stats.acked - stats.dropped;
    return Error(ErrorKind::Io,
                 "the pre-check server ended the run (KILL_) before acknowledging " +
                     std::to_string(unacked) + " of " + std::to_string(stats.sent) + " records" +
                     (closing ? std::string() : std::string(" (and further records cannot be sent)")),
                 where);
  }

  Error lost() const {
    return Error(ErrorKind::Io, "connection to the pre-check server lost: " + failure, where);
  }

  void enqueue(std::vector<std::byte> payload, std::uint64_t step, std::uint64_t rank, bool is_stop,
               std::string_view api = {}, std::unique_ptr<DeferredCall> deferred = nullptr) {
    std::unique_lock lock(m);
    if (shared) {
      if (closing) throw Error(ErrorKind::InvalidArgument, "send() after close()", where);
      shared->record(rank, step, next_seq, api, payload);
      ++next_seq;
      ++stats.sent;
      stats.acked = shared->taken();
      return;
    }
    const auto deadline = Clock::now() + options.send_timeout;
    if (queue.size() >= options.send_queue && !is_stop)
      room.wait_until(lock, deadline, [&] {
        return !failure.empty() || closing || stats.killed || queue.size() <= options.send_queue / 2;
      });
    if (!failure.empty()) throw lost();
    if (stats.killed && !is_stop) throw killed_error();
    if (closing && !is_stop) throw Error(ErrorKind::InvalidArgument, "send() after close()", where);
    if (queue.size() >= options.send_queue && !is_stop)
      throw Error(ErrorKind::Io,
                  "the send queue stayed full for " + std::to_string(options.send_timeout.count()) +
                      " ms (the server does not keep up or does not answer)",
                  where);
    Pending p;
    p.id = {next_seq++, rank, step};
    if (deferred)
      p.deferred = std::move(deferred);
    else
      p.bytes = encode_message(p.id, payload, options.wire);
    queue.push_back(std::move(p));
    if (!is_stop) ++stats.sent;
    // The I/O thread takes queued messages whenever the window has room and it is awake: a message behind
    // others, or one for a full window (an acknowledgement wakes it), needs no wake-up (a write() a call).
    const bool needs_wake = is_stop || (queue.size() == 1 && in_flight.size() < options.window);
    lock.unlock();
    if (needs_wake) wake();
  }

  void handle(const Ack& ack) {
    std::lock_guard lock(m);
    last_ack = Clock::now();
    switch (ack.code) {
      case AckCode::Ok:
        if (in_flight.erase(ack.id.seq)) ++stats.acked;
        break;
      case AckCode::Error: {
        auto it = in_flight.find(ack.id.seq);
        if (it == in_flight.end()) break;
        if (it->second.resends < options.max_resends) {
          ++it->second.resends;
          ++stats.resent;
          out.insert(out.end(), it->second.bytes.begin(), it->second.bytes.end());
        } else {
          ++stats.dropped;
          in_flight.erase(it);
        }
        break;
      }
      case AckCode::Busy:
        // The server keeps the message and answers OK_ once it has room: only new sends pause.
        ++stats.busy;
        busy_until = Clock::now() + options.busy_pause;
        break;
      case AckCode::Over:
        in_flight.erase(ack.id.seq);
        stats.stopped = true;
        break;
      case AckCode::Kill:
        stats.killed = true;
        room.notify_all();
        break;
    }
    cv.notify_all();
  }

  void run_io() {
    std::byte buffer[16 * 1024];
    for (;;) {
      bool done_now = false;
      {
        std::unique_lock lock(m);
        if (!failure.empty() || finished) return;
        if (stats.stopped || stats.killed) {
          finished = true;
          cv.notify_all();
          done_now = true;
        } else {
          const auto now = Clock::now();
          while (!queue.empty() && in_flight.size() < options.window && now >= busy_until) {
            Pending p = std::move(queue.front());
            queue.pop_front();
            if (queue.size() <= options.send_queue / 2) room.notify_all();
            if (p.deferred) {
              // Encoded here, unlocked: send() goes on queueing meanwhile; close() waits for `encoding`.
              ++encoding;
              lock.unlock();
              std::string error;
              bool changed = false;
              try {
                const DeferredCall& c = *p.deferred;
                const LentReading reading(c);
                changed = reading.changed();
                if (changed)
                  error =
                      c.api_name + ": memory lent to send() changed before the record was encoded (not sent)";
                else
                  p.bytes =
                      encode_message(p.id,
                                     encode_api_frame(c.api_name, c.inputs, c.outputs, options.framework,
                                                      options.limits, options.run_id),
                                     options.wire);
              } catch (const std::exception& e) {
                error = std::string(p.deferred->api_name) + ": " + e.what();
              }
              p.deferred.reset();
              lock.lock();
              --encoding;
              if (!error.empty()) {
                ++stats.dropped;
                if (changed) ++stats.changed;
                if (stats.drop_reason.empty()) stats.drop_reason = error;
                cv.notify_all();
                continue;
              }
            }
            out.insert(out.end(), p.bytes.begin(), p.bytes.end());
            if (in_flight.empty()) last_ack = now;  // the idle clock runs while something awaits an answer
            in_flight.emplace(p.id.seq, std::move(p));
            cv.notify_all();
          }
          if (!in_flight.empty() && now - last_ack >= options.idle_timeout) {
            fail("no acknowledgement for " + std::to_string(options.idle_timeout.count()) + " ms");
            return;
          }
        }
      }
      if (done_now) {
        say_goodbye();
        return;
      }
      const bool pending = out_sent < out.size() || net_sent < net.size();
      pollfd fds[2] = {{fd, static_cast<short>(POLLIN | (pending ? POLLOUT : 0)), 0}, {wake_read, POLLIN, 0}};
      const int r = ::poll(fds, 2, 20);
      if (r < 0 && errno != EINTR) {
        std::lock_guard lock(m);
        fail("poll failed: " + errno_text(errno));
        return;
      }
      if (fds[1].revents & POLLIN) {
        char sink[64];
        while (::read(wake_read, sink, sizeof sink) > 0) {
        }
      }
      if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        const int e = errno;
        bool ended = n == 0;  // the server closed the connection (or, with TLS, the session)
        if (n > 0) {
          std::span<const std::byte> got(buffer, static_cast<std::size_t>(n));
          if (tls) {
            plain.clear();
            try {
              tls->feed(got);
              ended = !tls->read(plain);
              tls->drain(net);
            } catch (const Error& err) {
              std::lock_guard lock(m);
              fail(std::string("TLS: ") + err.message());
              return;
            }
            got = plain;
          }
          acks.feed(got);
          try {
            while (auto ack = acks.next()) handle(*ack);
          } catch (const Error& err) {
            std::lock_guard lock(m);
            fail(std::string("unreadable acknowledgement: ") + err.message());
            return;
          }
        }
        if (ended || (n < 0 && e != EAGAIN && e != EWOULDBLOCK && e != EINTR)) {
          std::lock_guard lock(m);
          if (stats.stopped || stats.killed) {
            finished = true;
            cv.notify_all();
          } else {
            fail(ended ? "the server closed the connection" : "receive failed: " + errno_text(e));
          }
          return;
        }
      }
      try {
        seal();
      } catch (const Error& err) {
        std::lock_guard lock(m);
        fail(std::string("TLS: ") + err.message());
        return;
      }
      std::vector<std::byte>& wire = tls ? net : out;
      std::size_t& sent = tls ? net_sent : out_sent;
      while (sent < wire.size()) {
        const ssize_t n = ::send(fd, wire.data() + sent, wire.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
          sent += static_cast<std::size_t>(n);
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
          break;
        } else {
          const int e = errno;
          std::lock_guard lock(m);
          fail("send failed: " + errno_text(e));
          return;
        }
      }
      if (sent == wire.size()) {
        wire.clear();
        sent = 0;
      } else if (sent > (std::size_t{1} << 20)) {
        wire.erase(wire.begin(), wire.begin() + static_cast<std::ptrdiff_t>(sent));
        sent = 0;
      }
    }
  }
};

const std::string& process_run_id() {
  static const std::string id = [] {
    std::random_device device;
    std::string hex;
    for (int i = 0; i < 4; ++i) hex += fmt::format("{:08x}", device());
    return hex;
  }();
  return id;
}

Client::Client(ClientOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.options = std::move(options);
  if (s.options.run_id.empty()) s.options.run_id = process_run_id();
  if (!valid_run_id(s.options.run_id))
    throw Error(ErrorKind::InvalidArgument,
                "run_id is not 1 to " + std::to_string(kMaxRunIdBytes) + " characters of [A-Za-z0-9._:-]", {},
                "run_id");
  if (s.options.window == 0 || s.options.send_queue == 0)
    throw Error(ErrorKind::InvalidArgument, "window and send_queue must be at least 1");
  if (!s.options.shared_dir.empty()) {
    if (!s.options.tls_dir.empty())
      throw Error(ErrorKind::InvalidArgument,
                  "tls_path applies to TCP; the shared-directory mode (nfs_path) does not use it",
                  s.options.tls_dir, "tls_path");
    s.where = s.options.shared_dir;
    s.shared = std::make_unique<detail::SharedDirWriter>(s.options.shared_dir);
    return;
  }
  s.where = s.options.host + " port " + std::to_string(s.options.port);
  // The certificates first: a bad file is reported whether or not the server is up.
  if (!s.options.tls_dir.empty())
    s.tls_context = std::make_unique<detail::TlsContext>(s.options.tls_dir, detail::TlsRole::Client);
  s.connect_socket();
  if (s.tls_context) {
    s.tls = std::make_unique<detail::TlsSession>(*s.tls_context, s.options.host);
    s.tls_handshake();
  }
  s.io = std::thread([&s] { s.run_io(); });
}

Client::~Client() {
  try {
    close(std::chrono::seconds(5));
  } catch (...) {  // a destructor cannot report; close() does
  }
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.m);
    s.fail("client destroyed");
  }
  s.wake();
  if (s.io.joinable()) s.io.join();
}

void Client::send(std::string_view api_name, const ApiCall& inputs, const std::vector<Value>& outputs,
                  std::uint64_t step, std::uint64_t rank) {
  if (impl_->options.encode_on_io_thread && !impl_->shared) {
    auto call = std::make_unique<DeferredCall>();
    call->api_name = std::string(api_name);
    call->inputs.args.reserve(inputs.args.size());
    for (const Value& v : inputs.args) call->inputs.args.push_back(owned_copy(v, *impl_->copies));
    for (const auto& [name, v] : inputs.kwargs)
      call->inputs.kwargs.emplace_back(name, owned_copy(v, *impl_->copies));
    call->outputs.reserve(outputs.size());
    for (const Value& v : outputs) call->outputs.push_back(owned_copy(v, *impl_->copies));
    impl_->enqueue({}, step, rank, false, api_name, std::move(call));
    return;
  }
  std::vector<std::byte> frame;
  {
    DeferredCall view{std::string(), inputs, outputs};  // shares the tensors: only to find the lent ones
    const LentReading reading(view);
    if (reading.changed())
      throw Error(ErrorKind::InvalidArgument, "memory lent to send() changed before the record was encoded",
                  {}, {}, std::string(api_name));
    frame = encode_api_frame(api_name, inputs, outputs, impl_->options.framework, impl_->options.limits,
                             impl_->options.run_id);
  }
  impl_->enqueue(std::move(frame), step, rank, false, api_name);
}

std::string Client::send_api(std::string_view api, const ApiCall& inputs, const std::vector<Value>& outputs,
                             std::uint64_t step, std::uint64_t rank) {
  std::string name(api);
  {
    std::lock_guard lock(impl_->m);
    auto it = impl_->call_index.find(api);
    if (it == impl_->call_index.end()) it = impl_->call_index.emplace(name, 0).first;
    name += '.';  // not `"." + to_string()`: GCC 12 warns -Wrestrict on that (a false positive)
    name += std::to_string(it->second++);
  }
  send(name, inputs, outputs, step, rank);
  return name;
}

void Client::send_frame(std::vector<std::byte> frame, std::uint64_t step, std::uint64_t rank) {
  if (impl_->shared) {
    // The file name carries the API: taken from the frame itself (which is checked on the way).
    std::string api = decode_frame(frame, impl_->options.limits).entry().key;
    if (api.ends_with(".forward")) api.resize(api.size() - 8);
    impl_->enqueue(std::move(frame), step, rank, false, api);
    return;
  }
  impl_->enqueue(std::move(frame), step, rank, false);
}

ClientStats Client::close(std::chrono::milliseconds timeout) {
  Impl& s = *impl_;
  const auto deadline = Clock::now() + timeout;
  std::unique_lock lock(s.m);
  if (s.finished && s.stats.stopped) return s.stats;
  if (s.shared) {
    // Written is not taken: success means a server has taken (removed) every record file.
    if (!s.closing) {
      s.closing = true;
      s.shared->end_all();
    }
    if (!s.failure.empty()) throw Error(ErrorKind::Io, s.failure, s.where, "nfs_path");
    const bool all_taken = s.shared->wait_taken(deadline);
    s.stats.acked = s.shared->taken();
    if (!all_taken) {
      // Withdrawn, so a server started later does not check records this caller was told were lost, and
      // no end marker is left behind to end that server's run at once.
      s.stats.acked = s.shared->withdraw();
      s.failure = std::to_string(s.stats.sent - s.stats.acked) + " of " + std::to_string(s.stats.sent) +
                  " record files were not taken by a server within " + std::to_string(timeout.count()) +
                  " ms (is a probe run_ut server watching this nfs_path?); they were removed again";
      throw Error(ErrorKind::Io, s.failure, s.where, "nfs_path");
    }
    s.finished = true;
    s.stats.stopped = true;
    return s.stats;
  }
  if (!s.failure.empty()) throw s.lost();
  s.closing = true;
  s.room.notify_all();
  // Every API message acknowledged (or dropped) first, so STOP_ is the last thing the server reads.
  if (!s.cv.wait_until(lock, deadline, [&] {
        return !s.failure.empty() || s.stats.killed ||
               (s.queue.empty() && s.in_flight.empty() && s.encoding == 0);
      }))
    throw Error(ErrorKind::Io, "close: messages still unacknowledged when the time ran out", s.where);
  if (!s.failure.empty()) throw s.lost();
  if (!s.stop_queued && !s.stats.killed) {
    s.stop_queued = true;
    lock.unlock();
    s.enqueue(
        std::vector<std::byte>(reinterpret_cast<const std::byte*>(kStopPayload.data()),
                               reinterpret_cast<const std::byte*>(kStopPayload.data()) + kStopPayload.size()),
        0, 0, true);
    lock.lock();
  }
  if (!s.cv.wait_until(lock, deadline, [&] { return !s.failure.empty() || s.finished; }))
    throw Error(ErrorKind::Io, "close: no OVER_ from the server before the time ran out", s.where);
  if (!s.failure.empty()) throw s.lost();
  if (s.stats.killed && s.stats.acked + s.stats.dropped < s.stats.sent) throw s.killed_error();
  return s.stats;
}

const std::string& Client::run_id() const { return impl_->options.run_id; }

ClientStats Client::stats() const {
  std::lock_guard lock(impl_->m);
  return impl_->stats;
}

}  // namespace probe::online
