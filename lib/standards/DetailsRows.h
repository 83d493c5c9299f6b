// The details CSV's header built from the metric table, for run_ut's two checkers (PyTorch's header is
// probe::details_csv_header(), MindSpore's spells the columns its own way).
#pragma once

#include <string_view>

#include "probe/csv.h"
#include "probe/metric_table.h"

namespace probe::detail {

/// Four leading columns (`tested_dtype` third), one per metric with a `header`, then Status and Message.
CsvRow details_header_of(std::string_view MetricColumn::*header, const char* tested_dtype);

}  // namespace probe::detail
