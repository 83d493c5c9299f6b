#include "support/Timestamp.h"

#include <algorithm>
#include <ctime>

namespace probe::detail {

std::string local_timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d%H%M%S", &tm);
  return buf;
}

bool is_timestamp(std::string_view s) noexcept {
  return s.size() == 14 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace probe::detail
