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

}  // namespace probe::report
