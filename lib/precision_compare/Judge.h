// Judging one NPU details row against its GPU row (precheck.md §5.2 step 4 and §5.3).
#pragma once

#include <cstddef>
#include <string>

#include "precision_compare/DetailsTable.h"
#include "precision_compare/Thresholds.h"
#include "probe/csv.h"
#include "probe/status.h"

namespace probe::precision_compare {

/// msprobe's blank cell.
inline constexpr const char* kSpace = " ";

/// The 28 columns of api_precision_compare_details_*.csv, in order.
enum DetailCol : std::size_t {
  kApiName,
  kSmallRatio,
  kSmallStatus,
  kRmseRatio,
  kRmseStatus,
  kMaxRelRatio,
  kMaxRelStatus,
  kMeanRelRatio,
  kMeanRelStatus,
  kEbRatio,
  kEbStatus,
  kInfNanRate,
  kInfNanStatus,
  kRelErrRate,
  kRelErrStatus,
  kAbsErrRate,
  kAbsErrStatus,
  kErrorRate,
  kErrorRateStatus,
  kMeanUlp,
  kUlpProportion,
  kUlpProportionRatio,
  kUlpStatus,
  kThousandth,
  kThousandthStatus,
  kCompareResult,
  kAlgorithm,
  kMessage,
  kDetailColumns
};

const CsvRow& details_header();
const CsvRow& result_header();
/// Columns both inputs must have (msprobe aborts without them).
const std::vector<std::string>& required_columns();

/// A details row for `api`: every cell SPACE.
CsvRow blank_detail_row(const std::string& api);

/// Which algorithm judges this row (§4.2 as api_precision_compare applies it).
Standard choose_algorithm(const Thresholds& t, const DetailsTable& npu, std::size_t row,
                          const std::string& api_name);

/// Fills `detail` for NPU row `nrow` / GPU row `grow` and returns its status (Pass, Error or Skip).
/// Throws RowSkip where msprobe turns an exception into a SKIP row.
Status judge_row(const Thresholds& t, const DetailsTable& npu, std::size_t nrow, const DetailsTable& gpu,
                 std::size_t grow, const std::string& api_name, CsvRow& detail);

}  // namespace probe::precision_compare
