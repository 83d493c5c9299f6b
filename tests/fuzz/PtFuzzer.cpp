// libFuzzer target: torch.save zip archives (zip directory, records, pickle VM).
// Run: probe_fuzz_pt -max_total_time=60 corpus/   (seed corpus: tests/data/tensors/*.pt)
#include <cstdint>
#include <cstring>

#include "io/TensorIo.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto buf = probe::make_owned_storage(size);
  if (size) std::memcpy(buf->data(), data, size);
  volatile std::uint64_t sink = 0;
  try {
    for (const auto& nt : probe::io::parse_pt(buf, "fuzz.pt")) {
      const auto* p = reinterpret_cast<const unsigned char*>(nt.tensor.bytes());
      for (std::size_t i = 0; i < nt.tensor.nbytes(); ++i) sink = sink + p[i];
    }
  } catch (const probe::Error&) {
  }
  try {  // the header-only path (probe info) walks the same archive without reading storages
    for (const auto& [name, header] : probe::io::parse_pt_headers(buf, "fuzz.pt"))
      sink = sink + header.shape.size();
  } catch (const probe::Error&) {
  }
  return 0;
}
