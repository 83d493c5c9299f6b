// The YYYYmmddHHMMSS stamp in the names of msprobe's output files.
#pragma once

#include <string>
#include <string_view>

namespace probe::detail {

/// strftime("%Y%m%d%H%M%S") of now, in local time.
std::string local_timestamp();

/// Exactly 14 ASCII digits (msprobe's `\d{14}`, without the other Unicode digits Python's \d accepts).
bool is_timestamp(std::string_view s) noexcept;

}  // namespace probe::detail
