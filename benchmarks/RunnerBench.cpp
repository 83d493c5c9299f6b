// Runner throughput: probe's float64 matmul path (registry -> binding -> autograd Var -> Eigen GEMM ->
// Tensor) against a plain Eigen GEMM of the same size measured in the same run (target >= 90%), and
// the elementwise path (Torch.add with broadcasting machinery) in G elements/s against a plain loop.
// BM_RunnerFamily/k times one API per runner family forward + backward (the label names the API).
//   build/benchmarks/probe_runnerbench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <cmath>
#include <ctime>
#include <map>
#include <random>

#include "probe/error_bound.h"
#include "probe/runner.h"

namespace {

// Thread CPU time: the machine running benchmarks is shared, so wall time would measure the neighbours;
// both GEMMs are single-threaded Eigen.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

probe::Tensor random_tensor(probe::DType dt, probe::Shape shape, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<std::size_t>(probe::numel(shape)));
  for (double& x : v) x = u(gen);
  return probe::Tensor::from_values<double>(v, std::move(shape)).to(dt);
}

// Best-of-k seconds of a plain Eigen GEMM C = A * B (n x n, float64, row-major like probe's tensors).
double eigen_gemm_seconds(std::int64_t n) {
  static std::map<std::int64_t, double> cache;
  if (auto it = cache.find(n); it != cache.end()) return it->second;
  Mat a = Mat::Random(n, n), b = Mat::Random(n, n), c(n, n);
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const double t0 = cpu_seconds();
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
    best = std::min(best, cpu_seconds() - t0);
  }
  cache[n] = best;
  return best;
}

void BM_EigenGemm(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Mat a = Mat::Random(n, n), b = Mat::Random(n, n), c(n, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ProbeMatmul(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const probe::RunnerRegistry reg = probe::RunnerRegistry::with_builtins();
  probe::ApiCall call{{probe::Value(random_tensor(probe::DType::Float32, {n, n}, 1)),
                       probe::Value(random_tensor(probe::DType::Float32, {n, n}, 2))},
                      {}};
  const double eigen = eigen_gemm_seconds(n);
  double best = 1e30;
  for (auto _ : state) {
    const double t0 = cpu_seconds();
    probe::ApiResult r = reg.run_forward(probe::Framework::PyTorch, "Torch.matmul.0", call);
    benchmark::DoNotOptimize(r.outputs[0].tensor().bytes());
    best = std::min(best, cpu_seconds() - t0);
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  // best-of probe vs best-of Eigen in the same process (thread CPU time)
  state.counters["vs_eigen"] = eigen / best;
}

void BM_PlainAddLoop(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  std::vector<double> a(static_cast<std::size_t>(n), 1.5), b(static_cast<std::size_t>(n), 2.5), c(a.size());
  for (auto _ : state) {
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = a[i] + b[i];
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["Gelem/s"] =
      benchmark::Counter(static_cast<double>(n) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Torch.add(float32 [n], float32 [n]) end to end: float32 -> float64 input conversion, the zip kernel,
// float64 output tensor.
void BM_ProbeAdd(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const probe::RunnerRegistry reg = probe::RunnerRegistry::with_builtins();
  probe::ApiCall call{{probe::Value(random_tensor(probe::DType::Float32, {n}, 3)),
                       probe::Value(random_tensor(probe::DType::Float32, {n}, 4))},
                      {}};
  for (auto _ : state) {
    probe::ApiResult r = reg.run_forward(probe::Framework::PyTorch, "Torch.add.0", call);
    benchmark::DoNotOptimize(r.outputs[0].tensor().bytes());
  }
  state.counters["Gelem/s"] =
      benchmark::Counter(static_cast<double>(n) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Broadcast add [rows, cols] + [cols] (the strided inner-run path).
void BM_ProbeAddBroadcast(benchmark::State& state) {
  const std::int64_t rows = 1024, cols = state.range(0) / 1024;
  const probe::RunnerRegistry reg = probe::RunnerRegistry::with_builtins();
  probe::ApiCall call{{probe::Value(random_tensor(probe::DType::Float32, {rows, cols}, 5)),
                       probe::Value(random_tensor(probe::DType::Float32, {cols}, 6))},
                      {}};
  for (auto _ : state) {
    probe::ApiResult r = reg.run_forward(probe::Framework::PyTorch, "Torch.add.0", call);
    benchmark::DoNotOptimize(r.outputs[0].tensor().bytes());
  }
  state.counters["Gelem/s"] = benchmark::Counter(static_cast<double>(rows * cols) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// One API's forward + backward as run_ut evaluates it (run_forward_taped, then the VJP with a ones
// gradient per output) on float32 inputs, in M elements/s of the first input. One case per runner family:
// the shape/indexing primitives (permute, expand, take/put), broadcasting reductions (sum_to) and
// reductions over axes, which is where the runners' N-d index math lives.
struct FamilyCase {
  const char* api;
  std::vector<probe::Value> args;
  std::vector<std::pair<std::string, probe::Value>> kwargs;
};

probe::Value ints(std::initializer_list<std::int64_t> v) {
  std::vector<probe::Value> out;
  for (auto x : v) out.emplace_back(x);
  return probe::Value(std::move(out));
}

probe::Tensor index_tensor(probe::Shape shape, std::int64_t bound, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<std::int64_t> u(0, bound - 1);
  std::vector<std::int64_t> v(static_cast<std::size_t>(probe::numel(shape)));
  for (auto& x : v) x = u(gen);
  return probe::Tensor::from_values<std::int64_t>(v, std::move(shape));
}

FamilyCase family_case(int which) {
  using probe::DType;
  using probe::Value;
  const probe::Shape s{64, 128, 128};
  switch (which) {
    case 0:  // shape: permute (a strided gather forward, its inverse scatter backward)
      return {"Tensor.permute.0",
              {Value(random_tensor(DType::Float32, s, 11)), Value(2), Value(0), Value(1)},
              {}};
    case 1:  // shape: transpose of the last two dims
      return {"Torch.transpose.0", {Value(random_tensor(DType::Float32, s, 12)), Value(1), Value(2)}, {}};
    case 2:  // shape: expand [1, 128, 128] -> [64, 128, 128] (backward: sum_to over the broadcast dim)
      return {"Tensor.expand.0",
              {Value(random_tensor(DType::Float32, {1, 128, 128}, 13)), Value(64), Value(128), Value(128)},
              {}};
    case 3:  // elementwise: broadcast add [64, 128, 128] + [128] (backward: sum_to of the second operand)
      return {"Torch.add.0",
              {Value(random_tensor(DType::Float32, s, 14)), Value(random_tensor(DType::Float32, {128}, 15))},
              {}};
    case 4:  // reduction: sum over the middle axis
      return {"Torch.sum.0", {Value(random_tensor(DType::Float32, s, 16)), ints({1})}, {}};
    case 5:  // indexing: gather along the last dim
      return {"Torch.gather.0",
              {Value(random_tensor(DType::Float32, s, 17)), Value(2),
               Value(index_tensor({64, 128, 64}, 128, 18))},
              {}};
    case 6:  // indexing: a basic slice x[:, 1:, ::2]
      return {
          "Tensor.__getitem__.0",
          {Value(random_tensor(DType::Float32, s, 19)),
           Value(std::vector<Value>{Value(probe::Slice{}), Value(probe::Slice{1, std::nullopt, std::nullopt}),
                                    Value(probe::Slice{std::nullopt, std::nullopt, 2})})},
          {}};
    default:  // joining: cat of two along dim 1
      return {"Torch.cat.0",
              {Value(std::vector<Value>{Value(random_tensor(DType::Float32, s, 20)),
                                        Value(random_tensor(DType::Float32, s, 21))}),
               Value(1)},
              {}};
  }
}

void BM_RunnerFamily(benchmark::State& state) {
  const probe::RunnerRegistry reg = probe::RunnerRegistry::with_builtins();
  const FamilyCase fc = family_case(static_cast<int>(state.range(0)));
  const probe::ApiCall call{fc.args, fc.kwargs};
  state.SetLabel(fc.api);
  std::vector<probe::Value> grads;
  for (const probe::Value& out : reg.run_forward(probe::Framework::PyTorch, fc.api, call).outputs) {
    const probe::Tensor& t = out.tensor();
    grads.emplace_back(probe::Tensor::from_values<double>(
                           std::vector<double>(static_cast<std::size_t>(t.numel()), 1.0), t.shape())
                           .to(probe::DType::Float32));
  }
  for (auto _ : state) {
    probe::TapedCall taped = reg.run_forward_taped(probe::Framework::PyTorch, fc.api, call);
    benchmark::DoNotOptimize(taped.result().outputs[0].tensor().bytes());
    auto g = taped.backward(grads);
    benchmark::DoNotOptimize(g.front().grad.bytes());
  }
  const auto n = fc.args[0].is_tensor() ? fc.args[0].tensor().numel() : fc.args[0].list()[0].tensor().numel();
  state.counters["Melem/s"] =
      benchmark::Counter(static_cast<double>(n) * 1e-6, benchmark::Counter::kIsIterationInvariantRate);
}

// D14's magnitude of one call: /0 and /1 an addmm of the transformer benchmark's MLP (bias [1536],
// [1024 x 384] x [384 x 1536], float32), /2 and /3 a ResNet-style conv2d ([8, 64, 56, 56] by [64, 64, 3, 3],
// padding 1, float32). Even arguments: what the checker computes (D25: norms, and for the convolution one
// convolution of x^2 with a kernel of ones per group); odd: the bench on the absolute values it replaced.
void BM_Magnitude(benchmark::State& state) {
  const probe::RunnerRegistry reg = probe::RunnerRegistry::with_builtins();
  const bool conv = state.range(0) >= 2, norms = state.range(0) % 2 == 0;
  const char* api = conv ? "Functional.conv2d" : "Torch.addmm";
  probe::ApiCall call;
  if (conv)
    call.args = {probe::Value(random_tensor(probe::DType::Float32, {8, 64, 56, 56}, 33)),
                 probe::Value(random_tensor(probe::DType::Float32, {64, 64, 3, 3}, 34)),
                 probe::Value(random_tensor(probe::DType::Float32, {64}, 35)), probe::Value(std::int64_t{1}),
                 probe::Value(std::int64_t{1})};
  else
    call.args = {probe::Value(random_tensor(probe::DType::Float32, {1536}, 30)),
                 probe::Value(random_tensor(probe::DType::Float32, {1024, 384}, 31)),
                 probe::Value(random_tensor(probe::DType::Float32, {384, 1536}, 32))};
  probe::ApiCall abs_call = call;
  for (probe::Value& v : abs_call.args) {
    if (!v.is_tensor()) continue;
    std::vector<double> x = v.tensor().to_doubles();
    for (double& e : x) e = std::fabs(e);
    v = probe::Value(probe::Tensor::from_values<double>(x, v.tensor().shape()).to(probe::DType::Float32));
  }
  for (auto _ : state) {
    const std::vector<probe::Value> m =
        norms ? probe::error_bound_magnitude(reg, probe::Framework::PyTorch, api, call)
              : reg.run_forward(probe::Framework::PyTorch, api, abs_call, probe::RunnerRole::Bench).outputs;
    benchmark::DoNotOptimize(m.front().tensor().bytes());
  }
  state.SetLabel(std::string(conv ? "conv2d " : "addmm ") + (norms ? "norms (D25)" : "bench on |inputs|"));
}

}  // namespace

BENCHMARK(BM_EigenGemm)->Arg(128)->Arg(256)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ProbeMatmul)->Arg(128)->Arg(256)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlainAddLoop)->Arg(1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ProbeAdd)->Arg(1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ProbeAddBroadcast)->Arg(1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunnerFamily)->DenseRange(0, 7)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Magnitude)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);
