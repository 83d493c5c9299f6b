// Internal: small helpers shared by the neural-network runner files (Conv, Pooling, Norms, Losses,
// Attention): argument normalisation as torch does it, and the one explicit-VJP primitive they reuse.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runners/RunnerKit.h"

namespace probe::runners::nn {

/// An int or int list argument expanded to `n` values (torch's _pair/_single); `what` names it in errors.
std::vector<std::int64_t> expand_ints(const std::vector<std::int64_t>& v, std::size_t n, const char* what);

/// Throws like torch when `x` is not floating ("\"<fn>\" not implemented for 'Long'").
void need_floating(const Var& x, const std::string& fn);

/// The legacy size_average/reduce pair mapped to a reduction string (torch's legacy_get_string).
std::string reduction_of(Ctx& c);

/// Throws Error(Unsupported) when a result or work buffer of `elements` float64 values would exceed the
/// reference's budget (2^31 elements, 16 GiB): output sizes computed from arguments (strides, scale
/// factors, pads) must not turn a small malicious call into a huge allocation.
void check_alloc(double elements, const char* fn);

/// Applies 'none' / 'mean' / 'sum' to an elementwise loss.
Var reduce_loss(const Var& loss, const std::string& reduction);

/// A sparse linear map out[o] = sum_j weight[j] * x.flat[index[j]] for j in [offset[o], offset[o+1]),
/// plus `fill` for outputs whose range is empty when `fill_empty` is set (constant padding). Gradients are
/// the transpose map. Pooling averages, interpolation and padding are such maps.
struct SparseMap {
  std::vector<std::int64_t> offset{0};
  std::vector<std::int64_t> index;
  std::vector<double> weight;
  void add(std::int64_t i, double w) {
    index.push_back(i);
    weight.push_back(w);
  }
  void close() { offset.push_back(static_cast<std::int64_t>(index.size())); }
};
Var apply_map(const Var& x, const SparseMap& m, Shape out_shape, double fill = 0.0);

}  // namespace probe::runners::nn
