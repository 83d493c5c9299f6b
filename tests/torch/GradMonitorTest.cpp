// probe::torch::GradMonitor. Rows: the step-0 gradients of make_grad_fixtures.py's MLP (torch 1.13) fed to
// grad_summary_row must give msprobe's own GradStatCsv rows for them (grads/expected_*.csv, and run a's
// grad_summary_0.csv at L2 with bounds [-1, 0, 1]). Training: a LibTorch MLP (the examples/libtorch_training
// shape) trained twice, the second run's inputs perturbed from step 3; grad_compare on the two monitored
// dumps names step 3.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>

#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "probe/csv.h"
#include "probe/error.h"
#include "probe/grad_compare.h"
#include "probe/tensor_file.h"
#include "probe/torch/grad_monitor.h"

namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(PROBE_TEST_DATA_DIR) + "/grad_probe/";
const std::vector<std::string> kParams{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};

using probe::testing::ScratchDir;
using probe::testing::slurp;

at::Tensor load_grad(const std::string& name) {
  const probe::Tensor t = probe::load_npy(kData + "grads/" + name + ".npy");
  EXPECT_EQ(t.dtype(), probe::DType::Float32);
  std::vector<std::int64_t> shape(t.shape().begin(), t.shape().end());
  return torch::from_blob(const_cast<std::byte*>(t.bytes()), shape, torch::kFloat).clone();
}

// The csv msprobe's write_csv makes of these rows: BOM, minimal quoting, CRLF.
std::string csv_text(const std::string& level, const std::vector<double>& bounds) {
  std::string text =
      "\xEF\xBB\xBF" + probe::csv_encode_row(probe::torch::grad_summary_header(level, bounds)) + "\r\n";
  for (const std::string& p : kParams)
    text += probe::csv_encode_row(probe::torch::grad_summary_row(p, level, load_grad(p), bounds)) + "\r\n";
  return text;
}

TEST(GradMonitor, RowsAreMsprobes) {
  EXPECT_EQ(csv_text("L0", {-1, 0, 1}), slurp(kData + "grads/expected_L0.csv"));
  EXPECT_EQ(csv_text("L1", {-1, 0, 1}), slurp(kData + "grads/expected_L1.csv"));
  EXPECT_EQ(csv_text("L2", {-0.05, 0, 0.05}), slurp(kData + "grads/expected_L2_fine.csv"));
  EXPECT_EQ(csv_text("L2", {-1, 0, 1}), slurp(kData + "a/rank0/grad_summary_0.csv"));
}

struct Mlp : torch::nn::Module {
  Mlp() {
    fc1 = register_module("fc1", torch::nn::Linear(16, 64));
    fc2 = register_module("fc2", torch::nn::Linear(64, 4));
  }
  torch::Tensor forward(const torch::Tensor& x) { return fc2->forward(torch::gelu(fc1->forward(x))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

// Trains `steps` SGD steps; the inputs of steps >= perturb_from get noise. Returns the seconds spent.
double train(probe::torch::GradMonitor* monitor, int steps, int perturb_from) {
  torch::manual_seed(16);
  auto model = std::make_shared<Mlp>();
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.5));
  if (monitor) monitor->monitor(*model);
  torch::Generator gen = at::detail::createCPUGenerator(7);
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) {
    torch::Tensor x = torch::randn({32, 16}, gen, torch::kFloat);
    const torch::Tensor y = torch::randn({32, 4}, gen, torch::kFloat);
    if (s >= perturb_from) x = x + 1.5 * torch::randn({32, 16}, gen, torch::kFloat);
    sgd.zero_grad();
    torch::mse_loss(model->forward(x), y).backward();
    if (monitor) monitor->before_optimizer_step();
    sgd.step();
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(GradMonitor, TrainingDivergenceFoundAtStepThree) {
  ScratchDir dir("grad-monitor");
  for (const char* run : {"a", "b"}) {
    probe::torch::GradMonitorConfig c;
    c.dump_path = (dir.path() / run).string();
    c.grad_level = "L2";
    probe::torch::GradMonitor monitor(c, 0);
    train(&monitor, 6, std::string(run) == "b" ? 3 : 1000);
    EXPECT_EQ(monitor.step(), 5);
  }
  // msprobe's layout: rank0/grad_summary_{step}.csv and rank0/step{step}/{param}.npy (bool, the param's
  // shape).
  for (int s = 0; s < 6; ++s) {
    const fs::path rank = dir.path() / "a" / "rank0";
    EXPECT_EQ(probe::csv_read_file((rank / ("grad_summary_" + std::to_string(s) + ".csv")).string()).size(),
              5u);
    const probe::Tensor d =
        probe::load_npy((rank / ("step" + std::to_string(s)) / "fc1.weight.npy").string());
    EXPECT_EQ(d.dtype(), probe::DType::Bool);
    EXPECT_EQ(d.shape(), (probe::Shape{64, 16}));
  }
  const probe::GradCompareResult r = probe::grad_compare(
      {(dir.path() / "a").string(), (dir.path() / "b").string(), (dir.path() / "out").string()});
  ASSERT_EQ(r.ranks.size(), 1u);
  ASSERT_TRUE(r.ranks[0].first_suspicious_step.has_value());
  EXPECT_EQ(*r.ranks[0].first_suspicious_step, 3);
  EXPECT_EQ(r.ranks[0].rows.back().values[2], 1.0);  // identical runs before the perturbation
  EXPECT_LT(r.ranks[0].rows.back().values[3], 0.97);
}

TEST(GradMonitor, StepRankAndParamSelection) {
  ScratchDir dir("grad-monitor");
  probe::torch::GradMonitorConfig c;
  c.dump_path = dir.path().string();
  c.grad_level = "L0";
  c.step = {1, 3};
  c.param_list = {"fc2.bias"};
  probe::torch::GradMonitor monitor(c, 2);
  train(&monitor, 5, 1000);
  const fs::path rank = dir.path() / "rank2";
  EXPECT_FALSE(fs::exists(rank / "grad_summary_0.csv"));
  EXPECT_FALSE(fs::exists(rank / "step1"));  // L0 writes no direction
  const auto rows = probe::csv_read_file((rank / "grad_summary_3.csv").string());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][0], "fc2.bias");
  EXPECT_TRUE(fs::exists(rank / "grad_summary_1.csv"));

  c.rank = {0};
  probe::torch::GradMonitor other_rank(c, 1);
  EXPECT_FALSE(other_rank.before_optimizer_step());
  c.bounds = {1, 0};
  EXPECT_THROW(probe::torch::GradMonitor(c, 0), probe::Error);
}

// Per-step cost on the examples/libtorch_training model (printed; measured, not asserted): the best of 5
// interleaved runs of 200 steps each, unmonitored and at each level, so that load from other processes
// inflates neither side alone.
TEST(GradMonitor, OverheadPerStep) {
  ScratchDir dir("grad-monitor");
  const int steps = 200;
  const std::vector<std::string> levels{"none", "L0", "L1", "L2"};
  std::vector<double> best(levels.size(), 1e30);
  for (int rep = 0; rep < 5; ++rep)
    for (std::size_t i = 0; i < levels.size(); ++i) {
      if (i == 0) {
        best[0] = std::min(best[0], train(nullptr, steps, 1000));
        continue;
      }
      probe::torch::GradMonitorConfig c;
      c.dump_path = (dir.path() / levels[i]).string();
      c.grad_level = levels[i];
      probe::torch::GradMonitor monitor(c, 0);
      best[i] = std::min(best[i], train(&monitor, steps, 1000));
    }
  for (std::size_t i = 1; i < levels.size(); ++i)
    std::cout << "GradMonitor " << levels[i] << ": " << 1e6 * best[i] / steps << " us/step vs "
              << 1e6 * best[0] / steps << " us/step unmonitored (+" << 1e6 * (best[i] - best[0]) / steps
              << " us)\n";
}

}  // namespace
