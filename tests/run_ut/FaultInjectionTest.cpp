// Fault injection (issue 14): runs that must never merge, resumes that must belong to their dump,
// side effects that must never change a verdict. Each test failed on the code before the fix.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "common/RunCli.h"
#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "probe/csv.h"
#include "probe/dump.h"
#include "probe/error.h"
#include "probe/tensor_file.h"

namespace {
namespace fs = std::filesystem;
using probe::testing::run_cli;

const std::string kData = std::string(PROBE_TEST_DATA_DIR) + "/run_ut";
const std::string kCompareData = std::string(PROBE_TEST_DATA_DIR) + "/dump_compare";
const std::string kTs = "20260304050607";

using probe::testing::ScratchDir;
using probe::testing::slurp;

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string dump(const std::string& fixture) { return kData + "/" + fixture + "/dump.json"; }
fs::path result_of(const fs::path& dir, const std::string& ts = kTs) {
  return dir / ("accuracy_checking_result_" + ts + ".csv");
}
fs::path details_of(const fs::path& dir, const std::string& ts = kTs) {
  return dir / ("accuracy_checking_details_" + ts + ".csv");
}

probe::testing::CliResult new_run(const std::string& fixture, const fs::path& out,
                                  const std::string& extra = "") {
  return run_cli("run_ut -api_info " + dump(fixture) + " -o " + out.string() + " --timestamp " + kTs +
                 " -q " + extra);
}

probe::testing::CliResult resume(const std::string& fixture, const fs::path& result,
                                 const std::string& extra = "") {
  return run_cli("run_ut -api_info " + dump(fixture) + " -csv_path " + result.string() + " -q " + extra);
}
fs::path record_of(const fs::path& dir, const std::string& ts = kTs) {
  return dir / ("accuracy_checking_run_" + ts + ".jsonl");
}

std::size_t rows_in(const fs::path& csv) { return probe::csv_read_file(csv.string()).size() - 1; }

// Item 1: a second run with the same --timestamp used to append its rows to the first run's file.
TEST(FaultInjection, SameTimestampRefusesInsteadOfMerging) {
  ScratchDir t("same_ts");
  auto first = new_run("pt_fp32_fwd", t.path());
  ASSERT_EQ(first.code, 0) << first.out;
  const std::string res = slurp(result_of(t.path())), det = slurp(details_of(t.path()));
  auto second = new_run("pt_fp16_fwdbwd", t.path());
  EXPECT_NE(second.code, 0) << second.out;
  EXPECT_NE(second.out.find("output files exist"), std::string::npos) << second.out;
  EXPECT_EQ(slurp(result_of(t.path())), res);
  EXPECT_EQ(slurp(details_of(t.path())), det);
}

// Item 1: without --timestamp, runs in the same second get files of their own.
TEST(FaultInjection, RunsInTheSameSecondGetTheirOwnFiles) {
  ScratchDir t("same_second");
  const std::string args = " -o " + t.path().string() + " -q";
  auto a = run_cli("run_ut -api_info " + dump("pt_fp32_fwd") + args);
  auto b = run_cli("run_ut -api_info " + dump("pt_fp32_fwd") + args);
  auto c = run_cli("run_ut -api_info " + dump("pt_fp32_fwd") + args);
  ASSERT_EQ(a.code, 0) << a.out;
  ASSERT_EQ(b.code, 0) << b.out;
  ASSERT_EQ(c.code, 0) << c.out;
  std::vector<fs::path> results;
  for (const auto& e : fs::directory_iterator(t.path()))
    if (e.path().filename().string().starts_with("accuracy_checking_result_")) results.push_back(e.path());
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) EXPECT_EQ(rows_in(r), 15u) << r;  // pt_fp32_fwd has 15 forward APIs
}

// Item 1, both frameworks: three runs started together into one directory, without --timestamp, each get
// their own pair of files, each byte-identical to a run made alone.
TEST(FaultInjection, ConcurrentRunsGetTheirOwnFilesForBothFrameworks) {
  for (const std::string fixture : {"pt_fp32_fwd", "ms_fp32_tensor"}) {
    ScratchDir solo("solo_" + fixture), t("together_" + fixture);
    ASSERT_EQ(new_run(fixture, solo.path()).code, 0);
    const std::string one = "run_ut -api_info " + dump(fixture) + " -o " + t.path().string() + " -q";
    // run_cli prefixes the CLI's path to the first command only.
    const std::string cli = std::string(PROBE_CLI_PATH) + " ";
    auto r = run_cli(one + " & " + cli + one + " & " + cli + one + " & wait");
    ASSERT_EQ(r.code, 0) << r.out;
    std::vector<fs::path> results, details;
    for (const auto& e : fs::directory_iterator(t.path())) {
      const std::string name = e.path().filename().string();
      if (name.starts_with("accuracy_checking_result_")) results.push_back(e.path());
      if (name.starts_with("accuracy_checking_details_")) details.push_back(e.path());
    }
    ASSERT_EQ(results.size(), 3u) << fixture << "\n" << r.out;
    ASSERT_EQ(details.size(), 3u) << fixture;
    for (const auto& f : results) EXPECT_EQ(slurp(f), slurp(result_of(solo.path()))) << f;
    for (const auto& f : details) EXPECT_EQ(slurp(f), slurp(details_of(solo.path()))) << f;
  }
}

// Item 1: a dangling symlink at the output name is neither followed nor replaced.
TEST(FaultInjection, DanglingSymlinkAtTheOutputNameIsRefused) {
  ScratchDir t("symlink");
  fs::create_symlink(t.path() / "elsewhere.csv", result_of(t.path()));
  auto r = new_run("pt_fp32_fwd", t.path());
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_FALSE(fs::exists(t.path() / "elsewhere.csv"));
  EXPECT_FALSE(fs::exists(details_of(t.path())));
}

// Item 1: a resume waits for no one: it refuses while another process holds the file.
TEST(FaultInjection, ResumeRefusesAFileAnotherRunHolds) {
  ScratchDir t("locked");
  ASSERT_EQ(new_run("pt_fp32_fwd", t.path()).code, 0);
  const std::string before = slurp(result_of(t.path()));
  int fd = ::open(result_of(t.path()).c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  auto r = resume("pt_fp32_fwd", result_of(t.path()));
  ::close(fd);
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("another probe run"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(result_of(t.path())), before);
  // Once released, the same resume goes through (nothing left to check).
  auto again = resume("pt_fp32_fwd", result_of(t.path()));
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_EQ(slurp(result_of(t.path())), before);
}

// Item 1: compare used to delete and rewrite an earlier output of the same name.
TEST(FaultInjection, CompareNeverOverwritesAnEarlierOutput) {
  ScratchDir t("compare");
  const std::string args =
      "compare -i compare.json -o " + t.path().string() + " --timestamp " + kTs + " 2>&1";
  const std::string cmd = "cd '" + kCompareData + "/stats' && '" + PROBE_CLI_PATH + "' " + args;
  ASSERT_EQ(std::system((cmd + " >/dev/null").c_str()), 0);
  const fs::path csv = t.path() / ("compare_result_" + kTs + ".csv");
  ASSERT_TRUE(fs::exists(csv));
  write(csv, "earlier output\n");
  const int second = std::system((cmd + " >/dev/null").c_str());
  EXPECT_NE(second, 0);
  EXPECT_EQ(slurp(csv), "earlier output\n");
  // No temporary left behind either.
  for (const auto& e : fs::directory_iterator(t.path()))
    EXPECT_EQ(e.path().filename().string().find(".partial"), std::string::npos) << e.path();
}

// Item 2: a CSV of another dump used to be continued, its rows counted in the summary. The run record
// names the dump; without the record (--resume_foreign) the rows themselves give it away.
TEST(FaultInjection, ResumeRefusesTheCsvOfAnotherDump) {
  ScratchDir t("foreign");
  ASSERT_EQ(new_run("pt_fp16_fwdbwd", t.path()).code, 0);
  const std::string before = slurp(result_of(t.path()));
  auto r = resume("pt_fp32_fwd", result_of(t.path()));
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("dump_json"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(result_of(t.path())), before);
  fs::remove(record_of(t.path()));
  r = resume("pt_fp32_fwd", result_of(t.path()), "--resume_foreign");
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("row 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("another dump"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(result_of(t.path())), before);
}

// Item 2: garbage, duplicated and foreign rows are refused, each with the row named.
TEST(FaultInjection, ResumeRefusesGarbageDuplicatesAndForeignRows) {
  const std::string header =
      "\xEF\xBB\xBF"
      "API name,Forward Test Success,Backward Test Success,Message\r\n";
  struct Case {
    std::string body, expect;
  };
  const Case cases[] = {
      {"Functional.relu.0,pass, \r\nFunctional.relu.0,pass, \r\n", "repeats API Functional.relu.0"},
      {"Functional.relu.0,pass, \r\nTorch.not_in_dump.0,pass, \r\n", "does not check"},
      {"Torch.matmul.0,pass, \r\n", "out of the dump's order"},
      {"Functional.relu.0,banana, \r\n", "not a run_ut result row"},
      {"Functional.relu.0\r\n", "not a run_ut result row"},
  };
  for (const auto& c : cases) {
    ScratchDir t("garbage");
    write(result_of(t.path()), header + c.body);
    write(details_of(t.path()), "");
    auto r = resume("pt_fp32_fwd", result_of(t.path()), "--resume_foreign");
    EXPECT_NE(r.code, 0) << c.body << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.body << r.out;
  }
}

// Item 2: a result file ahead of its details file used to leave the details rows missing forever.
TEST(FaultInjection, ResultRowsWithoutDetailsRowsAreCheckedAgain) {
  ScratchDir full("ahead_full"), t("ahead");
  ASSERT_EQ(new_run("pt_fp32_fwd", full.path()).code, 0);
  const std::string want_res = slurp(result_of(full.path())), want_det = slurp(details_of(full.path()));
  // Keep all result rows but cut the details file after the header and the first API's rows.
  fs::copy_file(result_of(full.path()), result_of(t.path()));
  fs::copy_file(record_of(full.path()), record_of(t.path()));
  auto det_rows = probe::csv_read_file(details_of(full.path()).string());
  std::string det = "\xEF\xBB\xBF" + probe::csv_encode_row(det_rows[0]) + "\r\n";
  for (std::size_t i = 1; i < det_rows.size() && det_rows[i][0].starts_with("Functional.relu.0."); ++i)
    det += probe::csv_encode_row(det_rows[i]) + "\r\n";
  write(details_of(t.path()), det);
  auto r = resume("pt_fp32_fwd", result_of(t.path()));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(slurp(result_of(t.path())), want_res);
  EXPECT_EQ(slurp(details_of(t.path())), want_det);
}

// A resume used to keep the verdicts of files written for another dump with the same API
// names. The run record holds dump.json's hash and the tensor files' names and sizes.
TEST(FaultInjection, ResumeRefusesTheFilesOfAnotherDumpWithTheSameApis) {
  ScratchDir t("same_apis");
  for (const char* copy : {"a", "b", "c"})
    fs::copy(kData + "/pt_fp32_fwd", t.path() / copy, fs::copy_options::recursive);
  // b: the same APIs, another dump.json (one statistic differs, as in a dump of another step).
  std::string json = slurp(t.path() / "b" / "dump.json");
  const std::size_t max = json.find("\"Max\": 1.");
  ASSERT_NE(max, std::string::npos);
  json.insert(max + 7, "1");  // 1.566... becomes 11.566...
  write(t.path() / "b" / "dump.json", json);
  // c: the same dump.json, a tensor file of another size.
  fs::path tensor;
  for (const auto& e : fs::directory_iterator(t.path() / "c" / "dump_tensor_data")) tensor = e.path();
  ASSERT_FALSE(tensor.empty());
  std::ofstream(tensor, std::ios::binary | std::ios::app) << '\0';

  const fs::path out = t.path() / "out";
  auto r = run_cli("run_ut -api_info " + (t.path() / "a" / "dump.json").string() + " -o " + out.string() +
                   " --timestamp " + kTs + " -q");
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string res = slurp(result_of(out)), det = slurp(details_of(out));
  for (const auto& [copy, field] :
       {std::pair<std::string, std::string>{"b", "dump_json"}, {"c", "tensor_files"}}) {
    r = run_cli("run_ut -api_info " + (t.path() / copy / "dump.json").string() + " -csv_path " +
                result_of(out).string() + " -q");
    EXPECT_NE(r.code, 0) << copy << r.out;
    EXPECT_NE(r.out.find("cannot resume: the files were written with " + field), std::string::npos) << r.out;
    EXPECT_EQ(slurp(result_of(out)), res);
    EXPECT_EQ(slurp(details_of(out)), det);
  }
  // Its own dump resumes (nothing left to check).
  r = run_cli("run_ut -api_info " + (t.path() / "a" / "dump.json").string() + " -csv_path " +
              result_of(out).string() + " -q");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(slurp(result_of(out)), res);
}

// A hand-edited verdict used to be kept by the resume. gelu.0 is an error in pt_fp32_fwd
// (its dumped output is corrupted, RunUtE2e.Fp32Forward...); a row saying pass must not survive.
TEST(FaultInjection, ResumeRefusesHandEditedRows) {
  ScratchDir t("edited");
  ASSERT_EQ(new_run("pt_fp32_fwd", t.path()).code, 0);
  const std::string res = slurp(result_of(t.path())), det = slurp(details_of(t.path()));
  std::string edited = res;
  const std::size_t gelu = edited.find("Functional.gelu.0,error,");
  ASSERT_NE(gelu, std::string::npos) << res;
  edited.replace(gelu, 24, "Functional.gelu.0,pass,");
  write(result_of(t.path()), edited);
  auto r = resume("pt_fp32_fwd", result_of(t.path()));
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("row 8"), std::string::npos) << r.out;  // header, then gelu.0 is the 7th API
  EXPECT_NE(r.out.find("changed after the run"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(result_of(t.path())), edited);

  // The same in the details file, one digit of a metric, the size unchanged.
  write(result_of(t.path()), res);
  std::string det_edited = det;
  const std::size_t digit = det_edited.find_first_of("123456789", det_edited.find("Torch.matmul.0"));
  ASSERT_NE(digit, std::string::npos);
  det_edited[digit] = det_edited[digit] == '9' ? '8' : static_cast<char>(det_edited[digit] + 1);
  write(details_of(t.path()), det_edited);
  r = resume("pt_fp32_fwd", result_of(t.path()));
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(details_of(t.path()).filename().string()), std::string::npos) << r.out;
  EXPECT_EQ(slurp(details_of(t.path())), det_edited);
}

// A result file without a run record (msprobe's own, an older probe's) is continued only
// when the user says so; a resume used to accept it silently.
TEST(FaultInjection, ResumeOfAFileWithoutARunRecordNeedsResumeForeign) {
  ScratchDir t("no_record");
  ASSERT_EQ(new_run("pt_fp32_fwd", t.path()).code, 0);
  const std::string res = slurp(result_of(t.path())), det = slurp(details_of(t.path()));
  fs::remove(record_of(t.path()));
  auto r = resume("pt_fp32_fwd", result_of(t.path()));
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("--resume_foreign"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(record_of(t.path())));
  r = resume("pt_fp32_fwd", result_of(t.path()), "--resume_foreign");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(slurp(result_of(t.path())), res);
  EXPECT_EQ(slurp(details_of(t.path())), det);
  // Continued once, the files have a record again: the next resume needs no flag.
  EXPECT_TRUE(fs::exists(record_of(t.path())));
  EXPECT_EQ(resume("pt_fp32_fwd", result_of(t.path())).code, 0);
  EXPECT_EQ(slurp(result_of(t.path())), res);
  EXPECT_EQ(slurp(details_of(t.path())), det);
}

// What a kill leaves in the record (a torn last checkpoint) and in the files (rows after the last complete
// checkpoint, a torn row): the resume goes back to the last checkpoint both files reach and checks the
// rest again, giving the files of an uninterrupted run.
TEST(FaultInjection, ResumeGoesBackToTheLastCheckpoint) {
  ScratchDir t("checkpoints");
  ASSERT_EQ(new_run("pt_fp32_fwd", t.path()).code, 0);
  const std::string res = slurp(result_of(t.path())), det = slurp(details_of(t.path()));
  const std::string record = slurp(record_of(t.path()));
  // Drop the last three checkpoints, tear the one before them.
  std::size_t cut = record.size() - 1;
  for (int i = 0; i < 4; ++i) cut = record.rfind('\n', cut - 1);
  write(record_of(t.path()), record.substr(0, cut + 20));
  // The result file lost its last row, the details file keeps a torn half row.
  write(result_of(t.path()), res.substr(0, res.rfind("\r\n", res.size() - 3) + 2));
  write(details_of(t.path()), det + "Torch.made_up_op.0.forward.output.1,torch.fl");
  auto r = resume("pt_fp32_fwd", result_of(t.path()));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("apis 15 "), std::string::npos) << r.out;
  EXPECT_EQ(slurp(result_of(t.path())), res);
  EXPECT_EQ(slurp(details_of(t.path())), det);
  EXPECT_EQ(slurp(record_of(t.path())), record);
}

// A resume with other options used to judge the rest of the dump by another rule set,
// one file holding two. It is refused, naming the option.
TEST(FaultInjection, ResumeWithOtherOptionsIsRefused) {
  for (const auto& [given, field] : {std::pair<std::string, std::string>{"--profile msprobe", "profile"},
                                     {"--device_runner emulated", "device_runner"},
                                     {"--seed 7", "seed"}}) {
    ScratchDir t("other_options");
    ASSERT_EQ(new_run("pt_fp32_fwd", t.path(), given).code, 0);
    const std::string res = slurp(result_of(t.path())), det = slurp(details_of(t.path()));
    auto r = resume("pt_fp32_fwd", result_of(t.path()));
    EXPECT_NE(r.code, 0) << given << r.out;
    EXPECT_NE(r.out.find("cannot resume: the files were written with " + field), std::string::npos) << r.out;
    EXPECT_EQ(slurp(result_of(t.path())), res);
    EXPECT_EQ(slurp(details_of(t.path())), det);
    r = resume("pt_fp32_fwd", result_of(t.path()), given);
    EXPECT_EQ(r.code, 0) << given << r.out;
    EXPECT_EQ(slurp(result_of(t.path())), res);
  }
}

// Item 3: an unwritable error-data folder used to turn every failing API into SKIP with exit 0.
TEST(FaultInjection, FailingToSaveErrorDataKeepsTheVerdicts) {
  ScratchDir plain("errdata_plain"), t("errdata");
  ASSERT_EQ(new_run("pt_fp32_fwd", plain.path()).code, 0);
  // A file where the folder must go: creating it fails like a read-only or full disk does.
  write(t.path() / ("ut_error_data" + kTs), "in the way");
  auto r = new_run("pt_fp32_fwd", t.path(), "-save_error_data");
  EXPECT_NE(r.code, 0) << r.out;
  // relu.2 (empty tensors) and gelu.0 fail in pt_fp32_fwd (RunUtE2e.Fp32Forward...); which one is named
  // first depends on the threads.
  EXPECT_NE(r.out.find("could not save the error data of 2 failing API(s) (their verdicts stand)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("cannot create error data directory"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(result_of(t.path())), slurp(result_of(plain.path())));
  EXPECT_EQ(slurp(details_of(t.path())), slurp(details_of(plain.path())));
}

// Item 3: error data goes under -o (not the current directory).
TEST(FaultInjection, ErrorDataGoesUnderTheOutputDirectory) {
  ScratchDir t("errdata_out");
  auto r = new_run("pt_fp32_fwd", t.path() / "out", "-save_error_data");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(
      fs::exists(t.path() / "out" / ("ut_error_data" + kTs) / "Functional.gelu.0.forward.input.0.npy"));
}

// A copy of pt_fp32_fwd (dump.json edited by `edit`, tensor files copied) in `dir`.
fs::path edited_fp32_dump(const fs::path& dir, const std::function<void(std::string&)>& edit) {
  const fs::path src = kData + "/pt_fp32_fwd";
  fs::copy(src / "dump_tensor_data", dir / "dump_tensor_data", fs::copy_options::recursive);
  std::string text = slurp(src / "dump.json");
  edit(text);
  write(dir / "dump.json", text);
  return dir / "dump.json";
}

void replace_once(std::string& text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
}

// Item 4: an empty data_name in a tensor dump used to switch that input to random data from Max/Min.
TEST(FaultInjection, TensorDumpWithoutATensorFileSkipsThatApi) {
  ScratchDir t("no_data_name");
  const fs::path dump_json = edited_fp32_dump(t.path(), [](std::string& text) {
    replace_once(text, "\"data_name\": \"Torch.matmul.0.forward.input.1.pt\"", "\"data_name\": \"\"");
  });
  auto r = run_cli("run_ut -api_info " + dump_json.string() + " -o " + (t.path() / "out").string() +
                   " --timestamp " + kTs + " -q");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto rows = probe::csv_read_file(result_of(t.path() / "out").string());
  bool seen = false;
  for (const auto& row : rows) {
    if (row[0] != "Torch.matmul.0") continue;
    seen = true;
    ASSERT_EQ(row.size(), 4u);
    EXPECT_EQ(row[1], "SKIP");
    EXPECT_EQ(row[3],
              "input.1: tensor dump without a file for this tensor (data_name missing or empty); inputs are "
              "generated from statistics only in statistics dumps");
  }
  EXPECT_TRUE(seen);
  // probe info reports it too (it used to say every tensor was present).
  auto info = run_cli("info " + dump_json.string());
  EXPECT_NE(info.out.find(", no file 1\n"), std::string::npos)
      << info.out;  // relu.2's empty tensors need none
  EXPECT_NE(info.out.find("no file: Torch.matmul.0.forward input_args.1"), std::string::npos) << info.out;
}

// Renames the first `"output": [` after `record`'s key to `"not_output": [` (the record loses its output).
void drop_output(std::string& text, const std::string& record) {
  const auto at = text.find("\"" + record + "\": {");
  ASSERT_NE(at, std::string::npos) << record;
  const auto out = text.find("\"output\": [", at);
  ASSERT_NE(out, std::string::npos) << record;
  text.replace(out, 8, "\"not_output\"");
}

// Empties the output list of `record` (its items end at the first "\n   ]" after it).
void empty_output(std::string& text, const std::string& record) {
  const auto at = text.find("\"" + record + "\": {");
  ASSERT_NE(at, std::string::npos) << record;
  const auto open = text.find("\"output\": [", at);
  ASSERT_NE(open, std::string::npos) << record;
  const auto close = text.find("\n   ]", open);
  ASSERT_NE(close, std::string::npos) << record;
  const auto first = open + std::string("\"output\": [").size();
  text.erase(first, close + 4 - first);
}

const probe::CsvRow* row_of(const std::vector<probe::CsvRow>& rows, const std::string& api) {
  for (const auto& row : rows)
    if (!row.empty() && row[0] == api) return &row;
  return nullptr;
}

// In a tensor dump the device side is the dumped output. An output without its file (data_name empty),
// a record without "output" and an empty "output" used to be judged against the emulated device
// runner and pass; that direction is SKIP, saying why.
TEST(FaultInjection, TensorDumpWithoutTheDumpedOutputSkipsThatDirection) {
  ScratchDir t("no_output");
  const fs::path dump_json = edited_fp32_dump(t.path(), [](std::string& text) {
    replace_once(text, "\"data_name\": \"Functional.relu.0.forward.output.0.pt\"", "\"data_name\": \"\"");
    drop_output(text, "Functional.gelu.0.forward");
    empty_output(text, "Torch.rsqrt.0.forward");
  });
  auto r = run_cli("run_ut -api_info " + dump_json.string() + " -o " + (t.path() / "out").string() +
                   " --timestamp " + kTs + " -q");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto rows = probe::csv_read_file(result_of(t.path() / "out").string());
  const std::string why = "; the device side of a tensor dump is the dumped output, so this is not compared";
  const std::pair<const char*, std::string> expected[] = {
      {"Functional.relu.0",
       "output.0: tensor dump without a file for this output tensor (data_name missing or empty)" + why},
      {"Functional.gelu.0",
       "output: tensor dump without an \"output\" section in Functional.gelu.0.forward" + why},
      {"Torch.rsqrt.0", "output: tensor dump without any value in Torch.rsqrt.0.forward's \"output\"" + why},
  };
  for (const auto& [api, message] : expected) {
    const probe::CsvRow* row = row_of(rows, api);
    ASSERT_NE(row, nullptr) << api;
    ASSERT_EQ(row->size(), 4u);
    EXPECT_EQ((*row)[1], "SKIP") << api;
    EXPECT_EQ((*row)[3], message) << api;
  }
  // The other APIs are judged as before.
  const probe::CsvRow* relu1 = row_of(rows, "Functional.relu.1");
  ASSERT_NE(relu1, nullptr);
  EXPECT_EQ((*relu1)[1], "pass");
}

// The same for the backward: a gradient the tensor dump lacks is not replaced by the device runner's.
TEST(FaultInjection, TensorDumpWithoutTheDumpedGradientSkipsTheBackward) {
  ScratchDir t("no_grad");
  const fs::path src = kData + "/pt_fp16_fwdbwd";
  fs::copy(src / "dump_tensor_data", t.path() / "dump_tensor_data", fs::copy_options::recursive);
  std::string text = slurp(src / "dump.json");
  replace_once(text, "\"data_name\": \"Tensor.__add__.1.backward.output.0.pt\"", "\"data_name\": \"\"");
  write(t.path() / "dump.json", text);
  auto r = run_cli("run_ut -api_info " + (t.path() / "dump.json").string() + " -o " +
                   (t.path() / "out").string() + " --timestamp " + kTs + " -q");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto rows = probe::csv_read_file(result_of(t.path() / "out").string());
  const probe::CsvRow* row = row_of(rows, "Tensor.__add__.1");
  ASSERT_NE(row, nullptr);
  ASSERT_EQ(row->size(), 4u);
  EXPECT_NE((*row)[1], "SKIP");  // the forward is compared
  EXPECT_EQ((*row)[2], "SKIP");
  EXPECT_NE((*row)[3].find("backward output.0: tensor dump without a file for this output tensor"),
            std::string::npos)
      << (*row)[3];
}

// A tensor file whose dtype is not dump.json's (bfloat16 data where dump.json says float32) used to be
// cast and judged; it is SKIP like a shape disagreement, and `probe info` reports it.
TEST(FaultInjection, TensorFileOfAnotherDtypeSkipsThatApi) {
  ScratchDir t("dtype");
  fs::create_directories(t.path() / "dump_tensor_data");
  const std::string tensors = std::string(PROBE_TEST_DATA_DIR) + "/tensors/";
  // Both (2, 3), made by torch (make_tensor_fixtures.py).
  fs::copy_file(tensors + "pt_bfloat16.pt",
                t.path() / "dump_tensor_data" / "Functional.relu.0.forward.input.0.pt");
  fs::copy_file(tensors + "pt_float32.pt",
                t.path() / "dump_tensor_data" / "Functional.relu.0.forward.output.0.pt");
  auto desc = [](const std::string& file) {
    return R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 3], "Max": 1.0, "Min": 0.0, )"
           R"("Mean": 0.5, "Norm": 1.0, "requires_grad": false, "data_name": ")" +
           file + "\"}";
  };
  write(t.path() / "dump.json",
        R"({"task": "tensor", "level": "L1", "framework": "pytorch", "dump_data_dir": "dump_tensor_data", )"
        R"("data": {"Functional.relu.0.forward": {"input_args": [)" +
            desc("Functional.relu.0.forward.input.0.pt") + R"(], "input_kwargs": {}, "output": [)" +
            desc("Functional.relu.0.forward.output.0.pt") + "]}}}");
  auto r = run_cli("run_ut -api_info " + (t.path() / "dump.json").string() + " -o " +
                   (t.path() / "out").string() + " --timestamp " + kTs + " -q");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto rows = probe::csv_read_file(result_of(t.path() / "out").string());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][0], "Functional.relu.0");
  EXPECT_EQ(rows[1][1], "SKIP");
  ASSERT_EQ(rows[1].size(), 4u);
  EXPECT_EQ(rows[1][3],
            "Functional.relu.0.forward.input.0.pt: input.0: tensor file holds bfloat16 but dump.json says "
            "torch.float32");
  auto info = run_cli("info " + (t.path() / "dump.json").string());
  EXPECT_EQ(info.code, 0) << info.out;
  EXPECT_NE(info.out.find("2 referenced, 1 ok, dtype mismatch 1"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("dtype mismatch: Functional.relu.0.forward input_args.0"), std::string::npos)
      << info.out;
  EXPECT_NE(info.out.find("the file holds bfloat16, dump.json says torch.float32"), std::string::npos)
      << info.out;
}

std::string minimal_dump(const std::string& head, const std::string& data) {
  return "{" + head + "\"data\": {" + data + "}}";
}

const std::string kStatsEntry =
    R"("Functional.relu.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32",)"
    R"( "shape": [2], "Max": 1.0, "Min": -1.0, "Mean": 0.0, "Norm": 1.0, "requires_grad": false}],)"
    R"( "input_kwargs": {}, "output": []})";

probe::Error parse_error(const std::string& text) {
  try {
    probe::Dump::parse(text, "mem/dump.json");
  } catch (const probe::Error& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << text.substr(0, 200);
  return probe::Error(probe::ErrorKind::Internal, "none");
}

// Item 6: inputs that used to be accepted silently.
TEST(FaultInjection, DumpJsonSilentAcceptsAreErrors) {
  // No "data": 0 APIs and exit 0 before.
  EXPECT_NE(parse_error(R"({"task": "statistics", "level": "L1"})").message().find("no \"data\" object"),
            std::string::npos);
  // A record twice: both ran before (Python keeps the last).
  auto dup = parse_error(minimal_dump(R"("task": "statistics", )", kStatsEntry + ", " + kStatsEntry));
  EXPECT_EQ(dup.api(), "Functional.relu.0.forward");
  EXPECT_NE(dup.message().find("appears twice"), std::string::npos) << dup.what();
  // "data" twice: the first was kept (Python keeps the last).
  auto twice = parse_error(R"({"data": {}, "data": {)" + kStatsEntry + "}}");
  EXPECT_NE(twice.message().find("\"data\" appears twice"), std::string::npos) << twice.what();
  // A NUL byte in data_name used to be echoed raw into the CSV.
  std::string nul = kStatsEntry;
  replace_once(nul, "\"requires_grad\": false", "\"requires_grad\": false, \"data_name\": \"a\\u0000b.pt\"");
  auto bad_name = parse_error(minimal_dump("", nul));
  EXPECT_NE(bad_name.message().find("data_name contains a control character"), std::string::npos)
      << bad_name.what();
}

// Item 6 / Messages: a UTF-8 BOM used to give "Invalid value".
TEST(FaultInjection, Utf8BomIsAccepted) {
  const probe::Dump d =
      probe::Dump::parse("\xEF\xBB\xBF" + minimal_dump(R"("task": "statistics", )", kStatsEntry), "mem.json");
  EXPECT_EQ(d.entries().size(), 1u);
  EXPECT_EQ(d.task(), "statistics");
}

// Messages: the nesting-limit error used to carry a 1.1 KB path of "0.0.0...".
TEST(FaultInjection, NestingLimitMessageIsShort) {
  std::string deep = R"({"data": {"Functional.relu.0.forward": {"input_args": )";
  for (int i = 0; i < 1000; ++i) deep += "[";
  for (int i = 0; i < 1000; ++i) deep += "]";
  deep += "}}}";
  auto e = parse_error(deep);
  EXPECT_NE(e.message().find("nested deeper than"), std::string::npos) << e.what();
  EXPECT_LT(std::string(e.what()).size(), 300u) << e.what();
}

// Item 6: run_ut refuses a task or framework it does not know instead of guessing.
TEST(FaultInjection, RunUtRefusesUnknownTaskAndFramework) {
  ScratchDir t("unknown_task");
  write(t.path() / "dump.json", minimal_dump(R"("task": "banana", "framework": "pytorch", )", kStatsEntry));
  auto r =
      run_cli("run_ut -api_info " + (t.path() / "dump.json").string() + " -o " + t.path().string() + " -q");
  EXPECT_EQ(r.code, 4) << r.out;
  EXPECT_NE(r.out.find("this dump's task is 'banana'"), std::string::npos) << r.out;
  write(t.path() / "dump.json", minimal_dump(R"("task": "statistics", "framework": "jax", )", kStatsEntry));
  r = run_cli("run_ut -api_info " + (t.path() / "dump.json").string() + " -o " + t.path().string() + " -q");
  EXPECT_EQ(r.code, 4) << r.out;
  EXPECT_NE(r.out.find("unknown framework 'jax'"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(result_of(t.path())));
}

// -f against the dump's own framework: a PyTorch dump checked with -f mindspore used to keep none of its
// APIs (MindSpore checks only what it can bench) and exit 0 with empty CSVs.
TEST(FaultInjection, RunUtRefusesAFrameworkFlagAgainstTheDumps) {
  ScratchDir t("framework_conflict");
  const std::string run = "run_ut -api_info " + (t.path() / "dump.json").string() + " -o " +
                          t.path().string() + " --timestamp " + kTs;
  write(t.path() / "dump.json",
        minimal_dump(R"("task": "statistics", "framework": "pytorch", )", kStatsEntry));
  auto r = run_cli("-f mindspore " + run + " -q");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("dump.json: framework: -f mindspore but this is a pytorch dump"), std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(result_of(t.path())));
  write(t.path() / "dump.json",
        minimal_dump(R"("task": "statistics", "framework": "mindspore", )", kStatsEntry));
  r = run_cli("-f pytorch " + run + " -q");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("-f pytorch but this is a mindspore dump"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(result_of(t.path())));
  // The flag that agrees with the dump still runs; without the field the tensor types tell the framework.
  write(t.path() / "dump.json",
        minimal_dump(R"("task": "statistics", "framework": "pytorch", )", kStatsEntry));
  r = run_cli("-f pytorch " + run + " -q");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(result_of(t.path())));
  fs::remove(result_of(t.path()));
  fs::remove(details_of(t.path()));
  write(t.path() / "dump.json", minimal_dump(R"("task": "statistics", )", kStatsEntry));
  r = run_cli("-f mindspore " + run + " -q");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("but this is a pytorch dump (no framework field; its tensor types say so)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(run_cli("-f pytorch " + run + " -q").code, 0);
}

// Item 7: a 65 KB .pt whose 12-element storage record claims 64 MiB used to be inflated in full.
TEST(FaultInjection, DecompressionBombIsRefusedBeforeInflating) {
  const std::string dir = std::string(PROBE_TEST_DATA_DIR) + "/faults/";
  try {
    probe::load_tensor_file(dir + "pt_inflate_bomb.pt");
    ADD_FAILURE() << "the bomb was loaded";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.kind(), probe::ErrorKind::Format);
    EXPECT_NE(e.message().find("tensor storage needs 48"), std::string::npos) << e.what();
  }
  // The same tensor deflated without padding is fine: arange(12) / 8, as the generator wrote it.
  const probe::Tensor t = probe::load_tensor_file(dir + "pt_ok_deflated.pt");
  ASSERT_EQ(t.numel(), 12);
  for (std::int64_t i = 0; i < 12; ++i) EXPECT_EQ(t.at(i), static_cast<double>(i) / 8);
}

// Item 7: `probe info` reads tensor headers only. The tensor file is a 16 MiB float32 storage deflated to
// 17 KB with its compressed stream garbled: info must report it present with the right shape (it cannot
// have inflated it), while run_ut, which needs the data, SKIPs the API naming the file.
TEST(FaultInjection, InfoNeverInflatesTensorData) {
  ScratchDir t("info_headers");
  fs::create_directories(t.path() / "dump_tensor_data");
  fs::copy_file(std::string(PROBE_TEST_DATA_DIR) + "/faults/pt_garbled_deflated.pt",
                t.path() / "dump_tensor_data" / "Functional.relu.0.forward.input.0.pt");
  const std::string tensor = R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4194304], )"
                             R"("Max": 0.0, "Min": 0.0, "Mean": 0.0, "Norm": 0.0, "requires_grad": false, )"
                             R"("data_name": "Functional.relu.0.forward.input.0.pt"})";
  write(t.path() / "dump.json",
        R"({"task": "tensor", "level": "L1", "framework": "pytorch", "dump_data_dir": )"
        R"("dump_tensor_data", "data": {"Functional.relu.0.forward": {"input_args": [)" +
            tensor + R"(], "input_kwargs": {}, "output": []}}})");
  auto info = run_cli("info " + (t.path() / "dump.json").string());
  EXPECT_EQ(info.code, 0) << info.out;
  EXPECT_NE(info.out.find("tensor files: 1 referenced, 1 ok"), std::string::npos) << info.out;
  auto r = run_cli("run_ut -api_info " + (t.path() / "dump.json").string() + " -o " +
                   (t.path() / "out").string() + " --timestamp " + kTs + " -q");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto rows = probe::csv_read_file(result_of(t.path() / "out").string());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][0], "Functional.relu.0");
  EXPECT_EQ(rows[1][1], "SKIP");
  EXPECT_NE(rows[1].back().find("Functional.relu.0.forward.input.0.pt"), std::string::npos) << rows[1].back();
}

// Item 9: `probe metrics` on .npz members and on a bare one-array .npz.
TEST(FaultInjection, MetricsReadsNpz) {
  const std::string dir = std::string(PROBE_TEST_DATA_DIR) + "/tensors/";
  // The same float32 array `a` (with NaN and inf, make_tensor_fixtures.py) in each archive: identical
  // sides, so dump compare's max abs error is 0 and its cosine 1 (it leaves non-finite pairs out).
  auto r = run_cli("metrics " + dir + "npz_stored.npz:a " + dir + "npz_deflated.npz:a --json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\"shape\": \"(3, 4)\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"dump_max_abs\": \"0.000000000000\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"dump_cosine\": \"1.000000000000\""), std::string::npos) << r.out;
  r = run_cli("metrics " + dir + "npz_single.npz " + dir + "npz_stored.npz:a --json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\"dump_max_abs\": \"0.000000000000\""), std::string::npos) << r.out;
  r = run_cli("metrics " + dir + "npz_stored.npz " + dir + "npz_single.npz");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("holds 3 arrays; name one as FILE.npz:NAME (a, b, c)"), std::string::npos) << r.out;
}

// Messages (golden): each used to be wrong or unhelpful.
TEST(FaultInjection, MessagesSayWhatIsWrong) {
  ScratchDir t("messages");
  auto r = run_cli("run_ut -api_info " + dump("pt_fp32_fwd") + " -n 8192 -o " + t.path().string());
  EXPECT_EQ(r.out, "probe run_ut: -n must be in 1..4096, got 8192; see probe run_ut --help\n");
  r = run_cli("no_such_command");
  EXPECT_EQ(r.out, "probe: unknown command 'no_such_command'; see probe --help\n");
  r = run_cli("metrics onlyone.npy");
  EXPECT_EQ(r.out,
            "probe metrics: expected two tensor files (BENCH DEVICE), got 1; see probe metrics --help\n");
  EXPECT_EQ(r.code, 2);  // a bad command line (1 is "no command given")
  fs::create_symlink(t.path() / "gone", t.path() / "out");
  r = run_cli("run_ut -api_info " + dump("pt_fp32_fwd") + " -q -o " + (t.path() / "out").string());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("output directory is a symbolic link to a missing target"), std::string::npos)
      << r.out;
}

// Messages: data_name "." used to be called a symlink escape.
TEST(FaultInjection, DataNameDotIsNamedForWhatItIs) {
  ScratchDir t("dot");
  const fs::path dump_json = edited_fp32_dump(t.path(), [](std::string& text) {
    replace_once(text, "\"data_name\": \"Torch.matmul.0.forward.input.1.pt\"", "\"data_name\": \".\"");
  });
  const probe::Dump d = probe::Dump::open(dump_json.string());
  const probe::DumpEntry* e = d.find("Torch.matmul.0.forward");
  ASSERT_NE(e, nullptr);
  const auto tensors = e->tensors();
  ASSERT_GE(tensors.size(), 2u);
  try {
    (void)d.tensor_path(*e, *tensors[1]);
    ADD_FAILURE() << "accepted";
  } catch (const probe::Error& err) {
    EXPECT_NE(err.message().find("names the tensor directory itself"), std::string::npos) << err.what();
  }
}

// Item 10: run_ut refused the whole run on a formula-like API name (rc 6) while compare escaped it.
TEST(FaultInjection, FormulaLikeApiNameIsEscapedAndResumable) {
  ScratchDir t("formula");
  std::string entry = kStatsEntry;
  replace_once(entry, "\"Functional.relu.0.forward\"", "\"\\tFunctional.relu.0.forward\"");
  write(t.path() / "dump.json",
        minimal_dump(R"("task": "statistics", "framework": "pytorch", )", entry + ", " + kStatsEntry));
  const std::string args = "run_ut -api_info " + (t.path() / "dump.json").string() + " -q";
  auto r = run_cli(args + " -o " + t.path().string() + " --timestamp " + kTs);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto rows = probe::csv_read_file(result_of(t.path()).string());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][0], "'\tFunctional.relu.0");
  EXPECT_EQ(rows[2][0], "Functional.relu.0");
  // Resuming the complete file recognises the escaped name as the dump's first API.
  const std::string before = slurp(result_of(t.path()));
  r = run_cli(args + " -csv_path " + result_of(t.path()).string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(slurp(result_of(t.path())), before);
}

// Item 8: a statistics dump of a few hundred bytes could demand any amount of generated data.
TEST(FaultInjection, GeneratedInputsAreCappedPerApi) {
  ScratchDir t("cap");
  std::string big = kStatsEntry;
  replace_once(big, "\"shape\": [2]", "\"shape\": [4097, 4097]");  // 16785409 elements > 2^24
  write(t.path() / "dump.json", minimal_dump(R"("task": "statistics", "framework": "pytorch", )", big));
  auto r = run_cli("run_ut -api_info " + (t.path() / "dump.json").string() + " -q -o " + t.path().string() +
                   " --timestamp " + kTs);
  ASSERT_EQ(r.code, 0) << r.out;
  auto rows = probe::csv_read_file(result_of(t.path()).string());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][1], "SKIP");
  EXPECT_EQ(rows[1][3],
            "input.0: generated inputs of this API would hold 16785409 elements, above the limit of 16777216 "
            "(raise it with --max_api_elements)");
  // The limit is an option: 2 elements pass a limit of 2 and not of 1.
  ScratchDir u("cap_small");
  write(u.path() / "dump.json",
        minimal_dump(R"("task": "statistics", "framework": "pytorch", )", kStatsEntry));
  const std::string args = "run_ut -api_info " + (u.path() / "dump.json").string() + " -q -o ";
  ASSERT_EQ(run_cli(args + (u.path() / "a").string() + " --timestamp " + kTs + " --max_api_elements 1").code,
            0);
  ASSERT_EQ(run_cli(args + (u.path() / "b").string() + " --timestamp " + kTs + " --max_api_elements 2").code,
            0);
  EXPECT_EQ(probe::csv_read_file(result_of(u.path() / "a").string())[1][1], "SKIP");
  EXPECT_NE(probe::csv_read_file(result_of(u.path() / "b").string())[1][1], "SKIP");
}

// Item 8: a statistics dump of a few hundred bytes could also demand any amount of bench work. With the
// limit at 10^9: a [1024, 1024] @ [1024, 1024] matmul (2 * 1024^3 = 2.1e9 FLOPs) is SKIP with the reason,
// a [512, 512] one (2.7e8) is checked; elementwise APIs have no estimate and are never held back.
TEST(FaultInjection, BenchWorkOnGeneratedInputsIsCappedPerApi) {
  ScratchDir t("flops");
  auto matmul = [](int k, int n) {
    const std::string m = std::to_string(n);
    const std::string desc =
        R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [)" + m + ", " + m +
        R"(], "Max": 1.0, "Min": -1.0, "Mean": 0.0, "Norm": 1.0, "requires_grad": false})";
    return "\"Torch.matmul." + std::to_string(k) + ".forward\": {\"input_args\": [" + desc + ", " + desc +
           "], \"input_kwargs\": {}, \"output\": []}";
  };
  write(t.path() / "dump.json", minimal_dump(R"("task": "statistics", "framework": "pytorch", )",
                                             matmul(0, 1024) + ", " + matmul(1, 512) + ", " + kStatsEntry));
  auto r = run_cli("run_ut -api_info " + (t.path() / "dump.json").string() + " -q -o " + t.path().string() +
                   " --timestamp " + kTs + " --max_api_flops 1000000000");
  ASSERT_EQ(r.code, 0) << r.out;
  auto rows = probe::csv_read_file(result_of(t.path()).string());
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1][0], "Torch.matmul.0");
  EXPECT_EQ(rows[1][1], "SKIP");
  EXPECT_EQ(rows[1][3],
            "the float64 bench of this API on generated inputs would take about 2.15e+09 floating-point "
            "operations, above the limit of 1e+09 (raise it with --max_api_flops)");
  EXPECT_NE(rows[2][1], "SKIP") << rows[2][3];
  EXPECT_NE(rows[3][1], "SKIP") << rows[3][3];
}

// Item 7 and messages: a tensor that cannot be built names its field, an argument whose dump type is blank
// says so, and running out of memory names the tensor instead of "out of memory while checking this API".
// 2^50 float32 elements (4 PiB) exceed any address space, so that allocation fails on every machine whatever
// its overcommit policy. The Address and Thread sanitizers' operator new aborts instead of throwing
// std::bad_alloc, so the out-of-memory record is left out of sanitizer builds (the other two are checked
// there too).
TEST(FaultInjection, TensorsThatCannotBeBuiltAreNamed) {
  ScratchDir t("named");
  std::string wide = kStatsEntry, blank = kStatsEntry, huge = kStatsEntry;
  replace_once(wide, "\"shape\": [2]", "\"shape\": [4294967296, 4294967296, 4294967296]");
  replace_once(blank, "Functional.relu.0", "Functional.silu.0");
  replace_once(blank, "\"type\": \"torch.Tensor\"", "\"type\": \"\"");
  replace_once(huge, "Functional.relu.0", "Functional.relu.1");
  replace_once(huge, "\"shape\": [2]", "\"shape\": [1125899906842624]");
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  const bool out_of_memory_case = false;
#else
  const bool out_of_memory_case = true;
#endif
  write(t.path() / "dump.json", minimal_dump(R"("task": "statistics", "framework": "pytorch", )",
                                             wide + ", " + blank + (out_of_memory_case ? ", " + huge : "")));
  auto r = run_cli("run_ut -api_info " + (t.path() / "dump.json").string() + " -q -o " + t.path().string() +
                   " --timestamp " + kTs + " --max_api_elements 0");
  ASSERT_EQ(r.code, 0) << r.out;
  auto rows = probe::csv_read_file(result_of(t.path()).string());
  ASSERT_EQ(rows.size(), out_of_memory_case ? 4u : 3u);
  EXPECT_EQ(rows[1][1], "SKIP");
  EXPECT_EQ(rows[1][3], "input.0: shape (4294967296, 4294967296, 4294967296) has too many elements");
  EXPECT_EQ(rows[2][1], "SKIP");
  EXPECT_EQ(rows[2][3], "silu(): argument 'input' must be Tensor, not ''");
  if (out_of_memory_case) {
    EXPECT_EQ(rows[3][1], "SKIP");
    EXPECT_EQ(
        rows[3][3],
        "input.0: out of memory while generating this tensor (shape (1125899906842624,), torch.float32)");
  }
}

// Item 4: in a statistics dump that also saved some tensors, an API judged on generated inputs says which.
TEST(FaultInjection, GeneratedInputsAreNamedInAStatisticsDumpWithFiles) {
  ScratchDir t("generated");
  fs::create_directories(t.path() / "dump_tensor_data");
  probe::save_pt((t.path() / "dump_tensor_data" / "Torch.add.0.forward.input.0.pt").string(),
                 probe::Tensor::from_values<float>({1.0f, -2.0f, 3.0f}, {3}));
  const std::string real =
      R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3], "Max": 3.0, "Min": -2.0, )"
      R"("Mean": 0.6667, "Norm": 3.74, "requires_grad": false, "data_name": "Torch.add.0.forward.input.0.pt"})";
  const std::string generated =
      R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3], )"
      R"("Max": 1.0, "Min": -1.0, "Mean": 0.0, "Norm": 1.0, "requires_grad": false})";
  const std::string add = "\"Torch.add.0.forward\": {\"input_args\": [" + real + ", " + generated +
                          "], \"input_kwargs\": {}, \"output\": []}";
  const std::string relu =
      "\"Functional.relu.0.forward\": {\"input_args\": [" + real + "], \"input_kwargs\": {}, \"output\": []}";
  write(t.path() / "dump.json",
        minimal_dump(R"("task": "statistics", "framework": "pytorch", )", add + ", " + relu));
  auto r = run_cli("run_ut -api_info " + (t.path() / "dump.json").string() + " -q -o " + t.path().string() +
                   " --timestamp " + kTs);
  ASSERT_EQ(r.code, 0) << r.out;
  auto rows = probe::csv_read_file(result_of(t.path()).string());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][0], "Torch.add.0");
  ASSERT_EQ(rows[1].size(), 4u);
  EXPECT_EQ(rows[1][3],
            "inputs generated from statistics: input.1; the device side is the device runner on the same "
            "inputs");
  EXPECT_EQ(rows[2][0], "Functional.relu.0");
  EXPECT_TRUE(rows[2].size() < 4 || rows[2][3].find("generated") == std::string::npos) << rows[2][3];
}

}  // namespace
