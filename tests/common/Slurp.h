// Reading a whole file in a test, the one copy the suites share.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace probe::testing {

/// The bytes of `path` (binary, no newline translation); a file that cannot be opened is a test failure
/// naming it, and reads as "".
inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return {};
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace probe::testing
