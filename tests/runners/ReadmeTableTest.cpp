// The runner table in README.md must be `probe runners --markdown` (regenerate it after adding runners).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/Slurp.h"
#include "probe/runner.h"

namespace probe {
namespace {

TEST(ReadmeRunnerTable, IsUpToDate) {
  const std::string text = testing::slurp(std::string(PROBE_SOURCE_DIR) + "/README.md");
  const std::string begin = "<!-- runners-table-begin -->\n", end = "<!-- runners-table-end -->";
  const auto b = text.find(begin), e = text.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  const std::string table = text.substr(b + begin.size(), e - b - begin.size());
  EXPECT_TRUE(table == runners_markdown(RunnerRegistry::with_builtins()))
      << "README.md runner table is stale: regenerate it with tools/update_runner_table.sh";
}

}  // namespace
}  // namespace probe
