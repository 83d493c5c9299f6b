// What the error-bound verdict (DECISIONS D14, JudgeRule::ErrorBound) needs besides bench and device:
// which APIs it covers, the magnitude bench of a call and its accumulation length.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "probe/export.h"
#include "probe/runner.h"
#include "probe/tensor.h"
#include "probe/value.h"

namespace probe {

/// Whether D14 has a bound for `api` (any spelling: "Functional.gelu.0", "Aten.mm.default", "gelu").
struct PROBE_API ErrorBoundSupport {
  bool covered = false;
  bool needs_magnitude = false;  ///< JudgeOptions::magnitude and ::accumulation are required
  std::string family;            ///< "gemm", "reduction", "transcendental", ... (empty when not covered)
  /// error_bound_grad_magnitude bounds the input gradients (the accumulating families; silu, softmax,
  /// log_softmax, layer_norm, mul and rsqrt by DECISIONS D20)
  bool bounds_backward = false;
};
/// Pure and thread-safe.
PROBE_API ErrorBoundSupport error_bound_support(std::string_view api);

/// The magnitude bench of one call: `api`'s bench runner (or the one of the operator D14 names, "add" for
/// "sub") on the call with every tensor replaced by its absolute value, one float64 output per bench
/// output. Empty when the API needs none. Throws like RunnerRegistry::run_forward. Thread-safe.
PROBE_API std::vector<Value> error_bound_magnitude(const RunnerRegistry& registry, Framework framework,
                                                   std::string_view api, const ApiCall& call);

/// Terms summed into one element of an output of `output` shape (K of a GEMM, the reduced count of a sum)
/// from the call's tensor shapes; 1 for element-wise and uncovered APIs. Pure and thread-safe.
PROBE_API std::int64_t error_bound_accumulation(std::string_view api, const ApiCall& call,
                                                const Shape& output);

/// Whether every Python number among the call's arguments and keywords (alpha, beta, a scalar operand,
/// a floating tensor of no dimensions; bools aside) is exactly representable in `output` dtype, which torch
/// casts it to: JudgeOptions::exact_scalars (DECISIONS D25). False when one is not, or `output` is not a
/// floating dtype. Thread-safe.
PROBE_API bool error_bound_exact_scalars(const ApiCall& call, DType output);

/// The magnitude bench of the input gradients: the bench backward on the call's absolute values and the
/// absolute output gradients, as RunnerRegistry::run_backward returns them; for silu, softmax, log_softmax,
/// layer_norm and rsqrt the magnitudes DECISIONS D20 derives. Empty when D14 does not bound the API's
/// backward (ErrorBoundSupport::bounds_backward). Throws like RunnerRegistry::run_backward. Thread-safe.
PROBE_API std::vector<InputGradient> error_bound_grad_magnitude(const RunnerRegistry& registry,
                                                                Framework framework, std::string_view api,
                                                                const ApiCall& call,
                                                                const std::vector<Value>& grad_outputs);

/// Terms summed into one element of the gradient of an input of `input` shape: every product of the
/// forward's `output` elements times K lands in one gradient element, so numel(output) K / numel(input).
PROBE_API std::int64_t error_bound_grad_accumulation(std::string_view api, const ApiCall& call,
                                                     const Shape& output, const Shape& input);

}  // namespace probe
