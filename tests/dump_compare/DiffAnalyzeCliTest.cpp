// End-to-end: `probe compare -da` through the built binary: files written, stdout, exit codes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(PROBE_TEST_DATA_DIR) + "/diff_analyze/";

int run(const std::string& cwd, const std::string& args, std::string* out = nullptr) {
  const std::string log =
      (fs::temp_directory_path() / ("probe_da_cli_" + std::to_string(::getpid()))).string();
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
  const fs::path p = fs::temp_directory_path() / ("probe_da_cli_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p.string();
}

std::size_t lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace

TEST(DiffAnalyzeCli, HelpDocumentsDiffAnalyze) {
  std::string text;
  ASSERT_EQ(run(kData, "compare --help", &text), 0);
  EXPECT_NE(text.find("--diff_analyze"), std::string::npos);
  EXPECT_NE(text.find("diff_analyze_<ns>.json"), std::string::npos);
  EXPECT_EQ(text.find("-da, --diff_analyze         not supported"), std::string::npos);
}

TEST(DiffAnalyzeCli, GraphCaseWritesRankFilesAndAnalysis) {
  const std::string out = out_dir("graph");
  std::string text;
  ASSERT_EQ(
      run(kData + "graph", "compare -i compare.json -da -o " + out + " --timestamp 20250102030405", &text), 0)
      << text;
  EXPECT_NE(text.find("first diff (communication): rank_2 Torch.matmul.0.forward"), std::string::npos)
      << text;
  for (int r = 0; r < 3; ++r)
    EXPECT_TRUE(
        fs::is_regular_file(out + "/compare_result_rank" + std::to_string(r) + "_20250102030405.json"));
  std::size_t analyses = 0;
  for (const auto& e : fs::directory_iterator(out))
    if (e.path().filename().string().rfind("diff_analyze_", 0) == 0) ++analyses;
  EXPECT_EQ(analyses, 1u);
  fs::remove_all(out);
}

TEST(DiffAnalyzeCli, NoDifference) {
  const std::string out = out_dir("same");
  std::string text;
  ASSERT_EQ(run(kData + "same", "compare -i compare.json --diff_analyze -o " + out, &text), 0) << text;
  EXPECT_NE(text.find("no different entry found"), std::string::npos) << text;
  fs::remove_all(out);
}

TEST(DiffAnalyzeCli, BadInputsGiveOneLineErrors) {
  const std::string out = out_dir("bad");
  std::string text;
  EXPECT_EQ(run(kData + "bad", "compare -i files.json -da -o " + out, &text), 2) << text;
  EXPECT_EQ(lines(text), 1u) << text;
  EXPECT_EQ(run(kData + "bad", "compare -i rank_sets.json -da -o " + out, &text), 2) << text;
  EXPECT_EQ(lines(text), 1u) << text;
  EXPECT_EQ(run(kData + "bad", "compare -i rank_count.json -da -o " + out, &text), 2) << text;
  EXPECT_EQ(lines(text), 1u) << text;
  EXPECT_EQ(run(kData + "bad", "compare -i missing_rank.json -da -o " + out, &text), 3) << text;
  EXPECT_EQ(lines(text), 1u) << text;
  EXPECT_NE(text.find("rank1"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(out));
}
