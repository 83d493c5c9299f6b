#include "support/Timestamp.h"

#include <algorithm>
#include <chrono>
#include <ctime>

namespace probe::detail {

namespace {

std::string stamp(std::time_t t) {
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d%H%M%S", &tm);
  return buf;
}

}  // namespace

std::string local_timestamp() { return stamp(std::time(nullptr)); }

std::string local_timestamp_ms() {
  const auto now = std::chrono::system_clock::now();
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  const std::string digits = std::to_string(1000 + ms);  // "1mmm"
  return stamp(std::chrono::system_clock::to_time_t(now)) + digits.substr(1);
}

bool is_timestamp(std::string_view s) noexcept {
  return s.size() == 14 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string next_timestamp(const std::string& ts) {
  std::tm tm{};
  auto num = [&](std::size_t at, std::size_t n) { return std::stoi(ts.substr(at, n)); };
  tm.tm_year = num(0, 4) - 1900;
  tm.tm_mon = num(4, 2) - 1;
  tm.tm_mday = num(6, 2);
  tm.tm_hour = num(8, 2);
  tm.tm_min = num(10, 2);
  tm.tm_sec = num(12, 2) + 1;  // mktime normalises the carry into minutes, days, ...
  tm.tm_isdst = -1;
  std::mktime(&tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d%H%M%S", &tm);
  return buf;
}

}  // namespace probe::detail
