// Internal: convolutions as im2col + float64 GEMM (Eigen), with explicit vector-Jacobian products.
// Exposed for the benchmark (benchmarks/ConvBench.cpp) and the conv runners.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "runners/Autograd.h"

namespace probe::runners::nn {

/// Spatial parameters of a 2-d convolution (conv1d is a 2-d one with height 1). Padding may be
/// asymmetric (padding='same' with an even kernel pads one more at the end, like torch).
struct ConvParams {
  std::array<std::int64_t, 2> stride{1, 1}, dilation{1, 1}, pad_lo{0, 0}, pad_hi{0, 0};
  std::int64_t groups = 1;
};

/// conv2d: x [N, C, H, W], w [O, C/groups, kh, kw], b [O] or none -> [N, O, OH, OW].
Var conv2d(const Var& x, const Var& w, const std::optional<Var>& b, const ConvParams& p);
/// conv_transpose2d: x [N, Cin, H, W], w [Cin, Cout/groups, kh, kw] -> [N, Cout, OH, OW] with
/// OH = (H - 1) * stride - pad_lo - pad_hi + dilation * (kh - 1) + 1 + output_padding.
Var conv_transpose2d(const Var& x, const Var& w, const std::optional<Var>& b, const ConvParams& p,
                     std::array<std::int64_t, 2> output_padding);

}  // namespace probe::runners::nn
