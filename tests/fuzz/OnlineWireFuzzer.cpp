// libFuzzer target: msprobe's online pre-check TCP framing (probe::online::MessageDecoder, AckDecoder).
// Run: probe_fuzz_onlinewire -max_total_time=60 corpus/   (seeds: tests/data/online_wire/*.bin)
// The first input byte picks the checksum mode and the piece size the stream is fed in, so partial reads
// at every boundary are explored; the rest is the stream, given to both decoders.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "probe/error.h"
#include "probe/online_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  probe::online::WireOptions options;
  options.checksum = (data[0] & 0x80) == 0;
  options.max_payload_bytes = 1 << 16;
  const std::size_t piece = (data[0] & 0x7f) + 1u;
  std::vector<std::byte> stream(size - 1);
  if (size > 1) std::memcpy(stream.data(), data + 1, size - 1);

  probe::online::MessageDecoder messages(options, "fuzz");
  std::uint64_t sum = 0;
  try {
    for (std::size_t at = 0; at < stream.size(); at += piece) {
      messages.feed(std::span(stream).subspan(at, std::min(piece, stream.size() - at)));
      while (auto m = messages.next()) {
        // A message never claims more than the bytes that carried it.
        if (m->payload.empty() || m->payload.size() > options.max_payload_bytes) __builtin_trap();
        sum += m->payload.size() + m->is_stop() + m->crc_ok;
      }
      if (messages.buffered() > stream.size()) __builtin_trap();
    }
  } catch (const probe::Error&) {
    // Refusing a malformed stream with probe::Error is the expected outcome.
  }

  probe::online::AckDecoder acks("fuzz");
  try {
    for (std::size_t at = 0; at < stream.size(); at += piece) {
      acks.feed(std::span(stream).subspan(at, std::min(piece, stream.size() - at)));
      while (auto a = acks.next()) {
        const auto again = probe::online::encode_ack(*a);  // decode then encode is the identity
        if (probe::online::decode_ack(again) != *a) __builtin_trap();
        sum += a->id.seq;
      }
    }
  } catch (const probe::Error&) {
  }
  volatile std::uint64_t sink = sum;
  (void)sink;
  return 0;
}
