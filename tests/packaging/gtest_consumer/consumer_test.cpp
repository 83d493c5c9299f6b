// An operator-library test built against an installed probe with find_package(probe COMPONENTS gtest).
#include <gtest/gtest-spi.h>
#include <probe/testing.h>

// relu is exact in every dtype: the float16 input itself is the correctly rounded result for x >= 0.
TEST(Consumer, ExactReluPassesAndAWrongOneFails) {
  const probe::Tensor x =
      probe::Tensor::from_values<double>({-2.0, -0.5, 0.0, 0.25, 1.5, 3.0}, probe::Shape{6})
          .to(probe::DType::Float16);
  const probe::Tensor good =
      probe::Tensor::from_values<double>({0.0, 0.0, 0.0, 0.25, 1.5, 3.0}, probe::Shape{6})
          .to(probe::DType::Float16);
  const probe::Tensor bad =
      probe::Tensor::from_values<double>({0.0, 0.0, 0.0, 0.25, 1.5, 3.5}, probe::Shape{6})
          .to(probe::DType::Float16);
  EXPECT_PROBE_ACCURATE("Functional.relu", probe::testing::args(x), good);
  EXPECT_NONFATAL_FAILURE(EXPECT_PROBE_ACCURATE("Functional.relu", probe::testing::args(x), bad), "__REPRO:");
}

// GoogleTest prints a probe::Tensor readably (probe::PrintTo): a failed matcher shows dtype, shape and
// values.
TEST(Consumer, AFailedMatcherPrintsTheTensor) {
  const probe::Tensor x =
      probe::Tensor::from_values<double>({-2.0, -0.5, 0.0, 0.25, 1.5, 3.0}, probe::Shape{6})
          .to(probe::DType::Float16);
  EXPECT_EQ(::testing::PrintToString(x), "float16 (6,) [-2.0, -0.5, 0.0, 0.25, 1.5, 3.0]");
  const probe::Tensor bench = probe::Tensor::from_values<double>({1.0, 2.0, 3.0}, probe::Shape{3});
  const probe::Tensor device =
      probe::Tensor::from_values<double>({1.0, 2.0, 4.0}, probe::Shape{3}).to(probe::DType::Float32);
  EXPECT_NONFATAL_FAILURE(EXPECT_THAT(device, probe::testing::IsAccurate(bench, probe::DType::Float32)),
                          "Actual: float32 (3,) [1.0, 2.0, 4.0]");
}
