// compare's "Accuracy Reached or Not" (AccuracyReached): msprobe's rule, No when cosine < 0.99 and max abs
// error > 0.001, or cosine < 0.9, or max abs error > 1, every comparison strict; the expected verdicts are
// worked out by hand from that rule at and around each boundary, with Python's float semantics for "Nan"
// (every comparison with NaN is false).
#include <gtest/gtest.h>

#include "probe/metrics.h"

namespace probe {
namespace {

AccuracyReached reached(double cosine, double max_abs) {
  return dump_accuracy_reached(MetricValue::f64(cosine), MetricValue::f64(max_abs));
}

TEST(AccuracyReached, NumbersAtAndAroundEachThreshold) {
  EXPECT_EQ(reached(0.995, 0.5), AccuracyReached::Yes);   // cosine above 0.99: max abs only checked against 1
  EXPECT_EQ(reached(0.98, 0.002), AccuracyReached::No);   // both first thresholds crossed
  EXPECT_EQ(reached(0.98, 0.001), AccuracyReached::Yes);  // 0.001 is not above 0.001
  EXPECT_EQ(reached(0.99, 0.5), AccuracyReached::Yes);    // 0.99 is not below 0.99
  EXPECT_EQ(reached(0.9, 0.001), AccuracyReached::Yes);   // the cosine floor is strict
  EXPECT_EQ(reached(0.995, 1.0), AccuracyReached::Yes);   // so is the max abs ceiling
  EXPECT_EQ(reached(0.9, 1.0), AccuracyReached::No);      // below 0.99 with max abs above 0.001
  EXPECT_EQ(reached(0.8999, 0.0), AccuracyReached::No);   // below the cosine floor
  EXPECT_EQ(reached(1.0, 1.0001), AccuracyReached::No);   // above the max abs ceiling
}

TEST(AccuracyReached, TextCells) {
  const MetricValue ok = MetricValue::f64(0.5);
  EXPECT_EQ(dump_accuracy_reached(MetricValue::str("shape unmatched"), ok), AccuracyReached::Unmatched);
  EXPECT_EQ(dump_accuracy_reached(MetricValue::str("None"), ok), AccuracyReached::None);
  EXPECT_EQ(dump_accuracy_reached(ok, MetricValue::str("None")), AccuracyReached::None);
  EXPECT_EQ(dump_accuracy_reached(MetricValue::str("N/A"), ok), AccuracyReached::No);
  EXPECT_EQ(dump_accuracy_reached(MetricValue::str("unsupported"), ok), AccuracyReached::None);
  // float("Nan") < 0.99 is False in Python, so a NaN cosine alone does not make the row fail.
  EXPECT_EQ(dump_accuracy_reached(MetricValue::str("Nan"), ok), AccuracyReached::Yes);
  EXPECT_EQ(dump_accuracy_reached(MetricValue::str("Nan"), MetricValue::f64(2.0)), AccuracyReached::No);
}

TEST(AccuracyReached, CsvTexts) {
  EXPECT_EQ(to_string(AccuracyReached::Yes), "Yes");
  EXPECT_EQ(to_string(AccuracyReached::No), "No");
  EXPECT_EQ(to_string(AccuracyReached::None), "None");
  EXPECT_EQ(to_string(AccuracyReached::Unmatched), "Unmatched");
}

}  // namespace
}  // namespace probe
