// parallel_for hands ranges out on demand; these tests pin down what callers rely on: every index is
// visited exactly once, slot ids stay below parallel_chunks(), and an exception reaches the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "probe/parallel.h"
#include "support/ThreadPool.h"

namespace {

class ThreadPoolTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = probe::num_threads(); }
  void TearDown() override { probe::set_num_threads(saved_); }
  int saved_ = 1;
};

TEST_F(ThreadPoolTest, EveryIndexOnceAndSlotsInRange) {
  for (int threads : {1, 2, 4}) {
    probe::set_num_threads(threads);
    for (std::int64_t n : {0, 1, 7, 100, 1000, 100003}) {
      for (std::int64_t grain : {1, 3, 64}) {
        std::vector<std::atomic<int>> seen(static_cast<std::size_t>(n));
        const int slots = probe::detail::parallel_chunks(n, grain);
        std::atomic<bool> bad_slot{false}, short_range{false}, long_range{false};
        probe::detail::parallel_for(5, 5 + n, grain, [&](std::int64_t b, std::int64_t e, int slot) {
          if (slot < 0 || slot >= slots) bad_slot = true;
          if (e - b < grain && e != 5 + n) short_range = true;
          if (slots > 1 && e - b > probe::detail::kMaxRangeGrains * grain) long_range = true;
          for (std::int64_t i = b; i < e; ++i) seen[static_cast<std::size_t>(i - 5)]++;
        });
        for (std::int64_t i = 0; i < n; ++i)
          ASSERT_EQ(seen[static_cast<std::size_t>(i)].load(), 1)
              << "index " << i << " n=" << n << " grain=" << grain << " threads=" << threads;
        EXPECT_FALSE(bad_slot.load());
        EXPECT_FALSE(short_range.load()) << "only the last range may be shorter than the grain";
        EXPECT_FALSE(long_range.load());
      }
    }
  }
}

TEST_F(ThreadPoolTest, UnevenWorkStillCoversEverything) {
  // One expensive range must not stop the other thread from taking the rest.
  probe::set_num_threads(2);
  std::atomic<std::int64_t> sum{0};
  probe::detail::parallel_for(0, 4096, 1, [&](std::int64_t b, std::int64_t e, int) {
    for (std::int64_t i = b; i < e; ++i) {
      volatile double x = 0;
      for (int k = 0; k < (i == 0 ? 200000 : 10); ++k) x = x + 1.0;
      sum += i;
    }
  });
  EXPECT_EQ(sum.load(), 4096 * 4095 / 2);
}

TEST_F(ThreadPoolTest, FirstExceptionIsRethrown) {
  probe::set_num_threads(2);
  EXPECT_THROW(probe::detail::parallel_for(0, 1000, 1,
                                           [&](std::int64_t b, std::int64_t, int) {
                                             if (b >= 500) throw std::runtime_error("range failed");
                                           }),
               std::runtime_error);
  // The pool is still usable afterwards.
  std::atomic<int> count{0};
  probe::detail::parallel_for(0, 100, 1, [&](std::int64_t b, std::int64_t e, int) { count += int(e - b); });
  EXPECT_EQ(count.load(), 100);
}

}  // namespace
