// Helpers of the online pre-check tests (OnlineServerTest.cpp, OnlineTlsTest.cpp): a server on its own
// thread, client options with bounded waits, a raw socket for speaking the protocol wrongly, a child process
// with its output, and the offline run_ut every online run is compared with.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <sstream>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "probe/online_client.h"
#include "probe/online_server.h"
#include "probe/run_ut.h"

extern char** environ;

namespace probe::online_test {

using namespace std::chrono_literals;
using probe::online::Ack;
using probe::online::AckDecoder;
using probe::online::ClientOptions;
using probe::online::Server;
using probe::online::ServerOptions;
using probe::online::ServerSummary;
using Clock = std::chrono::steady_clock;

inline const std::string kRunUt = std::string(PROBE_TEST_DATA_DIR) + "/run_ut/";
inline constexpr const char* kTs = "20261127050000";

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline probe::RunUtSummary offline(const std::string& dump_json, const std::string& out) {
  probe::RunUtOptions o;
  o.api_info = dump_json;
  o.out_dir = out;
  o.timestamp = kTs;
  o.threads = 2;
  return probe::run_ut(o);
}

inline ServerOptions server_options(const std::string& out, std::size_t producers) {
  ServerOptions o;
  o.port = 0;
  o.producers = producers;
  o.stream.run_ut.out_dir = out;
  o.stream.run_ut.timestamp = kTs;
  o.stream.run_ut.threads = 2;
  o.idle_timeout = 20s;  // bounds every test even if a client misbehaves
  return o;
}

// A server running on its own thread; the summary (or the exception) comes from the future.
struct Running {
  std::unique_ptr<Server> server;
  std::stop_source stop;
  std::future<ServerSummary> done;
  std::vector<std::string> log;
  std::mutex log_mutex;

  explicit Running(ServerOptions o) {
    o.log = [this](std::string_view line) {
      std::lock_guard lock(log_mutex);
      log.emplace_back(line);
    };
    server = std::make_unique<Server>(std::move(o));
    done = std::async(std::launch::async, [this] { return server->run(stop.get_token()); });
  }
  ~Running() {
    stop.request_stop();
    if (done.valid()) done.wait();
  }
  std::uint16_t port() const { return server->port(); }
  ServerSummary finish(std::chrono::seconds limit = 60s) {
    if (done.wait_for(limit) != std::future_status::ready) {
      ADD_FAILURE() << "server did not finish within " << limit.count() << " s";
      stop.request_stop();
    }
    return done.get();
  }
  std::string joined_log() {
    std::lock_guard lock(log_mutex);
    std::string s;
    for (const auto& l : log) s += l + "\n";
    return s;
  }
  // True once a log line contains `needle` (within `limit`).
  bool wait_for_log(const std::string& needle, std::chrono::milliseconds limit = 10s) {
    const auto until = Clock::now() + limit;
    while (joined_log().find(needle) == std::string::npos) {
      if (Clock::now() >= until) return false;
      std::this_thread::sleep_for(10ms);
    }
    return true;
  }
};

inline ClientOptions client_options(std::uint16_t port) {
  ClientOptions o;
  o.port = port;
  o.connect_timeout = 5s;
  o.send_timeout = 20s;
  o.idle_timeout = 20s;
  return o;
}

// A plain TCP connection to the server for speaking the protocol wrongly.
class RawSocket {
 public:
  explicit RawSocket(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << std::strerror(errno);
  }
  ~RawSocket() { close(); }
  int fd() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  void send(std::span<const std::byte> bytes) {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  }
  // The next acknowledgement, or nullopt when the server closed the connection or nothing came in `limit`.
  std::optional<Ack> ack(std::chrono::milliseconds limit = 10s) {
    const auto until = Clock::now() + limit;
    while (Clock::now() < until) {
      if (auto a = acks_.next()) return a;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      std::byte buf[256];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        closed_ = true;
        return std::nullopt;
      }
      acks_.feed(std::span(buf, static_cast<std::size_t>(n)));
    }
    return std::nullopt;
  }
  // True once the server has closed the connection (within `limit`), acknowledgements skipped.
  bool closed_by_server(std::chrono::milliseconds limit = 10s) {
    const auto until = Clock::now() + limit;
    while (!closed_ && Clock::now() < until)
      ack(until - Clock::now() > 0ms
              ? std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now())
              : 0ms);
    return closed_;
  }

 private:
  int fd_ = -1;
  bool closed_ = false;
  AckDecoder acks_;
};

struct Process {
  pid_t pid = -1;
  int out = -1;  // the child's stdout+stderr
  std::string text;

  explicit Process(const std::vector<std::string>& args) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);  // nothing waits for a terminal
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    // posix_spawnp: a path, or a command found on PATH (openssl).
    EXPECT_EQ(::posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    out = fds[0];
  }
  ~Process() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      wait_exit(5s);
    }
    if (out >= 0) ::close(out);
  }
  // Reads output until `needle` appears (true) or the time is up / the output ends (false).
  bool read_until(const std::string& needle, std::chrono::milliseconds limit) {
    const auto until = Clock::now() + limit;
    while (text.find(needle) == std::string::npos && Clock::now() < until) {
      pollfd p{out, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::read(out, buf, sizeof buf);
      if (n <= 0) return false;
      text.append(buf, static_cast<std::size_t>(n));
    }
    return text.find(needle) != std::string::npos;
  }
  // Exit code, or -1 (killed by a signal, or still running after `limit`).
  int wait_exit(std::chrono::milliseconds limit) {
    const auto until = Clock::now() + limit;
    for (;;) {
      int status = 0;
      const pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        pid = -1;
        read_until("\x01never", 200ms);  // drain what is left
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      if (Clock::now() >= until) return -1;
      std::this_thread::sleep_for(20ms);
    }
  }
  std::uint16_t listening_port() {
    if (!read_until("\n", 0ms) && !read_until("listening on", 20s)) return 0;
    read_until("\n", 5s);
    const auto at = text.find("listening on ");
    const auto colon = text.find(':', at);
    return static_cast<std::uint16_t>(std::stoi(text.substr(colon + 1)));
  }
};

}  // namespace probe::online_test
