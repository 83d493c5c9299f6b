// run_ut itself: reads the dump, decides per API what to run, builds inputs (dumped tensors or
// random data from statistics), runs the float64 bench and the device side, compares, writes.
#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "probe/dump.h"
#include "probe/error.h"
#include "probe/error_bound.h"
#include "probe/precheck_frame.h"
#include "probe/precision_standard.h"
#include "probe/run_ut.h"
#include "probe/runner.h"
#include "probe/tensor_file.h"
#include "probe/version.h"
#include "run_ut/ApiSelection.h"
#include "run_ut/BenchCost.h"
#include "run_ut/Dataflow.h"
#include "run_ut/DumpedCall.h"
#include "run_ut/Engine.h"
#include "run_ut/OutputFiles.h"
#include "run_ut/ParamGrads.h"
#include "run_ut/RandomInputs.h"
#include "run_ut/RecordChecker.h"
#include "run_ut/RowFormat.h"
#include "run_ut/RunRecord.h"
#include "standards/ErrorBound.h"
#include "support/FileOps.h"
#include "support/Timestamp.h"

namespace probe {
namespace rut {
namespace {

namespace fs = std::filesystem;

std::string stat_text(const Statistic& s) {
  switch (s.kind) {
    case Statistic::Kind::Absent:
    case Statistic::Kind::Null:
      return "None";
    case Statistic::Kind::Bool:
      return s.b ? "True" : "False";
    case Statistic::Kind::Int:
      return std::to_string(s.i);
    case Statistic::Kind::Float:
      return std::to_string(s.d);
  }
  return "None";
}

std::optional<double> stat_number(const Statistic& s) {
  if (!s.is_number()) return std::nullopt;
  return s.as_double();
}

// Where one API's tensors come from: the dump's tensor files, or the blobs of a record received whole
// (online pre-check, probe/run_ut_stream.h). `dump` is the dump (or the record's one-entry header) whose
// task says whether a tensor without data may be generated from its statistics.
struct TensorSource {
  const Dump* dump = nullptr;
  const online::Frame* record = nullptr;
  Tensor load(const DumpEntry& entry, const TensorInfo& info) const {
    return record ? record->tensor(info) : dump->load_tensor(entry, info);
  }
};

// Everything one run shares between worker threads (read-only except the byte counter).
struct Context {
  const Dump* dump = nullptr;
  Framework framework = Framework::PyTorch;
  Framework runner_fw = Framework::PyTorch;
  bool mindtorch = false;
  const RunnerRegistry* registry = nullptr;
  RunUtConfig config;
  const Standards* standards = nullptr;
  const RunUtFormat* format = nullptr;  // the checker's rows, picked once from `framework`
  const RunUtOptions* options = nullptr;
  std::map<std::string, const DumpEntry*> backward;
  const Dataflow* dataflow = nullptr;  // DECISIONS D16: the dump's dataflow (probe profile, tensor dumps)
  bool statistics_dump_with_files = false;  // some tensors real, the rest generated from statistics
  std::string error_data_dir;
  mutable std::atomic<std::uint64_t> bytes{0};
  mutable std::mutex error_dir_mutex;
  mutable bool error_dir_made = false;
  mutable std::size_t error_data_failures = 0;  // guarded by error_dir_mutex
  mutable std::string error_data_problem;       // the first failure, guarded by error_dir_mutex
};

// Builds the Value of a dumped argument: tensors from their file when there is one (real-data
// mode), else generated from the statistics (random mode); mixed dumps mix per tensor.
class ValueBuilder {
 public:
  ValueBuilder(const Context& ctx, const TensorSource& src, const DumpEntry& entry, const std::string& api)
      : ctx_(ctx), src_(src), entry_(entry), api_(api) {}

  /// msprobe's per-API input fixes (§6.5): cross_entropy targets are int64 and non-negative,
  /// histc takes floating input. `api_name` is the base name ("cross_entropy").
  void set_api_rules(const std::string& api_name) {
    if (api_name == "cross_entropy") {
      convert_ = {DType::Int32, DType::Int64};
      min_zero_field_ = "input.1";
    } else if (api_name == "histc") {
      convert_ = {DType::Int64, DType::Float32};
      float_field_ = "input.0";
    }
  }

  Value build(const DumpNode& node, const std::string& field, int depth = 0) {
    if (depth > 400)
      throw Error(ErrorKind::Format, "arguments nested deeper than 400 levels", "", field, api_);
    switch (node.kind()) {
      case DumpNode::Kind::Null:
        return Value(NoneValue{});
      case DumpNode::Kind::Tensor:
        return Value(tensor(node.tensor(), field));
      case DumpNode::Kind::Value:
        return node.leaf().value;
      case DumpNode::Kind::List: {
        std::vector<Value> items;
        const auto& src = node.items();
        for (std::size_t i = 0; i < src.size(); ++i)
          items.push_back(build(src[i], field + "." + std::to_string(i), depth + 1));
        return Value(std::move(items));
      }
      case DumpNode::Kind::Dict:
        if (node.members().empty()) return Value(NoneValue{});  // an object msprobe could not describe
        throw Error(ErrorKind::Unsupported, "dict arguments are not supported", "", field, api_);
    }
    return Value(NoneValue{});
  }

  // Failures name the tensor's file (when it has one) and its field, so a SKIP row says which tensor
  // could not be built, including when memory ran out.
  Tensor tensor(const TensorInfo& info, const std::string& field) {
    try {
      Tensor t = load_or_generate(info, field);
      if (convert_ && t.dtype() == convert_->first) t = t.to(convert_->second);
      return t;
    } catch (const Error& e) {
      if (!e.field().empty()) throw;
      throw Error(e.kind(), e.message(), e.file().empty() ? info.data_name : e.file(), field, api_);
    } catch (const std::bad_alloc&) {
      throw Error(ErrorKind::Unsupported,
                  std::string("out of memory while ") + (info.has_file() ? "reading" : "generating") +
                      " this tensor (shape " + shape_to_string(info.shape) + ", " + info.dtype_name + ")",
                  info.data_name, field, api_);
    }
  }

  Tensor load_or_generate(const TensorInfo& info, const std::string& field) {
    if (!info.dtype)
      throw Error(ErrorKind::Unsupported, "dtype " + info.dtype_name + " is not supported", "", field, api_);
    if (info.has_file()) {
      Tensor t = src_.load(entry_, info);
      if (t.shape() != info.shape)
        throw Error(ErrorKind::Format,
                    "tensor file has shape " + shape_to_string(t.shape()) + " but dump.json says " +
                        shape_to_string(info.shape),
                    info.data_name, field, api_);
      if (!info.file_dtype_fits(t.dtype()))
        throw Error(
            ErrorKind::Format,
            "tensor file holds " + std::string(name(t.dtype())) + " but dump.json says " + info.dtype_name,
            info.data_name, field, api_);
      ctx_.bytes += t.nbytes();
      ++real_;
      // bfloat16 tensors saved as .npy come back as float32: restore the dumped dtype.
      return t.dtype() == *info.dtype ? t : t.to(*info.dtype);
    }
    // DECISIONS (generated inputs): generated data stands in for tensors only in statistics dumps. In a
    // tensor dump a tensor without its file is a damaged dump: guessing it from Max/Min would judge the API
    // on other inputs than the device saw.
    // msprobe writes no file for an empty tensor: there is nothing to guess.
    if (src_.dump->task() == "tensor" && probe::numel(info.shape) != 0)
      throw Error(ErrorKind::Format,
                  "tensor dump without a file for this tensor (data_name missing or empty); inputs are "
                  "generated from statistics only in statistics dumps",
                  "", field, api_);
    const auto numel = static_cast<std::uint64_t>(probe::numel(info.shape));
    generated_elements_ += numel;
    if (ctx_.options->max_api_elements && generated_elements_ > ctx_.options->max_api_elements)
      throw Error(ErrorKind::Unsupported,
                  "generated inputs of this API would hold " + std::to_string(generated_elements_) +
                      " elements, above the limit of " + std::to_string(ctx_.options->max_api_elements) +
                      " (raise it with --max_api_elements)",
                  "", field, api_);
    ++random_;
    generated_.push_back(field);
    RandomSpec s;
    s.dtype = *info.dtype;
    if (field == float_field_ &&
        (s.dtype == DType::Int8 || s.dtype == DType::Int32 || s.dtype == DType::Int64))
      s.dtype = DType::Float32;
    s.shape = info.shape;
    const Statistic& lo = info.min_except_inf_nan.is_number() ? info.min_except_inf_nan : info.min;
    const Statistic& hi = info.max_except_inf_nan.is_number() ? info.max_except_inf_nan : info.max;
    s.low = stat_number(lo);
    s.high = stat_number(hi);
    s.low_origin = stat_number(info.min);
    s.high_origin = stat_number(info.max);
    s.min_text = stat_text(info.min);
    s.max_text = stat_text(info.max);
    if (field == min_zero_field_ && s.low && *s.low <= 0) s.low = 0.0;  // class indices are never negative
    return random_tensor(s, derive_seed(ctx_.options->seed, api_, field));
  }

  int real() const { return real_; }
  int random() const { return random_; }
  /// Fields of the tensors generated from statistics, in build order.
  const std::vector<std::string>& generated() const { return generated_; }

 private:
  const Context& ctx_;
  const TensorSource& src_;
  const DumpEntry& entry_;
  std::string api_;
  int real_ = 0, random_ = 0;
  std::vector<std::string> generated_;
  std::uint64_t generated_elements_ = 0;
  std::optional<std::pair<DType, DType>> convert_;
  std::string min_zero_field_, float_field_;
};

// Elements of the tensors the dump records as the entry's outputs (their descriptors' shapes).
double dumped_output_elements(const DumpEntry& entry) {
  const DumpNode* list = entry.outputs();
  if (!list) return 0;
  std::vector<const TensorInfo*> tensors;
  list->collect_tensors(tensors);
  double total = 0;
  for (const auto* t : tensors) {
    double n = 1;
    for (auto d : t->shape) n *= static_cast<double>(d);
    total += n;
  }
  return total;
}

// The dumped outputs as device values, or nullopt when some tensor has no file (then the device
// runner computes them). DECISIONS D6. In a tensor dump the device side is the dumped output: without
// it (no "output", an empty one, a descriptor without data_name) throws Format naming the field, and
// that direction is SKIP rather than judged against the device runner.
std::optional<std::vector<Value>> dumped_values(const Context& ctx, const TensorSource& src,
                                                const DumpEntry& entry, const DumpNode* list,
                                                const std::string& api, const std::string& field) {
  const bool tensor_dump = src.dump->task() == "tensor";
  auto missing = [&](const std::string& where, const std::string& what) {
    throw Error(ErrorKind::Format,
                "tensor dump without " + what +
                    "; the device side of a tensor dump is the dumped output, so this is not compared",
                "", where, api);
  };
  if (!list) {
    if (tensor_dump) missing(field, "an \"" + field + "\" section in " + entry.key);
    return std::nullopt;
  }
  std::vector<const TensorInfo*> tensors;
  list->collect_tensors(tensors);
  if (tensors.empty() && list->items().empty()) {
    if (tensor_dump) missing(field, "any value in " + entry.key + "'s \"" + field + "\"");
    return std::nullopt;
  }
  for (const auto* t : tensors) {
    if (t->has_file()) continue;
    // msprobe writes no file for an empty tensor: the descriptor says all there is.
    if (tensor_dump && t->dtype && probe::numel(t->shape) != 0)
      missing(t->field, "a file for this output tensor (data_name missing or empty)");
    if (!tensor_dump) return std::nullopt;
  }
  ValueBuilder vb(ctx, src, entry, api);
  std::vector<Value> out;
  for (std::size_t i = 0; i < list->items().size(); ++i)
    out.push_back(vb.build(list->items()[i], field + "." + std::to_string(i)));
  return out;
}

bool use_dumped_device(const Context& ctx) { return ctx.options->device_side == DeviceSide::Auto; }

// Flattened positional tensor arguments with their dump paths ("input.0", "input.1.2").
void positional_tensors(const Value& v, const std::string& path,
                        std::vector<std::pair<std::string, const Tensor*>>& out) {
  if (v.is_tensor()) {
    out.emplace_back(path, &v.tensor());
  } else if (v.is_list()) {
    const auto& items = v.list();
    for (std::size_t i = 0; i < items.size(); ++i)
      positional_tensors(items[i], path + "." + std::to_string(i), out);
  }
}

// The dumped requires_grad of the positional input at `path` ("input.1", "input.2.0"); nullopt when
// the dump does not record it (MindSpore) or the path is not a tensor.
std::optional<bool> dumped_requires_grad(const DumpEntry& entry, const std::string& path) {
  const DumpNode* node = entry.inputs();
  std::size_t pos = path.find('.');
  while (node && pos != std::string::npos) {
    std::size_t next = path.find('.', pos + 1);
    std::size_t idx = std::stoul(path.substr(pos + 1, next == std::string::npos ? next : next - pos - 1));
    if (node->kind() != DumpNode::Kind::List || idx >= node->items().size()) return std::nullopt;
    node = &node->items()[idx];
    pos = next;
  }
  if (!node || !node->is_tensor()) return std::nullopt;
  return node->tensor().requires_grad;
}

// The ranks of the first two arguments when they are tensors (-1 otherwise), for the node rules.
std::int64_t arg_rank(const ApiCall& call, std::size_t i) {
  if (i >= call.args.size() || !call.args[i].is_tensor()) return -1;
  return static_cast<std::int64_t>(call.args[i].tensor().shape().size());
}

std::optional<std::string> reshape_node(const std::string& api_name, const ApiCall& call) {
  return rut::reshape_node(api_name, arg_rank(call, 0), arg_rank(call, 1));
}

std::optional<std::string> composite_backward_reason(const std::string& api_name, const ApiCall& call,
                                                     const std::string& full) {
  return rut::composite_backward_reason(api_name, arg_rank(call, 0), arg_rank(call, 1), full);
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

// The dtype of the first dumped input and of the first dumped output, when both are tensors with one.
std::optional<std::pair<DType, DType>> dumped_dtypes(const DumpEntry& entry) {
  const DumpNode* in = entry.inputs();
  const DumpNode* out = entry.outputs();
  if (!in || !out || in->items().empty() || out->items().empty()) return std::nullopt;
  const DumpNode& x = in->items()[0];
  const DumpNode& y = out->items()[0];
  if (!x.is_tensor() || !y.is_tensor() || !x.tensor().dtype || !y.tensor().dtype) return std::nullopt;
  return std::pair{*x.tensor().dtype, *y.tensor().dtype};
}

// DECISIONS D15: the output of a move, copy or cast to the input's own dtype is its input's values.
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

// The floating dtype a cast API produced when it differs from its (floating) input's dtype, from the
// dumped input and output (DECISIONS D13); nullopt for device moves and non-floating casts.
std::optional<DType> floating_cast_dtype(const DumpEntry& entry) {
  const auto dtypes = dumped_dtypes(entry);
  if (!dtypes) return std::nullopt;
  const auto [from, to] = *dtypes;
  if (!is_floating(from) || !is_floating(to) || from == to) return std::nullopt;
  return to;
}

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

// The dumped call's positional and keyword arguments, as the runners take them.
ApiCall build_call(ValueBuilder& vb, const DumpEntry& entry, bool& has_out_kwarg) {
  ApiCall call;
  if (const DumpNode* in = entry.inputs()) {
    const auto& items = in->items();
    for (std::size_t i = 0; i < items.size(); ++i)
      call.args.push_back(vb.build(items[i], "input." + std::to_string(i)));
  }
  if (const DumpNode* kw = entry.kwargs()) {
    for (const auto& [key, node] : kw->members()) {
      if (key == "out") has_out_kwarg = true;
      if (node.kind() == DumpNode::Kind::Value && node.leaf().type == "torch.device") continue;  // §6.7
      call.kwargs.emplace_back(key, vb.build(node, "kwargs." + key));
    }
  }
  return call;
}

// msprobe writes a positional torch.dtype as {} (no analyzer for it): the dumped output's dtype says which
// cast a `to`/`type` ran, and becomes its dtype keyword. `same_dtype`: also for a move or a cast to the
// input's own dtype.
void name_dumped_cast(const DumpEntry& entry, ApiCall& call, bool same_dtype) {
  auto is_dtype = [](const Value& v) {
    return v.kind() == Value::Kind::DType || v.kind() == Value::Kind::String;
  };
  bool named = std::any_of(call.args.begin() + (call.args.empty() ? 0 : 1), call.args.end(), is_dtype) ||
               std::any_of(call.kwargs.begin(), call.kwargs.end(),
                           [&](const auto& kv) { return kv.first == "dtype" && !kv.second.is_none(); });
  std::optional<DType> dt = floating_cast_dtype(entry);
  // DECISIONS D15: a move or a cast to the input's own dtype, in the probe profile (same_dtype).
  if (const auto dtypes = dumped_dtypes(entry);
      !dt && dtypes && dtypes->first == dtypes->second && same_dtype)
    dt = dtypes->second;
  if (!named && dt) {
    call.kwargs.erase(std::remove_if(call.kwargs.begin(), call.kwargs.end(),
                                     [](const auto& kv) { return kv.first == "dtype"; }),
                      call.kwargs.end());
    call.kwargs.emplace_back("dtype", Value(*dt));
  }
}

// DECISIONS D22: a device runner that failed (anything but Error(Unsupported), its "cannot evaluate this
// call") makes the API `error` with the failure's text, never SKIP, so that a gate counting errors fails on
// a crashing kernel. The bench side's failures stay SKIP: they say nothing about the device.
struct DeviceRunnerFailure {
  std::string direction, what;
  std::string message() const { return "the device runner failed in the " + direction + ": " + what; }
};

class ApiChecker final : public DataflowAccess {
 public:
  explicit ApiChecker(const Context& ctx) : ctx_(ctx) {}

  // DataflowAccess (DECISIONS D16): the dumped values the dataflow check reads, built as the API's own
  // check builds them.
  ApiCall dumped_call(const std::string& full, const DumpEntry& forward) const override {
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

  std::vector<Value> dumped_grads_in(const std::string& full, const DumpEntry& backward) const override {
    const TensorSource src{ctx_.dump, nullptr};
    ValueBuilder vb(ctx_, src, backward, full);
    std::vector<Value> out;
    if (const DumpNode* gin = backward.section("input"))
      for (std::size_t i = 0; i < gin->items().size(); ++i)
        out.push_back(vb.build(gin->items()[i], "input." + std::to_string(i)));
    if (vb.random() > 0)
      throw Error(ErrorKind::Unsupported, "a backward input of " + full + " has no tensor file", "", "",
                  full);
    return out;
  }

  std::optional<Tensor> dumped_input_grad(const std::string& full, const DumpEntry& forward,
                                          const DumpEntry& backward, const std::string& path,
                                          std::string& why) const override {
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

  ApiRows check(const std::string& full, const DumpEntry& entry, const TensorSource& src) const {
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
                                std::find(ctx_.config.black_list.begin(), ctx_.config.black_list.end(),
                                          "to") == ctx_.config.black_list.end() &&
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

 private:
  ApiRows skip(const std::string& full, const std::string& message) const {
    return ctx_.format->skip(full, message);
  }

  ApiRows run(const std::string& full, const std::string& api_name, const std::string& runner_api,
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
          throw Error(
              ErrorKind::Unsupported,
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
    std::string bwd_message = backward_message(api_name, has_out_kwarg);
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
        bwd_skip = backward(runner_api, api_name, call, taped ? &*taped : nullptr, taped_error, entry,
                            *bit->second, src, full, device, inputs_as_dumped, grads_in, bench_grads,
                            device_grads, bwd_notes, exact_backward);
      } catch (const DeviceRunnerFailure& f) {
        bwd_skip = f.message();
        device_backward_failure = f;
      }
      have_grads = bwd_skip.empty();
    }
    taped.reset();  // the forward's graph is no longer needed
    ApiOutputs outputs;
    outputs.full_name = full;
    outputs.bench = bench.outputs;  // tensors share their storage: copies are cheap
    outputs.device = device;
    if (have_grads) {
      outputs.bench_grads = bench_grads;
      outputs.device_grads = device_grads;
    }
    outputs.backward_skip = bwd_message.empty() ? bwd_skip : bwd_message;
    outputs.backward_notes = std::move(bwd_notes);
    if (ctx_.standards->profile() == Profile::MsProbe)
      outputs.msprobe_bench_dtype = msprobe_bench_dtype(api_name, call);
    if (ctx_.standards->profile() == Profile::Probe && ctx_.framework == Framework::PyTorch) {
      error_bound_inputs(runner_api, call, grads_in, have_grads && !exact_backward, outputs);
      // DECISIONS D15: a move, copy or cast to the input's own dtype returns its input's values.
      if (is_identity_api(api_name, entry))
        outputs.exact_forward =
            ExactRule{"the input", "a move, copy or cast to the same dtype returns its input"};
      if (have_grads) outputs.exact_backward = exact_backward;
      // DECISIONS D16: the gradients this API passes to its inputs, checked through their producers.
      if (ctx_.dataflow && bit != ctx_.backward.end() && bwd_message.empty() && inputs_as_dumped)
        outputs.dataflow = ctx_.dataflow->verdict(full, *this);
    }
    ComparedApi compared = ctx_.format->compare(outputs, *ctx_.standards);
    ApiRows& r = compared.rows;
    if (device_backward_failure) {
      mark_direction_error(*ctx_.format, r, "backward", device_backward_failure->message());
      compared.backward_ok = false;
    }
    const bool fwd_ok = compared.forward_ok, bwd_ok = compared.backward_ok;
    // DECISIONS (generated inputs): in a dump that holds some tensor files, a reader cannot tell from the
    // verdict alone which APIs ran on generated data, so the result row says so.
    if (ctx_.statistics_dump_with_files && vb.random() > 0 && r.result) {
      std::string note = "inputs generated from statistics: ";
      for (std::size_t i = 0; i < vb.generated().size(); ++i) note += (i ? ", " : "") + vb.generated()[i];
      note += "; the device side is the device runner on the same inputs";
      std::string& message = r.result->message ? *r.result->message : r.result->message.emplace();
      message = message.empty() || message == " " ? note : message + " " + note;
    }
    if (ctx_.options->save_error_data && !ctx_.error_data_dir.empty() && r.result && (!fwd_ok || !bwd_ok)) {
      // Saving is a by-product: a failure to save is reported in the summary and never changes the
      // verdict already decided above.
      std::string problem;
      try {
        save_error_data(full, call, bench.outputs, device, grads_in, bench_grads, device_grads);
      } catch (const Error& e) {
        problem = (e.file().empty() ? "" : e.file() + ": ") + e.message();
      } catch (const std::bad_alloc&) {
        problem = "out of memory";
      } catch (const std::exception& e) {
        problem = e.what();
      }
      if (!problem.empty()) {
        std::lock_guard lock(ctx_.error_dir_mutex);
        if (ctx_.error_data_failures++ == 0) ctx_.error_data_problem = full + ": " + problem;
      }
    }
    return std::move(compared.rows);
  }

  // DECISIONS D14: what the error bound needs besides bench and device: the API's family, and for the
  // families that accumulate the magnitude bench (the bench runner on the inputs' absolute values) of the
  // outputs and of the input gradients, with their accumulation lengths. A magnitude bench that cannot run
  // leaves the rows to run_ut's rule, and their Message says so.
  void error_bound_inputs(const std::string& runner_api, const ApiCall& call,
                          const std::vector<Value>& grads_in, bool have_grads, ApiOutputs& out) const {
    const ErrorBoundSupport d14 = error_bound_support(runner_api);
    if (!d14.covered) return;
    out.bound_api = runner_api;
    const std::vector<Value> bench_leaves = detail::value_leaves(out.bench);
    for (const Value& v : bench_leaves)
      out.accumulation.push_back(
          v.is_tensor() ? error_bound_accumulation(runner_api, call, v.tensor().shape()) : 1);
    if (d14.needs_magnitude) {
      try {
        out.magnitude =
            detail::value_leaves(error_bound_magnitude(*ctx_.registry, ctx_.runner_fw, runner_api, call));
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
          error_bound_grad_magnitude(*ctx_.registry, ctx_.runner_fw, runner_api, call, grads_in);
      for (const auto& in : inputs) {
        auto it =
            std::find_if(g.begin(), g.end(), [&](const InputGradient& x) { return x.path == in.first; });
        out.grad_magnitude.push_back(it == g.end() ? Value(NoneValue{}) : Value(it->grad));
        out.grad_accumulation.push_back(error_bound_grad_accumulation(
            runner_api, call, bench_leaves[0].tensor().shape(), in.second->shape()));
      }
    } catch (const Error&) {
      out.grad_magnitude.clear();
      out.grad_accumulation.clear();
    }
  }

  std::string backward_message(const std::string& api_name, bool has_out_kwarg) const {
    if (ctx_.framework != Framework::PyTorch) return {};
    std::string m;
    if (has_out_kwarg)
      m += "function with out=... arguments don't support automatic differentiation, skip backward.";
    if (api_name == "repeat_interleave") m += "This API does not have backward input data, skip backward.";
    if (api_name == "masked_select") m += "This API does not support backward ut, skip backward.";
    return m;
  }

  // DECISIONS D7, D7a: the dumped backward `output` tensors are the device gradients when they map onto
  // the API's tensor inputs unambiguously (by position, else by unique shape), and the bench computes
  // gradients only for inputs the dump says require one. Returns a SKIP message saying in plain words
  // why nothing was compared, or "" when both gradient lists were produced; `notes[i]` then explains
  // an input gradient that was not compared.
  // `taped` (may be null) is the bench forward kept for this backward; `taped_error` why it could not be.
  std::string backward(const std::string& runner_api, const std::string& api_name, const ApiCall& call,
                       const TapedCall* taped, const std::string& taped_error, const DumpEntry& fentry,
                       const DumpEntry& bentry, const TensorSource& src, const std::string& full,
                       const std::vector<Value>& device_outputs, bool inputs_as_dumped,
                       std::vector<Value>& grads_in, std::vector<Value>& bench_grads,
                       std::vector<Value>& device_grads, std::vector<std::string>& notes,
                       std::optional<ExactRule>& exact) const {
    ValueBuilder vb(ctx_, src, bentry, full);
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
    const bool dumped_device = use_dumped_device(ctx_) && inputs_as_dumped;
    // The node rules describe PyTorch's autograd; MindSpore dumps record gradients differently.
    const bool torch_nodes = ctx_.framework == Framework::PyTorch && !ctx_.mindtorch;
    if (dumped_device && torch_nodes) {
      const bool probe = ctx_.standards->profile() == Profile::Probe;
      if (auto why = composite_backward_reason(api_name, call, full)) {
        if (probe && reshape_node(api_name, call))
          return reshape_gradient(full, *reshape_node(api_name, call), *why, src, bentry, grads_in,
                                  bench_grads, device_grads, notes, exact);
        return *why;
      }
      const std::string unchanged = full +
                                    " returned its input unchanged, so the dumped gradient belongs to " +
                                    "the API that produced that input; backward not compared";
      if (probe && is_identity_api(api_name, fentry))
        return passed_through(api_name, unchanged, src, bentry, grads_in, call, device_outputs, full,
                              bench_grads, device_grads, notes, exact);
      if (returns_its_input(api_name, call, device_outputs)) return unchanged;
    }
    std::vector<InputGradient> bench;
    if (!taped_error.empty()) return taped_error;
    try {
      bench =
          taped ? taped->backward(grads_in)
                : ctx_.registry->run_backward(ctx_.runner_fw, runner_api, call, grads_in, RunnerRole::Bench);
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
      if (dumped_device) dumped = dumped_values(ctx_, src, bentry, bentry.outputs(), full, "output");
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
        by_path(ctx_.registry->run_backward(ctx_.runner_fw, runner_api, call, grads_in, RunnerRole::Device),
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

  // DECISIONS D15: the node msprobe hooked for matmul / linear is the reshape of the GEMM's result: its
  // one outgoing gradient must be its one incoming gradient reshaped, exactly. Any other form of the
  // dumped entry keeps D7's SKIP (`why`).
  std::string reshape_gradient(const std::string& full, const std::string& where, const std::string& why,
                               const TensorSource& src, const DumpEntry& bentry,
                               const std::vector<Value>& grads_in, std::vector<Value>& bench_grads,
                               std::vector<Value>& device_grads, std::vector<std::string>& notes,
                               std::optional<ExactRule>& exact) const {
    auto dumped = dumped_values(ctx_, src, bentry, bentry.outputs(), full, "output");
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
  std::string passed_through(const std::string& api_name, const std::string& unchanged,
                             const TensorSource& src, const DumpEntry& bentry,
                             const std::vector<Value>& grads_in, const ApiCall& call,
                             const std::vector<Value>& device_outputs, const std::string& full,
                             std::vector<Value>& bench_grads, std::vector<Value>& device_grads,
                             std::vector<std::string>& notes, std::optional<ExactRule>& exact) const {
    auto dumped = dumped_values(ctx_, src, bentry, bentry.outputs(), full, "output");
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

  static Tensor transpose_2d(const Tensor& t) {
    const auto& sh = t.shape();
    const std::int64_t r = sh[0], c = sh[1];
    std::vector<double> v = t.to_doubles(), out(v.size());
    for (std::int64_t i = 0; i < r; ++i)
      for (std::int64_t j = 0; j < c; ++j)
        out[static_cast<std::size_t>(j * r + i)] = v[static_cast<std::size_t>(i * c + j)];
    return Tensor::from_values<double>(out, Shape{c, r}).to(t.dtype());
  }

  // Pairs the dumped gradients with the positional tensor inputs, or explains in `why` why they
  // cannot be paired (D7a: a gradient that maps onto no input is never compared with anything).
  static std::optional<std::vector<Value>> map_dumped_grads(
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
      bool flat =
          std::all_of(call.args.begin(), call.args.end(), [](const Value& v) { return !v.is_list(); });
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

  void save_error_data(const std::string& full, const ApiCall& call, const std::vector<Value>& bench,
                       const std::vector<Value>& device, const std::vector<Value>& grads_in,
                       const std::vector<Value>& bench_grads, const std::vector<Value>& device_grads) const {
    {
      std::lock_guard lock(ctx_.error_dir_mutex);
      if (!ctx_.error_dir_made) {
        std::error_code ec;
        fs::create_directories(ctx_.error_data_dir, ec);
        if (ec)
          throw Error(ErrorKind::Io, "cannot create error data directory: " + ec.message(),
                      ctx_.error_data_dir);
        ctx_.error_dir_made = true;
      }
    }
    save_values(ctx_, full + ".forward.input", call.args);
    std::vector<Value> kw;
    for (const auto& [k, v] : call.kwargs) kw.push_back(v);
    save_values(ctx_, full + ".forward.kwargs", kw);
    save_values(ctx_, full + ".forward.output.bench", bench);
    save_values(ctx_, full + ".forward.output.device", device);
    if (!grads_in.empty()) {
      save_values(ctx_, full + ".backward.input", grads_in);
      save_values(ctx_, full + ".backward.output.bench", bench_grads);
      save_values(ctx_, full + ".backward.output.device", device_grads);
    }
  }

  const Context& ctx_;
};

bool stat_equal(const Statistic& x, const Statistic& y) {
  if (x.kind != y.kind) return false;
  switch (x.kind) {
    case Statistic::Kind::Bool:
      return x.b == y.b;
    case Statistic::Kind::Int:
      return x.i == y.i;
    case Statistic::Kind::Float:
      return x.d == y.d;  // NaN != NaN, as Python compares floats
    default:
      return true;
  }
}

bool node_equal(const DumpNode& a, const DumpNode& b, bool ignore_minmax) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case DumpNode::Kind::Null:
      return true;
    case DumpNode::Kind::Tensor: {
      const TensorInfo &x = a.tensor(), &y = b.tensor();
      return x.type == y.type && x.dtype_name == y.dtype_name && x.shape == y.shape &&
             (ignore_minmax || (stat_equal(x.max, y.max) && stat_equal(x.min, y.min))) &&
             stat_equal(x.mean, y.mean) && stat_equal(x.norm, y.norm) &&
             stat_equal(x.max_except_inf_nan, y.max_except_inf_nan) &&
             stat_equal(x.min_except_inf_nan, y.min_except_inf_nan) && x.requires_grad == y.requires_grad &&
             x.data_name == y.data_name && x.md5 == y.md5;
    }
    case DumpNode::Kind::Value:
      return a.leaf().type == b.leaf().type && a.leaf().value.kind() == b.leaf().value.kind() &&
             a.leaf().value.to_string() == b.leaf().value.to_string();
    case DumpNode::Kind::List: {
      const auto &x = a.items(), &y = b.items();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!node_equal(x[i], y[i], false)) return false;
      return true;
    }
    case DumpNode::Kind::Dict: {
      const auto &x = a.members(), &y = b.members();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (x[i].first != y[i].first || !node_equal(x[i].second, y[i].second, false)) return false;
      return true;
    }
  }
  return false;
}

// §6.4: msprobe's signature keeps only the dict elements of input_args (tensors and typed leaves),
// without their Max/Min, and the complete input_kwargs.
bool filter_equal(const DumpEntry& a, const DumpEntry& b) {
  auto dict_args = [](const DumpEntry& e) {
    std::vector<const DumpNode*> v;
    if (const DumpNode* in = e.section("input_args"))
      for (const auto& n : in->items())
        if (n.is_tensor() || n.kind() == DumpNode::Kind::Dict ||
            (n.kind() == DumpNode::Kind::Value && !n.leaf().type.empty()))
          v.push_back(&n);
    return v;
  };
  auto x = dict_args(a), y = dict_args(b);
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!node_equal(*x[i], *y[i], true)) return false;
  const DumpNode *ka = a.kwargs(), *kb = b.kwargs();
  if (!ka || !kb) return ka == kb;
  return node_equal(*ka, *kb, false);
}

// What this run's verdicts depend on, for the run record a resume checks (RunRecord.h). The tensor files
// enter by name and size only: re-reading their data would cost as much as the run, and a dump with other
// data has another dump.json (its Max/Min/Norm statistics).
RunFingerprint run_fingerprint(const RunUtOptions& options, const Standards& standards, const Dump& dump,
                               Framework framework) {
  RunFingerprint fp;
  fp.push_back({"probe_version", probe::version()});
  fp.push_back(
      {"dump_json", hex64(fnv1a(detail::read_whole_file(options.api_info, "cannot open dump.json", true)))});
  std::uint64_t h = kFnvBasis;
  std::size_t files = 0;
  const fs::path dir = dump.tensor_dir();
  for (const DumpEntry& e : dump.entries())
    for (const TensorInfo* t : e.tensors()) {
      if (!t->has_file()) continue;
      std::error_code ec;
      const auto size = fs::file_size(dir / t->data_name, ec);
      h = fnv1a(t->data_name, h);
      h = fnv1a(ec ? std::string("\0missing\n") : "\0" + std::to_string(size) + "\n", h);
      ++files;
    }
  fp.push_back({"tensor_files", std::to_string(files) + " files, " + hex64(h)});
  fp.push_back({"framework", std::string(to_string(framework))});
  fp.push_back({"profile", std::string(to_string(standards.profile()))});
  fp.push_back({"device_runner", options.device_side == DeviceSide::Runner ? "emulated" : "auto"});
  fp.push_back({"filter_api", options.filter_api ? "true" : "false"});
  fp.push_back({"config", options.config_path.empty()
                              ? std::string("none")
                              : hex64(fnv1a(detail::read_whole_file(options.config_path, "cannot open config",
                                                                    true)))});
  fp.push_back({"seed", std::to_string(options.seed)});
  fp.push_back({"max_api_elements", std::to_string(options.max_api_elements)});
  fp.push_back({"max_api_flops", fmt::format("{}", options.max_api_flops)});
  return fp;
}

}  // namespace

DumpedCall build_dumped_call(const Dump& dump, const DumpEntry& entry, const std::string& full,
                             const RunUtOptions& options) {
  Context ctx;
  ctx.dump = &dump;
  ctx.options = &options;
  TensorSource src;
  src.dump = &dump;
  ValueBuilder vb(ctx, src, entry, full);
  const std::optional<ApiName> parsed = parse_api_name(full);
  if (parsed) vb.set_api_rules(parsed->name);
  bool has_out_kwarg = false;
  DumpedCall out;
  out.call = build_call(vb, entry, has_out_kwarg);
  if (parsed && (parsed->name == "to" || parsed->name == "type")) name_dumped_cast(entry, out.call, false);
  out.generated = vb.generated();
  return out;
}

}  // namespace rut

RunUtSummary run_ut(const RunUtOptions& options, const RunUtProgressFn& progress, std::stop_token stop) {
  const RunnerRegistry registry = RunnerRegistry::with_builtins();
  const Standards standards = Standards::builtin(options.profile);
  return run_ut(options, registry, standards, progress, std::move(stop));
}

RunUtSummary run_ut(const RunUtOptions& options, const RunnerRegistry& registry,
                    const Standards& given_standards, const RunUtProgressFn& progress, std::stop_token stop) {
  using namespace rut;
  Standards with_histograms = given_standards;
  with_histograms.error_histograms = options.error_histograms || given_standards.error_histograms;
  const Standards& standards = with_histograms;
  if (options.api_info.empty()) throw Error(ErrorKind::InvalidArgument, "-api_info DUMP.json is required");
  if (options.framework && *options.framework != Framework::PyTorch &&
      *options.framework != Framework::MindSpore)
    throw Error(ErrorKind::InvalidArgument,
                "run_ut checks as pytorch or mindspore, not " + std::string(to_string(*options.framework)),
                {}, "framework");
  std::error_code ec;
  if (fs::path(options.api_info).extension() != ".json")
    throw Error(ErrorKind::InvalidArgument, "-api_info must name a .json file", options.api_info);
  if (!fs::is_regular_file(options.api_info, ec))
    throw Error(ErrorKind::Io, "dump.json does not exist or is not a regular file", options.api_info);

  Context ctx;
  ctx.options = &options;
  if (!options.config_path.empty()) ctx.config = load_run_ut_config(options.config_path);
  Dump dump = Dump::open(options.api_info);
  ctx.dump = &dump;
  // DECISIONS (silent accepts): a task or framework run_ut does not know would decide how inputs are
  // built on a guess; refuse it, naming the field.
  if (const std::string& task = dump.task();
      !task.empty() && task != "statistics" && task != "tensor" && task != "overflow_check")
    throw Error(ErrorKind::Format,
                "run_ut checks statistics or tensor dumps; this dump's task is '" + task + "'",
                options.api_info, "task");
  if (!dump.framework_field().empty() && dump.framework() == probe::Framework::Unknown && !options.framework)
    throw Error(ErrorKind::Format,
                "unknown framework '" + dump.framework_field() +
                    "' (pytorch, mindspore or mindtorch); pass -f pytorch|mindspore to choose the checker",
                options.api_info, "framework");
  ctx.mindtorch = dump.framework() == probe::Framework::MindTorch;
  if (options.framework) {
    ctx.framework = *options.framework;
  } else {
    ctx.framework =
        dump.framework() == probe::Framework::MindSpore ? Framework::MindSpore : Framework::PyTorch;
  }
  ctx.runner_fw =
      ctx.framework == Framework::MindSpore && !ctx.mindtorch ? Framework::MindSpore : Framework::PyTorch;
  ctx.registry = &registry;
  ctx.standards = &standards;
  ctx.format = &run_ut_format(ctx.framework);
  if (dump.task() != "tensor")
    for (const DumpEntry& e : dump.entries()) {
      const auto tensors = e.tensors();
      if (std::any_of(tensors.begin(), tensors.end(), [](const TensorInfo* t) { return t->has_file(); })) {
        ctx.statistics_dump_with_files = true;
        break;
      }
    }

  // The APIs to check, in dump order.
  std::vector<std::string> names;
  std::vector<const DumpEntry*> entries;
  auto maps = dump.run_ut_maps();
  for (const auto& [name, e] : maps.backward) ctx.backward.emplace(name, e);
  std::map<std::string, std::vector<const DumpEntry*>> kept_by_base;
  for (const auto& [name, e] : maps.forward) {
    if (ctx.framework == Framework::MindSpore) {
      if (!mindspore_bench_name(name, ctx.mindtorch)) continue;  // §7.1: not checkable, silently ignored
    }
    if (options.filter_api) {
      std::string base = name.substr(0, name.rfind('.'));
      auto& kept = kept_by_base[base];
      bool dup = std::any_of(kept.begin(), kept.end(),
                             // Captures a copy: clang 14 cannot capture structured bindings.
                             [&, entry = e](const DumpEntry* k) { return k && filter_equal(*k, *entry); });
      if (dup) continue;
      kept.push_back(e);
    }
    names.push_back(name);
    entries.push_back(e);
  }

  EngineConfig cfg;
  detail::LockedFile lock;  // held until the run ends: no other run writes into these files meanwhile
  if (!options.result_csv.empty()) {
    cfg.paths = resume_output_paths(options.result_csv);
    cfg.resume = true;
    lock = claim_outputs(cfg.paths, true);
  } else {
    cfg.paths = new_output_paths(options.out_dir,
                                 options.timestamp.empty() ? detail::local_timestamp() : options.timestamp);
    lock = claim_outputs(cfg.paths, false);
    // Without --timestamp a run whose names are taken (another run in the same second) moves on to the
    // next free second; with --timestamp it refuses.
    for (int tries = 0; !lock.is_open() && options.timestamp.empty() && tries < 600; ++tries) {
      cfg.paths = new_output_paths(options.out_dir, detail::next_timestamp(cfg.paths.timestamp));
      lock = claim_outputs(cfg.paths, false);
    }
    if (!lock.is_open()) throw outputs_exist_error(cfg.paths);
  }
  cfg.outputs_claimed = true;
  cfg.framework = ctx.framework;
  cfg.fingerprint = run_fingerprint(options, standards, dump, ctx.framework);
  cfg.resume_foreign = options.resume_foreign;
  cfg.threads = options.threads > 0 ? options.threads
                                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (options.save_error_data) {
    // Under the run's output directory unless config.json names another place.
    fs::path base = ctx.config.error_data_path.empty() ? fs::path(cfg.paths.result).parent_path()
                                                       : fs::path(ctx.config.error_data_path);
    ctx.error_data_dir = (base / ("ut_error_data" + cfg.paths.timestamp)).string();
  }

  // DECISIONS D16: the pre-pass over the dump: which API output each input tensor is.
  std::optional<Dataflow> dataflow;
  if (standards.profile() == Profile::Probe && ctx.framework == Framework::PyTorch && !ctx.mindtorch &&
      dump.task() == "tensor" && use_dumped_device(ctx))
    ctx.dataflow = &dataflow.emplace(dump, maps.forward, maps.backward, registry, ctx.runner_fw);

  ApiChecker checker(ctx);
  const TensorSource source{&dump, nullptr};
  // DECISIONS D17: the probe profile adds one row per parameters_grad entry of a PyTorch tensor dump,
  // after the APIs.
  std::optional<ParamGradChecker> params;
  if (standards.profile() == Profile::Probe && ctx.framework == Framework::PyTorch && !ctx.mindtorch &&
      dump.task() == "tensor") {
    params.emplace(dump, registry, standards);
    for (const DumpEntry* e : params->entries()) names.push_back(e->key);
  }
  RunUtSummary s = run_engine(
      names,
      [&](std::size_t i) {
        return i < entries.size() ? checker.check(names[i], *entries[i], source)
                                  : params->check(*params->entries()[i - entries.size()]);
      },
      cfg, progress, &ctx.bytes, std::move(stop));
  if (dataflow) {
    s.dataflow = true;
    s.dataflow_links = dataflow->stats().links;
    s.dataflow_tensors = dataflow->stats().checked_tensors;
    s.dataflow_hashed = dataflow->stats().tensors_hashed;
    s.dataflow_hashed_bytes = dataflow->stats().bytes_hashed;
    s.dataflow_link_seconds = dataflow->stats().seconds;
    s.dataflow_check_seconds = dataflow->check_seconds();
  }
  if (ctx.error_dir_made) s.error_data_dir = ctx.error_data_dir;
  s.error_data_failures = ctx.error_data_failures;
  s.error_data_problem = ctx.error_data_problem;
  return s;
}

}  // namespace probe

namespace probe::rut {

struct RecordChecker::State {
  Context ctx;
  std::unique_ptr<ApiChecker> checker;
};

RecordChecker::RecordChecker(const RunUtOptions& options, Framework framework, const RunnerRegistry& registry,
                             const Standards& standards, std::string error_data_dir)
    : state_(std::make_unique<State>()) {
  if (framework != Framework::PyTorch && framework != Framework::MindSpore)
    throw Error(ErrorKind::InvalidArgument,
                "run_ut checks as pytorch or mindspore, not " + std::string(to_string(framework)), {},
                "framework");
  Context& ctx = state_->ctx;
  ctx.options = &options;
  if (!options.config_path.empty()) ctx.config = load_run_ut_config(options.config_path);
  ctx.framework = framework;
  ctx.runner_fw = framework;
  ctx.registry = &registry;
  ctx.standards = &standards;
  ctx.format = &run_ut_format(framework);
  if (options.save_error_data) ctx.error_data_dir = std::move(error_data_dir);
  state_->checker = std::make_unique<ApiChecker>(ctx);
}

RecordChecker::~RecordChecker() = default;

std::optional<std::string> RecordChecker::api_of(const online::Frame& record) const {
  const RunUtKey key = classify_run_ut_key(record.entry().key);
  if (key.kind != RunUtKey::Kind::Forward) return std::nullopt;
  if (state_->ctx.framework == Framework::MindSpore && !mindspore_bench_name(key.full_name, false))
    return std::nullopt;  // §7.1: not checkable, ignored as offline
  return key.full_name;
}

ApiRows RecordChecker::check(const std::string& full, const online::Frame& record) const {
  const TensorSource source{&record.header, &record};
  return state_->checker->check(full, record.entry(), source);
}

std::uint64_t RecordChecker::tensor_bytes() const { return state_->ctx.bytes.load(); }

std::string RecordChecker::error_data_dir_written() const {
  std::lock_guard lock(state_->ctx.error_dir_mutex);
  return state_->ctx.error_dir_made ? state_->ctx.error_data_dir : std::string();
}

std::size_t RecordChecker::error_data_failures() const {
  std::lock_guard lock(state_->ctx.error_dir_mutex);
  return state_->ctx.error_data_failures;
}

std::string RecordChecker::error_data_problem() const {
  std::lock_guard lock(state_->ctx.error_dir_mutex);
  return state_->ctx.error_data_problem;
}

}  // namespace probe::rut
