// End-to-end run_ut throughput on a generated tensor-mode dump holding >= 1 GiB of tensors
// (written by probe's own .npy writer into a temp dir): APIs/s and tensor GB/s, and the 1 -> 2
// thread scaling. Baseline in the same run: -n 1. Size with PROBE_RUN_UT_BENCH_MB (default 1024).
#include <benchmark/benchmark.h>
#include <fmt/core.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "probe/run_ut.h"
#include "probe/tensor.h"
#include "probe/tensor_file.h"

namespace {
namespace fs = std::filesystem;

struct GeneratedDump {
  fs::path dir;
  std::string json;
  std::size_t apis = 0;
  double tensor_bytes = 0;
};

std::string tensor_json(const std::string& data_name, std::int64_t n, const std::vector<float>& v) {
  double mx = -INFINITY, mn = INFINITY, sum = 0, sq = 0;
  for (float x : v) {
    mx = std::max<double>(mx, x);
    mn = std::min<double>(mn, x);
    sum += x;
    sq += static_cast<double>(x) * x;
  }
  return fmt::format(
      "{{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [{}], \"Max\": {}, \"Min\": "
      "{}, "
      "\"Mean\": {}, \"Norm\": {}, \"requires_grad\": false, \"data_name\": \"{}\"}}",
      n, mx, mn, sum / static_cast<double>(n), std::sqrt(sq), data_name);
}

// Half the APIs are relu, half add: cheap kernels, so the run is bound by loading and comparing.
const GeneratedDump& dump() {
  static GeneratedDump g = [] {
    GeneratedDump d;
    const char* env = std::getenv("PROBE_RUN_UT_BENCH_MB");
    const std::int64_t total_mb = env ? std::max(16L, std::atol(env)) : 1024;
    const std::int64_t n = 2 << 20;  // 8 MiB per float32 tensor
    d.dir = fs::temp_directory_path() / fmt::format("probe_run_ut_bench_{}", ::getpid());
    fs::create_directories(d.dir / "dump_tensor_data");
    std::string data = "{\n \"task\": \"tensor\",\n \"level\": \"L1\",\n \"framework\": \"pytorch\",\n";
    data += " \"dump_data_dir\": \"" + (d.dir / "dump_tensor_data").string() + "\",\n \"data\": {\n";
    std::vector<float> a(static_cast<std::size_t>(n)), b(a.size()), out(a.size());
    std::uint64_t state = 12345;
    auto next = [&state] {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<float>(static_cast<double>(state >> 11) * 0x1p-53 * 4.0 - 2.0);
    };
    std::int64_t written = 0;
    for (std::size_t k = 0; written < total_mb << 20; ++k) {
      bool relu = k % 2 == 0;
      std::string key = relu ? fmt::format("Functional.relu.{}.forward", k / 2)
                             : fmt::format("Tensor.__add__.{}.forward", k / 2);
      for (auto& x : a) x = next();
      for (auto& x : b) x = next();
      for (std::size_t i = 0; i < a.size(); ++i) out[i] = relu ? std::max(a[i], 0.0f) : a[i] + b[i];
      auto save = [&](const std::string& name, const std::vector<float>& v) {
        probe::save_npy((d.dir / "dump_tensor_data" / name).string(),
                        probe::Tensor::from_values(v, probe::Shape{n}));
        written += n * 4;
        return tensor_json(name, n, v);
      };
      std::string in0 = save(key + ".input.0.npy", a);
      std::string args = in0;
      if (!relu) args += ", " + save(key + ".input.1.npy", b);
      std::string o = save(key + ".output.0.npy", out);
      data += fmt::format("{}  \"{}\": {{\"input_args\": [{}], \"input_kwargs\": {{}}, \"output\": [{}]}}",
                          k ? ",\n" : "", key, args, o);
      ++d.apis;
    }
    data += "\n }\n}";
    d.tensor_bytes = static_cast<double>(written);
    d.json = (d.dir / "dump.json").string();
    std::ofstream(d.json) << data;
    std::atexit([] { fs::remove_all(dump().dir); });
    // The gigabyte just written is still being flushed to disk; runs measured during the writeback
    // were up to 4x slower than the same runs after it (1 thread: 40 vs 173 APIs/s).
    ::sync();
    return d;
  }();
  return g;
}

// Seconds per run with one thread, measured first in the same process: the scaling baseline.
double g_one_thread_seconds = 0;

// Baseline for the GB/s figure: only loading every tensor file of the dump (no checking).
void BM_LoadTensorsOnly(benchmark::State& state) {
  const auto& d = dump();
  for (auto _ : state) {
    double sum = 0;
    for (const auto& e : fs::directory_iterator(d.dir / "dump_tensor_data")) {
      probe::Tensor t = probe::load_tensor_file(e.path().string());
      const float* p = t.data<float>();
      for (std::int64_t i = 0; i < t.numel(); i += 1024) sum += p[i];  // touch every page
    }
    benchmark::DoNotOptimize(sum);
  }
  state.counters["tensor_GB/s"] =
      benchmark::Counter(d.tensor_bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_LoadTensorsOnly)->Unit(benchmark::kMillisecond)->Iterations(2)->UseRealTime();

// CPU seconds of the whole process (all threads): on a shared machine wall time mostly measures
// the other tenants, this measures probe's work.
double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

void BM_RunUt(benchmark::State& state) {
  const auto& d = dump();
  const int threads = static_cast<int>(state.range(0));
  std::size_t checked = 0;
  double cpu0 = process_cpu_seconds();
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    fs::path out = d.dir / fmt::format("out_{}", threads);
    fs::remove_all(out);
    probe::RunUtOptions o;
    o.api_info = d.json;
    o.out_dir = out.string();
    o.threads = threads;
    o.timestamp = "20260101000000";
    auto s = probe::run_ut(o);
    checked = s.checked;
    if (s.pass != s.apis) state.SkipWithError("expected every generated API to pass");
  }
  state.counters["APIs/s"] =
      benchmark::Counter(static_cast<double>(checked), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["tensor_GB/s"] =
      benchmark::Counter(d.tensor_bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  double per_run = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                   static_cast<double>(state.iterations());
  state.counters["process_cpu_s/run"] =
      (process_cpu_seconds() - cpu0) / static_cast<double>(state.iterations());
  if (threads == 1)
    g_one_thread_seconds = per_run;
  else if (g_one_thread_seconds > 0)
    state.counters["speedup_vs_1_thread"] = g_one_thread_seconds / per_run;
  state.counters["apis"] = static_cast<double>(d.apis);
  state.counters["tensor_GB"] = d.tensor_bytes / 1e9;
}
// An untimed run first pays the one-time costs (page-cache misses, the thread pool's start, first touch
// of the allocator's arenas), so that the baseline below is not penalised for them.
void BM_RunUtWarmUp(benchmark::State& state) {
  const auto& d = dump();
  for (auto _ : state) {
    probe::RunUtOptions o;
    o.api_info = d.json;
    o.out_dir = (d.dir / "out_warm_up").string();
    o.threads = 2;
    o.timestamp = "20260101000000";
    fs::remove_all(o.out_dir);
    benchmark::DoNotOptimize(probe::run_ut(o).checked);
  }
}
BENCHMARK(BM_RunUtWarmUp)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

// Baseline first (-n 1), then 2 threads; the ratio of their times is the scaling.
BENCHMARK(BM_RunUt)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(2)->UseRealTime();

}  // namespace
