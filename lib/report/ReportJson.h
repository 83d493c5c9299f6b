// Internal: JSON pieces of the report, safe to embed in a <script> element.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "probe/report.h"

namespace probe::report {

/// A JSON string literal; '<', '>' and '&' are escaped too, so the text cannot close the <script> holding it.
std::string json_string(std::string_view s);
/// A JSON number in the shortest form that reads back exactly; null for NaN and infinities.
std::string json_number(double v);

/// The rows of a result CSV (run_ut's, the online checker's, api_precision_compare's: API name, Forward and
/// Backward Test Success, Message), each with its API's verdict. Throws probe::Error naming file and column.
std::vector<ReportApi> read_result_csv(const std::string& result_csv);

/// `"apis":N,"status":{...},"forward":{...},"backward":{...}`: counts of verdicts per API and per direction.
std::string summary_json(const std::vector<ReportApi>& apis);

}  // namespace probe::report
