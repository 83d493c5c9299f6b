// libFuzzer target: .npy files, and .npz archives (inputs starting with "PK").
// Run: probe_fuzz_npy -max_total_time=60 corpus/   (seed corpus: tests/data/tensors/*.npy, *.npz)
#include <cstdint>
#include <cstring>

#include "io/TensorIo.h"

namespace {

// Reads every byte, so that a tensor pointing outside its buffer is caught by ASan.
std::uint64_t touch(const probe::Tensor& t) {
  std::uint64_t sum = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(t.bytes());
  for (std::size_t i = 0; i < t.nbytes(); ++i) sum += p[i];
  if (t.numel() > 0) sum += static_cast<std::uint64_t>(t.at(t.numel() - 1) == 0);
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto buf = probe::make_owned_storage(size);
  if (size) std::memcpy(buf->data(), data, size);
  volatile std::uint64_t sink = 0;
  try {
    if (size >= 2 && data[0] == 'P' && data[1] == 'K') {
      for (const auto& nt : probe::io::parse_npz(buf, "fuzz.npz")) sink = sink + touch(nt.tensor);
    } else {
      sink = sink + touch(probe::io::parse_npy(buf, 0, size, "fuzz.npy"));
    }
  } catch (const probe::Error&) {
    // Rejecting bad input with probe::Error is the expected outcome.
  }
  return 0;
}
