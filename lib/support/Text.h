// Internal: trimming text read from CSV cells, schema strings and headers.
#pragma once

#include <string>
#include <string_view>

namespace probe::detail {

/// Whether `c` is ASCII whitespace: space, \t, \n, \v, \f, \r (what Python's str.strip() removes from ASCII).
constexpr bool ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/// `s` without leading and trailing ASCII whitespace, as a view into `s`.
constexpr std::string_view trim_view(std::string_view s) {
  while (!s.empty() && ascii_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && ascii_space(s.back())) s.remove_suffix(1);
  return s;
}

/// The same, as a string of its own.
inline std::string trim(std::string_view s) { return std::string(trim_view(s)); }

}  // namespace probe::detail
