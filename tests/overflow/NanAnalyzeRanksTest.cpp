// nan_analyze across the ranks of a group, without MPI (ranks are threads, ThreadGroup.h): the rank
// directories are parsed by the ranks, heaviest first, and rank 0 searches and writes. Every rank count
// returns what one process returns and rank 0 writes the same bytes; an error is the one one process
// raises, thrown on every rank.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "common/ThreadGroup.h"
#include "probe/error.h"
#include "probe/nan_analyze.h"

namespace {

namespace fs = std::filesystem;
using probe::testing::ScratchDir;
using probe::testing::slurp;
using probe::testing::ThreadJob;

const fs::path kData = fs::path(PROBE_TEST_DATA_DIR) / "nan_analyze";

probe::NanAnalyzeOptions options(const fs::path& step, const fs::path& out, probe::Profile profile) {
  probe::NanAnalyzeOptions o;
  o.input_path = step.string();
  o.output_path = out.string();
  o.profile = profile;
  return o;
}

// What a result says, without the file name (each run writes into its own directory, at its own time).
std::string describe(const probe::NanAnalyzeResult& r, const fs::path& out) {
  std::string s = r.phase + "\n";
  for (const auto& a : r.anomalies)
    s += std::to_string(a.rank) + " " + a.op_name + " " + std::to_string(a.layer) + " " +
         std::to_string(a.sub_layer) + "\n";
  for (const std::string& line : r.log) {
    std::string l = line;
    // The file is named by the clock: the log names it as the result does.
    if (const auto at = l.find(out.string()); !r.file.empty() && at != std::string::npos) {
      EXPECT_EQ(l.substr(at), r.file);
      l.replace(at, std::string::npos, "FILE");
    }
    s += l + "\n";
  }
  return s;
}

struct RankResults {
  std::vector<probe::NanAnalyzeResult> results;  // by rank
  std::vector<std::string> errors;               // by rank: kind and message, "" when it returned
};

RankResults run_on_threads(int ranks, const probe::NanAnalyzeOptions& o) {
  RankResults got;
  got.results.resize(static_cast<std::size_t>(ranks));
  got.errors.resize(static_cast<std::size_t>(ranks));
  ThreadJob job(ranks);
  job.run([&](probe::Distributed& group) {
    probe::NanAnalyzeOptions mine = o;
    mine.group = &group;
    const auto r = static_cast<std::size_t>(group.rank());
    try {
      got.results[r] = probe::nan_analyze(mine);
    } catch (const probe::Error& e) {
      got.errors[r] = std::string(probe::to_string(e.kind())) + ": " + e.what();
    }
  });
  return got;
}

std::string one_process_error(const probe::NanAnalyzeOptions& o) {
  try {
    probe::nan_analyze(o);
  } catch (const probe::Error& e) {
    return std::string(probe::to_string(e.kind())) + ": " + e.what();
  }
  return "";
}

}  // namespace

TEST(NanAnalyzeRanks, EveryRankCountWritesTheFileOfOneProcess) {
  for (const char* name : {"before_comm", "during_comm", "during_comm_asymmetric", "after_comm", "data_nan",
                           "p2p", "clean", "during_comm_3ranks"})
    for (probe::Profile profile : {probe::Profile::MsProbe, probe::Profile::Probe}) {
      SCOPED_TRACE(std::string(name) + (profile == probe::Profile::MsProbe ? " msprobe" : " probe"));
      const fs::path step = kData / name / "step0";
      const ScratchDir scratch("nan_ranks");
      const fs::path one_out = scratch.path() / "one";
      const probe::NanAnalyzeResult one = probe::nan_analyze(options(step, one_out, profile));
      for (int ranks : {1, 2, 3}) {
        SCOPED_TRACE(std::to_string(ranks) + " ranks");
        const fs::path out = scratch.path() / ("ranks" + std::to_string(ranks));
        const RankResults got = run_on_threads(ranks, options(step, out, profile));
        for (int r = 0; r < ranks; ++r) {
          const auto i = static_cast<std::size_t>(r);
          EXPECT_EQ(got.errors[i], "") << "rank " << r;
          EXPECT_EQ(describe(got.results[i], out), describe(one, one_out)) << "rank " << r;
          EXPECT_EQ(got.results[i].file, got.results[0].file) << "rank " << r;
        }
        if (one.file.empty()) {
          EXPECT_FALSE(fs::exists(out));
          continue;
        }
        // One file, written once (by rank 0), byte for byte that of one process.
        std::vector<fs::path> files;
        for (const auto& e : fs::directory_iterator(out)) files.push_back(e.path());
        ASSERT_EQ(files.size(), 1u);
        EXPECT_EQ(files[0].string(), got.results[0].file);
        EXPECT_EQ(slurp(got.results[0].file), slurp(one.file));
      }
    }
}

TEST(NanAnalyzeRanks, ThreeRankStepNamesRankOnesLog) {
  const ScratchDir scratch("nan_ranks3");
  const RankResults got = run_on_threads(
      2, options(kData / "during_comm_3ranks" / "step0", scratch.path(), probe::Profile::Probe));
  ASSERT_EQ(got.results[1].anomalies.size(), 1u);
  EXPECT_EQ(got.results[1].anomalies[0].rank, 1);
  EXPECT_EQ(got.results[1].anomalies[0].op_name, "Torch.log.0.forward");
  // make_overflow_fixtures.py: after all_reduce.0 (layer 1) rank 1 runs Tensor.__mul__ then Torch.log.
  EXPECT_EQ(got.results[1].anomalies[0].layer, 1);
  EXPECT_EQ(got.results[1].anomalies[0].sub_layer, 1);
  EXPECT_EQ(got.results[1].phase, "communication");
  EXPECT_EQ(slurp(got.results[0].file),
            slurp((kData / "during_comm_3ranks" / "expected_analyze.json").string()));
}

// Errors: the first rank directory's in rank order (as one process reads them in turn), whichever rank of the
// group parsed it, thrown on every rank; construct.json and stack.json fail only for a reported entry.
TEST(NanAnalyzeRanks, ErrorsAreThoseOfOneProcessOnEveryRank) {
  const ScratchDir scratch("nan_ranks_errors");
  const fs::path step = scratch.path() / "step0";
  fs::copy(kData / "during_comm_3ranks" / "step0", step, fs::copy_options::recursive);
  auto expect_same = [&](const std::string& needle) {
    const probe::NanAnalyzeOptions o = options(step, scratch.path() / "out", probe::Profile::Probe);
    const std::string want = one_process_error(o);
    if (needle.empty()) {
      EXPECT_EQ(want, "");
    } else {
      EXPECT_NE(want.find(needle), std::string::npos) << want;
    }
    for (int ranks : {2, 3}) {
      const RankResults got = run_on_threads(ranks, o);
      for (int r = 0; r < ranks; ++r)
        EXPECT_EQ(got.errors[static_cast<std::size_t>(r)], want) << ranks << " ranks, rank " << r;
    }
  };
  // Rank 0's construct.json and stack.json are unreadable, but rank 0's candidate (its all_reduce.1) is not
  // reported: no error, as in one process.
  std::ofstream(step / "rank0" / "construct.json") << "{";
  std::ofstream(step / "rank0" / "stack.json") << "[";
  expect_same("");
  // Rank 1's entry is reported: its stack.json's error.
  std::ofstream(step / "rank1" / "stack.json") << R"({"0": "not a list"})";
  expect_same("the values of stack.json must be lists");
  // Rank 2 (the heaviest, parsed first) lacks stack.json and rank 1's dump.json is malformed: rank 1's error.
  fs::remove(step / "rank2" / "stack.json");
  std::ofstream(step / "rank1" / "dump.json") << R"({"data": {)";
  expect_same("rank1/dump.json");
  // Rank 1 repaired: rank 2's missing file.
  fs::copy_file(kData / "during_comm_3ranks" / "step0" / "rank1" / "dump.json", step / "rank1" / "dump.json",
                fs::copy_options::overwrite_existing);
  expect_same("rank2/stack.json");
}
