// An upper estimate of the float64 floating-point operations a bench runner spends on one call, for the
// APIs whose cost grows faster than their inputs (GEMMs, convolutions, attention). Elementwise and
// reduction APIs cost about one operation per input element, which the element cap already bounds.
#pragma once

#include <optional>
#include <string_view>

#include "probe/runner.h"

namespace probe::rut {

/// Forward FLOPs of `api` (the base name: "matmul", "linear", "conv2d", ...) on `call`'s tensors, or
/// nullopt when the API is not one of the superlinear families or its tensors are not where expected.
std::optional<double> estimated_bench_flops(std::string_view api, const ApiCall& call);

}  // namespace probe::rut
