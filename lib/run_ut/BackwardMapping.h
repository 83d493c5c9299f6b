// The backward of one API (DECISIONS D7, D7a, D15): which dumped gradients are the device's and which
// input each belongs to, the float64 bench's vector-Jacobian product, and the nodes whose dumped gradient
// is not the API's own (composites, pass-throughs, reshapes of a GEMM).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "probe/dump.h"
#include "probe/runner.h"
#include "run_ut/CheckContext.h"
#include "run_ut/RowFormat.h"

namespace probe::rut {

/// composite_backward_reason (run_ut/Dataflow.h) for the ranks of `call`'s first two arguments.
std::optional<std::string> composite_backward_reason(const std::string& api_name, const ApiCall& call,
                                                     const std::string& full);

// DECISIONS D15: the output of a move, copy or cast to the input's own dtype is its input's values.
bool is_identity_api(const std::string& api_name, const DumpEntry& entry);

/// Why the backward of `api_name` is not run at all (msprobe's messages: out= arguments, APIs without
/// backward input); "" when it is.
std::string backward_message(const Context& ctx, const std::string& api_name, bool has_out_kwarg);

// Pairs the dumped gradients with the positional tensor inputs, or explains in `why` why they
// cannot be paired (D7a: a gradient that maps onto no input is never compared with anything).
std::optional<std::vector<Value>> map_dumped_grads(
    const std::vector<Value>& dumped, const std::string& api_name, const ApiCall& call,
    const std::vector<std::pair<std::string, const Tensor*>>& inputs, std::string& why);

// DECISIONS D7, D7a: the dumped backward `output` tensors are the device gradients when they map onto
// the API's tensor inputs unambiguously (by position, else by unique shape), and the bench computes
// gradients only for inputs the dump says require one. Returns a SKIP message saying in plain words
// why nothing was compared, or "" when both gradient lists were produced; `notes[i]` then explains
// an input gradient that was not compared.
// `taped` (may be null) is the bench forward kept for this backward; `taped_error` why it could not be.
std::string check_backward(const Context& ctx, const std::string& runner_api, const std::string& api_name,
                           const ApiCall& call, const TapedCall* taped, const std::string& taped_error,
                           const DumpEntry& fentry, const DumpEntry& bentry, const TensorSource& src,
                           const std::string& full, const std::vector<Value>& device_outputs,
                           bool inputs_as_dumped, std::vector<Value>& grads_in,
                           std::vector<Value>& bench_grads, std::vector<Value>& device_grads,
                           std::vector<std::string>& notes, std::optional<ExactRule>& exact);

}  // namespace probe::rut
