// Internal: test hook of the fused metrics kernel. The kernel processes full 8-lane groups of finite
// values with SIMD code and everything else (tails, non-finite lanes, float16 pairs) with its scalar
// per-element code; forcing the scalar code everywhere lets tests prove both give identical bits.
#pragma once

namespace probe::detail {

/// When true, compute_metrics uses only the scalar per-element path (process-wide; tests only).
void set_metrics_scalar_only(bool on) noexcept;
bool metrics_scalar_only() noexcept;
/// Caps the instruction set of the SIMD path: 0 SSE2, 1 AVX2, 2 AVX-512 (default: the best the CPU has).
void set_metrics_max_isa(int level) noexcept;
/// The instruction set the SIMD path uses now (after the cap).
int metrics_isa() noexcept;
/// How many blocks a thread may run ahead of the in-order prefix while collecting a compacted
/// selection; 0 restores the default (tests shrink it to exercise the waiting).
void set_metrics_compaction_window(long blocks) noexcept;

}  // namespace probe::detail
