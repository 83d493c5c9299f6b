// floor(log2 x) as numpy rounds it: the exponent field, plus one just below a power of two where the
// rounded log2 already reaches the next integer. The ULP kernel skips the threshold table for mantissas
// below floor_log2_*_min_mantissa(); these tests check that shortcut against std::log2 directly.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "metrics/NumpyFloat.h"

namespace {

using namespace probe::detail;

TEST(FloorLog2, MantissaShortcutNeverSkipsAnAdjustment) {
  const std::uint64_t m64 = floor_log2_f64_min_mantissa();
  const std::uint32_t m32 = floor_log2_f32_min_mantissa();
  // Adjustments happen only within a few thousand ULPs of the next power of two.
  EXPECT_GT(m64, (std::uint64_t{1} << 52) - (std::uint64_t{1} << 20));
  EXPECT_LT(m64, std::uint64_t{1} << 52);
  EXPECT_GT(m32, (1u << 23) - (1u << 12));
  EXPECT_LT(m32, 1u << 23);
  std::mt19937_64 rng(3);
  for (int e = -1022; e <= 1023; ++e) {
    // The largest mantissa below the shortcut bound, and the bound itself, in every binade.
    for (std::uint64_t mant : {m64 - 1, m64, (std::uint64_t{1} << 52) - 1, rng() % m64}) {
      double x = std::bit_cast<double>((static_cast<std::uint64_t>(e + 1023) << 52) | mant);
      double want = std::floor(std::log2(x));
      EXPECT_EQ(floor_log2_f64(x), want) << x;
      if (mant < m64) {
        EXPECT_EQ(want, static_cast<double>(e)) << "e=" << e << " mantissa=" << mant;
      }
    }
  }
  for (int e = -126; e <= 127; ++e) {
    for (std::uint32_t mant : {m32 - 1, m32, (1u << 23) - 1, static_cast<std::uint32_t>(rng() % m32)}) {
      float x = std::bit_cast<float>((static_cast<std::uint32_t>(e + 127) << 23) | mant);
      double want = std::floor(static_cast<double>(std::log2(x)));
      EXPECT_EQ(floor_log2_f32(x), want) << x;
      if (mant < m32) {
        EXPECT_EQ(want, static_cast<double>(e)) << "e=" << e << " mantissa=" << mant;
      }
    }
  }
}

// Each threshold is exactly where std::log2 (numpy's rounding) first reaches the next integer: log2 of the
// threshold is e + 1 or more (or the threshold is 2^(e+1)), and log2 of the value just below it is less.
template <class F>
void expect_exact_thresholds(const F* table, int min_exp, int max_exp) {
  for (int e = min_exp; e <= max_exp; ++e) {
    const F t = table[e - min_exp];
    const F next_power = std::ldexp(F(1), e + 1);
    const F below = std::nextafter(t, F(0));
    EXPECT_GE(below, std::ldexp(F(1), e)) << "e=" << e;
    EXPECT_LT(std::log2(below), static_cast<F>(e + 1)) << "e=" << e;
    if (t != next_power) {
      EXPECT_GE(std::log2(t), static_cast<F>(e + 1)) << "e=" << e;
    }
  }
}

TEST(FloorLog2, ThresholdsAreWhereLog2ReachesTheNextInteger) {
  expect_exact_thresholds(floor_log2_f64_table(), -1074, 1023);
  expect_exact_thresholds(floor_log2_f32_table(), -149, 127);
}

}  // namespace
