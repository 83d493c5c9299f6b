// probe::mpi's group over MPI_COMM_WORLD, run by CTest under `mpirun -n 1/2/3`: every rank runs every test in
// the same order (the calls are collective).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>

#include "probe/mpi.h"

namespace {

probe::Distributed* world = nullptr;

TEST(MpiGroup, RankAndSizeMatchMpi) {
  int rank = -1, size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT_EQ(world->rank(), rank);
  EXPECT_EQ(world->size(), size);
  EXPECT_TRUE(probe::mpi::launched_by_mpi());
}

TEST(MpiGroup, BroadcastCopiesTheRootsBytes) {
  std::string bytes = world->rank() == 0 ? std::string("timestamp 20260101000000\0tail", 29) : "other";
  world->broadcast(bytes);
  EXPECT_EQ(bytes, std::string("timestamp 20260101000000\0tail", 29));
  // An empty buffer from the root empties every rank's.
  std::string empty = world->rank() == 0 ? "" : "not empty";
  world->broadcast(empty);
  EXPECT_EQ(empty, "");
}

TEST(MpiGroup, GatherBringsEveryRanksBytesToTheRootInRankOrder) {
  // Sizes differ per rank (rank 1 sends nothing), as rows of a round do.
  const std::string mine = world->rank() == 1 ? ""
                                              : std::string(static_cast<std::size_t>(world->rank() + 1) * 3,
                                                            'a' + static_cast<char>(world->rank()));
  const auto all = world->gather(mine);
  if (world->rank() != 0) {
    EXPECT_TRUE(all.empty());
    return;
  }
  ASSERT_EQ(all.size(), static_cast<std::size_t>(world->size()));
  for (int r = 0; r < world->size(); ++r) {
    const std::string expect =
        r == 1 ? "" : std::string(static_cast<std::size_t>(r + 1) * 3, 'a' + static_cast<char>(r));
    EXPECT_EQ(all[static_cast<std::size_t>(r)], expect) << "rank " << r;
  }
}

TEST(MpiGroup, CounterHandsOutEveryValueOnceAcrossRanks) {
  for (int round = 0; round < 3; ++round) {
    world->reset_counter();
    std::string claimed;
    for (;;) {
      const std::int64_t v = world->fetch_add(1);
      if (v >= 50) break;
      claimed += std::to_string(v) + ",";
    }
    const auto all = world->gather(claimed);
    if (world->rank() != 0) continue;
    std::multiset<int> seen;
    for (const auto& s : all) {
      std::size_t at = 0;
      while (at < s.size()) {
        const std::size_t comma = s.find(',', at);
        seen.insert(std::stoi(s.substr(at, comma - at)));
        at = comma + 1;
      }
    }
    ASSERT_EQ(seen.size(), 50u) << "round " << round;
    int expect = 0;
    for (int v : seen) EXPECT_EQ(v, expect++);
  }
}

TEST(MpiGroup, WorkQueueRunsEveryItemOnceHeaviestFirst) {
  std::vector<double> w(40);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>((i * 7) % 13);
  const auto mine = probe::run_work_queue(*world, w, [](std::size_t) {});
  EXPECT_TRUE(
      std::is_sorted(mine.begin(), mine.end(), [&](std::size_t a, std::size_t b) { return w[a] > w[b]; }));
  std::string text;
  for (std::size_t i : mine) text += std::to_string(i) + ",";
  const auto all = world->gather(text);
  if (world->rank() != 0) return;
  std::vector<int> count(w.size());
  for (const auto& s : all)
    for (std::size_t at = 0; at < s.size();) {
      const std::size_t comma = s.find(',', at);
      count[static_cast<std::size_t>(std::stoi(s.substr(at, comma - at)))]++;
      at = comma + 1;
    }
  for (std::size_t i = 0; i < w.size(); ++i) EXPECT_EQ(count[i], 1) << "item " << i;
}

TEST(MpiGroup, GroupOverADuplicateCommunicatorIsIndependent) {
  // An embedder's own communicator: the group keeps its own counter.
  auto own = probe::mpi::group_over(MPI_COMM_WORLD);
  own->reset_counter();
  world->reset_counter();
  EXPECT_GE(own->fetch_add(1), 0);
  own->barrier();
  world->barrier();
  if (world->rank() == 0) {
    // Every rank took one from `own`; world's counter is untouched.
    EXPECT_EQ(own->fetch_add(0), world->size());
    EXPECT_EQ(world->fetch_add(0), 0);
  }
  world->barrier();
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  probe::mpi::Session session(&argc, &argv);
  world = &session.world();
  const int failed = RUN_ALL_TESTS();
  // A failure on any rank fails the job: every rank returns the worst result.
  int any = failed;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}
