// End-to-end: the probe binary's `compare` sub-command, its flags, files and exit codes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "probe/csv.h"

namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(PROBE_TEST_DATA_DIR) + "/dump_compare/";

int run(const std::string& cwd, const std::string& args, std::string* out = nullptr) {
  const std::string log =
      (fs::temp_directory_path() / ("probe_compare_cli_" + std::to_string(::getpid()))).string();
  const std::string cmd = "cd '" + cwd + "' && '" + PROBE_CLI_PATH + "' " + args + " >'" + log + "' 2>&1";
  const int status = std::system(cmd.c_str());
  if (out) {
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    *out = ss.str();
  }
  fs::remove(log);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string out_dir(const std::string& name) {
  const fs::path p =
      fs::temp_directory_path() / ("probe_compare_cli_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p.string();
}

}  // namespace

TEST(CompareCli, HelpDocumentsEveryFlag) {
  std::string text;
  ASSERT_EQ(run(kData, "compare --help", &text), 0);
  for (const char* flag : {"--input_path", "--output_path", "--stack_mode", "--compare_only", "--fuzzy_match",
                           "--highlight", "--data_mapping", "--api_mapping", "--cell_mapping",
                           "--layer_mapping", "--profile", "--timestamp", "--framework", "--no-xlsx"})
    EXPECT_NE(text.find(flag), std::string::npos) << flag;
  ASSERT_EQ(run(kData, "--help", &text), 0);
  EXPECT_NE(text.find("compare"), std::string::npos);
}

TEST(CompareCli, StatisticsCompareWritesCsvXlsxAndAdvisor) {
  const std::string out = out_dir("stats");
  std::string text;
  ASSERT_EQ(
      run(kData + "stats", "compare -i compare.json -o " + out + " --timestamp 20250102030405 -hl", &text), 0)
      << text;
  const auto rows = probe::csv_read_file(out + "/compare_result_20250102030405.csv");
  ASSERT_GT(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], "NPU Name");
  EXPECT_EQ(rows[0][8], "Max diff");
  EXPECT_TRUE(fs::exists(out + "/compare_result_20250102030405.xlsx"));
  EXPECT_TRUE(fs::exists(out + "/advisor_20250102030405.txt"));
  EXPECT_NE(text.find("summary mode"), std::string::npos) << text;
  fs::remove_all(out);
}

TEST(CompareCli, LeadingFrameworkAndFuzzyFlagAreDistinct) {
  const std::string out = out_dir("fuzzy");
  std::string text;
  // After the sub-command, -f is fuzzy matching; before it, the framework.
  ASSERT_EQ(
      run(kData + "fuzzy",
          "-f pytorch compare -i compare.json -f -c --no-xlsx -o " + out + " --timestamp 20250102030405",
          &text),
      0)
      << text;
  const auto rows = probe::csv_read_file(out + "/compare_result_20250102030405.csv");
  ASSERT_GT(rows.size(), 1u);
  EXPECT_EQ(rows[1][1], "Functional.conv2d.0.forward.input.0");
  EXPECT_FALSE(fs::exists(out + "/advisor_20250102030405.txt"));
  EXPECT_FALSE(fs::exists(out + "/compare_result_20250102030405.xlsx"));
  fs::remove_all(out);
}

TEST(CompareCli, ExitCodes) {
  const std::string out = out_dir("codes");
  EXPECT_EQ(run(kData, "compare"), 2);                                         // -i missing
  EXPECT_EQ(run(kData, "compare -i x.json --bogus"), 2);                       // unknown flag
  EXPECT_EQ(run(kData + "bad", "compare -i missing_file.json -o " + out), 3);  // bench file missing
  EXPECT_EQ(run(kData + "bad", "compare -i not_json.json -o " + out), 4);
  EXPECT_EQ(run(kData + "bad", "compare -i task_mismatch.json -o " + out), 2);
  EXPECT_EQ(run(kData + "stats", "compare -i compare.json --profile fast -o " + out), 2);
  EXPECT_EQ(run(kData + "stats", "-f mindspore compare -i compare.json -o " + out), 2);  // wrong framework
  EXPECT_EQ(run(kData + "stats", "compare -i compare.json -lm map.yaml -o " + out),
            2);  // -lm: MindSpore only
  fs::remove_all(out);
}
