// Elementwise arithmetic, comparisons, logical ops and unary math (float64 reference).
#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "probe/error.h"
#include "runners/RunnerKit.h"

namespace probe::runners {

namespace {

constexpr unsigned kStd = kTorch | kTensor | kInplace | kMint | kMsTensor | kMsOps;

[[noreturn]] void invalid(const std::string& m) { throw Error(ErrorKind::InvalidArgument, m); }

// Binary op result: integers/bools computed exactly and normalised to their dtype.
template <class F, class DA, class DB>
Var arith(const Var& a, const Var& b, DType dt, F f, DA da, DB db) {
  if (dt == DType::Bool)
    return zip_nograd(a, b, dt, [f](double x, double y) { return f(x, y) != 0 ? 1.0 : 0.0; });
  if (!is_floating(dt)) return zip_nograd(a, b, dt, f);
  return zip(a, b, dt, f, da, db);
}

// torch's floor division for floating operands (ATen div_floor_floating), exact for integers too.
double div_floor(double a, double b) {
  if (b == 0) return a / b;
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div != 0) {
    double fl = std::floor(div);
    if (div - fl > 0.5) fl += 1.0;
    return fl;
  }
  return std::copysign(0.0, a / b);
}

// x = a - floor(a / b) * b with the sign of b (Python/torch remainder).
double py_remainder(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((b < 0) != (m < 0))) m += b;
  return m;
}

Var unary_float(const Var& x, double (*f)(double), double (*df)(double, double)) {
  return map(x, float_or_default(x.dtype()), f, df);
}

// Unary ops that keep integer dtypes (abs, neg, sign, ...).
template <class F, class DF>
Var unary_keep(const Var& x, F f, DF df) {
  if (!is_floating(x.dtype())) {
    Var r = map(x, x.dtype(), f, [](double, double) { return 0.0; });
    return r;
  }
  return map(x, x.dtype(), f, df);
}

double check_int_divisor(double b, DType dt) {
  if (!is_floating(dt) && b == 0) throw Error(ErrorKind::InvalidArgument, "ZeroDivisionError");
  return b;
}

Var divide(const Var& a, const Var& b, const std::string& mode) {
  const DType common = result_type({a, b});
  if (mode.empty()) {
    return zip(
        a, b, float_or_default(common), [](double x, double y) { return x / y; },
        [](double, double y, double) { return 1.0 / y; },
        [](double x, double y, double) { return -x / (y * y); });
  }
  if (mode != "trunc" && mode != "floor")
    invalid(fmt::format("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{}'",
                        mode));
  const bool floor = mode == "floor";
  if (!is_floating(common))
    for (double y : b.data()) check_int_divisor(y, common);
  auto zero = [](double, double, double) { return 0.0; };
  if (floor)
    return arith(
        a, b, common, [](double x, double y) { return div_floor(x, y); }, zero, zero);
  return arith(
      a, b, common, [](double x, double y) { return std::trunc(x / y); }, zero, zero);
}

Var power(const Var& a, const Var& b) {
  const DType dt = result_type({a, b});
  if (!is_floating(dt)) {
    for (double e : b.data())
      if (e < 0) invalid("Integers to negative integer powers are not allowed.");
    return zip_nograd(a, b, dt, [](double x, double y) { return std::pow(x, y); });
  }
  return zip(
      a, b, dt, [](double x, double y) { return std::pow(x, y); },
      // torch: exponent * self.pow(exponent - 1), zero where exponent == 0
      [](double x, double y, double) { return y == 0 ? 0.0 : y * std::pow(x, y - 1); },
      // torch: result * log(self), zero where self == 0 and exponent >= 0
      [](double x, double y, double z) { return (x == 0 && y >= 0) ? 0.0 : z * std::log(x); });
}

Var max_min(const Var& a, const Var& b, bool is_max) {
  const DType dt = result_type({a, b});
  auto f = [is_max](double x, double y) {
    if (std::isnan(x) || std::isnan(y)) return std::nan("");
    return is_max ? (x > y ? x : y) : (x < y ? x : y);
  };
  // torch: grad / 2 to each side on ties
  // torch: where(self == other, grad / 2, grad).masked_fill_(self < other, 0) (NaN pairs pass grad to both)
  auto da = [is_max](double x, double y, double) {
    return x == y ? 0.5 : ((is_max ? x < y : x > y) ? 0.0 : 1.0);
  };
  auto db = [is_max](double x, double y, double) {
    return x == y ? 0.5 : ((is_max ? x > y : x < y) ? 0.0 : 1.0);
  };
  return arith(a, b, dt, f, da, db);
}

Var compare(const Var& a, const Var& b, int op) {
  return zip_nograd(a, b, DType::Bool, [op](double x, double y) {
    bool r = false;
    switch (op) {
      case 0:
        r = x == y;
        break;
      case 1:
        r = x != y;
        break;
      case 2:
        r = x < y;
        break;
      case 3:
        r = x <= y;
        break;
      case 4:
        r = x > y;
        break;
      default:
        r = x >= y;
        break;
    }
    return r ? 1.0 : 0.0;
  });
}

Var bitwise(const Var& a, const Var& b, int op) {
  const DType dt = result_type({a, b});
  if (is_floating(dt)) invalid("bitwise operations are only defined for integer and bool tensors");
  return zip_nograd(a, b, dt, [op](double x, double y) {
    const auto i = static_cast<std::int64_t>(x), j = static_cast<std::int64_t>(y);
    return static_cast<double>(op == 0 ? (i & j) : op == 1 ? (i | j) : (i ^ j));
  });
}

Var clamp(Ctx& c, const char* lo_name, const char* hi_name) {
  Var x = c.t("input");
  std::optional<Var> lo, hi;
  if (lo_name && !c.none(lo_name)) lo = c.t(lo_name);
  if (hi_name && !c.none(hi_name)) hi = c.t(hi_name);
  if (!lo && !hi) invalid("torch.clamp: At least one of 'min' or 'max' must not be None");
  std::vector<Var> ops{x};
  if (lo) ops.push_back(*lo);
  if (hi) ops.push_back(*hi);
  const DType dt = result_type(std::span<const Var>(ops));
  Var r = x;
  // torch: gradient flows where lo <= x <= hi (NaN bounds propagate NaN).
  if (lo)
    r = arith(
        r, *lo, dt,
        [](double v, double l) { return std::isnan(v) || std::isnan(l) ? v + l : (v < l ? l : v); },
        [](double v, double l, double) { return v >= l ? 1.0 : 0.0; },
        [](double v, double l, double) { return v < l ? 1.0 : 0.0; });
  if (hi)
    r = arith(
        r, *hi, dt,
        [](double v, double h) { return std::isnan(v) || std::isnan(h) ? v + h : (v > h ? h : v); },
        [](double v, double h, double) { return v <= h ? 1.0 : 0.0; },
        [](double v, double h, double) { return v > h ? 1.0 : 0.0; });
  return cast(r, dt);
}

double erf_grad(double x, double) { return 2.0 / std::sqrt(std::numbers::pi) * std::exp(-x * x); }

void def_unary_float(RunnerRegistry& reg, const char* fn, unsigned sets,
                     std::initializer_list<std::string_view> extra, double (*f)(double),
                     double (*df)(double, double)) {
  def(reg, names(fn, sets, extra), std::string(fn) + "(Tensor input, *, Tensor? out=None) -> Tensor",
      [f, df](Ctx& c) -> Outs { return {unary_float(c.t("input"), f, df)}; });
}

}  // namespace

void register_elementwise_runners(RunnerRegistry& reg) {
  // ---- arithmetic -------------------------------------------------------------------------------
  def(reg,
      names("add", kStd | kAten,
            {"Tensor.__add__", "Tensor.__radd__", "Tensor.__iadd__", "Aten.add.Tensor", "Aten.add.Scalar",
             "Aten.add_.Tensor"}),
      "add(Tensor input, Tensor other, *, Scalar alpha=1, Tensor? out=None) -> Tensor", [](Ctx& c) -> Outs {
        Var a = c.t("input"), b = c.t("other");
        const double alpha = c.f("alpha");
        const DType dt = result_type({a, b});
        return {arith(
            a, b, dt, [alpha](double x, double y) { return x + alpha * y; },
            [](double, double, double) { return 1.0; }, [alpha](double, double, double) { return alpha; })};
      });
  def(reg,
      names("sub", kStd | kAten,
            {"Torch.subtract", "Tensor.subtract", "Tensor.__sub__", "Tensor.__rsub__", "Tensor.__isub__",
             "Aten.sub.Tensor", "Aten.sub.Scalar", "Torch.rsub"}),
      "sub(Tensor input, Tensor other, *, Scalar alpha=1, Tensor? out=None) -> Tensor", [](Ctx& c) -> Outs {
        Var a = c.t("input"), b = c.t("other");
        const double alpha = c.f("alpha");
        const DType dt = result_type({a, b});
        if (dt == DType::Bool)
          invalid("Subtraction, the `-` operator, with two bool tensors is not supported.");
        return {arith(
            a, b, dt, [alpha](double x, double y) { return x - alpha * y; },
            [](double, double, double) { return 1.0; }, [alpha](double, double, double) { return -alpha; })};
      });
  def(reg,
      names("mul", kStd | kAten,
            {"Torch.multiply", "Tensor.multiply", "Tensor.__mul__", "Tensor.__rmul__", "Tensor.__imul__",
             "Aten.mul.Tensor", "Aten.mul.Scalar"}),
      "mul(Tensor input, Tensor other, *, Tensor? out=None) -> Tensor", [](Ctx& c) -> Outs {
        Var a = c.t("input"), b = c.t("other");
        return {arith(
            a, b, result_type({a, b}), [](double x, double y) { return x * y; },
            [](double, double y, double) { return y; }, [](double x, double, double) { return x; })};
      });
  def(reg,
      names("div", kStd | kAten,
            {"Torch.divide", "Tensor.divide", "Torch.true_divide", "Tensor.true_divide", "Tensor.__truediv__",
             "Tensor.__rtruediv__", "Tensor.__itruediv__", "Tensor.__div__", "Tensor.__rdiv__",
             "Aten.div.Tensor", "Aten.div.Scalar", "Aten.div.Tensor_mode"}),
      "div(Tensor input, Tensor other, *, str? rounding_mode=None, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs {
        return {divide(c.t("input"), c.t("other"), c.none("rounding_mode") ? "" : c.s("rounding_mode"))};
      });
  def(
      reg,
      names("floor_divide", kTorch | kTensor | kInplace | kMint | kMsOps,
            {"Tensor.__floordiv__", "Tensor.__rfloordiv__", "Tensor.__ifloordiv__"}),
      "floor_divide(Tensor input, Tensor other, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {divide(c.t("input"), c.t("other"), "floor")}; },
      false);  // torch: "derivative for aten::floor_divide is not implemented"
  def(reg,
      names("remainder", kTorch | kTensor | kInplace | kMint,
            {"Tensor.__mod__", "Tensor.__rmod__", "Tensor.__imod__"}),
      "remainder(Tensor input, Tensor other, *, Tensor? out=None) -> Tensor", [](Ctx& c) -> Outs {
        Var a = c.t("input"), b = c.t("other");
        const DType dt = result_type({a, b});
        if (!is_floating(dt))
          for (double y : b.data()) check_int_divisor(y, dt);
        return {arith(
            a, b, dt, [](double x, double y) { return py_remainder(x, y); },
            [](double, double, double) { return 1.0; },
            [](double x, double y, double) { return -div_floor(x, y); })};
      });
  def(reg,
      names("pow", kStd | kAten,
            {"Tensor.__pow__", "Tensor.__rpow__", "Tensor.__ipow__", "Aten.pow.Tensor_Tensor",
             "Aten.pow.Tensor_Scalar", "Aten.pow.Scalar"}),
      "pow(Tensor input, Tensor exponent, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {power(c.t("input"), c.t("exponent"))}; });
  def(reg, names("maximum", kTorch | kTensor | kMint | kMsOps),
      "maximum(Tensor input, Tensor other, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {max_min(c.t("input"), c.t("other"), true)}; });
  def(reg, names("minimum", kTorch | kTensor | kMint | kMsOps),
      "minimum(Tensor input, Tensor other, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {max_min(c.t("input"), c.t("other"), false)}; });
  def(reg, names("lerp", kTorch | kTensor | kInplace | kMint),
      "lerp(Tensor input, Tensor end, Tensor weight, *, Tensor? out=None) -> Tensor", [](Ctx& c) -> Outs {
        Var a = c.t("input"), e = c.t("end"), w = c.t("weight");
        // input + weight * (end - input): the same formula as torch for weight < 0.5; the other branch
        // differs by rounding only.
        const DType dt = result_type({a, e});
        Var diff = zip(
            e, a, dt, [](double x, double y) { return x - y; }, [](double, double, double) { return 1.0; },
            [](double, double, double) { return -1.0; });
        Var step = zip(
            w, diff, dt, [](double x, double y) { return x * y; }, [](double, double y, double) { return y; },
            [](double x, double, double) { return x; });
        return {zip(
            a, step, dt, [](double x, double y) { return x + y; }, [](double, double, double) { return 1.0; },
            [](double, double, double) { return 1.0; })};
      });
  def(reg, names("clamp", kStd | kAten, {"Torch.clip", "Tensor.clip", "Tensor.clip_", "Aten.clamp.Tensor"}),
      "clamp(Tensor input, Tensor? min=None, Tensor? max=None, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {clamp(c, "min", "max")}; });
  def(reg, names("clamp_min", kTorch | kTensor | kInplace), "clamp_min(Tensor input, Tensor min) -> Tensor",
      [](Ctx& c) -> Outs { return {clamp(c, "min", nullptr)}; });
  def(reg, names("clamp_max", kTorch | kTensor | kInplace), "clamp_max(Tensor input, Tensor max) -> Tensor",
      [](Ctx& c) -> Outs { return {clamp(c, nullptr, "max")}; });

  // ---- unary ------------------------------------------------------------------------------------
  def_unary_float(
      reg, "sqrt", kStd | kAten, {}, [](double x) { return std::sqrt(x); },
      [](double, double y) { return 0.5 / y; });
  def_unary_float(
      reg, "rsqrt", kStd | kAten, {}, [](double x) { return 1.0 / std::sqrt(x); },
      [](double, double y) { return -0.5 * y * y * y; });
  def_unary_float(
      reg, "exp", kStd | kAten, {}, [](double x) { return std::exp(x); }, [](double, double y) { return y; });
  def_unary_float(
      reg, "exp2", kTorch | kTensor | kInplace, {}, [](double x) { return std::exp2(x); },
      [](double, double y) { return y * std::numbers::ln2; });
  def_unary_float(
      reg, "expm1", kStd, {}, [](double x) { return std::expm1(x); },
      [](double, double y) { return y + 1.0; });
  def_unary_float(
      reg, "log", kStd | kAten, {}, [](double x) { return std::log(x); },
      [](double x, double) { return 1.0 / x; });
  def_unary_float(
      reg, "log2", kStd, {}, [](double x) { return std::log2(x); },
      [](double x, double) { return 1.0 / (x * std::numbers::ln2); });
  def_unary_float(
      reg, "log10", kStd, {}, [](double x) { return std::log10(x); },
      [](double x, double) { return 1.0 / (x * std::numbers::ln10); });
  def_unary_float(
      reg, "log1p", kStd | kAten, {}, [](double x) { return std::log1p(x); },
      [](double x, double) { return 1.0 / (1.0 + x); });
  def_unary_float(
      reg, "sin", kStd | kAten, {}, [](double x) { return std::sin(x); },
      [](double x, double) { return std::cos(x); });
  def_unary_float(
      reg, "cos", kStd | kAten, {}, [](double x) { return std::cos(x); },
      [](double x, double) { return -std::sin(x); });
  def_unary_float(
      reg, "tan", kStd, {}, [](double x) { return std::tan(x); },
      [](double, double y) { return 1.0 + y * y; });
  def_unary_float(
      reg, "atan", kStd, {}, [](double x) { return std::atan(x); },
      [](double x, double) { return 1.0 / (1.0 + x * x); });
  def_unary_float(
      reg, "erf", kStd | kAten, {"Torch.special.erf"}, [](double x) { return std::erf(x); }, erf_grad);
  def_unary_float(
      reg, "reciprocal", kStd | kAten, {}, [](double x) { return 1.0 / x; },
      [](double, double y) { return -y * y; });
  def_unary_float(
      reg, "sigmoid", kStd | kAten | kFunctional, {"Torch.special.expit"},
      [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, [](double, double y) { return y * (1.0 - y); });
  def_unary_float(
      reg, "tanh", kStd | kAten | kFunctional, {}, [](double x) { return std::tanh(x); },
      [](double, double y) { return 1.0 - y * y; });

  auto keep = [&](const char* fn, unsigned sets, std::initializer_list<std::string_view> extra,
                  double (*f)(double), double (*df)(double, double)) {
    def(reg, names(fn, sets, extra), std::string(fn) + "(Tensor input, *, Tensor? out=None) -> Tensor",
        [f, df](Ctx& c) -> Outs { return {unary_keep(c.t("input"), f, df)}; });
  };
  keep(
      "abs", kStd | kAten, {"Torch.absolute", "Tensor.absolute", "Tensor.__abs__"},
      [](double x) { return std::fabs(x); },
      [](double x, double) { return x > 0   ? 1.0
                                    : x < 0 ? -1.0
                                            : 0.0; });
  keep(
      "neg", kStd | kAten, {"Torch.negative", "Tensor.negative", "Tensor.__neg__"},
      [](double x) { return -x; }, [](double, double) { return -1.0; });
  keep(
      "sign", kTorch | kTensor | kInplace | kMint | kMsOps, {},
      // NaN -> 0, like torch
      [](double x) { return x > 0   ? 1.0
                            : x < 0 ? -1.0
                                    : 0.0; }, [](double, double) { return 0.0; });
  keep(
      "floor", kStd | kAten, {}, [](double x) { return std::floor(x); }, [](double, double) { return 0.0; });
  keep(
      "ceil", kStd | kAten, {}, [](double x) { return std::ceil(x); }, [](double, double) { return 0.0; });
  keep(
      "trunc", kStd, {"Torch.fix", "Tensor.fix"}, [](double x) { return std::trunc(x); },
      [](double, double) { return 0.0; });
  keep(
      "square", kTorch | kTensor | kInplace | kMint | kMsOps, {}, [](double x) { return x * x; },
      [](double x, double) { return 2.0 * x; });
  def(reg, names("round", kStd | kAten, {"Aten.round.decimals"}),
      "round(Tensor input, *, int decimals=0, Tensor? out=None) -> Tensor", [](Ctx& c) -> Outs {
        const std::int64_t d = c.i("decimals");
        Var x = c.t("input");
        if (!is_floating(x.dtype())) return {x};
        // torch rounds half to even (nearbyint), scaling by 10^decimals first.
        const double p = std::pow(10.0, static_cast<double>(d < 0 ? -d : d));
        return {map(
            x, x.dtype(),
            [d, p](double v) {
              return d == 0  ? std::nearbyint(v)
                     : d > 0 ? std::nearbyint(v * p) / p
                             : std::nearbyint(v / p) * p;
            },
            [](double, double) { return 0.0; })};
      });

  // ---- comparisons and logic --------------------------------------------------------------------
  const char* cmp[6][2] = {{"eq", "__eq__"}, {"ne", "__ne__"}, {"lt", "__lt__"},
                           {"le", "__le__"}, {"gt", "__gt__"}, {"ge", "__ge__"}};
  const char* alias[6] = {nullptr, "not_equal", "less", "less_equal", "greater", "greater_equal"};
  for (int op = 0; op < 6; ++op) {
    std::vector<std::string> n = names(cmp[op][0], kStd | kAten);
    n.push_back(std::string("Tensor.") + cmp[op][1]);
    n.push_back(std::string("Aten.") + cmp[op][0] + ".Tensor");
    n.push_back(std::string("Aten.") + cmp[op][0] + ".Scalar");
    if (alias[op]) {
      n.push_back(std::string("Torch.") + alias[op]);
      n.push_back(std::string("Tensor.") + alias[op]);
    }
    def(
        reg, n, std::string(cmp[op][0]) + "(Tensor input, Tensor other, *, Tensor? out=None) -> Tensor",
        [op](Ctx& c) -> Outs { return {compare(c.t("input"), c.t("other"), op)}; }, false);
  }
  const char* logic[3] = {"logical_and", "logical_or", "logical_xor"};
  for (int op = 0; op < 3; ++op)
    def(
        reg, names(logic[op], kStd),
        std::string(logic[op]) + "(Tensor input, Tensor other, *, Tensor? out=None) -> Tensor",
        [op](Ctx& c) -> Outs {
          return {zip_nograd(c.t("input"), c.t("other"), DType::Bool, [op](double x, double y) {
            const bool a = x != 0, b = y != 0;
            return (op == 0 ? (a && b) : op == 1 ? (a || b) : (a != b)) ? 1.0 : 0.0;
          })};
        },
        false);
  def(
      reg, names("logical_not", kStd), "logical_not(Tensor input, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs {
        return {map(
            c.t("input"), DType::Bool, [](double x) { return x == 0 ? 1.0 : 0.0; },
            [](double, double) { return 0.0; })};
      },
      false);
  const char* bits[3][3] = {{"bitwise_and", "__and__", "__rand__"},
                            {"bitwise_or", "__or__", "__ror__"},
                            {"bitwise_xor", "__xor__", "__rxor__"}};
  for (int op = 0; op < 3; ++op) {
    std::vector<std::string> n = names(bits[op][0], kTorch | kTensor | kInplace);
    for (int k = 1; k < 3; ++k) n.push_back(std::string("Tensor.") + bits[op][k]);
    n.push_back(std::string("Tensor.__i") + (bits[op][1] + 2));
    def(
        reg, n, std::string(bits[op][0]) + "(Tensor input, Tensor other, *, Tensor? out=None) -> Tensor",
        [op](Ctx& c) -> Outs { return {bitwise(c.t("input"), c.t("other"), op)}; }, false);
  }
  def(
      reg, names("bitwise_not", kTorch | kTensor | kInplace, {"Tensor.__invert__"}),
      "bitwise_not(Tensor input, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        if (is_floating(x.dtype())) invalid("bitwise_not is only defined for integer and bool tensors");
        const bool is_bool = x.dtype() == DType::Bool;
        return {map(
            x, x.dtype(), [is_bool](double v) { return is_bool ? (v == 0 ? 1.0 : 0.0) : -v - 1.0; },
            [](double, double) { return 0.0; })};
      },
      false);
  auto pred = [&](const char* fn, bool (*p)(double)) {
    def(
        reg, names(fn, kTorch | kTensor | kMint | kMsOps), std::string(fn) + "(Tensor input) -> Tensor",
        [p](Ctx& c) -> Outs {
          return {map(
              c.t("input"), DType::Bool, [p](double x) { return p(x) ? 1.0 : 0.0; },
              [](double, double) { return 0.0; })};
        },
        false);
  };
  pred("isnan", [](double x) { return std::isnan(x); });
  pred("isinf", [](double x) { return std::isinf(x); });
  pred("isfinite", [](double x) { return std::isfinite(x); });
  pred("isposinf", [](double x) { return std::isinf(x) && x > 0; });
  pred("isneginf", [](double x) { return std::isinf(x) && x < 0; });

  // ---- selection --------------------------------------------------------------------------------
  def(reg, names("where", kTorch | kTensor | kMint | kMsOps, {"Aten.where.self"}),
      "where(Tensor condition, Tensor input, Tensor other, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var cond = c.t("condition");
        if (cond.dtype() != DType::Bool && cond.dtype() != DType::UInt8)
          invalid(
              fmt::format("where expected condition to be a boolean tensor, but got a tensor with dtype {}",
                          name(cond.dtype())));
        return {where(cond, c.t("input"), c.t("other"))};
      });
  def(reg,
      names("masked_fill", kTorch | kTensor | kInplace | kMint | kMsTensor | kMsOps,
            {"Aten.masked_fill.Scalar", "Aten.masked_fill.Tensor"}),
      "masked_fill(Tensor input, Tensor mask, Tensor value) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input"), mask = c.t("mask"), v = c.t("value");
        if (mask.dtype() != DType::Bool) invalid("masked_fill only supports boolean masks");
        if (v.ndim() != 0 && !v.wrapped())
          invalid(
              fmt::format("masked_fill only supports a 0-dimensional value tensor, but got tensor with {} "
                          "dimension(s).",
                          v.ndim()));
        Var r = where(mask, v, x);
        if (r.shape() != x.shape())
          invalid(fmt::format("masked_fill: mask of shape {} does not broadcast to the input shape {}",
                              shape_to_string(mask.shape()), shape_to_string(x.shape())));
        return {cast(r, x.dtype())};
      });
}

}  // namespace probe::runners
