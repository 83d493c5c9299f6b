// Load throughput of .npy and .pt tensor files against a plain read() of the same bytes, all from a
// warm page cache, in one run. Loading maps lazily, so every variant sums every element: the
// comparison is "bytes usable as a tensor per second". Counter `vs_read` = read() time / load time
// (target >= 0.7).
//   probe_tensorloadbench [--benchmark_min_time=2]   (PROBE_BENCH_MB=256 sets the file size)
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "BenchUtil.h"
#include "probe/tensor_file.h"

namespace {

struct Files {
  probe::bench::ScratchDir dir{"probe-bench"};
  std::string npy = dir.path + "/t.npy", pt = dir.path + "/t.pt";
  std::size_t data_bytes = 0;
  Files() {
    const std::size_t n =
        probe::bench::env_size("PROBE_BENCH_MB", 256) * (std::size_t{1} << 20) / sizeof(float);
    probe::Tensor t = probe::Tensor::zeros(probe::DType::Float32, probe::Shape{static_cast<std::int64_t>(n)});
    float* p = t.mutable_data<float>();
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<float>(i % 1000) * 0.001f;
    probe::save_npy(npy, t);
    probe::save_pt(pt, t);
    data_bytes = t.nbytes();
  }
};

const Files& files() {
  static Files f;
  return f;
}

// The same reduction for every variant: 8 independent float lanes so that it vectorises.
float sum(const float* p, std::size_t n) {
  float acc[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += p[i + k];
  for (; i < n; ++i) acc[0] += p[i];
  float s = 0;
  for (float a : acc) s += a;
  return s;
}

double g_read_seconds = 0;  // per iteration, from BM_PlainRead (registered first)

// Runs `body` per iteration; BM_PlainRead is the baseline of the others' `vs_read`.
template <class F>
void timed(benchmark::State& state, F&& body, probe::bench::Role role = probe::bench::Role::Measured) {
  probe::bench::timed(state, files().data_bytes, g_read_seconds, role, body);
}

void BM_PlainRead(benchmark::State& state) {
  const Files& f = files();
  // The destination buffer is reused across iterations: the most favourable baseline for read().
  std::vector<float> buf(f.data_bytes / sizeof(float) + 64);
  const std::size_t file_bytes = std::filesystem::file_size(f.npy);
  timed(
      state,
      [&] {
        int fd = ::open(f.npy.c_str(), O_RDONLY);
        char* dst = reinterpret_cast<char*>(buf.data());
        std::size_t got = 0;
        while (got < file_bytes) {
          ssize_t n = ::read(fd, dst + got, file_bytes - got);
          if (n <= 0) break;
          got += static_cast<std::size_t>(n);
        }
        ::close(fd);
        // The .npy header is 128 bytes here; sum the data that follows, as the loaders do.
        benchmark::DoNotOptimize(sum(buf.data() + 32, f.data_bytes / sizeof(float)));
      },
      probe::bench::Role::Baseline);
}

void BM_LoadNpy(benchmark::State& state) {
  const Files& f = files();
  timed(state, [&] {
    probe::Tensor t = probe::load_npy(f.npy);
    benchmark::DoNotOptimize(sum(t.data<float>(), static_cast<std::size_t>(t.numel())));
  });
}

void BM_LoadPt(benchmark::State& state) {
  const Files& f = files();
  timed(state, [&] {
    probe::Tensor t = probe::load_tensor_file(f.pt);
    benchmark::DoNotOptimize(sum(t.data<float>(), static_cast<std::size_t>(t.numel())));
  });
}

}  // namespace

BENCHMARK(BM_PlainRead)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoadNpy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoadPt)->Unit(benchmark::kMillisecond)->UseRealTime();
