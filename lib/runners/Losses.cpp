// cross_entropy, nll_loss, mse_loss, l1_loss (float64 reference), following torch's decomposition
// (cross_entropy = log_softmax + nll_loss, label smoothing as in aten's cross_entropy_loss), plus aten's
// losses with integer reductions and nll_loss_backward.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "probe/error.h"
#include "runners/NnKit.h"
#include "runners/Ops.h"

namespace probe::runners::nn {

namespace {

Var scalar(double v) { return wrapped_scalar(v, DType::Float64); }

struct Targets {
  std::vector<std::int64_t> pick;  // flat index into the input of every target position (-1: ignored)
  std::vector<double> weight;      // class weight of every position (0 when ignored)
  Shape shape;                     // shape of the unreduced loss (= target shape)
};

// Maps class-index targets onto an input of shape [C], [N, C] or [N, C, d1, ...].
Targets resolve_targets(const Var& input, const Var& target, const std::optional<Var>& weight,
                        std::int64_t ignore_index) {
  if (target.dtype() != DType::Int64 && target.dtype() != DType::Int32 && target.dtype() != DType::UInt8 &&
      target.dtype() != DType::Int16 && target.dtype() != DType::Int8)
    invalid(fmt::format("expected scalar type Long but found {}", name(target.dtype())));
  const Shape& xs = input.shape();
  const int cd = input.ndim() == 1 ? 0 : 1;
  if (input.ndim() < 1) invalid("nll_loss: input tensor should be 1D or more");
  const std::int64_t C = xs[static_cast<std::size_t>(cd)];
  Shape want = xs;
  want.erase(want.begin() + cd);
  if (target.shape() != want)
    invalid(fmt::format("Expected target size {}, got {}", shape_to_string(want),
                        shape_to_string(target.shape())));
  if (weight && (weight->ndim() != 1 || weight->numel() != C))
    invalid(
        fmt::format("weight tensor should be defined either for all {} classes or no classes but got weight "
                    "tensor of shape: {}",
                    C, shape_to_string(weight->shape())));
  std::int64_t inner = 1;
  for (std::size_t i = static_cast<std::size_t>(cd) + 1; i < xs.size(); ++i) inner *= xs[i];
  Targets r;
  r.shape = want;
  const Buffer& td = target.data();
  for (std::size_t k = 0; k < td.size(); ++k) {
    const auto t = static_cast<std::int64_t>(td[k]);
    if (t == ignore_index) {
      r.pick.push_back(-1);
      r.weight.push_back(0.0);
      continue;
    }
    if (t < 0 || t >= C) invalid(fmt::format("Target {} is out of bounds.", t));
    const std::int64_t n = static_cast<std::int64_t>(k) / inner, s = static_cast<std::int64_t>(k) % inner;
    r.pick.push_back((n * C + t) * inner + s);
    r.weight.push_back(weight ? weight->data()[static_cast<std::size_t>(t)] : 1.0);
  }
  return r;
}

// -w[t] * input[t] per target position (0 where ignored), as one primitive so that ignored positions
// never touch the input (a -inf there must not turn into NaN).
Var picked_loss(const Var& input, const Targets& t) {
  Buffer out(t.pick.size());
  for (std::size_t k = 0; k < out.size(); ++k)
    out[k] = t.pick[k] < 0 ? 0.0 : -t.weight[k] * input.data()[static_cast<std::size_t>(t.pick[k])];
  return make_result(t.shape, std::move(out), input.dtype(), {input},
                     [t, n = input.data().size()](const Buffer& g) {
                       Buffer gx(n, 0.0);
                       for (std::size_t k = 0; k < t.pick.size(); ++k)
                         if (t.pick[k] >= 0) gx[static_cast<std::size_t>(t.pick[k])] -= t.weight[k] * g[k];
                       return std::vector<Buffer>{std::move(gx)};
                     });
}

double total_weight(const Targets& t) {
  double s = 0;
  for (double w : t.weight) s += w;
  return s;
}

Var nll(const Var& input, const Targets& t, const std::string& reduction) {
  Var loss = picked_loss(input, t);
  if (reduction == "none") return loss;
  Var s = ops::sum(loss);
  if (reduction == "sum") return s;
  if (reduction != "mean") invalid(fmt::format("{} is not a valid value for reduction", reduction));
  return ops::div(s, scalar(total_weight(t)));  // all ignored: 0/0 = NaN, like torch
}

std::optional<Var> class_weight(Ctx& c) {
  auto w = c.opt_t("weight");
  if (w) return detach(*w);  // torch has no derivative for the class weights
  return std::nullopt;
}

Var nll_loss(Ctx& c) {
  Var x = c.t("input");
  need_floating(x, "nll_loss_forward_reduce_cuda_kernel_2d_index");
  const Targets t = resolve_targets(x, c.t("target"), class_weight(c), c.i("ignore_index"));
  return nll(x, t, reduction_of(c));
}

// aten's reduction enum (at::Reduction): 0 none, 1 mean, 2 sum.
std::string aten_reduction(std::int64_t r) {
  switch (r) {
    case 0:
      return "none";
    case 1:
      return "mean";
    case 2:
      return "sum";
    default:
      invalid(fmt::format("{} is not a valid value for reduction", r));
  }
}

// aten::nll_loss_forward: (loss, total_weight) for an input of 1 or 2 dims; total_weight is the summed class
// weight of the targets not ignored, 0 for an unreduced batch (torch leaves it unused there).
std::pair<Var, Var> nll_loss_forward(const Var& x, const Var& target, const std::optional<Var>& weight,
                                     std::int64_t reduction, std::int64_t ignore_index) {
  need_floating(x, "nll_loss_forward_out_frame");
  if (x.ndim() < 1 || x.ndim() > 2) invalid("input tensor should be 1D or 2D");
  const std::string red = aten_reduction(reduction);
  const Targets t = resolve_targets(x, target, weight, ignore_index);
  const double tw = red == "none" && x.ndim() == 2 ? 0.0 : total_weight(t);
  return {nll(x, t, red), make_leaf({}, Buffer{tw}, x.dtype())};
}

// aten::nll_loss_backward: the input gradient -w[t] g at each target's position (g divided by the forward's
// total_weight for the mean, per position for an unreduced loss), 0 elsewhere.
Var nll_loss_backward(const Var& grad, const Var& x, const Var& target, const std::optional<Var>& weight,
                      std::int64_t reduction, std::int64_t ignore_index, const Var& total_weight) {
  need_floating(x, "nll_loss_backward_out_frame");
  const std::string red = aten_reduction(reduction);
  const Targets t = resolve_targets(x, target, weight, ignore_index);
  if (red == "none" ? grad.shape() != t.shape : grad.numel() != 1)
    invalid(fmt::format("nll_loss_backward: grad_output of shape {} does not match the loss of shape {}",
                        shape_to_string(grad.shape()), red == "none" ? shape_to_string(t.shape) : "[]"));
  if (total_weight.numel() != 1)
    invalid(fmt::format("expected total_weight to be a single element tensor, got: {} ({} elements)",
                        shape_to_string(total_weight.shape()), total_weight.numel()));
  const double scale = red == "mean" ? 1.0 / total_weight.item() : 1.0;
  Buffer gx(static_cast<std::size_t>(x.numel()), 0.0);
  for (std::size_t k = 0; k < t.pick.size(); ++k) {
    if (t.pick[k] < 0) continue;
    const double g = red == "none" ? grad.data()[k] : grad.data()[0] * scale;
    gx[static_cast<std::size_t>(t.pick[k])] = -t.weight[k] * g;
  }
  return make_leaf(x.shape(), std::move(gx), x.dtype());
}

Var cross_entropy(const Var& x, const Var& target, const std::optional<Var>& w, const std::string& reduction,
                  std::int64_t ignore_index, double ls) {
  need_floating(x, "log_softmax");
  if (ls < 0 || ls > 1) invalid(fmt::format("label_smoothing must be between 0.0 and 1.0. Got: {}", ls));
  const int cd = x.ndim() == 1 ? 0 : 1;
  if (x.ndim() < 1) invalid("cross_entropy: input must have at least one dimension");
  const std::int64_t C = x.shape()[static_cast<std::size_t>(cd)];
  Var logp = ops::softmax(x, cd, true);
  std::optional<Var> wb;
  if (w) {
    Shape s(static_cast<std::size_t>(x.ndim()), 1);
    s[static_cast<std::size_t>(cd)] = C;
    if (w->numel() != C) invalid("cross_entropy: weight must have one element per class");
    wb = reshape(*w, s);
  }
  if (is_floating(target.dtype())) {  // class probabilities
    if (target.shape() != x.shape())
      invalid(
          fmt::format("Expected input batch_size and target batch_size to match, got input {} and target {}",
                      shape_to_string(x.shape()), shape_to_string(target.shape())));
    Var tt =
        ls > 0 ? ops::add(ops::mul(target, scalar(1 - ls)), scalar(ls / static_cast<double>(C))) : target;
    Var prod = ops::mul(logp, tt);
    if (wb) prod = ops::mul(prod, *wb);
    Var loss = ops::neg(ops::sum(prod, {cd}));
    if (reduction == "none") return loss;
    if (reduction == "sum") return ops::sum(loss);
    if (reduction != "mean") invalid(fmt::format("{} is not a valid value for reduction", reduction));
    if (x.numel() == 0) return ops::div(ops::sum(loss), scalar(0.0));
    return ops::div(ops::sum(loss), scalar(static_cast<double>(x.numel() / C)));
  }
  const Targets t = resolve_targets(logp, target, w, ignore_index);
  Var loss = nll(logp, t, reduction);
  if (ls <= 0) return loss;
  Var smooth = ops::neg(ops::sum(wb ? ops::mul(logp, *wb) : logp, {cd}));
  Buffer keep(t.pick.size());
  for (std::size_t k = 0; k < keep.size(); ++k) keep[k] = t.pick[k] < 0 ? 0.0 : 1.0;
  smooth = where(make_leaf(smooth.shape(), keep, DType::Bool), smooth, scalar(0.0));
  Var sred;
  if (reduction == "none")
    sred = smooth;
  else if (reduction == "sum")
    sred = ops::sum(smooth);
  else  // mean: normalised like nll_loss, by the (weighted) count of non-ignored targets
    sred = ops::div(ops::sum(smooth), scalar(total_weight(t)));
  return ops::add(ops::mul(loss, scalar(1 - ls)), ops::mul(sred, scalar(ls / static_cast<double>(C))));
}

Var pointwise_loss(Ctx& c, bool squared) {
  Var x = c.t("input"), t = c.t("target");
  need_floating(x, squared ? "mse_loss" : "l1_loss");
  Var d = ops::sub(x, t);
  return reduce_loss(squared ? ops::square(d) : ops::abs(d), reduction_of(c));
}

// Elementwise loss of (input, target) with its two partial derivatives, then weight and reduction.
template <class F, class DA, class DB>
Var pair_loss(Ctx& c, const char* fn, F f, DA da, DB db) {
  Var x = c.t("input"), t = c.t("target");
  need_floating(x, fn);
  if (x.shape() != t.shape() && broadcast_shapes(x.shape(), t.shape()) != x.shape())
    invalid(fmt::format("Using a target size ({}) that is different to the input size ({}) is not supported",
                        shape_to_string(t.shape()), shape_to_string(x.shape())));
  return zip(x, t, result_type({x, t}), f, da, db);
}

Var binary_cross_entropy(Ctx& c) {
  Var x = c.t("input"), t = c.t("target");
  if (x.shape() != t.shape())
    invalid(
        fmt::format("Using a target size ({}) that is different to the input size ({}) is deprecated. "
                    "Please ensure they have the same size.",
                    shape_to_string(t.shape()), shape_to_string(x.shape())));
  for (double v : x.data())
    if (!(v >= 0 && v <= 1)) invalid("all elements of input should be between 0 and 1");
  // torch clamps each log at -100 and divides the input gradient by max(x (1 - x), 1e-12).
  Var l = pair_loss(
      c, "binary_cross_entropy",
      [](double p, double y) {
        return -(y * std::max(std::log(p), -100.0) + (1 - y) * std::max(std::log1p(-p), -100.0));
      },
      [](double p, double y, double) { return (p - y) / std::max((1 - p) * p, 1e-12); },
      [](double p, double, double) {
        return std::max(std::log1p(-p), -100.0) - std::max(std::log(p), -100.0);
      });
  if (auto w = c.opt_t("weight")) l = ops::mul(l, detach(*w));  // torch: weight is not differentiable
  return reduce_loss(l, reduction_of(c));
}

// (1 - t) x + (1 + (pw - 1) t) softplus(-x), softplus(-x) = log1p(exp(-|x|)) + max(-x, 0) (torch's form).
Var binary_cross_entropy_with_logits(Ctx& c) {
  Var x = c.t("input"), t = c.t("target");
  need_floating(x, "binary_cross_entropy_with_logits");
  if (x.shape() != t.shape())
    invalid(fmt::format("Target size ({}) must be the same as input size ({})", shape_to_string(t.shape()),
                        shape_to_string(x.shape())));
  Var sp = map(
      x, x.dtype(), [](double v) { return std::log1p(std::exp(-std::fabs(v))) + std::max(-v, 0.0); },
      [](double v, double) { return -1.0 / (1.0 + std::exp(v)); });
  Var lw = scalar(1.0);
  // torch: weight and pos_weight are not differentiable
  if (auto pw = c.opt_t("pos_weight"))
    lw = ops::add(ops::mul(ops::sub(detach(*pw), scalar(1.0)), t), scalar(1.0));
  Var l = ops::add(ops::mul(ops::sub(scalar(1.0), t), x), ops::mul(lw, sp));
  if (auto w = c.opt_t("weight")) l = ops::mul(l, detach(*w));
  return reduce_loss(l, reduction_of(c));
}

// smooth_l1 (beta) and huber (delta): quadratic below the threshold, linear above; both as torch.
Var smooth_loss(Ctx& c, bool huber) {
  const double th = huber ? c.f("delta") : c.f("beta");
  if (th < 0)
    invalid(huber ? "huber_loss does not support negative values for delta."
                  : "smooth_l1_loss does not support negative values for beta.");
  if (!huber && th == 0) {
    Var x = c.t("input"), t = c.t("target");
    need_floating(x, "smooth_l1_loss");
    return reduce_loss(ops::abs(ops::sub(x, t)), reduction_of(c));
  }
  auto f = [th, huber](double a, double b) {
    const double z = std::fabs(a - b);
    if (huber) return z < th ? 0.5 * z * z : th * (z - 0.5 * th);
    return z < th ? 0.5 * z * z / th : z - 0.5 * th;
  };
  auto d = [th, huber](double a, double b) {
    const double x = a - b;
    const double lin = huber ? th : 1.0;
    return x < -th ? -lin : x > th ? lin : (huber ? x : x / th);
  };
  Var l = pair_loss(
      c, huber ? "huber_loss" : "smooth_l1_loss", f, [d](double a, double b, double) { return d(a, b); },
      [d](double a, double b, double) { return -d(a, b); });
  return reduce_loss(l, huber ? c.s("reduction") : reduction_of(c));
}

Var kl_div(Ctx& c) {
  const bool log_target = c.b("log_target");
  Var l = pair_loss(
      c, "kl_div",
      [log_target](double x, double t) {
        if (log_target) return std::exp(t) * (t - x);
        if (std::isnan(t)) return t;
        return (t == 0 ? 0.0 : t * std::log(t)) - t * x;  // xlogy(t, t) - t x
      },
      [log_target](double, double t, double) { return log_target ? -std::exp(t) : -t; },
      [log_target](double x, double t, double) {
        if (log_target) return std::exp(t) * (t - x + 1);
        return t > 0 ? std::log(t) + 1 - x : std::nan("");  // torch 1.13: NaN where target <= 0
      });
  const std::string red = reduction_of(c);
  if (red == "batchmean") {
    Var s = ops::sum(l);
    return l.ndim() == 0 ? s : ops::div(s, scalar(static_cast<double>(l.shape()[0])));
  }
  return reduce_loss(l, red);
}

// clamp_min(z, 0) with torch's clamp_min gradient (1 where z >= 0).
Var clamp0(const Var& z) {
  return map(
      z, z.dtype(), [](double v) { return std::isnan(v) ? v : std::max(v, 0.0); },
      [](double v, double) { return v >= 0 ? 1.0 : 0.0; });
}

// torch: (-target * (input1 - input2) + margin).clamp_min(0)
Var margin_ranking_loss(Ctx& c) {
  Var a = c.t("input1"), b = c.t("input2"), y = c.t("target");
  if (a.ndim() != b.ndim() || a.ndim() != y.ndim())
    invalid(fmt::format(
        "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: "
        "{}, input2: {}, target: {}",
        shape_to_string(a.shape()), shape_to_string(b.shape()), shape_to_string(y.shape())));
  Var z = ops::add(ops::neg(ops::mul(y, ops::sub(a, b))), scalar(c.f("margin")));
  return reduce_loss(clamp0(z), reduction_of(c));
}

// torch: where(target != 1, (margin - input).clamp_min(0), 0) + where(target != -1, input, 0)
Var hinge_embedding_loss(Ctx& c) {
  Var x = c.t("input"), y = c.t("target");
  Var ne1 = map(
      y, DType::Bool, [](double v) { return v != 1 ? 1.0 : 0.0; }, [](double, double) { return 0.0; });
  Var nem1 = map(
      y, DType::Bool, [](double v) { return v != -1 ? 1.0 : 0.0; }, [](double, double) { return 0.0; });
  Var zero = ops::scalar_like(0.0, x);
  Var m = clamp0(ops::sub(scalar(c.f("margin")), x));
  return reduce_loss(ops::add(where(ne1, m, zero), where(nem1, x, zero)), reduction_of(c));
}

// torch: log(1 + exp(-target * input))
Var soft_margin_loss(Ctx& c) {
  Var x = c.t("input"), y = c.t("target");
  need_floating(x, "soft_margin_loss");
  Var z = ops::neg(ops::mul(detach(y), x));  // torch: the target is not differentiable
  Var l = map(
      z, z.dtype(), [](double v) { return std::log1p(std::exp(v)); },
      [](double v, double) { return 1.0 / (1.0 + std::exp(-v)); });
  return reduce_loss(l, reduction_of(c));
}

// torch: log_input: exp(x) - t x; else x - t log(x + eps); `full` adds Stirling's t log t - t + log(2 pi t) /
// 2 where t > 1.
Var poisson_nll_loss(Ctx& c) {
  Var x = c.t("input"), t = c.t("target");
  const double eps = c.f("eps");
  Var l = c.b("log_input") ? ops::sub(ops::exp(x), ops::mul(t, x))
                           : ops::sub(x, ops::mul(t, ops::log(ops::add(x, scalar(eps)))));
  if (c.b("full")) {
    Var st = map(
        t, float_or_default(t.dtype()),
        [](double v) { return v > 1 ? v * std::log(v) - v + 0.5 * std::log(2 * std::numbers::pi * v) : 0.0; },
        [](double v, double) { return v > 1 ? std::log(v) + 0.5 / v : 0.0; });
    l = ops::add(l, st);
  }
  return reduce_loss(l, reduction_of(c));
}

// torch: cos = sum(x1 x2) / sqrt((sum(x1^2) + 1e-12) (sum(x2^2) + 1e-12)) over dim 1 (dim 0 for 1-d inputs);
// loss 1 - cos where y == 1, max(0, cos - margin) where y == -1, else 0.
Var cosine_embedding_loss(Ctx& c) {
  Var a = c.t("input1"), b = c.t("input2"), y = c.t("target");
  if (a.ndim() != b.ndim() || a.ndim() < 1 || a.ndim() > 2)
    invalid("cosine_embedding_loss: inputs must be 1-d or 2-d tensors of the same rank");
  const std::int64_t d = a.ndim() - 1;
  const double eps = 1e-12;
  Var prod = ops::sum(ops::mul(a, b), {d});
  Var m1 = ops::add(ops::sum(ops::mul(a, a), {d}), scalar(eps));
  Var m2 = ops::add(ops::sum(ops::mul(b, b), {d}), scalar(eps));
  Var cosv = ops::div(prod, ops::sqrt(ops::mul(m1, m2)));
  Var zero = ops::scalar_like(0.0, cosv);
  Var pos = ops::sub(scalar(1.0), cosv);
  Var neg = map(
      ops::sub(cosv, scalar(c.f("margin"))), cosv.dtype(),
      [](double v) { return std::isnan(v) ? v : std::max(v, 0.0); },
      [](double v, double) { return v >= 0 ? 1.0 : 0.0; });
  Var is1 = map(
      y, DType::Bool, [](double v) { return v == 1 ? 1.0 : 0.0; }, [](double, double) { return 0.0; });
  Var ism1 = map(
      y, DType::Bool, [](double v) { return v == -1 ? 1.0 : 0.0; }, [](double, double) { return 0.0; });
  Var l = ops::add(where(is1, pos, zero), where(ism1, neg, zero));
  return reduce_loss(l, reduction_of(c));
}

}  // namespace

}  // namespace probe::runners::nn

namespace probe::runners {

void register_loss_runners(RunnerRegistry& reg) {
  using namespace nn;
  const unsigned fns = kFunctional | kMintFunctional;
  def(reg, names("cross_entropy", fns),
      "cross_entropy(Tensor input, Tensor target, Tensor? weight=None, Any size_average=None, int "
      "ignore_index=-100, "
      "Any reduce=None, str reduction='mean', float label_smoothing=0.0) -> Tensor",
      [](Ctx& c) -> Outs {
        return {cross_entropy(c.t("input"), c.t("target"), class_weight(c), reduction_of(c),
                              c.i("ignore_index"), c.f("label_smoothing"))};
      });
  // aten's losses take the reduction as at::Reduction's integer. nll_loss_nd (any number of dims) runs
  // nll_loss (1 or 2 dims) or nll_loss2d, which run nll_loss_forward: each has a runner, so the outermost
  // one is checked and a loss is one check.
  def(reg, {"Aten.cross_entropy_loss.default"},
      "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int "
      "ignore_index=-100, float label_smoothing=0.0) -> Tensor",
      [](Ctx& c) -> Outs {
        return {cross_entropy(c.t("self"), c.t("target"), class_weight(c), aten_reduction(c.i("reduction")),
                              c.i("ignore_index"), c.f("label_smoothing"))};
      });
  for (const bool nd : {false, true})
    def(reg, {nd ? "Aten.nll_loss_nd.default" : "Aten.nll_loss.default"},
        std::string(nd ? "nll_loss_nd" : "nll_loss") +
            "(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100) -> "
            "Tensor",
        [nd](Ctx& c) -> Outs {
          Var x = c.t("self");
          if (!nd)
            return {nll_loss_forward(x, c.t("target"), class_weight(c), c.i("reduction"), c.i("ignore_index"))
                        .first};
          need_floating(x, "nll_loss_forward_out_frame");
          return {nll(x, resolve_targets(x, c.t("target"), class_weight(c), c.i("ignore_index")),
                      aten_reduction(c.i("reduction")))};
        });
  def(reg, {"Aten.nll_loss_forward.default"},
      "nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, int ignore_index) -> "
      "(Tensor "
      "output, Tensor total_weight)",
      [](Ctx& c) -> Outs {
        auto [loss, tw] = nll_loss_forward(c.t("self"), c.t("target"), class_weight(c), c.i("reduction"),
                                           c.i("ignore_index"));
        return {loss, tw};
      });
  def(
      reg, {"Aten.nll_loss_backward.default"},
      "nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, int "
      "ignore_index, Tensor total_weight) -> Tensor",
      [](Ctx& c) -> Outs {
        return {nll_loss_backward(c.t("grad_output"), c.t("self"), c.t("target"), c.opt_t("weight"),
                                  c.i("reduction"), c.i("ignore_index"), c.t("total_weight"))};
      },
      false);
  def(reg, names("nll_loss", fns),
      "nll_loss(Tensor input, Tensor target, Tensor? weight=None, Any size_average=None, int "
      "ignore_index=-100, Any "
      "reduce=None, str reduction='mean') -> Tensor",
      [](Ctx& c) -> Outs { return {nll_loss(c)}; });
  def(reg, names("mse_loss", fns),
      "mse_loss(Tensor input, Tensor target, Any size_average=None, Any reduce=None, str reduction='mean') "
      "-> Tensor",
      [](Ctx& c) -> Outs { return {pointwise_loss(c, true)}; });
  def(reg, names("l1_loss", fns),
      "l1_loss(Tensor input, Tensor target, Any size_average=None, Any reduce=None, str reduction='mean') -> "
      "Tensor",
      [](Ctx& c) -> Outs { return {pointwise_loss(c, false)}; });
  def(reg, names("binary_cross_entropy", fns),
      "binary_cross_entropy(Tensor input, Tensor target, Tensor? weight=None, Any size_average=None, Any "
      "reduce=None, str reduction='mean') -> Tensor",
      [](Ctx& c) -> Outs { return {binary_cross_entropy(c)}; });
  def(reg, names("binary_cross_entropy_with_logits", fns),
      "binary_cross_entropy_with_logits(Tensor input, Tensor target, Tensor? weight=None, Any "
      "size_average=None, "
      "Any reduce=None, str reduction='mean', Tensor? pos_weight=None) -> Tensor",
      [](Ctx& c) -> Outs { return {binary_cross_entropy_with_logits(c)}; });
  def(reg, names("smooth_l1_loss", fns),
      "smooth_l1_loss(Tensor input, Tensor target, Any size_average=None, Any reduce=None, str "
      "reduction='mean', float beta=1.0) -> Tensor",
      [](Ctx& c) -> Outs { return {smooth_loss(c, false)}; });
  def(reg, names("huber_loss", fns),
      "huber_loss(Tensor input, Tensor target, str reduction='mean', float delta=1.0) -> Tensor",
      [](Ctx& c) -> Outs { return {smooth_loss(c, true)}; });
  def(reg, names("kl_div", fns),
      "kl_div(Tensor input, Tensor target, Any size_average=None, Any reduce=None, str reduction='mean', "
      "bool "
      "log_target=False) -> Tensor",
      [](Ctx& c) -> Outs { return {kl_div(c)}; });
  def(reg, names("margin_ranking_loss", fns),
      "margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0.0, Any "
      "size_average=None, "
      "Any reduce=None, str reduction='mean') -> Tensor",
      [](Ctx& c) -> Outs { return {margin_ranking_loss(c)}; });
  def(reg, names("hinge_embedding_loss", fns),
      "hinge_embedding_loss(Tensor input, Tensor target, float margin=1.0, Any size_average=None, Any "
      "reduce=None, "
      "str reduction='mean') -> Tensor",
      [](Ctx& c) -> Outs { return {hinge_embedding_loss(c)}; });
  def(reg, names("soft_margin_loss", fns),
      "soft_margin_loss(Tensor input, Tensor target, Any size_average=None, Any reduce=None, str "
      "reduction='mean') -> Tensor",
      [](Ctx& c) -> Outs { return {soft_margin_loss(c)}; });
  def(reg, names("poisson_nll_loss", fns),
      "poisson_nll_loss(Tensor input, Tensor target, bool log_input=True, bool full=False, Any "
      "size_average=None, "
      "float eps=1e-08, Any reduce=None, str reduction='mean') -> Tensor",
      [](Ctx& c) -> Outs { return {poisson_nll_loss(c)}; });
  def(reg, names("cosine_embedding_loss", fns),
      "cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0.0, Any "
      "size_average=None, "
      "Any reduce=None, str reduction='mean') -> Tensor",
      [](Ctx& c) -> Outs { return {cosine_embedding_loss(c)}; });
}

}  // namespace probe::runners
