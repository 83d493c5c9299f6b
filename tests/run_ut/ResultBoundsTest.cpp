// Statistics dumps: a few hundred bytes of arguments (repeat sizes, arange bounds, num_classes) can ask for
// results of any size. --max_api_elements bounds them before the bench allocates: each API below asks for
// about 2^30 result elements (8 GiB of float64) and must be SKIP with the reason, quickly and in little
// memory, while normal-sized calls of the same APIs still run.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/ScratchDir.h"
#include "probe/csv.h"
#include "probe/precheck_frame.h"
#include "probe/run_ut_stream.h"
#include "probe/tensor.h"
#include "probe/tensor_file.h"

namespace {
namespace fs = std::filesystem;
using probe::testing::ScratchDir;

struct Measured {
  int code = -1;
  long max_rss_kb = 0;
  double seconds = 0;
};

// Runs `probe ARGS` as a direct child (stdout and stderr to /dev/null) and measures that one process:
// wait4 reports its own peak RSS, unlike RUSAGE_CHILDREN, which covers every child the test binary ran.
Measured run_measured(std::vector<std::string> args) {
  std::vector<char*> argv;
  std::string exe = PROBE_CLI_PATH;
  argv.push_back(exe.data());
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  Measured m;
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (FILE* null = std::fopen("/dev/null", "w")) {
      ::dup2(fileno(null), 1);
      ::dup2(fileno(null), 2);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  if (pid < 0) return m;
  int status = 0;
  rusage ru{};
  if (::wait4(pid, &status, 0, &ru) != pid) return m;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  m.max_rss_kb = ru.ru_maxrss;
  return m;
}

std::string tensor(const std::string& dtype, const std::string& shape, const std::string& max = "1.0",
                   const std::string& min = "-1.0") {
  return R"({"type": "torch.Tensor", "dtype": ")" + dtype + R"(", "shape": [)" + shape + R"(], "Max": )" +
         max + R"(, "Min": )" + min + R"(, "Mean": 0.0, "Norm": 1.0, "requires_grad": false})";
}
std::string f32(const std::string& shape) { return tensor("torch.float32", shape); }
std::string i(long long v) { return R"({"type": "int", "value": )" + std::to_string(v) + "}"; }
std::string fl(double v) { return R"({"type": "float", "value": )" + std::to_string(v) + "}"; }
std::string ints(const std::vector<long long>& v) {
  std::string s = "[";
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + i(v[k]);
  return s + "]";
}
std::string size(const std::string& list) { return R"({"type": "torch.Size", "value": )" + list + "}"; }

std::string entry(const std::string& name, const std::string& args, const std::string& kwargs = "") {
  return "\"" + name + ".forward\": {\"input_args\": [" + args + "], \"input_kwargs\": {" + kwargs +
         "}, \"output\": []}";
}

std::string statistics_dump(const std::vector<std::string>& entries) {
  std::string data;
  for (const auto& e : entries) data += (data.empty() ? "" : ", ") + e;
  return R"({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {)" +
         data + "}}";
}

// A result row's cell, empty where the row ends early (a passing row has no message cell).
std::string cell(const std::vector<std::string>& row, std::size_t i) { return i < row.size() ? row[i] : ""; }

constexpr long long k15 = 32768;  // 2^15: two of these make 2^30

TEST(ResultBounds, HugeResultsAreSkipBeforeAllocating) {
  const std::vector<std::string> huge = {
      entry("Tensor.repeat.0", f32("1, 1") + ", " + i(k15) + ", " + i(k15)),
      // The 528-byte dump that took 6.3 GB and 15 s: 16383^2 elements, just under the runners' own cap.
      entry("Tensor.repeat.1", f32("1, 1") + ", " + i(16383) + ", " + i(16383)),
      entry("Tensor.expand.0", f32("1, 1") + ", " + i(k15) + ", " + i(k15)),
      entry("Tensor.new_full.0", f32("1") + ", " + ints({k15, k15}) + ", " + fl(1.0)),
      entry("Tensor.new_zeros.0", f32("1") + ", " + size("[32768, 32768]")),
      entry("Torch.arange.0", i(0) + ", " + i(k15 * k15) + ", " + i(1)),
      // [1, 1, 2, 2] scaled by 16384: 2^2 * 2^28 spatial elements.
      entry("Functional.interpolate.0", f32("1, 1, 2, 2"), R"("scale_factor": )" + fl(16384.0)),
      entry("Functional.one_hot.0", tensor("torch.int64", "1024", "3", "0") + ", " + i(1 << 20)),
      entry("Torch.outer.0", f32("32768") + ", " + f32("32768")),
      entry("Torch.kron.0", f32("32768") + ", " + f32("32768")),
      entry("Torch.cdist.0", f32("32768, 1") + ", " + f32("32768, 1")),
      entry("Torch.tile.0", f32("1, 1") + ", " + ints({k15, k15})),
      entry("Torch.broadcast_to.0", f32("1") + ", " + ints({k15, k15})),
  };
  const std::vector<std::string> normal = {
      entry("Tensor.repeat.2", f32("2, 3") + ", " + i(2) + ", " + i(2)),
      entry("Torch.arange.1", i(0) + ", " + i(10) + ", " + i(1)),
      entry("Torch.outer.1", f32("3") + ", " + f32("4")),
  };
  ScratchDir t("bounds");
  std::vector<std::string> all = huge;
  all.insert(all.end(), normal.begin(), normal.end());
  std::ofstream(t.path() / "dump.json") << statistics_dump(all);
  const Measured m = run_measured({"run_ut", "-api_info", (t.path() / "dump.json").string(), "-o",
                                   t.path().string(), "--timestamp", "20260304050607", "-q"});
  ASSERT_EQ(m.code, 0);
  // Any of these results alone needs gigabytes; refusing them all takes a few megabytes above the process's
  // own (sanitizer builds add their shadow memory) and a fraction of a second.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  constexpr long kMaxRssKb = 512 * 1024;
#else
  constexpr long kMaxRssKb = 96 * 1024;
#endif
  EXPECT_LT(m.max_rss_kb, kMaxRssKb);
  EXPECT_LT(m.seconds, 5.0);
  auto rows = probe::csv_read_file((t.path() / "accuracy_checking_result_20260304050607.csv").string());
  ASSERT_EQ(rows.size(), 1 + huge.size() + normal.size());
  std::map<std::string, std::vector<std::string>> by_name;
  for (std::size_t r = 1; r < rows.size(); ++r) by_name[rows[r][0]] = rows[r];
  const std::string tail = " elements, above the limit of 16777216 (raise it with --max_api_elements)";
  // 2^30 = 1073741824 prints as 1.074e+09; 16383^2 = 268402689 as 2.684e+08.
  for (const char* name :
       {"Tensor.repeat.0", "Tensor.expand.0", "Tensor.new_full.0", "Tensor.new_zeros.0", "Torch.arange.0",
        "Functional.interpolate.0", "Functional.one_hot.0", "Torch.outer.0", "Torch.kron.0", "Torch.cdist.0",
        "Torch.tile.0", "Torch.broadcast_to.0"}) {
    ASSERT_TRUE(by_name.count(name)) << name;
    EXPECT_EQ(by_name[name][1], "SKIP") << name;
    EXPECT_EQ(cell(by_name[name], 3), "the result of this API would hold about 1.074e+09" + tail) << name;
  }
  EXPECT_EQ(cell(by_name["Tensor.repeat.1"], 3), "the result of this API would hold about 2.684e+08" + tail);
  for (const char* name : {"Tensor.repeat.2", "Torch.arange.1", "Torch.outer.1"}) {
    ASSERT_TRUE(by_name.count(name)) << name;
    EXPECT_NE(by_name[name][1], "SKIP") << name << ": " << cell(by_name[name], 3);
  }
}

// The limit is the option's: with it raised, a result of 2^12 elements that a limit of 2^12 - 1 refuses
// is checked.
TEST(ResultBounds, TheLimitIsTheOption) {
  ScratchDir t("bounds_opt");
  std::ofstream(t.path() / "dump.json")
      << statistics_dump({entry("Tensor.repeat.0", f32("1, 1") + ", " + i(64) + ", " + i(64))});
  const std::string dump = (t.path() / "dump.json").string();
  for (const auto& [limit, dir] : {std::pair<std::string, std::string>{"4095", "a"}, {"4096", "b"}}) {
    const Measured m = run_measured({"run_ut", "-api_info", dump, "-o", (t.path() / dir).string(),
                                     "--timestamp", "20260304050607", "-q", "--max_api_elements", limit});
    ASSERT_EQ(m.code, 0);
  }
  auto a = probe::csv_read_file((t.path() / "a" / "accuracy_checking_result_20260304050607.csv").string());
  auto b = probe::csv_read_file((t.path() / "b" / "accuracy_checking_result_20260304050607.csv").string());
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(a[1][1], "SKIP");
  EXPECT_EQ(cell(a[1], 3),
            "the result of this API would hold about 4096 elements, above the limit of 4095 (raise it with "
            "--max_api_elements)");
  EXPECT_NE(b[1][1], "SKIP") << cell(b[1], 3);
}

// A tensor dump's outputs come with their files: a result as large as the dumped outputs is checked even
// above the limit, one larger than both (a one-element input file repeated 16383 x 16383 with a [2, 2]
// output on record) is refused before the bench allocates.
TEST(ResultBounds, TensorDumpsAllowTheirDumpedOutputsOnly) {
  ScratchDir t("bounds_tensor");
  const fs::path data = t.path() / "dump_tensor_data";
  fs::create_directories(data);
  auto desc = [](const std::string& shape, const std::string& file) {
    return R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [)" + shape +
           R"(], "Max": 1.0, "Min": 1.0, "Mean": 1.0, "Norm": 1.0, "requires_grad": false, "data_name": ")" +
           file + "\"}";
  };
  auto api = [&](const std::string& name, long long n) {
    probe::save_npy((data / (name + ".forward.input.0.npy")).string(),
                    probe::Tensor::from_values<float>({1.0f}, {1, 1}));
    probe::save_npy((data / (name + ".forward.output.0.npy")).string(),
                    probe::Tensor::from_values<float>({1.0f, 1.0f, 1.0f, 1.0f}, {2, 2}));
    return "\"" + name + ".forward\": {\"input_args\": [" + desc("1, 1", name + ".forward.input.0.npy") +
           ", " + i(n) + ", " + i(n) + "], \"input_kwargs\": {}, \"output\": [" +
           desc("2, 2", name + ".forward.output.0.npy") + "]}";
  };
  std::ofstream(t.path() / "dump.json")
      << R"({"task": "tensor", "level": "L1", "framework": "pytorch", "dump_data_dir": "dump_tensor_data", )"
      << R"("data": {)" << api("Tensor.repeat.0", 16383) << ", " << api("Tensor.repeat.1", 2) << "}}";
  // With a limit of 3 the [2, 2] result is above the limit but not above its dumped output.
  const Measured m = run_measured({"run_ut", "-api_info", (t.path() / "dump.json").string(), "-o",
                                   (t.path() / "out").string(), "--timestamp", "20260304050607", "-q",
                                   "--max_api_elements", "3"});
  ASSERT_EQ(m.code, 0);
  EXPECT_LT(m.seconds, 5.0);
  auto rows =
      probe::csv_read_file((t.path() / "out" / "accuracy_checking_result_20260304050607.csv").string());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][0], "Tensor.repeat.0");
  EXPECT_EQ(rows[1][1], "SKIP");
  EXPECT_EQ(
      cell(rows[1], 3),
      "the result of this API would hold about 2.684e+08 elements, more than its dumped outputs (4) and the "
      "limit of 3 (raise it with --max_api_elements)");
  EXPECT_EQ(rows[2][0], "Tensor.repeat.1");
  EXPECT_EQ(rows[2][1], "pass") << cell(rows[2], 3);
}

// The online server checks each received record through the same code: one frame of a few hundred bytes
// asking for a 16383 x 16383 repeat (6.3 GB before) is SKIP with the reason, and the process's peak RSS
// does not move by more than a few megabytes.
TEST(ResultBounds, OnlineRecordsAreBoundedToo) {
  ScratchDir t("bounds_stream");
  const std::string header =
      statistics_dump({entry("Tensor.repeat.0", f32("1, 1") + ", " + i(16383) + ", " + i(16383))});
  const auto frame = probe::online::encode_frame(header, {});
  rusage before{}, after{};
  ::getrusage(RUSAGE_SELF, &before);
  probe::RunUtStreamOptions o;
  o.run_ut.out_dir = (t.path() / "stream").string();
  o.run_ut.timestamp = "20260304050607";
  probe::RunUtStream stream(o);
  ASSERT_TRUE(stream.push(probe::online::decode_frame(frame)));
  const auto s = stream.finish();
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024);
  EXPECT_EQ(s.run_ut.skip, 1u);
  auto rows = probe::csv_read_file(s.run_ut.result_csv);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][0], "Tensor.repeat.0");
  EXPECT_EQ(
      cell(rows[1], 3),
      "the result of this API would hold about 2.684e+08 elements, above the limit of 16777216 (raise it "
      "with --max_api_elements)");
}

}  // namespace
