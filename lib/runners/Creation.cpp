// Casts, copies and constructors (float64 reference): Tensor.to/float/half/..., type, clone, detach, copy_,
// *_like, new_*, zeros/ones/full/arange/eye/linspace/scalar_tensor. The kernels take Vars and plain values;
// the registrations at the end only bind arguments and call them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "probe/error.h"
#include "runners/Ops.h"
#include "runners/RunnerKit.h"

namespace probe::runners {

namespace {

// The dtype a `Tensor.to(...)`-style call asks for: a dtype argument, or the dtype of a tensor argument.
std::optional<DType> requested_dtype(const Value& v) {
  if (v.kind() == Value::Kind::DType) return v.as_dtype();
  if (v.kind() == Value::Kind::String) return parse_dtype(v.as_string());
  if (v.is_tensor()) return v.tensor().dtype();
  return std::nullopt;
}

// Tensor.to(dtype | tensor | device, ...): the first dtype named by `dtype`, `a` or `b`.
Var to(const Var& x, std::optional<DType> dtype, const Value& a, const Value& b) {
  std::optional<DType> dt = dtype;
  if (!dt) dt = requested_dtype(a);
  if (!dt) dt = requested_dtype(b);
  if (!dt) {
    // Only a device (or nothing) was given: the values and dtype stay.
    for (const Value* p : {&a, &b})
      if (p->kind() == Value::Kind::Opaque && p->to_string().empty())
        throw Error(ErrorKind::Unsupported,
                    "Tensor.to: the dump did not record the positional dtype argument");
    return x;
  }
  return cast(x, *dt);
}

Var type(const Var& x, const Value& dtype) {
  auto dt = requested_dtype(dtype);
  if (!dt) throw Error(ErrorKind::Unsupported, "Tensor.type() without a dtype returns a string");
  return cast(x, *dt);
}

Var copy_into(const Var& x, const Var& src) {
  if (broadcast_shapes(x.shape(), src.shape()) != x.shape())
    invalid(fmt::format("copy_: src of shape {} does not broadcast to {}", shape_to_string(src.shape()),
                        shape_to_string(x.shape())));
  Var e = expand(src, x.shape());
  // DECISIONS D5: floating to floating keeps the float64 bench value; to an integer dtype truncates
  return is_floating(x.dtype()) && is_floating(src.dtype()) ? relabel(e, x.dtype()) : cast(e, x.dtype());
}

// DECISIONS D5: floating values stay float64 in the bench; integer dtypes truncate like a cast.
double exact_in(double v, DType dt) { return is_floating(dt) ? v : round_to(v, dt); }

// A size argument as a Shape, rejecting negative dims like torch (and sizes over the element budget).
Shape sizes_of(const std::vector<std::int64_t>& size) {
  Shape s;
  for (auto d : size) {
    if (d < 0) invalid(fmt::format("Trying to create tensor with negative dimension {}", d));
    s.push_back(d);
  }
  checked_numel(s);
  return s;
}

// torch's default dtype for a constructor from Python numbers: bool, int64, or float32 if any is a float
DType number_dtype(std::initializer_list<const Value*> vs) {
  bool any_float = false, all_bool = true;
  for (const Value* v : vs) {
    if (!v || v->is_none()) continue;
    any_float =
        any_float || v->kind() == Value::Kind::Float || (v->is_tensor() && is_floating(v->tensor().dtype()));
    all_bool = all_bool && v->kind() == Value::Kind::Bool;
  }
  return any_float ? DType::Float32 : all_bool ? DType::Bool : DType::Int64;
}

// arange(end) when `end` is empty, else arange(start, end, step); `dt` defaults from the numbers.
Var arange(double start, double end, double step, DType dt) {
  if (step == 0) invalid("step must be nonzero");
  if (!std::isfinite(start) || !std::isfinite(end)) invalid("unsupported range: " + std::to_string(start));
  if ((step > 0 && end < start) || (step < 0 && end > start))
    invalid("upper bound and larger bound inconsistent with step sign");
  if (dt == DType::Bool) dt = DType::Int64;
  const double len = std::ceil((end - start) / step);
  const Shape s{static_cast<std::int64_t>(len)};
  Buffer v(static_cast<std::size_t>(checked_numel(s)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = exact_in(start + static_cast<double>(i) * step, dt);
  return make_leaf(s, std::move(v), dt);
}

Var eye(std::int64_t n, std::int64_t m, DType dt) {
  if (n < 0 || m < 0) invalid(fmt::format("n and m must be greater or equal to 0, got {} and {}", n, m));
  const Shape s{n, m};
  Buffer v(static_cast<std::size_t>(checked_numel(s)), 0.0);
  for (std::int64_t i = 0; i < std::min(n, m); ++i) v[static_cast<std::size_t>(i * m + i)] = 1.0;
  return make_leaf(s, std::move(v), dt);
}

Var linspace(double a, double b, std::int64_t n, DType dt) {
  if (n < 0) invalid("number of steps must be non-negative");
  const Shape s{n};
  Buffer v(static_cast<std::size_t>(checked_numel(s)));
  // torch fills the first half from start and the second half back from end (one step: start)
  const double step = n > 1 ? (b - a) / static_cast<double>(n - 1) : 0.0;
  for (std::int64_t i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = exact_in(
        (n == 1 || i < n / 2) ? a + step * static_cast<double>(i) : b - step * static_cast<double>(n - 1 - i),
        dt);
  return make_leaf(s, std::move(v), dt);
}

// zeros_like / ones_like / full_like (value_param names the fill argument, else `fixed`).
KitFn like(const char* value_param, double fixed) {
  return [value_param, fixed](Ctx& c) -> Outs {
    Var x = c.t("input");
    const double v = value_param ? c.f(value_param) : fixed;
    const DType dt = c.dtype("dtype").value_or(x.dtype());
    // D5: a floating fill value stays float64 in the bench; integer dtypes truncate like torch.
    return {full(x.shape(), exact_in(v, dt), dt)};
  };
}

// new_zeros / new_ones / new_full: like the *_like runners but with an explicit size.
KitFn new_filled(const char* value_param, double fixed) {
  return [value_param, fixed](Ctx& c) -> Outs {
    Var x = c.t("input");
    const double v = value_param ? c.f(value_param) : fixed;
    const DType dt = c.dtype("dtype").value_or(x.dtype());
    const Shape s = sizes_of(c.ints("size"));
    return {full(s, exact_in(v, dt), dt)};  // DECISIONS D5
  };
}

}  // namespace

void register_creation_runners(RunnerRegistry& reg) {
  def(reg, {"Tensor.to", "ms:Tensor.to"},
      "to(Tensor input, Any a=None, Any b=None, bool non_blocking=False, bool copy=False, *, ScalarType? "
      "dtype=None, "
      "Any device=None, Any memory_format=None) -> Tensor",
      [](Ctx& c) -> Outs {
        const std::optional<DType> dt = c.dtype("dtype");
        return {to(c.t("input"), dt, c["a"], c["b"])};
      });
  const std::pair<const char*, DType> casts[] = {{"float", DType::Float32},     {"half", DType::Float16},
                                                 {"bfloat16", DType::BFloat16}, {"double", DType::Float64},
                                                 {"int", DType::Int32},         {"long", DType::Int64},
                                                 {"bool", DType::Bool},         {"short", DType::Int16},
                                                 {"char", DType::Int8},         {"byte", DType::UInt8}};
  for (const auto& [fn, dt] : casts)
    def(reg, {std::string("Tensor.") + fn},
        std::string(fn) + "(Tensor input, Any memory_format=None) -> Tensor",
        [dt = dt](Ctx& c) -> Outs { return {cast(c.t("input"), dt)}; });
  def(reg, {"Tensor.type", "ms:Tensor.astype"},
      "type(Tensor input, Any dtype=None, bool non_blocking=False) -> Tensor",
      [](Ctx& c) -> Outs { return {type(c.t("input"), c["dtype"])}; });
  def(reg, {"Tensor.type_as"}, "type_as(Tensor input, Tensor other) -> Tensor",
      [](Ctx& c) -> Outs { return {cast(c.t("input"), c.t("other").dtype())}; });
  def(reg, names("clone", kTorch | kTensor | kMint | kMsOps),
      "clone(Tensor input, *, Any memory_format=None) -> Tensor",
      [](Ctx& c) -> Outs { return {c.t("input")}; });
  def(reg, names("detach", kTorch | kTensor), "detach(Tensor input) -> Tensor",
      [](Ctx& c) -> Outs { return {detach(c.t("input"))}; });
  const char* like_tail =
      ", *, ScalarType? dtype=None, Any layout=None, Any device=None, bool? pin_memory=None, "
      "bool? requires_grad=False, Any memory_format=None) -> Tensor";
  def(reg, names("zeros_like", kTorch | kMint | kMsOps), std::string("zeros_like(Tensor input") + like_tail,
      like(nullptr, 0.0), false);
  def(reg, names("ones_like", kTorch | kMint | kMsOps), std::string("ones_like(Tensor input") + like_tail,
      like(nullptr, 1.0), false);
  def(reg, names("full_like", kTorch | kMint | kMsOps),
      std::string("full_like(Tensor input, Scalar fill_value") + like_tail, like("fill_value", 0.0), false);
  // ---- constructors (no tensor inputs: the bench is the exact values in the requested dtype) ----------
  const char* ctor_tail =
      "ScalarType? dtype=None, Any layout=None, Any device=None, bool? pin_memory=None, bool? "
      "requires_grad=False, "
      "Any out=None) -> Tensor";
  def(
      reg, names("arange", kTorch),
      std::string("arange(Scalar a, Scalar? b=None, Scalar c=1, *, ") + ctor_tail,
      [](Ctx& c) -> Outs {
        const bool one = c.none("b");
        const double start = one ? 0.0 : c.f("a"), end = one ? c.f("a") : c.f("b"), step = c.f("c");
        return {
            arange(start, end, step, c.dtype("dtype").value_or(number_dtype({&c["a"], &c["b"], &c["c"]})))};
      },
      false);
  def(
      reg, names("full", kTorch),
      std::string("full(int[] size, Scalar fill_value, *, Any names=None, ") + ctor_tail,
      [](Ctx& c) -> Outs {
        const DType dt = c.dtype("dtype").value_or(number_dtype({&c["fill_value"]}));
        const Shape s = sizes_of(c.ints("size"));
        return {full(s, exact_in(c.f("fill_value"), dt), dt)};
      },
      false);
  def(
      reg, names("eye", kTorch), std::string("eye(int n, int? m=None, *, ") + ctor_tail,
      [](Ctx& c) -> Outs {
        const std::int64_t n = c.i("n"), m = c.none("m") ? n : c.i("m");
        return {eye(n, m, c.dtype("dtype").value_or(DType::Float32))};
      },
      false);
  def(
      reg, names("linspace", kTorch),
      std::string("linspace(Scalar start, Scalar end, int steps, *, ") + ctor_tail,
      [](Ctx& c) -> Outs {
        const double a = c.f("start"), b = c.f("end");
        const std::int64_t n = c.i("steps");
        return {linspace(a, b, n, c.dtype("dtype").value_or(DType::Float32))};
      },
      false);
  def(
      reg, names("scalar_tensor", kTorch), std::string("scalar_tensor(Scalar s, *, ") + ctor_tail,
      [](Ctx& c) -> Outs {
        const DType dt = c.dtype("dtype").value_or(DType::Float32);
        return {full({}, exact_in(c.f("s"), dt), dt)};
      },
      false);
  // ---- new_* / zeros / ones / zero_ / copy_ -----------------------------------------------------------
  const char* new_tail =
      ", *, ScalarType? dtype=None, Any layout=None, Any device=None, bool? pin_memory=None, bool? "
      "requires_grad=False) -> Tensor";
  def(reg, names("new_zeros", kTensor), std::string("new_zeros(Tensor input, int... size") + new_tail,
      new_filled(nullptr, 0.0), false);
  def(reg, names("new_ones", kTensor), std::string("new_ones(Tensor input, int... size") + new_tail,
      new_filled(nullptr, 1.0), false);
  def(reg, names("new_full", kTensor),
      std::string("new_full(Tensor input, int[] size, Scalar fill_value") + new_tail,
      new_filled("fill_value", 0.0), false);
  for (const bool one : {false, true})
    def(
        reg, names(one ? "ones" : "zeros", kTorch),
        std::string(one ? "ones" : "zeros") +
            "(int... size, *, Any names=None, ScalarType? dtype=None, Any layout=None, Any device=None, "
            "bool? "
            "pin_memory=None, bool? requires_grad=False, Any out=None) -> Tensor",
        [one](Ctx& c) -> Outs {
          const Shape s = sizes_of(c.ints("size"));
          return {full(s, one ? 1.0 : 0.0, c.dtype("dtype").value_or(DType::Float32))};
        },
        false);
  def(
      reg, {"Tensor.zero_", "Aten.zero.default", "Aten.zero_.default"}, "zero_(Tensor input) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        return {full(x.shape(), 0.0, x.dtype())};
      },
      false);
  def(reg, {"Tensor.copy_", "Aten.copy.default", "Aten.copy_.default"},
      "copy_(Tensor input, Tensor src, bool non_blocking=False) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input"), src = c.t("src");
        return {copy_into(x, src)};
      });
}

}  // namespace probe::runners
