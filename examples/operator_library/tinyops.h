// tinyops: a tiny operator library of float16/bfloat16 CPU kernels, standing in for the library under
// test in examples/operator_library/tinyops_test.cpp. It knows nothing about probe: its tests use probe as
// the float64 oracle through probe::gtest.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tinyops {

/// IEEE binary16 and bfloat16 values by their bits, as kernels store them.
struct half {
  std::uint16_t bits;
};
struct bfloat16 {
  std::uint16_t bits;
};

/// Round to nearest even (NaN stays NaN; float16 overflow gives inf).
half to_half(float f);
bfloat16 to_bfloat16(float f);
float to_float(half h);
float to_float(bfloat16 b);

/// Each kernel computes in float32 and rounds once, for T = half or bfloat16. Buffers are row-major.
template <class T>
void gelu(const T* x, T* y, std::size_t n);  ///< exact (erf) gelu
template <class T>
void gelu_tanh(const T* x, T* y, std::size_t n);  ///< gelu's tanh approximation (torch: approximate='tanh')
template <class T>
void softmax(const T* x, T* y, std::size_t rows, std::size_t cols);  ///< over the last dimension
template <class T>
void rms_norm(const T* x, const T* weight, T* y, std::size_t rows, std::size_t cols, float eps);
template <class T>
void matmul(const T* a, const T* b, T* c, std::size_t m, std::size_t k, std::size_t n);  ///< float32 sums

/// The flawed variant: the running sum is kept in T, i.e. rounded after every multiply-add, as a kernel
/// that "accumulates in the output type" does. Its error grows with k.
template <class T>
void matmul_low_precision_accumulator(const T* a, const T* b, T* c, std::size_t m, std::size_t k,
                                      std::size_t n);

}  // namespace tinyops
