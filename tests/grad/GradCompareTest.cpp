// grad_compare on two gradient-monitor dumps written by torch (make_grad_fixtures.py): an MLP trained 6 steps
// on two ranks, rank 0's inputs perturbed from step 3 in the second run. expected/rank{R}/similarities.csv is
// msprobe's own GradComparator output on the same dumps; expected.json holds the first suspicious step by the
// documented rule (3 on rank 0, none on rank 1).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "common/RunCli.h"
#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "probe/error.h"
#include "probe/grad_compare.h"

namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(PROBE_TEST_DATA_DIR) + "/grad_probe/";

using probe::testing::run_cli;
using probe::testing::ScratchDir;
using probe::testing::slurp;

TEST(GradCompare, SimilaritiesAreMsprobesBytes) {
  ScratchDir out("grad-compare");
  const probe::GradCompareResult r = probe::grad_compare({kData + "a", kData + "b", out.path().string()});
  ASSERT_EQ(r.ranks.size(), 2u);
  for (const probe::GradRankComparison& rank : r.ranks) {
    const std::string dir = "rank" + std::to_string(rank.rank);
    EXPECT_EQ(slurp(out.path() / dir / "similarities.csv"),
              slurp(kData + "expected/" + dir + "/similarities.csv"))
        << dir;
  }
}

TEST(GradCompare, DivergenceFoundAtStepThree) {
  ScratchDir out("grad-compare");
  const probe::GradCompareResult r = probe::grad_compare({kData + "a", kData + "b", out.path().string()});
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_EQ(r.ranks[0].rank, 0);
  ASSERT_TRUE(r.ranks[0].first_suspicious_step.has_value());
  EXPECT_EQ(*r.ranks[0].first_suspicious_step, 3);
  EXPECT_FALSE(r.ranks[1].first_suspicious_step.has_value());
  // Rows: the parameters in grad_summary order, then summary; steps 0..5.
  ASSERT_EQ(r.ranks[0].rows.size(), 5u);
  EXPECT_EQ(r.ranks[0].rows[0].name, "fc1.weight");
  EXPECT_EQ(r.ranks[0].rows[4].name, "summary");
  EXPECT_EQ(r.ranks[0].steps, (std::vector<long long>{0, 1, 2, 3, 4, 5}));
  // summary at step 3 (expected.json: 0.8222222222222222 = 148/180 agreeing directions of 180 elements).
  EXPECT_DOUBLE_EQ(r.ranks[0].rows[4].values[3], 148.0 / 180.0);
}

TEST(GradCompare, SuspiciousStepRule) {
  using Rows = std::vector<probe::GradSimilarityRow>;
  const std::vector<long long> steps{4, 5, 6};
  EXPECT_EQ(probe::grad_first_suspicious_step(steps, Rows{{"w", {0.96, 0.96, 0.96}}}), 4);
  EXPECT_EQ(probe::grad_first_suspicious_step(steps, Rows{{"w", {0.97, 0.97, 0.97}}}), std::nullopt);
  EXPECT_EQ(probe::grad_first_suspicious_step(steps, Rows{{"w", {1.0, 0.98, 0.94}}}), 6);
  EXPECT_EQ(probe::grad_first_suspicious_step(steps, Rows{{"w", {1.0, 1.0, 1.0}}, {"b", {1.0, 0.9, 0.9}}}),
            5);
}

TEST(GradCompare, NoMatchedRankIsAnError) {
  ScratchDir out("grad-compare");
  EXPECT_THROW(probe::grad_compare({kData + "a/rank0", kData + "b/rank0", out.path().string()}),
               probe::Error);
  // The directories of another tool (a msprobe dump's step directory is the likely one) are named with what a
  // grad_probe dump holds, not only msprobe's "please dump data in same configuration".
  const std::string dumps = std::string(PROBE_TEST_DATA_DIR) + "/dump_compare/real/";
  try {
    probe::grad_compare({dumps + "npu", dumps + "bench", out.path().string()});
    ADD_FAILURE() << "no error";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.kind(), probe::ErrorKind::InvalidArgument);
    EXPECT_EQ(e.file(), dumps + "npu");
    EXPECT_NE(e.message().find("(both directories must hold rank{R}/ directories of a grad_probe dump, with "
                               "grad_summary_{step}.csv and step{step}/; compared with " +
                               dumps + "bench)"),
              std::string::npos)
        << e.what();
  }
  try {
    probe::grad_compare({dumps + "npu/step0", dumps + "bench/step0", out.path().string()});
    ADD_FAILURE() << "no error";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.file(), dumps + "npu/step0/rank0");
    EXPECT_NE(e.message().find("grad_probe level L1 or L2; compared with " + dumps + "bench/step0/rank0)"),
              std::string::npos)
        << e.what();
  }
}

TEST(GradCompare, Cli) {
  ScratchDir out("grad-compare");
  const auto r = run_cli("grad_compare '" + kData + "a' '" + kData + "b' -o '" + out.path().string() + "'");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("rank 0: 6 steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first suspicious step: 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first suspicious step: none"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(out.path() / "rank0" / "similarities.csv"),
            slurp(kData + "expected/rank0/similarities.csv"));
  EXPECT_EQ(run_cli("grad_compare --help").code, 0);
  EXPECT_NE(run_cli("grad_compare '" + kData + "a'").code, 0);
}

}  // namespace
