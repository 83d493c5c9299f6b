// 16-bit floating-point storage types, so that public headers need no Eigen.
// They hold raw IEEE binary16 / bfloat16 bits; arithmetic happens after conversion.
#pragma once

#include <complex>
#include <cstdint>

#include "probe/dtype.h"
#include "probe/export.h"

namespace probe {

/// IEEE 754 binary16 bits.
struct PROBE_API float16_t {
  std::uint16_t bits = 0;
};
/// bfloat16 bits (the upper half of a float32).
struct PROBE_API bfloat16_t {
  std::uint16_t bits = 0;
};

PROBE_API double to_double(float16_t v) noexcept;
PROBE_API double to_double(bfloat16_t v) noexcept;
/// Round-to-nearest-even conversions (float64 goes through float32 first, as PyTorch's casts do).
PROBE_API float16_t to_float16(float v) noexcept;
PROBE_API bfloat16_t to_bfloat16(float v) noexcept;
PROBE_API float16_t to_float16(double v) noexcept;
PROBE_API bfloat16_t to_bfloat16(double v) noexcept;

/// The DType that stores elements of C++ type T.
template <class T>
struct dtype_of;
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::Bool;
};
template <>
struct dtype_of<std::uint8_t> {
  static constexpr DType value = DType::UInt8;
};
template <>
struct dtype_of<std::int8_t> {
  static constexpr DType value = DType::Int8;
};
template <>
struct dtype_of<std::int16_t> {
  static constexpr DType value = DType::Int16;
};
template <>
struct dtype_of<std::int32_t> {
  static constexpr DType value = DType::Int32;
};
template <>
struct dtype_of<std::int64_t> {
  static constexpr DType value = DType::Int64;
};
template <>
struct dtype_of<std::uint16_t> {
  static constexpr DType value = DType::UInt16;
};
template <>
struct dtype_of<std::uint32_t> {
  static constexpr DType value = DType::UInt32;
};
template <>
struct dtype_of<std::uint64_t> {
  static constexpr DType value = DType::UInt64;
};
template <>
struct dtype_of<float16_t> {
  static constexpr DType value = DType::Float16;
};
template <>
struct dtype_of<bfloat16_t> {
  static constexpr DType value = DType::BFloat16;
};
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::Float32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::Float64;
};
template <>
struct dtype_of<std::complex<float>> {
  static constexpr DType value = DType::Complex64;
};
template <>
struct dtype_of<std::complex<double>> {
  static constexpr DType value = DType::Complex128;
};
template <class T>
inline constexpr DType dtype_of_v = dtype_of<T>::value;

}  // namespace probe
