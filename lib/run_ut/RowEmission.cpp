// The rows of one checked API (run_ut/RowEmission.h).
#include "run_ut/RowEmission.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <mutex>

#include "probe/error.h"
#include "probe/error_bound.h"
#include "probe/tensor_file.h"
#include "run_ut/BackwardMapping.h"
#include "standards/ErrorBound.h"

namespace probe::rut {
namespace {

namespace fs = std::filesystem;

// The dtype msprobe's bench would have run a floating output in (precheck §6.6): float16/bfloat16 inputs
// raised to float32, float32 to float64, a mix of them to float32; conv1d/conv2d float32 and type_as stay.
// Casts produce their target dtype. nullopt: keep the dtype the output has.
std::optional<DType> msprobe_bench_dtype(const std::string& api_name, const ApiCall& call) {
  static const std::vector<std::string> kCasts = {"float", "half", "bfloat16", "double",
                                                  "to",    "type", "type_as"};
  if (std::find(kCasts.begin(), kCasts.end(), api_name) != kCasts.end()) return std::nullopt;
  std::vector<DType> set;
  std::function<void(const Value&)> walk = [&](const Value& v) {
    if (v.is_list()) {
      for (const auto& x : v.list()) walk(x);
    } else if (v.is_tensor()) {
      const DType d = v.tensor().dtype();
      if ((d == DType::Float16 || d == DType::BFloat16 || d == DType::Float32) &&
          std::find(set.begin(), set.end(), d) == set.end())
        set.push_back(d);
    }
  };
  for (const auto& a : call.args) walk(a);
  for (const auto& [k, v] : call.kwargs) walk(v);
  if (set.empty()) return std::nullopt;
  if (set.size() > 1) return DType::Float32;
  if (set[0] == DType::Float32) {
    if (api_name == "conv1d" || api_name == "conv2d") return DType::Float32;
    return DType::Float64;
  }
  return DType::Float32;
}

// Writes the values of a failing API as .npy files (§6.12 naming; probe saves .npy, not .pt).
void save_values(const Context& ctx, const std::string& prefix, const std::vector<Value>& values) {
  std::size_t counter = 0;
  std::function<void(const Value&)> walk = [&](const Value& v) {
    if (v.is_list()) {
      for (const auto& x : v.list()) walk(x);
      return;
    }
    if (v.is_tensor())
      save_npy((fs::path(ctx.error_data_dir) / (prefix + "." + std::to_string(counter) + ".npy")).string(),
               v.tensor());
    ++counter;
  };
  for (const auto& v : values) walk(v);
}

// DECISIONS D14: what the error bound needs besides bench and device: the API's family, and for the
// families that accumulate the magnitude bench (the bench runner on the inputs' absolute values) of the
// outputs and of the input gradients, with their accumulation lengths. A magnitude bench that cannot run
// leaves the rows to run_ut's rule, and their Message says so.
void error_bound_inputs(const Context& ctx, const std::string& runner_api, const ApiCall& call,
                        const std::vector<Value>& grads_in, bool have_grads, ApiOutputs& out) {
  const ErrorBoundSupport d14 = error_bound_support(runner_api);
  if (!d14.covered) return;
  out.bound_api = runner_api;
  const std::vector<Value> bench_leaves = detail::value_leaves(out.bench);
  for (const Value& v : bench_leaves)
    out.accumulation.push_back(v.is_tensor() ? error_bound_accumulation(runner_api, call, v.tensor().shape())
                                             : 1);
  for (const Value& v : detail::value_leaves(out.device))
    out.exact_scalars.push_back(v.is_tensor() && error_bound_exact_scalars(call, v.tensor().dtype()));
  if (d14.needs_magnitude) {
    try {
      out.magnitude =
          detail::value_leaves(error_bound_magnitude(*ctx.registry, ctx.runner_fw, runner_api, call));
    } catch (const Error&) {
      out.magnitude.clear();
    }
  }
  if (!d14.bounds_backward || !have_grads || bench_leaves.empty() || !bench_leaves[0].is_tensor()) return;
  std::vector<std::pair<std::string, const Tensor*>> inputs;
  for (std::size_t i = 0; i < call.args.size(); ++i)
    positional_tensors(call.args[i], "input." + std::to_string(i), inputs);
  try {
    const std::vector<InputGradient> g =
        error_bound_grad_magnitude(*ctx.registry, ctx.runner_fw, runner_api, call, grads_in);
    for (const auto& in : inputs) {
      auto it = std::find_if(g.begin(), g.end(), [&](const InputGradient& x) { return x.path == in.first; });
      out.grad_magnitude.push_back(it == g.end() ? Value(NoneValue{}) : Value(it->grad));
      out.grad_accumulation.push_back(error_bound_grad_accumulation(
          runner_api, call, bench_leaves[0].tensor().shape(), in.second->shape()));
    }
  } catch (const Error&) {
    out.grad_magnitude.clear();
    out.grad_accumulation.clear();
  }
}

void save_error_data(const Context& ctx, const std::string& full, const ApiCall& call,
                     const std::vector<Value>& bench, const std::vector<Value>& device,
                     const std::vector<Value>& grads_in, const std::vector<Value>& bench_grads,
                     const std::vector<Value>& device_grads) {
  {
    std::lock_guard lock(ctx.error_dir_mutex);
    if (!ctx.error_dir_made) {
      std::error_code ec;
      fs::create_directories(ctx.error_data_dir, ec);
      if (ec)
        throw Error(ErrorKind::Io, "cannot create error data directory: " + ec.message(), ctx.error_data_dir);
      ctx.error_dir_made = true;
    }
  }
  save_values(ctx, full + ".forward.input", call.args);
  std::vector<Value> kw;
  for (const auto& [k, v] : call.kwargs) kw.push_back(v);
  save_values(ctx, full + ".forward.kwargs", kw);
  save_values(ctx, full + ".forward.output.bench", bench);
  save_values(ctx, full + ".forward.output.device", device);
  if (!grads_in.empty()) {
    save_values(ctx, full + ".backward.input", grads_in);
    save_values(ctx, full + ".backward.output.bench", bench_grads);
    save_values(ctx, full + ".backward.output.device", device_grads);
  }
}

}  // namespace

ApiRows emit_rows(const Context& ctx, CheckedApi& api, const DataflowAccess& flow) {
  const std::string& full = api.full;
  const ApiCall& call = *api.call;
  ApiOutputs outputs;
  outputs.full_name = full;
  outputs.bench = api.bench;  // tensors share their storage: copies are cheap
  outputs.device = api.device;
  if (api.have_grads) {
    outputs.bench_grads = api.bench_grads;
    outputs.device_grads = api.device_grads;
  }
  outputs.backward_skip = api.backward_message.empty() ? api.backward_skip : api.backward_message;
  outputs.backward_notes = std::move(api.backward_notes);
  if (ctx.standards->profile() == Profile::MsProbe)
    outputs.msprobe_bench_dtype = msprobe_bench_dtype(api.api_name, call);
  if (ctx.standards->profile() == Profile::Probe && ctx.framework == Framework::PyTorch) {
    error_bound_inputs(ctx, api.runner_api, call, api.grads_in, api.have_grads && !api.exact_backward,
                       outputs);
    // DECISIONS D15: a move, copy or cast to the input's own dtype returns its input's values.
    if (is_identity_api(api.api_name, *api.entry))
      outputs.exact_forward =
          ExactRule{"the input", "a move, copy or cast to the same dtype returns its input"};
    if (api.have_grads) outputs.exact_backward = api.exact_backward;
    // DECISIONS D16: the gradients this API passes to its inputs, checked through their producers.
    if (ctx.dataflow && api.has_backward_entry && api.backward_message.empty() && api.inputs_as_dumped)
      outputs.dataflow = ctx.dataflow->verdict(full, flow);
  }
  ComparedApi compared = ctx.format->compare(outputs, *ctx.standards);
  ApiRows& r = compared.rows;
  if (api.device_backward_failure) {
    mark_direction_error(*ctx.format, r, "backward", api.device_backward_failure->message());
    compared.backward_ok = false;
  }
  const bool fwd_ok = compared.forward_ok, bwd_ok = compared.backward_ok;
  // DECISIONS (generated inputs): in a dump that holds some tensor files, a reader cannot tell from the
  // verdict alone which APIs ran on generated data, so the result row says so.
  const ValueBuilder& vb = *api.inputs;
  if (ctx.statistics_dump_with_files && vb.random() > 0 && r.result) {
    std::string note = "inputs generated from statistics: ";
    for (std::size_t i = 0; i < vb.generated().size(); ++i) note += (i ? ", " : "") + vb.generated()[i];
    note += "; the device side is the device runner on the same inputs";
    std::string& message = r.result->message ? *r.result->message : r.result->message.emplace();
    message = message.empty() || message == " " ? note : message + " " + note;
  }
  if (ctx.options->save_error_data && !ctx.error_data_dir.empty() && r.result && (!fwd_ok || !bwd_ok)) {
    // Saving is a by-product: a failure to save is reported in the summary and never changes the
    // verdict already decided above.
    std::string problem;
    try {
      save_error_data(ctx, full, call, api.bench, api.device, api.grads_in, api.bench_grads,
                      api.device_grads);
    } catch (const Error& e) {
      problem = (e.file().empty() ? "" : e.file() + ": ") + e.message();
    } catch (const std::bad_alloc&) {
      problem = "out of memory";
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (!problem.empty()) {
      std::lock_guard lock(ctx.error_dir_mutex);
      if (ctx.error_data_failures++ == 0) ctx.error_data_problem = full + ": " + problem;
    }
  }
  return std::move(compared.rows);
}

}  // namespace probe::rut
