// Tensor-sized blocks: alignment, reuse of freed 2 MiB blocks (issue 13: no fresh zeroed pages per buffer),
// blocks in use never shared, and concurrent use from several threads.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "support/LargeAlloc.h"

namespace {

using probe::detail::allocate_tensor_bytes;
using probe::detail::free_tensor_bytes;

constexpr std::size_t kMiB = std::size_t{1} << 20;

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

TEST(LargeAlloc, SmallBlocksAre64ByteAlignedAndLargeOnes2MiB) {
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{100}, kMiB, 2 * kMiB - 1}) {
    void* p = allocate_tensor_bytes(bytes);
    EXPECT_EQ(addr(p) % 64, 0u) << bytes;
    std::memset(p, 0xAB, bytes);
    free_tensor_bytes(p);
  }
  for (std::size_t bytes : {2 * kMiB, 2 * kMiB + 1, 7 * kMiB + 3}) {
    void* p = allocate_tensor_bytes(bytes);
    EXPECT_EQ(addr(p) % (2 * kMiB), 0u) << bytes;
    std::memset(p, 0xCD, bytes);  // every byte is usable
    free_tensor_bytes(p);
  }
  free_tensor_bytes(nullptr);
}

TEST(LargeAlloc, AFreedLargeBlockIsReusedWithItsPages) {
  auto* p = static_cast<unsigned char*>(allocate_tensor_bytes(6 * kMiB));
  std::memset(p, 0x5A, 6 * kMiB);
  free_tensor_bytes(p);
  // Same size, and a slightly smaller one (rounded to the same 2 MiB multiple): the cached block comes back,
  // pages and contents intact (not fresh zero pages from the kernel).
  auto* q = static_cast<unsigned char*>(allocate_tensor_bytes(6 * kMiB - 12345));
  EXPECT_EQ(q, p);
  EXPECT_EQ(q[0], 0x5A);
  EXPECT_EQ(q[6 * kMiB - 12346], 0x5A);
  free_tensor_bytes(q);
  // Far smaller requests do not take a big block (at most twice the request).
  void* small = allocate_tensor_bytes(2 * kMiB);
  EXPECT_NE(small, p);
  free_tensor_bytes(small);
}

TEST(LargeAlloc, BlocksInUseNeverOverlap) {
  std::vector<std::pair<std::uintptr_t, std::size_t>> live;
  std::vector<void*> blocks;
  for (int round = 0; round < 3; ++round) {
    for (std::size_t mib : {2, 4, 4, 6, 2, 10, 4}) {
      void* p = allocate_tensor_bytes(mib * kMiB);
      for (const auto& [a, n] : live) EXPECT_TRUE(addr(p) + mib * kMiB <= a || a + n <= addr(p));
      live.emplace_back(addr(p), mib * kMiB);
      blocks.push_back(p);
    }
    // Free every other block: later rounds reuse them while the rest stay in use.
    for (std::size_t i = 0; i < blocks.size(); i += 2) {
      if (!blocks[i]) continue;
      free_tensor_bytes(blocks[i]);
      blocks[i] = nullptr;
      live[i] = {0, 0};
    }
  }
  for (void* p : blocks)
    if (p) free_tensor_bytes(p);
}

TEST(LargeAlloc, BlocksBeyondTheCacheAndManyFreesStayCorrect) {
  // 600 MiB is more than the cache keeps: it is unmapped on free; then more freed blocks than fit.
  void* big = allocate_tensor_bytes(600 * kMiB);
  static_cast<unsigned char*>(big)[600 * kMiB - 1] = 1;
  free_tensor_bytes(big);
  std::vector<void*> blocks;
  for (int i = 0; i < 40; ++i)
    blocks.push_back(allocate_tensor_bytes(static_cast<std::size_t>(8 + i % 5) * kMiB));
  for (void* p : blocks) free_tensor_bytes(p);
  void* again = allocate_tensor_bytes(8 * kMiB);
  std::memset(again, 0, 8 * kMiB);
  free_tensor_bytes(again);
}

TEST(LargeAlloc, ConcurrentAllocateAndFree) {
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < 200; ++i) {
        const std::size_t bytes = static_cast<std::size_t>(2 + (i + t) % 3) * kMiB;
        auto* p = static_cast<unsigned char*>(allocate_tensor_bytes(bytes));
        const auto mark = static_cast<unsigned char>(t * 50 + i % 50);
        p[0] = mark;
        p[bytes - 1] = mark;
        std::this_thread::yield();
        if (p[0] != mark || p[bytes - 1] != mark) ++failures[static_cast<std::size_t>(t)];
        free_tensor_bytes(p);
      }
    });
  for (auto& th : threads) th.join();
  for (int f : failures) EXPECT_EQ(f, 0);
}

}  // namespace
