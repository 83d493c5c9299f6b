// The one-process group and the cost-ordered work queue, without MPI: the queue's order, where items land
// (balance), and that ranks sharing one counter run every item exactly once.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <numeric>
#include <thread>

#include "probe/distributed.h"
#include "probe/error.h"

namespace {

TEST(Distributed, SingleProcessIsRankZeroOfOne) {
  probe::Distributed& g = probe::single_process();
  EXPECT_EQ(g.rank(), 0);
  EXPECT_EQ(g.size(), 1);
  std::string bytes = "abc";
  g.broadcast(bytes);
  EXPECT_EQ(bytes, "abc");
  EXPECT_EQ(g.gather("rows"), std::vector<std::string>{"rows"});
  EXPECT_THROW(g.gather("rows", 1), probe::Error);
  g.reset_counter();
  EXPECT_EQ(g.fetch_add(2), 0);
  EXPECT_EQ(g.fetch_add(1), 2);
  g.reset_counter();
  EXPECT_EQ(g.fetch_add(1), 0);
}

TEST(Distributed, LargestFirstOrdersByWeightThenIndex) {
  const std::vector<double> w = {3, 10, 3, 0, 7, 10};
  EXPECT_EQ(probe::largest_first(w), (std::vector<std::size_t>{1, 5, 4, 0, 2, 3}));
  EXPECT_TRUE(probe::largest_first(std::vector<double>{}).empty());
}

TEST(Distributed, QueueLandsTheHugeItemFirstAndBalances) {
  // One item as heavy as all the others together (a 4 GB matmul among small elementwise APIs): in dump order
  // it would be claimed last and run alone at the end; heaviest first, it runs while the rest spread.
  std::vector<double> w(64, 1.0);
  w[60] = 64.0;
  const int workers = 4;
  std::vector<std::size_t> dump_order(w.size());
  std::iota(dump_order.begin(), dump_order.end(), std::size_t{0});
  const auto in_order = probe::simulate_queue(w, dump_order, workers);
  const auto heavy_first = probe::simulate_queue(w, probe::largest_first(w), workers);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  auto makespan = [](const probe::WorkPlan& p) { return *std::max_element(p.load.begin(), p.load.end()); };
  // Dump order: the 60 small items before it leave every worker at 15, then the heavy one runs from 15 to 79;
  // heaviest first it ends at 64, the lower bound max(total / workers, max weight).
  EXPECT_DOUBLE_EQ(makespan(in_order), 79.0);
  EXPECT_DOUBLE_EQ(makespan(heavy_first), std::max(total / workers, 64.0));
  // Every item lands on exactly one worker and the loads add up.
  EXPECT_EQ(std::count(heavy_first.worker_of.begin(), heavy_first.worker_of.end(), -1), 0);
  EXPECT_DOUBLE_EQ(std::accumulate(heavy_first.load.begin(), heavy_first.load.end(), 0.0), total);
}

TEST(Distributed, QueueBalanceBoundOnSkewedWeights) {
  // Graham's bound for heaviest-first list scheduling: makespan <= (4/3 - 1/(3m)) * optimum, and the optimum
  // is at least max(total / m, max weight). Weights spread over five orders of magnitude, as API costs are.
  std::vector<double> w;
  std::uint64_t x = 12345;
  for (int i = 0; i < 500; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    w.push_back(std::pow(10.0, static_cast<double>(x >> 40) / static_cast<double>(1ULL << 24) * 5.0));
  }
  for (int m : {2, 3, 8, 64}) {
    const auto plan = probe::simulate_queue(w, probe::largest_first(w), m);
    const double total = std::accumulate(w.begin(), w.end(), 0.0);
    const double lower = std::max(total / m, *std::max_element(w.begin(), w.end()));
    const double makespan = *std::max_element(plan.load.begin(), plan.load.end());
    EXPECT_LE(makespan, (4.0 / 3.0 - 1.0 / (3.0 * m)) * lower) << m << " workers";
  }
}

// Ranks of a pretend job: one shared counter, each rank in its own thread.
class SharedCounterGroup final : public probe::Distributed {
 public:
  SharedCounterGroup(int rank, int size, std::atomic<std::int64_t>& counter)
      : rank_(rank), size_(size), counter_(counter) {}
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  void broadcast(std::string&, int) override {}
  std::vector<std::string> gather(const std::string& b, int) override { return {b}; }
  void barrier() override {}
  void reset_counter() override {}  // the test sets the counter to 0 before the ranks start
  std::int64_t fetch_add(std::int64_t n) override { return counter_.fetch_add(n); }
  [[noreturn]] void abort(int) noexcept override { std::terminate(); }

 private:
  int rank_, size_;
  std::atomic<std::int64_t>& counter_;
};

TEST(Distributed, WorkQueueRunsEveryItemOnceAcrossRanks) {
  std::vector<double> w(97);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>((i * 37) % 11);
  std::atomic<std::int64_t> counter{0};
  std::vector<std::atomic<int>> runs(w.size());
  std::vector<std::vector<std::size_t>> mine(3);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 3; ++r)
    ranks.emplace_back([&, r] {
      SharedCounterGroup g(r, 3, counter);
      mine[static_cast<std::size_t>(r)] = probe::run_work_queue(g, w, [&](std::size_t i) { runs[i]++; });
    });
  for (auto& t : ranks) t.join();
  for (std::size_t i = 0; i < w.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << "item " << i;
  // Each rank claimed its items heaviest first.
  for (const auto& m : mine)
    EXPECT_TRUE(
        std::is_sorted(m.begin(), m.end(), [&](std::size_t a, std::size_t b) { return w[a] > w[b]; }));
}

TEST(Distributed, WorkQueueOnOneProcessRunsHeaviestFirst) {
  const std::vector<double> w = {1, 5, 2};
  std::vector<std::size_t> seen;
  const auto mine =
      probe::run_work_queue(probe::single_process(), w, [&](std::size_t i) { seen.push_back(i); });
  EXPECT_EQ(seen, (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_EQ(mine, seen);
}

}  // namespace

namespace {

TEST(Distributed, WorkQueueWithThreadsPerRankRunsEveryItemOnce) {
  std::vector<double> w(200);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>((i * 13) % 17);
  std::atomic<std::int64_t> counter{0};
  std::vector<std::atomic<int>> runs(w.size());
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      SharedCounterGroup g(r, 2, counter);
      probe::run_work_queue(
          g, w, [&](std::size_t i) { runs[i]++; }, 3);
    });
  for (auto& t : ranks) t.join();
  for (std::size_t i = 0; i < w.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << "item " << i;
}

TEST(Distributed, WorkQueueRethrowsAndStopsClaimingOnThisRank) {
  const std::vector<double> w(10, 1.0);
  int ran = 0;
  EXPECT_THROW(probe::run_work_queue(probe::single_process(), w,
                                     [&](std::size_t) {
                                       if (++ran == 3) throw probe::Error(probe::ErrorKind::Io, "disk gone");
                                     }),
               probe::Error);
  EXPECT_EQ(ran, 3);
}

}  // namespace
