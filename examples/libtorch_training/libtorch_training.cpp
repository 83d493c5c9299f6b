// A LibTorch (PyTorch C++ API) training loop checked by probe: one probe::torch::CheckScope around the loop
// and every aten op of each step, forward, autograd backward and the SGD update, is judged on worker threads
// against probe's float64 bench.
//
// Three runs of the same small MLP (linear -> gelu -> linear, squared-error loss, SGD), fp32:
//   1. clean: every checked op passes;
//   2. faulty: the GELU comes from an operator library registered with TORCH_LIBRARY whose CPU kernel forgets
//      the Phi(x) factor for negative inputs; exactly that op is flagged, the rest stays clean;
//   3. dump: the faulty model again with a probe::DumpWriter on the same scope; `probe run_ut`
//   (probe::run_ut)
//      on the dump it wrote gives the same verdicts as the online check.
//
// Usage: probe_example_libtorch_training OUT_DIR [STEPS]      (exit 0 when all three runs behave as above)
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "libtorch_common/faulty_gelu.h"
#include "probe/dump_writer.h"
#include "probe/online_checker.h"
#include "probe/run_ut.h"
#include "probe/torch.h"

namespace fs = std::filesystem;

namespace {

// ---- the operator library with the bug: examples/libtorch_common/faulty_gelu.h ----

using probe_example::LibraryGelu;

// ---- the model ----

struct Mlp : torch::nn::Module {
  Mlp(bool library_gelu) : use_library_gelu(library_gelu) {
    fc1 = register_module("fc1", torch::nn::Linear(16, 64));
    fc2 = register_module("fc2", torch::nn::Linear(64, 4));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor h = fc1->forward(x);
    h = use_library_gelu ? LibraryGelu::apply(h) : torch::gelu(h);
    return fc2->forward(h);
  }
  bool use_library_gelu;
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

struct RunResult {
  probe::torch::CheckScopeSummary scope;
  probe::OnlineCheckerSummary checker;
};

RunResult train(const fs::path& out, const std::string& name, bool library_gelu, int steps,
                probe::DumpWriter* dump) {
  torch::manual_seed(16);
  auto model = std::make_shared<Mlp>(library_gelu);
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.05));
  const torch::Tensor x = torch::randn({32, 16}), y = torch::randn({32, 4});

  probe::OnlineCheckerOptions oc;
  oc.dump_path = (out / name).string();
  fs::create_directories(oc.dump_path);
  oc.dump_mode = probe::OnlineDumpMode::Auto;  // keep the tensors of failing ops
  oc.workers = 2;
  probe::OnlineChecker checker(oc);
  probe::torch::CheckScopeOptions so;
  so.checker = &checker;
  so.dump = dump;
  so.bench_for = {{"probe_example::gelu", "Aten.gelu.default"}};  // the library op's bench is aten's gelu
  RunResult r;
  {
    probe::torch::CheckScope scope(so);
    for (int step = 0; step < steps; ++step) {
      sgd.zero_grad();
      torch::Tensor loss = (model->forward(x) - y).pow(2).mean();
      loss.backward();
      sgd.step();
      std::printf("  [%s] step %d loss %.6f\n", name.c_str(), step, loss.item<float>());
      if (dump && step + 1 < steps) dump->next_step();
    }
    r.scope = scope.summary();
  }
  checker.flush();
  r.checker = checker.summary();
  const std::size_t seen =
      r.scope.checked + r.scope.decomposed + r.scope.unsupported + r.scope.not_convertible;
  std::printf(
      "%s run: %zu checked (%zu pass, %zu fail, %zu skipped), %.0f%% of the computing aten ops\n%s  %s\n",
      name.c_str(), r.checker.calls, r.checker.passed, r.checker.failed, r.checker.skipped,
      seen ? 100.0 * static_cast<double>(r.scope.checked + r.scope.decomposed) / static_cast<double>(seen)
           : 0.0,
      probe::torch::to_string(r.scope).c_str(), r.checker.result_csv.c_str());
  return r;
}

// Rows of a result CSV failing for other ops than `op`: "{op}.{call},{forward},{backward},..." (the
// documented rule: "{op}_{idx}_output,..."), the verdict (error, or False under the documented rule) in the
// backward column for ops of the backward pass.
std::size_t failing_rows_not_of(const std::string& result_csv, const std::string& op) {
  std::ifstream in(result_csv);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    const std::size_t c1 = line.find(','), c2 = line.find(',', c1 + 1), c3 = line.find(',', c2 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    const std::string forward = line.substr(c1 + 1, c2 - c1 - 1), backward = line.substr(c2 + 1, c3 - c2 - 1);
    const bool failing =
        forward == "error" || forward == "False" || backward == "error" || backward == "False";
    if (failing && line.rfind(op + ".", 0) != 0 && line.rfind(op + "_", 0) != 0) ++n;
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR [STEPS]\n", argv[0]);
    return 2;
  }
  const fs::path out = argv[1];
  const int steps = argc == 3 ? std::stoi(argv[2]) : 3;
  fs::remove_all(out);
  fs::create_directories(out);
  try {
    bool ok = true;
    const auto expect = [&](bool cond, const char* what) {
      if (!cond) std::printf("UNEXPECTED: %s\n", what);
      ok &= cond;
    };
    const RunResult clean = train(out, "clean", false, steps, nullptr);
    expect(clean.checker.failed == 0 && clean.checker.skipped == 0 && clean.checker.passed > 0,
           "the clean model has a failing or skipped op");

    const RunResult faulty = train(out, "faulty", true, steps, nullptr);
    const auto gelu_calls = faulty.scope.checked_ops.count("Aten.gelu.default")
                                ? faulty.scope.checked_ops.at("Aten.gelu.default")
                                : 0;
    expect(gelu_calls == static_cast<std::size_t>(steps), "the library GELU was not checked once per step");
    expect(faulty.checker.failed == gelu_calls && faulty.checker.skipped == 0 &&
               failing_rows_not_of(faulty.checker.result_csv, "Aten.gelu.default") == 0,
           "the faulty model fails other ops than the library GELU, or not every GELU call");

    probe::DumpWriterOptions d;
    d.dump_path = (out / "dump").string();
    d.task = probe::DumpTask::Tensor;
    d.rank = 0;
    probe::DumpWriter dump(d);
    const RunResult dumped = train(out, "dumped", true, 1, &dump);
    dump.close();
    probe::RunUtOptions ru;
    ru.api_info = dump.dump_json_path();
    ru.out_dir = (out / "run_ut").string();
    const probe::RunUtSummary r = probe::run_ut(ru);
    std::printf("run_ut on the dump: %zu APIs, %zu pass, %zu warning, %zu error, %zu skip\n  %s\n", r.apis,
                r.pass, r.warning, r.error, r.skip, r.result_csv.c_str());
    expect(r.apis == dumped.checker.calls && r.error == dumped.checker.failed && r.skip == 0,
           "run_ut on the dump disagrees with the online check");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
