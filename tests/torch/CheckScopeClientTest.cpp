// probe::torch::CheckScope streaming to an online pre-check server (CheckScopeOptions::client), on real
// LibTorch and a real server on 127.0.0.1: two training steps of an MLP plus a faulty library op, streamed
// over TCP and through a shared directory, give the server the CSV rows that offline run_ut gives on the dump
// the same scopes wrote; a server killed mid-run, or one that never answers, lands in the scope's summary
// within the client's timeouts while the training code runs on. The tensors a scope lends to its client
// (read in place when the record is encoded) reach the server with the values they had at the op, whatever
// the training code writes to them afterwards; a tensor changed where no scope sees it is dropped, never
// sent; the memory lent stays within the client's send_queue.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "probe/dump_writer.h"
#include "probe/error.h"
#include "probe/online_client.h"
#include "probe/online_server.h"
#include "probe/run_ut.h"
#include "probe/torch.h"

extern char** environ;

namespace {

using namespace std::chrono_literals;
using probe::testing::ScratchDir;
using Clock = std::chrono::steady_clock;
constexpr const char* kTs = "20261127090000";

// GELU that returns x instead of x*Phi(x) for x < 0 (an error of 1.95 at x = -2: run_ut's error).
at::Tensor bad_gelu_cpu(const at::Tensor& x) {
  at::Tensor in = x.contiguous().to(at::kFloat);
  at::Tensor out = at::empty_like(in);
  const float* src = in.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (std::int64_t i = 0; i < in.numel(); ++i) {
    const float v = src[i];
    dst[i] = v >= 0 ? 0.5f * v * (1.0f + std::erf(v / std::sqrt(2.0f))) : v;
  }
  return out;
}

TORCH_LIBRARY(probe_client_test, m) { m.def("bad_gelu(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(probe_client_test, CPU, m) { m.impl("bad_gelu", bad_gelu_cpu); }

at::Tensor call_bad_gelu(const at::Tensor& x) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("probe_client_test::bad_gelu", "")
                             .typed<at::Tensor(const at::Tensor&)>();
  return op.call(x);
}

using probe::testing::slurp;

// A server on its own thread; finish() returns its summary.
struct Running {
  std::unique_ptr<probe::online::Server> server;
  std::stop_source stop;
  std::future<probe::online::ServerSummary> done;

  explicit Running(probe::online::ServerOptions o) {
    server = std::make_unique<probe::online::Server>(std::move(o));
    done = std::async(std::launch::async, [this] { return server->run(stop.get_token()); });
  }
  ~Running() {
    stop.request_stop();
    if (done.valid()) done.wait();
  }
  probe::online::ServerSummary finish() {
    if (done.wait_for(60s) != std::future_status::ready) {
      ADD_FAILURE() << "the server did not finish within 60 s";
      stop.request_stop();
    }
    return done.get();
  }
};

probe::online::ClientOptions client_options(std::uint16_t port) {
  probe::online::ClientOptions o;
  o.port = port;
  o.connect_timeout = 5s;
  o.send_timeout = 20s;
  o.idle_timeout = 20s;
  return o;
}

// A server for one producer writing run_ut's files under DIR/online with the tests' fixed timestamp.
probe::online::ServerOptions server_options(const ScratchDir& dir) {
  probe::online::ServerOptions so;
  so.producers = 1;
  so.stream.run_ut.out_dir = dir.file("online");
  so.stream.run_ut.timestamp = kTs;
  so.stream.run_ut.threads = 2;
  so.idle_timeout = 20s;
  return so;
}

// A tensor dump of rank 0 in DIR/dump, without the stack and construct files.
probe::DumpWriterOptions tensor_dump_options(const ScratchDir& dir) {
  probe::DumpWriterOptions d;
  d.dump_path = dir.file("dump");
  d.task = probe::DumpTask::Tensor;
  d.rank = 0;
  d.side_files = false;
  return d;
}

enum class Transport { Tcp, SharedDir };

class CheckScopeClient : public ::testing::TestWithParam<Transport> {};

TEST_P(CheckScopeClient, TwoStreamedStepsGiveTheRowsOfOfflineRunUtOnTheSameScopesDump) {
  ScratchDir dir("probe-torch-client");
  probe::online::ServerOptions so = server_options(dir);
  probe::online::ClientOptions co;
  if (GetParam() == Transport::SharedDir) {
    std::filesystem::create_directory(dir.file("nfs"));
    so.shared_dir = co.shared_dir = dir.file("nfs");
  }
  Running server(so);
  if (GetParam() == Transport::Tcp) co = client_options(server.server->port());
  probe::online::Client client(co);

  // One step directory: its keys count on across the steps, as the client's do.
  probe::DumpWriter dump(tensor_dump_options(dir));

  torch::manual_seed(0);
  torch::nn::Linear l1(16, 32), l2(32, 4);
  torch::optim::SGD sgd({l1->weight, l1->bias, l2->weight, l2->bias}, torch::optim::SGDOptions(0.05));
  const torch::Tensor x = torch::randn({8, 16}), y = torch::randn({8, 4});
  const torch::Tensor probe_in = torch::linspace(-3, 3, 64).reshape({8, 8});
  probe::torch::CheckScopeOptions o;
  o.dump = &dump;
  o.client = &client;
  o.bench_for = {{"probe_client_test::bad_gelu", "Aten.gelu.default"}};
  std::size_t sent = 0;
  for (std::uint64_t step = 0; step < 2; ++step) {
    o.step = step;
    probe::torch::CheckScope scope(o);
    sgd.zero_grad();
    torch::Tensor loss = (l2->forward(torch::gelu(l1->forward(x))) - y).pow(2).mean();
    loss.backward();
    sgd.step();
    torch::Tensor flagged = call_bad_gelu(probe_in);
    (void)flagged;
    const auto s = scope.summary();
    EXPECT_GT(s.checked, 10u) << probe::torch::to_string(s);
    EXPECT_EQ(s.sent, s.checked) << probe::torch::to_string(s);
    EXPECT_EQ(s.not_sent, 0u) << probe::torch::to_string(s);
    EXPECT_EQ(s.client_error, "");
    sent += s.sent;
  }
  dump.close();
  const auto stats = client.close(30s);
  EXPECT_EQ(stats.sent, sent);
  EXPECT_EQ(stats.acked, sent);
  const auto summary = server.finish();
  ASSERT_EQ(summary.ranks.count(0), 1u);
  const auto& got = summary.ranks.at(0);
  EXPECT_EQ(got.repeated, 0u) << "names repeated across steps are checked once only";

  probe::RunUtOptions ru;
  ru.api_info = dump.dump_json_path();
  ru.out_dir = dir.file("offline");
  ru.timestamp = kTs;
  ru.threads = 2;
  const probe::RunUtSummary want = probe::run_ut(ru);
  EXPECT_EQ(want.apis, sent);
  EXPECT_EQ(want.error, 2u) << "the library GELU, once per step: " << slurp(want.result_csv);
  EXPECT_EQ(want.skip, 0u) << slurp(want.result_csv);
  EXPECT_EQ(got.run_ut.apis, want.apis);
  EXPECT_EQ(slurp(got.run_ut.result_csv), slurp(want.result_csv));
  EXPECT_EQ(slurp(got.run_ut.details_csv), slurp(want.details_csv));
  const std::string rows = slurp(got.run_ut.result_csv);
  EXPECT_NE(rows.find("Aten.addmm.default.3,"), std::string::npos) << "step 2's second linear: " << rows;
}

INSTANTIATE_TEST_SUITE_P(Transports, CheckScopeClient,
                         ::testing::Values(Transport::Tcp, Transport::SharedDir),
                         [](const auto& info) { return info.param == Transport::Tcp ? "Tcp" : "SharedDir"; });

// Runs small ops under `scope` until its summary has a client error or `limit` passes; returns the ops run.
int train_until_client_error(const probe::torch::CheckScope& scope, std::chrono::seconds limit) {
  const torch::Tensor a = torch::linspace(-1, 1, 64).reshape({8, 8});
  const auto until = Clock::now() + limit;
  int ops = 0;
  while (scope.summary().client_error.empty() && Clock::now() < until) {
    torch::Tensor r = torch::mm(torch::exp(a), a);
    (void)r;
    ops += 2;
    std::this_thread::sleep_for(1ms);
  }
  return ops;
}

TEST(CheckScopeClientLoss, AServerKilledMidRunIsInTheSummaryAndTrainingGoesOn) {
  ScratchDir dir("probe-torch-client");
  const std::string log = dir.file("server.log");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  const std::vector<std::string> args = {PROBE_CLI_PATH, "run_ut",           "--online", "--port", "0",
                                         "-o",           dir.file("online"), "-n",       "1"};
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  const auto reap = [&] {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    pid = -1;
  };
  std::uint16_t port = 0;
  for (const auto until = Clock::now() + 20s; port == 0 && Clock::now() < until;
       std::this_thread::sleep_for(20ms)) {
    const std::string text = slurp(log);
    const auto at = text.find("listening on 127.0.0.1:");
    if (at != std::string::npos && text.find('\n', at) != std::string::npos)
      port = static_cast<std::uint16_t>(std::stoi(text.substr(at + 23)));
  }
  if (port == 0) reap();
  ASSERT_NE(port, 0) << slurp(log);

  probe::online::Client client(client_options(port));
  probe::torch::CheckScopeOptions o;
  o.client = &client;
  probe::torch::CheckScope scope(o);
  torch::Tensor e = torch::exp(torch::linspace(-1, 1, 16));
  (void)e;
  for (const auto until = Clock::now() + 20s; client.stats().acked < 1 && Clock::now() < until;)
    std::this_thread::sleep_for(10ms);
  ASSERT_EQ(client.stats().acked, 1u) << "the server took the first op";
  reap();

  const auto t0 = Clock::now();
  const int ops = train_until_client_error(scope, 20s);
  EXPECT_LT(Clock::now() - t0, 20s);
  const auto s = scope.summary();
  EXPECT_NE(s.client_error.find("lost"), std::string::npos) << probe::torch::to_string(s);
  EXPECT_EQ(s.sent + s.not_sent, s.checked);
  // The scope sends nothing more; the ops still run and are counted.
  torch::Tensor after = torch::exp(torch::linspace(-1, 1, 16));
  (void)after;
  const auto later = scope.summary();
  EXPECT_EQ(later.sent, s.sent);
  EXPECT_EQ(later.not_sent, s.not_sent + 1);
  EXPECT_EQ(later.checked, static_cast<std::size_t>(ops) + 2);
  EXPECT_NE(probe::torch::to_string(later).find("client error: "), std::string::npos);
  EXPECT_THROW(client.close(5s), probe::Error);
}

TEST(CheckScopeClientLoss, AServerThatNeverAnswersCostsOneSendTimeout) {
  // A listening socket nobody accepts from: the kernel completes the connection, nothing ever answers.
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t len = sizeof a;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  auto co = client_options(ntohs(a.sin_port));
  co.window = 2;
  co.send_queue = 2;
  co.send_timeout = 500ms;
  {
    probe::online::Client client(co);
    probe::torch::CheckScopeOptions o;
    o.client = &client;
    probe::torch::CheckScope scope(o);
    const auto t0 = Clock::now();
    const int ops = train_until_client_error(scope, 20s);
    const auto waited = Clock::now() - t0;
    const auto s = scope.summary();
    EXPECT_NE(s.client_error.find("queue stayed full"), std::string::npos) << probe::torch::to_string(s);
    EXPECT_EQ(s.sent, 4u) << "two in the window, two in the queue";
    EXPECT_EQ(s.checked, static_cast<std::size_t>(ops));
    EXPECT_GE(waited, 500ms);
    EXPECT_LT(waited, 10s);
    // Later ops are not offered to the client: no second wait.
    const auto t1 = Clock::now();
    for (int i = 0; i < 20; ++i) torch::exp(torch::linspace(-1, 1, 16));
    EXPECT_LT(Clock::now() - t1, 400ms);
    EXPECT_EQ(scope.summary().not_sent, s.not_sent + 20);
    // Closing the listener resets the connection it never accepted: close() reports, at once.
    ::close(listener);
    const auto t2 = Clock::now();
    EXPECT_THROW(client.close(5s), probe::Error);
    EXPECT_LT(Clock::now() - t2, 4s);
  }
}

// ---- tensors lent to the client ----

// A server listening but not yet running: the kernel completes the client's connection, the first record
// waits for its acknowledgement in a window of one, and every later record waits in the queue with its
// tensors lent (unread) until run() starts.
struct Paused {
  std::unique_ptr<probe::online::Server> server;
  std::future<probe::online::ServerSummary> done;
  explicit Paused(probe::online::ServerOptions o)
      : server(std::make_unique<probe::online::Server>(std::move(o))) {}
  void start() {
    done = std::async(std::launch::async, [this] { return server->run(); });
  }
  probe::online::ServerSummary finish() {
    if (done.wait_for(60s) != std::future_status::ready) ADD_FAILURE() << "the server did not finish in 60 s";
    return done.get();
  }
};

// relu_ on the first linear's output and the SGD step on the weights write, inside the scope, to memory
// that queued records still read: those tensors are copied first, so the server checks what each op saw.
// The evidence is the dump the same scope wrote, whose files torch's values went into at each op: offline
// run_ut on it gives the server's rows byte for byte, and every op passes. Were the records to read the
// memory after relu_, the first linear's output would be relu(h) (an error), and after the step its
// weights would not be those that produced its output.
TEST(CheckScopeLending, TheServerChecksTheValuesOpsSawNotLaterInPlaceWrites) {
  ScratchDir dir("probe-torch-lend");
  Paused server(server_options(dir));
  auto co = client_options(server.server->port());
  co.window = 1;
  co.send_queue = 4096;  // never full: nothing is read before the server runs
  probe::online::Client client(co);
  probe::DumpWriter dump(tensor_dump_options(dir));

  torch::manual_seed(3);
  torch::nn::Linear l1(16, 32), l2(32, 4);
  torch::optim::SGD sgd({l1->weight, l1->bias, l2->weight, l2->bias}, torch::optim::SGDOptions(0.5));
  const torch::Tensor x = torch::randn({8, 16}), y = torch::randn({8, 4});
  probe::torch::CheckScopeOptions o;
  o.dump = &dump;
  o.client = &client;
  o.step = 0;
  torch::Tensor h_at_linear, h_after, w_at_linear = l1->weight.detach().clone();
  {
    probe::torch::CheckScope scope(o);
    torch::Tensor first = torch::exp(x);  // its record takes the window; all later ones wait in the queue
    sgd.zero_grad();
    torch::Tensor h = l1->forward(x);
    h_at_linear = h.detach().clone();
    h.relu_();
    torch::Tensor loss = (l2->forward(h) - y).pow(2).mean();
    loss.backward();
    sgd.step();
    const auto s = scope.summary();
    EXPECT_EQ(s.sent, s.checked) << probe::torch::to_string(s);
    EXPECT_GT(s.lent, 10u) << probe::torch::to_string(s);
    // relu_'s input (the linear's output) and the four parameters the step writes.
    EXPECT_GE(s.copied_before_write, 5u) << probe::torch::to_string(s);
    h_after = h;
  }
  // Outside any scope: the scope's end copied what the queued records still read (else their version
  // counters moved, and they would be dropped).
  h_after.zero_();
  sgd.zero_grad();
  // The model did change where the records read: the test would see a stale read.
  ASSERT_FALSE(torch::equal(l1->weight.detach(), w_at_linear));
  ASSERT_GT((h_at_linear < 0).sum().item<std::int64_t>(), 0);
  dump.close();
  server.start();
  const auto stats = client.close(30s);
  EXPECT_EQ(stats.dropped, 0u) << stats.drop_reason;
  EXPECT_EQ(stats.acked, stats.sent);
  const auto summary = server.finish();
  ASSERT_EQ(summary.ranks.count(0), 1u);
  const auto& got = summary.ranks.at(0).run_ut;

  probe::RunUtOptions ru;
  ru.api_info = dump.dump_json_path();
  ru.out_dir = dir.file("offline");
  ru.timestamp = kTs;
  ru.threads = 2;
  const probe::RunUtSummary want = probe::run_ut(ru);
  EXPECT_EQ(want.apis, stats.sent);
  EXPECT_EQ(want.error, 0u) << slurp(want.result_csv);
  EXPECT_EQ(got.apis, want.apis);
  EXPECT_EQ(got.error, 0u) << slurp(got.result_csv);
  EXPECT_EQ(slurp(got.result_csv), slurp(want.result_csv));
  EXPECT_EQ(slurp(got.details_csv), slurp(want.details_csv));
}

// A tensor changed by an in-place op on another thread (no scope observes it) while its record waits:
// the version counter moved, so the record is dropped and counted, never sent with the new bytes, also
// when the scope's end copies what is still lent. The op before it arrives.
TEST(CheckScopeLending, ATensorChangedWhereNoScopeSeesItIsDroppedNotSent) {
  ScratchDir dir("probe-torch-lend");
  Paused server(server_options(dir));
  auto co = client_options(server.server->port());
  co.window = 1;
  co.send_queue = 64;
  probe::online::Client client(co);
  const torch::Tensor a = torch::linspace(-1, 1, 64).reshape({8, 8});
  probe::torch::CheckScopeOptions o;
  o.client = &client;
  o.step = 0;
  {
    probe::torch::CheckScope scope(o);
    torch::Tensor first = torch::exp(a);
    torch::Tensor second = torch::tanh(a);  // queued behind the unacknowledged first
    std::thread([&second] { second.add_(1.0); }).join();
    EXPECT_EQ(scope.summary().sent, 2u) << probe::torch::to_string(scope.summary());
  }
  server.start();
  const auto stats = client.close(30s);
  EXPECT_EQ(stats.sent, 2u);
  EXPECT_EQ(stats.changed, 1u);
  EXPECT_EQ(stats.dropped, 1u);
  EXPECT_EQ(stats.acked, 1u);
  EXPECT_NE(stats.drop_reason.find("Aten.tanh.default.0"), std::string::npos) << stats.drop_reason;
  EXPECT_NE(stats.drop_reason.find("changed"), std::string::npos) << stats.drop_reason;
  const auto summary = server.finish();
  ASSERT_EQ(summary.ranks.count(0), 1u);
  EXPECT_EQ(summary.ranks.at(0).run_ut.apis, 1u);
  EXPECT_EQ(summary.ranks.at(0).run_ut.pass, 1u);
}

// The memory lent is bounded by the client's send_queue: with a server that never reads, the torch storages
// of the ops' outputs stay alive only while their records are queued (at most send_queue of them; the
// first, in the window, was read and let go), and preserve_lent() lets the rest go too.
TEST(CheckScopeLending, LentMemoryIsBoundedByTheSendQueue) {
  ScratchDir dir("probe-torch-lend");
  Paused server(server_options(dir));
  auto co = client_options(server.server->port());
  co.window = 1;
  co.send_queue = 3;
  co.send_timeout = 300ms;
  probe::online::Client client(co);
  const torch::Tensor a = torch::linspace(-1, 1, 4096);
  std::vector<c10::weak_intrusive_ptr<c10::StorageImpl>> outputs;
  const auto alive = [&outputs] {
    return std::count_if(outputs.begin(), outputs.end(), [](const auto& w) { return !w.expired(); });
  };
  probe::torch::CheckScopeOptions o;
  o.client = &client;
  {
    probe::torch::CheckScope scope(o);
    for (int i = 0; i < 8; ++i) {
      const torch::Tensor out = torch::exp(a);
      outputs.push_back(out.storage().getWeakStorageImpl());
      if (i == 0) std::this_thread::sleep_for(100ms);  // the first record is read into the window
    }
    const auto s = scope.summary();
    EXPECT_NE(s.client_error.find("queue stayed full"), std::string::npos) << probe::torch::to_string(s);
    EXPECT_EQ(s.sent, 4u) << "one in the window, three in the queue";
    EXPECT_EQ(alive(), 3) << "the queued records' outputs only";
    EXPECT_EQ(scope.preserve_lent(), 3u * 2u) << "their inputs (one shared storage, a) and outputs";
    EXPECT_EQ(alive(), 0);
    EXPECT_EQ(scope.summary().copied_at_release, 6u);
  }
  server.start();
  const auto stats = client.close(30s);
  EXPECT_EQ(stats.acked, 4u);
  EXPECT_EQ(stats.changed, 0u);
  server.finish();
}

}  // namespace
