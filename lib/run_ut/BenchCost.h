// Upper estimates of what a bench runner spends on one call, before it runs: float64 floating-point
// operations for the APIs whose cost grows faster than their inputs (GEMMs, convolutions, attention), and
// the elements of results that can outgrow their inputs (repeat, expand, arange, ...). Elementwise and
// reduction APIs cost about one operation and one element per input element, which the input cap bounds.
#pragma once

#include <optional>
#include <string_view>

#include "probe/dump.h"
#include "probe/runner.h"

namespace probe::rut {

/// Forward FLOPs of `api` (the base name: "matmul", "linear", "conv2d", ...) on `call`'s tensors, or
/// nullopt when the API is not one of the superlinear families or its tensors are not where expected.
std::optional<double> estimated_bench_flops(std::string_view api, const ApiCall& call);

/// The same from a dumped entry's tensor descriptors (its top-level tensor arguments), before anything is
/// loaded or generated.
std::optional<double> estimated_bench_flops(std::string_view api, const DumpEntry& entry);

/// What checking `forward` (and its `backward` record, if any) costs, for handing the heaviest APIs out
/// first: the bytes of their dumped tensors plus the bench's FLOP estimate, in comparable units.
double check_weight(std::string_view api, const DumpEntry& forward, const DumpEntry* backward);

/// Elements of the largest tensor the bench runner of `api` creates on `call` (its result or, `with_work`,
/// also cdist's broadcast difference and linear interpolation's taps), computed from shapes and int
/// arguments before anything is allocated, for the APIs whose results can outgrow their inputs (repeat,
/// expand, new_full, arange, interpolate, one_hot, outer, kron, GEMMs, ...); nullopt for the others and
/// when the arguments are not where expected.
std::optional<double> estimated_result_elements(std::string_view api, const ApiCall& call,
                                                bool with_work = true);

}  // namespace probe::rut
