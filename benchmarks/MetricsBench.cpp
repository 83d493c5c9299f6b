// Fused metrics kernel throughput on 64M-element tensors, against the streaming-read bandwidth of the same
// two buffers measured in the same run (a plain parallel sum over both). Counters: G elements/s, and
// `vs_stream` = kernel time / streaming time (1 / vs_stream = fraction of streaming bandwidth reached).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

#include "probe/metrics.h"
#include "probe/parallel.h"
#include "standards/ErrorBound.h"
#include "support/ThreadPool.h"

namespace {

constexpr std::int64_t kN = 64ll << 20;

probe::Tensor bench_f64() {
  static probe::Tensor t = [] {
    probe::Tensor x = probe::Tensor::zeros(probe::DType::Float64, probe::Shape{kN});
    double* p = x.mutable_data<double>();
    std::mt19937_64 rng(1);
    std::normal_distribution<double> nd;
    for (std::int64_t i = 0; i < kN; ++i) p[i] = nd(rng);
    return x;
  }();
  return t;
}
probe::Tensor device(probe::DType dt) {
  probe::Tensor b = bench_f64();
  return b.to(dt);  // rounding to the device dtype is the "error"
}

double stream_seconds(const probe::Tensor& a, const probe::Tensor& b) {
  const auto* pa = reinterpret_cast<const std::uint64_t*>(a.bytes());
  const auto* pb = reinterpret_cast<const std::uint64_t*>(b.bytes());
  std::int64_t na = static_cast<std::int64_t>(a.nbytes() / 8), nb = static_cast<std::int64_t>(b.nbytes() / 8);
  std::vector<std::uint64_t> part(256, 0);
  auto t0 = std::chrono::steady_clock::now();
  probe::detail::parallel_for(0, 256, 1, [&](std::int64_t c0, std::int64_t c1, int) {
    for (std::int64_t c = c0; c < c1; ++c) {
      std::uint64_t s = 0;
      for (std::int64_t i = na * c / 256; i < na * (c + 1) / 256; ++i) s += pa[i];
      for (std::int64_t i = nb * c / 256; i < nb * (c + 1) / 256; ++i) s += pb[i];
      part[static_cast<std::size_t>(c)] = s;
    }
  });
  auto t1 = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(part.data());
  return std::chrono::duration<double>(t1 - t0).count();
}

void run(benchmark::State& state, probe::DType dt, bool all_metrics) {
  int threads = state.range(0) == 0 ? static_cast<int>(std::thread::hardware_concurrency()) : 1;
  probe::set_num_threads(threads);
  probe::Tensor b = bench_f64(), d = device(dt);
  probe::MetricParams p;
  p.compute_ulp = all_metrics;
  p.compute_extra = all_metrics;
  double kernel = 0, stream = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    probe::TensorMetrics m = probe::compute_metrics(b, d, p);
    auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(m.rmse);
    kernel += std::chrono::duration<double>(t1 - t0).count();
    stream += stream_seconds(b, d);
  }
  double it = static_cast<double>(state.iterations());
  state.counters["threads"] = threads;
  state.counters["Gelem_per_s"] = static_cast<double>(kN) * it / kernel / 1e9;
  state.counters["stream_Gelem_per_s"] = static_cast<double>(kN) * it / stream / 1e9;
  state.counters["fraction_of_stream"] = stream / kernel;
}

void BM_F32vsF64_RunUtSet(benchmark::State& s) { run(s, probe::DType::Float32, false); }
void BM_F32vsF64_All(benchmark::State& s) { run(s, probe::DType::Float32, true); }
void BM_BF16vsF64_RunUtSet(benchmark::State& s) { run(s, probe::DType::BFloat16, false); }
void BM_BF16vsF64_All(benchmark::State& s) { run(s, probe::DType::BFloat16, true); }

// The report's element-error histogram (MetricParams::histogram, the error bound scan's want_histogram): the
// same pass with it off and on, alternating which goes first, in one process. Counters: the best time of each
// (ms) and `on_over_off` = best on / best off.
template <class Pass>
void ab(benchmark::State& state, Pass pass) {
  int threads = state.range(0) == 0 ? static_cast<int>(std::thread::hardware_concurrency()) : 1;
  probe::set_num_threads(threads);
  double best[2] = {1e300, 1e300};
  int round = 0;
  for (auto _ : state) {
    for (int k = 0; k < 2; ++k) {
      const bool on = (k + round) % 2 == 1;
      auto t0 = std::chrono::steady_clock::now();
      pass(on);
      auto t1 = std::chrono::steady_clock::now();
      best[on] = std::min(best[on], std::chrono::duration<double>(t1 - t0).count());
    }
    ++round;
  }
  state.counters["threads"] = threads;
  state.counters["off_ms"] = best[0] * 1e3;
  state.counters["on_ms"] = best[1] * 1e3;
  state.counters["on_over_off"] = best[1] / best[0];
}

// run_ut's metric set of a float32 output (relative-error histogram).
void BM_Histogram_F32_RunUtSet(benchmark::State& s) {
  probe::Tensor b = bench_f64(), d = device(probe::DType::Float32);
  ab(s, [&](bool on) {
    probe::MetricParams p;
    p.compute_ulp = false;
    p.compute_extra = false;
    if (on) p.histogram = probe::HistogramUnit::RelativeError;
    probe::TensorMetrics m = probe::compute_metrics(b, d, p);
    benchmark::DoNotOptimize(m.rmse);
  });
}
// The ULP standard's set of a bfloat16 output (ULP histogram).
void BM_Histogram_BF16_Ulp(benchmark::State& s) {
  probe::Tensor b = bench_f64(), d = device(probe::DType::BFloat16);
  ab(s, [&](bool on) {
    probe::MetricParams p;
    p.compute_extra = false;
    p.ulp_min_eb = -126;
    p.ulp_mantissa_bits = 7;
    if (on) p.histogram = probe::HistogramUnit::Ulp;
    probe::TensorMetrics m = probe::compute_metrics(b, d, p);
    benchmark::DoNotOptimize(m.rmse);
  });
}
// D14's scan of a float32 output of an element-wise family (histogram in bound units).
void BM_Histogram_F32_ErrorBound(benchmark::State& s) {
  probe::Tensor b = bench_f64(), d = device(probe::DType::Float32);
  const probe::detail::BoundFamily* family = probe::detail::bound_family("exp");
  ab(s, [&](bool on) {
    probe::Verdict v = probe::detail::error_bound_verdict(*family, b, d, nullptr, 1, 3, on);
    benchmark::DoNotOptimize(v.status);
  });
}

// Arg 1 = one thread, 0 = all threads.
BENCHMARK(BM_F32vsF64_RunUtSet)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->Iterations(2)->UseRealTime();
BENCHMARK(BM_F32vsF64_All)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->Iterations(2)->UseRealTime();
BENCHMARK(BM_BF16vsF64_RunUtSet)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->Iterations(2)->UseRealTime();
BENCHMARK(BM_BF16vsF64_All)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->Iterations(2)->UseRealTime();
BENCHMARK(BM_Histogram_F32_RunUtSet)
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5)
    ->UseRealTime();
BENCHMARK(BM_Histogram_BF16_Ulp)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();
BENCHMARK(BM_Histogram_F32_ErrorBound)
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5)
    ->UseRealTime();

}  // namespace
