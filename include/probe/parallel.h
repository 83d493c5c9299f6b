// Process-wide worker threads used by probe's kernels for large tensors.
#pragma once

namespace probe {

/// Sets how many threads kernels may use (>= 1). Default: std::thread::hardware_concurrency().
void set_num_threads(int n);
/// Current kernel thread count.
int num_threads() noexcept;

}  // namespace probe
