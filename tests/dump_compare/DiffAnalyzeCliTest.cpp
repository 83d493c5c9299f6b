// End-to-end: `probe compare -da` through the built binary: files written, stdout, exit codes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/RunCli.h"
#include "common/ScratchDir.h"

namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(PROBE_TEST_DATA_DIR) + "/diff_analyze/";

using probe::testing::run_cli;
using probe::testing::ScratchDir;

std::size_t lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace

TEST(DiffAnalyzeCli, HelpDocumentsDiffAnalyze) {
  const auto r = run_cli("compare --help", kData);
  ASSERT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--diff_analyze"), std::string::npos);
  EXPECT_NE(r.out.find("diff_analyze_<ns>.json"), std::string::npos);
  EXPECT_EQ(r.out.find("-da, --diff_analyze         not supported"), std::string::npos);
}

TEST(DiffAnalyzeCli, GraphCaseWritesRankFilesAndAnalysis) {
  const ScratchDir scratch("da_cli_graph");
  const std::string out = scratch.file("out");
  const auto run =
      run_cli("compare -i compare.json -da -o " + out + " --timestamp 20250102030405", kData + "graph");
  ASSERT_EQ(run.code, 0) << run.out;
  EXPECT_NE(run.out.find("first diff (communication): rank_2 Torch.matmul.0.forward"), std::string::npos)
      << run.out;
  for (int r = 0; r < 3; ++r)
    EXPECT_TRUE(
        fs::is_regular_file(out + "/compare_result_rank" + std::to_string(r) + "_20250102030405.json"));
  std::size_t analyses = 0;
  for (const auto& e : fs::directory_iterator(out))
    if (e.path().filename().string().rfind("diff_analyze_", 0) == 0) ++analyses;
  EXPECT_EQ(analyses, 1u);
}

TEST(DiffAnalyzeCli, NoDifference) {
  const ScratchDir scratch("da_cli_same");
  const std::string out = scratch.file("out");
  const auto r = run_cli("compare -i compare.json --diff_analyze -o " + out, kData + "same");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("no different entry found"), std::string::npos) << r.out;
}

TEST(DiffAnalyzeCli, BadInputsGiveOneLineErrors) {
  const ScratchDir scratch("da_cli_bad");
  const std::string out = scratch.file("out");
  const std::pair<const char*, int> cases[] = {
      {"files.json", 2}, {"rank_sets.json", 2}, {"rank_count.json", 2}, {"missing_rank.json", 3}};
  for (const auto& [input, code] : cases) {
    const auto r = run_cli(std::string("compare -i ") + input + " -da -o " + out, kData + "bad");
    EXPECT_EQ(r.code, code) << r.out;
    EXPECT_EQ(lines(r.out), 1u) << r.out;
    if (code == 3) {
      EXPECT_NE(r.out.find("rank1"), std::string::npos) << r.out;
    }
  }
  EXPECT_FALSE(fs::exists(out));
}

// Runs of -da into one directory in the same second (a script over several steps) each get their own files,
// as compare without -da does; a --timestamp that is taken is refused.
TEST(DiffAnalyzeCli, RunsInTheSameSecondGetTheirOwnFiles) {
  const ScratchDir scratch("da_cli_same_second");
  const std::string run = "compare -i compare.json -da -o " + scratch.file("out");
  for (int i = 0; i < 3; ++i) {
    const auto r = run_cli(run, kData + "graph");
    ASSERT_EQ(r.code, 0) << r.out;
  }
  std::size_t rank0 = 0;
  for (const auto& e : fs::directory_iterator(scratch.file("out")))
    rank0 += e.path().filename().string().rfind("compare_result_rank0_", 0) == 0;
  EXPECT_EQ(rank0, 3u);
  EXPECT_EQ(run_cli(run + " --timestamp 20250102030405", kData + "graph").code, 0);
  EXPECT_EQ(run_cli(run + " --timestamp 20250102030405", kData + "graph").code, 2);
}
