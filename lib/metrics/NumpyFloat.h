// Internal: the float arithmetic numpy performs for msprobe's metrics, reproduced bit for bit:
// float16 rounding (numpy computes half ops in float and rounds back), numpy's double->half cast
// (direct, no double rounding), bf16/half loads, and floor(log2(x)) as numpy's log2 rounds it.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "probe/scalar_types.h"
#include "support/Bfloat16.h"

namespace probe::detail {

/// float16 bits -> float, through a table built once (fp16 tensors are read per element).
const float* half_table() noexcept;
inline float load_half(std::uint16_t bits) noexcept { return half_table()[bits]; }

/// Rounds a float to the nearest float16 value (ties to even), returned as float.
inline float round_half(float x) noexcept {
  float a = std::fabs(x);
  if (!(a < 65520.0f)) return a != a ? x : std::copysign(std::numeric_limits<float>::infinity(), x);
  if (a < 0x1p-14f) return std::copysign(std::nearbyint(a * 0x1p24f) * 0x1p-24f, x);
  std::uint32_t bits = std::bit_cast<std::uint32_t>(a);
  bits += 0xFFFu + ((bits >> 13) & 1u);
  bits &= ~0x1FFFu;
  return std::copysign(std::bit_cast<float>(bits), x);
}
/// numpy's float64 -> float16 cast: one correct rounding (torch would go through float32).
inline float round_half(double x) noexcept {
  double a = std::fabs(x);
  if (!(a < 65520.0))
    return a != a ? static_cast<float>(x)
                  : std::copysign(std::numeric_limits<float>::infinity(), static_cast<float>(x));
  if (a < 0x1p-14) return static_cast<float>(std::copysign(std::nearbyint(a * 0x1p24) * 0x1p-24, x));
  std::uint64_t bits = std::bit_cast<std::uint64_t>(a);
  const std::uint64_t low = (std::uint64_t{1} << 42) - 1;
  bits += (low >> 1) + ((bits >> 42) & 1u);
  bits &= ~low;
  return static_cast<float>(std::copysign(std::bit_cast<double>(bits), x));
}

/// floor(np.log2(x)) for x > 0 finite, where np.log2 rounds its result in float32 (resp. float64):
/// just below a power of two the rounded log2 reaches the next integer, which msprobe's ULP
/// exponent inherits. Exact exponent plus a per-exponent threshold table built with the C library.
double floor_log2_f32(float x) noexcept;
double floor_log2_f64(double x) noexcept;
/// Per-binade thresholds behind floor_log2_f32/f64: entry e + 149 (f32) or e + 1074 (f64) is the smallest x
/// in [2^e, 2^(e+1)) whose rounded log2 reaches e + 1 (so floor(log2(x)) = e + (x >= entry)).
const float* floor_log2_f32_table() noexcept;
const double* floor_log2_f64_table() noexcept;
/// The smallest mantissa field of any normal binade's threshold below the binade's top: a normal x
/// whose mantissa field is smaller has floor(log2 x) equal to its exponent field, without the table.
std::uint32_t floor_log2_f32_min_mantissa() noexcept;
std::uint64_t floor_log2_f64_min_mantissa() noexcept;
/// float16 arrays: numpy computes log2 in float and rounds to half.
inline double floor_log2_f16(float x) noexcept { return std::floor(round_half(std::log2(x))); }

}  // namespace probe::detail
