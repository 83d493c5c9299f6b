// A LibTorch training process that streams every aten op it runs to an online pre-check server
// (`probe run_ut --online`) instead of checking it in-process: a probe::online::Client connected to the
// server, and one probe::torch::CheckScope per step with CheckScopeOptions::client set to it. The server
// re-runs each op with its float64 bench and writes run_ut's CSVs while training goes on.
//
// The model is examples/libtorch_training's faulty MLP (linear -> GELU -> linear, squared-error loss, SGD;
// fp32): its GELU comes from an operator library whose CPU kernel returns x/2 instead of x*Phi(x) for
// negative inputs, streamed as "Aten.gelu.default.{k}" (bench_for), so the server flags exactly those rows.
//
// Usage: probe_example_libtorch_online --port N [--host 127.0.0.1] [--rank R] [--steps S]
// Prints each step's scope summary and the client's counts ("streamed N ops, acknowledged N"); exits 0 when
// every checked op was sent and acknowledged, 1 otherwise (a lost server included: it never hangs).
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "libtorch_common/faulty_gelu.h"
#include "probe/online_client.h"
#include "probe/torch.h"

namespace {

using probe_example::LibraryGelu;  // the faulty operator library, examples/libtorch_common/faulty_gelu.h

struct Mlp : torch::nn::Module {
  Mlp() {
    fc1 = register_module("fc1", torch::nn::Linear(16, 64));
    fc2 = register_module("fc2", torch::nn::Linear(64, 4));
  }
  torch::Tensor forward(const torch::Tensor& x) { return fc2->forward(LibraryGelu::apply(fc1->forward(x))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

}  // namespace

int main(int argc, char** argv) {
  probe::online::ClientOptions co;
  std::uint64_t rank = 0;
  int steps = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--port")
      co.port = static_cast<std::uint16_t>(std::stoi(value));
    else if (flag == "--host")
      co.host = value;
    else if (flag == "--rank")
      rank = std::stoull(value);
    else if (flag == "--steps")
      steps = std::stoi(value);
  }
  if (co.port == 0 || argc % 2 == 0) {
    std::fprintf(stderr, "usage: %s --port N [--host 127.0.0.1] [--rank R] [--steps S]\n", argv[0]);
    return 2;
  }
  // A training process must not wait long on a server that is gone: bound every wait.
  co.connect_timeout = std::chrono::seconds(10);
  co.send_timeout = std::chrono::seconds(30);
  co.idle_timeout = std::chrono::seconds(60);
  try {
    probe::online::Client client(co);
    torch::manual_seed(16);
    auto model = std::make_shared<Mlp>();
    torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.05));
    const torch::Tensor x = torch::randn({32, 16}), y = torch::randn({32, 4});

    probe::torch::CheckScopeOptions so;
    so.client = &client;  // no in-process checker: the server judges
    so.rank = rank;
    so.bench_for = {{"probe_example::gelu", "Aten.gelu.default"}};
    std::size_t checked = 0, sent = 0;
    bool lost = false;
    for (int step = 0; step < steps; ++step) {
      so.step = static_cast<std::uint64_t>(step);
      torch::Tensor loss;
      probe::torch::CheckScopeSummary s;
      {
        probe::torch::CheckScope scope(so);  // every aten op of this step goes to the server
        sgd.zero_grad();
        loss = (model->forward(x) - y).pow(2).mean();
        loss.backward();
        sgd.step();
        s = scope.summary();
      }
      std::printf("step %d loss %.6f: %s", step, loss.item<float>(), probe::torch::to_string(s).c_str());
      checked += s.checked;
      sent += s.sent;
      lost |= !s.client_error.empty();
    }
    const probe::online::ClientStats stats = client.close(std::chrono::seconds(120));
    std::printf("streamed %zu ops, acknowledged %zu, of %zu checked\n", stats.sent, stats.acked, checked);
    return !lost && sent == checked && stats.acked == sent ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
