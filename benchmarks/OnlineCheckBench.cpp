// probe::OnlineChecker costs. (1) What check() adds to the calling thread (black-list lookup, index, the copy
// of inputs and outputs, the enqueue) against the op's own time, for a bf16 add of 256 / 64K / 1M elements:
// counter `vs_op` = check() time / op time (both timed in the same run; the queue is drained outside the
// timed region so workers do not add queueing delays, though they run concurrently on the same cores).
// (2) Sustained ops/s of the whole checker (bench + judge + CSV rows) with 1 and 2 workers on 64K-element
// ops.
#include <benchmark/benchmark.h>

#include <chrono>
#include <vector>

#include "BenchUtil.h"
#include "probe/online_checker.h"
#include "probe/scalar_types.h"

namespace {

using probe::DType;
using probe::Tensor;

struct AddOp {
  Tensor a, b, out;
  explicit AddOp(std::int64_t n) {
    std::vector<double> x(static_cast<std::size_t>(n)), y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = 0.001 * static_cast<double>(i % 1000) - 0.5;
      y[i] = 0.5 - 0.0007 * static_cast<double>(i % 997);
    }
    a = Tensor::from_values<double>(x, {n}).to(DType::BFloat16);
    b = Tensor::from_values<double>(y, {n}).to(DType::BFloat16);
    out = Tensor::zeros(DType::BFloat16, {n});
  }
  // The "device kernel": widen, add, round once.
  void run() {
    const auto* pa = a.data<probe::bfloat16_t>();
    const auto* pb = b.data<probe::bfloat16_t>();
    auto* po = out.mutable_data<probe::bfloat16_t>();
    for (std::int64_t i = 0; i < a.numel(); ++i)
      po[i] = probe::to_bfloat16(static_cast<float>(probe::to_double(pa[i]) + probe::to_double(pb[i])));
  }
};

probe::OnlineCheckerOptions options(const std::string& dir, int workers) {
  probe::OnlineCheckerOptions o;
  o.dump_path = dir;
  o.workers = workers;
  o.queue_capacity = 256;
  return o;
}

void BM_CheckCostVsOp(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  probe::bench::ScratchDir dir("probe-online-bench");
  probe::OnlineChecker checker(options(dir.path, 1));
  AddOp op(n);
  double op_seconds = 0, check_seconds = 0;
  std::int64_t iters = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    op.run();
    const auto t1 = std::chrono::steady_clock::now();
    checker.check("Torch.add", {{probe::Value(op.a), probe::Value(op.b)}, {}}, {probe::Value(op.out)});
    const auto t2 = std::chrono::steady_clock::now();
    op_seconds += std::chrono::duration<double>(t1 - t0).count();
    check_seconds += std::chrono::duration<double>(t2 - t1).count();
    state.SetIterationTime(std::chrono::duration<double>(t2 - t1).count());
    if (++iters % 64 == 0) checker.flush();  // untimed: keeps the queue from blocking the timed calls
  }
  checker.flush();
  state.counters["op_us"] = 1e6 * op_seconds / static_cast<double>(iters);
  state.counters["check_us"] = 1e6 * check_seconds / static_cast<double>(iters);
  state.counters["vs_op"] = check_seconds / op_seconds;
}
BENCHMARK(BM_CheckCostVsOp)
    ->Arg(256)
    ->Arg(64 << 10)
    ->Arg(1 << 20)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

void BM_SustainedOpsPerSecond(benchmark::State& state) {
  const int workers = static_cast<int>(state.range(0));
  AddOp op(64 << 10);
  op.run();
  const int kOps = 200;
  for (auto _ : state) {
    probe::bench::ScratchDir dir("probe-online-bench");
    probe::OnlineChecker checker(options(dir.path, workers));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kOps; ++i)
      checker.check("Torch.add", {{probe::Value(op.a), probe::Value(op.b)}, {}}, {probe::Value(op.out)});
    checker.flush();
    const auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
  state.counters["ops_per_s"] = benchmark::Counter(
      static_cast<double>(kOps) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SustainedOpsPerSecond)->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
