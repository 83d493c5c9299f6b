// dump.json parsing speed on a big generated dump (msprobe layout: json.dump indent=1, tensor mode),
// against two baselines measured in the same run: reading the file, and RapidJSON's own SAX parse with
// the same flags and a handler that does nothing.
//
//   build/benchmarks/probe_dumpjsonbench                       # generates ~200 MB in $TMPDIR
//   PROBE_BENCH_DUMP_MB=50 build/benchmarks/probe_dumpjsonbench
//   PROBE_BENCH_DUMP=/path/to/dump.json build/benchmarks/probe_dumpjsonbench   # a real dump
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <rapidjson/reader.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <new>
#include <random>
#include <string>

#include "probe/dump.h"

namespace {

std::string g_path;
// Baselines in thread CPU seconds: the ratios stay meaningful on a busy machine.
double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
double g_read_seconds = 0, g_raw_seconds = 0;

// One msprobe tensor object at indent depth `d` (indent=1: one space per level).
void tensor(std::string& out, int d, std::mt19937& rng, const std::string& data_name, bool last) {
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  const std::string in(d, ' '), in1(d + 1, ' '), in2(d + 2, ' ');
  static const char* dtypes[] = {"torch.float32", "torch.bfloat16", "torch.float16", "torch.int64",
                                 "torch.bool"};
  const char* dtype = dtypes[rng() % 5];
  const int rank = 1 + static_cast<int>(rng() % 4);
  out += in + "{\n";
  out += in1 + "\"type\": \"torch.Tensor\",\n";
  out += in1 + fmt::format("\"dtype\": \"{}\",\n", dtype);
  out += in1 + "\"shape\": [\n";
  for (int i = 0; i < rank; ++i)
    out += in2 + fmt::format("{}{}\n", 1 + rng() % 4096, i + 1 < rank ? "," : "");
  out += in1 + "],\n";
  if (std::string_view(dtype) == "torch.bool") {
    out += in1 + "\"Max\": true,\n" + in1 + "\"Min\": false,\n" + in1 + "\"Mean\": null,\n" + in1 +
           "\"Norm\": null,\n";
  } else {
    const double a = u(rng), b = u(rng);
    out += in1 + fmt::format("\"Max\": {},\n", static_cast<double>(std::max(a, b)));
    out += in1 + fmt::format("\"Min\": {},\n", static_cast<double>(std::min(a, b)));
    out += in1 + fmt::format("\"Mean\": {},\n", static_cast<double>(u(rng)) * 1e-3);
    out += in1 + (rng() % 50 == 0 ? std::string("\"Norm\": NaN,\n")
                                  : fmt::format("\"Norm\": {},\n", static_cast<double>(u(rng)) * 300 + 1000));
  }
  out += in1 + fmt::format("\"requires_grad\": {},\n", rng() % 2 ? "true" : "false");
  out += in1 + fmt::format("\"data_name\": \"{}\"\n", data_name);
  out += in + (last ? "}\n" : "},\n");
}

std::string generate(std::size_t target_bytes) {
  std::mt19937 rng(1234);
  std::string out =
      "{\n \"task\": \"tensor\",\n \"level\": \"mix\",\n \"framework\": \"pytorch\",\n"
      " \"dump_data_dir\": \"/dump/step0/rank0/dump_tensor_data\",\n \"data\": {\n";
  static const char* apis[] = {"Functional.linear", "Torch.matmul", "Tensor.__add__",  "Functional.gelu",
                               "NPU.npu_rms_norm",  "Torch.cat",    "Aten.add.Tensor", "Tensor.view"};
  for (int n = 0; out.size() < target_bytes; ++n) {
    const std::string key = fmt::format("{}.{}.forward", apis[n % 8], n / 8);
    out += fmt::format("{}  \"{}\": {{\n", n ? ",\n" : "", key);
    out += "   \"input_args\": [\n";
    const int inputs = 1 + n % 3;
    for (int i = 0; i < inputs; ++i) tensor(out, 4, rng, fmt::format("{}.input.{}.pt", key, i), false);
    out += "    {\n     \"type\": \"int\",\n     \"value\": " + std::to_string(n % 7) + "\n    }\n   ],\n";
    out +=
        "   \"input_kwargs\": {\n    \"dim\": {\n     \"type\": \"int\",\n     \"value\": -1\n    },\n"
        "    \"dtype\": {\n     \"type\": \"torch.dtype\",\n     \"value\": \"torch.float32\"\n    }\n   "
        "},\n";
    out += "   \"is_recompute\": false,\n   \"output\": [\n";
    tensor(out, 4, rng, key + ".output.0.pt", true);
    out += "   ]\n  }";
  }
  out += "\n }\n}";
  return out;
}

void ensure_dump() {
  if (!g_path.empty()) return;
  if (const char* p = std::getenv("PROBE_BENCH_DUMP")) {
    g_path = p;
    return;
  }
  const std::size_t mb = std::getenv("PROBE_BENCH_DUMP_MB")
                             ? std::strtoull(std::getenv("PROBE_BENCH_DUMP_MB"), nullptr, 10)
                             : 200;
  g_path = (std::filesystem::temp_directory_path() / fmt::format("probe_bench_dump_{}mb.json", mb)).string();
  std::error_code ec;
  if (std::filesystem::exists(g_path, ec)) return;
  const std::string text = generate(mb << 20);
  std::FILE* f = std::fopen(g_path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + g_path);
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

// 64-byte aligned, as probe's reader: a std::string's heap block lies 16 bytes off a 32-byte boundary,
// where the kernel's copy runs at a third of the speed on AMD Zen 3.
struct Text {
  struct Free {
    void operator()(char* p) const noexcept { ::operator delete[](p, std::align_val_t{64}); }
  };
  std::unique_ptr<char[], Free> bytes;
  char* data() const { return bytes.get(); }
};
Text read_all(const std::string& path) {
  const std::size_t size = std::filesystem::file_size(path);
  Text t{std::unique_ptr<char[], Text::Free>(new (std::align_val_t{64}) char[size + 16])};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  const std::size_t n = std::fread(t.data(), 1, size, f);
  std::fclose(f);
  std::memset(t.data() + n, 0, 16);
  return t;
}

// Bytes per iteration, so Google Benchmark prints the throughput (bytes_per_second).
void report(benchmark::State& state) {
  const auto bytes = static_cast<std::int64_t>(std::filesystem::file_size(g_path));
  state.SetBytesProcessed(bytes * state.iterations());
}

// Baseline 1: read the file into memory (what any parser must pay at least).
void BM_ReadFile(benchmark::State& state) {
  ensure_dump();
  const double start = cpu_now();
  for (auto _ : state) benchmark::DoNotOptimize(read_all(g_path));
  g_read_seconds = (cpu_now() - start) / static_cast<double>(state.iterations());
  report(state);
}

// Baseline 2: read + RapidJSON's raw SAX parse with probe's flags and a do-nothing handler (numbers
// stay text here; probe converts them with std::from_chars on top).
void BM_RapidJsonRawParse(benchmark::State& state) {
  ensure_dump();
  // probe's flags (lib/dump/JsonSupport.h): in situ, UTF-8 validated, numbers as text, NaN/Infinity.
  constexpr unsigned kFlags = rapidjson::kParseInsituFlag | rapidjson::kParseValidateEncodingFlag |
                              rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseNanAndInfFlag;
  const double start = cpu_now();
  for (auto _ : state) {
    Text text = read_all(g_path);
    rapidjson::InsituStringStream stream(text.data());
    rapidjson::BaseReaderHandler<> handler;
    rapidjson::Reader reader;
    if (!reader.Parse<kFlags>(stream, handler)) state.SkipWithError("raw parse failed");
  }
  g_raw_seconds = (cpu_now() - start) / static_cast<double>(state.iterations());
  report(state);
}

// probe: read + parse into the typed model. Freeing the model is timed apart (free_ms): it is not
// parsing, but a caller that drops the Dump pays it too.
void BM_DumpOpen(benchmark::State& state) {
  ensure_dump();
  std::size_t entries = 0;
  double open_seconds = 0, free_seconds = 0;
  for (auto _ : state) {
    const double t0 = cpu_now();
    auto d = std::make_unique<probe::Dump>(probe::Dump::open(g_path));
    const double t1 = cpu_now();
    entries = d->entries().size();
    benchmark::DoNotOptimize(d);
    state.PauseTiming();
    const double t2 = cpu_now();
    d.reset();
    free_seconds += cpu_now() - t2;
    state.ResumeTiming();
    open_seconds += t1 - t0;
  }
  const double n = static_cast<double>(state.iterations());
  report(state);
  state.counters["entries"] = static_cast<double>(entries);
  state.counters["MB"] = static_cast<double>(std::filesystem::file_size(g_path)) / 1e6;
  state.counters["free_cpu_ms"] = free_seconds / n * 1e3;
  if (g_read_seconds > 0) state.counters["x_read_time"] = open_seconds / n / g_read_seconds;
  if (g_raw_seconds > 0) state.counters["x_raw_parse_time"] = open_seconds / n / g_raw_seconds;
}

BENCHMARK(BM_ReadFile)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_RapidJsonRawParse)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_DumpOpen)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace
