// Internal: the layout of api_precision_compare's two files (precheck.md §5.4), in one place: headers, the
// details row's columns and how a result row is written.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

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

/// One API's line of the result file as judged; nullopt directions are written as SPACE.
struct ResultRow {
  std::string api;
  std::optional<Status> forward, backward;
  std::string message;
};

/// api_precision_compare's file layout (stateless; safe from many threads).
struct RowFormat {
  static const CsvRow& details_header();
  static const CsvRow& result_header();
  /// A details row for `api` with every cell SPACE; the judges fill it by DetailCol.
  static CsvRow details_row(const std::string& api);
  /// The details row of a row that could not be judged: 比对结果 SKIP and `message`.
  static CsvRow skip_details_row(const std::string& api, const std::string& message);
  /// Writes `status` into column `col` of `row`.
  static void set(CsvRow& row, DetailCol col, Status status) { row[col] = to_string(status); }
  static CsvRow result_cells(const ResultRow& row);
};

}  // namespace probe::precision_compare
