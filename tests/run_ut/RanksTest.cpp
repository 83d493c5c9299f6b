// run_ut and the rank helpers across the ranks of a group, without MPI (ranks are threads, ThreadGroup.h):
// the files of one process for any rank count, and an error on one rank thrown on every rank instead of a
// hang.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>

#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "common/ThreadGroup.h"
#include "probe/error.h"
#include "probe/run_ut.h"
#include "support/RankWork.h"

namespace {

namespace fs = std::filesystem;
using probe::testing::ScratchDir;
using probe::testing::slurp;
using probe::testing::ThreadJob;

const fs::path kData = PROBE_TEST_DATA_DIR;

probe::RunUtOptions options(const std::string& dump, const fs::path& out) {
  probe::RunUtOptions o;
  o.api_info = (kData / "run_ut" / dump / "dump.json").string();
  o.out_dir = out.string();
  o.timestamp = "20260101000000";
  o.threads = 2;
  return o;
}

class RunUtRanks : public ::testing::TestWithParam<int> {};

TEST_P(RunUtRanks, FilesOfAnyRankCountAreThoseOfOneProcess) {
  for (const char* dump : {"real_gpt_fp32", "pt_bf16_stats", "real_params_fp32"}) {
    ScratchDir dir("ranks");
    const auto one = probe::run_ut(options(dump, dir.path() / "one"));
    ThreadJob job(GetParam());
    std::vector<probe::RunUtSummary> summaries(static_cast<std::size_t>(GetParam()));
    job.run([&](probe::Distributed& g) {
      probe::RunUtOptions o = options(dump, dir.path() / "ranks");
      o.group = &g;
      summaries[static_cast<std::size_t>(g.rank())] = probe::run_ut(o);
    });
    const auto& s = summaries[0];
    EXPECT_EQ(slurp(s.result_csv), slurp(one.result_csv)) << dump;
    EXPECT_EQ(slurp(s.details_csv), slurp(one.details_csv)) << dump;
    // Every rank returns the run's summary.
    for (const auto& r : summaries) {
      EXPECT_EQ(r.apis, one.apis);
      EXPECT_EQ(r.pass, one.pass);
      EXPECT_EQ(r.error, one.error);
      EXPECT_EQ(r.checked, one.checked);
      EXPECT_EQ(r.result_csv, s.result_csv);
    }
    if (GetParam() > 1) {
      EXPECT_GE(s.rounds, 1u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, RunUtRanks, ::testing::Values(1, 2, 3));

TEST(RunUtRanks, AnErrorOnOneRankIsThrownOnEveryRank) {
  // map_on_ranks: item 5 fails on whichever rank claims it; every rank throws that error, naming the rank.
  ThreadJob job(3);
  std::atomic<int> thrown{0};
  job.run([&](probe::Distributed& g) {
    const std::vector<double> w(12, 1.0);
    try {
      probe::detail::map_on_ranks(g, w, [&](std::size_t i) -> std::string {
        if (i == 5) throw probe::Error(probe::ErrorKind::Io, "disk gone", "t.npy");
        return std::to_string(i);
      });
    } catch (const probe::Error& e) {
      EXPECT_EQ(e.kind(), probe::ErrorKind::Io);
      EXPECT_NE(std::string(e.what()).find("disk gone"), std::string::npos) << e.what();
      EXPECT_EQ(e.file(), "t.npy");
      ++thrown;
    }
  });
  EXPECT_EQ(thrown.load(), 3);
}

TEST(RunUtRanks, MapOnRanksReturnsEveryResultInItemOrder) {
  ThreadJob job(3);
  job.run([&](probe::Distributed& g) {
    const std::vector<double> w = {1, 9, 3, 7, 5, 2, 8};
    const auto all = probe::detail::map_on_ranks(
        g, w, [](std::size_t i) { return "item" + std::to_string(i); }, 2, true);
    ASSERT_EQ(all.size(), w.size());
    for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], "item" + std::to_string(i));
  });
}

TEST(RunUtRanks, ARunRank0CannotStartFailsOnEveryRank) {
  // The names are taken: rank 0's claim fails, and every rank throws its error.
  ScratchDir dir("taken");
  probe::run_ut(options("pt_bf16_stats", dir.path()));
  ThreadJob job(2);
  std::atomic<int> thrown{0};
  job.run([&](probe::Distributed& g) {
    probe::RunUtOptions o = options("pt_bf16_stats", dir.path());
    o.group = &g;
    try {
      probe::run_ut(o);
    } catch (const probe::Error&) {
      ++thrown;
    }
  });
  EXPECT_EQ(thrown.load(), 2);
}

}  // namespace
