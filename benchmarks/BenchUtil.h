// Helpers shared by the benchmark drivers that report a ratio against a baseline measured in the same run.
#pragma once

#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace probe::bench {

/// $var as a whole number, else `fallback`.
inline std::size_t env_size(const char* var, std::size_t fallback) {
  const char* v = std::getenv(var);
  return v ? std::stoul(v) : fallback;
}

/// A fresh directory under the system temp dir, removed with its contents on destruction.
struct ScratchDir {
  std::string path;
  explicit ScratchDir(const std::string& prefix) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    path = ::mkdtemp(tmpl.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

/// Whether a timed variant is the run's baseline (registered first, so it runs first) or is compared to it.
enum class Role { Baseline, Measured };

/// Runs `body` once per iteration, timing only the body, and reports `bytes` per iteration as throughput.
/// A Baseline stores its seconds per iteration in `baseline_seconds`; a Measured variant gets the counter
/// `vs_read` = baseline seconds / its own seconds, once a baseline has run.
template <class F>
void timed(benchmark::State& state, std::size_t bytes, double& baseline_seconds, Role role, F&& body) {
  double total = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    body();
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const double per_iter = total / static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
  if (role == Role::Baseline)
    baseline_seconds = per_iter;
  else if (baseline_seconds > 0)
    state.counters["vs_read"] = baseline_seconds / per_iter;
}

}  // namespace probe::bench
