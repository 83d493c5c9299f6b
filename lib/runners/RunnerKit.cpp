#include "runners/RunnerKit.h"

#include <fmt/format.h>

#include <set>

#include "probe/error.h"

namespace probe::runners {

Ctx::Ctx(const BoundArgs& a) : args(a), leaf_(a.size()), list_leaf_(a.size()) {}

int Ctx::index(std::string_view p) const {
  const int i = args.schema().index_of(p);
  if (i < 0)
    throw Error(ErrorKind::Internal, fmt::format("runner asked for '{}', which schema '{}' does not declare",
                                                 p, args.schema().text));
  return i;
}

Var Ctx::var_of(const Value& v) {
  if (v.is_tensor()) return from_tensor(v.tensor(), false);
  switch (v.kind()) {
    case Value::Kind::Bool:
      return wrapped_scalar(v.as_bool() ? 1.0 : 0.0, DType::Bool);
    case Value::Kind::Int:
      return wrapped_scalar(static_cast<double>(v.as_int()), DType::Int64);
    case Value::Kind::Float:
      return wrapped_scalar(v.as_double(), DType::Float64);
    default:
      break;
  }
  throw Error(ErrorKind::InvalidArgument,
              fmt::format("expected a tensor or a number, got {}", v.to_string()));
}

Var Ctx::t(std::string_view p) {
  const auto i = static_cast<std::size_t>(index(p));
  if (leaf_[i]) return *leaf_[i];
  const Value& v = args.at(i);
  if (v.is_none())
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("{}(): argument '{}' is None", args.schema().name, p));
  Var r = v.is_tensor() ? from_tensor(v.tensor(), GradMode::enabled()) : var_of(v);
  leaf_[i] = r;
  return r;
}

std::optional<Var> Ctx::opt_t(std::string_view p) {
  if (none(p)) return std::nullopt;
  return t(p);
}

std::vector<Var> Ctx::ts(std::string_view p) {
  const auto i = static_cast<std::size_t>(index(p));
  if (list_leaf_[i]) return *list_leaf_[i];
  std::vector<Var> r;
  const Value& v = args.at(i);
  if (v.is_tensor()) {
    r.push_back(from_tensor(v.tensor(), GradMode::enabled()));
  } else {
    for (const Value& it : v.list())
      r.push_back(it.is_tensor() ? from_tensor(it.tensor(), GradMode::enabled()) : var_of(it));
  }
  list_leaf_[i] = r;
  return r;
}

std::int64_t Ctx::i(std::string_view p) const { return args[p].as_int(); }
std::optional<std::int64_t> Ctx::opt_i(std::string_view p) const {
  if (none(p)) return std::nullopt;
  return args[p].as_int();
}
double Ctx::f(std::string_view p) const {
  const Value& v = args[p];
  if (v.is_tensor()) {
    if (v.tensor().numel() != 1)
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("{}(): argument '{}' must be a number or a one-element tensor, got shape {}",
                              args.schema().name, p, shape_to_string(v.tensor().shape())));
    return v.tensor().at(0);
  }
  return v.as_double();
}
bool Ctx::b(std::string_view p) const { return args[p].as_bool(); }
std::string Ctx::s(std::string_view p) const { return args[p].as_string(); }
std::vector<std::int64_t> Ctx::ints(std::string_view p) const {
  const Value& v = args[p];
  if (v.is_none()) return {};
  return v.as_int_list();
}
std::optional<DType> Ctx::dtype(std::string_view p) const {
  if (none(p)) return std::nullopt;
  return args[p].as_dtype();
}

std::vector<Value> Ctx::grads() const {
  std::vector<Value> out(leaf_.size());
  auto grad_of = [](const Var& v) -> Value {
    if (!v.requires_grad() || !v.node()->has_grad) return Value(NoneValue{});
    return Value(Tensor::from_values<double>(v.node()->grad, v.shape()));
  };
  for (std::size_t i = 0; i < leaf_.size(); ++i) {
    if (leaf_[i])
      out[i] = grad_of(*leaf_[i]);
    else if (list_leaf_[i]) {
      std::vector<Value> items;
      for (const Var& v : *list_leaf_[i]) items.push_back(grad_of(v));
      out[i] = Value(std::move(items));
    }
  }
  return out;
}

void invalid(const std::string& message) { throw Error(ErrorKind::InvalidArgument, message); }

Outs spread(std::vector<Var> xs) {
  Outs o;
  for (Var& v : xs) o.push_back(std::move(v));
  return o;
}

namespace {

const std::set<std::string, std::less<>> kInplaceDunders = {
    "__iadd__", "__isub__", "__imul__", "__itruediv__", "__idiv__",    "__ifloordiv__", "__imod__",
    "__ipow__", "__iand__", "__ior__",  "__ixor__",     "__ilshift__", "__irshift__",   "__imatmul__"};
const std::set<std::string, std::less<>> kReflectedDunders = {
    "__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rdiv__",    "__rfloordiv__", "__rmod__",
    "__rpow__", "__rand__", "__ror__",  "__rxor__",     "__rmatmul__", "__rlshift__",   "__rrshift__"};

// "add(Tensor input, Tensor other, ...)" -> "add(Tensor other, Tensor input, ...)"
std::string swap_first_two_names(std::string_view schema) {
  Schema s = parse_schema(schema);
  if (s.params.size() < 2) return std::string(schema);
  const std::string a = s.params[0].name, b = s.params[1].name;
  std::string text(schema);
  const auto open = text.find('(');
  auto replace_name = [&](std::size_t from, const std::string& old, const std::string& now) {
    const auto pos = text.find(" " + old, from);
    text.replace(pos + 1, old.size(), now);
    return pos + 1 + now.size();
  };
  std::size_t pos = replace_name(open, a, b);
  replace_name(text.find(',', pos), b, a);
  return text;
}

void apply_inplace(Ctx& c, Outs& outs) {
  const Value& self = c.args.at(0);
  if (!self.is_tensor() || outs.empty() || outs[0].is_list || outs[0].is_value) return;
  Var r = outs[0].var;
  const DType want = self.tensor().dtype();
  if (is_floating(r.dtype()) && !is_floating(want))
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("result type {} can't be cast to the desired output type {}", name(r.dtype()),
                            name(want)));
  if (r.shape() != self.tensor().shape())
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("output with shape {} doesn't match the broadcast shape {}",
                            shape_to_string(self.tensor().shape()), shape_to_string(r.shape())));
  // DECISIONS D5: the bench keeps float64 values; only the label becomes self's dtype (ints truncate).
  outs[0] = Out(is_floating(r.dtype()) && is_floating(want) ? relabel(r, want) : cast(r, want));
}

ApiResult to_result(Outs&& outs, bool device) {
  ApiResult r;
  auto conv = [&](Var& v) -> Value {
    r.device_dtypes.push_back(v.dtype());
    if (device) return Value(to_device_tensor(v));
    return Value(to_tensor(std::move(v)));
  };
  for (Out& o : outs) {
    if (o.is_value) {
      r.outputs.push_back(*o.value);
    } else if (o.is_list) {
      std::vector<Value> items;
      for (Var& v : o.vars) items.push_back(conv(v));
      r.outputs.push_back(Value(std::move(items)));
    } else {
      r.outputs.push_back(conv(o.var));
    }
  }
  return r;
}

Buffer grad_buffer(const Value& g, const Var& out, std::size_t index) {
  if (!g.is_tensor()) return {};
  const Tensor& t = g.tensor();
  if (t.shape() != out.shape())
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("gradient {} has shape {} but the output has shape {}", index,
                            shape_to_string(t.shape()), shape_to_string(out.shape())));
  return widen(t);
}

// Back-propagates the gradients `gouts` of the outputs of one evaluation (`c`, `outs`) and returns the
// gradient of every parameter (Runner::Backward's contract).
std::vector<Value> vjp_of(const BoundArgs& a, Ctx& c, const Outs& outs, const std::vector<Value>& gouts,
                          bool emulate) {
  std::vector<Var> vs;
  std::vector<Buffer> gs;
  for (std::size_t i = 0; i < outs.size() && i < gouts.size(); ++i) {
    const Out& o = outs[i];
    if (o.is_value) continue;
    if (o.is_list) {
      if (!gouts[i].is_list()) continue;
      for (std::size_t j = 0; j < o.vars.size() && j < gouts[i].list().size(); ++j) {
        vs.push_back(o.vars[j]);
        gs.push_back(grad_buffer(gouts[i].list()[j], o.vars[j], i));
      }
    } else {
      vs.push_back(o.var);
      gs.push_back(grad_buffer(gouts[i], o.var, i));
    }
  }
  backward(vs, gs);
  std::vector<Value> grads = c.grads();
  if (emulate) {  // the device holds gradients in the dtype of their input
    for (std::size_t i = 0; i < grads.size(); ++i) {
      const Value& in = a.at(i);
      if (grads[i].is_tensor() && in.is_tensor()) grads[i] = Value(grads[i].tensor().to(in.tensor().dtype()));
    }
  }
  return grads;
}

}  // namespace

std::vector<std::string> names(std::string_view fn, unsigned sets,
                               std::initializer_list<std::string_view> extra) {
  std::vector<std::string> out;
  const std::string f(fn);
  if (sets & kTorch) out.push_back("Torch." + f);
  if (sets & kTensor) out.push_back("Tensor." + f);
  if (sets & kInplace) out.push_back("Tensor." + f + "_");
  if (sets & kFunctional) out.push_back("Functional." + f);
  if (sets & kAten) out.push_back("Aten." + f + ".default");
  if (sets & kMint) out.push_back("ms:Mint." + f);
  if (sets & kMintFunctional) out.push_back("ms:MintFunctional." + f);
  if (sets & kMsTensor) out.push_back("ms:Tensor." + f);
  if (sets & kMsOps) out.push_back("ms:Functional." + f);
  for (auto e : extra) out.emplace_back(e);
  return out;
}

void def(RunnerRegistry& reg, const std::vector<std::string>& apis, std::string_view schema, KitFn fn,
         bool differentiable) {
  for (std::string_view api : apis) {
    Framework fw = Framework::PyTorch;
    if (api.rfind("ms:", 0) == 0) {
      fw = Framework::MindSpore;
      api.remove_prefix(3);
    }
    const std::optional<ApiName> parsed = parse_api_name(api);
    if (!parsed) throw Error(ErrorKind::Internal, "malformed built-in runner name", "", "", std::string(api));
    const std::string_view base = parsed->op();  // Aten overloads: "add_.Tensor" -> "add_"
    const bool inplace = (base.size() > 1 && base.back() == '_' && base.rfind("__", 0) != 0) ||
                         kInplaceDunders.count(base) > 0;
    const bool reflected = kReflectedDunders.count(base) > 0;
    const std::string sch = reflected ? swap_first_two_names(schema) : std::string(schema);
    for (const bool emulate : {false, true}) {
      Runner r;
      r.schema = sch;
      r.forward = [fn, inplace, emulate](const BoundArgs& a) {
        GradMode g(false);
        EmulateFloat32 e(emulate);
        Ctx c(a);
        Outs outs = fn(c);
        if (inplace) apply_inplace(c, outs);
        return to_result(std::move(outs), emulate);
      };
      if (differentiable) {
        r.backward = [fn, inplace, emulate](const BoundArgs& a, const std::vector<Value>& gouts) {
          GradMode g(true);
          EmulateFloat32 e(emulate);
          Ctx c(a);
          Outs outs = fn(c);
          if (inplace) apply_inplace(c, outs);
          return vjp_of(a, c, outs, gouts, emulate);
        };
        // The same graph-recording evaluation, kept: its outputs are the forward's (recording changes
        // no value) and its graph serves the backward.
        r.taped_forward = [fn, inplace, emulate](const BoundArgs& a) {
          GradMode g(true);
          EmulateFloat32 e(emulate);
          auto c = std::make_shared<Ctx>(a);
          auto outs = std::make_shared<Outs>(fn(*c));
          if (inplace) apply_inplace(*c, *outs);
          Runner::Taped t;
          t.result = to_result(Outs(*outs), emulate);
          t.backward = [&a, c, outs, emulate](const std::vector<Value>& gouts) {
            GradMode g2(true);
            EmulateFloat32 e2(emulate);
            return vjp_of(a, *c, *outs, gouts, emulate);
          };
          return t;
        };
      }
      reg.add(fw, api, std::move(r), emulate ? RunnerRole::Device : RunnerRole::Bench);
    }
  }
}

}  // namespace probe::runners
