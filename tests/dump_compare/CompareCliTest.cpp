// End-to-end: the probe binary's `compare` sub-command, its flags, files and exit codes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/RunCli.h"
#include "common/ScratchDir.h"
#include "probe/csv.h"

namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(PROBE_TEST_DATA_DIR) + "/dump_compare/";

using probe::testing::run_cli;
using probe::testing::ScratchDir;

}  // namespace

TEST(CompareCli, HelpDocumentsEveryFlag) {
  auto r = run_cli("compare --help", kData);
  ASSERT_EQ(r.code, 0);
  for (const char* flag : {"--input_path", "--output_path", "--stack_mode", "--compare_only", "--fuzzy_match",
                           "--highlight", "--data_mapping", "--api_mapping", "--cell_mapping",
                           "--layer_mapping", "--profile", "--timestamp", "--framework", "--no-xlsx"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  r = run_cli("--help", kData);
  ASSERT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("compare"), std::string::npos);
}

TEST(CompareCli, StatisticsCompareWritesCsvXlsxAndAdvisor) {
  const ScratchDir scratch("compare_cli_stats");
  const std::string out = scratch.file("out");
  const auto r =
      run_cli("compare -i compare.json -o " + out + " --timestamp 20250102030405 -hl", kData + "stats");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto rows = probe::csv_read_file(out + "/compare_result_20250102030405.csv");
  ASSERT_GT(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], "NPU Name");
  EXPECT_EQ(rows[0][8], "Max diff");
  EXPECT_TRUE(fs::exists(out + "/compare_result_20250102030405.xlsx"));
  EXPECT_TRUE(fs::exists(out + "/advisor_20250102030405.txt"));
  EXPECT_NE(r.out.find("summary mode"), std::string::npos) << r.out;
}

TEST(CompareCli, LeadingFrameworkAndFuzzyFlagAreDistinct) {
  const ScratchDir scratch("compare_cli_fuzzy");
  const std::string out = scratch.file("out");
  // After the sub-command, -f is fuzzy matching; before it, the framework.
  const auto r =
      run_cli("-f pytorch compare -i compare.json -f -c --no-xlsx -o " + out + " --timestamp 20250102030405",
              kData + "fuzzy");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto rows = probe::csv_read_file(out + "/compare_result_20250102030405.csv");
  ASSERT_GT(rows.size(), 1u);
  EXPECT_EQ(rows[1][1], "Functional.conv2d.0.forward.input.0");
  EXPECT_FALSE(fs::exists(out + "/advisor_20250102030405.txt"));
  EXPECT_FALSE(fs::exists(out + "/compare_result_20250102030405.xlsx"));
}

TEST(CompareCli, ExitCodes) {
  const ScratchDir scratch("compare_cli_codes");
  const std::string out = scratch.file("out");
  EXPECT_EQ(run_cli("compare", kData).code, 2);                                         // -i missing
  EXPECT_EQ(run_cli("compare -i x.json --bogus", kData).code, 2);                       // unknown flag
  EXPECT_EQ(run_cli("compare -i missing_file.json -o " + out, kData + "bad").code, 3);  // bench file missing
  EXPECT_EQ(run_cli("compare -i not_json.json -o " + out, kData + "bad").code, 4);
  EXPECT_EQ(run_cli("compare -i task_mismatch.json -o " + out, kData + "bad").code, 2);
  EXPECT_EQ(run_cli("compare -i compare.json --profile fast -o " + out, kData + "stats").code, 2);
  EXPECT_EQ(run_cli("-f mindspore compare -i compare.json -o " + out, kData + "stats").code,
            2);  // wrong framework
  EXPECT_EQ(run_cli("compare -i compare.json -lm map.yaml -o " + out, kData + "stats").code,
            2);  // -lm: MindSpore only
}

// compare.json naming a path that exists but cannot be reached (a symlink loop) says why, for both the
// file compare and -da, instead of "no such file or directory".
TEST(CompareCli, AnUnreachableInputPathSaysWhy) {
  const ScratchDir scratch("compare_cli_loop");
  fs::create_symlink(scratch.file("b"), scratch.file("a"));
  fs::create_symlink(scratch.file("a"), scratch.file("b"));
  std::ofstream(scratch.file("compare.json"))
      << R"({"npu_path": ")" << scratch.file("a") << R"(", "bench_path": ")" << kData
      << R"(real/bench/step0/rank0/dump.json"})";
  for (const std::string extra : {"", " -da"}) {
    const auto r =
        run_cli("compare -i compare.json -o " + scratch.file("out") + extra, scratch.path().string());
    EXPECT_EQ(r.code, 3) << extra << r.out;
    EXPECT_NE(r.out.find("a: npu_path: cannot access: Too many levels of symbolic links"), std::string::npos)
        << extra << r.out;
  }
}

// A tensor file missing from a real-data dump: msprobe's row ("unsupported" cells, "Dump file: ... not found
// or read failed.") is kept, and the run says on stderr how many rows were not compared and why, instead of a
// summary line that reads as a complete compare.
TEST(CompareCli, MissingTensorFileIsCountedAndNamedOnStderr) {
  const ScratchDir scratch("compare_cli_missing");
  fs::copy(kData + "real", scratch.path() / "real", fs::copy_options::recursive);
  const fs::path gone =
      scratch.path() / "real/npu/step0/rank0/dump_tensor_data/Functional.relu.0.forward.output.0.pt";
  ASSERT_TRUE(fs::remove(gone));
  const std::string out = scratch.file("out");
  const auto r = run_cli("compare -i compare.json --no-xlsx -o " + out + " --timestamp 20250102030405",
                         (scratch.path() / "real").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("probe compare: warning: 1 row(s) not compared, a tensor file missing or unreadable; "
                       "first: "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("output.0.data_name: API Functional.relu.0.forward: tensor file not found: "),
            std::string::npos)
      << r.out;
  const auto rows = probe::csv_read_file(out + "/compare_result_20250102030405.csv");
  std::size_t failed = 0;
  for (const auto& row : rows)
    for (const auto& cell : row)
      failed += cell.find("Dump file: Functional.relu.0.forward.output.0.pt not found or read failed.") !=
                std::string::npos;
  EXPECT_EQ(failed, 1u);
  // The complete dump: no warning.
  const auto full =
      run_cli("compare -i compare.json --no-xlsx -o " + out + " --timestamp 20250102030406", kData + "real");
  ASSERT_EQ(full.code, 0) << full.out;
  EXPECT_EQ(full.out.find("warning"), std::string::npos) << full.out;
}

// A MindSpore NPU dump against a PyTorch bench without a mapping matches no row: every bench cell N/A and
// "0 suspect" would read as a clean compare, so stderr says no row found its bench row and what to try; with
// -am the rows match and there is no warning.
TEST(CompareCli, NoMatchedRowIsAWarningNamingTheMappingFlags) {
  const ScratchDir scratch("compare_cli_unmatched");
  const std::string run = "compare -i compare.json --no-xlsx -c -o " + scratch.file("out");
  const auto plain = run_cli(run + " --timestamp 20250102030405", kData + "cross");
  ASSERT_EQ(plain.code, 0) << plain.out;
  EXPECT_NE(plain.out.find("probe compare: warning: none of the 3 NPU rows found a bench row: dumps of other "
                           "models or steps, names that differ only in call counters (-f), or a bench of "
                           "the other framework (-am, -cm, -lm)\n"),
            std::string::npos)
      << plain.out;
  const auto mapped = run_cli(run + " -am --timestamp 20250102030406", kData + "cross");
  ASSERT_EQ(mapped.code, 0) << mapped.out;
  EXPECT_EQ(mapped.out.find("warning"), std::string::npos) << mapped.out;
}
