// Building an API's arguments and dumped outputs as values (run_ut/ValueBuilder.h).
#include "run_ut/ValueBuilder.h"

#include <algorithm>
#include <cmath>

#include "probe/error.h"
#include "probe/tensor_file.h"
#include "run_ut/DumpedCall.h"
#include "run_ut/RandomInputs.h"

namespace probe::rut {
namespace {

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

}  // namespace

void ValueBuilder::set_api_rules(const std::string& api_name) {
  if (api_name == "cross_entropy") {
    convert_ = {DType::Int32, DType::Int64};
    min_zero_field_ = "input.1";
  } else if (api_name == "histc") {
    convert_ = {DType::Int64, DType::Float32};
    float_field_ = "input.0";
  }
}

Value ValueBuilder::build(const DumpNode& node, const std::string& field, int depth) {
  if (depth > 400) throw Error(ErrorKind::Format, "arguments nested deeper than 400 levels", "", field, api_);
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

Tensor ValueBuilder::tensor(const TensorInfo& info, const std::string& field) {
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

Tensor ValueBuilder::load_or_generate(const TensorInfo& info, const std::string& field) {
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
  if (field == float_field_ && (s.dtype == DType::Int8 || s.dtype == DType::Int32 || s.dtype == DType::Int64))
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

std::optional<std::pair<DType, DType>> dumped_dtypes(const DumpEntry& entry) {
  const DumpNode* in = entry.inputs();
  const DumpNode* out = entry.outputs();
  if (!in || !out || in->items().empty() || out->items().empty()) return std::nullopt;
  const DumpNode& x = in->items()[0];
  const DumpNode& y = out->items()[0];
  if (!x.is_tensor() || !y.is_tensor() || !x.tensor().dtype || !y.tensor().dtype) return std::nullopt;
  return std::pair{*x.tensor().dtype, *y.tensor().dtype};
}

std::optional<DType> floating_cast_dtype(const DumpEntry& entry) {
  const auto dtypes = dumped_dtypes(entry);
  if (!dtypes) return std::nullopt;
  const auto [from, to] = *dtypes;
  if (!is_floating(from) || !is_floating(to) || from == to) return std::nullopt;
  return to;
}

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

}  // namespace probe::rut
