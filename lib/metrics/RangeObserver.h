// Internal: work that rides along the fused metrics kernel's single pass. compute_metrics reads the bench
// and device buffers block by block; an observer is handed each block right after the kernel read it, on
// the same thread, while the block is still in cache, so that a second scan of the same elements (D14's
// error bound in compare_pair) costs no second trip through memory.
#pragma once

#include <cstdint>

#include "probe/metrics.h"
#include "probe/tensor.h"

namespace probe::detail {

class RangeObserver {
 public:
  virtual ~RangeObserver() = default;
  /// Called once before any range(): chunk ids will be 0..chunks-1.
  virtual void start(int chunks) = 0;
  /// Elements [begin, end), each exactly once over the pass; concurrent calls have distinct chunk ids.
  virtual void range(std::int64_t begin, std::int64_t end, int chunk) = 0;
};

/// compute_metrics(bench, device, params) that also hands every element range to `observer` (not owned;
/// null: none). Not called for empty tensors.
TensorMetrics compute_metrics_observed(const Tensor& bench, const Tensor& device, const MetricParams& params,
                                       RangeObserver* observer);

}  // namespace probe::detail
