// probe::OnlineChecker: verdicts (D8 and run_ut rules), output layout, dump modes, black list, unsupported
// ops, strided views, backpressure both ways, flush/destructor, concurrent callers and a kill -9 mid-run.
//
// Device outputs are computed here by hand: the exact sum of two bf16/fp16 values rounded once to the dtype
// (a correctly rounded kernel), or a deliberately wrong one.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "common/ScratchDir.h"
#include "probe/csv.h"
#include "probe/dump_writer.h"
#include "probe/error.h"
#include "probe/online_checker.h"
#include "probe/output_compare.h"
#include "probe/run_ut.h"
#include "probe/tensor_file.h"
#include "runners/LazyBlas.h"

namespace fs = std::filesystem;
using namespace probe;

namespace {

using TempDir = probe::testing::ScratchDir;

constexpr const char* kTs = "20260101120000123";

// D8's documented rule and layout, which most tests here check; the default (D14) has its own tests.
OnlineCheckerOptions options(const std::string& dir) {
  OnlineCheckerOptions o;
  o.dump_path = dir;
  o.timestamp = kTs;
  o.rule = OnlineRule::Documented;
  return o;
}

Tensor bf16(const std::vector<double>& v, Shape s) {
  return Tensor::from_values<double>(v, std::move(s)).to(DType::BFloat16);
}

// a + b with one rounding to bf16: what a correct kernel returns.
Tensor correct_sum(const Tensor& a, const Tensor& b) {
  const auto x = a.to_doubles(), y = b.to_doubles();
  std::vector<double> s(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) s[i] = x[i] + y[i];
  return bf16(s, a.shape());
}

struct Case {
  Tensor a, b, out;
};
Case add_case(double scale, bool broken) {
  std::vector<double> x, y;
  for (int i = 0; i < 64; ++i) {
    x.push_back(scale * (0.37 * i - 5.1));
    y.push_back(scale * (1.3 - 0.11 * i));
  }
  Case c{bf16(x, {8, 8}), bf16(y, {8, 8}), {}};
  c.out = correct_sum(c.a, c.b);
  if (broken) {  // a kernel that forgets the second operand
    c.out = c.a.clone();
  }
  return c;
}

std::vector<CsvRow> rows_of(const std::string& path) { return csv_read_file(path); }

std::string slurp_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool check_add(OnlineChecker& oc, const Case& c, const char* api = "Torch.add") {
  return oc.check(api, {{Value(c.a), Value(c.b)}, {}}, {Value(c.out)});
}

// A bench runner that waits until the test opens the gate, to hold the worker busy.
struct Gate {
  std::promise<void> open;
  std::shared_future<void> opened = open.get_future().share();
  std::atomic<int> entered{0};
};
RunnerRegistry registry_with_gate(Gate& gate) {
  RunnerRegistry r = RunnerRegistry::with_builtins();
  Runner slow;
  slow.schema = "slow_identity(Tensor self) -> Tensor";
  slow.forward = [&gate](const BoundArgs& args) {
    ++gate.entered;
    gate.opened.wait();
    const Tensor& t = args["self"].tensor();
    return ApiResult{{Value(t.to(DType::Float64))}, {t.dtype()}};
  };
  r.add(Framework::PyTorch, "Test.slow_identity", slow, RunnerRole::Bench, RunnerRegistry::ApiKey::New);
  return r;
}

}  // namespace

TEST(OnlineChecker, CorrectKernelPassesAndBrokenOneFailsInSeed003Layout) {
  TempDir dir;
  OnlineCheckerOptions o = options(dir.path().string());
  o.tag = "unit";
  o.rank = 4;
  OnlineCheckerSummary s;
  {
    OnlineChecker oc(o);
    EXPECT_TRUE(check_add(oc, add_case(1, false)));
    EXPECT_TRUE(check_add(oc, add_case(1, true)));
    oc.flush();
    s = oc.summary();
  }
  EXPECT_EQ(s.calls, 2u);
  EXPECT_EQ(s.passed, 1u);
  EXPECT_EQ(s.failed, 1u);
  EXPECT_EQ(s.run_dir, dir.path().string() + "/msprobe_unit_rank4_" + kTs);
  EXPECT_EQ(s.result_csv, s.run_dir + "/accuracy_checking_result_20260101120000.csv");
  const auto result = rows_of(s.result_csv);
  ASSERT_EQ(result.size(), 3u);
  EXPECT_EQ(result[0], result_csv_header());
  EXPECT_EQ(result[1], (CsvRow{"Torch.add_1_output", "True", "Nan", ""}));
  EXPECT_EQ(result[2][0], "Torch.add_2_output");
  EXPECT_EQ(result[2][1], "False");
  const auto details = rows_of(s.details_csv);
  ASSERT_EQ(details.size(), 3u);
  EXPECT_EQ(details[0], online_details_header());
  EXPECT_EQ(details[1][0], "Torch.add_1_output.forward.output.0");
  EXPECT_EQ(details[1][2], "torch.bfloat16");
  EXPECT_EQ(details[1][3], "torch.float64");
  EXPECT_EQ(details[1][4], "[8, 8]");
  EXPECT_EQ(details[1][15], "Yes");
  EXPECT_EQ(details[2][15], "No");
  EXPECT_FALSE(fs::exists(s.run_dir + "/npu"));  // dump_mode OFF writes no tensors
}

TEST(OnlineChecker, DumpModesSaveWhatTheyPromise) {
  for (OnlineDumpMode mode : {OnlineDumpMode::All, OnlineDumpMode::List, OnlineDumpMode::Auto}) {
    TempDir dir;
    OnlineCheckerOptions o = options(dir.path().string());
    o.dump_mode = mode;
    o.api_list = {"mul"};  // List: Tensor.mul only, matched without its prefix
    std::string run;
    {
      OnlineChecker oc(o);
      check_add(oc, add_case(1, false));  // Torch.add_1 passes
      check_add(oc, add_case(1, true));   // Torch.add_2 fails
      const Case m = add_case(0.5, false);
      std::vector<double> prod;
      const auto x = m.a.to_doubles(), y = m.b.to_doubles();
      for (std::size_t i = 0; i < x.size(); ++i) prod.push_back(x[i] * y[i]);
      oc.check("Tensor.mul", {{Value(m.a), Value(m.b)}, {}}, {Value(bf16(prod, {8, 8}))});  // passes
      oc.flush();
      run = oc.summary().run_dir;
      EXPECT_EQ(oc.summary().passed, 2u);
    }
    std::set<std::string> npu, cpu;
    for (const auto& f : fs::directory_iterator(run + "/npu")) npu.insert(f.path().filename().string());
    for (const auto& f : fs::directory_iterator(run + "/cpu")) cpu.insert(f.path().filename().string());
    std::set<std::string> want_npu, want_cpu;
    auto expect_op = [&](const std::string& stem) {
      want_npu.insert({stem + "_input.0.npy", stem + "_input.1.npy", stem + "_output.npy"});
      want_cpu.insert(stem + "_output.npy");
    };
    if (mode == OnlineDumpMode::All) {
      expect_op("Torch.add_1");
      expect_op("Torch.add_2");
      expect_op("Tensor.mul_1");
    } else if (mode == OnlineDumpMode::List) {
      expect_op("Tensor.mul_1");
    } else {
      expect_op("Torch.add_2");  // DECISIONS D8: auto saves failing ops only
    }
    EXPECT_EQ(npu, want_npu) << static_cast<int>(mode);
    EXPECT_EQ(cpu, want_cpu) << static_cast<int>(mode);
    if (mode == OnlineDumpMode::Auto) {
      const Tensor in0 = load_npy(run + "/npu/Torch.add_2_input.0.npy");
      EXPECT_EQ(in0.dtype(), DType::Float32);  // bf16 widened, as numpy has no bfloat16
      EXPECT_EQ(in0.to_doubles(), add_case(1, true).a.to_doubles());
      const Tensor bench = load_npy(run + "/cpu/Torch.add_2_output.npy");
      EXPECT_EQ(bench.dtype(), DType::Float64);
      EXPECT_EQ(bench.to_doubles()[0],
                add_case(1, true).a.to_doubles()[0] + add_case(1, true).b.to_doubles()[0]);
    }
  }
}

TEST(OnlineChecker, BlackListedAndUnsupportedOpsAreCountedNotPassed) {
  TempDir dir;
  OnlineCheckerOptions o = options(dir.path().string());
  OnlineChecker oc(o);
  const Case c = add_case(1, false);
  EXPECT_FALSE(oc.check("view", {{Value(c.a)}, {}}, {Value(c.a)}));  // shipped black list (aten name)
  EXPECT_FALSE(oc.check("Aten.view.default", {{Value(c.a)}, {}}, {Value(c.a)}));
  EXPECT_TRUE(oc.check("Aten.no_such_op", {{Value(c.a)}, {}}, {Value(c.a)}));
  EXPECT_TRUE(oc.check("Aten.no_such_op", {{Value(c.a)}, {}}, {Value(c.a)}));
  EXPECT_TRUE(oc.check("Functional.gelu", {{Value(c.a)}, {{"nonsense", Value(3)}}}, {Value(c.a)}));
  oc.flush();
  const auto s = oc.summary();
  EXPECT_EQ(s.calls, 5u);
  EXPECT_EQ(s.blacklisted, 2u);
  EXPECT_EQ(s.unsupported, 2u);
  EXPECT_EQ(s.unsupported_ops, std::vector<std::string>{"Aten.no_such_op"});
  EXPECT_EQ(s.skipped, 1u);  // the runner refused the call: a SKIP row with its reason
  EXPECT_EQ(s.passed + s.failed, 0u);
  const auto result = rows_of(s.result_csv);
  ASSERT_EQ(result.size(), 4u);
  EXPECT_EQ(result[1],
            (CsvRow{"Aten.no_such_op_1_output", "SKIP", "Nan", "no bench runner for Aten.no_such_op"}));
  EXPECT_EQ(result[3][0], "Functional.gelu_1_output");
  EXPECT_EQ(result[3][1], "SKIP");
  EXPECT_NE(result[3][3].find("nonsense"), std::string::npos) << result[3][3];

  OnlineCheckerOptions custom = options(dir.path().string() + "/x");
  fs::create_directories(custom.dump_path);
  custom.black_list = std::vector<std::string>{"add"};
  OnlineChecker oc2(custom);
  EXPECT_FALSE(check_add(oc2, c));  // "add" matches Torch.add without its prefix
  EXPECT_TRUE(oc2.check("view", {{Value(c.a)}, {}}, {Value(c.a)}));  // no longer black-listed
}

TEST(OnlineChecker, StridedViewsOfCallerMemoryAreCopiedAtCheck) {
  TempDir dir;
  OnlineCheckerOptions o = options(dir.path().string());
  o.dump_mode = OnlineDumpMode::All;
  // A 3x2 transposed view of a 2x3 fp16 buffer; the device "kernel" adds it to itself.
  std::vector<float16_t> buf;
  for (double v : {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}) buf.push_back(to_float16(v));
  std::vector<float16_t> out;
  for (double v : {2.0, 8.0, 4.0, 10.0, 6.0, 12.0}) out.push_back(to_float16(v));  // 2 * x^T, row-major
  std::string run;
  {
    OnlineChecker oc(o);
    const TensorView xt{buf.data(), DType::Float16, {3, 2}, {1, 3}};
    EXPECT_TRUE(oc.check("Torch.add", {{xt, xt}, {}}, {TensorView{out.data(), DType::Float16, {3, 2}, {}}}));
    // The caller may reuse its memory at once: the checker judged the copy taken at check().
    std::fill(buf.begin(), buf.end(), to_float16(100.0));
    std::fill(out.begin(), out.end(), to_float16(-1.0));
    oc.flush();
    EXPECT_EQ(oc.summary().passed, 1u);
    run = oc.summary().run_dir;
    EXPECT_THROW(oc.check("Torch.add", {{TensorView{nullptr, DType::Float16, {2}, {}}}, {}}, {}), Error);
    EXPECT_THROW(oc.check("Torch.add", {{TensorView{buf.data(), DType::Float16, {2}, {-1}}}, {}}, {}), Error);
    EXPECT_THROW(oc.check("bad name!", {{}, {}}, {}), Error);
    // Valid characters but an empty '.'-segment: not an API name (probe/api_name.h), so not queued.
    EXPECT_THROW(oc.check("Torch..add", {{}, {}}, {}), Error);
    EXPECT_THROW(oc.check("add.", {{}, {}}, {}), Error);
  }
  const Tensor saved = load_npy(run + "/npu/Torch.add_1_input.0.npy");
  EXPECT_EQ(saved.dtype(), DType::Float16);
  EXPECT_EQ(saved.shape(), (Shape{3, 2}));
  EXPECT_EQ(saved.to_doubles(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(OnlineChecker, DropBackpressureCountsWhatItDrops) {
  TempDir dir;
  Gate gate;
  OnlineCheckerOptions o = options(dir.path().string());
  o.queue_capacity = 2;
  o.backpressure = Backpressure::Drop;
  const Tensor x = bf16({1, 2}, {2});
  OnlineChecker oc(o, registry_with_gate(gate));
  EXPECT_TRUE(oc.check("Test.slow_identity", {{Value(x)}, {}}, {Value(x)}));
  while (gate.entered == 0) std::this_thread::yield();                         // the worker holds op 1
  EXPECT_TRUE(oc.check("Test.slow_identity", {{Value(x)}, {}}, {Value(x)}));   // queued
  EXPECT_TRUE(oc.check("Test.slow_identity", {{Value(x)}, {}}, {Value(x)}));   // queued: full now
  EXPECT_FALSE(oc.check("Test.slow_identity", {{Value(x)}, {}}, {Value(x)}));  // dropped
  EXPECT_FALSE(oc.check("Test.slow_identity", {{Value(x)}, {}}, {Value(x)}));  // dropped
  EXPECT_EQ(oc.summary().dropped, 2u);
  EXPECT_EQ(oc.summary().pending, 3u);
  gate.open.set_value();
  oc.flush();
  const auto s = oc.summary();
  EXPECT_EQ(s.passed, 3u);
  EXPECT_EQ(s.pending, 0u);
  EXPECT_EQ(rows_of(s.result_csv).size(), 4u);
  EXPECT_EQ(rows_of(s.result_csv)[3][0], "Test.slow_identity_3_output");  // dropped calls take no index
}

TEST(OnlineChecker, BlockBackpressureWaitsAndLosesNothing) {
  TempDir dir;
  Gate gate;
  OnlineCheckerOptions o = options(dir.path().string());
  o.queue_capacity = 1;
  const Tensor x = bf16({1, 2}, {2});
  OnlineChecker oc(o, registry_with_gate(gate));
  EXPECT_TRUE(oc.check("Test.slow_identity", {{Value(x)}, {}}, {Value(x)}));
  while (gate.entered == 0) std::this_thread::yield();
  EXPECT_TRUE(oc.check("Test.slow_identity", {{Value(x)}, {}}, {Value(x)}));  // fills the queue
  std::atomic<bool> returned{false};
  std::thread caller([&] {
    oc.check("Test.slow_identity", {{Value(x)}, {}}, {Value(x)});
    returned = true;
  });
  // The third call must still be waiting for a slot while the worker is held (a wrong, non-blocking
  // implementation returns within microseconds).
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(returned.load());
  gate.open.set_value();
  caller.join();
  EXPECT_TRUE(returned.load());
  oc.flush();
  EXPECT_EQ(oc.summary().passed, 3u);
  EXPECT_EQ(oc.summary().dropped, 0u);
}

TEST(OnlineChecker, DestructorDrainsTheQueue) {
  TempDir dir;
  std::string result;
  {
    OnlineCheckerOptions o = options(dir.path().string());
    o.workers = 2;
    OnlineChecker oc(o);
    for (int i = 0; i < 20; ++i) check_add(oc, add_case(1 + i, false));
    result = oc.summary().result_csv;
  }
  const auto rows = rows_of(result);
  ASSERT_EQ(rows.size(), 21u);
  for (std::size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(rows[i][1], "True") << rows[i][0];
}

TEST(OnlineChecker, ConcurrentCallersGetDistinctIndicesAndEveryRow) {
  TempDir dir;
  OnlineCheckerOptions o = options(dir.path().string());
  o.workers = 2;
  o.queue_capacity = 8;
  OnlineChecker oc(o);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&oc, t] {
      for (int i = 0; i < 25; ++i) check_add(oc, add_case(0.25 * (t + 1), (i % 10) == 3));
    });
  for (auto& th : threads) th.join();
  oc.flush();
  const auto s = oc.summary();
  EXPECT_EQ(s.calls, 100u);
  EXPECT_EQ(s.passed, 88u);  // i % 10 == 3 breaks i = 3, 13, 23 of each thread
  EXPECT_EQ(s.failed, 12u);
  const auto rows = rows_of(s.result_csv);
  ASSERT_EQ(rows.size(), 101u);
  std::set<std::string> names;
  for (std::size_t i = 1; i < rows.size(); ++i) names.insert(rows[i][0]);
  EXPECT_EQ(names.size(), 100u);
  for (int i = 1; i <= 100; ++i) EXPECT_TRUE(names.count("Torch.add_" + std::to_string(i) + "_output")) << i;
  EXPECT_EQ(rows_of(s.details_csv).size(), 101u);
}

// D21: the probe rules number calls from 0, as a dump and run_ut do: the first call of Torch.add is
// Torch.add.0 in the result CSV and Torch.add.0.forward.output.0 in the details; run_ut's 14-digit
// timestamp names the CSVs and (with milliseconds 000) the run directory.
TEST(OnlineChecker, CallNumbersCountFromZeroLikeDumpsAndRunUt) {
  TempDir dir;
  OnlineCheckerOptions o = options(dir.path().string());
  o.rule = OnlineRule::ErrorBound;
  o.timestamp = "20260203040506";
  OnlineChecker oc(o);
  check_add(oc, add_case(1, false));
  check_add(oc, add_case(1, false));
  oc.flush();
  const auto s = oc.summary();
  EXPECT_EQ(fs::path(s.run_dir).filename().string(), "msprobe_rank0_20260203040506000");
  EXPECT_EQ(fs::path(s.result_csv).filename().string(), "accuracy_checking_result_20260203040506.csv");
  const auto result = rows_of(s.result_csv);
  ASSERT_EQ(result.size(), 3u);
  EXPECT_EQ(result[1][0], "Torch.add.0");
  EXPECT_EQ(result[2][0], "Torch.add.1");
  const auto details = rows_of(s.details_csv);
  ASSERT_EQ(details.size(), 3u);
  EXPECT_EQ(details[1][0], "Torch.add.0.forward.output.0");
  EXPECT_EQ(details[2][0], "Torch.add.1.forward.output.0");
}

TEST(OnlineChecker, RunUtRuleWritesRunUtRows) {
  TempDir dir;
  OnlineCheckerOptions o = options(dir.path().string());
  o.rule = OnlineRule::RunUt;
  OnlineChecker oc(o);
  check_add(oc, add_case(1, false));
  check_add(oc, add_case(1, true));
  oc.flush();
  const auto s = oc.summary();
  const auto details = rows_of(s.details_csv);
  ASSERT_EQ(details.size(), 3u);
  EXPECT_EQ(details[0], details_csv_header());
  const auto result = rows_of(s.result_csv);
  EXPECT_EQ(result[1][1], "pass");
  EXPECT_EQ(result[2][1], "error");
  EXPECT_EQ(s.passed, 1u);
  EXPECT_EQ(s.failed, 1u);
}

// An op the caller ran in the backward pass is named `.backward.` in the details and judged in the result's
// backward column; a step, when given, leads its names. Both rules; the verdicts stay the same.
TEST(OnlineChecker, CallSiteNamesBackwardOpsAndTheStep) {
  for (const OnlineRule rule : {OnlineRule::Documented, OnlineRule::ErrorBound}) {
    SCOPED_TRACE(rule == OnlineRule::Documented ? "documented" : "error bound");
    TempDir dir;
    OnlineCheckerOptions o = options(dir.path().string());
    o.rule = rule;
    OnlineChecker oc(o);
    const Case good = add_case(1, false), bad = add_case(1, true);
    const OnlineCall good_call{{Value(good.a), Value(good.b)}, {}},
        bad_call{{Value(bad.a), Value(bad.b)}, {}};
    oc.check("Torch.add", good_call, {Value(good.out)});
    oc.check("Torch.add", good_call, {Value(good.out)}, OnlineCallSite{true, 3});
    oc.check("Torch.add", bad_call, {Value(bad.out)}, OnlineCallSite{true, std::nullopt});
    oc.check("Torch.add", good_call, {Value(good.out)}, OnlineCallSite{false, 0});
    oc.flush();
    const auto s = oc.summary();
    EXPECT_EQ(s.passed, 3u);
    EXPECT_EQ(s.failed, 1u);
    const bool doc = rule == OnlineRule::Documented;
    const std::string pass = doc ? "True" : "pass", fail = doc ? "False" : "error";
    // D21: msprobe's layout numbers calls from 1 ("Torch.add_1_output"), the probe rules from 0 as dumps and
    // run_ut do ("Torch.add.0").
    const auto op = [&](const char* step, int call) {
      return std::string(step) + (doc ? "Torch.add_" + std::to_string(call + 1) + "_output"
                                      : "Torch.add." + std::to_string(call));
    };
    const auto result = rows_of(s.result_csv);
    ASSERT_EQ(result.size(), 5u);
    EXPECT_EQ(result[1], (CsvRow{op("", 0), pass, "Nan", ""}));
    EXPECT_EQ(result[2], (CsvRow{op("step3.", 1), "Nan", pass, ""}));
    EXPECT_EQ(result[3][0], op("", 2));
    EXPECT_EQ(result[3][1], "Nan");
    EXPECT_EQ(result[3][2], fail);
    EXPECT_EQ(result[4], (CsvRow{op("step0.", 3), pass, "Nan", ""}));
    const auto details = rows_of(s.details_csv);
    ASSERT_EQ(details.size(), 5u);
    const auto name = [&](const char* step, int call, const char* dir) {
      return op(step, call) + dir + ".output.0";
    };
    EXPECT_EQ(details[1][0], name("", 0, ".forward"));
    EXPECT_EQ(details[2][0], name("step3.", 1, ".backward"));
    EXPECT_EQ(details[3][0], name("", 2, ".backward"));
    EXPECT_EQ(details[4][0], name("step0.", 3, ".forward"));
  }
}

// The default rule (D14) on a GEMM: the magnitude bench is mm on |a| and |b|, K the contracted dim.
// a = ones [1, 256], b = +1, -1 alternating [256, 1]: a @ b = 0 exactly, |a| @ |b| = 256, K = 256, u = 2^-24.
// A float32 device value of 50 2^-16 (= 50 u 256) is within the bound (1 + 2^-10) (u + 8 sqrt(256) u) 256
// = 129.1 u 256 and beyond the K = 1 bound (1 + 2^-10) (u + u / (1 - u)) 256 = 2 u 256; 200 2^-16 is beyond
// both, a Warning (within the TF32 band (1 + 2^-10) (u + 4 2^-11) 256 = 0.5).
TEST(OnlineChecker, ErrorBoundJudgesAGemmByItsMagnitudeAndK) {
  TempDir dir;
  OnlineCheckerOptions o = options(dir.path().string());
  o.rule = OnlineRule::ErrorBound;
  OnlineChecker oc(o);
  std::vector<float> ones(256, 1.0f), signs(256);
  for (std::size_t k = 0; k < signs.size(); ++k) signs[k] = k % 2 ? -1.0f : 1.0f;
  const OnlineCall call{
      {Value(Tensor::from_values<float>(ones, {1, 256})), Value(Tensor::from_values<float>(signs, {256, 1}))},
      {}};
  auto device = [](int units) {
    return Value(Tensor::from_values<float>({std::ldexp(static_cast<float>(units), -16)}, {1, 1}));
  };
  oc.check("Torch.mm", call, {device(50)});
  oc.check("Torch.mm", call, {device(200)});
  oc.flush();
  const auto details = rows_of(oc.summary().details_csv);
  ASSERT_EQ(details.size(), 3u);
  const CsvRow& header = details[0];
  const auto column = [&](const char* name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t status = column("Status"), message = column("Message");
  ASSERT_LT(message, header.size());
  std::map<std::string, CsvRow> by_name;
  for (std::size_t i = 1; i < details.size(); ++i) by_name[details[i][0]] = details[i];
  const CsvRow& within = by_name["Torch.mm.0.forward.output.0"];
  const CsvRow& beyond = by_name["Torch.mm.1.forward.output.0"];
  ASSERT_GT(within.size(), message);
  ASSERT_GT(beyond.size(), message);
  EXPECT_EQ(within[status], to_string(Status::Pass)) << within[message];
  EXPECT_NE(within[message].find("gemm family, K=256"), std::string::npos) << within[message];
  EXPECT_EQ(beyond[status], to_string(Status::Warning)) << beyond[message];
}

// The checker's bench runs inside the program it checks: its GEMMs use the single-threaded BLAS on the
// worker (runners::SerialBlasScope), never the threaded one the program's own GEMMs share.
TEST(OnlineChecker, WorkersMultiplyWithTheSingleThreadedBlas) {
  RunnerRegistry r = RunnerRegistry::with_builtins();
  std::atomic<runners::DgemmFn> seen{nullptr};
  Runner probe_blas;
  probe_blas.schema = "which_blas(Tensor self) -> Tensor";
  probe_blas.forward = [&seen](const BoundArgs& args) {
    seen = runners::thread_dgemm();
    const Tensor& t = args["self"].tensor();
    return ApiResult{{Value(t.to(DType::Float64))}, {t.dtype()}};
  };
  r.add(Framework::PyTorch, "Test.which_blas", probe_blas, RunnerRole::Bench, RunnerRegistry::ApiKey::New);
  TempDir dir;
  OnlineChecker oc(options(dir.path().string()), std::move(r));
  const Tensor x = Tensor::from_values<float>({1, 2}, {2});
  ASSERT_TRUE(oc.check("Test.which_blas", {{Value(x)}, {}}, {Value(x)}));
  oc.flush();
  const runners::DgemmFn serial =
      runners::openblas_serial_dgemm() ? runners::openblas_serial_dgemm() : runners::openblas_dgemm();
  EXPECT_EQ(seen.load(), serial);
  EXPECT_EQ(runners::thread_dgemm(), runners::openblas_dgemm());  // the caller's thread is untouched
}

TEST(OnlineChecker, RejectsBadOptions) {
  TempDir dir;
  auto bad = [&](auto edit) {
    OnlineCheckerOptions o = options(dir.path().string());
    edit(o);
    EXPECT_THROW(OnlineChecker{o}, Error);
  };
  bad([](OnlineCheckerOptions& o) { o.dump_path = "/nonexistent/dir"; });
  bad([](OnlineCheckerOptions& o) { o.tag = "a/b"; });
  bad([](OnlineCheckerOptions& o) { o.workers = 0; });
  bad([](OnlineCheckerOptions& o) { o.queue_capacity = 0; });
  bad([](OnlineCheckerOptions& o) { o.timestamp = "2026"; });
  bad([](OnlineCheckerOptions& o) { o.timestamp = "202601011200001"; });  // 15 digits
  bad([](OnlineCheckerOptions& o) { o.dump_mode = OnlineDumpMode::List; });
  // The framework check run_ut and the stream make: pytorch or mindspore, the field named.
  OnlineCheckerOptions o = options(dir.path().string());
  o.framework = Framework::MindTorch;
  try {
    OnlineChecker{o};
    ADD_FAILURE() << "MindTorch accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "OnlineCheckerOptions.framework");
    EXPECT_NE(std::string(e.what()).find("not mindtorch"), std::string::npos) << e.what();
  }
}

// kill -9 while ops stream through: every row already in the CSVs is complete, and the result file holds at
// least the ops known to be done before the kill.
TEST(OnlineChecker, KilledProcessLeavesCompleteRows) {
  TempDir dir;
  const std::string result = dir.path().string() + "/msprobe_rank0_" + std::string(kTs) +
                             "/accuracy_checking_result_20260101120000.csv";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      OnlineChecker oc(options(dir.path().string()));
      for (int i = 0; i < 1000000; ++i) check_add(oc, add_case(1, i % 2 == 1));
    } catch (...) {
    }
    ::_exit(0);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      if (fs::exists(result) && rows_of(result).size() > 20) break;
    } catch (const Error&) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  // A row may be cut only at the very end of the file (the write the kill interrupted); all rows before it
  // are whole.
  std::ifstream in(result, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  ASSERT_FALSE(text.empty());
  if (text.back() != '\n') text.erase(text.rfind('\n') + 1);
  const auto rows = csv_parse(text, result);
  ASSERT_GT(rows.size(), 20u);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 4u) << i;
    EXPECT_EQ(rows[i][0], "Torch.add_" + std::to_string(i) + "_output");
    EXPECT_EQ(rows[i][1], i % 2 == 1 ? "True" : "False");
  }
}

// The same calls checked online (run_ut rule) and written by DumpWriter then run through probe::run_ut get
// the same forward statuses, call by call.
TEST(OnlineChecker, RunUtRuleAgreesWithRunUtOnTheDumpedCalls) {
  TempDir dir;
  OnlineCheckerOptions o = options(dir.path().string());
  o.rule = OnlineRule::RunUt;
  std::string online_result;
  {
    OnlineChecker oc(o);
    DumpWriterOptions dw;
    dw.dump_path = dir.path().string() + "/dump";
    dw.task = DumpTask::Tensor;
    dw.rank = 0;
    DumpWriter w(dw);
    for (int i = 0; i < 6; ++i) {
      const Case c = add_case(0.5 + i, i % 3 == 1);
      check_add(oc, c);
      w.api_forward("Torch.add", {{Value(c.a), Value(c.b)}, {}}, {Value(c.out)});
    }
    oc.flush();
    online_result = oc.summary().result_csv;
  }
  RunUtOptions ru;
  ru.api_info = dir.path().string() + "/dump/step0/rank0/dump.json";
  ru.out_dir = dir.path().string() + "/run_ut";
  const RunUtSummary r = run_ut(ru);
  const auto offline = rows_of(r.result_csv), online = rows_of(online_result);
  ASSERT_EQ(offline.size(), 7u);
  ASSERT_EQ(online.size(), 7u);
  for (std::size_t i = 1; i < 7; ++i) {
    EXPECT_EQ(offline[i][0], "Torch.add." + std::to_string(i - 1));
    EXPECT_EQ(online[i][1], offline[i][1]) << i;
    EXPECT_EQ(online[i][1], (i - 1) % 3 == 1 ? "error" : "pass") << i;
  }
}

// The run directory is claimed: checkers started together without a timestamp (many in one millisecond)
// each get their own directory and CSVs; a given timestamp whose directory exists is refused, naming the
// path and the option, and the earlier run's files are left as they were.
TEST(OnlineChecker, EachCheckerClaimsItsOwnRunDirectory) {
  TempDir dir;
  constexpr int kCheckers = 16;
  std::vector<std::string> run_dirs(kCheckers), results(kCheckers);
  {
    std::vector<std::unique_ptr<OnlineChecker>> checkers(kCheckers);
    std::vector<std::thread> threads;
    std::atomic<int> ready{0};
    for (int i = 0; i < kCheckers; ++i)
      threads.emplace_back([&, i] {
        OnlineCheckerOptions o = options(dir.path().string());
        o.timestamp.clear();
        ++ready;
        while (ready.load() < kCheckers) std::this_thread::yield();
        checkers[static_cast<std::size_t>(i)] = std::make_unique<OnlineChecker>(o);
      });
    for (auto& t : threads) t.join();
    for (int i = 0; i < kCheckers; ++i) {
      OnlineChecker& oc = *checkers[static_cast<std::size_t>(i)];
      check_add(oc, add_case(1, i % 2 == 1));
      oc.flush();
      run_dirs[static_cast<std::size_t>(i)] = oc.summary().run_dir;
      results[static_cast<std::size_t>(i)] = oc.summary().result_csv;
    }
  }
  EXPECT_EQ(std::set<std::string>(run_dirs.begin(), run_dirs.end()).size(),
            static_cast<std::size_t>(kCheckers));
  for (int i = 0; i < kCheckers; ++i) {
    const auto rows = rows_of(results[static_cast<std::size_t>(i)]);
    ASSERT_EQ(rows.size(), 2u) << results[static_cast<std::size_t>(i)];  // the header and this checker's op
    EXPECT_EQ(rows[1][1], i % 2 == 1 ? "False" : "True") << results[static_cast<std::size_t>(i)];
  }

  TempDir fixed;
  std::string first_result;
  {
    OnlineChecker oc(options(fixed.path().string()));
    check_add(oc, add_case(1, false));
    oc.flush();
    first_result = oc.summary().result_csv;
  }
  const std::string before = slurp_file(first_result);
  try {
    OnlineChecker again(options(fixed.path().string()));
    ADD_FAILURE() << "a reused timestamp was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "OnlineCheckerOptions.timestamp");
    EXPECT_NE(std::string(e.what()).find("msprobe_rank0_" + std::string(kTs)), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp_file(first_result), before);
}
