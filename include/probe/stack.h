// Reading msprobe's stack.json: the Python call stack recorded for each forward API/module record.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "probe/export.h"

namespace probe {

/// stack.json, either format (dump-and-compare §2.1).
class PROBE_API StackInfo {
 public:
  /// A call stack shared by one or more records (legacy files: one record per group).
  struct Group {
    std::vector<std::string> keys;  ///< dump.json record keys
    std::vector<std::string>
        frames;  ///< "File /a.py, line 52, in forward, \n x = self.fc(x)", innermost first
  };

  /// Reads and parses `path`; throws Io / Format naming the file and the offending key.
  static StackInfo open(const std::string& path);
  static StackInfo parse(std::string_view json, const std::string& path);

  /// True for the pre-2025-05 format {"<record key>": [frames]}.
  bool legacy() const noexcept { return legacy_; }
  const std::vector<Group>& groups() const noexcept { return groups_; }
  /// The frames recorded for a record key, or nullptr.
  const std::vector<std::string>* frames_of(std::string_view key) const noexcept;
  /// Number of record keys with a stack.
  std::size_t key_count() const noexcept;

 private:
  bool legacy_ = false;
  std::vector<Group> groups_;
};

}  // namespace probe
