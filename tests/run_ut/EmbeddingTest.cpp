// run_ut as a library: the registry and standards the caller passes are the ones used, and a stop request
// leaves files that resume into exactly the files of an uninterrupted run. Fixture: pt_fp32_fwd (real torch
// dump, make_run_ut_fixtures.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <stop_token>

#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "probe/csv.h"
#include "probe/dump_writer.h"
#include "probe/precision_standard.h"
#include "probe/run_ut.h"
#include "probe/runner.h"

namespace probe {
namespace {
namespace fs = std::filesystem;

const std::string kDump = std::string(PROBE_TEST_DATA_DIR) + "/run_ut/pt_fp32_fwd/dump.json";

using testing::ScratchDir;

using testing::slurp;

// relu in float64, written here so the test does not depend on probe's own runner. torch.relu keeps NaN
// (the dump's relu.0 input holds NaN), hence the explicit check. `shift` is added to every element: a
// device runner with shift 1 is a deliberately wrong "operator library".
Runner relu_runner(double shift, DType out) {
  Runner r;
  r.schema = "relu(Tensor input, bool inplace=False) -> Tensor";
  r.forward = [shift, out](const BoundArgs& a) {
    Tensor x = a["input"].tensor().to(DType::Float64);
    Tensor y = Tensor::zeros(DType::Float64, x.shape());
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      const double v = x.data<double>()[i];
      y.mutable_data<double>()[i] = (std::isnan(v) || v > 0 ? v : 0.0) + shift;
    }
    return ApiResult{{Value(out == DType::Float64 ? y : y.to(out))}, {DType::Float32}};
  };
  return r;
}

// The details row of `name` from a run_ut details CSV, as header -> cell.
std::map<std::string, std::string> details_row(const std::string& csv, const std::string& name) {
  const auto rows = csv_read_file(csv);
  std::map<std::string, std::string> out;
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i][0] == name)
      for (std::size_t c = 0; c < rows[0].size() && c < rows[i].size(); ++c) out[rows[0][c]] = rows[i][c];
  return out;
}

RunUtOptions options_in(const fs::path& out) {
  RunUtOptions o;
  o.api_info = kDump;
  o.out_dir = out.string();
  o.timestamp = "20260203040506";
  o.threads = 1;
  return o;
}

TEST(RunUtEmbedding, UsesTheCallersRegistryNotTheBuiltins) {
  ScratchDir dir("probe_embed_registry");
  RunnerRegistry registry;  // empty but for relu: no other API can be benched
  registry.add(Framework::PyTorch, "Functional.relu", relu_runner(0.0, DType::Float64));
  const RunUtSummary s = run_ut(options_in(dir.path()), registry, Standards::builtin(Profile::Probe));
  const auto rows = csv_read_file(s.result_csv);
  ASSERT_GT(rows.size(), 4u);
  std::size_t benched = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const std::string& api = rows[i][0];
    const std::string& message = rows[i][3];
    if (api == "Functional.relu.0" || api == "Functional.relu.1") {
      ++benched;
      EXPECT_NE(rows[i][1], "SKIP") << api << ": " << message;
    } else if (api == "Functional.relu.2") {
      // Its empty output has no file in the dump, so the device side would need a device runner.
      EXPECT_NE(message.find("has no device runner"), std::string::npos) << message;
    } else if (api == "Distributed.all_reduce.0") {
      EXPECT_NE(message.find("not support for run ut"), std::string::npos) << message;  // by name
    } else {
      // With the builtins these APIs would be benched; with this registry they have no runner.
      EXPECT_EQ(rows[i][1], "SKIP") << api;
      EXPECT_NE(message.find("has no bench runner"), std::string::npos) << api << ": " << message;
    }
  }
  EXPECT_EQ(benched, 2u);
  EXPECT_EQ(s.skip, s.apis - 2);
  EXPECT_FALSE(s.cancelled);
  // relu.1's input is five zeros (dump.json): float64 relu gives zeros, as torch did on the device, so
  // no element differs.
  auto relu1 = details_row(s.details_csv, "Functional.relu.1.forward.output.0");
  ASSERT_FALSE(relu1.empty());
  EXPECT_DOUBLE_EQ(std::stod(relu1["二进制一致错误率"]), 0.0);
  EXPECT_EQ(relu1["Status"], "pass");
}

TEST(RunUtEmbedding, TheCallersDeviceRunnerIsTheDeviceSide) {
  ScratchDir dir("probe_embed_device");
  RunnerRegistry registry;
  registry.add(Framework::PyTorch, "Functional.relu", relu_runner(0.0, DType::Float64));
  registry.add(Framework::PyTorch, "Functional.relu", relu_runner(1.0, DType::Float32), RunnerRole::Device);
  RunUtOptions o = options_in(dir.path());
  o.device_side = DeviceSide::Runner;
  const RunUtSummary s = run_ut(o, registry, Standards::builtin(Profile::Probe));
  // relu.1's input is five zeros: the bench is all zero, which msprobe judges by binary consistency; the
  // wrong device kernel gives 0 + 1 everywhere, so all 5 elements differ: error rate 5/5.
  auto row = details_row(s.details_csv, "Functional.relu.1.forward.output.0");
  ASSERT_FALSE(row.empty());
  EXPECT_DOUBLE_EQ(std::stod(row["二进制一致错误率"]), 1.0);
  EXPECT_EQ(row["Status"], "error");
}

// A caller's runner that throws fails only its API: the row is SKIP and says which runner failed (the
// registry raises ErrorKind::Runner), the run goes on.
TEST(RunUtEmbedding, AThrowingUserRunnerSkipsItsApiNamingTheRunner) {
  ScratchDir dir("probe_embed_throw");
  RunnerRegistry registry;
  Runner broken = relu_runner(0.0, DType::Float64);
  broken.forward = [](const BoundArgs&) -> ApiResult { throw std::runtime_error("kernel table missing"); };
  registry.add(Framework::PyTorch, "Functional.relu", broken);
  const RunUtSummary s = run_ut(options_in(dir.path()), registry, Standards::builtin(Profile::Probe));
  const auto rows = csv_read_file(s.result_csv);
  std::size_t relus = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (rows[i][0] != "Functional.relu.0" && rows[i][0] != "Functional.relu.1") continue;
    ++relus;
    EXPECT_EQ(rows[i][1], "SKIP");
    EXPECT_NE(rows[i][3].find("the bench runner registered for Functional.relu threw: kernel table missing"),
              std::string::npos)
        << rows[i][3];
  }
  EXPECT_EQ(relus, 2u);
  EXPECT_EQ(s.skip, s.apis);
}

// A tensor dump written with DumpWriter: Torch.mul(x, y) where only x requires grad, and its backward.
// Values by hand, all exact in float32: x * y = [3, -1, -0.25, 12]; with incoming gradient g the
// gradient of x is g * y = [1, 1, -1, -3] (y gets none: it does not require grad).
std::string write_mul_dump(const fs::path& root) {
  DumpWriterOptions o;
  o.dump_path = root.string();
  o.task = DumpTask::Tensor;
  DumpWriter w(o);
  const Tensor x = Tensor::from_values(std::vector<float>{1.5f, -2.0f, 0.25f, 4.0f}, {4});
  const Tensor y = Tensor::from_values(std::vector<float>{2.0f, 0.5f, -1.0f, 3.0f}, {4});
  const Tensor out = Tensor::from_values(std::vector<float>{3.0f, -1.0f, -0.25f, 12.0f}, {4});
  const Tensor g = Tensor::from_values(std::vector<float>{0.5f, 2.0f, 1.0f, -1.0f}, {4});
  const Tensor gx = Tensor::from_values(std::vector<float>{1.0f, 1.0f, -1.0f, -3.0f}, {4});
  DumpRecordContext ctx;
  ctx.requires_grad = {"input.0", "output.0"};
  const std::string key = w.api_forward("Torch.mul", ApiCall{{Value(x), Value(y)}, {}}, {Value(out)}, ctx);
  w.backward(key, {Value(g)}, {Value(gx), Value()});
  w.close();
  return w.dump_json_path();
}

// Torch.mul's device runner from an operator library that has no backward: float64 product, float32 out.
Runner forward_only_mul() {
  Runner r;
  r.schema = "mul(Tensor input, Tensor other) -> Tensor";
  r.forward = [](const BoundArgs& a) {
    const std::vector<double> x = a["input"].tensor().to_doubles(), y = a["other"].tensor().to_doubles();
    std::vector<float> z(x.size());
    for (std::size_t i = 0; i < z.size(); ++i) z[i] = static_cast<float>(x[i] * y[i]);
    return ApiResult{{Value(Tensor::from_values(z, a["input"].tensor().shape()))}, {DType::Float32}};
  };
  return r;
}

// The one result row of `api`: header -> cell.
std::map<std::string, std::string> result_row(const std::string& csv, const std::string& api) {
  return details_row(csv, api);
}

TEST(RunUtEmbedding, ADumpWriterDumpWithRequiresGradHasItsBackwardCompared) {
  ScratchDir dir("probe_embed_rgrad");
  RunUtOptions o = options_in(dir.path() / "out");
  o.api_info = write_mul_dump(dir.path() / "dump");
  EXPECT_NE(slurp(o.api_info).find("\"requires_grad\": true"), std::string::npos);
  const RunUtSummary s = run_ut(o, RunnerRegistry::with_builtins(), Standards::builtin(Profile::Probe));
  auto result = result_row(s.result_csv, "Torch.mul.0");
  EXPECT_EQ(result["Forward Test Success"], "pass") << result["Message"];
  EXPECT_EQ(result["Backward Test Success"], "pass") << result["Message"];
  auto grad = details_row(s.details_csv, "Torch.mul.0.backward.output.0");
  ASSERT_FALSE(grad.empty());
  EXPECT_EQ(grad["Status"], "pass") << grad["Message"];
  EXPECT_DOUBLE_EQ(std::stod(grad["最大绝对误差"]), 0.0);
}

TEST(RunUtEmbedding, ADeviceRunnerWithoutBackwardUsesTheBuiltinBackward) {
  ScratchDir dir("probe_embed_nobwd");
  RunUtOptions o = options_in(dir.path() / "out");
  o.api_info = write_mul_dump(dir.path() / "dump");
  o.device_side = DeviceSide::Runner;
  RunnerRegistry registry = RunnerRegistry::with_builtins();
  registry.add(Framework::PyTorch, "Torch.mul", forward_only_mul(), RunnerRole::Device);
  // The registry's device backward is the built-in one: x's gradient g * y (values above).
  const Tensor x = Tensor::from_values(std::vector<float>{1.5f, -2.0f, 0.25f, 4.0f}, {4});
  const Tensor y = Tensor::from_values(std::vector<float>{2.0f, 0.5f, -1.0f, 3.0f}, {4});
  const Tensor g = Tensor::from_values(std::vector<float>{0.5f, 2.0f, 1.0f, -1.0f}, {4});
  const auto grads = registry.run_backward(Framework::PyTorch, "Torch.mul", ApiCall{{Value(x), Value(y)}, {}},
                                           {Value(g)}, RunnerRole::Device);
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(grads[0].path, "input.0");
  EXPECT_EQ(grads[0].grad.to_doubles(), (std::vector<double>{1.0, 1.0, -1.0, -3.0}));
  const RunUtSummary s = run_ut(o, registry, Standards::builtin(Profile::Probe));
  auto result = result_row(s.result_csv, "Torch.mul.0");
  EXPECT_EQ(result["Forward Test Success"], "pass") << result["Message"];
  EXPECT_EQ(result["Backward Test Success"], "pass") << result["Message"];
  EXPECT_EQ(result["Message"].find("not differentiable"), std::string::npos) << result["Message"];
}

// A device runner that throws is the API's `error` (a gate counting errors must fail on a crashing
// kernel), with the exception's text; a throwing bench runner keeps its SKIP (see above).
TEST(RunUtEmbedding, AThrowingDeviceRunnerMakesItsApiAnErrorWithTheText) {
  ScratchDir dir("probe_embed_devthrow");
  RunUtOptions o = options_in(dir.path() / "out");
  o.api_info = write_mul_dump(dir.path() / "dump");
  o.device_side = DeviceSide::Runner;
  RunnerRegistry registry = RunnerRegistry::with_builtins();
  Runner broken = forward_only_mul();
  broken.forward = [](const BoundArgs&) -> ApiResult { throw std::runtime_error("kernel table missing"); };
  registry.add(Framework::PyTorch, "Torch.mul", broken, RunnerRole::Device);
  const RunUtSummary s = run_ut(o, registry, Standards::builtin(Profile::Probe));
  auto result = result_row(s.result_csv, "Torch.mul.0");
  EXPECT_EQ(result["Forward Test Success"], "error");
  EXPECT_NE(result["Message"].find("kernel table missing"), std::string::npos) << result["Message"];
  auto row = details_row(s.details_csv, "Torch.mul.0.forward.output.0");
  EXPECT_EQ(row["Status"], "error");
  EXPECT_EQ(s.error, 1u);
  EXPECT_EQ(s.skip, 0u);
}

TEST(RunUtEmbedding, ADeviceBackwardThatThrowsMakesTheBackwardAnError) {
  ScratchDir dir("probe_embed_devbwdthrow");
  RunUtOptions o = options_in(dir.path() / "out");
  o.api_info = write_mul_dump(dir.path() / "dump");
  o.device_side = DeviceSide::Runner;
  RunnerRegistry registry = RunnerRegistry::with_builtins();
  Runner broken = forward_only_mul();
  broken.backward = [](const BoundArgs&, const std::vector<Value>&) -> std::vector<Value> {
    throw std::runtime_error("no backward kernel for this layout");
  };
  registry.add(Framework::PyTorch, "Torch.mul", broken, RunnerRole::Device);
  const RunUtSummary s = run_ut(o, registry, Standards::builtin(Profile::Probe));
  auto result = result_row(s.result_csv, "Torch.mul.0");
  EXPECT_EQ(result["Forward Test Success"], "pass") << result["Message"];
  EXPECT_EQ(result["Backward Test Success"], "error");
  EXPECT_NE(result["Message"].find("no backward kernel for this layout"), std::string::npos)
      << result["Message"];
  EXPECT_EQ(s.backward_error, 1u);
}

// Threads: 1 runs the APIs inline; 2 stops the worker pool with APIs in flight whose rows must not be
// written.
class RunUtStop : public ::testing::TestWithParam<int> {};

TEST_P(RunUtStop, StopAfterFirstApiLeavesFilesThatResumeToTheUninterruptedOnes) {
  ScratchDir full("probe_embed_full"), cut("probe_embed_cut");
  RunUtOptions whole_options = options_in(full.path());
  whole_options.threads = GetParam();
  const RunUtSummary whole = run_ut(whole_options);
  ASSERT_GT(whole.apis, 2u);

  std::stop_source stop;
  RunUtOptions cut_options = options_in(cut.path());
  cut_options.threads = GetParam();
  const RunUtSummary first = run_ut(
      cut_options,
      [&](const RunUtProgress& p) {
        if (p.done >= 1) stop.request_stop();
      },
      stop.get_token());
  EXPECT_TRUE(first.cancelled);
  EXPECT_EQ(first.checked, 1u);
  EXPECT_EQ(csv_read_file(first.result_csv).size(), 2u);  // header + the one API written before the stop

  RunUtOptions resume = cut_options;
  resume.result_csv = first.result_csv;
  const RunUtSummary rest = run_ut(resume);
  EXPECT_FALSE(rest.cancelled);
  EXPECT_EQ(rest.checked, whole.apis - 1);
  EXPECT_EQ(slurp(rest.result_csv), slurp(whole.result_csv));
  EXPECT_EQ(slurp(rest.details_csv), slurp(whole.details_csv));
}

INSTANTIATE_TEST_SUITE_P(Threads, RunUtStop, ::testing::Values(1, 2));

TEST(RunUtEmbedding, StopBeforeStartWritesOnlyHeaders) {
  ScratchDir dir("probe_embed_prestop");
  std::stop_source stop;
  stop.request_stop();
  const RunUtSummary s = run_ut(options_in(dir.path()), {}, stop.get_token());
  EXPECT_TRUE(s.cancelled);
  EXPECT_EQ(s.checked, 0u);
  EXPECT_EQ(csv_read_file(s.result_csv).size(), 1u);
}

TEST(RunUtEmbedding, RefusesAFrameworkRunUtDoesNotImitate) {
  ScratchDir dir("probe_embed_fw");
  RunUtOptions o = options_in(dir.path());
  o.framework = Framework::MindTorch;
  try {
    (void)run_ut(o);
    ADD_FAILURE() << "run_ut accepted framework mindtorch";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_EQ(e.field(), "framework");
  }
}

}  // namespace
}  // namespace probe
