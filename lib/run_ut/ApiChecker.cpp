// The check of one API (run_ut/ApiChecker.h).
#include "run_ut/ApiChecker.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>

#include "probe/error.h"
#include "run_ut/ApiSelection.h"
#include "run_ut/BackwardMapping.h"
#include "run_ut/BenchCost.h"
#include "run_ut/RowEmission.h"
#include "run_ut/ValueBuilder.h"

namespace probe::rut {

namespace fs = std::filesystem;

ApiCall ApiChecker::dumped_call(const std::string& full, const DumpEntry& forward) const {
  const TensorSource src{ctx_.dump, nullptr};
  ValueBuilder vb(ctx_, src, forward, full);
  ApiCall call;
  if (const DumpNode* in = forward.inputs())
    for (std::size_t i = 0; i < in->items().size(); ++i)
      call.args.push_back(vb.build(in->items()[i], "input." + std::to_string(i)));
  if (const DumpNode* kw = forward.kwargs())
    for (const auto& [key, node] : kw->members()) {
      if (node.kind() == DumpNode::Kind::Value && node.leaf().type == "torch.device") continue;  // §6.7
      call.kwargs.emplace_back(key, vb.build(node, "kwargs." + key));
    }
  if (vb.random() > 0)
    throw Error(ErrorKind::Unsupported, "an input of " + full + " has no tensor file", "", "", full);
  return call;
}

std::vector<Value> ApiChecker::dumped_grads_in(const std::string& full, const DumpEntry& backward) const {
  const TensorSource src{ctx_.dump, nullptr};
  ValueBuilder vb(ctx_, src, backward, full);
  std::vector<Value> out;
  if (const DumpNode* gin = backward.section("input"))
    for (std::size_t i = 0; i < gin->items().size(); ++i)
      out.push_back(vb.build(gin->items()[i], "input." + std::to_string(i)));
  if (vb.random() > 0)
    throw Error(ErrorKind::Unsupported, "a backward input of " + full + " has no tensor file", "", "", full);
  return out;
}

std::optional<Tensor> ApiChecker::dumped_input_grad(const std::string& full, const DumpEntry& forward,
                                                    const DumpEntry& backward, const std::string& path,
                                                    std::string& why) const {
  const std::optional<ApiName> parsed = parse_api_name(full);
  const std::string api_name = parsed ? parsed->name : full;
  const TensorSource src{ctx_.dump, nullptr};
  const ApiCall call = dumped_call(full, forward);
  // A move, copy or cast to the same dtype passes the gradient of its output through: whether it made
  // a node of its own or returned its input (then its output is the tensor itself), the gradient it
  // passes on is its dumped backward input.
  if (is_identity_api(api_name, forward) && path == "input.0") {
    std::vector<Value> gin = dumped_grads_in(full, backward);
    if (!gin.empty() && gin[0].is_tensor()) return gin[0].tensor();
    why = "no dumped backward input";
    return std::nullopt;
  }
  if (composite_backward_reason(api_name, call, full)) {
    why = "its dumped gradient is not with respect to its inputs";
    return std::nullopt;
  }
  auto dumped = dumped_values(ctx_, src, backward, backward.outputs(), full, "output");
  if (!dumped) {
    why = "no dumped backward output";
    return std::nullopt;
  }
  std::vector<std::pair<std::string, const Tensor*>> inputs;
  for (std::size_t i = 0; i < call.args.size(); ++i)
    positional_tensors(call.args[i], "input." + std::to_string(i), inputs);
  auto mapped = map_dumped_grads(*dumped, api_name, call, inputs, why);
  if (!mapped) return std::nullopt;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].first == path) {
      if ((*mapped)[i].is_tensor()) return (*mapped)[i].tensor();
      why = "no dumped gradient maps onto it";
      return std::nullopt;
    }
  why = "it is not a positional tensor input";
  return std::nullopt;
}

ApiRows ApiChecker::check(const std::string& full, const DumpEntry& entry, const TensorSource& src) const {
  ApiRows rows;
  rows.name = full;
  const auto fw = ctx_.framework;
  std::string api_name;
  std::string runner_api = full;
  if (fw == Framework::PyTorch) {
    const std::optional<ApiName> parsed = parse_api_name(full);
    // DECISIONS D13: in the probe profile a `to` that changes the floating dtype is checked (the bench
    // is the exact rounding), and (D15) a `to` that keeps the dtype, a move, is checked to return its
    // input bit for bit; a cast between floating and non-floating dtypes stays SKIP.
    const auto dtypes = dumped_dtypes(entry);
    const bool checked_cast = parsed && parsed->run_ut_form() && parsed->name == "to" &&
                              ctx_.standards->profile() == Profile::Probe && parsed->prefix == "Tensor" &&
                              (floating_cast_dtype(entry) || (dtypes && dtypes->first == dtypes->second)) &&
                              std::find(ctx_.config.black_list.begin(), ctx_.config.black_list.end(), "to") ==
                                  ctx_.config.black_list.end() &&
                              (ctx_.config.white_list.empty() ||
                               std::find(ctx_.config.white_list.begin(), ctx_.config.white_list.end(),
                                         "to") != ctx_.config.white_list.end());
    if (!checked_cast)
      if (auto reason = pytorch_skip_reason(full, parsed, ctx_.config)) return skip(full, *reason);
    api_name = parsed->name;
  } else {
    // mindspore_bench_name() admitted `full`, so it parses with a counter.
    const std::optional<ApiName> parsed = parse_api_name(full);
    api_name = parsed ? parsed->name : full;
  }
  try {
    return run(full, api_name, runner_api, entry, src);
  } catch (const DeviceRunnerFailure& f) {
    ApiRows rows = skip(full, f.message());
    mark_direction_error(*ctx_.format, rows, f.direction, f.message());
    return rows;
  } catch (const Error& e) {
    // Name the file (not its directory: the CSV stays the same on every machine) and the field.
    std::string where;
    if (!e.file().empty()) where += fs::path(e.file()).filename().string() + ": ";
    if (!e.field().empty()) where += e.field() + ": ";
    return skip(full, where + e.message());
  } catch (const std::bad_alloc&) {
    return skip(full, "out of memory while checking this API");
  } catch (const std::exception& e) {
    return skip(full, e.what());
  }
}

ApiRows ApiChecker::skip(const std::string& full, const std::string& message) const {
  return ctx_.format->skip(full, message);
}

ApiRows ApiChecker::run(const std::string& full, const std::string& api_name, const std::string& runner_api,
                        const DumpEntry& entry, const TensorSource& src) const {
  ValueBuilder vb(ctx_, src, entry, full);
  vb.set_api_rules(api_name);
  bool has_out_kwarg = false;
  ApiCall call = build_call(vb, entry, has_out_kwarg);
  if ((api_name == "to" || api_name == "type") && ctx_.framework == Framework::PyTorch)
    name_dumped_cast(entry, call, ctx_.standards->profile() == Profile::Probe);
  // DECISIONS (bounded work): generated inputs are bounded in elements while they are built; what the
  // bench then spends on them is bounded here, for the APIs whose cost outgrows their inputs.
  if (vb.random() > 0 && ctx_.options->max_api_flops > 0)
    if (const auto flops = estimated_bench_flops(api_name, call);
        flops && *flops > ctx_.options->max_api_flops)
      throw Error(ErrorKind::Unsupported,
                  fmt::format("the float64 bench of this API on generated inputs would take about {:.3g} "
                              "floating-point operations, above the limit of {:.3g} (raise it with "
                              "--max_api_flops)",
                              *flops, ctx_.options->max_api_flops),
                  "", "", full);
  // ... and so are the results: repeat, expand, arange, new_full and the like turn a few bytes of
  // arguments into any number of elements. Their size follows from shapes and int arguments alone, so it
  // is refused before the bench allocates anything.
  if (ctx_.options->max_api_elements > 0) {
    const auto limit = static_cast<double>(ctx_.options->max_api_elements);
    if (src.dump->task() != "tensor") {
      if (const auto n = estimated_result_elements(api_name, call); n && *n > limit)
        throw Error(ErrorKind::Unsupported,
                    fmt::format("the result of this API would hold about {:.4g} elements, above the limit of "
                                "{} (raise it with --max_api_elements)",
                                *n, ctx_.options->max_api_elements),
                    "", "", full);
    } else if (const auto n = estimated_result_elements(api_name, call, false); n && *n > limit) {
      // A tensor dump's outputs come with their files, so a result as large as the dumped ones is what
      // the device computed; one larger than them and the limit (a tiny input file and huge repeat
      // sizes, a hostile online frame) is refused like a statistics dump's.
      const double dumped = dumped_output_elements(entry);
      if (*n > dumped)
        throw Error(
            ErrorKind::Unsupported,
            fmt::format("the result of this API would hold about {:.4g} elements, more than its dumped "
                        "outputs ({:.4g}) and the limit of {} (raise it with --max_api_elements)",
                        *n, dumped, ctx_.options->max_api_elements),
            "", "", full);
    }
  }
  // With a backward to check, the forward is evaluated once and its graph kept for the backward.
  std::string bwd_message = backward_message(ctx_, api_name, has_out_kwarg);
  auto bit = ctx_.backward.find(full);
  std::optional<TapedCall> taped;
  std::string taped_error;
  ApiResult bench;
  if (bwd_message.empty() && bit != ctx_.backward.end()) {
    try {
      taped = ctx_.registry->run_forward_taped(ctx_.runner_fw, runner_api, call, RunnerRole::Bench);
      bench = taped->result();
    } catch (const Error& e) {
      taped_error = e.message();  // the plain forward below decides whether the forward itself fails
    }
  }
  if (!taped) bench = ctx_.registry->run_forward(ctx_.runner_fw, runner_api, call, RunnerRole::Bench);
  std::vector<Value> device;
  // DECISIONS (generated inputs): outputs recorded from the real inputs say nothing about generated ones,
  // so an API with any generated input is judged against the device runner on the same generated inputs.
  const bool inputs_as_dumped = vb.random() == 0;
  auto dumped = use_dumped_device(ctx_) && inputs_as_dumped
                    ? dumped_values(ctx_, src, entry, entry.outputs(), full, "output")
                    : std::nullopt;
  if (dumped) {
    device = std::move(*dumped);
  } else {
    try {
      device = ctx_.registry->run_forward(ctx_.runner_fw, runner_api, call, RunnerRole::Device).outputs;
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Unsupported) throw;
      throw DeviceRunnerFailure{"forward", e.message()};
    }
  }
  // Backward (D7): bench VJP in float64 vs the dumped gradients (or the device runner's).
  // D7a: msprobe does not run the backward of an API with several tensor outputs; the probe profile
  // does (the bench feeds every dumped output gradient into one vector-Jacobian product).
  const bool several_outputs =
      bench.outputs.size() > 1 || (bench.outputs.size() == 1 && bench.outputs[0].is_list());
  if (bwd_message.empty() && bit != ctx_.backward.end() && several_outputs &&
      ctx_.standards->profile() == Profile::MsProbe && api_name != "topk" &&
      api_name != "npu_fusion_attention" && ctx_.framework == Framework::PyTorch)
    bwd_message = "Multiple backward is not supported.";
  std::vector<Value> grads_in, bench_grads, device_grads;
  std::vector<std::string> bwd_notes;
  std::string bwd_skip;
  std::optional<DeviceRunnerFailure> device_backward_failure;
  bool have_grads = false;
  std::optional<ExactRule> exact_backward;
  if (bwd_message.empty() && bit != ctx_.backward.end()) {
    try {
      bwd_skip = check_backward(ctx_, runner_api, api_name, call, taped ? &*taped : nullptr, taped_error,
                                entry, *bit->second, src, full, device, inputs_as_dumped, grads_in,
                                bench_grads, device_grads, bwd_notes, exact_backward);
    } catch (const DeviceRunnerFailure& f) {
      bwd_skip = f.message();
      device_backward_failure = f;
    }
    have_grads = bwd_skip.empty();
  }
  taped.reset();  // the forward's graph is no longer needed
  CheckedApi checked;
  checked.full = full;
  checked.api_name = api_name;
  checked.runner_api = runner_api;
  checked.entry = &entry;
  checked.call = &call;
  checked.inputs = &vb;
  checked.inputs_as_dumped = inputs_as_dumped;
  checked.has_backward_entry = bit != ctx_.backward.end();
  checked.bench = std::move(bench.outputs);
  checked.device = std::move(device);
  checked.backward_message = std::move(bwd_message);
  checked.backward_skip = std::move(bwd_skip);
  checked.have_grads = have_grads;
  checked.grads_in = std::move(grads_in);
  checked.bench_grads = std::move(bench_grads);
  checked.device_grads = std::move(device_grads);
  checked.backward_notes = std::move(bwd_notes);
  checked.exact_backward = std::move(exact_backward);
  checked.device_backward_failure = std::move(device_backward_failure);
  return emit_rows(ctx_, checked, *this);
}

}  // namespace probe::rut
