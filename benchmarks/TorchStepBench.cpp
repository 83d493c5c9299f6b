// probe::torch::CheckScope costs on a LibTorch training step (the MLP of examples/libtorch_training: linear
// -> gelu -> linear, squared-error loss, backward, SGD; fp32, batch 32, width W): the step's time on the
// training thread without a scope, with a count-only scope (the RecordFunction observer alone: boxing inputs
// and outputs, black-list lookups), and with an OnlineChecker behind it with 1 and 2 workers (the checker
// blocks when its queue of 64 ops is full, so the step time then includes waiting for the float64 bench: the
// sustained rate), or with a probe::online::Client streaming every op to a `probe run_ut` server in the same
// process on 127.0.0.1 whose run_ut has 1 and 2 worker threads (CheckScopeOptions::client; the client blocks
// when its queue, its window and the server's stream are full, so this too is the sustained rate, of the
// server's full run_ut check). Counters: `ops_per_s` = ops handed to the checker or client per second,
// `checked_share` = share of the computing ops (not black-listed) that probe can check.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "probe/dump.h"
#include "probe/dump_writer.h"
#include "probe/error_bound.h"
#include "probe/online_checker.h"
#include "probe/online_client.h"
#include "probe/online_server.h"
#include "probe/torch.h"

namespace fs = std::filesystem;

namespace {

struct Step {
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  std::unique_ptr<torch::optim::SGD> sgd;
  torch::Tensor x, y;
  explicit Step(std::int64_t width) {
    // One intra-op thread: on a shared 2-core machine LibTorch's pool would otherwise compete with the
    // checker's workers and the numbers would measure the scheduler.
    torch::set_num_threads(1);
    torch::manual_seed(16);
    fc1 = torch::nn::Linear(width, width);
    fc2 = torch::nn::Linear(width, 16);
    std::vector<torch::Tensor> params = fc1->parameters();
    for (const auto& p : fc2->parameters()) params.push_back(p);
    sgd = std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(0.01));
    x = torch::randn({32, width});
    y = torch::randn({32, 16});
  }
  void run() {
    sgd->zero_grad();
    torch::Tensor loss = (fc2->forward(torch::gelu(fc1->forward(x))) - y).pow(2).mean();
    loss.backward();
    sgd->step();
  }
};

// mode 0: no scope; 1: count-only scope; 2, 3: scope + checker with mode-1 workers; 4, 5: scope + client
// streaming to a server with mode-3 run_ut threads.
void BM_TrainStep(benchmark::State& state) {
  const std::int64_t width = state.range(0);
  const int mode = static_cast<int>(state.range(1));
  Step step(width);
  step.run();  // warm up LibTorch's allocator and kernels
  const fs::path dir = fs::temp_directory_path() / ("probe-torchstepbench-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::optional<probe::OnlineChecker> checker;
  probe::torch::CheckScopeOptions so;
  if (mode >= 2) {
    probe::OnlineCheckerOptions o;
    o.dump_path = dir.string();
    o.workers = mode - 1;
    checker.emplace(o);
    so.checker = &*checker;
  }
  std::optional<probe::online::Server> server;
  std::future<probe::online::ServerSummary> served;
  std::optional<probe::online::Client> client;
  if (mode >= 4) {
    probe::online::ServerOptions o;
    o.producers = 1;
    o.stream.run_ut.out_dir = (dir / "server").string();
    o.stream.run_ut.threads = mode - 3;
    server.emplace(o);
    served = std::async(std::launch::async, [&server] { return server->run(); });
    probe::online::ClientOptions co;
    co.port = server->port();
    client.emplace(co);
    so.client = &*client;
  }
  std::optional<probe::torch::CheckScope> scope;
  if (mode >= 1) scope.emplace(so);
  for (auto _ : state) step.run();
  if (scope) {
    const auto s = scope->summary();
    const double computing =
        static_cast<double>(s.checked + s.decomposed + s.unsupported + s.not_convertible);
    state.counters["ops_per_s"] =
        benchmark::Counter(static_cast<double>(s.checked), benchmark::Counter::kIsRate);
    state.counters["checked_share"] =
        computing > 0 ? static_cast<double>(s.checked + s.decomposed) / computing : 0;
    scope.reset();
  }
  if (checker) {
    checker->flush();
    if (checker->summary().failed != 0)
      state.SkipWithError("a checked op failed: the benchmark model must be clean");
    checker.reset();
  }
  if (client) {
    client->close();
    const probe::online::ServerSummary served_summary = served.get();
    const auto rank = served_summary.ranks.find(0);
    if (rank == served_summary.ranks.end() || rank->second.run_ut.error != 0)
      state.SkipWithError("the server flagged an op: the benchmark model must be clean");
  }
  fs::remove_all(dir);
}
BENCHMARK(BM_TrainStep)
    ->ArgNames({"width", "mode"})
    ->ArgsProduct({{64, 512}, {0, 1, 2, 3, 4, 5}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// ---- a transformer block: checking while training at its cost floor ----
//
// One pre-norm transformer block in fp32 (batch 8 x 128 tokens, hidden 384, 6 heads, ffn 1536: LayerNorm,
// q/k/v/o projections, scaled dot-product attention by matmul + softmax, a GELU MLP, residuals), a
// squared-error loss, backward and an SGD step, one intra-op thread. The numbers it prints per step (the
// benchmark's time is one step):
//   BM_TransformerStep/mode:0      unchecked
//   BM_TransformerStep/mode:1      count-only scope
//   BM_TransformerStep/mode:2, 3   scope + in-process OnlineChecker with 1, 2 workers
//   BM_TransformerStep/mode:4, 5   the same with checker.flush() at the end of every step
//   BM_TransformerStep/mode:6      scope + Client streaming to a server in a child process pinned to CPU 1
//                                  (the training thread pinned to CPU 0, the client's I/O thread free),
//                                  encode_on_io_thread off: each record encoded on the training thread
//   BM_TransformerStep/mode:7      the same with ClientOptions::encode_on_io_thread (the default: the op's
//                                  tensors lent to the client, read and encoded on its I/O thread)
//   BM_TransformerStep/mode:8      mode 7 over mutual TLS (certificates made by the openssl command)
//   BM_TransformerFloor            what the float64 bench of every checked op must cost (see floor()).
// Modes run one after the other (not interleaved); `train_cpu_ms` is the training thread's CPU time per
// step, which excludes waiting (a full queue) and so is the scope's and the client's own cost on that
// thread; `process_cpu_ms` is the whole process's (workers included; flush each step for a fair share).
// BM_TransformerAB interleaves A (no scope) and B (a scope) step by step: its a_ms and b_ms are medians of
// interleaved steps on the same warm model.
struct Block {
  static constexpr std::int64_t kBatch = 8, kTokens = 128, kDim = 384, kFfn = 1536, kHeads = 6;
  torch::nn::LayerNorm ln1{torch::nn::LayerNormOptions({kDim})}, ln2{torch::nn::LayerNormOptions({kDim})};
  torch::nn::Linear q{kDim, kDim}, k{kDim, kDim}, v{kDim, kDim}, o{kDim, kDim}, up{kDim, kFfn},
      down{kFfn, kDim};
  std::unique_ptr<torch::optim::SGD> sgd;
  torch::Tensor x, target;

  Block() {
    torch::set_num_threads(1);
    torch::manual_seed(37);
    std::vector<torch::Tensor> params;
    for (torch::nn::Module* m : std::initializer_list<torch::nn::Module*>{
             ln1.get(), ln2.get(), q.get(), k.get(), v.get(), o.get(), up.get(), down.get()})
      for (const auto& p : m->parameters()) params.push_back(p);
    sgd = std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(1e-3));
    x = torch::randn({kBatch, kTokens, kDim});
    target = torch::randn({kBatch, kTokens, kDim});
  }
  torch::Tensor heads(const torch::Tensor& t) const {
    return t.view({kBatch, kTokens, kHeads, kDim / kHeads}).transpose(1, 2);
  }
  void run() {
    sgd->zero_grad();
    const torch::Tensor h = ln1->forward(x);
    const torch::Tensor scores = torch::matmul(heads(q->forward(h)), heads(k->forward(h)).transpose(-2, -1)) /
                                 std::sqrt(static_cast<double>(kDim / kHeads));
    const torch::Tensor att = torch::matmul(torch::softmax(scores, -1), heads(v->forward(h)))
                                  .transpose(1, 2)
                                  .reshape({kBatch, kTokens, kDim});
    torch::Tensor y = x + o->forward(att);
    y = y + down->forward(torch::gelu(up->forward(ln2->forward(y))));
    (y - target).pow(2).mean().backward();
    sgd->step();
  }
};

double thread_cpu_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The calling thread's context switches so far: voluntary (it slept, e.g. on a full queue) + involuntary.
std::pair<long, long> thread_switches() {
  rusage u{};
  ::getrusage(RUSAGE_THREAD, &u);
  return {u.ru_nvcsw, u.ru_nivcsw};
}

double process_cpu_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

fs::path scratch_dir(const char* what) {
  const fs::path dir = fs::temp_directory_path() /
                       (std::string("probe-torchstepbench-") + what + "-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

void pin_this_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu >= 0) {
    CPU_SET(cpu, &set);
  } else {
    for (int c = 0; c < CPU_SETSIZE; ++c) CPU_SET(c, &set);
  }
  ::sched_setaffinity(0, sizeof(set), &set);
}

// The child side of ChildServer: this executable re-executed with PROBE_TORCHSTEPBENCH_SERVE=<fd> serves
// one run on its own CPU and reports on fd, before main() (a fresh process: a forked copy of a process that
// has run checkers would inherit worker pools without their threads).
struct ServeReport {
  std::uint64_t messages = 0, errors = 0;
  double seconds = 0;
};
[[maybe_unused]] const bool kServedAsChild = [] {
  const char* fd_text = std::getenv("PROBE_TORCHSTEPBENCH_SERVE");
  if (fd_text == nullptr) return false;
  const int fd = std::atoi(fd_text);
  const char* out_dir = std::getenv("PROBE_TORCHSTEPBENCH_OUT");
  int rc = 0;
  try {
    probe::online::ServerOptions o;
    o.producers = 1;
    o.stream.run_ut.out_dir = out_dir ? out_dir : ".";
    o.stream.run_ut.threads = 1;
    if (const char* tls = std::getenv("PROBE_TORCHSTEPBENCH_TLS")) o.tls_dir = tls;
    probe::online::Server server(o);
    const std::uint16_t p = server.port();
    if (::write(fd, &p, sizeof(p)) != sizeof(p)) ::_exit(3);
    const auto t0 = std::chrono::steady_clock::now();
    const probe::online::ServerSummary s = server.run();
    ServeReport r;
    r.seconds = seconds_since(t0);
    r.messages = s.messages;
    const auto rank = s.ranks.find(0);
    r.errors = rank == s.ranks.end() ? 1 : rank->second.run_ut.error;
    if (::write(fd, &r, sizeof(r)) != sizeof(r)) rc = 3;
  } catch (...) {
    rc = 2;
  }
  ::_exit(rc);
}();

// A server on CPU 1 in a child process: its run_ut's work never runs on the training thread's core, so the
// parent's step time and CPU time are the client's cost (plus waiting when the server falls behind).
struct ChildServer {
  pid_t pid = -1;
  int from_child = -1;
  std::uint16_t port = 0;

  explicit ChildServer(const fs::path& out_dir, const std::string& tls_dir = {}) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      pin_this_thread(1);
      ::setenv("PROBE_TORCHSTEPBENCH_SERVE", std::to_string(fds[1]).c_str(), 1);
      ::setenv("PROBE_TORCHSTEPBENCH_OUT", out_dir.c_str(), 1);
      if (!tls_dir.empty()) ::setenv("PROBE_TORCHSTEPBENCH_TLS", tls_dir.c_str(), 1);
      ::execl("/proc/self/exe", "probe_torchstepbench", static_cast<char*>(nullptr));
      ::_exit(4);
    }
    ::close(fds[1]);
    from_child = fds[0];
    if (::read(from_child, &port, sizeof(port)) != sizeof(port)) throw std::runtime_error("no server port");
  }
  ServeReport wait() {
    ServeReport r;
    if (::read(from_child, &r, sizeof(r)) != sizeof(r)) r.errors = 1;
    ::close(from_child);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return r;
  }
};

// Mutual-TLS directories for a server and a client on 127.0.0.1 (tls_path's layout), made by the openssl
// command as README's "Mutual TLS" shows: dir/server and dir/client.
void make_tls_dirs(const fs::path& dir) {
  fs::create_directories(dir / "server");
  fs::create_directories(dir / "client");
  const std::string d = dir.string();
  const std::string req = "openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -noenc ";
  const std::string sign =
      "openssl x509 -req -CA " + d + "/ca.crt -CAkey " + d + "/ca.key -CAcreateserial -days 2 ";
  const std::string cmd =
      "set -e; cd " + d +
      "; openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -noenc " +
      "-keyout ca.key -out ca.crt -days 2 -subj /CN=bench-ca 2>/dev/null; " + req +
      "-keyout server/server.key -out server.csr -subj /CN=bench-server 2>/dev/null; " + sign +
      "-in server.csr -out server/server.crt -extfile <(printf "
      "'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage="
      "serverAuth') 2>/dev/null; " +
      req + "-keyout client/client.key -out client.csr -subj /CN=bench-client 2>/dev/null; " + sign +
      "-in client.csr -out client/client.crt -extfile <(printf 'extendedKeyUsage=clientAuth') 2>/dev/null; " +
      "cp ca.crt server/; cp ca.crt client/";
  const std::string shell = "bash -c \"" + cmd + "\"";
  if (std::system(shell.c_str()) != 0) throw std::runtime_error("openssl could not make the certificates");
}

void BM_TransformerStep(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(0));
  const fs::path dir = scratch_dir("block");
  const bool tls = mode == 8;
  if (tls) make_tls_dirs(dir / "tls");
  std::optional<ChildServer> server;
  if (mode >= 6) server.emplace(dir / "server", tls ? (dir / "tls" / "server").string() : std::string());
  Block block;
  block.run();  // warm up LibTorch's allocator and kernels
  std::optional<probe::OnlineChecker> checker;
  probe::torch::CheckScopeOptions so;
  if (mode >= 2 && mode <= 5) {
    probe::OnlineCheckerOptions o;
    o.dump_path = dir.string();
    o.workers = mode == 2 || mode == 4 ? 1 : 2;
    checker.emplace(o);
    so.checker = &*checker;
  }
  std::optional<probe::online::Client> client;
  if (server) {
    probe::online::ClientOptions co;
    co.port = server->port;
    co.encode_on_io_thread = mode >= 7;
    if (tls) co.tls_dir = (dir / "tls" / "client").string();
    // PROBE_BENCH_IO_CPU=1: the client's I/O thread (which inherits the creating thread's CPUs) on CPU 1
    // with the server, so that nothing of the client's but the scope runs on the training thread's core.
    const char* io_cpu = std::getenv("PROBE_BENCH_IO_CPU");
    if (io_cpu != nullptr) pin_this_thread(std::atoi(io_cpu));
    client.emplace(co);
    so.client = &*client;
    pin_this_thread(0);
  }
  const bool flush_each_step = mode == 4 || mode == 5;
  double cpu = 0, all_cpu = 0;
  std::size_t steps = 0;
  long sleeps = 0, preempted = 0;
  std::optional<probe::torch::CheckScope> scope;
  if (mode >= 1) scope.emplace(so);
  if (scope) block.run();  // one checked step before timing: the steady state (warm queues and buffers)
  for (auto _ : state) {
    const double c0 = thread_cpu_s(), p0 = process_cpu_s();
    const auto s0 = thread_switches();
    block.run();
    if (flush_each_step) checker->flush();
    cpu += thread_cpu_s() - c0;
    all_cpu += process_cpu_s() - p0;
    const auto s1 = thread_switches();
    sleeps += s1.first - s0.first;
    preempted += s1.second - s0.second;
    ++steps;
  }
  state.counters["train_cpu_ms"] = 1e3 * cpu / static_cast<double>(steps);
  // Every thread of this process (the checker's workers and OpenBLAS's threads included) per step: with
  // the training thread's share taken off, what checking costs in CPU, whatever the neighbours do.
  state.counters["process_cpu_ms"] = 1e3 * all_cpu / static_cast<double>(steps);
  // Per step: times the training thread slept (a full queue, a lock) and was preempted.
  state.counters["sleeps"] = static_cast<double>(sleeps) / static_cast<double>(steps);
  state.counters["preempted"] = static_cast<double>(preempted) / static_cast<double>(steps);
  if (scope) {
    const auto s = scope->summary();
    state.counters["checked_per_step"] = static_cast<double>(s.checked) / static_cast<double>(steps + 1);
    if (client) {
      state.counters["lent_per_step"] = static_cast<double>(s.lent) / static_cast<double>(steps + 1);
      state.counters["cow_per_step"] =
          static_cast<double>(s.copied_before_write) / static_cast<double>(steps + 1);
    }
    scope.reset();
  }
  if (checker) {
    checker->flush();
    if (checker->summary().failed != 0) state.SkipWithError("a checked op failed: the model must be clean");
    checker.reset();
  }
  if (client) {
    client->close(std::chrono::minutes(10));
    pin_this_thread(-1);
    const ServeReport r = server->wait();
    state.counters["server_ops_per_s"] = static_cast<double>(r.messages) / std::max(r.seconds, 1e-9);
    if (r.errors != 0) state.SkipWithError("the server flagged an op: the model must be clean");
  }
  fs::remove_all(dir);
}
BENCHMARK(BM_TransformerStep)
    ->ArgNames({"mode"})
    ->DenseRange(0, 5)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);
// Streaming: a step waits for a server that checks ~30 ops/s, so a fixed number of steps.
BENCHMARK(BM_TransformerStep)
    ->ArgNames({"mode"})
    ->DenseRange(6, 8)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(4);

// Interleaved A/B for streaming: every iteration runs one step without a scope (A) and one inside a fresh
// scope streaming every op through the client (B, a scope per step as a training loop has, so B includes
// the copies the scope takes at its end of what the client has not read yet), the training thread on CPU 0
// and the server in a child process on CPU 1. a_cpu_ms, b_cpu_ms: medians of the training thread's CPU time
// per step; both run while the client's I/O thread and the server work through earlier records, so the
// difference is what the scope and the client cost the training thread. variant 0: plaintext, 1: TLS.
// PROBE_BENCH_SEND_QUEUE=N sets ClientOptions::send_queue (default 20): a longer queue blocks the training
// thread less often but the scope's end then copies more of what the slower server has not read.
void BM_TransformerStreamAB(benchmark::State& state) {
  const bool tls = state.range(0) == 1;
  const fs::path dir = scratch_dir("stream-ab");
  if (tls) make_tls_dirs(dir / "tls");
  ChildServer server(dir / "server", tls ? (dir / "tls" / "server").string() : std::string());
  Block block;
  block.run();
  probe::online::ClientOptions co;
  co.port = server.port;
  if (tls) co.tls_dir = (dir / "tls" / "client").string();
  if (const char* q = std::getenv("PROBE_BENCH_SEND_QUEUE")) co.send_queue = std::stoul(q);
  const char* io_cpu = std::getenv("PROBE_BENCH_IO_CPU");
  if (io_cpu != nullptr) pin_this_thread(std::atoi(io_cpu));
  std::optional<probe::online::Client> client(std::in_place, co);
  pin_this_thread(0);
  probe::torch::CheckScopeOptions so;
  so.client = &*client;
  std::vector<double> a, b;
  std::size_t lent = 0, cow = 0, at_end = 0;
  double end_copy_s = 0;
  std::uint64_t step = 0;
  for (auto _ : state) {
    double c0 = thread_cpu_s();
    block.run();
    a.push_back(thread_cpu_s() - c0);
    c0 = thread_cpu_s();
    {
      so.step = step++;
      probe::torch::CheckScope scope(so);
      block.run();
      const double e0 = thread_cpu_s();
      at_end += scope.preserve_lent();
      end_copy_s += thread_cpu_s() - e0;
      const auto s = scope.summary();
      lent += s.lent;
      cow += s.copied_before_write;
    }
    b.push_back(thread_cpu_s() - c0);
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  const double n = static_cast<double>(std::max<std::size_t>(a.size(), 1));
  state.counters["a_cpu_ms"] = 1e3 * median(a);
  state.counters["b_cpu_ms"] = 1e3 * median(b);
  state.counters["b_over_a"] = median(b) / std::max(median(a), 1e-12);
  state.counters["lent_per_step"] = static_cast<double>(lent) / n;
  state.counters["cow_per_step"] = static_cast<double>(cow) / n;
  state.counters["copied_at_end_per_step"] = static_cast<double>(at_end) / n;
  state.counters["end_copy_cpu_ms"] = 1e3 * end_copy_s / n;
  client->close(std::chrono::minutes(10));
  client.reset();
  pin_this_thread(-1);
  const ServeReport r = server.wait();
  state.counters["server_ops_per_s"] = static_cast<double>(r.messages) / std::max(r.seconds, 1e-9);
  if (r.errors != 0) state.SkipWithError("the server flagged an op: the model must be clean");
  fs::remove_all(dir);
}
BENCHMARK(BM_TransformerStreamAB)
    ->ArgNames({"tls"})
    ->DenseRange(0, 1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(7);

// This machine's rates, best of 5 runs of about 0.1 s each (the floor is a lower bound: the best rate).
struct Rates {
  double gemm_flops_per_s = 0;            // float64 matmul [1024 x 384] x [384 x 1536] on one core
  double gemm_all_cores_flops_per_s = 0;  // the same through torch (OpenBLAS's threads on every core)
  double bytes_per_s = 0;                 // memcpy of 64 MiB: bytes read plus bytes written per second
};
using DgemmFn = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double,
                         double*, int);
// cblas_dgemm of OpenBLAS's single-threaded build (what the in-process checker's workers use), or nullptr.
DgemmFn serial_dgemm() {
  const char* path = PROBE_BENCH_OPENBLAS_SERIAL;
  void* lib = path[0] != '\0' ? ::dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND) : nullptr;
  return lib ? reinterpret_cast<DgemmFn>(::dlsym(lib, "cblas_dgemm")) : nullptr;
}
Rates measure_rates() {
  torch::set_num_threads(1);
  Rates r;
  constexpr int m = 1024, k = 384, n = 1536;
  const torch::Tensor a = torch::randn({m, k}, torch::kDouble), b = torch::randn({k, n}, torch::kDouble);
  torch::Tensor c = torch::mm(a, b);
  const DgemmFn dgemm = serial_dgemm();
  std::vector<char> src(std::size_t{64} << 20, 1), dst(src.size());
  std::memcpy(dst.data(), src.data(), src.size());
  auto rate = [](const auto& run, double per_run) {
    const auto t0 = std::chrono::steady_clock::now();
    int runs = 0;
    do {
      run(runs);
      ++runs;
    } while (seconds_since(t0) < 0.1);
    return per_run * runs / seconds_since(t0);
  };
  const double flops = 2.0 * m * k * n;
  for (int rep = 0; rep < 5; ++rep) {
    r.gemm_all_cores_flops_per_s =
        std::max(r.gemm_all_cores_flops_per_s, rate([&](int) { c = torch::mm(a, b); }, flops));
    if (dgemm)
      r.gemm_flops_per_s =
          std::max(r.gemm_flops_per_s, rate(
                                           [&](int) {
                                             dgemm(101, 111, 111, m, n, k, 1.0, a.data_ptr<double>(), k,
                                                   b.data_ptr<double>(), n, 0.0, c.data_ptr<double>(), n);
                                           },
                                           flops));
    r.bytes_per_s = std::max(
        r.bytes_per_s, rate([&](int i) { std::memcpy(dst.data(), src.data() + (i & 1), src.size() - 1); },
                            2.0 * static_cast<double>(src.size())));
  }
  if (!dgemm) r.gemm_flops_per_s = r.gemm_all_cores_flops_per_s;  // no serial build: the one rate there is
  benchmark::DoNotOptimize(c);
  benchmark::DoNotOptimize(dst.data());
  return r;
}

std::int64_t numel(const probe::TensorInfo& t) {
  std::int64_t n = 1;
  for (std::int64_t d : t.shape) n *= d;
  return n;
}

// The floor of in-process checking for one step, from the ops the scope checked (recorded through the
// scope into a statistics dump: their names, input and output shapes and dtypes):
//   bench: a GEMM op (mm, bmm, addmm, matmul, baddbmm, linear) costs 2 * numel(output) * K flops at the
//          float64 BLAS rate of one core (K: the last dimension of its first matrix operand; a checker worker
//          runs its GEMMs on its own core; `floor_all_cores_ms` uses every core's rate); any other op reads
//          its inputs and writes its outputs once in float64 (8 bytes an element) at the memory rate;
//   copy:  every op's inputs and outputs copied once at their own dtype (read + write) at the memory rate.
// The floor is bench + copy on one core; with a second core the bench may overlap the training thread.
// The checker's default rule (OnlineRule::ErrorBound, DECISIONS D14) also computes a magnitude for the ops
// whose family needs one (error_bound_support): for a GEMM the row and column norms of its inputs and their
// outer product (D14, D25: one read of the inputs, one write of the output in float64), for the others the
// same bench on the inputs' absolute values plus one copy of those inputs; `floor_error_bound_ms` adds that
// at the same rates.
void BM_TransformerFloor(benchmark::State& state) {
  const fs::path dir = scratch_dir("floor");
  Block block;
  block.run();
  std::string dump_json;
  {
    probe::DumpWriterOptions o;
    o.dump_path = dir.string();
    o.task = probe::DumpTask::Statistics;
    o.side_files = false;
    o.flush_every = 0;
    probe::DumpWriter writer(o);
    probe::torch::CheckScopeOptions so;
    so.dump = &writer;
    {
      const probe::torch::CheckScope scope(so);
      block.run();
    }
    dump_json = writer.dump_json_path();
    writer.close();
  }
  const Rates rates = measure_rates();
  const std::set<std::string> gemms = {"mm", "bmm", "addmm", "matmul", "baddbmm", "linear"};
  double bench_s = 0, copy_s = 0, flops = 0, magnitude_s = 0;
  std::size_t ops = 0, gemm_ops = 0, magnitude_ops = 0;
  const probe::Dump dump = probe::Dump::open(dump_json);
  for (const probe::DumpEntry& e : dump.entries()) {
    std::vector<const probe::TensorInfo*> in, out;
    if (e.inputs()) e.inputs()->collect_tensors(in);
    if (e.kwargs()) e.kwargs()->collect_tensors(in);
    if (e.outputs()) e.outputs()->collect_tensors(out);
    double elems = 0, bytes = 0, in_bytes = 0;
    for (const auto* ts : {&in, &out})
      for (const probe::TensorInfo* t : *ts) {
        elems += static_cast<double>(numel(*t));
        bytes += static_cast<double>(t->nbytes().value_or(0));
        if (ts == &in) in_bytes += static_cast<double>(t->nbytes().value_or(0));
      }
    const bool magnitude = probe::error_bound_support(e.name.prefix + "." + e.name.api).needs_magnitude;
    const double bench_before = bench_s;
    const std::string op = e.name.api.substr(0, e.name.api.find('.'));
    const bool add_first = op == "addmm" || op == "baddbmm";
    if (gemms.count(op) != 0 && !out.empty() && in.size() > (add_first ? 1u : 0u)) {
      const double f = 2.0 * static_cast<double>(numel(*out[0])) *
                       static_cast<double>(in[add_first ? 1 : 0]->shape.back());
      flops += f;
      bench_s += f / rates.gemm_flops_per_s;
      ++gemm_ops;
    } else {
      bench_s += 8.0 * elems / rates.bytes_per_s;
    }
    copy_s += 2.0 * bytes / rates.bytes_per_s;
    if (magnitude) {
      if (gemms.count(op) != 0 && !out.empty())  // row and column norms of the inputs, their outer product
        magnitude_s += (in_bytes + 8.0 * static_cast<double>(numel(*out[0]))) / rates.bytes_per_s;
      else  // the same bench again on |inputs|, which are copied once more
        magnitude_s += bench_s - bench_before + 2.0 * in_bytes / rates.bytes_per_s;
      ++magnitude_ops;
    }
    ++ops;
  }
  for (auto _ : state) benchmark::DoNotOptimize(ops);
  state.counters["checked_ops"] = static_cast<double>(ops);
  state.counters["gemm_ops"] = static_cast<double>(gemm_ops);
  state.counters["gflop_f64"] = flops / 1e9;
  state.counters["f64_gemm_gflops"] = rates.gemm_flops_per_s / 1e9;
  state.counters["f64_gemm_all_cores_gflops"] = rates.gemm_all_cores_flops_per_s / 1e9;
  state.counters["mem_gbytes_per_s"] = rates.bytes_per_s / 1e9;
  state.counters["floor_bench_ms"] = 1e3 * bench_s;
  state.counters["floor_copy_ms"] = 1e3 * copy_s;
  state.counters["floor_ms"] = 1e3 * (bench_s + copy_s);
  // The same with the GEMMs spread over every core (the machine's float64 BLAS rate).
  state.counters["floor_all_cores_ms"] =
      1e3 * (bench_s + copy_s - flops / rates.gemm_flops_per_s + flops / rates.gemm_all_cores_flops_per_s);
  state.counters["magnitude_ops"] = static_cast<double>(magnitude_ops);
  state.counters["floor_error_bound_ms"] = 1e3 * (bench_s + copy_s + magnitude_s);
  fs::remove_all(dir);
}
BENCHMARK(BM_TransformerFloor)->Iterations(1)->Unit(benchmark::kMillisecond);

// Interleaved A/B: every iteration runs one step without a scope (A) and one inside a fresh scope (B, as a
// training loop with a scope per step does). variant 0: a count-only scope; 1, 2, 3: the scope with an
// OnlineChecker (1 worker) checking 100%, 10%, 1% of the ops (CheckScopeOptions::share), flushed after the
// B step so all its work is charged to B.
void BM_TransformerAB(benchmark::State& state) {
  const int variant = static_cast<int>(state.range(0));
  const fs::path dir = scratch_dir("ab");
  Block block;
  block.run();
  std::optional<probe::OnlineChecker> checker;
  probe::torch::CheckScopeOptions so;
  if (variant >= 1) {
    probe::OnlineCheckerOptions o;
    o.dump_path = dir.string();
    checker.emplace(o);
    so.checker = &*checker;
    so.share = variant == 1 ? 1.0 : variant == 2 ? 0.1 : 0.01;
  }
  std::vector<double> a, b;
  std::uint64_t step = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    block.run();
    a.push_back(seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    {
      so.step = step++;
      const probe::torch::CheckScope scope(so);
      block.run();
    }
    if (checker) checker->flush();
    b.push_back(seconds_since(t0));
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  state.counters["a_ms"] = 1e3 * median(a);
  state.counters["b_ms"] = 1e3 * median(b);
  state.counters["b_over_a"] = median(b) / std::max(median(a), 1e-12);
  if (checker) {
    checker->flush();
    if (checker->summary().failed != 0) state.SkipWithError("a checked op failed: the model must be clean");
  }
  checker.reset();
  fs::remove_all(dir);
}
BENCHMARK(BM_TransformerAB)
    ->ArgNames({"variant"})
    ->DenseRange(0, 3)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3.0);

}  // namespace
