// Internal: compare's two per-row decisions with the caller's thresholds (the public dump_accuracy_reached
// and statistics_diff of metrics.h are these with msprobe's numbers).
#pragma once

#include <optional>
#include <string>

#include "probe/dump_compare.h"
#include "probe/metrics.h"

namespace probe::detail {

/// "Accuracy Reached or Not" from the Cosine and MaxAbsErr cells (§3.8 step 4) under `thresholds`.
AccuracyReached dump_accuracy_reached(const MetricValue& cosine, const MetricValue& max_abs,
                                      const DumpCompareThresholds& thresholds);
/// statistics_diff with the warning ratio `warning_ratio` (§3.6).
StatDiff statistics_diff(std::optional<double> npu, std::optional<double> bench, double warning_ratio);

}  // namespace probe::detail
