// DECISIONS D17: the weight gradients of a mix/L0 PyTorch dump (`Module.<path>.<Class>.parameters_grad.<g>`,
// msprobe's hook on each parameter's AccumulateGrad node, holding `param.grad`) checked against the float64
// bench: the parameter's gradient through every dumped API that took it inside the module's calls (parents
// from construct.json), each from the API's dumped forward inputs and its dumped backward input (the
// gradient of its output), summed, and judged by D14's error bound.
#include "run_ut/ParamGrads.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

#include "probe/api_name.h"
#include "probe/error.h"
#include "probe/error_bound.h"
#include "probe/output_compare.h"
#include "standards/ErrorBound.h"

namespace probe::rut {
namespace {

namespace fs = std::filesystem;

// The bound of a sum of products of dumped values (D17): the products and the sum each round once, like a
// GEMM's terms. layer_norm's weight gradient multiplies by x̂, itself computed with a square root and a
// division: a library function's error.
constexpr detail::BoundFamily kProducts{
    "parameter gradient", detail::MagnitudeKind::AbsInputs, detail::AccumulationKind::None, 2, "", false};
constexpr detail::BoundFamily kNormalized{"normalization parameter gradient",
                                          detail::MagnitudeKind::AbsInputs,
                                          detail::AccumulationKind::None,
                                          8,
                                          "",
                                          false};

// APIs whose gradient with respect to each tensor input is linear in the output gradient and in each other
// input: the bench backward on absolute values is then sum |terms|, the magnitude D14 needs.
bool multilinear(const std::string& api) {
  static const std::vector<std::string> kApis = {"linear",
                                                 "matmul",
                                                 "__matmul__",
                                                 "mm",
                                                 "bmm",
                                                 "addmm",
                                                 "baddbmm",
                                                 "conv1d",
                                                 "conv2d",
                                                 "conv3d",
                                                 "conv_transpose1d",
                                                 "conv_transpose2d",
                                                 "conv_transpose3d",
                                                 "embedding",
                                                 "mul",
                                                 "__mul__",
                                                 "__rmul__",
                                                 "add",
                                                 "__add__",
                                                 "__radd__",
                                                 "sub",
                                                 "__sub__",
                                                 "__rsub__",
                                                 "t",
                                                 "transpose",
                                                 "view",
                                                 "reshape",
                                                 "expand",
                                                 "permute",
                                                 "contiguous"};
  return std::find(kApis.begin(), kApis.end(), api) != kApis.end();
}

std::string kind_of(const TensorInfo& t) { return t.dtype_name + " " + shape_to_string(t.shape); }

bool same_statistic(const Statistic& x, const Statistic& y) {
  return x.kind == y.kind && x.b == y.b && x.i == y.i && (x.d == y.d || (std::isnan(x.d) && std::isnan(y.d)));
}

// Whether two descriptors can hold the same tensor: dtype, shape and the four statistics msprobe computed.
bool same_summary(const TensorInfo& a, const TensorInfo& b) {
  return a.dtype_name == b.dtype_name && a.shape == b.shape && same_statistic(a.max, b.max) &&
         same_statistic(a.min, b.min) && same_statistic(a.mean, b.mean) && same_statistic(a.norm, b.norm);
}

std::string module_of(const std::string& key, std::string_view marker) {
  return key.substr(0, key.rfind(marker));
}

// Tensor inputs of a forward entry with their dump paths ("input.1", "input.2.0", "kwargs.weight").
void tensor_inputs(const DumpNode& node, const std::string& path,
                   std::vector<std::pair<std::string, const TensorInfo*>>& out) {
  if (node.is_tensor()) {
    out.emplace_back(path, &node.tensor());
  } else if (node.kind() == DumpNode::Kind::List) {
    for (std::size_t i = 0; i < node.items().size(); ++i)
      tensor_inputs(node.items()[i], path + "." + std::to_string(i), out);
  }
}

std::vector<std::pair<std::string, const TensorInfo*>> tensor_inputs(const DumpEntry& e) {
  std::vector<std::pair<std::string, const TensorInfo*>> out;
  if (const DumpNode* in = e.inputs())
    for (std::size_t i = 0; i < in->items().size(); ++i)
      tensor_inputs(in->items()[i], "input." + std::to_string(i), out);
  if (const DumpNode* kw = e.kwargs())
    if (kw->kind() == DumpNode::Kind::Dict)
      for (const auto& [k, v] : kw->members()) tensor_inputs(v, "kwargs." + k, out);
  return out;
}

Tensor load(const Dump& dump, const DumpEntry& e, const TensorInfo& info) {
  if (!info.dtype)
    throw Error(ErrorKind::Unsupported, "dtype " + info.dtype_name + " is not supported", info.data_name,
                info.field, e.key);
  if (!info.has_file())
    throw Error(ErrorKind::Unsupported, "the tensor has no file (data_name missing)", "", info.field, e.key);
  Tensor t = dump.load_tensor(e, info);
  if (t.shape() != info.shape || !info.file_dtype_fits(t.dtype()))
    throw Error(ErrorKind::Format, "the tensor file does not hold the shape and dtype dump.json gives",
                info.data_name, info.field, e.key);
  return t.dtype() == *info.dtype ? t : t.to(*info.dtype);
}

Value build(const Dump& dump, const DumpEntry& e, const DumpNode& node, int depth = 0) {
  if (depth > 400) throw Error(ErrorKind::Format, "arguments nested deeper than 400 levels", "", "", e.key);
  switch (node.kind()) {
    case DumpNode::Kind::Null:
      return Value(NoneValue{});
    case DumpNode::Kind::Tensor:
      return Value(load(dump, e, node.tensor()));
    case DumpNode::Kind::Value:
      return node.leaf().value;
    case DumpNode::Kind::List: {
      std::vector<Value> items;
      for (const auto& x : node.items()) items.push_back(build(dump, e, x, depth + 1));
      return Value(std::move(items));
    }
    case DumpNode::Kind::Dict:
      if (node.members().empty()) return Value(NoneValue{});  // an object msprobe could not describe
      throw Error(ErrorKind::Unsupported, "dict arguments are not supported", "", "", e.key);
  }
  return Value(NoneValue{});
}

ApiCall call_of(const Dump& dump, const DumpEntry& e) {
  ApiCall call;
  if (const DumpNode* in = e.inputs())
    for (const auto& x : in->items()) call.args.push_back(build(dump, e, x));
  if (const DumpNode* kw = e.kwargs())
    for (const auto& [k, v] : kw->members()) {
      if (v.kind() == DumpNode::Kind::Value && v.leaf().type == "torch.device") continue;  // precheck §6.7
      call.kwargs.emplace_back(k, build(dump, e, v));
    }
  return call;
}

Value abs_of(const Value& v) {
  if (v.is_tensor() && is_floating(v.tensor().dtype())) {
    std::vector<double> x = v.tensor().to_doubles();
    for (double& d : x) d = std::fabs(d);
    return Value(Tensor::from_values<double>(x, v.tensor().shape()));
  }
  if (v.is_list()) {
    std::vector<Value> out;
    for (const Value& x : v.list()) out.push_back(abs_of(x));
    return Value(std::move(out));
  }
  return v;
}

const Tensor* gradient_at(const std::vector<InputGradient>& gs, const std::string& path) {
  for (const auto& g : gs)
    if (g.path == path) return &g.grad;
  return nullptr;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         std::memcmp(a.bytes(), b.bytes(), a.nbytes()) == 0;
}

// layer_norm's weight and bias gradients are sums over the normalised rows of g x̂ and of g. Their magnitude:
// sum |g| (|x̂| + r mean|x|) for the weight (x̂'s error follows D14's layer_norm magnitude: the centring is
// relative to mean |x|), sum |g| for the bias.
Tensor layer_norm_magnitude(const ApiCall& call, const Tensor& grad_out, const Shape& param, bool weight) {
  const Tensor& x = call.args.at(0).tensor();
  const std::int64_t n = std::max<std::int64_t>(1, numel(param));
  const std::int64_t rows = x.numel() / n;
  double eps = 1e-5;
  if (call.args.size() > 4 && call.args[4].kind() == Value::Kind::Float) eps = call.args[4].as_double();
  for (const auto& [k, v] : call.kwargs)
    if (k == "eps" && v.kind() == Value::Kind::Float) eps = v.as_double();
  const std::vector<double> xv = x.to_doubles(), gv = grad_out.to_doubles();
  std::vector<double> m(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* xr = xv.data() + r * n;
    const double* gr = gv.data() + r * n;
    double mean = 0, mean_abs = 0, var = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      mean += xr[j];
      mean_abs += std::fabs(xr[j]);
    }
    mean /= static_cast<double>(n);
    mean_abs /= static_cast<double>(n);
    for (std::int64_t j = 0; j < n; ++j) var += (xr[j] - mean) * (xr[j] - mean);
    const double rstd = 1 / std::sqrt(var / static_cast<double>(n) + eps);
    for (std::int64_t j = 0; j < n; ++j)
      m[static_cast<std::size_t>(j)] +=
          std::fabs(gr[j]) * (weight ? std::fabs(xr[j] - mean) * rstd + rstd * mean_abs : 1.0);
  }
  return Tensor::from_values<double>(m, param);
}

// A linear call with its leading dims folded into rows (input [rows, in], output gradient [rows, out]);
// nullopt for another call.
std::optional<std::pair<ApiCall, Value>> flat_linear(const std::string& op, const ApiCall& call,
                                                     const std::vector<Value>& grads) {
  if (op != "linear" || !call.kwargs.empty() || call.args.size() < 2 || !call.args[0].is_tensor() ||
      !call.args[1].is_tensor() || grads.empty() || !grads[0].is_tensor())
    return std::nullopt;
  const Tensor &x = call.args[0].tensor(), &w = call.args[1].tensor(), &g = grads[0].tensor();
  if (x.ndim() < 2 || w.ndim() != 2 || g.ndim() != x.ndim() || x.shape().back() != w.shape()[1] ||
      g.shape().back() != w.shape()[0])
    return std::nullopt;
  ApiCall flat = call;
  flat.args[0] = Value(x.reshape({x.numel() / x.shape().back(), x.shape().back()}));
  return std::pair{flat, Value(g.reshape({g.numel() / g.shape().back(), g.shape().back()}))};
}

// One API call that took the parameter: its bench gradient with respect to it, the magnitude and the number
// of terms summed into one element.
struct Use {
  std::string api;  // "Functional.linear.4 input.1"
  Tensor bench, magnitude;
  std::int64_t terms = 1;
  bool normalized = false;
  // The gradient is a sum of products autograd materialises in the parameter's dtype first (mul's
  // backward is grad * other, then sum_to_size over the broadcast rows): each term is rounded once more.
  bool rounded_terms = false;
};

Use bench_use(const Dump& dump, const RunnerRegistry& registry, const DumpEntry& fwd, const std::string& path,
              const Shape& param) {
  const std::string full = fwd.name.full_name;
  const std::optional<ApiName> parsed = parse_api_name(full);
  if (!parsed) throw Error(ErrorKind::Unsupported, "its name does not parse as an API name", "", "", full);
  const std::string& op = parsed->name;
  const DumpEntry* bwd = dump.find(full + ".backward");
  if (!bwd) throw Error(ErrorKind::Unsupported, "it has no backward entry in the dump", "", "", full);
  const bool layer_norm = op == "layer_norm";
  if (!layer_norm && !multilinear(op))
    throw Error(ErrorKind::Unsupported,
                "D17 has no magnitude for the gradient of " + op + " with respect to a parameter", "", "",
                full);
  const ApiCall call = call_of(dump, fwd);
  std::vector<Value> grads_in;
  if (const DumpNode* gin = bwd->section("input"))
    for (const auto& x : gin->items()) grads_in.push_back(build(dump, *bwd, x));
  if (grads_in.empty() || !grads_in[0].is_tensor())
    throw Error(ErrorKind::Unsupported, "its backward entry holds no gradient of its output", "", "", full);
  const std::vector<InputGradient> bench = registry.run_backward(Framework::PyTorch, full, call, grads_in);
  const Tensor* b = gradient_at(bench, path);
  if (!b) throw Error(ErrorKind::Unsupported, "no gradient reaches " + path + " in the bench", "", "", full);
  Use u;
  u.api = full + " " + path;
  u.bench = *b;
  const Shape& out = grads_in[0].tensor().shape();
  const double out_n = static_cast<double>(numel(out));
  // The bias is linear's and conv's third argument, layer_norm's fourth.
  const bool bias = layer_norm ? (path == "input.3" || path == "kwargs.bias")
                               : (path == "input.2" || path == "kwargs.bias");
  if (layer_norm) {
    u.normalized = true;
    u.magnitude = layer_norm_magnitude(call, grads_in[0].tensor(), param, !bias);
    const double n = static_cast<double>(std::max<std::int64_t>(1, numel(param)));
    // The weight's x̂ comes from a variance that sums the normalised elements too.
    u.terms = static_cast<std::int64_t>(std::ceil(out_n / n)) + (bias ? 0 : numel(param));
  } else {
    std::vector<InputGradient> mag;
    if (auto flat = flat_linear(op, call, grads_in); flat && (path == "input.1" || path == "input.2")) {
      // linear's weight gradient sums G[r, o] X[r, i] over the rows: its magnitude |G|^T |X| is one GEMM (the
      // bench's mm on the absolute values), not a whole backward; the bias's is sum |G| over the rows.
      const Tensor g = abs_of(flat->second).tensor(), x = abs_of(flat->first.args[0]).tensor();
      const std::int64_t rows = g.shape()[0], outs = g.shape()[1];
      const std::vector<double> gv = g.to_doubles();
      std::vector<double> gt(gv.size()), bias(static_cast<std::size_t>(outs), 0.0);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t o = 0; o < outs; ++o) {
          const double e = gv[static_cast<std::size_t>(r * outs + o)];
          gt[static_cast<std::size_t>(o * rows + r)] = e;
          bias[static_cast<std::size_t>(o)] += e;
        }
      if (path == "input.1") {
        ApiCall mm;
        mm.args = {Value(Tensor::from_values<double>(gt, {outs, rows})), Value(x)};
        mag.push_back({path, registry.run_forward(Framework::PyTorch, "Torch.mm", mm).outputs.at(0).tensor(),
                       DType::Float64});
      } else {
        mag.push_back({path, Tensor::from_values<double>(bias, {outs}), DType::Float64});
      }
    } else {
      ApiCall abs_call;
      for (const Value& v : call.args) abs_call.args.push_back(abs_of(v));
      for (const auto& [k, v] : call.kwargs) abs_call.kwargs.emplace_back(k, abs_of(v));
      std::vector<Value> abs_grads;
      for (const Value& g : grads_in) abs_grads.push_back(abs_of(g));
      mag = registry.run_backward(Framework::PyTorch, full, abs_call, abs_grads);
    }
    const Tensor* m = gradient_at(mag, path);
    if (!m) throw Error(ErrorKind::Unsupported, "no magnitude reaches " + path, "", "", full);
    u.magnitude = Value(abs_of(Value(*m))).tensor();
    // A bias (linear's, conv's) is added once per output element; embedding's rows are summed once per
    // index; any other input's gradient element sums numel(output) K / numel(input) products (D14).
    if ((op == "linear" || op.rfind("conv", 0) == 0) && bias)
      u.terms = static_cast<std::int64_t>(
          std::ceil(out_n / static_cast<double>(std::max<std::int64_t>(1, numel(param)))));
    else if (op == "embedding" && !param.empty())
      u.terms = static_cast<std::int64_t>(
          std::ceil(out_n / static_cast<double>(std::max<std::int64_t>(1, param.back()))));
    else
      u.terms = error_bound_grad_accumulation(full, call, out, param);
    u.rounded_terms = (op == "mul" || op == "__mul__" || op == "__rmul__") && numel(param) < numel(out);
  }
  u.terms = std::max<std::int64_t>(1, u.terms);
  return u;
}

}  // namespace

struct ParamGradChecker::ParamVerdict {
  Status status = Status::Skip;
  DetailRow row;
};

ParamGradChecker::ParamGradChecker(const Dump& dump, const RunnerRegistry& registry,
                                   const Standards& standards)
    : dump_(dump), registry_(registry), standards_(standards) {
  for (const DumpEntry& e : dump.entries()) {
    if (!e.name.is_module) continue;
    if (e.name.direction == EntryDirection::ParametersGrad) {
      entries_.push_back(&e);
      ++grad_entries_[module_of(e.key, ".parameters_grad")];
      grad_entry_of_[module_of(e.key, ".parameters_grad")] = &e;
    } else if (e.name.direction == EntryDirection::Forward) {
      calls_[module_of(e.key, ".forward.")].push_back(&e);
    }
  }
  if (entries_.empty()) return;
  fs::path dir = fs::path(dump.path()).parent_path();
  const fs::path path = (dir.empty() ? fs::path(".") : dir) / "construct.json";
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    construct_problem_ = "no construct.json beside dump.json: which module ran which API is unknown";
    return;
  }
  try {
    construct_ = ConstructInfo::open(path.string());
  } catch (const Error& e) {
    construct_problem_ = "construct.json cannot be used: " + e.message();
    return;
  }
  // Module calls -> the API forward entries run directly inside them, in dump order; and every input of an
  // API that requires grad, by dtype and shape.
  for (const DumpEntry& e : dump.entries()) {
    if (e.name.is_module || e.name.direction != EntryDirection::Forward) continue;
    const ConstructInfo::Node* node = construct_->find(e.key);
    if (node && node->parent) children_[*node->parent].push_back(&e);
    for (const auto& [path, t] : tensor_inputs(e))
      if (t->requires_grad == true) grad_inputs_[kind_of(*t)].push_back({&e, path, t});
  }
}

ParamGradChecker::ParamVerdict ParamGradChecker::check_param(const DumpEntry& entry,
                                                             const std::string& module,
                                                             const std::string& param,
                                                             const DumpNode& grad) const {
  ParamVerdict v;
  DetailRow& row = v.row;
  row.api_name = entry.key + "." + param;
  auto skip = [&](const std::string& why) {
    row.status = Status::Skip;
    row.message = "parameter gradient not checked (D17): " + why;
    return v;
  };
  const TensorInfo* info = nullptr;
  if (grad.kind() == DumpNode::Kind::List && grad.items().size() == 1 && grad.items()[0].is_tensor())
    info = &grad.items()[0].tensor();
  if (!info) return skip("the entry does not hold one tensor for " + param);
  row.device_dtype = info->dtype ? std::string(torch_name(*info->dtype)) : info->dtype_name;
  row.shape = shape_to_string(info->shape);
  if (!construct_problem_.empty()) return skip(construct_problem_);
  if (grad_entries_.at(module) > 1)
    return skip(module + " has " + std::to_string(grad_entries_.at(module)) +
                " parameters_grad entries in this step (several backward passes): the calls each one sums "
                "are not recorded");
  const auto calls = calls_.find(module);
  if (calls == calls_.end()) return skip("the dump has no forward entry of " + module);
  if (dump_.level() == "L0")
    return skip(
        "an L0 dump records modules only, not the APIs that took the parameter (dump with level mix)");
  Tensor device;
  std::vector<Use> uses;
  std::set<std::string> outside_done;
  try {
    device = load(dump_, entry, *info);
    if (!is_floating(device.dtype())) return skip("the gradient is not floating-point");
    // Whether an API ran directly inside one of the module's calls.
    auto inside = [&](const DumpEntry* api) {
      const ConstructInfo::Node* node = construct_->find(api->key);
      return node && node->parent &&
             std::any_of(calls->second.begin(), calls->second.end(),
                         [&](const DumpEntry* c) { return c->key == *node->parent; });
    };
    for (const DumpEntry* call : calls->second) {
      // The parameter's value in this call, when the module entry records it: its use is the API input
      // holding the same bytes (two parameters of one shape, or an activation of that shape, never match).
      std::optional<Tensor> value;
      if (const DumpNode* params = call->section("parameters"))
        if (const DumpNode* p = params->find(param); p && p->is_tensor() && p->tensor().has_file())
          value = load(dump_, *call, p->tensor());
      std::size_t found = 0;
      const auto kids = children_.find(call->key);
      if (kids != children_.end())
        for (const DumpEntry* api : kids->second)
          for (const auto& [path, t] : tensor_inputs(*api)) {
            if (t->requires_grad != true || t->shape != info->shape || t->dtype != info->dtype) continue;
            if (value && !(t->has_file() && same_bytes(load(dump_, *api, *t), *value))) continue;
            uses.push_back(bench_use(dump_, registry_, *api, path, info->shape));
            ++found;
          }
      if (found == 0)
        return skip("no API dumped inside " + call->key + " takes " + param +
                    " (it reaches its gradient through an API the dump does not record)");
      // param.grad also sums the uses outside the module (a tied weight, a head sharing the embedding's).
      // A tensor equal to the parameter taken elsewhere is either such a use or another parameter with
      // equal values (freshly initialised norms' ones). A tied parameter is recorded by the other module
      // too, with the same param.grad: an API in a module whose parameters_grad entry holds a gradient
      // equal to this one is a use and joins the sum; one in a module without such a gradient takes that
      // module's own parameter; one outside any module, or whose module records no parameter gradient,
      // cannot be told apart, and the parameter is not judged. dump.json's statistics spare reading every
      // candidate. The parameter's value is the same in every call of the step: it is looked for once.
      if (!value || !outside_done.insert(param).second) continue;
      const TensorInfo& pd = call->section("parameters")->find(param)->tensor();
      const auto same = grad_inputs_.find(kind_of(pd));
      if (same == grad_inputs_.end()) continue;
      for (const Input& in : same->second) {
        // Only a call autograd recorded adds to the gradient: msprobe writes a backward entry for every API
        // whose output has a grad_fn, so one without (an optimizer's update under no_grad) is no use.
        if (inside(in.api) || !dump_.find(in.api->name.full_name + ".backward")) continue;
        if (!same_summary(*in.info, pd) || !in.info->has_file() ||
            !same_bytes(load(dump_, *in.api, *in.info), *value))
          continue;
        const std::string where = in.api->name.full_name + " " + in.path + ", outside " + module +
                                  ", takes a tensor equal to " + param;
        const ConstructInfo::Node* node = construct_->find(in.api->key);
        const auto other = node && node->parent && node->parent->rfind(".forward.") != std::string::npos
                               ? grad_entry_of_.find(module_of(*node->parent, ".forward."))
                               : grad_entry_of_.end();
        if (other == grad_entry_of_.end())
          return skip(where +
                      ", and no module's parameter gradient says whether it is this parameter (tied) "
                      "or another one with equal values");
        bool tied = false;
        if (other->second->body.kind() == DumpNode::Kind::Dict)
          for (const auto& [name, g] : other->second->body.members())
            if (g.kind() == DumpNode::Kind::List && g.items().size() == 1 && g.items()[0].is_tensor() &&
                same_summary(g.items()[0].tensor(), *info) && g.items()[0].tensor().has_file() &&
                same_bytes(load(dump_, *other->second, g.items()[0].tensor()), device))
              tied = true;
        if (tied) uses.push_back(bench_use(dump_, registry_, *in.api, in.path, info->shape));
      }
    }
  } catch (const Error& e) {
    std::string where = e.api().empty() ? "" : e.api() + ": ";
    if (!e.file().empty()) where += fs::path(e.file()).filename().string() + ": ";
    return skip(where + e.message());
  } catch (const std::exception& e) {
    return skip(e.what());
  }
  // The sum over the uses, and its magnitude. Each use's gradient is rounded to the parameter's dtype and
  // added into param.grad (or the autograd input buffer) once more: n uses cost up to n u_out sum |b_i|;
  // products rounded before their sum cost u_out m. Both are folded into the magnitude with the factor that
  // makes D14's acc * m cover them (acc >= c u_acc).
  const std::size_t n = static_cast<std::size_t>(device.numel());
  std::vector<double> b(n, 0.0), m(n, 0.0), rounded(n, 0.0);
  std::int64_t terms = 0;
  bool normalized = false;
  for (const Use& u : uses) {
    const std::vector<double> ub = u.bench.to_doubles(), um = u.magnitude.to_doubles();
    if (ub.size() != n || um.size() != n) return skip(u.api + ": the bench gradient has another shape");
    // What the device rounds besides the final result: each use's gradient when there are several, and
    // the materialised products of a use.
    const double per_use = uses.size() > 1 ? static_cast<double>(uses.size()) : 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      b[i] += ub[i];
      m[i] += um[i];
      rounded[i] += per_use * std::fabs(ub[i]) + (u.rounded_terms ? um[i] : 0.0);
    }
    terms += u.terms;
    normalized = normalized || u.normalized;
  }
  const detail::BoundFamily& family = normalized ? kNormalized : kProducts;
  const double u_out = device.dtype() == DType::Float64   ? std::ldexp(1.0, -53)
                       : device.dtype() == DType::Float32 ? std::ldexp(1.0, -24)
                       : device.dtype() == DType::Float16 ? std::ldexp(1.0, -11)
                                                          : std::ldexp(1.0, -8);
  const double u_acc = device.dtype() == DType::Float64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  const double fold = u_out / (family.own_ulps * u_acc);
  for (std::size_t i = 0; i < n; ++i) m[i] += fold * rounded[i];
  const Tensor bench = Tensor::from_values<double>(b, info->shape);
  const Tensor magnitude = Tensor::from_values<double>(m, info->shape);
  row = compare_item(row.api_name, Value(bench), Value(device), standards_);
  row.api_name = entry.key + "." + param;
  const Verdict verdict = detail::error_bound_verdict(family, bench, device, &magnitude, terms, 3);
  std::string used;
  for (std::size_t i = 0; i < uses.size() && i < 3; ++i) used += (i ? ", " : "") + uses[i].api;
  if (uses.size() > 3) used += fmt::format(" and {} more", uses.size() - 3);
  row.status = verdict.status;
  row.message = fmt::format("{} of {} against the sum over {} dumped call{} ({}): {}", param, module,
                            uses.size(), uses.size() == 1 ? "" : "s", used, verdict.message);
  v.status = verdict.status;
  return v;
}

ApiRows ParamGradChecker::check(const DumpEntry& entry) const {
  ApiRows rows;
  rows.name = entry.key;
  const std::string module = module_of(entry.key, ".parameters_grad");
  std::vector<Status> statuses;
  std::string message;
  std::size_t checked = 0;
  if (entry.body.kind() == DumpNode::Kind::Dict)
    for (const auto& [param, grad] : entry.body.members()) {
      ParamVerdict v = check_param(entry, module, param, grad);
      statuses.push_back(v.status);
      if (v.status != Status::Pass) message += (message.empty() ? "" : "; ") + v.row.message;
      if (v.status != Status::Skip) ++checked;
      rows.details.push_back(v.row.to_csv());
    }
  if (statuses.empty()) {
    DetailRow row;
    row.api_name = entry.key + ".none";
    row.message = "parameter gradient not checked (D17): the entry holds no parameter";
    statuses.push_back(Status::Skip);
    message = row.message;
    rows.details.push_back(row.to_csv());
  }
  // The entry's verdict: the worst of its parameters', a SKIP above a pass so that a parameter left
  // unchecked shows in the result file.
  Status status = Status::Pass;
  for (Status s : {Status::Skip, Status::Warning, Status::Error})
    if (std::find(statuses.begin(), statuses.end(), s) != statuses.end()) status = s;
  if (message.empty())
    message =
        fmt::format("{} parameter gradient{} within the error bound (D17)", checked, checked == 1 ? "" : "s");
  rows.result = ResultRow{entry.key, std::nullopt, status, message};
  return rows;
}

}  // namespace probe::rut
