// The one worker pool: slot order, completion order, the three bounds, stop and failure, as run_ut's engine,
// RunUtStream, OnlineChecker and parallel_for rely on them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/WorkerPool.h"

namespace {

using probe::detail::WorkerPool;

TEST(WorkerPool, SlotOrderDeliversInReserveOrderFromWorkers) {
  WorkerPool::Options o;
  o.threads = 4;
  o.order = WorkerPool::Order::Slot;
  o.max_outstanding = 6;
  WorkerPool pool(o);
  std::vector<int> seen;
  std::atomic<std::size_t> outstanding_max{0};
  for (int i = 0; i < 100; ++i) {
    auto slot = pool.reserve(0, true);
    ASSERT_TRUE(slot);
    EXPECT_EQ(slot->index(), static_cast<std::size_t>(i));
    pool.commit(std::move(*slot), [i, &seen]() -> WorkerPool::Delivery {
      std::this_thread::sleep_for(std::chrono::microseconds((i * 37) % 5 * 100));
      return [i, &seen] { seen.push_back(i); };  // deliveries run one at a time
    });
  }
  EXPECT_EQ(pool.finish(), 0u);
  ASSERT_EQ(seen.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)], i);
}

TEST(WorkerPool, AnEmptyJobKeepsItsTurn) {
  WorkerPool::Options o;
  o.threads = 2;
  o.order = WorkerPool::Order::Slot;
  WorkerPool pool(o);
  std::vector<int> seen;
  for (int i = 0; i < 20; ++i) {
    auto slot = pool.reserve(0, true);
    if (i % 3 == 0) {
      pool.commit(std::move(*slot), {});
      continue;
    }
    pool.commit(std::move(*slot),
                [i, &seen]() -> WorkerPool::Delivery { return [i, &seen] { seen.push_back(i); }; });
  }
  pool.finish();
  std::vector<int> want;
  for (int i = 0; i < 20; ++i)
    if (i % 3 != 0) want.push_back(i);
  EXPECT_EQ(seen, want);
}

TEST(WorkerPool, FullRefusesWithoutWaitAndALoneLargeJobFits) {
  WorkerPool::Options o;
  o.threads = 1;
  o.max_bytes = 100;
  o.max_outstanding = 3;
  WorkerPool pool(o);
  auto big = pool.reserve(1000, false);  // nothing held: one job is always taken
  ASSERT_TRUE(big);
  EXPECT_FALSE(pool.reserve(1, false));  // 1000 + 1 > 100
  big.reset();                           // given back unused
  pool.wait_idle();
  auto a = pool.reserve(60, false);
  ASSERT_TRUE(a);
  EXPECT_FALSE(pool.reserve(50, false));
  auto b = pool.reserve(40, false);
  ASSERT_TRUE(b);
  auto c = pool.reserve(0, false);
  ASSERT_TRUE(c);
  EXPECT_FALSE(pool.reserve(0, false));  // three outstanding
  EXPECT_EQ(pool.peak_bytes(), 1000u);
}

TEST(WorkerPool, MaxWaitingBoundsOnlyJobsNotYetRunning) {
  WorkerPool::Options o;
  o.threads = 1;
  o.max_waiting = 1;
  WorkerPool pool(o);
  std::atomic<bool> release{false}, running{false};
  auto s1 = pool.reserve(0, false);
  ASSERT_TRUE(s1);
  pool.commit(std::move(*s1), [&]() -> WorkerPool::Delivery {
    running = true;
    while (!release) std::this_thread::yield();
    return {};
  });
  while (!running) std::this_thread::yield();
  auto s2 = pool.reserve(0, false);  // the first one runs: one may wait
  ASSERT_TRUE(s2);
  EXPECT_FALSE(pool.reserve(0, false));
  s2.reset();
  release = true;
  EXPECT_EQ(pool.finish(), 0u);
}

TEST(WorkerPool, CallerDeliversOnItsThreadAndGetsTheFailure) {
  WorkerPool::Options o;
  o.threads = 3;
  o.order = WorkerPool::Order::Slot;
  o.caller_delivers = true;
  WorkerPool pool(o);
  const auto caller = std::this_thread::get_id();
  std::vector<std::thread::id> where;
  for (int i = 0; i < 10; ++i) {
    auto slot = pool.reserve(0, true);
    pool.commit(std::move(*slot), [i, &where]() -> WorkerPool::Delivery {
      if (i == 7) throw std::runtime_error("job 7");
      return [&where] { where.push_back(std::this_thread::get_id()); };
    });
  }
  EXPECT_THROW(
      {
        while (pool.deliver_next()) {
        }
      },
      std::runtime_error);
  EXPECT_LE(where.size(), 7u);
  for (const auto& id : where) EXPECT_EQ(id, caller);
  EXPECT_TRUE(pool.failure());
  EXPECT_FALSE(pool.open());
}

TEST(WorkerPool, StopDropsWhatIsNotDeliveredAndRefusesSlots) {
  WorkerPool::Options o;
  o.threads = 1;
  o.order = WorkerPool::Order::Slot;
  WorkerPool pool(o);
  std::atomic<bool> release{false};
  std::atomic<int> delivered{0};
  for (int i = 0; i < 5; ++i) {
    auto slot = pool.reserve(0, true);
    pool.commit(std::move(*slot), [&]() -> WorkerPool::Delivery {
      while (!release) std::this_thread::yield();
      return [&] { ++delivered; };
    });
  }
  pool.stop();
  release = true;
  EXPECT_FALSE(pool.reserve(0, true));
  EXPECT_EQ(pool.finish(), 5u);
  EXPECT_EQ(delivered.load(), 0);
}

TEST(WorkerPool, NoThreadsRunsEachJobOnTheCommittingThread) {
  WorkerPool pool(WorkerPool::Options{0});
  const auto caller = std::this_thread::get_id();
  std::thread::id ran;
  auto slot = pool.reserve(0, true);
  pool.commit(std::move(*slot), [&]() -> WorkerPool::Delivery {
    ran = std::this_thread::get_id();
    return {};
  });
  EXPECT_EQ(ran, caller);
  EXPECT_EQ(pool.finish(), 0u);
}

}  // namespace
