// Neural-network runners: the calls a float64 reference cannot evaluate are Unsupported (run_ut SKIPs
// them with the reason), bad arguments are clear InvalidArgument errors, and documented equivalences
// hold (values against torch are in tests/data/runners/nn.json, checked by FixtureTest).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "probe/error.h"
#include "probe/runner.h"

namespace probe {
namespace {

Tensor rnd(Shape s, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(numel(s)));
  for (float& x : v) x = u(rng);
  return Tensor::from_values<float>(v, std::move(s));
}

ErrorKind kind_of(const RunnerRegistry& reg, std::string_view api, const ApiCall& call) {
  try {
    reg.run_forward(Framework::PyTorch, api, call);
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind::Internal;  // "no error" marker for the assertions below
}

const RunnerRegistry& registry() {
  static const RunnerRegistry reg = RunnerRegistry::with_builtins();
  return reg;
}

TEST(NnRunners, RandomCallsAreUnsupportedNotGuessed) {
  const auto& reg = registry();
  const Tensor q = rnd({1, 2, 3, 4}, 1);
  EXPECT_EQ(kind_of(reg, "Functional.scaled_dot_product_attention",
                    {{Value(q), Value(q), Value(q)}, {{"dropout_p", Value(0.1)}}}),
            ErrorKind::Unsupported);
  EXPECT_EQ(kind_of(reg, "NPU.npu_fusion_attention",
                    {{Value(q), Value(q), Value(q), Value(std::int64_t{2}), Value("BNSD")},
                     {{"keep_prob", Value(0.9)}}}),
            ErrorKind::Unsupported);
  EXPECT_EQ(kind_of(reg, "NPU.npu_fusion_attention",
                    {{Value(q), Value(q), Value(q), Value(std::int64_t{2}), Value("TND")}, {}}),
            ErrorKind::Unsupported);
  EXPECT_EQ(kind_of(reg, "Functional.embedding",
                    {{Value(Tensor::from_values<std::int64_t>({0, 1}, {2})), Value(rnd({3, 2}, 2))},
                     {{"sparse", Value(true)}}}),
            ErrorKind::Unsupported);
  EXPECT_EQ(kind_of(reg, "Functional.interpolate",
                    {{Value(rnd({1, 1, 2, 2}, 3))},
                     {{"size", Value(std::int64_t{4})}, {"mode", Value("bicubic")}}}),
            ErrorKind::Unsupported);
}

TEST(NnRunners, BadArgumentsAreInvalidArgument) {
  const auto& reg = registry();
  // channel mismatch, kernel larger than the padded input, odd swiglu dim, out-of-range target / index
  EXPECT_EQ(
      kind_of(reg, "Functional.conv2d", {{Value(rnd({1, 3, 4, 4}, 1)), Value(rnd({2, 2, 3, 3}, 2))}, {}}),
      ErrorKind::InvalidArgument);
  EXPECT_EQ(
      kind_of(reg, "Functional.conv2d", {{Value(rnd({1, 2, 2, 2}, 1)), Value(rnd({2, 2, 3, 3}, 2))}, {}}),
      ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of(reg, "Functional.conv2d",
                    {{Value(rnd({1, 2, 5, 5}, 1)), Value(rnd({2, 2, 3, 3}, 2))},
                     {{"padding", Value("same")}, {"stride", Value(std::int64_t{2})}}}),
            ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of(reg, "NPU.npu_swiglu", {{Value(rnd({2, 3}, 1))}, {}}), ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of(reg, "Functional.cross_entropy",
                    {{Value(rnd({2, 3}, 1)), Value(Tensor::from_values<std::int64_t>({0, 3}, {2}))}, {}}),
            ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of(reg, "Functional.embedding",
                    {{Value(Tensor::from_values<std::int64_t>({5}, {1})), Value(rnd({3, 2}, 2))}, {}}),
            ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of(reg, "Functional.pad",
                    {{Value(rnd({1, 2, 3}, 1)),
                      Value(std::vector<Value>{Value(std::int64_t{3}), Value(std::int64_t{0})})},
                     {{"mode", Value("reflect")}}}),
            ErrorKind::InvalidArgument);
  EXPECT_EQ(
      kind_of(reg, "Functional.max_pool2d",
              {{Value(rnd({1, 1, 4, 4}, 1)), Value(std::int64_t{2})}, {{"padding", Value(std::int64_t{2})}}}),
      ErrorKind::InvalidArgument);
}

// sparse_mode 2 with torch_npu's compressed 2048x2048 causal mask means the same as sparse_mode 2 without a
// mask: both are the [s1, s2] causal mask (torch_npu documentation of sparse_mode).
TEST(NnRunners, FusionAttentionExpandsTheCompressedCausalMask) {
  const auto& reg = registry();
  const Tensor q = rnd({1, 2, 5, 4}, 7), k = rnd({1, 2, 5, 4}, 8), v = rnd({1, 2, 5, 4}, 9);
  std::vector<std::uint8_t> m(2048 * 2048);
  for (std::size_t i = 0; i < 2048; ++i)
    for (std::size_t j = i + 1; j < 2048; ++j) m[i * 2048 + j] = 1;
  const Tensor mask = Tensor::from_values<std::uint8_t>(m, {2048, 2048}).to(DType::Bool);
  auto run = [&](bool with_mask) {
    ApiCall call{{Value(q), Value(k), Value(v), Value(std::int64_t{2}), Value("BNSD")},
                 {{"sparse_mode", Value(std::int64_t{2})}, {"scale", Value(0.5)}}};
    if (with_mask) call.kwargs.emplace_back("atten_mask", Value(mask));
    return reg.run_forward(Framework::PyTorch, "NPU.npu_fusion_attention", call)
        .outputs[0]
        .tensor()
        .to_doubles();
  };
  const auto a = run(true), b = run(false);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << i;
  // and the causal mask matters: query row 0 attends to key 0 only, so its output is value row 0
  const auto vv = v.to_doubles();
  for (std::size_t j = 0; j < 4; ++j) EXPECT_NEAR(a[j], vv[j], 1e-12);
  // softmax_out, seed, offset and numels are not computed (reported as None)
  ApiCall call{{Value(q), Value(k), Value(v), Value(std::int64_t{2}), Value("BNSD")}, {}};
  const ApiResult r = reg.run_forward(Framework::PyTorch, "NPU.npu_fusion_attention", call);
  ASSERT_EQ(r.outputs.size(), 7u);
  for (std::size_t i = 3; i < 7; ++i) EXPECT_TRUE(r.outputs[i].is_none()) << i;
}

// Sizes computed from arguments are bounded before anything is allocated: a tiny call asking for a huge
// result is a clear error, not an out-of-memory crash.
TEST(NnRunners, HugeResultsAreRefusedBeforeAllocating) {
  const auto& reg = registry();
  const Value big(std::int64_t{1} << 30);
  EXPECT_EQ(kind_of(reg, "Functional.conv_transpose2d",
                    {{Value(rnd({1, 1, 2, 2}, 1)), Value(rnd({1, 1, 2, 2}, 2))}, {{"stride", big}}}),
            ErrorKind::Unsupported);
  EXPECT_EQ(kind_of(reg, "Functional.interpolate",
                    {{Value(rnd({1, 1, 2, 2}, 1))}, {{"size", Value(std::vector<Value>{big, big})}}}),
            ErrorKind::Unsupported);
  EXPECT_EQ(kind_of(reg, "Functional.interpolate",
                    {{Value(rnd({1, 1, 2, 2}, 1))}, {{"scale_factor", Value(1e300)}}}),
            ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of(reg, "Functional.pad",
                    {{Value(rnd({2, 2}, 1)), Value(std::vector<Value>{big, big, big, big})}, {}}),
            ErrorKind::Unsupported);
  EXPECT_EQ(kind_of(reg, "Functional.pad",
                    {{Value(rnd({2, 2}, 1)),
                      Value(std::vector<Value>{Value(std::int64_t{1} << 62), Value(std::int64_t{0})})},
                     {}}),
            ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of(reg, "Functional.adaptive_avg_pool2d",
                    {{Value(rnd({1, 1, 2, 2}, 1)), Value(std::vector<Value>{big, big})}, {}}),
            ErrorKind::Unsupported);
  EXPECT_EQ(kind_of(reg, "Functional.conv2d",
                    {{Value(rnd({1, 1, 2, 2}, 1)), Value(rnd({1, 1, 1, 1}, 2))},
                     {{"padding", Value(std::int64_t{1} << 62)}}}),
            ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of(reg, "Functional.max_pool2d",
                    {{Value(rnd({1, 1, 2, 2}, 1)), Value(std::int64_t{1} << 62)}, {}}),
            ErrorKind::InvalidArgument);
}

// Device (emulated) conv keeps the input dtype and lands close to the float64 reference.
TEST(NnRunners, DeviceConvEmulationKeepsDtype) {
  const auto& reg = registry();
  const ApiCall call{
      {Value(rnd({1, 2, 6, 6}, 1).to(DType::BFloat16)), Value(rnd({3, 2, 3, 3}, 2).to(DType::BFloat16))},
      {{"padding", Value(std::int64_t{1})}}};
  const ApiResult dev = reg.run_forward(Framework::PyTorch, "Functional.conv2d", call, RunnerRole::Device);
  const ApiResult ref = reg.run_forward(Framework::PyTorch, "Functional.conv2d", call);
  ASSERT_EQ(dev.outputs[0].tensor().dtype(), DType::BFloat16);
  const auto d = dev.outputs[0].tensor().to_doubles(), r = ref.outputs[0].tensor().to_doubles();
  for (std::size_t i = 0; i < d.size(); ++i) EXPECT_NEAR(d[i], r[i], 0.02 * (1 + std::fabs(r[i])));
}

}  // namespace
}  // namespace probe
