// Failures of runners a caller registers are reported as ErrorKind::Runner naming the API and the runner,
// and their results are checked against the ApiResult contract of runner.h.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "probe/error.h"
#include "probe/runner.h"

namespace probe {
namespace {

constexpr const char* kSchema = "relu(Tensor input) -> Tensor";

ApiCall one_tensor_call() {
  ApiCall c;
  c.args.push_back(Value(Tensor::from_values<float>({-1.0f, 2.0f}, {2})));
  return c;
}

Error forward_error(const RunnerRegistry& r, RunnerRole role = RunnerRole::Bench) {
  try {
    (void)r.run_forward(Framework::PyTorch, "Functional.relu.0.forward", one_tensor_call(), role);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "run_forward succeeded";
  return Error(ErrorKind::Internal, "none");
}

Runner runner_of(Runner::Forward f) {
  Runner r;
  r.schema = kSchema;
  r.forward = std::move(f);
  return r;
}

RunnerRegistry with(Runner::Forward f, RunnerRole role = RunnerRole::Bench) {
  RunnerRegistry r;
  r.add(Framework::PyTorch, "Functional.relu", runner_of(std::move(f)), role);
  return r;
}

TEST(UserRunner, StdExceptionIsARunnerErrorNamingApiAndRunner) {
  const Error e =
      forward_error(with([](const BoundArgs&) -> ApiResult { throw std::runtime_error("kernel oom"); }));
  EXPECT_EQ(e.kind(), ErrorKind::Runner);
  EXPECT_EQ(exit_code(e.kind()), 7);
  EXPECT_EQ(e.api(), "Functional.relu.0.forward");
  EXPECT_NE(e.message().find("bench runner registered for Functional.relu"), std::string::npos)
      << e.message();
  EXPECT_NE(e.message().find("kernel oom"), std::string::npos);
}

TEST(UserRunner, NonStandardThrowIsARunnerErrorToo) {
  const Error e = forward_error(with([](const BoundArgs&) -> ApiResult { throw 42; }, RunnerRole::Device),
                                RunnerRole::Device);
  EXPECT_EQ(e.kind(), ErrorKind::Runner);
  EXPECT_NE(e.message().find("device runner"), std::string::npos) << e.message();
}

TEST(UserRunner, ProbeErrorsKeepTheirKind) {
  const Error e = forward_error(
      with([](const BoundArgs&) -> ApiResult { throw Error(ErrorKind::Unsupported, "no train mode"); }));
  EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
  EXPECT_EQ(e.api(), "Functional.relu.0.forward");
}

TEST(UserRunner, EmptyResultIsRefused) {
  const Error e = forward_error(with([](const BoundArgs&) { return ApiResult{}; }));
  EXPECT_EQ(e.kind(), ErrorKind::Runner);
  EXPECT_NE(e.message().find("no outputs"), std::string::npos) << e.message();
}

TEST(UserRunner, DtypeListMustMatchTheTensors) {
  const Error e = forward_error(with([](const BoundArgs& a) {
    return ApiResult{{Value(a["input"].tensor().to(DType::Float64))}, {}};
  }));
  EXPECT_EQ(e.kind(), ErrorKind::Runner);
  EXPECT_NE(e.message().find("1 tensors but 0 device_dtypes"), std::string::npos) << e.message();
}

TEST(UserRunner, BenchFloatingOutputMustBeFloat64) {
  const Error e = forward_error(with([](const BoundArgs& a) {
    return ApiResult{{Value(a["input"].tensor())}, {DType::Float32}};
  }));
  EXPECT_EQ(e.kind(), ErrorKind::Runner);
  EXPECT_NE(e.message().find("float32"), std::string::npos) << e.message();
  // The same result is fine from a device runner, which returns the device dtype.
  const RunnerRegistry device = with(
      [](const BoundArgs& a) {
        return ApiResult{{Value(a["input"].tensor())}, {DType::Float32}};
      },
      RunnerRole::Device);
  EXPECT_EQ(device.run_forward(Framework::PyTorch, "Functional.relu", one_tensor_call(), RunnerRole::Device)
                .outputs.size(),
            1u);
}

TEST(UserRunner, ReplacingABuiltinMakesItAUserRunner) {
  RunnerRegistry r = RunnerRegistry::with_builtins();
  EXPECT_EQ(r.run_forward(Framework::PyTorch, "Functional.relu", one_tensor_call()).outputs.size(), 1u);
  r.add(Framework::PyTorch, "Functional.relu",
        runner_of([](const BoundArgs&) -> ApiResult { throw std::logic_error("bug"); }));
  EXPECT_EQ(forward_error(r).kind(), ErrorKind::Runner);
}

// The backward of a caller's runner, plain or after a taped forward, is the caller's code as well.
TEST(UserRunner, BackwardExceptionIsARunnerErrorToo) {
  Runner r = runner_of([](const BoundArgs& a) {
    return ApiResult{{Value(a["input"].tensor().to(DType::Float64))}, {DType::Float32}};
  });
  r.backward = [](const BoundArgs&, const std::vector<Value>&) -> std::vector<Value> {
    throw std::runtime_error("no vjp");
  };
  RunnerRegistry reg;
  reg.add(Framework::PyTorch, "Functional.relu", r);
  const std::vector<Value> grad{Value(Tensor::from_values<double>({1.0, 1.0}, {2}))};
  try {
    (void)reg.run_backward(Framework::PyTorch, "Functional.relu.0.backward", one_tensor_call(), grad);
    ADD_FAILURE() << "run_backward succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runner);
    EXPECT_NE(e.message().find("no vjp"), std::string::npos) << e.message();
  }
  const TapedCall taped = reg.run_forward_taped(Framework::PyTorch, "Functional.relu.0", one_tensor_call());
  try {
    (void)taped.backward(grad);
    ADD_FAILURE() << "taped backward succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runner);
  }
}

// A taped forward of a caller's runner is validated like run_forward.
TEST(UserRunner, TapedForwardResultIsValidatedToo) {
  try {
    (void)with([](const BoundArgs&) {
      return ApiResult{};
    }).run_forward_taped(Framework::PyTorch, "Functional.relu.0", one_tensor_call());
    ADD_FAILURE() << "run_forward_taped accepted an empty result";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runner);
    EXPECT_NE(e.message().find("no outputs"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace probe
