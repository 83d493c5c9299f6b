// Activations, dropout, softmax and log_softmax (float64 reference), and the derivative ops aten runs for
// gelu and (log_)softmax in backward.
#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "probe/error.h"
#include "runners/Ops.h"
#include "runners/RunnerKit.h"

namespace probe::runners {

namespace {

Var float_input(Ctx& c, const char* p = "input") {
  Var x = c.t(p);
  if (!is_floating(x.dtype()))
    invalid(fmt::format("\"{}\" not implemented for '{}'", c.args.schema().name, name(x.dtype())));
  return x;
}

// Softmax-like ops along one dim, with torch's backward formulas.
struct DimRuns {
  std::int64_t outer = 1, len = 1, inner = 1;
  DimRuns(const Shape& s, int d) {
    for (int i = 0; i < static_cast<int>(s.size()); ++i) {
      const std::int64_t n = s[static_cast<std::size_t>(i)];
      if (i < d)
        outer *= n;
      else if (i == d)
        len = n;
      else
        inner *= n;
    }
  }
  template <class F>
  void each(F f) const {  // f(base, stride) per run along the dim
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = 0; i < inner; ++i) f(o * len * inner + i, inner);
  }
};

// torch's softmax backward formulas along each run: y (g - sum(g y)) and, for log_softmax, g - exp(y) sum(g).
Buffer softmax_grad(const DimRuns& r, const Buffer& g, const Buffer& y, bool log) {
  Buffer gx(g.size());
  r.each([&](std::int64_t b, std::int64_t st) {
    double acc = 0;
    for (std::int64_t k = 0; k < r.len; ++k) {
      const auto i = static_cast<std::size_t>(b + k * st);
      acc += log ? g[i] : g[i] * y[i];
    }
    for (std::int64_t k = 0; k < r.len; ++k) {
      const auto i = static_cast<std::size_t>(b + k * st);
      gx[i] = log ? g[i] - std::exp(y[i]) * acc : y[i] * (g[i] - acc);
    }
  });
  return gx;
}

Var softmax_impl(Var x, std::int64_t dim, std::optional<DType> dtype, bool log) {
  if (dtype) x = cast(x, *dtype);
  if (!is_floating(x.dtype()))
    invalid(fmt::format("\"{}softmax\" not implemented for '{}'", log ? "log_" : "", name(x.dtype())));
  const int d = x.ndim() == 0 ? 0 : wrap_dim(dim, x.ndim());
  const DimRuns r(x.shape(), d);
  const Buffer& xd = x.data();
  Buffer y(xd.size());
  r.each([&](std::int64_t b, std::int64_t st) {
    double m = -INFINITY;
    for (std::int64_t k = 0; k < r.len; ++k) m = std::max(m, xd[static_cast<std::size_t>(b + k * st)]);
    if (std::isinf(m)) m = m > 0 ? m : 0.0;  // an all -inf row gives NaN/-inf like torch
    double s = 0;
    for (std::int64_t k = 0; k < r.len; ++k) s += std::exp(xd[static_cast<std::size_t>(b + k * st)] - m);
    const double ls = std::log(s);
    for (std::int64_t k = 0; k < r.len; ++k) {
      const auto i = static_cast<std::size_t>(b + k * st);
      y[i] = log ? xd[i] - m - ls : std::exp(xd[i] - m) / s;
    }
  });
  Buffer yv = y;
  return make_result(x.shape(), std::move(y), x.dtype(), {x}, [r, yv, log](const Buffer& g) {
    return std::vector<Buffer>{softmax_grad(r, g, yv, log)};
  });
}

// aten::_softmax_backward_data / _log_softmax_backward_data: the gradient of the input from the output
// gradient and the forward's output (not its input), in the dtype of the forward's input.
Var softmax_backward_data(const Var& grad, const Var& output, std::int64_t dim, DType input_dtype, bool log) {
  if (grad.shape() != output.shape())
    invalid(fmt::format("grad_output of shape {} does not match output of shape {}",
                        shape_to_string(grad.shape()), shape_to_string(output.shape())));
  if (!is_floating(output.dtype()) || !is_floating(grad.dtype()))
    invalid(fmt::format("\"{}softmax_backward\" not implemented for '{}'", log ? "log_" : "",
                        name(output.dtype())));
  const int d = output.ndim() == 0 ? 0 : wrap_dim(dim, output.ndim());
  return make_leaf(output.shape(), softmax_grad(DimRuns(output.shape(), d), grad.data(), output.data(), log),
                   input_dtype);
}

// torch.nn.functional._get_softmax_dim for dim=None (deprecated implicit dim).
std::int64_t implicit_softmax_dim(int ndim) { return (ndim == 0 || ndim == 1 || ndim == 3) ? 0 : 1; }

constexpr double kSqrt2 = std::numbers::sqrt2;
constexpr double kInvSqrt2Pi = 0.3989422804014327;  // 1/sqrt(2*pi)

double gelu_tanh(double x) {
  const double beta = kSqrt2 * std::numbers::inv_sqrtpi, kappa = 0.044715;
  return 0.5 * x * (1.0 + std::tanh(beta * (x + kappa * x * x * x)));
}
double gelu_tanh_grad(double x) {
  const double beta = kSqrt2 * std::numbers::inv_sqrtpi, kappa = 0.044715;
  const double t = std::tanh(beta * (x + kappa * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * beta * (1.0 + 3.0 * kappa * x * x);
}

double gelu_grad(double x) {
  return 0.5 * (1.0 + std::erf(x / kSqrt2)) + x * std::exp(-0.5 * x * x) * kInvSqrt2Pi;
}

// aten::gelu_backward: grad_output * gelu'(self), broadcast and promoted like a binary op.
Var gelu_backward(const Var& grad, const Var& x, const std::string& approximate) {
  if (approximate != "none" && approximate != "tanh")
    invalid(fmt::format("approximate argument must be either none or tanh, got '{}'", approximate));
  if (!is_floating(x.dtype()) || !is_floating(grad.dtype()))
    invalid(fmt::format("\"GeluBackward\" not implemented for '{}'", name(x.dtype())));
  const bool tanh = approximate == "tanh";
  return zip_nograd(grad, x, result_type({grad, x}),
                    [tanh](double g, double v) { return g * (tanh ? gelu_tanh_grad(v) : gelu_grad(v)); });
}

}  // namespace

Var ops::softmax(const Var& x, std::int64_t dim, bool log) { return softmax_impl(x, dim, std::nullopt, log); }

void register_activation_runners(RunnerRegistry& reg) {
  const unsigned act = kTorch | kTensor | kInplace | kFunctional | kMint | kMintFunctional | kMsOps;
  def(reg, names("relu", act | kAten, {"Functional.relu_", "Torch.relu_"}),
      "relu(Tensor input, bool inplace=False) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input");
        if (x.dtype() == DType::Bool) invalid("\"clamp_min_cpu\" not implemented for 'Bool'");
        return {map(
            x, x.dtype(), [](double v) { return std::isnan(v) ? v
                                                : v > 0       ? v
                                                              : 0.0; },
            [](double v, double) { return v > 0 ? 1.0 : 0.0; })};
      });
  def(reg, names("relu6", kFunctional | kMintFunctional | kMsOps),
      "relu6(Tensor input, bool inplace=False) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input");
        return {map(
            x, x.dtype(), [](double v) { return std::isnan(v) ? v : std::min(std::max(v, 0.0), 6.0); },
            [](double v, double) { return v > 0 && v < 6 ? 1.0 : 0.0; })};
      });
  def(reg, names("leaky_relu", kFunctional | kMintFunctional | kMsOps, {"Functional.leaky_relu_"}),
      "leaky_relu(Tensor input, float negative_slope=0.01, bool inplace=False) -> Tensor",
      [](Ctx& c) -> Outs {
        const double s = c.f("negative_slope");
        return {map(
            float_input(c), c.t("input").dtype(), [s](double v) { return v > 0 ? v : v * s; },
            [s](double v, double) { return v > 0 ? 1.0 : s; })};
      });
  def(reg, names("gelu", kFunctional | kMintFunctional | kMsOps | kAten, {"Torch._C._nn.gelu"}),
      "gelu(Tensor input, *, str approximate='none') -> Tensor", [](Ctx& c) -> Outs {
        const std::string ap = c.s("approximate");
        Var x = float_input(c);
        if (ap == "tanh")
          return {map(x, x.dtype(), gelu_tanh, [](double v, double) { return gelu_tanh_grad(v); })};
        if (ap != "none")
          invalid(fmt::format("approximate argument must be either none or tanh, got '{}'", ap));
        return {map(
            x, x.dtype(), [](double v) { return 0.5 * v * (1.0 + std::erf(v / kSqrt2)); },
            [](double v, double) { return gelu_grad(v); })};
      });
  def(
      reg, {"Aten.gelu_backward.default"},
      "gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor",
      [](Ctx& c) -> Outs { return {gelu_backward(c.t("grad_output"), c.t("self"), c.s("approximate"))}; },
      false);
  def(reg, names("silu", kFunctional | kMintFunctional | kMsOps | kAten),
      "silu(Tensor input, bool inplace=False) -> Tensor", [](Ctx& c) -> Outs {
        Var x = float_input(c);
        return {map(
            x, x.dtype(), [](double v) { return v / (1.0 + std::exp(-v)); },
            [](double v, double) {
              const double s = 1.0 / (1.0 + std::exp(-v));
              return s * (1.0 + v * (1.0 - s));
            })};
      });
  def(reg, names("elu", kFunctional | kMintFunctional | kMsOps, {"Functional.elu_"}),
      "elu(Tensor input, float alpha=1.0, bool inplace=False) -> Tensor", [](Ctx& c) -> Outs {
        const double a = c.f("alpha");
        Var x = float_input(c);
        return {map(
            x, x.dtype(), [a](double v) { return v > 0 ? v : a * std::expm1(v); },
            [a](double v, double) { return v > 0 ? 1.0 : a * std::exp(v); })};
      });
  def(reg, names("hardswish", kFunctional | kMintFunctional | kMsOps),
      "hardswish(Tensor input, bool inplace=False) -> Tensor", [](Ctx& c) -> Outs {
        Var x = float_input(c);
        return {map(
            x, x.dtype(), [](double v) { return v * std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0; },
            [](double v, double) { return v < -3   ? 0.0
                                          : v <= 3 ? v / 3.0 + 0.5
                                                   : 1.0; })};
      });
  def(reg, names("hardsigmoid", kFunctional | kMintFunctional | kMsOps),
      "hardsigmoid(Tensor input, bool inplace=False) -> Tensor", [](Ctx& c) -> Outs {
        Var x = float_input(c);
        return {map(
            x, x.dtype(), [](double v) { return std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0; },
            [](double v, double) { return v > -3 && v < 3 ? 1.0 / 6.0 : 0.0; })};
      });
  def(reg, names("softplus", kFunctional | kMintFunctional | kMsOps),
      "softplus(Tensor input, float beta=1.0, float threshold=20.0) -> Tensor", [](Ctx& c) -> Outs {
        const double beta = c.f("beta"), th = c.f("threshold");
        Var x = float_input(c);
        return {map(
            x, x.dtype(),
            [beta, th](double v) { return v * beta > th ? v : std::log1p(std::exp(v * beta)) / beta; },
            [beta, th](double v, double) {
              const double z = std::exp(v * beta);
              return v * beta > th ? 1.0 : z / (z + 1.0);
            })};
      });
  def(reg, names("mish", kFunctional | kMintFunctional | kMsOps, {"NPU.npu_mish"}),
      "mish(Tensor input, bool inplace=False) -> Tensor", [](Ctx& c) -> Outs {
        Var x = float_input(c);
        return {map(
            x, x.dtype(), [](double v) { return v * std::tanh(std::log1p(std::exp(v))); },
            [](double v, double) {
              const double sp = std::log1p(std::exp(v)), t = std::tanh(sp), s = 1.0 / (1.0 + std::exp(-v));
              return t + v * s * (1.0 - t * t);
            })};
      });

  // Dropout: the identity when not training (or p == 0); a training-mode call draws a random mask, which a
  // reference cannot reproduce, so it is reported unsupported (run_ut turns that into SKIP with this reason).
  auto dropout = [](const char* train_param) {
    return [train_param](Ctx& c) -> Outs {
      const double p = c.f("p");
      if (p < 0 || p > 1)
        invalid(fmt::format("dropout probability has to be between 0 and 1, but got {}", p));
      if (c.b(train_param) && p > 0)
        throw Error(
            ErrorKind::Unsupported,
            "dropout in training mode draws a random mask that the float64 reference cannot reproduce");
      return {c.t("input")};
    };
  };
  for (const char* fn :
       {"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"})
    def(reg, names(fn, kFunctional | kMintFunctional),
        std::string(fn) + "(Tensor input, float p=0.5, bool training=True, bool inplace=False) -> Tensor",
        dropout("training"));
  def(reg, names("dropout", kTorch, {"Torch.dropout_", "Torch.feature_dropout", "Torch.alpha_dropout"}),
      "dropout(Tensor input, float p, bool train) -> Tensor", dropout("train"));

  // softmax / log_softmax: Functional has the legacy `_stacklevel` third parameter.
  for (const bool log : {false, true}) {
    const std::string fn = log ? "log_softmax" : "softmax";
    def(reg, names(fn, kFunctional | kMintFunctional),
        fn + "(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None) -> Tensor",
        [log](Ctx& c) -> Outs {
          Var x = c.t("input");
          const std::int64_t dim = c.none("dim") ? implicit_softmax_dim(x.ndim()) : c.i("dim");
          return {softmax_impl(x, dim, c.dtype("dtype"), log)};
        });
    def(reg, names(fn, kTorch | kTensor | kMint, {"Torch.special." + fn}),
        fn + "(Tensor input, int dim, ScalarType? dtype=None) -> Tensor",
        [log](Ctx& c) -> Outs { return {softmax_impl(c.t("input"), c.i("dim"), c.dtype("dtype"), log)}; });
    def(reg, names(fn, kMsOps | kMsTensor),
        fn + "(Tensor input, int axis=-1, *, ScalarType? dtype=None) -> Tensor",
        [log](Ctx& c) -> Outs { return {softmax_impl(c.t("input"), c.i("axis"), c.dtype("dtype"), log)}; });
  }
  // aten's _softmax / _log_softmax: half_to_float gives a float32 result for float16 input.
  for (const bool log : {false, true})
    def(reg, {log ? "Aten._log_softmax.default" : "Aten._softmax.default"},
        std::string(log ? "_log_softmax" : "_softmax") +
            "(Tensor input, int dim, bool half_to_float) -> Tensor",
        [log](Ctx& c) -> Outs {
          std::optional<DType> dt;
          if (c.b("half_to_float")) dt = DType::Float32;
          return {softmax_impl(c.t("input"), c.i("dim"), dt, log)};
        });
  for (const bool log : {false, true})
    def(
        reg, {log ? "Aten._log_softmax_backward_data.default" : "Aten._softmax_backward_data.default"},
        std::string(log ? "_log_softmax_backward_data" : "_softmax_backward_data") +
            "(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
        [log](Ctx& c) -> Outs {
          return {softmax_backward_data(c.t("grad_output"), c.t("output"), c.i("dim"),
                                        *c.dtype("input_dtype"), log)};
        },
        false);
  // torch_npu's fast_gelu: x * sigmoid(1.702 x) (msprobe's bench writes it as x e^(0.851 (x - |x|)) /
  // (1 + e^(-1.702 |x|)), the same function without overflow).
  def(reg, {"NPU.fast_gelu", "NPU.npu_fast_gelu"}, "fast_gelu(Tensor input) -> Tensor", [](Ctx& c) -> Outs {
    Var x = float_input(c);
    auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-1.702 * v)); };
    return {map(
        x, x.dtype(), [sig](double v) { return v * sig(v); },
        [sig](double v, double) {
          const double s = sig(v);
          return s + 1.702 * v * s * (1.0 - s);
        })};
  });
  // ---- more activations -------------------------------------------------------------------------
  def(reg, names("hardtanh", kFunctional, {"Functional.hardtanh_"}),
      "hardtanh(Tensor input, float min_val=-1.0, float max_val=1.0, bool inplace=False) -> Tensor",
      [](Ctx& c) -> Outs {
        const double lo = c.f("min_val"), hi = c.f("max_val");
        if (lo > hi) invalid("min_val cannot be greater than max_val");
        Var x = c.t("input");
        return {map(
            x, x.dtype(), [lo, hi](double v) { return std::isnan(v) ? v : std::min(std::max(v, lo), hi); },
            [lo, hi](double v, double) { return v > lo && v < hi ? 1.0 : 0.0; })};
      });
  def(reg, names("selu", kFunctional | kTorch, {"Functional.selu_", "Torch.selu_"}),
      "selu(Tensor input, bool inplace=False) -> Tensor", [](Ctx& c) -> Outs {
        constexpr double alpha = 1.6732632423543772848170429916717, scale = 1.0507009873554804934193349852946;
        Var x = float_input(c);
        return {map(
            x, x.dtype(), [](double v) { return v > 0 ? scale * v : scale * alpha * std::expm1(v); },
            [](double v, double) { return v > 0 ? scale : scale * alpha * std::exp(v); })};
      });
  def(reg, names("celu", kFunctional | kTorch, {"Functional.celu_", "Torch.celu_"}),
      "celu(Tensor input, float alpha=1.0, bool inplace=False) -> Tensor", [](Ctx& c) -> Outs {
        const double a = c.f("alpha");
        if (a == 0) invalid("ZeroDivisionError");
        Var x = float_input(c);
        return {map(
            x, x.dtype(), [a](double v) { return v > 0 ? v : a * std::expm1(v / a); },
            [a](double v, double) { return v > 0 ? 1.0 : std::exp(v / a); })};
      });
  def(reg, names("threshold", kFunctional | kTorch, {"Functional.threshold_", "Torch.threshold_"}),
      "threshold(Tensor input, float threshold, float value, bool inplace=False) -> Tensor",
      [](Ctx& c) -> Outs {
        const double th = c.f("threshold"), val = c.f("value");
        Var x = c.t("input");
        return {map(
            x, x.dtype(), [th, val](double v) { return v > th || std::isnan(v) ? v : val; },
            [th](double v, double) { return v > th ? 1.0 : 0.0; })};
      });
  def(reg, names("hardshrink", kFunctional | kTorch | kTensor),
      "hardshrink(Tensor input, float lambd=0.5) -> Tensor", [](Ctx& c) -> Outs {
        const double l = c.f("lambd");
        Var x = float_input(c);
        auto kept = [l](double v) { return !(v >= -l && v <= l); };
        return {map(
            x, x.dtype(), [kept](double v) { return kept(v) ? v : 0.0; },
            [kept](double v, double) { return kept(v) ? 1.0 : 0.0; })};
      });
  def(reg, names("softshrink", kFunctional), "softshrink(Tensor input, float lambd=0.5) -> Tensor",
      [](Ctx& c) -> Outs {
        const double l = c.f("lambd");
        if (l < 0) invalid(fmt::format("lambda must be greater or equal to 0, but found to be {}.", l));
        Var x = float_input(c);
        return {map(
            x, x.dtype(),
            [l](double v) { return v > l    ? v - l
                                   : v < -l ? v + l
                                            : 0.0; },  // torch: NaN -> 0 too
            [l](double v, double) { return v > l || v < -l ? 1.0 : 0.0; })};
      });
  def(reg, names("tanhshrink", kFunctional), "tanhshrink(Tensor input) -> Tensor", [](Ctx& c) -> Outs {
    Var x = float_input(c);
    return {map(
        x, x.dtype(), [](double v) { return v - std::tanh(v); },
        [](double v, double) {
          const double t = std::tanh(v);
          return t * t;
        })};
  });
  def(reg, names("softsign", kFunctional), "softsign(Tensor input) -> Tensor", [](Ctx& c) -> Outs {
    Var x = float_input(c);
    return {map(
        x, x.dtype(), [](double v) { return v / (1.0 + std::fabs(v)); },
        [](double v, double) { return 1.0 / ((1.0 + std::fabs(v)) * (1.0 + std::fabs(v))); })};
  });
  def(reg, names("logsigmoid", kFunctional), "logsigmoid(Tensor input) -> Tensor", [](Ctx& c) -> Outs {
    Var x = float_input(c);
    return {map(
        x, x.dtype(), [](double v) { return std::min(v, 0.0) - std::log1p(std::exp(-std::fabs(v))); },
        [](double v, double) { return 1.0 / (1.0 + std::exp(v)); })};
  });
  def(reg, names("glu", kFunctional), "glu(Tensor input, int dim=-1) -> Tensor", [](Ctx& c) -> Outs {
    Var x = float_input(c);
    if (x.ndim() == 0) invalid("glu does not support scalars because halving size must be even");
    const int d = wrap_dim(c.i("dim"), x.ndim());
    const std::int64_t n = x.shape()[static_cast<std::size_t>(d)];
    if (n % 2 != 0) invalid(fmt::format("Halving dimension must be even, but dimension {} is size {}", d, n));
    Var a = slice(x, d, 0, n / 2, 1), b = slice(x, d, n / 2, n, 1);
    Var s = map(
        b, b.dtype(), [](double v) { return 1.0 / (1.0 + std::exp(-v)); },
        [](double, double y) { return y * (1.0 - y); });
    return {ops::mul(a, s)};
  });
  def(reg, names("softmin", kFunctional),
      "softmin(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const std::int64_t dim = c.none("dim") ? implicit_softmax_dim(x.ndim()) : c.i("dim");
        return {softmax_impl(ops::neg(x), dim, c.dtype("dtype"), false)};
      });
  def(reg, names("prelu", kFunctional | kTorch | kTensor), "prelu(Tensor input, Tensor weight) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = float_input(c), w = c.t("weight");
        const std::int64_t ch = x.ndim() >= 2 ? x.shape()[1] : 1;
        if (w.numel() != 1 && w.numel() != ch)
          invalid(
              fmt::format("Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                          "{} and channel size = {}.",
                          w.numel(), ch));
        Shape ws(static_cast<std::size_t>(std::max(x.ndim() - 1, 0)), 1);
        if (!ws.empty()) ws[0] = w.numel();
        Var wb = w.numel() == 1 ? reshape(w, {}) : reshape(w, ws);
        return {zip(
            x, wb, result_type({x, wb}), [](double v, double a) { return v > 0 ? v : a * v; },
            [](double v, double a, double) { return v > 0 ? 1.0 : a; },
            [](double v, double, double) { return v > 0 ? 0.0 : v; })};
      });
}

}  // namespace probe::runners
