// run_ut on a step directory of a multi-rank dump (run_ut_step): each rank directory's files are those of a
// run on its dump.json alone, under one timestamp in <out>/<rank dir>/, and a step resumes from any rank's
// result file, starting the rank directories it never reached.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "probe/error.h"
#include "probe/run_ut.h"

namespace {

namespace fs = std::filesystem;
using probe::testing::ScratchDir;
using probe::testing::slurp;

const fs::path kData = PROBE_TEST_DATA_DIR;
const std::string kTs = "20260101000000";

// step0/rank0 and step0/rank2 (a gap, as a partial dump leaves) linked to two single-rank fixtures.
fs::path make_step(const ScratchDir& dir) {
  const fs::path step = dir.path() / "step0";
  fs::create_directories(step);
  fs::create_directory_symlink(kData / "run_ut" / "pt_fp16_fwdbwd", step / "rank0");
  fs::create_directory_symlink(kData / "run_ut" / "pt_bf16_stats", step / "rank2");
  fs::create_directories(step / "not_a_rank");  // other entries are ignored
  return step;
}

probe::RunUtOptions options(const fs::path& api_info, const fs::path& out) {
  probe::RunUtOptions o;
  o.api_info = api_info.string();
  o.out_dir = out.string();
  o.timestamp = kTs;
  o.threads = 2;
  return o;
}

TEST(RunUtStep, EachRankDirectoryAsARunOnItsOwnDump) {
  ScratchDir dir("step");
  const fs::path step = make_step(dir);
  const auto ranks = probe::run_ut_step(options(step, dir.path() / "out"));
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].rank_dir, "rank0");
  EXPECT_EQ(ranks[1].rank_dir, "rank2");
  for (const auto& r : ranks) {
    const auto alone =
        probe::run_ut(options(step / r.rank_dir / "dump.json", dir.path() / ("alone_" + r.rank_dir)));
    EXPECT_EQ(r.summary.result_csv,
              (dir.path() / "out" / r.rank_dir / ("accuracy_checking_result_" + kTs + ".csv")).string());
    EXPECT_GT(r.summary.apis, 0u);
    EXPECT_EQ(slurp(r.summary.result_csv), slurp(alone.result_csv)) << r.rank_dir;
    EXPECT_EQ(slurp(r.summary.details_csv), slurp(alone.details_csv)) << r.rank_dir;
  }
}

TEST(RunUtStep, ResumeFromOneRanksFileStartsTheRanksNotReached) {
  ScratchDir dir("step_resume");
  const fs::path step = make_step(dir);
  // An interrupted step: rank0 finished, rank2 never started.
  const auto first = probe::run_ut(options(step / "rank0" / "dump.json", dir.path() / "out" / "rank0"));
  probe::RunUtOptions o = options(step, dir.path() / "elsewhere");
  o.timestamp.clear();
  o.result_csv = first.result_csv;
  const auto ranks = probe::run_ut_step(o);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].summary.checked, 0u);  // all of rank0 taken over from its files
  EXPECT_EQ(ranks[0].summary.apis, first.apis);
  EXPECT_EQ(ranks[1].summary.result_csv,
            (dir.path() / "out" / "rank2" / ("accuracy_checking_result_" + kTs + ".csv")).string());
  EXPECT_EQ(ranks[1].summary.checked, ranks[1].summary.apis);
}

TEST(RunUtStep, RefusesAFileOrADirectoryWithoutRanks) {
  ScratchDir dir("step_bad");
  EXPECT_THROW(probe::run_ut_step(options(kData / "run_ut" / "pt_fp16_fwdbwd" / "dump.json", dir.path())),
               probe::Error);
  fs::create_directories(dir.path() / "empty");
  try {
    probe::run_ut_step(options(dir.path() / "empty", dir.path() / "out"));
    ADD_FAILURE() << "no error";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.kind(), probe::ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("no rank* directory"), std::string::npos) << e.what();
  }
  // A rank directory (what holds dump.json) is the likely mistake: the error says what to pass instead.
  const fs::path rank = kData / "run_ut" / "pt_fp16_fwdbwd";
  try {
    probe::run_ut_step(options(rank, dir.path() / "out"));
    ADD_FAILURE() << "no error";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.kind(), probe::ErrorKind::InvalidArgument);
    EXPECT_EQ(e.field(), "-api_info");
    EXPECT_NE(
        std::string(e.what()).find("a rank directory (it holds dump.json), not a step directory holding "
                                   "rank* directories: pass " +
                                   (rank / "dump.json").string() + ", or the step directory above it"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
