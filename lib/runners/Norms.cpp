// layer_norm, rms_norm (and NPU.npu_rms_norm), batch_norm, group_norm (float64 reference), written as
// compositions of autograd ops: torch's fused kernels compute the same expressions, and the composite
// backward equals torch's closed-form one up to float64 rounding. aten's native_layer_norm_backward, which
// autograd runs with the forward's saved statistics, is that closed form.
#include <fmt/format.h>

#include <array>
#include <limits>

#include "probe/error.h"
#include "runners/NnKit.h"
#include "runners/Ops.h"

namespace probe::runners::nn {

namespace {

Var scalar(double v) { return wrapped_scalar(v, DType::Float64); }

// The last `k` dims of x.
std::vector<std::int64_t> last_dims(const Var& x, std::size_t k) {
  std::vector<std::int64_t> d;
  for (std::size_t i = 0; i < k; ++i)
    d.push_back(x.ndim() - static_cast<std::int64_t>(k) + static_cast<std::int64_t>(i));
  return d;
}

void check_normalized_shape(const Var& x, const std::vector<std::int64_t>& ns, const std::optional<Var>& w,
                            const std::optional<Var>& b, const char* fn) {
  if (ns.empty()) invalid(fmt::format("{}: Expected normalized_shape to be at least 1-dimensional", fn));
  bool ok = static_cast<std::size_t>(x.ndim()) >= ns.size();
  for (std::size_t i = 0; ok && i < ns.size(); ++i) ok = x.shape()[x.shape().size() - ns.size() + i] == ns[i];
  if (!ok)
    invalid(
        fmt::format("Given normalized_shape={}, expected input with shape [*, {}], but got input of size{}",
                    shape_to_string(Shape(ns.begin(), ns.end())),
                    shape_to_string(Shape(ns.begin(), ns.end())), shape_to_string(x.shape())));
  for (const auto* p : {&w, &b})
    if (*p && (*p)->shape() != Shape(ns.begin(), ns.end()))
      invalid(
          fmt::format("{}: Expected weight/bias to be of same shape as normalized_shape, but got shape {}",
                      fn, shape_to_string((*p)->shape())));
}

Var affine(Var y, const std::optional<Var>& w, const std::optional<Var>& b) {
  if (w) y = ops::mul(y, *w);
  if (b) y = ops::add(y, *b);
  return y;
}

struct LayerNorm {
  Var y, mean, rstd;  // mean and rstd keep the normalised dims as size 1, as aten::native_layer_norm's
};

LayerNorm layer_norm(const Var& x, const std::vector<std::int64_t>& ns, const std::optional<Var>& w,
                     const std::optional<Var>& b, double eps) {
  need_floating(x, "LayerNormKernelImpl");
  check_normalized_shape(x, ns, w, b, "layer_norm");
  const auto dims = last_dims(x, ns.size());
  Var mean = ops::mean(x, dims, true);
  Var rstd = ops::rsqrt(ops::add(ops::var(x, dims, 0.0, true), scalar(eps)));
  return {affine(ops::mul(ops::sub(x, mean), rstd), w, b), mean, rstd};
}

// aten::native_layer_norm_backward over M rows of N = prod(normalized_shape) elements, with the forward's
// saved mean and rstd (the device's, not recomputed), torch's closed form: with g = grad_out * weight and
// x^ = (x - mean) rstd, grad_input = rstd (g - mean(g) - x^ mean(g x^)), grad_weight = sum over the rows of
// grad_out x^, grad_bias = sum over the rows of grad_out. An output whose output_mask entry is false is None.
std::array<std::optional<Var>, 3> layer_norm_backward(const Var& dy, const Var& x,
                                                      const std::vector<std::int64_t>& ns, const Var& mean,
                                                      const Var& rstd, const std::optional<Var>& w,
                                                      const std::optional<Var>& b,
                                                      const std::array<bool, 3>& mask) {
  need_floating(x, "LayerNormBackwardKernelImpl");
  check_normalized_shape(x, ns, w, b, "native_layer_norm_backward");
  if (dy.shape() != x.shape())
    invalid(fmt::format("native_layer_norm_backward: grad_out of shape {} does not match input of shape {}",
                        shape_to_string(dy.shape()), shape_to_string(x.shape())));
  std::int64_t N = 1;
  for (std::int64_t n : ns) N *= n;
  const std::int64_t M = N > 0 ? x.numel() / N : 0;
  if (mean.numel() != M || rstd.numel() != M)
    invalid(fmt::format("native_layer_norm_backward: mean and rstd need {} elements, got {} and {}", M,
                        mean.numel(), rstd.numel()));
  const Buffer &g = dy.data(), &xd = x.data(), &mu = mean.data(), &rs = rstd.data();
  const Buffer* wd = w ? &w->data() : nullptr;
  Buffer dx(static_cast<std::size_t>(x.numel())), dw(static_cast<std::size_t>(N), 0.0),
      db(static_cast<std::size_t>(N), 0.0);
  for (std::int64_t m = 0; m < M; ++m) {
    const auto row = static_cast<std::size_t>(m * N);
    const double r = rs[static_cast<std::size_t>(m)], mm = mu[static_cast<std::size_t>(m)];
    double sum_g = 0, sum_gx = 0;
    for (std::size_t j = 0; j < static_cast<std::size_t>(N); ++j) {
      const double gj = g[row + j] * (wd ? (*wd)[j] : 1.0), xh = (xd[row + j] - mm) * r;
      sum_g += gj;
      sum_gx += gj * xh;
      dw[j] += g[row + j] * xh;
      db[j] += g[row + j];
    }
    const double mean_g = sum_g / static_cast<double>(N), mean_gx = sum_gx / static_cast<double>(N);
    for (std::size_t j = 0; j < static_cast<std::size_t>(N); ++j) {
      const double gj = g[row + j] * (wd ? (*wd)[j] : 1.0), xh = (xd[row + j] - mm) * r;
      dx[row + j] = r * (gj - mean_g - xh * mean_gx);
    }
  }
  const Shape ws(ns.begin(), ns.end());
  std::array<std::optional<Var>, 3> out;
  if (mask[0]) out[0] = make_leaf(x.shape(), std::move(dx), x.dtype());
  if (mask[1]) out[1] = make_leaf(ws, std::move(dw), w ? w->dtype() : x.dtype());
  if (mask[2]) out[2] = make_leaf(ws, std::move(db), b ? b->dtype() : x.dtype());
  return out;
}

// x * rsqrt(mean(x^2) + eps) over the last `k` dims; returns (normalised, rstd).
std::pair<Var, Var> rms(const Var& x, std::size_t k, double eps) {
  const auto dims = last_dims(x, k);
  Var rstd = ops::rsqrt(ops::add(ops::mean(ops::square(x), dims, true), scalar(eps)));
  return {ops::mul(x, rstd), rstd};
}

Var rms_norm(Ctx& c) {
  Var x = c.t("input");
  need_floating(x, "rms_norm");
  const auto ns = c.ints("normalized_shape");
  auto w = c.opt_t("weight");
  check_normalized_shape(x, ns, w, std::nullopt, "rms_norm");
  // eps=None: the machine epsilon of the op's compute type (float32 for half types), as torch does.
  const double eps = !c.none("eps") ? c.f("eps")
                     : x.dtype() == DType::Float64
                         ? std::numeric_limits<double>::epsilon()
                         : static_cast<double>(std::numeric_limits<float>::epsilon());
  return affine(rms(x, ns.size(), eps).first, w, std::nullopt);
}

// Per-channel statistics of [N, C, *] shaped for broadcasting: [1, C, 1, ...].
Var per_channel(const Var& v, const Var& x, const char* what) {
  const std::int64_t C = x.ndim() >= 2 ? x.shape()[1] : 1;
  if (v.ndim() != 1 || v.numel() != C)
    invalid(fmt::format("batch_norm: expected {} to have {} elements, got {}", what, C,
                        shape_to_string(v.shape())));
  Shape s(static_cast<std::size_t>(x.ndim()), 1);
  s[1] = C;
  return reshape(v, s);
}

Var batch_norm(Ctx& c) {
  Var x = c.t("input");
  need_floating(x, "batch_norm");
  if (x.ndim() < 2) invalid(fmt::format("batch_norm: expected 2D or more input (got {}D input)", x.ndim()));
  const bool training = c.b("training");
  const double eps = c.f("eps");
  auto w = c.opt_t("weight"), b = c.opt_t("bias");
  Var mean, var;
  if (training) {
    std::int64_t per = 1;
    std::vector<std::int64_t> dims{0};
    for (int i = 2; i < x.ndim(); ++i) dims.push_back(i);
    for (auto d : dims) per *= x.shape()[static_cast<std::size_t>(d)];
    if (per <= 1)
      invalid(fmt::format("Expected more than 1 value per channel when training, got input size {}",
                          shape_to_string(x.shape())));
    mean = ops::mean(x, dims, true);
    var = ops::var(x, dims, 0.0, true);
  } else {
    if (c.none("running_mean") || c.none("running_var"))
      invalid("batch_norm: running_mean and running_var must be defined in evaluation mode");
    // running statistics are buffers: no gradient flows into them
    mean = per_channel(detach(c.t("running_mean")), x, "running_mean");
    var = per_channel(detach(c.t("running_var")), x, "running_var");
  }
  Var y = ops::mul(ops::sub(x, mean), ops::rsqrt(ops::add(var, scalar(eps))));
  if (w) y = ops::mul(y, per_channel(*w, x, "weight"));
  if (b) y = ops::add(y, per_channel(*b, x, "bias"));
  return y;
}

Var group_norm(Ctx& c) {
  Var x = c.t("input");
  need_floating(x, "GroupNormKernelImpl");
  const std::int64_t G = c.i("num_groups");
  if (x.ndim() < 2)
    invalid(fmt::format("Expected at least 2 dimensions for input tensor but received {}", x.ndim()));
  const std::int64_t N = x.shape()[0], C = x.shape()[1];
  if (G <= 0 || C % G != 0)
    invalid(fmt::format(
        "Expected number of channels in input to be divisible by num_groups, but got input of shape "
        "{} and num_groups={}",
        shape_to_string(x.shape()), G));
  auto w = c.opt_t("weight"), b = c.opt_t("bias");
  for (const auto* p : {&w, &b})
    if (*p && ((*p)->ndim() != 1 || (*p)->numel() != C))
      invalid(fmt::format("group_norm: expected weight/bias of {} elements, got {}", C,
                          shape_to_string((*p)->shape())));
  Var g = reshape(x, {N, G, N * G > 0 ? x.numel() / (N * G) : 0});
  Var mean = ops::mean(g, {2}, true);
  Var rstd = ops::rsqrt(ops::add(ops::var(g, {2}, 0.0, true), scalar(c.f("eps"))));
  Var y = reshape(ops::mul(ops::sub(g, mean), rstd), x.shape());
  Shape s(static_cast<std::size_t>(x.ndim()), 1);
  s[1] = C;
  if (w) y = ops::mul(y, reshape(*w, s));
  if (b) y = ops::add(y, reshape(*b, s));
  return y;
}

}  // namespace

}  // namespace probe::runners::nn

namespace probe::runners {

void register_norm_runners(RunnerRegistry& reg) {
  using namespace nn;
  const unsigned fns = kFunctional | kMintFunctional;
  def(reg, names("layer_norm", fns | kTorch, {"NPU.npu_layer_norm_eval"}),
      "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float "
      "eps=1e-05) -> "
      "Tensor",
      [](Ctx& c) -> Outs {
        return {layer_norm(c.t("input"), c.ints("normalized_shape"), c.opt_t("weight"), c.opt_t("bias"),
                           c.f("eps"))
                    .y};
      });
  // aten's fused layer norm returns the statistics too; torch differentiates its first output only.
  def(reg, {"Aten.native_layer_norm.default"},
      "native_layer_norm(Tensor input, int[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> "
      "(Tensor, Tensor, Tensor)",
      [](Ctx& c) -> Outs {
        LayerNorm r = layer_norm(c.t("input"), c.ints("normalized_shape"), c.opt_t("weight"), c.opt_t("bias"),
                                 c.f("eps"));
        return {r.y, detach(r.mean), detach(r.rstd)};
      });
  def(
      reg, {"Aten.native_layer_norm_backward.default"},
      "native_layer_norm_backward(Tensor grad_out, Tensor input, int[] normalized_shape, Tensor mean, Tensor "
      "rstd, Tensor? weight, Tensor? bias, Any output_mask) -> (Tensor, Tensor, Tensor)",
      [](Ctx& c) -> Outs {
        const Value& m = c["output_mask"];
        if (!m.is_list() || m.list().size() != 3)
          invalid("native_layer_norm_backward: output_mask must be a list of 3 bools");
        std::array<bool, 3> mask{};
        for (std::size_t i = 0; i < 3; ++i) {
          if (m.list()[i].kind() != Value::Kind::Bool)
            invalid("native_layer_norm_backward: output_mask must be a list of 3 bools");
          mask[i] = m.list()[i].as_bool();
        }
        const auto r =
            layer_norm_backward(c.t("grad_out"), c.t("input"), c.ints("normalized_shape"), c.t("mean"),
                                c.t("rstd"), c.opt_t("weight"), c.opt_t("bias"), mask);
        Outs outs;
        for (const auto& v : r) outs.push_back(v ? Out(*v) : Out(Value()));
        return outs;
      },
      false);
  def(reg, names("rms_norm", fns | kTorch),
      "rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor",
      [](Ctx& c) -> Outs { return {rms_norm(c)}; });
  // Deviation from msprobe's CPU stand-in (to be listed in DECISIONS.md): epsilon defaults to 1e-06 as
  // torch_npu documents (msprobe: 1e-05), and the normalised dims are all of gamma's (msprobe: the last dim
  // only). The normalised dims are the trailing gamma.dim() dims; rstd keeps them as size 1 and is float32.
  def(reg, {"NPU.npu_rms_norm"},
      "npu_rms_norm(Tensor input, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor)",
      [](Ctx& c) -> Outs {
        Var x = c.t("input"), g = c.t("gamma");
        need_floating(x, "npu_rms_norm");
        if (g.ndim() < 1 || g.ndim() > x.ndim()) invalid("npu_rms_norm: gamma must have 1..input.dim() dims");
        for (int i = 0; i < g.ndim(); ++i)
          if (g.shape()[static_cast<std::size_t>(i)] !=
              x.shape()[static_cast<std::size_t>(x.ndim() - g.ndim() + i)])
            invalid(fmt::format("npu_rms_norm: gamma shape {} does not match the trailing dims of input {}",
                                shape_to_string(g.shape()), shape_to_string(x.shape())));
        auto [y, rstd] = rms(x, static_cast<std::size_t>(g.ndim()), c.f("epsilon"));
        return {relabel(ops::mul(y, g), x.dtype()), relabel(rstd, DType::Float32)};
      });
  def(reg, names("batch_norm", fns),
      "batch_norm(Tensor input, Tensor? running_mean, Tensor? running_var, Tensor? weight=None, Tensor? "
      "bias=None, "
      "bool training=False, float momentum=0.1, float eps=1e-05) -> Tensor",
      [](Ctx& c) -> Outs { return {batch_norm(c)}; });
  def(reg, names("batch_norm", kTorch),
      "batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
      "bool "
      "training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
      [](Ctx& c) -> Outs { return {batch_norm(c)}; });
  def(reg, names("group_norm", fns | kTorch),
      "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05) -> "
      "Tensor",
      [](Ctx& c) -> Outs { return {group_norm(c)}; });
}

}  // namespace probe::runners
