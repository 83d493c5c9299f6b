// Random inputs from statistics (precheck §6.5.1): bounds, pinned extremes, NaN/Inf, dtypes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "probe/error.h"
#include "run_ut/RandomInputs.h"

namespace probe::rut {
namespace {

RandomSpec spec(DType t, Shape s, double lo, double hi) {
  RandomSpec r;
  r.dtype = t;
  r.shape = std::move(s);
  r.low = r.low_origin = lo;
  r.high = r.high_origin = hi;
  return r;
}

TEST(RandomInputs, FloatWithinBoundsWithPinnedExtremes) {
  for (DType t : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64}) {
    Tensor x = random_tensor(spec(t, {10, 20}, -2.5, 3.0), 7);
    ASSERT_EQ(x.dtype(), t);
    ASSERT_EQ(x.numel(), 200);
    EXPECT_EQ(x.at(0), -2.5);
    EXPECT_EQ(x.at(199), 3.0);
    double mn = 1e9, mx = -1e9, sum = 0;
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      mn = std::min(mn, x.at(i));
      mx = std::max(mx, x.at(i));
      sum += x.at(i);
    }
    EXPECT_GE(mn, -2.5);
    EXPECT_LE(mx, 3.0);
    EXPECT_NEAR(sum / 200, 0.25, 0.35);  // uniform: mean (lo+hi)/2, sd of the mean ~0.11
  }
}

TEST(RandomInputs, DeterministicPerSeedAndName) {
  auto s = spec(DType::Float32, {64}, 0, 1);
  Tensor a = random_tensor(s, derive_seed(1234, "Functional.relu.0", "input_args.0"));
  Tensor b = random_tensor(s, derive_seed(1234, "Functional.relu.0", "input_args.0"));
  Tensor c = random_tensor(s, derive_seed(1234, "Functional.relu.1", "input_args.0"));
  Tensor d = random_tensor(s, derive_seed(99, "Functional.relu.0", "input_args.0"));
  EXPECT_EQ(a.to_doubles(), b.to_doubles());
  EXPECT_NE(a.to_doubles(), c.to_doubles());
  EXPECT_NE(a.to_doubles(), d.to_doubles());
}

TEST(RandomInputs, NanAndInfStatistics) {
  auto all_nan = spec(DType::Float32, {3, 2}, 1, std::nan(""));
  Tensor n = random_tensor(all_nan, 1);
  for (std::int64_t i = 0; i < n.numel(); ++i) EXPECT_TRUE(std::isnan(n.at(i)));

  // Max = +inf: filled with inf, the last row takes Min.
  auto inf = spec(DType::Float16, {3, 2}, -1, INFINITY);
  Tensor f = random_tensor(inf, 1);
  EXPECT_TRUE(std::isinf(f.at(0)));
  EXPECT_TRUE(std::isinf(f.at(3)));
  EXPECT_EQ(f.at(4), -1);
  EXPECT_EQ(f.at(5), -1);

  // Legacy dumps: finite bounds from *_except_inf_nan, the origins pinned at the ends.
  RandomSpec legacy = spec(DType::Float32, {50}, -1, 2);
  legacy.low_origin = -INFINITY;
  legacy.high_origin = std::nan("");
  Tensor l = random_tensor(legacy, 3);
  EXPECT_EQ(l.at(0), -1);
  EXPECT_TRUE(std::isnan(l.at(1)));
  EXPECT_EQ(l.at(49), 2);
  RandomSpec neg_inf_min = spec(DType::Float32, {50}, -1, 2);
  neg_inf_min.low_origin = -INFINITY;
  Tensor m = random_tensor(neg_inf_min, 3);
  EXPECT_EQ(m.at(0), -INFINITY);
  EXPECT_EQ(m.at(49), 2);
}

TEST(RandomInputs, IntegersBoolsScalarsAndEmpty) {
  Tensor i = random_tensor(spec(DType::Int64, {100}, -3, 4), 5);
  ASSERT_EQ(i.dtype(), DType::Int64);
  for (std::int64_t k = 0; k < i.numel(); ++k) {
    EXPECT_GE(i.at(k), -3);
    EXPECT_LE(i.at(k), 4);
    EXPECT_EQ(i.at(k), std::trunc(i.at(k)));
  }
  Tensor b = random_tensor(spec(DType::Bool, {200}, 0, 1), 5);
  ASSERT_EQ(b.dtype(), DType::Bool);
  int ones = 0;
  for (std::int64_t k = 0; k < b.numel(); ++k) ones += b.at(k) != 0;
  EXPECT_GT(ones, 50);
  EXPECT_LT(ones, 150);
  // Max = Min = False: all false.
  Tensor f = random_tensor(spec(DType::Bool, {10}, 0, 0), 5);
  for (std::int64_t k = 0; k < f.numel(); ++k) EXPECT_EQ(f.at(k), 0);
  // 0-d: the single element ends as Max.
  Tensor s = random_tensor(spec(DType::Float32, {}, 1.5, 1.5), 5);
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.at(0), 1.5);
  // Empty shapes need no statistics (msprobe writes null for them).
  RandomSpec e;
  e.dtype = DType::Float16;
  e.shape = {0, 4};
  EXPECT_EQ(random_tensor(e, 1).numel(), 0);
}

TEST(RandomInputs, NonNumericStatisticsAreAnError) {
  RandomSpec r;
  r.shape = {2};
  r.min_text = "None";
  r.max_text = "'abc'";
  try {
    random_tensor(r, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "Data info Min: None, Max: 'abc', info type must be int or float.");
  }
}

}  // namespace
}  // namespace probe::rut
