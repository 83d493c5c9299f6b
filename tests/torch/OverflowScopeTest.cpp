// CheckScope's overflow mode on real LibTorch ops: float32 exp(100) is inf (e^100 = 2.69e43 > 3.40e38, the
// float32 maximum; torch 1.13's CPU exp has no float16 kernel), made from finite inputs; the op after it only
// carries the inf on. The scope must name exp, hand only exp to the checker and the dump, and its cost on a
// clean training step is measured.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>

#include "common/ScratchDir.h"
#include "probe/dump.h"
#include "probe/dump_writer.h"
#include "probe/online_checker.h"
#include "probe/torch.h"

namespace {

using probe::testing::ScratchDir;

TEST(OverflowScope, NamesTheOpThatMadeTheInf) {
  ScratchDir dir("probe-overflow-scope");
  probe::OnlineCheckerOptions co;
  co.dump_path = dir.path().string();
  co.timestamp = "20260101120000123";
  probe::OnlineChecker checker(co);
  probe::DumpWriterOptions d;
  d.dump_path = (dir.path() / "dump").string();
  d.rank = 0;
  probe::DumpWriter dump(d);
  probe::torch::CheckScopeOptions o;
  o.overflow_check = true;
  o.checker = &checker;
  o.dump = &dump;
  o.step = 7;
  const torch::Tensor x = torch::full({4}, 50.0, torch::kFloat);
  const torch::Tensor already_inf = torch::full({4}, INFINITY, torch::kFloat);
  probe::torch::CheckScopeSummary s;
  torch::Tensor z;
  {
    probe::torch::CheckScope scope(o);
    const torch::Tensor carried = already_inf - x;  // inf out of an inf input: not made here
    const torch::Tensor a = x + x;                  // 100: finite
    const torch::Tensor b = torch::exp(a);          // inf in float32: the first overflow
    z = b * a;                                      // inf from an inf input: carried, not made
    s = scope.summary();
  }
  EXPECT_TRUE(torch::isinf(z).all().item<bool>());
  ASSERT_TRUE(s.first_overflow.has_value()) << probe::torch::to_string(s);
  EXPECT_EQ(s.first_overflow->api, "Aten.exp.default");
  EXPECT_EQ(s.first_overflow->output, 0u);
  EXPECT_FALSE(s.first_overflow->backward);
  EXPECT_EQ(s.first_overflow->step, 7u);
  EXPECT_EQ(s.overflow_scanned, 4u) << probe::torch::to_string(s);
  EXPECT_EQ(s.checked, 1u);  // only exp went on to the checker and the dump
  checker.flush();
  EXPECT_EQ(checker.summary().calls, 1u);
  dump.close();
  const probe::Dump written = probe::Dump::open(dump.dump_json_path());
  ASSERT_EQ(written.entries().size(), 1u);
  EXPECT_EQ(written.entries()[0].key, "Aten.exp.default.0.forward");
}

TEST(OverflowScope, CleanOpsRecordNothing) {
  probe::torch::CheckScopeOptions o;
  o.overflow_check = true;
  const torch::Tensor x = torch::full({4}, 3.0, torch::kFloat);
  probe::torch::CheckScopeSummary s;
  {
    probe::torch::CheckScope scope(o);
    const torch::Tensor y = torch::exp(x) * x;
    s = scope.summary();
  }
  EXPECT_FALSE(s.first_overflow.has_value());
  EXPECT_EQ(s.overflow_scanned, 2u);
  EXPECT_EQ(s.checked, 0u);
}

struct Mlp : torch::nn::Module {
  Mlp() {
    fc1 = register_module("fc1", torch::nn::Linear(16, 64));
    fc2 = register_module("fc2", torch::nn::Linear(64, 4));
  }
  torch::Tensor forward(const torch::Tensor& x) { return fc2->forward(torch::gelu(fc1->forward(x))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

// scoped: 0 none, 1 a scope per step, 2 one scope for the whole run, 3 one scope that only counts (the
// adapter's floor: the dispatcher's callbacks with inputs and outputs, no scan).
double train(int scoped, int steps, std::int64_t batch) {
  torch::manual_seed(16);
  auto model = std::make_shared<Mlp>();
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.05));
  const torch::Tensor x = torch::randn({batch, 16}), y = torch::randn({batch, 4});
  probe::torch::CheckScopeOptions o;
  o.overflow_check = scoped != 3;
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<probe::torch::CheckScope> run_scope;
  if (scoped >= 2) run_scope.emplace(o);
  for (int s = 0; s < steps; ++s) {
    std::optional<probe::torch::CheckScope> scope;
    if (scoped == 1) scope.emplace(o);
    sgd.zero_grad();
    torch::mse_loss(model->forward(x), y).backward();
    sgd.step();
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Per-step cost of the overflow mode on the examples/libtorch_training model (printed, not asserted): best of
// 5 interleaved runs of 200 steps, with a scope per step (forward, backward, optimizer step) or one scope, at
// the example's batch of 32 and at 1024.
TEST(OverflowScope, OverheadPerStep) {
  const int steps = 200;
  for (const std::int64_t batch : {32, 1024}) {
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    for (int rep = 0; rep < 5; ++rep)
      for (int mode = 0; mode < 4; ++mode) best[mode] = std::min(best[mode], train(mode, steps, batch));
    const char* what[] = {"", "a scope per step", "one scope", "one counting scope (no scan)"};
    for (int mode = 1; mode < 4; ++mode)
      std::cout << "overflow mode, batch " << batch << ", " << what[mode] << ": " << 1e6 * best[mode] / steps
                << " us/step vs " << 1e6 * best[0] / steps << " us/step unchecked (+"
                << 100 * (best[mode] - best[0]) / best[0] << "%)\n";
  }
}

}  // namespace
