// Internal: composite float64 operations with gradients, for writing runners (broadcasting and torch
// type promotion included). Everything here is built from the primitives in Autograd.h.
#pragma once

#include <optional>
#include <vector>

#include "runners/Autograd.h"

namespace probe::runners::ops {

Var add(const Var& a, const Var& b, double alpha = 1.0);
Var sub(const Var& a, const Var& b, double alpha = 1.0);
Var mul(const Var& a, const Var& b);
Var div(const Var& a, const Var& b);  ///< true division
Var maximum(const Var& a, const Var& b);
Var minimum(const Var& a, const Var& b);
Var neg(const Var& x);
Var exp(const Var& x);
Var log(const Var& x);
Var sqrt(const Var& x);
Var rsqrt(const Var& x);
Var square(const Var& x);
Var abs(const Var& x);
Var scalar_like(double v, const Var& like);  ///< a wrapped Python float (does not change dtypes)
/// sum / mean over dims (empty = all) with torch's dtype rules (ints -> int64 for sum).
Var sum(const Var& x, const std::vector<std::int64_t>& dims = {}, bool keepdim = false,
        std::optional<DType> dtype = std::nullopt);
Var mean(const Var& x, const std::vector<std::int64_t>& dims = {}, bool keepdim = false,
         std::optional<DType> dtype = std::nullopt);
/// Variance with `correction` (1 = unbiased).
Var var(const Var& x, const std::vector<std::int64_t>& dims, double correction, bool keepdim);
/// torch.matmul semantics for any ranks >= 1.
Var matmul(const Var& a, const Var& b);
Var softmax(const Var& x, std::int64_t dim, bool log = false);
Var unsqueeze(const Var& x, std::int64_t dim);
Var squeeze(const Var& x, std::int64_t dim);

}  // namespace probe::runners::ops
