// The N-d index kernels on xtensor (lib/runners/NdIndex.h) against the loops
// they replaced, a direct permutation loop, and the xtensor broadcasting that
// was measured and not adopted (DEVELOPERS.md "N-d index math"), at [64, 128,
// 128] float64. Each iteration runs both sides alternately; `speed` is the
// loop's best thread CPU time over xtensor's (> 1: xtensor faster).
//   build/benchmarks/probe_ndindexbench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <random>
#include <vector>
#include <xtensor/xadapt.hpp>
#include <xtensor/xbroadcast.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xtensor.hpp>

#include "runners/NdIndex.h"

namespace {

using I = std::int64_t;

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

std::vector<double> random_values(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (double& x : v) x = u(gen);
  return v;
}

// Runs loop() and xt() alternately per iteration; reports the ratio of their
// best times.
template <class L, class X>
void ab(benchmark::State& state, L&& loop, X&& xt) {
  double best_loop = 1e30, best_xt = 1e30;
  for (auto _ : state) {
    double t0 = cpu_seconds();
    loop();
    best_loop = std::min(best_loop, cpu_seconds() - t0);
    t0 = cpu_seconds();
    xt();
    best_xt = std::min(best_xt, cpu_seconds() - t0);
  }
  state.counters["loop_ms"] = best_loop * 1e3;
  state.counters["xt_ms"] = best_xt * 1e3;
  state.counters["speed"] = best_loop / best_xt;
}

const probe::Shape kShape{64, 128, 128};
constexpr std::size_t kN = 64 * 128 * 128;

// The previous sum_to: every element added to its broadcast source, dims
// stepped per element.
void loop_sum_to(const std::vector<double>& g, const probe::Shape& from, const probe::Shape& to,
                 std::vector<double>& out) {
  out.assign(static_cast<std::size_t>(probe::numel(to)), 0.0);
  const std::size_t n = from.size(), off = n - to.size();
  std::vector<I> tstride(n, 0), idx(n, 0);
  I s = 1;
  for (std::size_t i = n; i-- > off;) {
    tstride[i] = to[i - off] == 1 ? 0 : s;
    s *= to[i - off];
  }
  I t = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    out[static_cast<std::size_t>(t)] += g[i];
    for (std::size_t d = n; d-- > 0;) {
      ++idx[d];
      t += tstride[d];
      if (idx[d] < from[d]) break;
      t -= tstride[d] * idx[d];
      idx[d] = 0;
    }
  }
}

// 0: [64, 128, 128] -> [1, 128, 128] (expand's gradient); 1: -> [128] (a
// broadcast bias's gradient).
void BM_SumTo(benchmark::State& state) {
  const probe::Shape to = state.range(0) == 0 ? probe::Shape{1, 128, 128} : probe::Shape{128};
  const std::vector<bool> reduced =
      state.range(0) == 0 ? std::vector<bool>{true, false, false} : std::vector<bool>{true, true, false};
  const std::vector<double> g = random_values(kN, 1);
  std::vector<double> a, b(static_cast<std::size_t>(probe::numel(to)));
  ab(
      state, [&] { loop_sum_to(g, kShape, to, a); },
      [&] { probe::runners::nd::sum_axes(g.data(), kShape, reduced, b.data()); });
  if (a != b) state.SkipWithError("results differ");
}

// The previous permute: an index list built by stepping the dims, then a gather
// through it; and its backward, a scatter into zeros. xtensor: the permutation
// and its inverse.
void BM_PermuteForwardBackward(benchmark::State& state) {
  const std::vector<I> dims = state.range(0) == 0 ? std::vector<I>{2, 0, 1} : std::vector<I>{0, 2, 1};
  std::vector<I> inverse(3);
  for (std::size_t i = 0; i < 3; ++i) inverse[static_cast<std::size_t>(dims[i])] = static_cast<I>(i);
  probe::Shape os(3);
  for (std::size_t i = 0; i < 3; ++i) os[i] = kShape[static_cast<std::size_t>(dims[i])];
  const std::vector<double> x = random_values(kN, 2);
  std::vector<double> y1(kN), g1, y2(kN), g2(kN);
  auto loop = [&] {
    const std::array<I, 3> xs{128 * 128, 128, 1};
    std::vector<I> idx(kN), pos(3, 0);
    I src = 0;
    for (std::size_t i = 0; i < kN; ++i) {
      idx[i] = src;
      for (std::size_t d = 3; d-- > 0;) {
        const I st = xs[static_cast<std::size_t>(dims[d])];
        ++pos[d];
        src += st;
        if (pos[d] < os[d]) break;
        src -= st * pos[d];
        pos[d] = 0;
      }
    }
    for (std::size_t i = 0; i < kN; ++i) y1[i] = x[static_cast<std::size_t>(idx[i])];
    g1.assign(kN, 0.0);
    for (std::size_t i = 0; i < kN; ++i) g1[static_cast<std::size_t>(idx[i])] += y1[i];
  };
  auto xt = [&] {
    probe::runners::nd::permute(x.data(), kShape, dims, y2.data());
    probe::runners::nd::permute(y2.data(), os, inverse, g2.data());
  };
  ab(state, loop, xt);
  if (y1 != y2 || g1 != g2) state.SkipWithError("results differ");
}

// For the record: a direct loop stepping the input offset per dim
// (permute_into's fallback above rank 6) against xtensor's transpose, forward
// only.
void BM_PermuteDirectLoop(benchmark::State& state) {
  const std::vector<I> dims = state.range(0) == 0 ? std::vector<I>{2, 0, 1} : std::vector<I>{0, 2, 1};
  probe::Shape os(3);
  for (std::size_t i = 0; i < 3; ++i) os[i] = kShape[static_cast<std::size_t>(dims[i])];
  const std::vector<double> x = random_values(kN, 6);
  std::vector<double> y1(kN), y2(kN);
  auto loop = [&] {
    const std::array<I, 3> xs{128 * 128, 128, 1};
    std::array<I, 3> pos{};
    I src = 0;
    for (std::size_t i = 0; i < kN; ++i) {
      y1[i] = x[static_cast<std::size_t>(src)];
      for (std::size_t d = 3; d-- > 0;) {
        const I st = xs[static_cast<std::size_t>(dims[d])];
        ++pos[d];
        src += st;
        if (pos[d] < os[d]) break;
        src -= st * pos[d];
        pos[d] = 0;
      }
    }
  };
  ab(state, loop, [&] { probe::runners::nd::permute(x.data(), kShape, dims, y2.data()); });
  if (y1 != y2) state.SkipWithError("results differ");
}

// Not adopted: expand [1, 128, 128] -> [64, 128, 128] as xt::broadcast assigned
// to a fixed-rank adaptor, against the index loop expand uses (offsets per
// inner run, then a gather).
void BM_ExpandBroadcast(benchmark::State& state) {
  const std::vector<double> x = random_values(128 * 128, 3);
  std::vector<double> y1(kN), y2(kN);
  auto loop = [&] {
    std::vector<I> idx(kN);
    for (std::size_t o = 0; o < 64; ++o)
      for (std::size_t j = 0; j < 128 * 128; ++j) idx[o * 128 * 128 + j] = static_cast<I>(j);
    for (std::size_t i = 0; i < kN; ++i) y1[i] = x[static_cast<std::size_t>(idx[i])];
  };
  auto xt = [&] {
    const std::array<std::size_t, 3> in{1, 128, 128}, out{64, 128, 128};
    const auto a = xt::adapt(x.data(), x.size(), xt::no_ownership(), in);
    auto o = xt::adapt(y2.data(), kN, xt::no_ownership(), out);
    xt::noalias(o) = xt::broadcast(a, out);
  };
  ab(state, loop, xt);
  if (y1 != y2) state.SkipWithError("results differ");
}

// Not adopted: zip's broadcast [64, 128, 128] + [128] as an xtensor expression,
// against broadcast_loop's inner runs.
void BM_BroadcastAdd(benchmark::State& state) {
  const std::vector<double> a = random_values(kN, 4), b = random_values(128, 5);
  std::vector<double> z1(kN), z2(kN);
  auto loop = [&] {
    for (std::size_t r = 0; r < 64 * 128; ++r)
      for (std::size_t j = 0; j < 128; ++j) z1[r * 128 + j] = a[r * 128 + j] + b[j];
  };
  auto xt = [&] {
    const std::array<std::size_t, 3> s{64, 128, 128};
    const auto xa = xt::adapt(a.data(), kN, xt::no_ownership(), s);
    const auto xb = xt::adapt(b.data(), b.size(), xt::no_ownership(), std::array<std::size_t, 1>{128});
    auto xz = xt::adapt(z2.data(), kN, xt::no_ownership(), s);
    xt::noalias(xz) = xa + xb;
  };
  ab(state, loop, xt);
  if (z1 != z2) state.SkipWithError("results differ");
}

}  // namespace

BENCHMARK(BM_SumTo)->DenseRange(0, 1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PermuteForwardBackward)->DenseRange(0, 1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PermuteDirectLoop)->DenseRange(0, 1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ExpandBroadcast)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BroadcastAdd)->Unit(benchmark::kMillisecond);
