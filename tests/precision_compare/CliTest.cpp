// The built `probe api_precision_compare`: flags (msprobe's spellings), exit codes and outputs.
#include <gtest/gtest.h>

#include <filesystem>

#include "TestUtil.h"
#include "common/RunCli.h"

namespace probe {
namespace {

using testing::run_cli;
using testing::ScratchDir;
using testing::slurp;

const std::string kHead = PROBE_CONFORMANCE_DIR "/msprobe_e2e/head/";

TEST(PrecisionCompareCli, ShortAndLongFlagsProduceTheConformanceFiles) {
  ASSERT_TRUE(std::filesystem::exists(kHead + "api_precision_compare_details_20250101000000.csv"))
      << "conformance data missing (tests/data/conformance): " << kHead;
  ScratchDir dir("cli");
  const std::string npu = kHead + "npu_accuracy_checking_details_20250101000000.csv";
  const std::string gpu = kHead + "gpu_accuracy_checking_details_20250101000000.csv";
  const auto a = run_cli("-f pytorch api_precision_compare -npu '" + npu + "' -gpu '" + gpu + "' -o '" +
                         dir.file("a") + "' --profile msprobe --timestamp 20250101000000");
  ASSERT_EQ(a.code, 0) << a.out;
  const auto b = run_cli("api_precision_compare --npu_csv_path '" + npu + "' --gpu_csv_path='" + gpu +
                         "' --out_path '" + dir.file("b") + "' --timestamp 20250101000000");
  ASSERT_EQ(b.code, 0) << b.out;
  for (const char* kind : {"result", "details"}) {
    std::string name = std::string("api_precision_compare_") + kind + "_20250101000000.csv";
    std::string expected = slurp(kHead + name);
    EXPECT_EQ(slurp(dir.file("a/" + name)), expected) << kind;
    EXPECT_EQ(slurp(dir.file("b/" + name)), expected) << kind;
    auto perms = std::filesystem::status(dir.file("a/" + name)).permissions();
    EXPECT_EQ(perms & std::filesystem::perms::all, std::filesystem::perms::owner_read |
                                                       std::filesystem::perms::owner_write |
                                                       std::filesystem::perms::group_read);
  }
  EXPECT_NE(a.out.find("20 APIs: 8 pass, 7 error, 5 SKIP"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("warning: row skipped"), std::string::npos) << a.out;
}

TEST(PrecisionCompareCli, DefaultTimestampIsFourteenDigitsLocalTime) {
  ScratchDir dir("cli_ts");
  auto f = testing::write_details(dir.file("d.csv"), {{{"API Name", "Torch.abs.0.forward.output.0"},
                                                       {"DEVICE Dtype", "torch.int64"},
                                                       {"二进制一致错误率", "0"}}});
  const auto r =
      run_cli("api_precision_compare -npu '" + f + "' -gpu '" + f + "' -o '" + dir.file("out") + "'");
  ASSERT_EQ(r.code, 0) << r.out;
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
  ScratchDir dir("cli_codes");
  auto f = testing::write_details(dir.file("d.csv"), {{{"API Name", "Torch.abs.0.forward.output.0"},
                                                       {"DEVICE Dtype", "torch.int64"},
                                                       {"二进制一致错误率", "0"}}});
  const auto help = run_cli("api_precision_compare --help");
  EXPECT_EQ(help.code, 0);
  for (const char* flag : {"-npu", "--npu_csv_path", "-gpu", "--gpu_csv_path", "-o", "--out_path",
                           "--profile", "--timestamp", "--thresholds"})
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  // Command-line mistakes exit 2, as argparse (msprobe) does, with one line naming the mistake.
  const auto no_gpu = run_cli("api_precision_compare -npu '" + f + "'");
  EXPECT_EQ(no_gpu.code, 2);
  EXPECT_EQ(no_gpu.out,
            "probe api_precision_compare: -gpu GPU_DETAILS.csv is required; see probe api_precision_compare "
            "--help\n");
  EXPECT_EQ(run_cli("api_precision_compare -npu '" + f + "' -gpu '" + f + "' --bogus").code, 2);
  // msprobe's long forms may be abbreviated, as argparse allows.
  EXPECT_EQ(run_cli("api_precision_compare --npu_csv '" + f + "' --gpu_csv=" + "'" + f + "' -o '" +
                    dir.file("abbrev") + "'")
                .code,
            0);
  EXPECT_EQ(run_cli("api_precision_compare -npu '" + f + "' -gpu '" + f + "' --profile x").code, 2);
  const auto missing = run_cli("api_precision_compare -npu '" + dir.file("none.csv") + "' -gpu '" + f +
                               "' -o '" + dir.file("o") + "'");
  EXPECT_EQ(missing.code, 3);
  EXPECT_NE(missing.out.find(dir.file("none.csv")), std::string::npos) << missing.out;
  std::ofstream(dir.file("bad.csv")) << "x,y\r\n1,2\r\n";
  EXPECT_EQ(run_cli("api_precision_compare -npu '" + dir.file("bad.csv") + "' -gpu '" + f + "' -o '" +
                    dir.file("o") + "'")
                .code,
            4);
  EXPECT_EQ(run_cli("-f mindspore api_precision_compare -npu '" + f + "' -gpu '" + f + "'").code, 5);
}

}  // namespace
}  // namespace probe
