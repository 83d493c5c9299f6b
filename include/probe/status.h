// The verdict of one output, one direction or one API, with msprobe's spellings in one table.
#pragma once

#include <optional>
#include <string_view>

namespace probe {

/// run_ut / api_precision_compare verdicts, from best to worst except Skip (nothing was judged).
enum class Status { Pass, Warning, Error, Skip };

/// msprobe's CSV spelling: "pass", "Warning", "error", "SKIP" (the one table; constexpr, thread-safe).
constexpr std::string_view to_string(Status s) noexcept {
  switch (s) {
    case Status::Pass:
      return "pass";
    case Status::Warning:
      return "Warning";
    case Status::Error:
      return "error";
    case Status::Skip:
      break;
  }
  return "SKIP";
}

/// Inverse of to_string (exact spelling); nullopt for anything else, including the blank cell " ".
constexpr std::optional<Status> parse_status(std::string_view text) noexcept {
  for (Status s : {Status::Pass, Status::Warning, Status::Error, Status::Skip})
    if (to_string(s) == text) return s;
  return std::nullopt;
}

}  // namespace probe
