// Real-data dump compare throughput (probe compare on two tensor dumps) against a streaming read() of the
// same tensor files, both from a warm page cache, in one run. Counter `vs_read` = read time / compare time.
//   probe_dumpcomparebench [--benchmark_min_time=1]   (PROBE_BENCH_MB=1024 sets the size of EACH dump;
//   PROBE_BENCH_TENSORS=8 the number of float32 .pt tensors it is split into)
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "BenchUtil.h"
#include "probe/dump_compare.h"
#include "probe/tensor_file.h"

namespace {

namespace fs = std::filesystem;

struct Dumps {
  probe::bench::ScratchDir dir{"probe-dcbench"};
  std::string npu_json, bench_json;
  std::vector<std::string> files;  // every tensor file of both dumps
  std::size_t bytes = 0;           // tensor data of both dumps

  Dumps() {
    const std::size_t total = probe::bench::env_size("PROBE_BENCH_MB", 1024) * (std::size_t{1} << 20);
    const int tensors = static_cast<int>(probe::bench::env_size("PROBE_BENCH_TENSORS", 8));
    const auto n = static_cast<std::int64_t>(total / sizeof(float) / static_cast<std::size_t>(tensors));
    for (const char* side : {"npu", "bench"}) {
      const fs::path rank = fs::path(dir.path) / side / "step0" / "rank0";
      fs::create_directories(rank / "dump_tensor_data");
      std::string data;
      for (int k = 0; k < tensors; ++k) {
        probe::Tensor t = probe::Tensor::zeros(probe::DType::Float32, probe::Shape{n});
        float* p = t.mutable_data<float>();
        const bool npu = std::string(side) == "npu";
        for (std::int64_t i = 0; i < n; ++i)
          p[i] = static_cast<float>((i * 7 + k) % 1000) * 0.001f - 0.5f + (npu && i % 3 == 0 ? 1e-4f : 0.f);
        const std::string key = fmt::format("Torch.add.{}.forward", k);
        const std::string name = key + ".output.0.pt";
        const std::string path = (rank / "dump_tensor_data" / name).string();
        probe::save_pt(path, t);
        files.push_back(path);
        bytes += t.nbytes();
        data += fmt::format(
            "{}  \"{}\": {{\n   \"input_args\": [],\n   \"input_kwargs\": {{}},\n   \"output\": [\n    "
            "{{\"type\": "
            "\"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [{}], \"Max\": 0.499, \"Min\": -0.5, "
            "\"Mean\": 0.0, \"Norm\": 1.0, \"requires_grad\": false, \"data_name\": \"{}\"}}\n   ]\n  }}",
            k ? ",\n" : "", key, n, name);
      }
      std::ofstream(rank / "dump.json") << "{\n \"task\": \"tensor\",\n \"level\": \"L1\",\n \"framework\": "
                                           "\"pytorch\",\n \"dump_data_dir\": \""
                                        << (rank / "dump_tensor_data").string() << "\",\n \"data\": {\n"
                                        << data << "\n }\n}";
      (std::string(side) == "npu" ? npu_json : bench_json) = (rank / "dump.json").string();
    }
  }
};

const Dumps& dumps() {
  static Dumps d;
  return d;
}

double g_read_seconds = 0;

// Runs `body` per iteration; BM_StreamRead is the baseline of BM_DumpCompareRealData's `vs_read`.
template <class F>
void timed(benchmark::State& state, F&& body, probe::bench::Role role = probe::bench::Role::Measured) {
  probe::bench::timed(state, dumps().bytes, g_read_seconds, role, body);
}

// Streaming read of every tensor file through one reused 8 MiB buffer, touching every byte.
void BM_StreamRead(benchmark::State& state) {
  const Dumps& d = dumps();
  std::vector<char> buf(8u << 20);
  timed(
      state,
      [&] {
        unsigned long long acc = 0;
        for (const auto& f : d.files) {
          int fd = ::open(f.c_str(), O_RDONLY);
          for (;;) {
            ssize_t n = ::read(fd, buf.data(), buf.size());
            if (n <= 0) break;
            for (ssize_t i = 0; i < n; i += 64)
              acc += static_cast<unsigned char>(buf[static_cast<std::size_t>(i)]);
          }
          ::close(fd);
        }
        benchmark::DoNotOptimize(acc);
      },
      probe::bench::Role::Baseline);
}

void BM_DumpCompareRealData(benchmark::State& state) {
  const Dumps& d = dumps();
  probe::DumpCompareOptions o;
  timed(state, [&] {
    probe::DumpCompareTable t = probe::compare_dump_files(d.npu_json, d.bench_json, "", o);
    benchmark::DoNotOptimize(t.rows.data());
    if (t.rows.size() != d.files.size() / 2) state.SkipWithError("unexpected row count");
  });
}

}  // namespace

BENCHMARK(BM_StreamRead)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DumpCompareRealData)->Unit(benchmark::kMillisecond)->UseRealTime();
