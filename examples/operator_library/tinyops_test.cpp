// The GoogleTest suite of tinyops with probe as its oracle (probe::gtest): every kernel is checked against
// probe's float64 bench runner of the matching PyTorch API and judged like msprobe's run_ut and precision
// standards. Two realistic flaws are shown being caught: a matmul accumulating in float16, and the tanh
// approximation of gelu shipped as exact gelu.
#include "tinyops.h"

#include <gtest/gtest-spi.h>
#include <probe/testing.h>

#include <cstdint>
#include <type_traits>
#include <vector>

namespace {

using probe::DType;
using probe::Tensor;
using probe::testing::args;

// A deterministic spread of values in [lo, hi) (a linear congruential generator, fixed seed).
std::vector<double> spread(std::size_t n, double lo, double hi, std::uint32_t seed) {
  std::vector<double> v(n);
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = lo + (hi - lo) * (seed >> 8) / double(1u << 24);
  }
  return v;
}

// probe tensors <-> tinyops buffers, through values both sides represent exactly.
template <class T>
std::vector<T> buffer(const Tensor& t) {
  std::vector<T> out;
  for (double v : t.to_doubles()) {
    if constexpr (std::is_same_v<T, tinyops::half>)
      out.push_back(tinyops::to_half(static_cast<float>(v)));
    else
      out.push_back(tinyops::to_bfloat16(static_cast<float>(v)));
  }
  return out;
}
template <class T>
Tensor tensor(const std::vector<T>& b, DType dtype, probe::Shape shape) {
  std::vector<double> v;
  for (const T& x : b) v.push_back(tinyops::to_float(x));
  return Tensor::from_values<double>(v, std::move(shape)).to(dtype);
}
Tensor input(std::vector<double> v, DType dtype, probe::Shape shape) {
  return Tensor::from_values<double>(v, std::move(shape)).to(dtype);
}

template <class T>
class Tinyops : public ::testing::Test {
 protected:
  static constexpr DType kDType = std::is_same_v<T, tinyops::half> ? DType::Float16 : DType::BFloat16;
};
using Types = ::testing::Types<tinyops::half, tinyops::bfloat16>;
TYPED_TEST_SUITE(Tinyops, Types);

TYPED_TEST(Tinyops, Gelu) {
  const Tensor x = input(spread(1024, -5, 5, 1), this->kDType, {1024});
  const auto in = buffer<TypeParam>(x);
  std::vector<TypeParam> out(in.size());
  tinyops::gelu(in.data(), out.data(), in.size());
  EXPECT_PROBE_ACCURATE("Functional.gelu", args(x), tensor(out, this->kDType, {1024}));
}

TYPED_TEST(Tinyops, GeluTanhApproximation) {
  const Tensor x = input(spread(1024, -5, 5, 1), this->kDType, {1024});
  const auto in = buffer<TypeParam>(x);
  std::vector<TypeParam> out(in.size());
  tinyops::gelu_tanh(in.data(), out.data(), in.size());
  probe::ApiCall call = args(x);
  call.kwargs.emplace_back("approximate", probe::Value("tanh"));
  EXPECT_PROBE_ACCURATE("Functional.gelu", call, tensor(out, this->kDType, {1024}));
}

TYPED_TEST(Tinyops, Softmax) {
  const Tensor x = input(spread(8 * 64, -4, 4, 2), this->kDType, {8, 64});
  const auto in = buffer<TypeParam>(x);
  std::vector<TypeParam> out(in.size());
  tinyops::softmax(in.data(), out.data(), 8, 64);
  EXPECT_PROBE_ACCURATE("Functional.softmax", args(x, 1), tensor(out, this->kDType, {8, 64}));
}

TYPED_TEST(Tinyops, RmsNorm) {
  const Tensor x = input(spread(8 * 64, -3, 3, 3), this->kDType, {8, 64});
  const Tensor w = input(spread(64, 0.5, 1.5, 4), this->kDType, {64});
  const auto in = buffer<TypeParam>(x), weight = buffer<TypeParam>(w);
  std::vector<TypeParam> out(in.size());
  tinyops::rms_norm(in.data(), weight.data(), out.data(), 8, 64, 1e-6f);
  const probe::Value normalized_shape(std::vector<probe::Value>{probe::Value(std::int64_t{64})});
  EXPECT_PROBE_ACCURATE("Functional.rms_norm", args(x, normalized_shape, w, 1e-6),
                        tensor(out, this->kDType, {8, 64}));
}

TYPED_TEST(Tinyops, Matmul) {
  const Tensor a = input(spread(16 * 256, -1, 1, 5), this->kDType, {16, 256});
  const Tensor b = input(spread(256 * 16, -1, 1, 6), this->kDType, {256, 16});
  const auto ab = buffer<TypeParam>(a), bb = buffer<TypeParam>(b);
  std::vector<TypeParam> out(16 * 16);
  tinyops::matmul(ab.data(), bb.data(), out.data(), 16, 256, 16);
  EXPECT_PROBE_ACCURATE("Torch.matmul", args(a, b), tensor(out, this->kDType, {16, 16}));
}

// The realistic flaw: a float16 running sum over k = 256 products loses low bits at every step (the sum
// reaches ~8, where a float16 step is 2^-7), so results are many ulps off. matmul is judged by the ULP
// standard: far more than 0.1% of the elements are above 1 ulp -> error.
TEST(TinyopsFlaw, Float16AccumulatorIsCaught) {
  const Tensor a = input(spread(16 * 256, -1, 1, 5), DType::Float16, {16, 256});
  const Tensor b = input(spread(256 * 16, -1, 1, 6), DType::Float16, {256, 16});
  const auto ab = buffer<tinyops::half>(a), bb = buffer<tinyops::half>(b);
  std::vector<tinyops::half> out(16 * 16);
  tinyops::matmul_low_precision_accumulator(ab.data(), bb.data(), out.data(), 16, 256, 16);
  EXPECT_NONFATAL_FAILURE(
      EXPECT_PROBE_ACCURATE("Torch.matmul", args(a, b), tensor(out, DType::Float16, {16, 16})),
      "precision standard ulp_compare: error (ulp)");
}

// The mis-approximation: the tanh form shipped as exact gelu. It is within 0.02% of gelu for x > 0 but
// 10% low at x = -3 (python math: exact -0.0040497, tanh form -0.0036374), so more than 1% of the elements
// of [-5, 5] have a relative error above 0.01 -> the run_ut rule says error.
TEST(TinyopsFlaw, TanhApproximationIsNotExactGelu) {
  const Tensor x = input(spread(1024, -5, 5, 1), DType::Float16, {1024});
  const auto in = buffer<tinyops::half>(x);
  std::vector<tinyops::half> out(in.size());
  tinyops::gelu_tanh(in.data(), out.data(), in.size());
  EXPECT_NONFATAL_FAILURE(
      EXPECT_PROBE_ACCURATE("Functional.gelu", args(x), tensor(out, DType::Float16, {1024})),
      "run_ut rule: error (old rule)");
}

}  // namespace
