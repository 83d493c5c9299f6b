// Registry, schema binding, device runners and the low-precision emulation.
#include <gtest/gtest.h>

#include <cmath>

#include "probe/error.h"
#include "probe/runner.h"

namespace probe {
namespace {

Tensor f32(std::vector<float> v, Shape s) { return Tensor::from_values<float>(v, std::move(s)); }

TEST(Schema, ParsesTypesDefaultsAndKeywordOnly) {
  Schema s = parse_schema(
      "softmax(Tensor input, int dim, ScalarType? dtype=None, *, int[2] k=[1, 2], str m='x') -> Tensor");
  EXPECT_EQ(s.name, "softmax");
  ASSERT_EQ(s.params.size(), 5u);
  EXPECT_EQ(s.params[0].kind, Schema::Kind::Tensor);
  EXPECT_FALSE(s.params[1].default_value);
  EXPECT_TRUE(s.params[2].optional);
  EXPECT_TRUE(s.params[3].keyword_only);
  EXPECT_TRUE(s.params[3].is_list);
  EXPECT_EQ(s.params[3].default_value->to_string(), "[1, 2]");
  EXPECT_EQ(s.params[4].default_value->as_string(), "x");
  EXPECT_EQ(s.returns, "Tensor");
  EXPECT_THROW(parse_schema("f(Tensor"), Error);
  EXPECT_THROW(parse_schema("f(Wibble x)"), Error);
  EXPECT_THROW(parse_schema("f(Tensor x, Tensor x)"), Error);
}

TEST(Schema, BindsPositionalKeywordVarargsAndDefaults) {
  auto s = std::make_shared<const Schema>(parse_schema("f(Tensor input, int... size) -> Tensor"));
  BoundArgs a = bind(s, {{Value(f32({1, 2}, {2})), Value(1), Value(2)}, {}});
  EXPECT_EQ(a["size"].to_string(), "[1, 2]");
  EXPECT_EQ(a.origin(0), "input.0");
  a = bind(s, {{Value(f32({1, 2}, {2})), Value(std::vector<Value>{Value(2), Value(1)})}, {}});
  EXPECT_EQ(a["size"].to_string(), "[2, 1]");

  auto g =
      std::make_shared<const Schema>(parse_schema("g(Tensor input, int dim=-1, *, ScalarType? dtype=None)"));
  a = bind(g, {{Value(f32({1}, {1}))}, {{"dtype", Value("torch.float16")}}});
  EXPECT_EQ(a["dim"].as_int(), -1);
  EXPECT_EQ(a.origin(1), "");
  EXPECT_EQ(a["dtype"].as_dtype(), DType::Float16);  // dtype strings parsed
  EXPECT_EQ(a.origin(2), "kwargs.dtype");
  // Errors name the function and the argument.
  try {
    bind(g, {{Value(f32({1}, {1})), Value(0), Value(1)}, {}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("positional"), std::string::npos) << e.what();
  }
  EXPECT_THROW(bind(g, {{}, {}}), Error);                                                 // missing input
  EXPECT_THROW(bind(g, {{Value(f32({1}, {1}))}, {{"axis", Value(0)}}}), Error);           // unknown kwarg
  EXPECT_THROW(bind(g, {{Value(f32({1}, {1})), Value("x")}, {}}), Error);                 // ill-typed
  EXPECT_THROW(bind(g, {{Value(f32({1}, {1})), Value(0)}, {{"dim", Value(1)}}}), Error);  // given twice
}

TEST(Registry, UnknownApiIsUnsupportedNotPassed) {
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  EXPECT_EQ(reg.find(Framework::PyTorch, "Torch.no_such_api.0"), nullptr);
  try {
    reg.run_forward(Framework::PyTorch, "Torch.no_such_api.0.forward", {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_EQ(e.api(), "Torch.no_such_api.0.forward");
    EXPECT_NE(std::string(e.what()).find("no bench runner"), std::string::npos);
  }
  // PyTorch and MindSpore names are separate tables.
  EXPECT_NE(reg.find(Framework::PyTorch, "Functional.relu"), nullptr);
  EXPECT_NE(reg.find(Framework::MindSpore, "Mint.add"), nullptr);
  EXPECT_EQ(reg.find(Framework::MindSpore, "Functional.relu.0"),
            reg.find(Framework::MindSpore, "Functional.relu"));
}

TEST(Registry, BindingErrorsCarryTheApiName) {
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  try {
    reg.run_forward(Framework::PyTorch, "Torch.add.3", {{Value(f32({1}, {1}))}, {}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_EQ(e.api(), "Torch.add.3");
  }
}

TEST(Registry, EmbedderReplacesAndAddsDeviceRunnersWithoutTouchingCopies) {
  const RunnerRegistry builtins = RunnerRegistry::with_builtins();
  RunnerRegistry reg = builtins;
  Runner dev;
  dev.schema = "relu(Tensor input, bool inplace=False) -> Tensor";
  dev.forward = [](const BoundArgs& a) {
    ApiResult r;
    r.outputs.push_back(Value(a["input"].tensor().clone()));  // a "broken" relu: the identity
    r.device_dtypes.push_back(a["input"].tensor().dtype());
    return r;
  };
  reg.add(Framework::PyTorch, "Functional.relu", dev, RunnerRole::Device);
  ApiCall call{{Value(f32({-1, 2}, {2}))}, {}};
  ApiResult d = reg.run_forward(Framework::PyTorch, "Functional.relu.0", call, RunnerRole::Device);
  EXPECT_EQ(d.outputs[0].tensor().at(0), -1.0);
  ApiResult b = reg.run_forward(Framework::PyTorch, "Functional.relu.0", call);
  EXPECT_EQ(b.outputs[0].tensor().at(0), 0.0);
  // The copy it came from still has the built-in emulation.
  ApiResult e = builtins.run_forward(Framework::PyTorch, "Functional.relu.0", call, RunnerRole::Device);
  EXPECT_EQ(e.outputs[0].tensor().at(0), 0.0);
  EXPECT_THROW(reg.add(Framework::PyTorch, "X.y", Runner{"bad(", dev.forward, {}, {}}), Error);
  // DECISIONS D22: the device runner has no backward, so the built-in device backward of relu serves:
  // relu'(x) * g = [0, 1] * [1, 1] for x = [-1, 2].
  const Tensor ones = f32({1, 1}, {2});
  const auto g =
      reg.run_backward(Framework::PyTorch, "Functional.relu.0", call, {Value(ones)}, RunnerRole::Device);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].path, "input.0");
  EXPECT_EQ(g[0].grad.to_doubles(), (std::vector<double>{0.0, 1.0}));
  // A device runner without backward for an API probe has no built-in runner for is not differentiable.
  reg.add(Framework::PyTorch, "MyLib.scale", dev, RunnerRole::Device, RunnerRegistry::ApiKey::New);
  try {
    reg.run_backward(Framework::PyTorch, "MyLib.scale.0", call, {Value(ones)}, RunnerRole::Device);
    ADD_FAILURE() << "no backward to borrow, yet run_backward returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("not differentiable"), std::string::npos) << e.what();
  }
}

// A key that names no API probe knows is a typo until the caller says the API is new: the error names the
// key and the closest known one. An API known under another prefix is known ("Torch.gelu" through
// "Functional.gelu"), and so is an Aten overload of a known operator.
TEST(Registry, AnUnknownKeyIsAnErrorUnlessTheApiIsNew) {
  RunnerRegistry reg;
  const Runner relu = *RunnerRegistry::with_builtins().find(Framework::PyTorch, "Functional.relu");
  try {
    reg.add(Framework::PyTorch, "Functional.gleu", relu, RunnerRole::Device);
    ADD_FAILURE() << "Functional.gleu accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_EQ(e.api(), "Functional.gleu");
    EXPECT_EQ(e.field(), "api_key");
    EXPECT_NE(std::string(e.what()).find("did you mean Functional.gelu?"), std::string::npos) << e.what();
  }
  EXPECT_EQ(reg.find(Framework::PyTorch, "Functional.gleu", RunnerRole::Device), nullptr);
  EXPECT_NO_THROW(reg.add(Framework::PyTorch, "Torch.gelu", relu, RunnerRole::Device));
  EXPECT_NO_THROW(reg.add(Framework::PyTorch, "Aten.relu.default", relu, RunnerRole::Device));
  EXPECT_NO_THROW(
      reg.add(Framework::PyTorch, "Functional.gleu", relu, RunnerRole::Device, RunnerRegistry::ApiKey::New));
  EXPECT_NE(reg.find(Framework::PyTorch, "Functional.gleu", RunnerRole::Device), nullptr);
}

TEST(Registry, BenchIsFloat64AndReportsTheDeviceDtype) {
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  // bf16 + bf16: the bench computes in float64 (no bf16 rounding) and says the device produces bf16.
  Tensor a = Tensor::from_values<float>({1.0f, 256.0f}, {2}).to(DType::BFloat16);
  Tensor b = Tensor::from_values<float>({0.00390625f, 1.0f}, {2}).to(DType::BFloat16);
  ApiResult r = reg.run_forward(Framework::PyTorch, "Torch.add.0", {{Value(a), Value(b)}, {}});
  ASSERT_EQ(r.device_dtypes.size(), 1u);
  EXPECT_EQ(r.device_dtypes[0], DType::BFloat16);
  EXPECT_EQ(r.outputs[0].tensor().dtype(), DType::Float64);
  EXPECT_EQ(r.outputs[0].tensor().at(0), 1.00390625);  // not representable in bf16
  EXPECT_EQ(r.outputs[0].tensor().at(1), 257.0);
  // The emulated device rounds the result to bf16 (1.00390625 -> 1.0, 257 -> 256, ties to even).
  ApiResult d =
      reg.run_forward(Framework::PyTorch, "Torch.add.0", {{Value(a), Value(b)}, {}}, RunnerRole::Device);
  EXPECT_EQ(d.outputs[0].tensor().dtype(), DType::BFloat16);
  EXPECT_EQ(d.outputs[0].tensor().at(0), 1.0);
  EXPECT_EQ(d.outputs[0].tensor().at(1), 256.0);
}

TEST(Registry, EmulatedFloat32ComputeRoundsInsideTheOp) {
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  // sum of [1, 2^-24, 2^-24] in float32 per op: bench gives 1 + 2^-23 exactly; the emulation rounds
  // the float32 result (1 + 2^-23 is representable) - and an fp32 matmul is done in float32 GEMM.
  std::vector<float> v = {1.0f, 0x1p-24f, 0x1p-24f};
  ApiResult b = reg.run_forward(Framework::PyTorch, "Torch.sum.0", {{Value(f32(v, {3}))}, {}});
  EXPECT_EQ(b.outputs[0].tensor().at(0), 1.0 + 0x1p-23);
  Tensor x = f32({1.0f, 0x1p-25f}, {1, 2}), y = f32({1.0f, 1.0f}, {2, 1});
  ApiResult mb = reg.run_forward(Framework::PyTorch, "Torch.matmul.0", {{Value(x), Value(y)}, {}});
  ApiResult md =
      reg.run_forward(Framework::PyTorch, "Torch.matmul.0", {{Value(x), Value(y)}, {}}, RunnerRole::Device);
  EXPECT_EQ(mb.outputs[0].tensor().at(0), 1.0 + 0x1p-25);
  EXPECT_EQ(md.outputs[0].tensor().dtype(), DType::Float32);
  EXPECT_EQ(md.outputs[0].tensor().at(0), 1.0);
}

TEST(Registry, TrainModeDropoutIsUnsupportedWithAReason) {
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  try {
    reg.run_forward(Framework::PyTorch, "Functional.dropout.0",
                    {{Value(f32({1, 2}, {2}))}, {{"p", Value(0.1)}}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("random"), std::string::npos);
  }
}

TEST(Registry, BackwardGradientsAreNamedLikeDumpFiles) {
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  ApiCall call{{Value(f32({1, 2}, {2}))}, {{"other", Value(f32({3, 4}, {2}))}}};
  auto g = reg.run_backward(Framework::PyTorch, "Torch.mul.0", call, {Value(f32({1, 1}, {2}))});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].path, "input.0");
  EXPECT_EQ(g[0].grad.at(1), 4.0);
  EXPECT_EQ(g[1].path, "kwargs.other");
  EXPECT_EQ(g[1].device_dtype, DType::Float32);
  EXPECT_EQ(g[1].grad.at(0), 1.0);
  // Integer inputs have no gradient; a gradient of the wrong shape is an argument error.
  ApiCall ic{{Value(f32({1, 2}, {2})), Value(Tensor::from_values<std::int64_t>({1, 2}, {2}))}, {}};
  EXPECT_EQ(reg.run_backward(Framework::PyTorch, "Torch.mul.0", ic, {Value(f32({1, 1}, {2}))}).size(), 1u);
  EXPECT_THROW(reg.run_backward(Framework::PyTorch, "Torch.mul.0", ic, {Value(f32({1, 1, 1}, {3}))}), Error);
}

// run_forward_taped evaluates the forward once for both directions (issue 13). Expected values by hand:
// linear(x, W, b) = x W^T + b with x = [[1, 2], [3, 4]], W = [[1, 0], [2, 1]], b = [1, -1] gives
// [[2, 3], [4, 9]]; with upstream gradient G = [[1, 1], [1, 2]]: dx = G W = [[3, 1], [5, 2]],
// dW = G^T x = [[4, 6], [7, 10]], db = column sums of G = [2, 3].
TEST(Registry, TapedForwardServesTheBackwardWithoutAnotherEvaluation) {
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  ApiCall call{{Value(f32({1, 2, 3, 4}, {2, 2})), Value(f32({1, 0, 2, 1}, {2, 2})), Value(f32({1, -1}, {2}))},
               {}};
  TapedCall taped = reg.run_forward_taped(Framework::PyTorch, "Functional.linear.0", call);
  const Tensor& y = taped.result().outputs.at(0).tensor();
  ASSERT_EQ(y.dtype(), DType::Float64);
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{2, 3, 4, 9}));
  EXPECT_EQ(taped.result().device_dtypes.at(0), DType::Float32);
  auto g = taped.backward({Value(f32({1, 1, 1, 2}, {2, 2}))});
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].path, "input.0");
  EXPECT_EQ(g[0].grad.to_doubles(), (std::vector<double>{3, 1, 5, 2}));
  EXPECT_EQ(g[1].path, "input.1");
  EXPECT_EQ(g[1].grad.to_doubles(), (std::vector<double>{4, 6, 7, 10}));
  EXPECT_EQ(g[2].path, "input.2");
  EXPECT_EQ(g[2].grad.to_doubles(), (std::vector<double>{2, 3}));
  // The same as the two separate calls, bit for bit, on data where rounding matters.
  ApiCall soft{{Value(f32({0.1f, -2.5f, 3.25f, 1e-3f, 7.0f, -0.3f}, {2, 3})), Value(1)}, {}};
  const Value gsoft(f32({0.7f, -1.1f, 0.2f, 3.0f, 0.5f, -0.25f}, {2, 3}));
  TapedCall ts = reg.run_forward_taped(Framework::PyTorch, "Functional.softmax.0", soft);
  EXPECT_EQ(
      ts.result().outputs.at(0).tensor().to_doubles(),
      reg.run_forward(Framework::PyTorch, "Functional.softmax.0", soft).outputs.at(0).tensor().to_doubles());
  EXPECT_EQ(
      ts.backward({gsoft}).at(0).grad.to_doubles(),
      reg.run_backward(Framework::PyTorch, "Functional.softmax.0", soft, {gsoft}).at(0).grad.to_doubles());
  // A non-differentiable API still runs its forward; its backward is Unsupported, as run_backward says.
  ApiCall ints{{Value(Tensor::from_values<std::int64_t>({3, 1, 2}, {3}))}, {}};
  TapedCall ta = reg.run_forward_taped(Framework::PyTorch, "Torch.argmax.0", ints);
  EXPECT_EQ(ta.result().outputs.at(0).tensor().at(0), 0.0);
  EXPECT_THROW(ta.backward({Value(NoneValue{})}), Error);
}

TEST(Registry, IntegerResultsStayExactAndOverflowIsReported) {
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  Tensor big = Tensor::from_values<std::int64_t>({(std::int64_t{1} << 53) + 1}, {1});
  EXPECT_THROW(reg.run_forward(Framework::PyTorch, "Torch.neg.0", {{Value(big)}, {}}), Error);
  Tensor i32 = Tensor::from_values<std::int32_t>({2147483647}, {1});
  EXPECT_THROW(reg.run_forward(Framework::PyTorch, "Torch.add.0", {{Value(i32), Value(1)}, {}}), Error);
  Tensor ok = Tensor::from_values<std::int64_t>({-7}, {1});
  ApiResult r = reg.run_forward(Framework::PyTorch, "Torch.div.0",
                                {{Value(ok), Value(2)}, {{"rounding_mode", Value("floor")}}});
  EXPECT_EQ(r.outputs[0].tensor().dtype(), DType::Int64);
  EXPECT_EQ(r.outputs[0].tensor().at(0), -4.0);
  EXPECT_THROW(reg.run_forward(Framework::PyTorch, "Torch.div.0",
                               {{Value(ok), Value(0)}, {{"rounding_mode", Value("trunc")}}}),
               Error);
}

}  // namespace
}  // namespace probe
