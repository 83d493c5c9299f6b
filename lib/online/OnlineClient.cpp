// The online pre-check client (probe/online_client.h). send() encodes on the caller's thread and queues;
// one I/O thread per client moves messages from the queue into a bounded window, writes them, reads the
// acknowledgements and resends, so the caller never waits on the network except for room in the queue.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "dump_writer/RecordJson.h"
#include "online/SharedDir.h"
#include "probe/error.h"
#include "probe/online_client.h"

namespace probe::online {
namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text(int e) { return std::strerror(e); }

struct Pending {
  MessageId id;
  std::vector<std::byte> bytes;  // the whole message as it goes on the wire
  int resends = 0;
};

}  // namespace

std::vector<std::byte> encode_api_frame(std::string_view api_name, const ApiCall& inputs,
                                        const std::vector<Value>& outputs, Framework framework,
                                        const FrameLimits& limits) {
  std::vector<Tensor> blobs;
  const std::string key = std::string(api_name) + ".forward";
  const std::string record = dump_writer::forward_record_json(key, inputs, outputs, framework, blobs);
  const char* fw = framework == Framework::MindSpore ? "mindspore" : "pytorch";
  const std::string header = std::string("{\"task\": \"tensor\", \"level\": \"L1\", \"framework\": \"") + fw +
                             "\", \"dump_data_dir\": \"frame\", \"data\": {" + record + "}}";
  return encode_frame(header, blobs, limits);
}

struct Client::Impl {
  ClientOptions options;
  std::unique_ptr<detail::SharedDirWriter> shared;  // shared-directory mode: no socket, no I/O thread
  std::string where;
  int fd = -1;
  int wake_read = -1, wake_write = -1;
  std::thread io;

  mutable std::mutex m;
  std::condition_variable cv;  // room in the queue, acknowledgements, state changes
  std::deque<Pending> queue;
  std::map<std::uint64_t, Pending> in_flight;
  std::uint64_t next_seq = 0;
  bool stop_queued = false, closing = false, finished = false;
  std::string failure;  // non-empty: the connection is lost
  ClientStats stats;

  // I/O thread only.
  std::vector<std::byte> out;
  std::size_t out_sent = 0;
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

  void wake() const {
    const char byte = 1;
    [[maybe_unused]] auto n = ::write(wake_write, &byte, 1);
  }

  // Under the lock: the connection is gone; everyone waiting learns it.
  void fail(const std::string& why) {
    if (failure.empty()) failure = why;
    cv.notify_all();
  }

  Error lost() const {
    return Error(ErrorKind::Io, "connection to the pre-check server lost: " + failure, where);
  }

  void enqueue(std::vector<std::byte> payload, std::uint64_t step, std::uint64_t rank, bool is_stop,
               std::string_view api = {}) {
    std::unique_lock lock(m);
    if (shared) {
      if (closing) throw Error(ErrorKind::InvalidArgument, "send() after close()", where);
      shared->record(rank, step, next_seq, api, payload);
      ++next_seq;
      ++stats.sent;
      ++stats.acked;
      return;
    }
    const auto deadline = Clock::now() + options.send_timeout;
    cv.wait_until(lock, deadline,
                  [&] { return !failure.empty() || closing || queue.size() < options.send_queue; });
    if (!failure.empty()) throw lost();
    if (closing && !is_stop) throw Error(ErrorKind::InvalidArgument, "send() after close()", where);
    if (queue.size() >= options.send_queue && !is_stop)
      throw Error(ErrorKind::Io,
                  "the send queue stayed full for " + std::to_string(options.send_timeout.count()) +
                      " ms (the server does not keep up or does not answer)",
                  where);
    Pending p;
    p.id = {next_seq++, rank, step};
    p.bytes = encode_message(p.id, payload, options.wire);
    queue.push_back(std::move(p));
    if (!is_stop) ++stats.sent;
    lock.unlock();
    wake();
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
        break;
    }
    cv.notify_all();
  }

  void run_io() {
    std::byte buffer[16 * 1024];
    for (;;) {
      {
        std::lock_guard lock(m);
        if (!failure.empty() || finished) return;
        if (stats.stopped || stats.killed) {
          finished = true;
          cv.notify_all();
          return;
        }
        const auto now = Clock::now();
        while (!queue.empty() && in_flight.size() < options.window && now >= busy_until) {
          Pending p = std::move(queue.front());
          queue.pop_front();
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
      pollfd fds[2] = {{fd, static_cast<short>(POLLIN | (out_sent < out.size() ? POLLOUT : 0)), 0},
                       {wake_read, POLLIN, 0}};
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
        if (n > 0) {
          acks.feed(std::span(buffer, static_cast<std::size_t>(n)));
          try {
            while (auto ack = acks.next()) handle(*ack);
          } catch (const Error& e) {
            std::lock_guard lock(m);
            fail(std::string("unreadable acknowledgement: ") + e.what());
            return;
          }
        } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
          const int e = errno;
          std::lock_guard lock(m);
          if (stats.stopped || stats.killed) {
            finished = true;
            cv.notify_all();
          } else {
            fail(n == 0 ? "the server closed the connection" : "receive failed: " + errno_text(e));
          }
          return;
        }
      }
      while (out_sent < out.size()) {
        const ssize_t n =
            ::send(fd, out.data() + out_sent, out.size() - out_sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
          out_sent += static_cast<std::size_t>(n);
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
          break;
        } else {
          const int e = errno;
          std::lock_guard lock(m);
          fail("send failed: " + errno_text(e));
          return;
        }
      }
      if (out_sent == out.size()) {
        out.clear();
        out_sent = 0;
      } else if (out_sent > (std::size_t{1} << 20)) {
        out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(out_sent));
        out_sent = 0;
      }
    }
  }
};

Client::Client(ClientOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.options = std::move(options);
  if (s.options.window == 0 || s.options.send_queue == 0)
    throw Error(ErrorKind::InvalidArgument, "window and send_queue must be at least 1");
  if (!s.options.shared_dir.empty()) {
    s.where = s.options.shared_dir;
    s.shared = std::make_unique<detail::SharedDirWriter>(s.options.shared_dir);
    return;
  }
  s.where = s.options.host + " port " + std::to_string(s.options.port);
  s.connect_socket();
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
  if (s.fd >= 0) ::close(s.fd);
  if (s.wake_read >= 0) ::close(s.wake_read);
  if (s.wake_write >= 0) ::close(s.wake_write);
}

void Client::send(std::string_view api_name, const ApiCall& inputs, const std::vector<Value>& outputs,
                  std::uint64_t step, std::uint64_t rank) {
  impl_->enqueue(encode_api_frame(api_name, inputs, outputs, impl_->options.framework, impl_->options.limits),
                 step, rank, false, api_name);
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
    s.closing = true;
    s.shared->end_all();
    s.finished = true;
    s.stats.stopped = true;
    return s.stats;
  }
  if (!s.failure.empty()) throw s.lost();
  s.closing = true;
  // Every API message acknowledged (or dropped) first, so STOP_ is the last thing the server reads.
  if (!s.cv.wait_until(lock, deadline, [&] {
        return !s.failure.empty() || s.stats.killed || (s.queue.empty() && s.in_flight.empty());
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
  return s.stats;
}

ClientStats Client::stats() const {
  std::lock_guard lock(impl_->m);
  return impl_->stats;
}

}  // namespace probe::online
