// The YYYYmmddHHMMSS stamp in the names of msprobe's output files.
#pragma once

#include <string>
#include <string_view>

namespace probe::detail {

/// strftime("%Y%m%d%H%M%S") of now, in local time.
std::string local_timestamp();

/// The same with the milliseconds appended (17 digits: msprobe's online dispatch names its directories so).
std::string local_timestamp_ms();

/// Exactly 14 ASCII digits (msprobe's `\d{14}`, without the other Unicode digits Python's \d accepts).
bool is_timestamp(std::string_view s) noexcept;

/// The stamp one second after `ts` (a valid stamp): a fresh name when a run's files already exist.
std::string next_timestamp(const std::string& ts);

}  // namespace probe::detail
