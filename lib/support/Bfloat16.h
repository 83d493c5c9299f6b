// Internal: bfloat16 bits as float, inline for per-element loops (the exported probe::to_double is a call).
#pragma once

#include <bit>
#include <cstdint>

namespace probe::detail {

/// bfloat16 is the upper half of a float32: exact, NaN payloads kept.
inline float load_bf16(std::uint16_t bits) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

}  // namespace probe::detail
