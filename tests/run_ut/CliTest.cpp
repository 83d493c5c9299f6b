// The run_ut/multi_run_ut command lines: msprobe spellings accepted, bad input gives one line on
// stderr and a non-zero exit code.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "common/RunCli.h"
#include "common/Slurp.h"
#include "probe/error.h"

namespace {

using Result = probe::testing::CliResult;
using probe::testing::run_cli;

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(RunUtCli, HelpDocumentsEveryFlag) {
  auto r = run_cli("run_ut --help");
  EXPECT_EQ(r.code, 0);
  for (const char* f :
       {"-api_info", "--api_info_file", "-o", "--out_path", "-save_error_data", "-csv_path",
        "--result_csv_path", "--filter_api", "-config", "--config_path", "-d", "--device", "-j",
        "--jit_compile", "--threads", "--seed", "--profile", "--timestamp", "--device_runner"})
    EXPECT_NE(r.out.find(f), std::string::npos) << f;
  auto m = run_cli("multi_run_ut -h");
  EXPECT_EQ(m.code, 0);
  EXPECT_NE(m.out.find("--num_splits"), std::string::npos);
}

// `probe --help` lists every command with what it reads; report reads four commands' outputs, not run_ut's
// alone.
TEST(RunUtCli, TopLevelHelpSaysWhichOutputsReportReads) {
  const auto top = run_cli("--help");
  EXPECT_EQ(top.code, 0);
  EXPECT_NE(top.out.find("  report                   a self-contained HTML report of a run_ut, compare, "
                         "api_precision_compare or grad_compare output\n"),
            std::string::npos)
      << top.out;
}

// One table of exit codes: `probe --help` prints it with every ErrorKind's code from error.h (7, a caller's
// runner, included), the README has the same rows, and every command's --help points to it.
TEST(RunUtCli, ExitCodesAreOneTableInHelpAndReadme) {
  auto top = run_cli("--help");
  EXPECT_EQ(top.code, 0);
  const std::string readme = probe::testing::slurp(std::string(PROBE_SOURCE_DIR) + "/README.md");
  for (probe::ErrorKind k :
       {probe::ErrorKind::InvalidArgument, probe::ErrorKind::Io, probe::ErrorKind::Format,
        probe::ErrorKind::Unsupported, probe::ErrorKind::Security, probe::ErrorKind::Runner,
        probe::ErrorKind::Internal}) {
    const std::string code = std::to_string(probe::exit_code(k));
    EXPECT_NE(
        top.out.find("  " + code + std::string(5 - code.size(), ' ') + std::string(probe::to_string(k))),
        std::string::npos)
        << top.out;
    EXPECT_NE(readme.find("| " + code + " | "), std::string::npos) << code;
  }
  EXPECT_NE(top.out.find("  7    runner error"), std::string::npos) << top.out;
  EXPECT_NE(readme.find("| 7 | a runner the caller registered"), std::string::npos);
  for (const char* c : {"info", "run_ut", "multi_run_ut", "api_precision_compare", "metrics", "runners",
                        "compare", "replay"}) {
    auto r = run_cli(std::string(c) + " --help");
    EXPECT_EQ(r.code, 0) << c;
    EXPECT_NE(r.out.find("Exit codes: the table printed by 'probe --help'"), std::string::npos) << c;
  }
}

TEST(RunUtCli, BadInputGivesOneLineAndAnExitCode) {
  struct Case {
    const char* args;
    int code;
    const char* needle;
  };
  const Case cases[] = {
      {"run_ut", 2, "-api_info"},
      {"run_ut -api_info", 2, "needs a value"},
      {"run_ut -api_info x.json --bogus", 2, "unknown option --bogus"},
      {"run_ut -api_info x.json -n 0", 2, "-n"},
      {"run_ut -api_info x.json -n abc", 2, "integer"},
      {"run_ut -api_info x.json -d 0 0", 2, "unique"},
      {"run_ut -api_info x.json -d -1", 2, "device id"},
      {"run_ut -api_info x.json --profile fast", 2, "profile"},
      {"run_ut -api_info x.json stray", 2, "unexpected argument"},
      {"multi_run_ut -api_info x.json -n 65", 2, "1..64"},
      {"-f tensorflow run_ut -api_info x.json", 2, "pytorch or mindspore"},
      {"run_ut -api_info dump.txt", 2, ".json"},
      {"run_ut -api_info /nonexistent/dump.json", 3, "dump.json"},
      {"run_ut --api_info_file=/nonexistent/dump.json", 3, "dump.json"},
      {"run_ut --api_info /nonexistent/dump.json -j -d 0 1", 3, "dump.json"},  // argparse-style prefix
  };
  for (const auto& c : cases) {
    auto r = run_cli(c.args);
    EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.out;
    EXPECT_EQ(lines(r.out), 1) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.needle), std::string::npos) << c.args << "\n" << r.out;
  }
}

}  // namespace
