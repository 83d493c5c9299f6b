// libFuzzer target: the YAML reader behind compare's mapping files (-dm, -cm, -am, -lm).
// Run: probe_fuzz_yaml -max_total_time=60 corpus/
// (seed corpus: tests/data/dump_mapping/*/*.yaml and tests/data/dump_compare/fuzzy/*.yaml)
#include <cstdint>
#include <string_view>

#include "probe/error.h"
#include "support/Yaml.h"

namespace {

// Visits the whole tree without recursion limits of its own: the reader's depth limit is what keeps this
// safe.
std::size_t walk(const probe::detail::YamlNode& n) {
  std::size_t sum = n.text.size() + n.line + static_cast<std::size_t>(n.is_null());
  for (const auto& i : n.items) sum += walk(i);
  for (const auto& [k, v] : n.members) sum += walk(k) + walk(v);
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  probe::detail::YamlLimits limits;
  limits.max_nodes = 1u << 16;  // keeps runs fast; the limit itself is what is being exercised
  volatile std::size_t sink = 0;
  try {
    const probe::detail::YamlNode doc = probe::detail::yaml_parse(text, "fuzz.yaml", limits);
    sink = sink + walk(doc);
    if (doc.line == 0 && !doc.is_null()) __builtin_trap();  // every parsed node has a line
  } catch (const probe::Error&) {
    // Rejecting bad input with probe::Error is the expected outcome.
  }
  return 0;
}
