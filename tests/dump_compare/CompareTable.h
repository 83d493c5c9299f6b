// A compare table looked up by row and column name, for the dump compare tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "probe/dump_compare.h"

namespace probe::testing {

/// Rows are found by their first cell (the NPU name); a missing row or column is a test failure.
struct CompareTable {
  DumpCompareTable t;
  std::size_t col(const std::string& name) const {
    for (std::size_t i = 0; i < t.header.size(); ++i)
      if (t.header[i] == name) return i;
    ADD_FAILURE() << "no column " << name;
    return 0;
  }
  const std::vector<std::string>& row(const std::string& name) const {
    for (const auto& r : t.rows)
      if (r[0] == name) return r;
    static const std::vector<std::string> none;
    ADD_FAILURE() << "no row " << name;
    return none;
  }
  const std::string& cell(const std::string& row_name, const std::string& col_name) const {
    static const std::string empty;
    const auto& r = row(row_name);
    return r.empty() ? empty : r[col(col_name)];
  }
  const std::string& bench(const std::string& row_name) const { return cell(row_name, "Bench Name"); }
};

}  // namespace probe::testing
