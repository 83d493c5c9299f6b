// A tile-remainder bug in aten::mm (the last column of the result 2% too large when K > 32), injected
// into LibTorch's own CPU dispatch, over three training steps of a small transformer block (q/k/v/out
// projections, attention matmuls, softmax, layer_norm, gelu, residuals, cross_entropy) under CheckScope
// and the OnlineChecker's default rule (DECISIONS D14). Expected from the construction, not from probe:
// every op whose output holds a faulty mm result is a GEMM (linear, mm, matmul, addmm) and is flagged, and
// nothing else is; with the fault off the same steps are clean, including the key projection's bias
// gradient, which is exactly zero in exact arithmetic (softmax is invariant to a shift that is constant over
// the keys) and rounding noise on the device.
#include <ATen/CPUFunctions.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "common/ScratchDir.h"
#include "probe/csv.h"
#include "probe/online_checker.h"
#include "probe/torch.h"

using probe::testing::ScratchDir;

namespace {

std::atomic<bool> g_fault{false};
std::atomic<int> g_faulty_calls{0};

// aten::mm on CPU: LibTorch's own kernel, plus the injected bug while g_fault is set.
at::Tensor tile_bug_mm(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = at::cpu::mm(a, b);
  if (g_fault && a.size(1) > 32 && out.size(1) > 0) {
    out.select(1, out.size(1) - 1).mul_(1.02);
    ++g_faulty_calls;
  }
  return out;
}

// aten::addmm (the linears' forward: bias + input W^T) with the same bug while g_fault_addmm is set.
std::atomic<bool> g_fault_addmm{false};
at::Tensor tile_bug_addmm(const at::Tensor& self, const at::Tensor& a, const at::Tensor& b,
                          const at::Scalar& beta, const at::Scalar& alpha) {
  at::Tensor out = at::cpu::addmm(self, a, b, beta, alpha);
  if (g_fault_addmm && a.size(1) > 32 && out.size(1) > 0) {
    out.select(1, out.size(1) - 1).mul_(1.02);
    ++g_faulty_calls;
  }
  return out;
}

TORCH_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("mm", tile_bug_mm);
  m.impl("addmm", tile_bug_addmm);
}

struct Block : torch::nn::Module {
  torch::nn::Linear q{nullptr}, k{nullptr}, v{nullptr}, o{nullptr}, up{nullptr}, down{nullptr}, head{nullptr};
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  Block() {
    const int d = 48;
    q = register_module("q", torch::nn::Linear(d, d));
    k = register_module("k", torch::nn::Linear(d, d));
    v = register_module("v", torch::nn::Linear(d, d));
    o = register_module("o", torch::nn::Linear(d, d));
    up = register_module("up", torch::nn::Linear(d, 2 * d));
    down = register_module("down", torch::nn::Linear(2 * d, d));
    head = register_module("head", torch::nn::Linear(d, 16));
    ln1 = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
    ln2 = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const torch::Tensor h = ln1(x);
    const torch::Tensor scores = torch::matmul(q(h), k(h).transpose(1, 2)) / std::sqrt(48.0);
    const torch::Tensor attn = torch::matmul(torch::softmax(scores, -1), v(h));
    const torch::Tensor r = x + o(attn);
    const torch::Tensor f = r + down(torch::gelu(up(ln2(r))));
    return head(f);
  }
};

struct StepResult {
  std::size_t passed = 0, failed = 0;
  std::map<std::string, int> flagged;  // op name -> flagged rows
  std::string result_csv;
  std::vector<probe::CsvRow> details;
};

StepResult train(bool fault, const ScratchDir& dir, const std::string& tag,
                 probe::OnlineRule rule = probe::OnlineRule::ErrorBound, torch::Dtype dtype = torch::kFloat) {
  torch::manual_seed(0);
  auto model = std::make_shared<Block>();
  model->to(dtype);
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.05));
  const torch::Tensor x = torch::randn({2, 8, 48}).to(dtype);
  const torch::Tensor target = torch::randint(0, 16, {16});
  probe::OnlineCheckerOptions o;
  o.dump_path = dir.path().string();
  o.tag = tag;
  o.timestamp = "20260101120000123";
  o.rule = rule;
  // PROBE_GEMM_FAULT_DUMP=DIR keeps the flagged ops' tensors (npu/, cpu/ .npy) of the bfloat16 run in DIR.
  if (std::getenv("PROBE_GEMM_FAULT_DUMP")) o.dump_mode = probe::OnlineDumpMode::Auto;
  probe::OnlineChecker checker(o);
  g_fault = fault;
  for (int step = 0; step < 3; ++step) {
    probe::torch::CheckScope scope(checker);
    opt.zero_grad();
    const torch::Tensor logits = model->forward(x).reshape({16, 16});
    torch::Tensor loss = torch::nn::functional::cross_entropy(logits, target);
    loss.backward();
    opt.step();
  }
  g_fault = false;
  checker.flush();
  const auto s = checker.summary();
  StepResult r;
  r.passed = s.passed;
  r.failed = s.failed;
  std::ifstream in(s.result_csv);
  std::stringstream ss;
  ss << in.rdbuf();
  r.result_csv = ss.str();
  r.details = probe::csv_read_file(s.details_csv);
  std::istringstream lines(r.result_csv);
  std::string line;
  std::getline(lines, line);  // header
  while (std::getline(lines, line)) {
    const std::size_t comma = line.find(',');
    if (comma == std::string::npos) continue;
    // The verdict of an op of the backward pass is in the backward column, "Nan" in the forward one.
    const std::size_t comma2 = line.find(',', comma + 1);
    std::string status = line.substr(comma + 1, comma2 - comma - 1);
    if (status == "Nan") status = line.substr(comma2 + 1, line.find(',', comma2 + 1) - comma2 - 1);
    if (status == "pass" || status == "True") continue;  // run_ut's and D8's spellings
    // "Aten.mm.default.11" (probe rules) or "Aten.mm.default_12_output" (D8's layout) -> "Aten.mm.default"
    std::string name = line.substr(0, comma);
    if (name.ends_with("_output")) {
      name = name.substr(0, name.rfind("_output"));
      ++r.flagged[name.substr(0, name.rfind('_'))];
    } else {
      ++r.flagged[name.substr(0, name.rfind('.'))];
    }
  }
  return r;
}

bool is_gemm(const std::string& op) {
  for (const char* g : {"Aten.mm.", "Aten.linear.", "Aten.matmul.", "Aten.addmm.", "Aten.bmm."})
    if (op.rfind(g, 0) == 0) return true;
  return false;
}

TEST(GemmFault, EveryFaultyMmIsFlaggedAndNothingElseForwardOrBackward) {
  ScratchDir dir("probe-gemm-fault");
  const StepResult clean = train(false, dir, "clean");
  EXPECT_EQ(clean.failed, 0u) << clean.result_csv;
  EXPECT_GT(clean.passed, 100u);
  // The key bias gradient (zero in exact arithmetic) is one of the checked sums, and it passed.
  EXPECT_NE(clean.result_csv.find("Aten.sum.dim_IntList"), std::string::npos);

  g_faulty_calls = 0;
  const StepResult faulty = train(true, dir, "faulty");
  const int injected = g_faulty_calls;
  ASSERT_GT(injected, 0);
  int flagged_gemms = 0;
  for (const auto& [op, n] : faulty.flagged) {
    EXPECT_TRUE(is_gemm(op)) << op << " flagged " << n << " times, but only mm is faulty";
    if (is_gemm(op)) flagged_gemms += n;
  }
  // Every faulty mm call is one checked op (CheckScope checks the outermost op it can bench, and each GEMM
  // op here runs one mm), and each must be flagged.
  EXPECT_EQ(flagged_gemms, injected) << faulty.result_csv;
  std::cout << "D14: faulty mm calls " << injected << ", flagged GEMM ops " << flagged_gemms
            << ", other ops flagged " << faulty.failed - flagged_gemms << ", clean ops flagged "
            << clean.failed << " of " << clean.passed + clean.failed << "\n";
  // The rules probe had before, on the same steps (reported for the comparison, not asserted).
  for (const auto& [name, rule] : {std::pair{"D8 documented", probe::OnlineRule::Documented},
                                   std::pair{"run_ut rule", probe::OnlineRule::RunUt}}) {
    const StepResult c =
        train(false, dir, std::string("clean_") + (rule == probe::OnlineRule::RunUt ? "r" : "d"), rule);
    const StepResult f =
        train(true, dir, std::string("faulty_") + (rule == probe::OnlineRule::RunUt ? "r" : "d"), rule);
    int gemms = 0, others = 0;
    for (const auto& [op, n] : f.flagged) (is_gemm(op) ? gemms : others) += n;
    std::cout << name << ": flagged GEMM ops " << gemms << " of " << injected << " faulty, other ops flagged "
              << others << ", clean ops flagged " << c.failed << " of " << c.passed + c.failed << "\n";
  }
}

// DECISIONS D25: addmm's magnitude is the Cauchy-Schwarz product of row and column norms plus |beta| |input|,
// a looser bound than the bench on absolute values. LibTorch's linear on a 2-D input is one addmm (on a 3-D
// one it is mm, above); the same 2% tile bug in addmm is flagged in every faulty call and the clean calls
// pass, in float32 and bfloat16, with and without beta/alpha and with a bias per row or per column.
TEST(GemmFault, EveryFaultyAddmmIsFlaggedAndCleanOnesPass) {
  ScratchDir dir("probe-addmm-fault");
  for (const torch::Dtype dtype : {torch::kFloat, torch::kBFloat16})
    for (const bool fault : {false, true}) {
      const std::string tag = std::string(dtype == torch::kFloat ? "f32" : "bf16") + (fault ? "_fault" : "");
      probe::OnlineCheckerOptions o;
      o.dump_path = dir.path().string();
      o.tag = tag;
      o.timestamp = "20260101120000123";
      probe::OnlineChecker checker(o);
      torch::manual_seed(25);
      g_faulty_calls = 0;
      g_fault_addmm = fault;
      int calls = 0;
      {
        probe::torch::CheckScope scope(checker);
        for (int i = 0; i < 4; ++i) {
          const torch::Tensor x = torch::randn({64, 96}).to(dtype), w = torch::randn({80, 96}).to(dtype);
          const torch::Tensor col_bias = torch::randn({80}).to(dtype),
                              row_bias = torch::randn({64, 1}).to(dtype);
          torch::nn::functional::linear(x, w, col_bias);
          torch::addmm(row_bias, x, w.t(), /*beta=*/0.5, /*alpha=*/-2);
          calls += 2;
        }
      }
      g_fault_addmm = false;
      checker.flush();
      const auto s = checker.summary();
      EXPECT_EQ(g_faulty_calls, fault ? calls : 0) << tag;
      EXPECT_EQ(s.failed, fault ? static_cast<std::size_t>(calls) : 0u) << tag;
      EXPECT_EQ(s.passed, fault ? 0u : static_cast<std::size_t>(calls)) << tag;
      std::cout << "D25 " << tag << ": addmm calls " << calls << ", flagged " << s.failed << "\n";
    }
}

// A clean bfloat16 run of the same block: D14 is quiet except where a CPU kernel is measurably worse than
// computing in float32, and says so (a Warning naming the reduced precision). Here that is torch's CPU
// bfloat16 layer_norm, forward and backward (D20, D24), whose output differs from torch's own float32
// layer_norm rounded once by several bfloat16 ulps (checked below with LibTorch itself).
TEST(GemmFault, CleanBfloat16StepIsQuietExceptWhereAKernelComputesInReducedPrecision) {
  ScratchDir dir("probe-gemm-bf16");
  const StepResult clean = train(false, dir, "bf16", probe::OnlineRule::ErrorBound, torch::kBFloat16);
  EXPECT_GT(clean.passed, 200u);
  int warnings = 0;
  for (const probe::CsvRow& row : clean.details) {
    if (row.size() < 23 || row[21] == "pass" || row[21] == "Status") continue;
    std::cout << row[0] << " " << row[21] << ": " << row[22] << "\n";
    // native_layer_norm_backward's masked outputs are None on the bench side: SKIP, never pass.
    if (row[21] == "SKIP") continue;
    EXPECT_EQ(row[21], "Warning") << row[0] << ": " << row[22];
    // layer_norm's forward (D14) and, since D24 gives native_layer_norm_backward D20's layer_norm
    // backward family, its gradients (D20: torch's bfloat16 kernel is beyond D14's bound, within the band).
    EXPECT_TRUE(row[0].rfind("Aten.layer_norm.default.", 0) == 0 ||
                row[0].rfind("Aten.native_layer_norm_backward.default.", 0) == 0)
        << row[0];
    EXPECT_NE(row[22].find("in bfloat16 precision"), std::string::npos) << row[0];
    ++warnings;
  }
  std::cout << "bfloat16 step: " << clean.passed << " ops pass, " << warnings
            << " reduced-precision warnings\n";

  // torch's evidence that its bfloat16 layer_norm is not a float32 computation rounded once.
  torch::manual_seed(0);
  const torch::Tensor x = (torch::randn({16, 48}) + 0.5).to(torch::kBFloat16);
  const torch::Tensor device = torch::layer_norm(x, {48});
  const torch::Tensor fp32 = torch::layer_norm(x.to(torch::kFloat), {48}).to(torch::kBFloat16);
  const double ulps =
      ((device.to(torch::kFloat) - fp32.to(torch::kFloat)).abs() / (fp32.to(torch::kFloat).abs() * 0x1p-7))
          .max()
          .item<double>();
  EXPECT_GT(ulps, 1.5);
}

}  // namespace
