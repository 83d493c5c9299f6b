// Elementwise arithmetic, comparisons, logical ops and unary math (float64 reference).
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>

#include "probe/error.h"
#include "runners/Ops.h"
#include "runners/RunnerKit.h"

namespace probe::runners {

namespace {

constexpr unsigned kStd = kTorch | kTensor | kInplace | kMint | kMsTensor | kMsOps;

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

// digamma and trigamma by recurrence up to x >= 10, then the asymptotic series (float64 accurate);
// reflection for negative x. Like torch: digamma(+-0) = -+inf, digamma(negative integer) = NaN.
double digamma(double x) {
  if (std::isnan(x) || x == -std::numeric_limits<double>::infinity()) return std::nan("");
  if (x == 0) return std::copysign(std::numeric_limits<double>::infinity(), -x);
  if (x < 0) {
    if (x == std::floor(x)) return std::nan("");
    return digamma(1.0 - x) - std::numbers::pi / std::tan(std::numbers::pi * x);
  }
  double r = 0;
  while (x < 10) {
    r -= 1.0 / x;
    x += 1.0;
  }
  const double f = 1.0 / (x * x);
  return r + std::log(x) - 0.5 / x -
         f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132)))));
}

double trigamma(double x) {
  if (x <= 0 && x == std::floor(x)) return std::numeric_limits<double>::infinity();
  if (x < 0) {
    const double s = std::sin(std::numbers::pi * x);
    return -trigamma(1.0 - x) + std::numbers::pi * std::numbers::pi / (s * s);
  }
  double r = 0;
  while (x < 10) {
    r += 1.0 / (x * x);
    x += 1.0;
  }
  const double f = 1.0 / (x * x);
  return r + 1.0 / x + 0.5 * f +
         f / x * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f * (1.0 / 30 - f * 5.0 / 66))));
}

// erf^-1 by Halley steps from a closed-form start. Above 0.5 the steps solve erfc(x) = 1 - y (1 - y is exact
// there), which keeps full precision in the tails where erf(x) rounds to 1.
double erfinv(double y) {
  if (std::isnan(y) || y < -1 || y > 1) return std::nan("");
  if (y < 0) return -erfinv(-y);
  if (y == 1) return std::numeric_limits<double>::infinity();
  if (y == 0) return y;
  // Winitzki's approximation (a = 0.147), about 2e-3 relative, as the starting point.
  constexpr double a = 0.147;
  const double q = 1.0 - y;
  const double w = -std::log(q * (1.0 + y));
  const double t = 2.0 / (std::numbers::pi * a) - w / 2;
  double x = std::sqrt(std::sqrt(t * t + w / a) - t);
  for (int k = 0; k < 8; ++k) {
    const double d = 2.0 / std::sqrt(std::numbers::pi) * std::exp(-x * x);
    if (d == 0) break;
    // f = erf(x) - y (f' = d) or f = erfc(x) - q (f' = -d); f'' / (2 f') = -x in both cases
    const double step = y > 0.5 ? (std::erfc(x) - q) / (-d + (std::erfc(x) - q) * x)
                                : (std::erf(x) - y) / (d + (std::erf(x) - y) * x);
    x -= step;
    if (std::fabs(step) <= 1e-17 * std::fabs(x)) break;
  }
  return x;
}

// Largest finite value of a floating dtype (nan_to_num's default replacements for +-inf).
double max_finite(DType dt) {
  switch (dt) {
    case DType::Float16:
      return 65504.0;
    case DType::BFloat16:
      return 3.3895313892515355e38;
    case DType::Float32:
      return static_cast<double>(std::numeric_limits<float>::max());
    default:
      return std::numeric_limits<double>::max();
  }
}

double sinc(double x) {
  if (x == 0) return 1.0;
  const double px = std::numbers::pi * x;
  return std::sin(px) / px;
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
            {"Torch.multiply", "Tensor.multiply", "Tensor.multiply_", "Tensor.__mul__", "Tensor.__rmul__",
             "Tensor.__imul__", "Aten.mul.Tensor", "Aten.mul.Scalar"}),
      "mul(Tensor input, Tensor other, *, Tensor? out=None) -> Tensor", [](Ctx& c) -> Outs {
        Var a = c.t("input"), b = c.t("other");
        return {arith(
            a, b, result_type({a, b}), [](double x, double y) { return x * y; },
            [](double, double y, double) { return y; }, [](double x, double, double) { return x; })};
      });
  def(reg,
      names("div", kStd | kAten,
            {"Torch.divide", "Tensor.divide", "Tensor.divide_", "Torch.true_divide", "Tensor.true_divide",
             "Tensor.true_divide_", "Tensor.__truediv__", "Tensor.__rtruediv__", "Tensor.__itruediv__",
             "Tensor.__div__", "Tensor.__rdiv__", "Aten.div.Tensor", "Aten.div.Scalar",
             "Aten.div.Tensor_mode"}),
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
      "abs", kStd | kAten, {"Torch.absolute", "Tensor.absolute", "Tensor.absolute_", "Tensor.__abs__"},
      [](double x) { return std::fabs(x); },
      [](double x, double) { return x > 0   ? 1.0
                                    : x < 0 ? -1.0
                                            : 0.0; });
  keep(
      "neg", kStd | kAten, {"Torch.negative", "Tensor.negative", "Tensor.negative_", "Tensor.__neg__"},
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
      "trunc", kStd, {"Torch.fix", "Tensor.fix", "Tensor.fix_"}, [](double x) { return std::trunc(x); },
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
      n.push_back(std::string("Tensor.") + alias[op] + "_");
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
  // ---- more unary math --------------------------------------------------------------------------
  const unsigned un = kTorch | kTensor | kInplace;
  def_unary_float(
      reg, "acos", un, {"Torch.arccos", "Tensor.arccos", "Tensor.arccos_"},
      [](double x) { return std::acos(x); }, [](double x, double) { return -1.0 / std::sqrt(1.0 - x * x); });
  def_unary_float(
      reg, "asin", un, {"Torch.arcsin", "Tensor.arcsin", "Tensor.arcsin_"},
      [](double x) { return std::asin(x); }, [](double x, double) { return 1.0 / std::sqrt(1.0 - x * x); });
  def_unary_float(
      reg, "arctan", un, {}, [](double x) { return std::atan(x); },
      [](double x, double) { return 1.0 / (1.0 + x * x); });
  def_unary_float(
      reg, "sinh", un, {}, [](double x) { return std::sinh(x); },
      [](double x, double) { return std::cosh(x); });
  def_unary_float(
      reg, "cosh", un, {}, [](double x) { return std::cosh(x); },
      [](double x, double) { return std::sinh(x); });
  def_unary_float(
      reg, "asinh", un, {"Torch.arcsinh", "Tensor.arcsinh", "Tensor.arcsinh_"},
      [](double x) { return std::asinh(x); }, [](double x, double) { return 1.0 / std::sqrt(x * x + 1.0); });
  def_unary_float(
      reg, "acosh", un, {"Torch.arccosh", "Tensor.arccosh", "Tensor.arccosh_"},
      [](double x) { return std::acosh(x); }, [](double x, double) { return 1.0 / std::sqrt(x * x - 1.0); });
  def_unary_float(
      reg, "atanh", un, {"Torch.arctanh", "Tensor.arctanh", "Tensor.arctanh_"},
      [](double x) { return std::atanh(x); }, [](double x, double) { return 1.0 / (1.0 - x * x); });
  def_unary_float(
      reg, "erfc", un, {"Torch.special.erfc"}, [](double x) { return std::erfc(x); },
      [](double x, double y) { return -erf_grad(x, y); });
  def_unary_float(reg, "erfinv", un, {"Torch.special.erfinv"}, erfinv,
                  [](double, double y) { return std::sqrt(std::numbers::pi) / 2.0 * std::exp(y * y); });
  def_unary_float(
      reg, "lgamma", un, {}, [](double x) { return std::lgamma(x); },
      [](double x, double) { return digamma(x); });
  def_unary_float(reg, "digamma", un, {"Torch.special.digamma", "Torch.special.psi"}, digamma,
                  [](double x, double) { return trigamma(x); });
  def_unary_float(
      reg, "deg2rad", un, {}, [](double x) { return x * (std::numbers::pi / 180.0); },
      [](double, double) { return std::numbers::pi / 180.0; });
  def_unary_float(
      reg, "rad2deg", un, {}, [](double x) { return x * (180.0 / std::numbers::pi); },
      [](double, double) { return 180.0 / std::numbers::pi; });
  def_unary_float(reg, "sinc", un, {"Torch.special.sinc"}, sinc, [](double x, double) {
    if (x == 0) return 0.0;
    const double px = std::numbers::pi * x;
    return (std::cos(px) * px - std::sin(px)) / (px * x);
  });
  keep(
      "frac", un, {}, [](double x) { return x - std::trunc(x); }, [](double, double) { return 1.0; });
  keep(
      "sgn", un, {}, [](double x) { return std::isnan(x) ? 0.0
                                           : x > 0       ? 1.0
                                           : x < 0       ? -1.0
                                                         : 0.0; },
      [](double, double) { return 0.0; });
  pred("signbit", [](double x) { return std::signbit(x); });
  def(reg, names("logit", un, {"Torch.special.logit"}), "logit(Tensor input, float? eps=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const bool has_eps = !c.none("eps");
        const double eps = has_eps ? c.f("eps") : 0.0;
        auto clampx = [has_eps, eps](double v) {
          return has_eps ? std::min(std::max(v, eps), 1.0 - eps) : v;
        };
        return {map(
            x, float_or_default(x.dtype()),
            [clampx](double v) {
              const double z = clampx(v);
              return std::log(z / (1.0 - z));
            },
            // torch: zero outside [eps, 1 - eps] when eps is given
            [has_eps, eps](double v, double) {
              if (has_eps && (v < eps || v > 1.0 - eps)) return 0.0;
              if (!has_eps && (v < 0 || v > 1)) return std::nan("");
              return 1.0 / (v * (1.0 - v));
            })};
      });
  def(reg, names("nan_to_num", un),
      "nan_to_num(Tensor input, float? nan=0.0, float? posinf=None, float? neginf=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        if (!is_floating(x.dtype())) return {x};
        // Deliberate deviation from a literal float64 bench (D5; to be listed in DECISIONS.md): +-inf become
        // the extremes of the device dtype, not of float64, or every float32 nan_to_num(inf) would be an
        // error (1.8e308 against the 3.4e38 the device correctly wrote). Tested by the defaults_* fixtures.
        const double big = max_finite(x.dtype());
        const double nan = c.none("nan") ? 0.0 : c.f("nan");
        const double pinf = c.none("posinf") ? big : c.f("posinf");
        const double ninf = c.none("neginf") ? -big : c.f("neginf");
        return {map(
            x, x.dtype(),
            [=](double v) {
              return std::isnan(v)                                   ? nan
                     : v == std::numeric_limits<double>::infinity()  ? pinf
                     : v == -std::numeric_limits<double>::infinity() ? ninf
                                                                     : v;
            },
            [](double v, double) { return std::isfinite(v) ? 1.0 : 0.0; })};
      });

  // ---- more binary math -------------------------------------------------------------------------
  auto binary = [&](const char* fn, std::initializer_list<std::string_view> extra, bool float_out, auto f,
                    auto da, auto db) {
    def(reg, names(fn, un, extra),
        std::string(fn) + "(Tensor input, Tensor other, *, Tensor? out=None) -> Tensor", [=](Ctx& c) -> Outs {
          Var a = c.t("input"), b = c.t("other");
          const DType common = result_type({a, b});
          return {arith(a, b, float_out ? float_or_default(common) : common, f, da, db)};
        });
  };
  binary(
      "atan2", {"Torch.arctan2", "Tensor.arctan2", "Tensor.arctan2_"}, true,
      [](double y, double x) { return std::atan2(y, x); },
      [](double y, double x, double) { return x / (x * x + y * y); },
      [](double y, double x, double) { return -y / (x * x + y * y); });
  binary(
      "hypot", {}, false, [](double x, double y) { return std::hypot(x, y); },
      [](double x, double, double z) { return x / z; }, [](double, double y, double z) { return y / z; });
  binary(
      "copysign", {}, true, [](double x, double y) { return std::copysign(x, y); },
      // torch: zero where the input is zero, else the sign flip
      [](double x, double, double z) {
        return x == 0 ? 0.0 : (std::signbit(x) == std::signbit(z) ? 1.0 : -1.0);
      },
      [](double, double, double) { return 0.0; });
  for (const bool is_max : {true, false})
    binary(
        is_max ? "fmax" : "fmin", {}, false,
        [is_max](double x, double y) {
          if (std::isnan(x)) return y;
          if (std::isnan(y)) return x;
          return is_max ? std::max(x, y) : std::min(x, y);
        },
        // torch: the input takes the gradient on ties and where the other is NaN
        [is_max](double x, double y, double) {
          return (is_max ? x >= y : x <= y) || std::isnan(y) ? 1.0 : 0.0;
        },
        [is_max](double x, double y, double) {
          return (is_max ? x >= y : x <= y) || std::isnan(y) ? 0.0 : 1.0;
        });
  def(reg, names("fmod", un), "fmod(Tensor input, Tensor other, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var a = c.t("input"), b = c.t("other");
        const DType dt = result_type({a, b});
        if (!is_floating(dt))
          for (double y : b.data()) check_int_divisor(y, dt);
        return {arith(
            a, b, dt, [](double x, double y) { return std::fmod(x, y); },
            [](double, double, double) { return 1.0; },
            [](double x, double y, double) { return -std::trunc(x / y); })};
      });
  binary(
      "logaddexp", {}, true,
      [](double x, double y) {
        if (std::isinf(x) && x == y) return x;
        const double m = std::max(x, y);
        return m + std::log1p(std::exp(-std::fabs(x - y)));
      },
      [](double x, double, double z) { return std::exp(x - z); },
      [](double, double y, double z) { return std::exp(y - z); });
  binary(
      "logaddexp2", {}, true,
      [](double x, double y) {
        if (std::isinf(x) && x == y) return x;
        const double m = std::max(x, y);
        return m + std::log1p(std::exp2(-std::fabs(x - y))) / std::numbers::ln2;
      },
      [](double x, double, double z) { return std::exp2(x - z); },
      [](double, double y, double z) { return std::exp2(y - z); });
  binary(
      "xlogy", {"Torch.special.xlogy"}, true,
      [](double x, double y) {
        if (std::isnan(y)) return y;
        return x == 0 ? 0.0 : x * std::log(y);
      },
      // torch 1.13: xlogy(grad, other) masked to 0 where self == 0 and other <= 0; and self / other
      [](double x, double y, double) { return x == 0 && y <= 0 ? 0.0 : std::log(y); },
      [](double x, double y, double) { return x / y; });
  binary(
      "ldexp", {}, true, [](double x, double y) { return x * std::exp2(y); },
      [](double, double y, double) { return std::exp2(y); },
      [](double x, double y, double) { return x * std::numbers::ln2 * std::exp2(y); });
  def(
      reg, names("heaviside", un), "heaviside(Tensor input, Tensor values, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var a = c.t("input"), b = c.t("values");
        if (a.dtype() != b.dtype() && !b.wrapped())
          invalid("heaviside is not yet implemented for tensors with different dtypes");
        return {arith(
            a, b, result_type({a, b}), [](double x, double v) { return x == 0 ? v : (x > 0 ? 1.0 : 0.0); },
            [](double, double, double) { return 0.0; }, [](double, double, double) { return 0.0; })};
      },
      false);
  def(reg, names("float_power", un),
      "float_power(Tensor input, Tensor exponent, *, Tensor? out=None) -> Tensor", [](Ctx& c) -> Outs {
        // torch computes float_power in float64 whatever the inputs (the result is float64 on device too).
        Var a = c.t("input"), b = c.t("exponent");
        return {power(is_floating(a.dtype()) ? relabel(a, DType::Float64) : cast(a, DType::Float64),
                      is_floating(b.dtype()) ? relabel(b, DType::Float64) : cast(b, DType::Float64))};
      });

  // ---- pointwise ternary ------------------------------------------------------------------------
  for (const bool is_div : {false, true}) {
    const std::string fn = is_div ? "addcdiv" : "addcmul";
    def(reg, names(fn, un),
        fn + "(Tensor input, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor? out=None) -> Tensor",
        [is_div](Ctx& c) -> Outs {
          Var x = c.t("input"), t1 = c.t("tensor1"), t2 = c.t("tensor2");
          if (is_div && !is_floating(t1.dtype()) && !is_floating(t2.dtype()))
            invalid("Integer division with addcdiv is no longer supported");
          const DType dt = result_type({x, t1, t2});
          Var p = is_div ? ops::div(t1, t2) : ops::mul(t1, t2);
          const double v = c.f("value");
          if (v != 1) p = ops::mul(p, ops::scalar_like(v, p));
          return {cast(ops::add(x, p), dt)};
        });
  }
  // ---- closeness ----------------------------------------------------------------------------------
  auto close = [](const Var& a, const Var& b, double rtol, double atol, bool equal_nan) {
    if (a.dtype() != b.dtype() && !b.wrapped())
      invalid(fmt::format("{} did not match {}", name(a.dtype()), name(b.dtype())));
    return zip_nograd(a, b, DType::Bool, [rtol, atol, equal_nan](double x, double y) {
      if (std::isnan(x) || std::isnan(y)) return equal_nan && std::isnan(x) && std::isnan(y) ? 1.0 : 0.0;
      if (x == y) return 1.0;
      if (std::isinf(x) || std::isinf(y)) return 0.0;
      return std::fabs(x - y) <= atol + rtol * std::fabs(y) ? 1.0 : 0.0;
    });
  };
  const char* close_schema =
      "(Tensor input, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False)";
  def(
      reg, names("isclose", kTorch | kTensor), std::string("isclose") + close_schema + " -> Tensor",
      [close](Ctx& c) -> Outs {
        return {close(c.t("input"), c.t("other"), c.f("rtol"), c.f("atol"), c.b("equal_nan"))};
      },
      false);
  def(
      reg, names("allclose", kTorch | kTensor), std::string("allclose") + close_schema + " -> bool",
      [close](Ctx& c) -> Outs {
        Var r = close(c.t("input"), c.t("other"), c.f("rtol"), c.f("atol"), c.b("equal_nan"));
        bool all = true;
        for (double v : r.data()) all = all && v != 0;
        return {Out(Value(all))};
      },
      false);
  def(
      reg, names("equal", kTorch | kTensor), "equal(Tensor input, Tensor other) -> bool",
      [](Ctx& c) -> Outs {
        Var a = c.t("input"), b = c.t("other");
        bool eq = a.shape() == b.shape();
        for (std::size_t i = 0; eq && i < a.data().size(); ++i) eq = a.data()[i] == b.data()[i];
        return {Out(Value(eq))};
      },
      false);
  // ---- shifts and fill ------------------------------------------------------------------------------
  for (const bool left : {true, false}) {
    const std::string fn = left ? "bitwise_left_shift" : "bitwise_right_shift";
    std::vector<std::string> n = names(fn, kTorch | kTensor | kInplace);
    const std::string dunder = left ? "lshift__" : "rshift__";
    n.push_back("Tensor.__" + dunder);
    n.push_back("Tensor.__i" + dunder);
    def(
        reg, n, fn + "(Tensor input, Tensor other, *, Tensor? out=None) -> Tensor",
        [left](Ctx& c) -> Outs {
          Var a = c.t("input"), b = c.t("other");
          const DType dt = result_type({a, b});
          // torch: integers shift (a shift by >= the bit width gives 0, or -1 for a negative >>);
          // torch 1.13's CPU kernels refuse floating and bool operands
          if (is_floating(dt) || dt == DType::Bool)
            invalid(
                fmt::format("\"{}\" not implemented for '{}'", left ? "lshift_cpu" : "rshift_cpu", name(dt)));
          const int bits = static_cast<int>(8 * itemsize(dt));
          return {zip_nograd(a, b, dt, [left, bits, dt](double x, double y) {
            const auto i = static_cast<std::int64_t>(x), s = static_cast<std::int64_t>(y);
            if (s < 0 || s >= bits) return left ? 0.0 : (i < 0 ? -1.0 : 0.0);
            if (left)
              return round_to(
                  static_cast<double>(static_cast<std::int64_t>(static_cast<std::uint64_t>(i) << s)), dt);
            return static_cast<double>(i >> s);
          })};
        },
        false);
  }
  def(reg, {"Tensor.fill_", "Torch.fill_", "Torch.fill", "Aten.fill.Scalar", "Aten.fill_.Scalar"},
      "fill_(Tensor input, Tensor value) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input"), v = c.t("value");
        if (v.ndim() != 0 && !v.wrapped())
          invalid(fmt::format(
              "fill_ only supports 0-dimension value tensor but got tensor with {} dimensions.", v.ndim()));
        // torch: the input gets no gradient, a tensor value gets the sum of the output gradient
        Var e = expand(reshape(v, {}), x.shape());
        // DECISIONS D5: a floating value keeps its float64 bench value; integer dtypes truncate
        return {is_floating(x.dtype()) && is_floating(v.dtype()) ? relabel(e, x.dtype())
                                                                 : cast(e, x.dtype())};
      });
  // ---- gcd / lcm (integers) ---------------------------------------------------------------------------
  for (const bool is_lcm : {false, true})
    def(
        reg, names(is_lcm ? "lcm" : "gcd", kTorch | kTensor | kInplace),
        std::string(is_lcm ? "lcm" : "gcd") + "(Tensor input, Tensor other, *, Tensor? out=None) -> Tensor",
        [is_lcm](Ctx& c) -> Outs {
          Var a = c.t("input"), b = c.t("other");
          const DType dt = result_type({a, b});
          if (is_floating(dt) || dt == DType::Bool)
            invalid(fmt::format("\"{}\" not implemented for '{}'", is_lcm ? "lcm_cpu" : "gcd_cpu", name(dt)));
          return {zip_nograd(a, b, dt, [is_lcm, dt](double x, double y) {
            const auto i = static_cast<std::int64_t>(x), j = static_cast<std::int64_t>(y);
            const std::int64_t g = std::gcd(i, j);
            if (!is_lcm) return static_cast<double>(g);
            return g == 0 ? 0.0
                          : round_to(std::fabs(static_cast<double>(i / g) * static_cast<double>(j)), dt);
          })};
        },
        false);
}

}  // namespace probe::runners
