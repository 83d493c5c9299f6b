// The backward of one API: mapping dumped gradients onto inputs and the bench's gradients
// (run_ut/BackwardMapping.h).
#include "run_ut/BackwardMapping.h"

#include <algorithm>
#include <cmath>

#include "probe/error.h"
#include "run_ut/Dataflow.h"
#include "run_ut/ValueBuilder.h"

namespace probe::rut {
namespace {

// The ranks of the first two arguments when they are tensors (-1 otherwise), for the node rules.
std::int64_t arg_rank(const ApiCall& call, std::size_t i) {
  if (i >= call.args.size() || !call.args[i].is_tensor()) return -1;
  return static_cast<std::int64_t>(call.args[i].tensor().shape().size());
}

std::optional<std::string> reshape_node(const std::string& api_name, const ApiCall& call) {
  return rut::reshape_node(api_name, arg_rank(call, 0), arg_rank(call, 1));
}

// Casts that return their input itself when nothing changes: then the output's autograd node belongs
// to the API that produced the input, and the dumped gradient is that API's.
bool returns_its_input(const std::string& api_name, const ApiCall& call, const std::vector<Value>& device) {
  static const std::vector<std::string> kMaybeSelf = {"float", "half",    "bfloat16",   "double", "to",
                                                      "type",  "type_as", "contiguous", "cpu",    "cuda",
                                                      "npu",   "long",    "int",        "bool"};
  if (std::find(kMaybeSelf.begin(), kMaybeSelf.end(), api_name) == kMaybeSelf.end()) return false;
  if (call.args.empty() || !call.args[0].is_tensor() || device.empty() || !device[0].is_tensor())
    return false;
  return call.args[0].tensor().dtype() == device[0].tensor().dtype();
}

// DECISIONS D15: calls that always make a new autograd node, so that the dumped gradient is theirs:
// clone, and `to(..., copy=True)`.
bool always_copies(const std::string& api_name, const ApiCall& call) {
  if (api_name == "clone") return true;
  if (api_name != "to") return false;
  return std::any_of(call.kwargs.begin(), call.kwargs.end(), [](const auto& kv) {
    return kv.first == "copy" && kv.second.kind() == Value::Kind::Bool && kv.second.as_bool();
  });
}

// DECISIONS D15: whether two tensors hold the same elements in row-major order (NaN where NaN, zeros of
// the same sign), whatever their shapes.
bool same_elements(const Tensor& a, const Tensor& b) {
  if (a.numel() != b.numel() || a.dtype() != b.dtype()) return false;
  const std::vector<double> x = a.to_doubles(), y = b.to_doubles();
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!((std::isnan(x[i]) && std::isnan(y[i])) ||
          (x[i] == y[i] && std::signbit(x[i]) == std::signbit(y[i]))))
      return false;
  return true;
}

Tensor transpose_2d(const Tensor& t) {
  const auto& sh = t.shape();
  const std::int64_t r = sh[0], c = sh[1];
  std::vector<double> v = t.to_doubles(), out(v.size());
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j)
      out[static_cast<std::size_t>(j * r + i)] = v[static_cast<std::size_t>(i * c + j)];
  return Tensor::from_values<double>(out, Shape{c, r}).to(t.dtype());
}

// DECISIONS D15: the node msprobe hooked for matmul / linear is the reshape of the GEMM's result: its
// one outgoing gradient must be its one incoming gradient reshaped, exactly. Any other form of the
// dumped entry keeps D7's SKIP (`why`).
std::string reshape_gradient(const Context& ctx, const std::string& full, const std::string& where,
                             const std::string& why, const TensorSource& src, const DumpEntry& bentry,
                             const std::vector<Value>& grads_in, std::vector<Value>& bench_grads,
                             std::vector<Value>& device_grads, std::vector<std::string>& notes,
                             std::optional<ExactRule>& exact) {
  auto dumped = dumped_values(ctx, src, bentry, bentry.outputs(), full, "output");
  if (!dumped || dumped->size() != 1 || grads_in.size() != 1 || !(*dumped)[0].is_tensor() ||
      !grads_in[0].is_tensor())
    return why;
  const Tensor &g = grads_in[0].tensor(), &d = (*dumped)[0].tensor();
  if (g.numel() != d.numel() || g.dtype() != d.dtype()) return why;
  bench_grads = {Value(g.reshape(d.shape()))};
  device_grads = {(*dumped)[0]};
  notes.assign(1, "");
  exact = ExactRule{"the incoming gradient reshaped to " + shape_to_string(d.shape()),
                    "the dumped gradient of " + full + " is taken " + where +
                        ", so the GEMM's own input gradients are not checked at this node"};
  return {};
}

// DECISIONS D15: a move, copy or cast to the same dtype passes its gradient through unchanged when it
// made a node of its own. A call that returns its input itself (a move to the device the tensor is on,
// `.float()` on float32, `contiguous` on a contiguous tensor) has no node: msprobe's hook sits on the
// node of the API that produced the input, and the dump records neither device nor strides to tell the
// two apart. So the gradient is compared exactly when the call always copies (clone, to with copy=True)
// or when the dumped entry is a pass-through (one incoming gradient of the output's shape, one outgoing
// gradient of the input's shape and dtype, equal element for element); otherwise `unchanged` (D7).
std::string passed_through(const Context& ctx, const std::string& api_name, const std::string& unchanged,
                           const TensorSource& src, const DumpEntry& bentry,
                           const std::vector<Value>& grads_in, const ApiCall& call,
                           const std::vector<Value>& device_outputs, const std::string& full,
                           std::vector<Value>& bench_grads, std::vector<Value>& device_grads,
                           std::vector<std::string>& notes, std::optional<ExactRule>& exact) {
  auto dumped = dumped_values(ctx, src, bentry, bentry.outputs(), full, "output");
  if (call.args.empty() || !call.args[0].is_tensor() || device_outputs.empty() ||
      !device_outputs[0].is_tensor() || !dumped || dumped->size() != 1 || grads_in.size() != 1 ||
      !(*dumped)[0].is_tensor() || !grads_in[0].is_tensor())
    return unchanged;
  const Tensor &x = call.args[0].tensor(), &g = grads_in[0].tensor(), &d = (*dumped)[0].tensor();
  if (g.shape() != device_outputs[0].tensor().shape() || d.shape() != x.shape() || d.dtype() != x.dtype() ||
      g.dtype() != d.dtype())
    return unchanged;
  const bool copies = always_copies(api_name, call);
  if (!copies && !same_elements(g, d))
    return full + " may have returned its input itself (the dump records neither device nor strides), " +
           "and its dumped gradient is not the incoming one passed through, so it belongs to the API "
           "that " +
           "produced that input; backward not compared";
  std::vector<std::pair<std::string, const Tensor*>> inputs;
  for (std::size_t i = 0; i < call.args.size(); ++i)
    positional_tensors(call.args[i], "input." + std::to_string(i), inputs);
  bench_grads.clear();
  device_grads.clear();
  notes.clear();
  for (const auto& in : inputs) {
    const bool first = in.first == "input.0";
    bench_grads.push_back(first ? grads_in[0] : Value(NoneValue{}));
    device_grads.push_back(first ? (*dumped)[0] : Value(NoneValue{}));
    notes.push_back(first ? ""
                          : "no gradient reaches " + in.first + " through " + api_name + "; not compared");
  }
  exact = ExactRule{"the incoming gradient", copies ? "a copy passes its gradient through unchanged"
                                                    : "the dumped node passes its gradient through, as a "
                                                      "copy does"};
  return {};
}

}  // namespace

std::optional<std::string> composite_backward_reason(const std::string& api_name, const ApiCall& call,
                                                     const std::string& full) {
  return rut::composite_backward_reason(api_name, arg_rank(call, 0), arg_rank(call, 1), full);
}

bool is_identity_api(const std::string& api_name, const DumpEntry& entry) {
  static const std::vector<std::string> kCopies = {"contiguous", "clone", "detach"};
  static const std::vector<std::string> kCasts = {"to",       "type",   "type_as", "float", "half",
                                                  "bfloat16", "double", "int",     "long",  "bool",
                                                  "short",    "char",   "byte"};
  if (std::find(kCopies.begin(), kCopies.end(), api_name) != kCopies.end()) return true;
  if (std::find(kCasts.begin(), kCasts.end(), api_name) == kCasts.end()) return false;
  const auto dt = dumped_dtypes(entry);
  return dt && dt->first == dt->second;
}

std::string backward_message(const Context& ctx, const std::string& api_name, bool has_out_kwarg) {
  if (ctx.framework != Framework::PyTorch) return {};
  std::string m;
  if (has_out_kwarg)
    m += "function with out=... arguments don't support automatic differentiation, skip backward.";
  if (api_name == "repeat_interleave") m += "This API does not have backward input data, skip backward.";
  if (api_name == "masked_select") m += "This API does not support backward ut, skip backward.";
  return m;
}

// Pairs the dumped gradients with the positional tensor inputs, or explains in `why` why they
// cannot be paired (D7a: a gradient that maps onto no input is never compared with anything).
std::optional<std::vector<Value>> map_dumped_grads(
    const std::vector<Value>& dumped, const std::string& api_name, const ApiCall& call,
    const std::vector<std::pair<std::string, const Tensor*>>& inputs, std::string& why) {
  std::vector<Value> out;
  auto shape_ok = [](const Value& g, const Tensor& t) {
    return g.is_none() || (g.is_tensor() && g.tensor().shape() == t.shape());
  };
  auto describe = [&](std::size_t k) {
    const Value& g = dumped[k];
    return "dumped gradient output." + std::to_string(k) +
           (g.is_tensor() ? " (shape " + shape_to_string(g.tensor().shape()) + ")" : "");
  };
  // F.linear on a 2-D input is addmm(bias, input, weight.t()) or mm(input, weight.t()): the node's
  // gradients are [bias, input, weight^T] or [input, weight^T].
  if (api_name == "linear" && !inputs.empty() && inputs[0].first == "input.0" &&
      inputs[0].second->shape().size() == 2 && (dumped.size() == 2 || dumped.size() == 3)) {
    const bool bias = dumped.size() == 3;
    const Value& gx = dumped[bias ? 1 : 0];
    const Value& gwt = dumped[bias ? 2 : 1];
    for (const auto& [path, t] : inputs) {
      Value g = Value(NoneValue{});
      if (path == "input.0") g = gx;
      if (path == "input.1" && gwt.is_tensor() && gwt.tensor().shape().size() == 2)
        g = Value(transpose_2d(gwt.tensor()));
      if (path == "input.2" && bias) g = dumped[0];
      if (!shape_ok(g, *t)) {
        why = "the dumped gradients of linear do not have the shapes of addmm/mm's gradients";
        return std::nullopt;
      }
      out.push_back(g);
    }
    return out;
  }
  // By position over all positional arguments (non-tensors carry None).
  if (dumped.size() == call.args.size() && inputs.size() <= call.args.size()) {
    bool flat = std::all_of(call.args.begin(), call.args.end(), [](const Value& v) { return !v.is_list(); });
    if (flat) {
      bool ok = true;
      for (const auto& [path, t] : inputs) {
        std::size_t idx = std::stoul(path.substr(6));
        if (!shape_ok(dumped[idx], *t)) ok = false;
      }
      if (ok) {
        for (const auto& [path, t] : inputs) out.push_back(dumped[std::stoul(path.substr(6))]);
        return out;
      }
    }
  }
  // By position over the tensor inputs.
  if (dumped.size() == inputs.size()) {
    bool ok = true;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (!shape_ok(dumped[i], *inputs[i].second)) ok = false;
    if (ok) return std::vector<Value>(dumped.begin(), dumped.end());
  }
  // By shape, when shapes pair inputs and gradients one to one (no gradient could belong to two
  // inputs, no input to two gradients) and every dumped gradient finds its input.
  std::vector<int> used(dumped.size(), 0);
  out.clear();
  for (const auto& [path, t] : inputs) {
    std::size_t match = dumped.size();
    int count = 0;
    for (std::size_t k = 0; k < dumped.size(); ++k)
      if (dumped[k].is_tensor() && dumped[k].tensor().shape() == t->shape()) {
        match = k;
        ++count;
      }
    if (count > 1) {
      why = "several dumped gradients have the shape of " + path;
      return std::nullopt;
    }
    if (count == 1 && used[match]++) {
      why = describe(match) + " has the shape of several inputs";
      return std::nullopt;
    }
    out.push_back(count ? dumped[match] : Value(NoneValue{}));
  }
  for (std::size_t k = 0; k < dumped.size(); ++k)
    if (dumped[k].is_tensor() && !used[k]) {
      why = describe(k) + " matches no input of the API";
      return std::nullopt;
    }
  return out;
}

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
                           std::vector<std::string>& notes, std::optional<ExactRule>& exact) {
  ValueBuilder vb(ctx, src, bentry, full);
  if (const DumpNode* gin = bentry.section("input")) {
    const auto& items = gin->items();
    try {
      for (std::size_t i = 0; i < items.size(); ++i)
        grads_in.push_back(vb.build(items[i], "input." + std::to_string(i)));
    } catch (const Error& e) {
      return "backward " + (e.field().empty() ? "" : e.field() + ": ") + e.message();
    }
  }
  inputs_as_dumped = inputs_as_dumped && vb.random() == 0;
  if (grads_in.empty()) return "This API does not have backward input data, skip backward.";
  // DECISIONS (generated inputs): recorded gradients belong to the real inputs, not generated ones.
  const bool dumped_device = use_dumped_device(ctx) && inputs_as_dumped;
  // The node rules describe PyTorch's autograd; MindSpore dumps record gradients differently.
  const bool torch_nodes = ctx.framework == Framework::PyTorch && !ctx.mindtorch;
  if (dumped_device && torch_nodes) {
    const bool probe = ctx.standards->profile() == Profile::Probe;
    if (auto why = composite_backward_reason(api_name, call, full)) {
      if (probe && reshape_node(api_name, call))
        return reshape_gradient(ctx, full, *reshape_node(api_name, call), *why, src, bentry, grads_in,
                                bench_grads, device_grads, notes, exact);
      return *why;
    }
    const std::string unchanged = full + " returned its input unchanged, so the dumped gradient belongs to " +
                                  "the API that produced that input; backward not compared";
    if (probe && is_identity_api(api_name, fentry))
      return passed_through(ctx, api_name, unchanged, src, bentry, grads_in, call, device_outputs, full,
                            bench_grads, device_grads, notes, exact);
    if (returns_its_input(api_name, call, device_outputs)) return unchanged;
  }
  std::vector<InputGradient> bench;
  if (!taped_error.empty()) return taped_error;
  try {
    bench = taped ? taped->backward(grads_in)
                  : ctx.registry->run_backward(ctx.runner_fw, runner_api, call, grads_in, RunnerRole::Bench);
  } catch (const Error& e) {
    return e.message();
  }
  std::vector<std::pair<std::string, const Tensor*>> inputs;
  for (std::size_t i = 0; i < call.args.size(); ++i)
    positional_tensors(call.args[i], "input." + std::to_string(i), inputs);
  // D7a: an input gets a bench gradient only when the dump says it requires one (without that
  // field: floating tensors only), as msprobe's bench does.
  std::vector<bool> wants(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    auto rg = dumped_requires_grad(fentry, inputs[i].first);
    wants[i] = rg ? *rg : is_floating(inputs[i].second->dtype());
  }
  auto by_path = [&](const std::vector<InputGradient>& gs, std::vector<Value>& out) {
    for (const auto& in : inputs) {
      auto it =
          std::find_if(gs.begin(), gs.end(), [&](const InputGradient& g) { return g.path == in.first; });
      out.push_back(it == gs.end() ? Value(NoneValue{}) : Value(it->grad));
    }
  };
  // One entry per positional tensor input, None where no gradient reaches it (§6.8).
  by_path(bench, bench_grads);
  std::optional<std::vector<Value>> dumped;
  try {
    if (dumped_device) dumped = dumped_values(ctx, src, bentry, bentry.outputs(), full, "output");
  } catch (const Error& e) {
    return "backward " + (e.field().empty() ? "" : e.field() + ": ") + e.message();
  }
  if (dumped) {
    std::string why;
    auto mapped = map_dumped_grads(*dumped, torch_nodes ? api_name : std::string(), call, inputs, why);
    if (!mapped) return why + "; backward not compared";
    device_grads = std::move(*mapped);
  } else {
    try {
      by_path(ctx.registry->run_backward(ctx.runner_fw, runner_api, call, grads_in, RunnerRole::Device),
              device_grads);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Unsupported) throw DeviceRunnerFailure{"backward", e.message()};
      return e.message();
    }
  }
  notes.assign(inputs.size(), "");
  bool compared = false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string& path = inputs[i].first;
    Value& b = bench_grads[i];
    Value& d = device_grads[i];
    if (!wants[i]) b = Value(NoneValue{});
    if (!wants[i] && d.is_none()) {
      notes[i] = "no dumped gradient for " + path + " (requires_grad false)";
    } else if (!wants[i]) {
      notes[i] = "the dump has a gradient for " + path + " but says requires_grad false; not compared";
      d = Value(NoneValue{});
    } else if (d.is_none()) {
      notes[i] = "no dumped gradient for " + path + " although it requires grad; not compared";
      b = Value(NoneValue{});
    } else if (b.is_none()) {
      notes[i] = "no gradient reaches " + path + " in the bench; not compared";
      d = Value(NoneValue{});
    } else {
      compared = true;
    }
  }
  if (!compared) {
    std::string all;
    for (const auto& n : notes)
      if (!n.empty()) all += (all.empty() ? "" : "; ") + n;
    return all.empty() ? "the API has no tensor input to compare a gradient for" : all;
  }
  return {};
}

}  // namespace probe::rut
