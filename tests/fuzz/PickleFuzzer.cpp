// libFuzzer target: the allow-listed pickle VM alone (a zip wrapper would hide most mutations of
// data.pkl from the fuzzer). Every storage key resolves to one 4 KiB record.
// Run: probe_fuzz_pickle -max_total_time=60 corpus/   (seeds: data.pkl of tests/data/tensors/*.pt)
#include <cstdint>
#include <cstring>
#include <string_view>

#include "io/TensorIo.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto storage = probe::make_owned_storage(4096);
  probe::io::StorageLoader load = [](const std::string& key, std::uint64_t) {
    if (key.size() > 2) throw probe::Error(probe::ErrorKind::Format, "no such record");
    return probe::io::StorageBytes{storage, 64 * key.size(), 4096 - 64 * key.size()};
  };
  volatile std::uint64_t sink = 0;
  try {
    auto tensors = probe::io::unpickle_tensors(std::string_view(reinterpret_cast<const char*>(data), size),
                                               load, "fuzz.pkl");
    for (const auto& nt : tensors) {
      const auto* p = reinterpret_cast<const unsigned char*>(nt.tensor.bytes());
      for (std::size_t i = 0; i < nt.tensor.nbytes(); ++i) sink = sink + p[i];
    }
  } catch (const probe::Error&) {
  }
  return 0;
}
