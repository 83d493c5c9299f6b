// Helpers shared by the tensor-file tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "common/Slurp.h"
#include "probe/error.h"

namespace probe::test {

inline std::string tensors_dir() { return std::string(PROBE_TEST_DATA_DIR) + "/tensors/"; }

/// A scratch directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "probe-io-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name, const std::string& bytes = {}) const {
    std::string p = path_ + "/" + name;
    if (!bytes.empty() || name.find('.') != std::string::npos) {
      std::ofstream(p, std::ios::binary) << bytes;
    }
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Runs `fn`, expecting a probe::Error of `kind` whose text mentions every string in `mentions`.
inline void expect_error(const std::function<void()>& fn, ErrorKind kind,
                         std::vector<std::string> mentions = {}) {
  try {
    fn();
    ADD_FAILURE() << "expected a probe::Error (" << to_string(kind) << ")";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const std::string& m : mentions)
      EXPECT_NE(std::string(e.what()).find(m), std::string::npos) << e.what();
  }
}

}  // namespace probe::test
