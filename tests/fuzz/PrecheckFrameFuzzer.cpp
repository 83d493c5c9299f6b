// libFuzzer target: online pre-check frames (probe::online::decode_frame).
// Run: probe_fuzz_precheckframe -max_total_time=60 corpus/   (seeds: tests/data/precheck_frame/*.frame)
// Each input is decoded twice: as is, and with its length and CRC fields repaired, because a random
// mutation almost never keeps the CRC right and the header and blob checks behind it would go unexplored.
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "probe/precheck_frame.h"

namespace {

std::uint64_t decode(const std::vector<std::byte>& bytes) {
  probe::online::FrameLimits limits;
  limits.max_frame_bytes = 1 << 20;
  limits.max_tensors = 64;
  limits.max_header_bytes = 1 << 16;
  limits.max_json_depth = 32;
  std::uint64_t sum = 0;
  try {
    const auto frame = probe::online::decode_frame(bytes, limits, "fuzz frame");
    // Reads every element, so that a tensor pointing outside its storage is caught by ASan.
    for (const auto& t : frame.tensors)
      for (std::int64_t i = 0; i < t.numel(); ++i) sum += static_cast<std::uint64_t>(t.at(i) != 0);
  } catch (const probe::Error&) {
    // Rejecting bad input with probe::Error is the expected outcome.
  }
  return sum;
}

void put_le(std::vector<std::byte>& b, std::size_t at, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[at + i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::byte> bytes(size);
  if (size) std::memcpy(bytes.data(), data, size);
  volatile std::uint64_t sink = decode(bytes);
  if (size >= probe::online::kFrameOverhead) {
    put_le(bytes, 8, size, 8);
    const auto crc = crc32_z(0, reinterpret_cast<const Bytef*>(bytes.data()), size - 4);
    put_le(bytes, size - 4, crc, 4);
    sink = sink + decode(bytes);
  }
  (void)sink;
  return 0;
}
