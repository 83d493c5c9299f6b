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
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <memory>
#include <optional>

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

}  // namespace
