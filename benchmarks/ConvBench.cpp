// conv2d speed: probe's float64 conv2d path (im2col + Eigen GEMM, nn::conv2d on autograd values, forward
// and the backward VJP) against plain Eigen GEMMs of exactly the shapes and FLOP count the convolution
// needs, measured in the same run. Reported: GFLOP/s of both and `ratio` = baseline time / probe time
// (target >= 0.9). Times are thread CPU seconds, so the ratio holds on a busy machine.
//
//   build/benchmarks/probe_convbench
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <ctime>
#include <map>
#include <random>

#include "runners/Conv.h"

namespace {

using probe::runners::Buffer;
using probe::runners::Var;
namespace nn = probe::runners::nn;
using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Shape4 {
  std::int64_t n, c, h, w, o, k, stride, pad;
  std::int64_t oh() const { return (h + 2 * pad - k) / stride + 1; }
  std::int64_t ow() const { return (w + 2 * pad - k) / stride + 1; }
  double flops() const {  // multiply-adds of the forward GEMMs, x2
    return 2.0 * static_cast<double>(n * o * oh() * ow() * c * k * k);
  }
};
const Shape4 kShapes[] = {
    {4, 64, 28, 28, 64, 3, 1, 1},    // ResNet-style 3x3
    {4, 256, 14, 14, 256, 1, 1, 0},  // pointwise 1x1
    {4, 64, 56, 56, 128, 3, 2, 1},   // strided 3x3
    {8, 3, 64, 64, 32, 7, 2, 3},     // stem: few input channels, big kernel
};

Buffer random(std::int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Buffer b(static_cast<std::size_t>(n));
  for (double& v : b) v = u(rng);
  return b;
}

std::map<std::pair<int, bool>, double> g_gemm_seconds;  // (shape, backward) -> per iteration

// Baseline: the GEMMs of the convolution, one per image: [O x K] x [K x P] (forward); backward adds
// [K x O] x [O x P] (data) and [O x P] x [P x K] (weight).
void BM_EigenGemm(benchmark::State& state) {
  const Shape4 s = kShapes[state.range(0)];
  const bool bwd = state.range(1) != 0;
  const std::int64_t K = s.c * s.k * s.k, P = s.oh() * s.ow();
  RowMat A = Eigen::Map<RowMat>(random(s.o * K, 1).data(), s.o, K);
  RowMat B = Eigen::Map<RowMat>(random(K * P, 2).data(), K, P);
  RowMat C(s.o, P), D(K, P), E(s.o, K);
  double cpu = 0;
  for (auto _ : state) {
    const double t0 = cpu_now();
    for (std::int64_t i = 0; i < s.n; ++i) {
      C.noalias() = A * B;
      if (bwd) {
        D.noalias() = A.transpose() * C;
        E.noalias() += C * B.transpose();
      }
    }
    benchmark::DoNotOptimize(C.data());
    benchmark::DoNotOptimize(D.data());
    benchmark::DoNotOptimize(E.data());
    cpu += cpu_now() - t0;
  }
  const double per = cpu / static_cast<double>(state.iterations());
  g_gemm_seconds[{static_cast<int>(state.range(0)), bwd}] = per;
  state.counters["GFLOP/s"] = s.flops() * (bwd ? 3 : 1) / per * 1e-9;
}

void BM_ProbeConv2d(benchmark::State& state) {
  const Shape4 s = kShapes[state.range(0)];
  const bool bwd = state.range(1) != 0;
  probe::runners::GradMode grad(bwd);
  Var x = probe::runners::make_leaf({s.n, s.c, s.h, s.w}, random(s.n * s.c * s.h * s.w, 3),
                                    probe::DType::Float64, bwd);
  Var w = probe::runners::make_leaf({s.o, s.c, s.k, s.k}, random(s.o * s.c * s.k * s.k, 4),
                                    probe::DType::Float64, bwd);
  nn::ConvParams p;
  p.stride = {s.stride, s.stride};
  p.pad_lo = p.pad_hi = {s.pad, s.pad};
  double cpu = 0;
  for (auto _ : state) {
    const double t0 = cpu_now();
    Var y = nn::conv2d(x, w, std::nullopt, p);
    if (bwd) {
      Buffer g(y.data().size(), 1.0);
      probe::runners::backward({y}, {g});
      benchmark::DoNotOptimize(x.node()->grad.data());
    }
    benchmark::DoNotOptimize(y.data().data());
    cpu += cpu_now() - t0;
  }
  const double per = cpu / static_cast<double>(state.iterations());
  state.counters["GFLOP/s"] = s.flops() * (bwd ? 3 : 1) / per * 1e-9;
  auto it = g_gemm_seconds.find({static_cast<int>(state.range(0)), bwd});
  if (it != g_gemm_seconds.end()) state.counters["ratio"] = it->second / per;
}

void args(benchmark::internal::Benchmark* b) {
  for (int i = 0; i < static_cast<int>(std::size(kShapes)); ++i)
    for (int bwd : {0, 1}) b->Args({i, bwd});
  b->ArgNames({"shape", "backward"})->Unit(benchmark::kMillisecond)->MinTime(0.5);
}

}  // namespace

// The baseline runs first so that every probe row can report its ratio.
BENCHMARK(BM_EigenGemm)->Apply(args);
BENCHMARK(BM_ProbeConv2d)->Apply(args);
