// Internal: one dumped API call rebuilt as run_ut rebuilds it, for the tools that re-run a dumped call
// outside run_ut's pipeline (run_overflow_check).
#pragma once

#include <string>
#include <vector>

#include "probe/dump.h"
#include "probe/run_ut.h"
#include "probe/runner.h"

namespace probe::rut {

/// A dumped forward call's arguments, and which of its tensors were generated from statistics.
struct DumpedCall {
  ApiCall call;
  std::vector<std::string> generated;  ///< fields ("input.0", "kwargs.other") generated from Max/Min
};

/// Builds `entry`'s call (`full`: "Torch.exp.0") as run_ut does: tensors from their files, else (statistics
/// dumps) generated from Max/Min with `options.seed` and bounded by `options.max_api_elements`; msprobe's
/// per-API input fixes; torch.device kwargs dropped. Throws probe::Error naming the tensor's file and field.
DumpedCall build_dumped_call(const Dump& dump, const DumpEntry& entry, const std::string& full,
                             const RunUtOptions& options);

}  // namespace probe::rut
