// The built `probe api_precision_compare`: flags (msprobe's spellings), exit codes and outputs.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "TestUtil.h"

namespace probe {
namespace {

using testing::TempDir;

int run_cli(const std::string& args, const std::string& log) {
  std::string cmd = std::string("'") + PROBE_CLI_PATH + "' " + args + " >'" + log + "' 2>&1";
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const std::string kHead = PROBE_CONFORMANCE_DIR "/msprobe_e2e/head/";

TEST(PrecisionCompareCli, ShortAndLongFlagsProduceTheConformanceFiles) {
  ASSERT_TRUE(std::filesystem::exists(kHead + "api_precision_compare_details_20250101000000.csv"))
      << "conformance data missing (tests/data/conformance): " << kHead;
  TempDir dir("cli");
  const std::string npu = kHead + "npu_accuracy_checking_details_20250101000000.csv";
  const std::string gpu = kHead + "gpu_accuracy_checking_details_20250101000000.csv";
  ASSERT_EQ(run_cli("-f pytorch api_precision_compare -npu '" + npu + "' -gpu '" + gpu + "' -o '" +
                        dir.file("a") + "' --profile msprobe --timestamp 20250101000000",
                    dir.file("log1")),
            0)
      << testing::read_text(dir.file("log1"));
  ASSERT_EQ(run_cli("api_precision_compare --npu_csv_path '" + npu + "' --gpu_csv_path='" + gpu +
                        "' --out_path '" + dir.file("b") + "' --timestamp 20250101000000",
                    dir.file("log2")),
            0)
      << testing::read_text(dir.file("log2"));
  for (const char* kind : {"result", "details"}) {
    std::string name = std::string("api_precision_compare_") + kind + "_20250101000000.csv";
    std::string expected = testing::read_text(kHead + name);
    EXPECT_EQ(testing::read_text(dir.file("a/" + name)), expected) << kind;
    EXPECT_EQ(testing::read_text(dir.file("b/" + name)), expected) << kind;
    auto perms = std::filesystem::status(dir.file("a/" + name)).permissions();
    EXPECT_EQ(perms & std::filesystem::perms::all, std::filesystem::perms::owner_read |
                                                       std::filesystem::perms::owner_write |
                                                       std::filesystem::perms::group_read);
  }
  std::string log = testing::read_text(dir.file("log1"));
  EXPECT_NE(log.find("20 APIs: 8 pass, 7 error, 5 SKIP"), std::string::npos) << log;
  EXPECT_NE(log.find("warning: row skipped"), std::string::npos) << log;
}

TEST(PrecisionCompareCli, DefaultTimestampIsFourteenDigitsLocalTime) {
  TempDir dir("cli_ts");
  auto f = testing::write_details(dir.file("d.csv"), {{{"API Name", "Torch.abs.0.forward.output.0"},
                                                       {"DEVICE Dtype", "torch.int64"},
                                                       {"二进制一致错误率", "0"}}});
  ASSERT_EQ(run_cli("api_precision_compare -npu '" + f + "' -gpu '" + f + "' -o '" + dir.file("out") + "'",
                    dir.file("log")),
            0)
      << testing::read_text(dir.file("log"));
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.file("out"))) {
    std::string name = e.path().filename().string();
    ++n;
    EXPECT_TRUE(name.rfind("api_precision_compare_result_", 0) == 0 ||
                name.rfind("api_precision_compare_details_", 0) == 0)
        << name;
    std::string ts = name.substr(name.rfind('_') + 1, 14);
    EXPECT_EQ(ts.find_first_not_of("0123456789"), std::string::npos) << name;
    EXPECT_EQ(name.size() - name.rfind('_') - 1, 18u) << name;  // 14 digits + ".csv"
  }
  EXPECT_EQ(n, 2u);
}

TEST(PrecisionCompareCli, ExitCodes) {
  TempDir dir("cli_codes");
  auto f = testing::write_details(dir.file("d.csv"), {{{"API Name", "Torch.abs.0.forward.output.0"},
                                                       {"DEVICE Dtype", "torch.int64"},
                                                       {"二进制一致错误率", "0"}}});
  EXPECT_EQ(run_cli("api_precision_compare --help", dir.file("help")), 0);
  std::string help = testing::read_text(dir.file("help"));
  for (const char* flag : {"-npu", "--npu_csv_path", "-gpu", "--gpu_csv_path", "-o", "--out_path",
                           "--profile", "--timestamp", "--thresholds"})
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  // Command-line mistakes exit 2, as argparse (msprobe) does, with one line naming the mistake.
  EXPECT_EQ(run_cli("api_precision_compare -npu '" + f + "'", dir.file("log")), 2);  // -gpu missing
  EXPECT_EQ(testing::read_text(dir.file("log")),
            "probe api_precision_compare: -gpu GPU_DETAILS.csv is required; see probe api_precision_compare "
            "--help\n");
  EXPECT_EQ(run_cli("api_precision_compare -npu '" + f + "' -gpu '" + f + "' --bogus", dir.file("log")), 2);
  // msprobe's long forms may be abbreviated, as argparse allows.
  EXPECT_EQ(run_cli("api_precision_compare --npu_csv '" + f + "' --gpu_csv=" + "'" + f + "' -o '" +
                        dir.file("abbrev") + "'",
                    dir.file("log")),
            0);
  EXPECT_EQ(run_cli("api_precision_compare -npu '" + f + "' -gpu '" + f + "' --profile x", dir.file("log")),
            2);
  EXPECT_EQ(run_cli("api_precision_compare -npu '" + dir.file("none.csv") + "' -gpu '" + f + "' -o '" +
                        dir.file("o") + "'",
                    dir.file("log")),
            3);
  std::string log = testing::read_text(dir.file("log"));
  EXPECT_NE(log.find(dir.file("none.csv")), std::string::npos) << log;
  std::ofstream(dir.file("bad.csv")) << "x,y\r\n1,2\r\n";
  EXPECT_EQ(run_cli("api_precision_compare -npu '" + dir.file("bad.csv") + "' -gpu '" + f + "' -o '" +
                        dir.file("o") + "'",
                    dir.file("log")),
            4);
  EXPECT_EQ(run_cli("-f mindspore api_precision_compare -npu '" + f + "' -gpu '" + f + "'", dir.file("log")),
            5);
}

}  // namespace
}  // namespace probe
