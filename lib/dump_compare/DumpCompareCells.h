// Internal: the dump-compare cells (§3.8) of a pair whose statistics the fused kernel already computed, so
// callers that need other metrics too (compare_pair) read the tensors once.
#pragma once

#include "probe/metrics.h"

namespace probe::detail {

/// dump_compare(npu, bench) for a non-empty, same-shape, real pair whose kernel statistics (compute_extra)
/// are `m`: computed on the bench and device values exactly as dump_compare converts them.
DumpCompareResult dump_compare_cells(const TensorMetrics& m, const Tensor& npu, const Tensor& bench);

}  // namespace probe::detail
