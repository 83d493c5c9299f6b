// Sampling in probe::torch::CheckScope (DECISIONS D23) on real LibTorch ops: msprobe's step and api_list
// filters, one step in N, and a share of ops chosen by a seeded hash of (name, call index, step).
//
// Expected values come from the definition, not from probe's output: with share p, each of n calls is
// checked independently with probability p, so the count is Binomial(n, p) (for n = 4000, p = 0.1: mean 400,
// standard deviation 19; the tests accept 4.5 standard deviations). A rerun with the same seed on the same
// program makes the same choices, so two dumps of the chosen ops (statistics of the same tensors) are equal
// byte for byte; another seed chooses other ops.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "common/ScratchDir.h"
#include "probe/dump_writer.h"
#include "probe/error.h"
#include "probe/torch.h"

using probe::testing::ScratchDir;

namespace {

std::size_t count(const std::map<std::string, std::size_t>& m, const std::string& key) {
  const auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

// A two-layer MLP's training step (forward, backward, an SGD update), fp32, from a fixed seed.
struct Mlp {
  torch::nn::Linear l1{16, 32}, l2{32, 4};
  torch::Tensor x, y;
  Mlp() {
    torch::manual_seed(23);
    l1 = torch::nn::Linear(16, 32);
    l2 = torch::nn::Linear(32, 4);
    x = torch::randn({8, 16});
    y = torch::randn({8, 4});
  }
  void step() {
    torch::Tensor loss = (l2->forward(torch::gelu(l1->forward(x))) - y).pow(2).mean();
    loss.backward();
    torch::NoGradGuard no_grad;
    for (auto* l : {&l1, &l2})
      for (auto& p : (*l)->parameters()) p.sub_(p.grad(), 0.01);
  }
};

// The dump.json text of every op a scope with these sampling options checks over three steps of the MLP.
std::string sampled_dump(double share, std::uint64_t seed, const ScratchDir& dir, const std::string& name) {
  probe::DumpWriterOptions o;
  o.dump_path = (dir.path() / name).string();
  o.side_files = false;
  probe::DumpWriter writer(o);
  Mlp mlp;
  for (std::uint64_t step = 0; step < 3; ++step) {
    probe::torch::CheckScopeOptions so;
    so.dump = &writer;
    so.step = step;
    so.share = share;
    so.seed = seed;
    const probe::torch::CheckScope scope(so);
    mlp.step();
  }
  writer.close();
  std::ifstream in(writer.dump_json_path());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(CheckScopeSampling, ASeededShareChoosesTheSameOpsInARerun) {
  ScratchDir dir("probe-torch-sampling");
  const std::string first = sampled_dump(0.5, 7, dir, "a");
  const std::string again = sampled_dump(0.5, 7, dir, "b");
  const std::string other_seed = sampled_dump(0.5, 8, dir, "c");
  const std::string all = sampled_dump(1.0, 7, dir, "d");
  EXPECT_NE(first.find("\"Aten."), std::string::npos) << first;
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other_seed);
  EXPECT_LT(first.size(), all.size());
}

TEST(CheckScopeSampling, TheShareOfCheckedOpsIsBinomial) {
  const torch::Tensor a = torch::linspace(-1, 1, 4);
  for (const double share : {0.1, 0.5}) {
    probe::torch::CheckScopeOptions o;  // count-only
    o.share = share;
    o.seed = 11;
    o.step = 2;
    const probe::torch::CheckScope scope(o);
    constexpr int kCalls = 4000;
    for (int i = 0; i < kCalls; ++i) torch::exp(a);
    const auto s = scope.summary();
    const double mean = kCalls * share, sd = std::sqrt(kCalls * share * (1 - share));
    EXPECT_EQ(s.checked + s.not_sampled, static_cast<std::size_t>(kCalls)) << probe::torch::to_string(s);
    EXPECT_NEAR(static_cast<double>(s.checked), mean, 4.5 * sd) << "share " << share;
    EXPECT_EQ(count(s.checked_ops, "Aten.exp.default"), s.checked);
  }
}

TEST(CheckScopeSampling, ApiListChecksOnlyTheListedOps) {
  Mlp mlp;
  probe::torch::CheckScopeOptions o;
  o.api_list = {"gelu", "mm.default", "Aten.sum.dim_IntList"};
  const probe::torch::CheckScope scope(o);
  mlp.step();
  const auto s = scope.summary();
  EXPECT_GT(count(s.checked_ops, "Aten.gelu.default"), 0u) << probe::torch::to_string(s);
  EXPECT_GT(count(s.checked_ops, "Aten.mm.default"), 0u);
  EXPECT_GT(count(s.checked_ops, "Aten.sum.dim_IntList"), 0u);
  for (const auto& [name, n] : s.checked_ops)
    EXPECT_TRUE(name == "Aten.gelu.default" || name == "Aten.mm.default" || name == "Aten.sum.dim_IntList")
        << name;
  EXPECT_GT(s.not_sampled, 0u) << "addmm, pow, mean, gelu_backward, sub_ ... are left out";
  EXPECT_EQ(s.unsupported, 0u);
}

// An op sampling leaves out is not looked into: cross_entropy_loss has a runner, so the log_softmax it runs
// inside is its implementation and stays unobserved even when it is the one listed.
TEST(CheckScopeSampling, AnOpLeftOutIsNotLookedInto) {
  const torch::Tensor logits = torch::randn({4, 5});
  const torch::Tensor target = torch::tensor({0, 1, 2, 3}, torch::kLong);
  probe::torch::CheckScopeOptions o;
  o.api_list = {"log_softmax", "_log_softmax"};
  const probe::torch::CheckScope scope(o);
  torch::nn::functional::cross_entropy(logits, target);
  torch::log_softmax(logits, 1);
  const auto s = scope.summary();
  EXPECT_EQ(count(s.checked_ops, "Aten.log_softmax.int"), 1u) << probe::torch::to_string(s);
  EXPECT_EQ(s.checked, 1u) << "only the direct call";
  EXPECT_EQ(s.not_sampled, 1u) << "cross_entropy_loss";
}

TEST(CheckScopeSampling, StepsAndOneStepInNAreHonoured) {
  const torch::Tensor a = torch::linspace(-1, 1, 4);
  const auto checked_in = [&](std::optional<std::uint64_t> step, std::vector<std::uint64_t> steps,
                              std::uint64_t every) {
    probe::torch::CheckScopeOptions o;
    o.step = step;
    o.steps = std::move(steps);
    o.every_nth_step = every;
    const probe::torch::CheckScope scope(o);
    torch::exp(a);
    torch::sin(a);
    const auto s = scope.summary();
    EXPECT_EQ(s.checked + s.not_sampled, 2u);
    return s.checked;
  };
  EXPECT_EQ(checked_in(3, {1, 3}, 1), 2u);
  EXPECT_EQ(checked_in(2, {1, 3}, 1), 0u);
  EXPECT_EQ(checked_in(std::nullopt, {1, 3}, 1), 0u) << "steps given, the scope has none";
  EXPECT_EQ(checked_in(8, {}, 4), 2u);
  EXPECT_EQ(checked_in(9, {}, 4), 0u);
  EXPECT_EQ(checked_in(8, {9}, 4), 0u) << "both filters apply";
}

TEST(CheckScopeSampling, ABadShareOrStepRateIsRefusedNamingTheField) {
  for (const double share : {0.0, -0.5, 1.5, std::nan("")}) {
    probe::torch::CheckScopeOptions o;
    o.share = share;
    try {
      const probe::torch::CheckScope scope(o);
      ADD_FAILURE() << "share " << share << " accepted";
    } catch (const probe::Error& e) {
      EXPECT_EQ(e.kind(), probe::ErrorKind::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find("share"), std::string::npos) << e.what();
    }
  }
  probe::torch::CheckScopeOptions o;
  o.every_nth_step = 0;
  EXPECT_THROW(probe::torch::CheckScope{o}, probe::Error);
}

}  // namespace

namespace {

// A count-only scope boxes nothing for an op whose arguments it can view, and still names the reason for
// one it cannot: an input with a lazy conjugate bit, as with a checker.
TEST(CheckScopeSampling, CountOnlyStillReportsWhatIsNotConvertible) {
  const torch::Tensor z = torch::randn({4}, torch::kComplexFloat);
  probe::torch::CheckScopeOptions o;
  const probe::torch::CheckScope scope(o);
  torch::exp(z.conj());
  torch::exp(z);
  const auto s = scope.summary();
  EXPECT_EQ(s.not_convertible, 1u) << probe::torch::to_string(s);
  EXPECT_EQ(count(s.checked_ops, "Aten.exp.default"), 1u) << probe::torch::to_string(s);
  ASSERT_EQ(s.not_convertible_ops.size(), 1u);
  EXPECT_NE(s.not_convertible_ops.begin()->first.find("conjugate"), std::string::npos)
      << s.not_convertible_ops.begin()->first;
}

}  // namespace
