// list_apis: reads an msprobe dump.json with libprobe and lists every API record, one line each: its
// name, direction, and the dtype and shape of each input and output tensor (metadata only, no tensor
// file is read). Usage: list_apis DUMP.json
//
// Library calls shown: probe::Dump::open, DumpEntry::name (parsed key), DumpEntry::inputs/outputs and
// DumpNode::collect_tensors, and probe::Error for bad input (its message names the file and field).
#include <cstdio>
#include <string>
#include <vector>

#include "probe/probe.h"

namespace {

const char* direction(probe::EntryDirection d) {
  switch (d) {
    case probe::EntryDirection::Forward:
      return "forward";
    case probe::EntryDirection::Backward:
      return "backward";
    case probe::EntryDirection::ParametersGrad:
      return "parameters_grad";
    default:
      return "other";
  }
}

// "torch.bfloat16[2,8,32]" for each tensor below `node`, space-separated; "-" when there is none.
std::string tensors_of(const probe::DumpNode* node) {
  std::vector<const probe::TensorInfo*> tensors;
  if (node) node->collect_tensors(tensors);
  std::string out;
  for (const probe::TensorInfo* t : tensors) {
    if (!out.empty()) out += ' ';
    out += t->dtype_name;
    out += '[';
    for (std::size_t i = 0; i < t->shape.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(t->shape[i]);
    }
    out += ']';
  }
  return out.empty() ? "-" : out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DUMP.json\n", argv[0]);
    return 2;
  }
  try {
    const probe::Dump dump = probe::Dump::open(argv[1]);
    std::printf("%s dump, task %s, level %s, %zu records\n", std::string(to_string(dump.framework())).c_str(),
                dump.task().c_str(), dump.level().c_str(), dump.entries().size());
    for (const probe::DumpEntry& e : dump.entries()) {
      if (e.name.is_module) continue;  // layer-level records are not APIs
      std::printf("%s %s in: %s out: %s\n", e.name.full_name.c_str(), direction(e.name.direction),
                  tensors_of(e.inputs()).c_str(), tensors_of(e.outputs()).c_str());
    }
    return 0;
  } catch (const probe::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return probe::exit_code(e.kind());
  }
}
