// File mappings large enough that populating and releasing their pages is split over the thread pool.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "IoTestUtil.h"
#include "common/Slurp.h"
#include "probe/storage.h"

namespace probe {
namespace {

// 40 MiB and a bit: five 8 MiB pieces and a partial one.
constexpr std::size_t kSize = (std::size_t{40} << 20) + 12345;

std::string pattern() {
  std::string bytes(kSize, '\0');
  for (std::size_t i = 0; i < kSize; ++i) bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
  return bytes;
}

TEST(MappedStorage, ALargeMappingReadsTheFileAndWritesNeverReachIt) {
  test::TempDir dir;
  const std::string want = pattern();
  const std::string path = dir.file("big.bin", want);
  for (int round = 0; round < 2; ++round) {  // the second mapping reads what the first one released
    SCOPED_TRACE(round);
    auto storage = map_file(path);
    ASSERT_TRUE(storage->is_mapped());
    ASSERT_EQ(storage->size(), kSize);
    EXPECT_EQ(std::memcmp(storage->data(), want.data(), kSize), 0);
    // Copy-on-write: dirty a byte in every piece, including the partial last one.
    for (std::size_t at = 0; at < kSize; at += std::size_t{3} << 20) storage->data()[at] ^= std::byte{0xFF};
    storage->data()[kSize - 1] ^= std::byte{0xFF};
    EXPECT_NE(std::memcmp(storage->data(), want.data(), kSize), 0);
  }
  EXPECT_EQ(testing::slurp(path), want) << "a write through a mapping reached the file";
}

TEST(MappedStorage, SeveralLargeMappingsOfOneFileLiveAndGoTogether) {
  test::TempDir dir;
  const std::string want = pattern();
  const std::string path = dir.file("big.bin", want);
  std::vector<std::shared_ptr<Storage>> live;
  for (int i = 0; i < 6; ++i) live.push_back(map_file(path));
  std::uint64_t sum = 0;
  for (auto& s : live)
    for (std::size_t at = 0; at < kSize; at += 4096) sum += static_cast<std::uint8_t>(s->data()[at]);
  live.clear();
  std::uint64_t expected = 0;
  for (std::size_t at = 0; at < kSize; at += 4096) expected += static_cast<std::uint8_t>(want[at]);
  EXPECT_EQ(sum, 6 * expected);
  EXPECT_EQ(testing::slurp(path), want);
}

}  // namespace
}  // namespace probe
