// libFuzzer target: dump.json (and the same bytes as stack.json / construct.json).
// Run: probe_fuzz_dumpjson -max_total_time=60 -dict=tests/fuzz/dump_json.dict corpus/
// (seed corpus: the *.json files under tests/data/dumps/)
#include <cstdint>
#include <string_view>

#include "probe/construct.h"
#include "probe/dump.h"
#include "probe/error.h"
#include "probe/stack.h"

namespace {

// Walks everything the model exposes, so a dangling view or a broken invariant shows up under ASan.
std::size_t walk(const probe::DumpNode& n, int depth) {
  std::size_t sum = static_cast<std::size_t>(n.kind());
  switch (n.kind()) {
    case probe::DumpNode::Kind::Tensor: {
      const probe::TensorInfo& t = n.tensor();
      sum += t.type.size() + t.dtype_name.size() + t.data_name.size() + t.field.size() + t.shape.size();
      sum += static_cast<std::size_t>(t.max.as_double() == 0) + t.min.to_value().to_string().size();
      try {
        if (auto b = t.nbytes()) sum += static_cast<std::size_t>(*b & 1);
      } catch (const probe::Error&) {
      }
      break;
    }
    case probe::DumpNode::Kind::Value:
      sum += n.leaf().type.size() + n.leaf().value.to_string().size();
      break;
    case probe::DumpNode::Kind::List:
      for (const auto& c : n.items()) sum += walk(c, depth + 1);
      break;
    case probe::DumpNode::Kind::Dict:
      for (const auto& [k, c] : n.members()) sum += k.size() + walk(c, depth + 1);
      break;
    case probe::DumpNode::Kind::Null:
      break;
  }
  try {
    sum += n.to_value().to_string().size();
  } catch (const probe::Error&) {
  }
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  volatile std::size_t sink = 0;
  probe::DumpParseOptions options;
  options.max_depth = 64;  // keeps runs fast; the limit itself is what is being exercised
  try {
    const probe::Dump d = probe::Dump::parse(text, "fuzz/dump.json", options);
    for (const auto& e : d.entries()) {
      sink = sink + walk(e.body, 0) + e.tensors().size() + e.name.full_name.size();
      if (d.find(e.key) == nullptr) __builtin_trap();  // every key must be findable
      if (e.inputs()) sink = sink + 1;
    }
    try {
      sink = sink + d.run_ut_maps().forward.size();
    } catch (const probe::Error&) {
    }
  } catch (const probe::Error&) {
    // Rejecting bad input with probe::Error is the expected outcome.
  }
  try {
    sink = sink + probe::StackInfo::parse(text, "fuzz/stack.json").key_count();
  } catch (const probe::Error&) {
  }
  try {
    sink = sink + probe::ConstructInfo::parse(text, "fuzz/construct.json").nodes().size();
  } catch (const probe::Error&) {
  }
  return 0;
}
