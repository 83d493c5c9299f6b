// A C++ "framework" checking its own operators while it runs: a tiny bfloat16 MLP (linear → gelu → linear →
// softmax) runs a few steps on hand-written CPU kernels; every op goes through probe::OnlineChecker (judged
// on worker threads against probe's float64 bench) and is recorded by probe::DumpWriter in msprobe's dump
// layout; at the end probe::run_ut re-checks the dump it wrote, offline.
//
// Usage: probe_example_online_check OUT_DIR        (exit 0 when every op passed both checks)
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "probe/dump_writer.h"
#include "probe/online_checker.h"
#include "probe/run_ut.h"

namespace fs = std::filesystem;
using probe::DType;
using probe::Tensor;
using probe::Value;

namespace {

// ---- the "framework": bf16 tensors, kernels that accumulate in float and round once to bf16 ----

Tensor from_floats(const std::vector<float>& v, probe::Shape shape) {
  return Tensor::from_values<float>(v, std::move(shape)).to(DType::BFloat16);
}
std::vector<float> floats(const Tensor& t) {
  const auto d = t.to_doubles();
  return {d.begin(), d.end()};
}

// y[n, o] = sum_i x[n, i] * w[o, i] + b[o]   (torch.nn.functional.linear)
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  const auto n = x.shape()[0], in = x.shape()[1], out = w.shape()[0];
  const auto xv = floats(x), wv = floats(w), bv = floats(b);
  std::vector<float> y(static_cast<std::size_t>(n * out));
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t o = 0; o < out; ++o) {
      float acc = bv[static_cast<std::size_t>(o)];
      for (std::int64_t i = 0; i < in; ++i)
        acc += xv[static_cast<std::size_t>(r * in + i)] * wv[static_cast<std::size_t>(o * in + i)];
      y[static_cast<std::size_t>(r * out + o)] = acc;
    }
  return from_floats(y, {n, out});
}

Tensor gelu(const Tensor& x) {
  auto v = floats(x);
  for (float& e : v) e = 0.5f * e * (1.0f + std::erf(e / std::sqrt(2.0f)));
  return from_floats(v, x.shape());
}

Tensor softmax_rows(const Tensor& x) {
  const auto n = x.shape()[0], m = x.shape()[1];
  auto v = floats(x);
  for (std::int64_t r = 0; r < n; ++r) {
    float* row = v.data() + r * m;
    float mx = row[0], sum = 0;
    for (std::int64_t i = 0; i < m; ++i) mx = std::max(mx, row[i]);
    for (std::int64_t i = 0; i < m; ++i) sum += (row[i] = std::exp(row[i] - mx));
    for (std::int64_t i = 0; i < m; ++i) row[i] /= sum;
  }
  return from_floats(v, x.shape());
}

Tensor random(std::mt19937& g, probe::Shape shape, float scale) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(static_cast<std::size_t>(probe::numel(shape)));
  for (float& e : v) e = d(g);
  return from_floats(v, std::move(shape));
}

// Runs one op's kernel, then hands it to both tools: the online check and the dump.
struct Instrumented {
  probe::OnlineChecker& checker;
  probe::DumpWriter& dump;
  Tensor operator()(const std::string& api, const probe::ApiCall& call, Tensor out) {
    probe::OnlineCall online;
    for (const auto& a : call.args) online.args.emplace_back(a);
    for (const auto& [k, v] : call.kwargs) online.kwargs.emplace_back(k, v);
    checker.check(api, online, {Value(out)});
    dump.api_forward(api, call, {Value(out)});
    return out;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const fs::path out = argv[1];
  fs::remove_all(out);
  fs::create_directories(out / "online");
  try {
    probe::OnlineCheckerOptions oc_opts;
    oc_opts.dump_path = (out / "online").string();
    oc_opts.dump_mode = probe::OnlineDumpMode::Auto;  // keep the tensors of failing ops only
    oc_opts.workers = 2;
    probe::OnlineChecker checker(oc_opts);
    probe::DumpWriterOptions dw_opts;
    dw_opts.dump_path = (out / "dump").string();
    dw_opts.task = probe::DumpTask::Tensor;
    dw_opts.rank = 0;
    probe::DumpWriter dump(dw_opts);
    Instrumented run{checker, dump};

    std::mt19937 gen(15);
    const Tensor w1 = random(gen, {32, 16}, 0.25f), b1 = random(gen, {32}, 0.1f);
    const Tensor w2 = random(gen, {8, 32}, 0.2f), b2 = random(gen, {8}, 0.1f);
    const int steps = 3;
    for (int step = 0; step < steps; ++step) {
      const Tensor x = random(gen, {4, 16}, 1.0f);
      Tensor h = run("Functional.linear", {{x, w1, b1}, {}}, linear(x, w1, b1));
      h = run("Functional.gelu", {{h}, {}}, gelu(h));
      Tensor logits = run("Functional.linear", {{h, w2, b2}, {}}, linear(h, w2, b2));
      run("Functional.softmax", {{logits}, {{"dim", Value(-1)}}}, softmax_rows(logits));
      if (step + 1 < steps) dump.next_step();
    }
    dump.close();
    checker.flush();
    const probe::OnlineCheckerSummary s = checker.summary();
    std::printf("online check: %zu ops, %zu pass, %zu fail, %zu skipped, %zu without runner\n  %s\n", s.calls,
                s.passed, s.failed, s.skipped, s.unsupported, s.result_csv.c_str());

    // Offline: the same calls, read back from the dump this program wrote.
    probe::RunUtOptions ru;
    ru.api_info = (out / "dump" / "step0" / "rank0" / "dump.json").string();
    ru.out_dir = (out / "run_ut").string();
    const probe::RunUtSummary r = probe::run_ut(ru);
    std::printf("run_ut on step0: %zu APIs, %zu pass, %zu warning, %zu error, %zu skip\n  %s\n", r.apis,
                r.pass, r.warning, r.error, r.skip, r.result_csv.c_str());
    const bool ok = s.failed == 0 && s.skipped == 0 && s.unsupported == 0 && s.passed == s.calls &&
                    r.error == 0 && r.skip == 0 && r.apis > 0;
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
