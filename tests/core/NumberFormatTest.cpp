#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "probe/number_format.h"

namespace probe {
namespace {

// Expected strings printed by Python 3.11 / numpy 1.24.
TEST(NumberFormat, FixedLikePythonFormat) {
  EXPECT_EQ(format_fixed(1.0 / 6.0), "0.16666666666667");
  EXPECT_EQ(format_fixed(-0.0), "-0.00000000000000");
  EXPECT_EQ(format_fixed(std::nan("")), "nan");
  EXPECT_EQ(format_fixed(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(format_fixed(2.5, 0), "2");
}

TEST(NumberFormat, DoubleRepr) {
  EXPECT_EQ(python_repr(123456789.0), "123456789.0");
  EXPECT_EQ(python_repr(1e16), "1e+16");
  EXPECT_EQ(python_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(python_repr(1e-5), "1e-05");
  EXPECT_EQ(python_repr(0.0001), "0.0001");
  EXPECT_EQ(python_repr(-3.125732421875), "-3.125732421875");
  EXPECT_EQ(python_repr(1.2345678901234568e+17), "1.2345678901234568e+17");
  EXPECT_EQ(python_repr(-0.0), "-0.0");
  EXPECT_EQ(python_repr(0.1), "0.1");
  EXPECT_EQ(python_repr(5e-324), "5e-324");
}

TEST(NumberFormat, Float32ReprLikeNumpyStr) {
  EXPECT_EQ(python_repr(123456789.0f), "123456790.0");
  EXPECT_EQ(python_repr(0.011962891f), "0.011962891");
  EXPECT_EQ(python_repr(0.0001f), "1e-04");  // float32(1e-4) is just below 1e-4
  EXPECT_EQ(python_repr(2.4348958f), "2.4348958");
  EXPECT_EQ(python_repr(12.0f), "12.0");
  EXPECT_EQ(python_repr(3.4e38f), "3.4e+38");
}

TEST(NumberFormat, Float16ReprLikeNumpyStr) {
  EXPECT_EQ(python_repr(to_float16(2.4348958f)), "2.436");
  EXPECT_EQ(python_repr(to_float16(0.011962891f)), "0.01196");
  EXPECT_EQ(python_repr(to_float16(0.0996f)), "0.0996");
  EXPECT_EQ(python_repr(to_float16(12.0f)), "12.0");
  EXPECT_EQ(python_repr(to_float16(1e-5f)), "1e-05");
  EXPECT_EQ(python_repr(to_float16(-0.0f)), "-0.0");
  EXPECT_EQ(python_repr(to_float16(70000.0f)), "inf");
}

}  // namespace
}  // namespace probe
