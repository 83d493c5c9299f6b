#include <Eigen/Core>
#include <bit>

#include "probe/scalar_types.h"

namespace probe {

double to_double(float16_t v) noexcept {
  return static_cast<double>(static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(v.bits)));
}
double to_double(bfloat16_t v) noexcept {
  return static_cast<double>(static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(v.bits)));
}
float16_t to_float16(float v) noexcept { return {Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(v))}; }
bfloat16_t to_bfloat16(float v) noexcept {
  return {Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(v))};
}
// PyTorch narrows float64 to half/bfloat16 through float32; matching it matters more than
// avoiding the (rare) double rounding.
float16_t to_float16(double v) noexcept { return to_float16(static_cast<float>(v)); }
bfloat16_t to_bfloat16(double v) noexcept { return to_bfloat16(static_cast<float>(v)); }

}  // namespace probe
