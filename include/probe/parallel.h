// Process-wide worker threads used by probe's kernels for large tensors.
#pragma once

#include "probe/export.h"
namespace probe {

/// Sets how many threads kernels may use (>= 1). Default: std::thread::hardware_concurrency().
PROBE_API void set_num_threads(int n);
/// Current kernel thread count.
PROBE_API int num_threads() noexcept;

}  // namespace probe
