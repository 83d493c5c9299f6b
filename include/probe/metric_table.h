// The one table of run_ut's per-output metrics: the name `probe metrics` prints, the details-CSV column of
// each checker, where compute_metrics puts the value, the details column it fills and which precision
// standards report it. Details headers, details rows, the standards' columns and `probe metrics` read it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "probe/export.h"
#include "probe/metrics.h"
#include "probe/output_compare.h"
#include "probe/precision_standard.h"

namespace probe {

/// One metric (an immutable table row; the cell text is MetricValue::format of the value).
struct MetricColumn {
  std::string_view id;                ///< TensorMetrics' name, printed by `probe metrics` ("cosine")
  std::string_view pytorch_header;    ///< PyTorch details column; empty: it fills another metric's column
  std::string_view mindspore_header;  ///< MindSpore details column (float64 value), empty if none
  MetricValue TensorMetrics::*value;  ///< where compute_metrics puts it
  MetricValue DetailRow::*column;     ///< the PyTorch details column it fills
  std::uint32_t standards;            ///< bit (1 << Standard): the new-standard algorithms that report it

  /// True when `s` reports this metric in its details row (the old rule's columns are reported by none).
  constexpr bool reported_by(Standard s) const noexcept {
    return (standards >> static_cast<unsigned>(s)) & 1u;
  }
};

/// Every metric in PyTorch details-column order, the accumulative standard's ratios (which share the
/// absolute threshold's columns) after the column they fill.
PROBE_API std::span<const MetricColumn> metric_table() noexcept;

/// The PyTorch details column of metric `id` ("rmse" -> "均方根误差"); throws probe::Error (InvalidArgument)
/// for an id the table does not have or one without a column of its own.
PROBE_API std::string_view metric_pytorch_header(std::string_view id);

}  // namespace probe
