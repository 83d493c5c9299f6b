// Runner throughput: probe's float64 matmul path (registry -> binding -> autograd Var -> Eigen GEMM ->
// Tensor) against a plain Eigen GEMM of the same size measured in the same run (target >= 90%), and
// the elementwise path (Torch.add with broadcasting machinery) in G elements/s against a plain loop.
//   build/benchmarks/probe_runnerbench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <ctime>
#include <map>
#include <random>

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

}  // namespace

BENCHMARK(BM_EigenGemm)->Arg(128)->Arg(256)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ProbeMatmul)->Arg(128)->Arg(256)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlainAddLoop)->Arg(1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ProbeAdd)->Arg(1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ProbeAddBroadcast)->Arg(1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
