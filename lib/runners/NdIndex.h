// Internal: N-d index math of the autograd primitives on xtensor (fixed-rank adaptors over probe's float64
// buffers, dispatched on the rank). Each function returns false, writing nothing, for a case it does not
// take (rank above kMaxRank after merging, or a reduction xtensor would associate differently); the caller
// then runs its own loop. Measured against the loops they replace in DEVELOPERS.md ("N-d index math").
// Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "probe/tensor.h"

namespace probe::runners::nd {

/// Highest rank dispatched to xtensor, after size-1 dims are dropped and neighbouring dims merged.
inline constexpr int kMaxRank = 6;

/// out[k] = 0.0 + in[i0] + in[i1] + ... summing `in` (row-major, `shape`) over the dims with reduced[d],
/// in increasing flat index i (bit-identical to a sequential loop); out is row-major over the kept dims.
/// Declines when the reduced dims include the innermost one and are not one trailing block.
bool sum_axes(const double* in, const Shape& shape, const std::vector<bool>& reduced, double* out);

/// out = in permuted as torch.permute(dims) (out dim i is in dim dims[i]; dims already wrapped).
bool permute(const double* in, const Shape& shape, std::span<const std::int64_t> dims, double* out);

}  // namespace probe::runners::nd
