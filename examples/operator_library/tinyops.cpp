#include "tinyops.h"

#include <bit>
#include <cmath>
#include <vector>

namespace tinyops {

half to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u)
    return {static_cast<std::uint16_t>(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u))};
  if (ax >= 0x477ff000u) return {static_cast<std::uint16_t>(sign | 0x7c00u)};  // >= 65520 rounds to inf
  if (ax < 0x38800000u) {
    // Below 2^-14 binary16 is subnormal with step 2^-24: scale, then round to nearest even (default mode).
    const float scaled = std::bit_cast<float>(ax) * 0x1p24f;
    return {static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(scaled)))};
  }
  // Re-bias the exponent (127 -> 15) and round the 13 dropped mantissa bits to nearest even.
  const std::uint32_t r = ax - 0x38000000u + 0xfffu + ((ax >> 13) & 1u);
  return {static_cast<std::uint16_t>(sign | (r >> 13))};
}

float to_float(half h) {
  const std::uint32_t sign = (h.bits & 0x8000u) << 16, exponent = (h.bits >> 10) & 0x1fu,
                      mantissa = h.bits & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

bfloat16 to_bfloat16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return {static_cast<std::uint16_t>((x >> 16) | 0x40u)};  // quiet NaN
  return {static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16)};
}

float to_float(bfloat16 b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b.bits) << 16); }

namespace {
template <class T>
T from_float(float f);
template <>
half from_float<half>(float f) {
  return to_half(f);
}
template <>
bfloat16 from_float<bfloat16>(float f) {
  return to_bfloat16(f);
}
}  // namespace

template <class T>
void gelu(const T* x, T* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    // erfc keeps the left tail accurate: 1 + erf(v / sqrt 2) cancels for v < -3.
    const float v = to_float(x[i]);
    y[i] = from_float<T>(0.5f * v * std::erfc(-v * 0.70710678118654752f));
  }
}

template <class T>
void gelu_tanh(const T* x, T* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    // x/2 (1 + tanh u) = x / (1 + e^(-2u)): no cancellation in the left tail.
    const float v = to_float(x[i]);
    const float u = 0.79788456080286536f * (v + 0.044715f * v * v * v);
    y[i] = from_float<T>(v / (1.0f + std::exp(-2.0f * u)));
  }
}

template <class T>
void softmax(const T* x, T* y, std::size_t rows, std::size_t cols) {
  std::vector<float> e(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    const T* in = x + r * cols;
    float max = -INFINITY, sum = 0;
    for (std::size_t j = 0; j < cols; ++j) max = std::fmax(max, to_float(in[j]));
    for (std::size_t j = 0; j < cols; ++j) sum += e[j] = std::exp(to_float(in[j]) - max);
    for (std::size_t j = 0; j < cols; ++j) y[r * cols + j] = from_float<T>(e[j] / sum);
  }
}

template <class T>
void rms_norm(const T* x, const T* weight, T* y, std::size_t rows, std::size_t cols, float eps) {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* in = x + r * cols;
    float squares = 0;
    for (std::size_t j = 0; j < cols; ++j) squares += to_float(in[j]) * to_float(in[j]);
    const float scale = 1.0f / std::sqrt(squares / static_cast<float>(cols) + eps);
    for (std::size_t j = 0; j < cols; ++j)
      y[r * cols + j] = from_float<T>(to_float(in[j]) * scale * to_float(weight[j]));
  }
}

template <class T>
void matmul(const T* a, const T* b, T* c, std::size_t m, std::size_t k, std::size_t n) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      float acc = 0;
      for (std::size_t p = 0; p < k; ++p) acc += to_float(a[i * k + p]) * to_float(b[p * n + j]);
      c[i * n + j] = from_float<T>(acc);
    }
}

template <class T>
void matmul_low_precision_accumulator(const T* a, const T* b, T* c, std::size_t m, std::size_t k,
                                      std::size_t n) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      T acc = from_float<T>(0);
      for (std::size_t p = 0; p < k; ++p)
        acc = from_float<T>(to_float(acc) + to_float(a[i * k + p]) * to_float(b[p * n + j]));
      c[i * n + j] = acc;
    }
}

#define TINYOPS_INSTANTIATE(T)                                                                        \
  template void gelu<T>(const T*, T*, std::size_t);                                                   \
  template void gelu_tanh<T>(const T*, T*, std::size_t);                                              \
  template void softmax<T>(const T*, T*, std::size_t, std::size_t);                                   \
  template void rms_norm<T>(const T*, const T*, T*, std::size_t, std::size_t, float);                 \
  template void matmul<T>(const T*, const T*, T*, std::size_t, std::size_t, std::size_t);             \
  template void matmul_low_precision_accumulator<T>(const T*, const T*, T*, std::size_t, std::size_t, \
                                                    std::size_t);
TINYOPS_INSTANTIATE(half)
TINYOPS_INSTANTIATE(bfloat16)

}  // namespace tinyops
