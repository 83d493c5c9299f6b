// Judging one NPU details row against its GPU row (precheck.md §5.2 step 4 and §5.3).
#pragma once

#include <cstddef>
#include <string>

#include "precision_compare/DetailsTable.h"
#include "precision_compare/RowFormat.h"
#include "probe/csv.h"
#include "probe/status.h"
#include "standards/Thresholds.h"

namespace probe::precision_compare {

/// Columns both inputs must have (msprobe aborts without them).
const std::vector<std::string>& required_columns();

/// Which algorithm judges this row (§4.2 as api_precision_compare applies it).
Standard choose_algorithm(const Thresholds& t, const DetailsTable& npu, std::size_t row,
                          const std::string& api_name);

/// Fills `detail` for NPU row `nrow` / GPU row `grow` and returns its status (Pass, Error or Skip).
/// Throws RowSkip where msprobe turns an exception into a SKIP row.
Status judge_row(const Thresholds& t, const DetailsTable& npu, std::size_t nrow, const DetailsTable& gpu,
                 std::size_t grow, const std::string& api_name, CsvRow& detail);

}  // namespace probe::precision_compare
