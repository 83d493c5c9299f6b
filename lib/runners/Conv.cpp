// conv1d / conv2d / conv_transpose2d (float64 reference): im2col + one GEMM (runners::gemm) per (batch,
// group), with explicit VJPs (the transposed GEMMs and col2im), so the backward pass costs two more GEMMs
// instead of a graph of per-element primitives.
// DECISIONS D5: conv1d/conv2d are benched in float64 like every floating API (msprobe keeps float32 conv
// inputs in float32 with HF32 rounding on the bench side).
#include "runners/Conv.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "probe/error.h"
#include "runners/NnKit.h"
#include "runners/Ops.h"

namespace probe::runners::nn {

namespace {

// The geometry of one convolution "image" [C, H, W] -> "columns" [O, OH, OW].
struct Geom {
  std::int64_t N = 0, C = 0, H = 0, W = 0, O = 0, G = 1, kh = 1, kw = 1, OH = 0, OW = 0;
  ConvParams p;
  std::int64_t Cg() const { return C / G; }
  std::int64_t Og() const { return O / G; }
  std::int64_t K() const { return Cg() * kh * kw; }
  std::int64_t P() const { return OH * OW; }
  bool pointwise() const {
    return kh == 1 && kw == 1 && p.stride[0] == 1 && p.stride[1] == 1 && p.pad_lo[0] == 0 &&
           p.pad_lo[1] == 0 && OH == H && OW == W;
  }

  // Output columns [lo, hi) of a kernel tap with offset `off` read inside [0, W): iw = ow * sw + off.
  static void valid_range(std::int64_t off, std::int64_t sw, std::int64_t W, std::int64_t OW,
                          std::int64_t& lo, std::int64_t& hi) {
    lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
    hi = W - off <= 0 ? 0 : std::min(OW, (W - off + sw - 1) / sw);
    lo = std::min(lo, hi);
  }

  // col [K, P] of group g of one image xn [C, H, W]; rows of taps are copied as runs, not per element.
  void im2col(const double* xn, std::int64_t g, double* col) const {
    const std::int64_t P_ = P(), sw = p.stride[1];
    for (std::int64_t c = 0; c < Cg(); ++c)
      for (std::int64_t i = 0; i < kh; ++i)
        for (std::int64_t j = 0; j < kw; ++j) {
          double* row = col + ((c * kh + i) * kw + j) * P_;
          const double* plane = xn + (g * Cg() + c) * H * W;
          const std::int64_t off = j * p.dilation[1] - p.pad_lo[1];
          std::int64_t lo, hi;
          valid_range(off, sw, W, OW, lo, hi);
          for (std::int64_t oh = 0; oh < OH; ++oh) {
            const std::int64_t ih = oh * p.stride[0] - p.pad_lo[0] + i * p.dilation[0];
            double* r = row + oh * OW;
            if (ih < 0 || ih >= H) {
              std::fill(r, r + OW, 0.0);
              continue;
            }
            const double* src = plane + ih * W;  // iw = ow * sw + off is inside the row for ow in [lo, hi)
            std::fill(r, r + lo, 0.0);
            if (sw == 1 && hi > lo)
              std::copy(src + lo + off, src + hi + off, r + lo);
            else
              for (std::int64_t ow = lo; ow < hi; ++ow) r[ow] = src[ow * sw + off];
            std::fill(r + hi, r + OW, 0.0);
          }
        }
  }
  // The transpose of im2col: accumulates col [K, P] into xn [C, H, W] (group g).
  void col2im(const double* col, std::int64_t g, double* xn) const {
    const std::int64_t P_ = P(), sw = p.stride[1];
    for (std::int64_t c = 0; c < Cg(); ++c)
      for (std::int64_t i = 0; i < kh; ++i)
        for (std::int64_t j = 0; j < kw; ++j) {
          const double* row = col + ((c * kh + i) * kw + j) * P_;
          double* plane = xn + (g * Cg() + c) * H * W;
          const std::int64_t off = j * p.dilation[1] - p.pad_lo[1];
          std::int64_t lo, hi;
          valid_range(off, sw, W, OW, lo, hi);
          for (std::int64_t oh = 0; oh < OH; ++oh) {
            const std::int64_t ih = oh * p.stride[0] - p.pad_lo[0] + i * p.dilation[0];
            if (ih < 0 || ih >= H) continue;
            const double* r = row + oh * OW;
            double* dst = plane + ih * W;
            for (std::int64_t ow = lo; ow < hi; ++ow) dst[ow * sw + off] += r[ow];
          }
        }
  }
};

std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t lo, std::int64_t hi,
                      std::int64_t d) {
  const std::int64_t span = in + lo + hi - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}

void check_params(const ConvParams& p) {
  for (int i = 0; i < 2; ++i) {
    if (p.stride[static_cast<std::size_t>(i)] <= 0) invalid("non-positive stride is not supported");
    if (p.dilation[static_cast<std::size_t>(i)] <= 0) invalid("dilation should be greater than zero");
    if (p.pad_lo[static_cast<std::size_t>(i)] < 0 || p.pad_hi[static_cast<std::size_t>(i)] < 0)
      invalid("negative padding is not supported");
  }
  if (p.groups <= 0) invalid("non-positive groups is not supported");
  // keeps the int64 size arithmetic below far from overflow (check_alloc bounds the results)
  constexpr std::int64_t kHuge = std::int64_t{1} << 40;
  for (std::size_t i = 0; i < 2; ++i)
    if (p.stride[i] > kHuge || p.dilation[i] > kHuge || p.pad_lo[i] > kHuge || p.pad_hi[i] > kHuge)
      invalid("convolution stride/dilation/padding is unreasonably large");
}

void check_operands(const Var& x, const Var& w, const std::optional<Var>& b, const char* fn) {
  need_floating(x, fn);
  if (x.ndim() != 4 || w.ndim() != 4) throw Error(ErrorKind::Internal, "conv kernels take 4-d operands");
  if (w.dtype() != x.dtype() || (b && b->dtype() != x.dtype()))
    invalid(fmt::format("{}: input type ({}) and weight type ({}) should be the same", fn, name(x.dtype()),
                        name(w.dtype())));
}

// Y_g = W_g X_g where the roles of "image" and "columns" depend on the direction.
void gemm_into(const double* a, const double* b, double* c, std::int64_t m, std::int64_t k, std::int64_t n,
               bool accumulate, bool ta = false, bool tb = false) {
  gemm(a, b, c, m, k, n, ta, tb, accumulate);
}

// Forward of a convolution (image x -> columns y) into y [N, O, P]; backward-data is the reverse.
// `keep` (optional, N * G * K * P): where to leave every image's columns for the weight gradient.
void conv_fwd(const Geom& g, const double* x, const double* w, double* y, Buffer* keep = nullptr) {
  const std::int64_t K = g.K(), P = g.P(), Og = g.Og();
  Buffer col(g.pointwise() || keep ? 0 : static_cast<std::size_t>(K * P));
  for (std::int64_t n = 0; n < g.N; ++n) {
    const double* xn = x + n * g.C * g.H * g.W;
    for (std::int64_t gi = 0; gi < g.G; ++gi) {
      const double* c = xn + gi * g.Cg() * g.H * g.W;
      if (!g.pointwise()) {
        double* dst = keep ? keep->data() + (n * g.G + gi) * K * P : col.data();
        g.im2col(xn, gi, dst);
        c = dst;
      }
      gemm_into(w + gi * Og * K, c, y + (n * g.O + gi * Og) * P, Og, K, P, false);
    }
  }
}
// dx += col2im(W^T dy), the transpose of conv_fwd in x.
void conv_bwd_data(const Geom& g, const double* dy, const double* w, double* dx) {
  const std::int64_t K = g.K(), P = g.P(), Og = g.Og();
  Buffer col(static_cast<std::size_t>(K * P));
  for (std::int64_t n = 0; n < g.N; ++n) {
    double* dxn = dx + n * g.C * g.H * g.W;
    for (std::int64_t gi = 0; gi < g.G; ++gi) {
      const double* dyg = dy + (n * g.O + gi * Og) * P;
      if (g.pointwise()) {
        gemm_into(w + gi * Og * K, dyg, dxn + gi * g.Cg() * g.H * g.W, K, Og, P, true, true);
        continue;
      }
      gemm_into(w + gi * Og * K, dyg, col.data(), K, Og, P, false, true);
      g.col2im(col.data(), gi, dxn);
    }
  }
}
// dw += dy col^T.
// `kept` (optional): the columns conv_fwd left, instead of recomputing them.
void conv_bwd_weight(const Geom& g, const double* x, const double* dy, double* dw,
                     const Buffer* kept = nullptr) {
  const std::int64_t K = g.K(), P = g.P(), Og = g.Og();
  Buffer col(g.pointwise() || kept ? 0 : static_cast<std::size_t>(K * P));
  for (std::int64_t n = 0; n < g.N; ++n) {
    const double* xn = x + n * g.C * g.H * g.W;
    for (std::int64_t gi = 0; gi < g.G; ++gi) {
      const double* c = xn + gi * g.Cg() * g.H * g.W;
      if (kept) {
        c = kept->data() + (n * g.G + gi) * K * P;
      } else if (!g.pointwise()) {
        g.im2col(xn, gi, col.data());
        c = col.data();
      }
      gemm_into(dy + (n * g.O + gi * Og) * P, c, dw + gi * Og * K, Og, P, K, true, false, true);
    }
  }
}
// Bias: per channel sum of dy [N, O, P].
Buffer bias_grad(const Buffer& dy, std::int64_t N, std::int64_t O, std::int64_t P) {
  Buffer db(static_cast<std::size_t>(O), 0.0);
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t o = 0; o < O; ++o) {
      double s = 0;
      const double* r = dy.data() + (n * O + o) * P;
      for (std::int64_t i = 0; i < P; ++i) s += r[i];
      db[static_cast<std::size_t>(o)] += s;
    }
  return db;
}
void add_bias(Buffer& y, const Buffer& b, std::int64_t N, std::int64_t O, std::int64_t P) {
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t o = 0; o < O; ++o) {
      double* r = y.data() + (n * O + o) * P;
      const double bv = b[static_cast<std::size_t>(o)];
      for (std::int64_t i = 0; i < P; ++i) r[i] += bv;
    }
}

// Device emulation computes in float32: the operands are rounded once (a copy only then), the GEMM
// accumulates in float64 and the result is rounded once.
struct Operand {
  Operand(const Var& v, DType dt) : src(&v.data()) {
    if (EmulateFloat32::enabled() && dt != DType::Float64) {
      copy = v.data();
      detail::maybe_round_f32(copy, dt);
      src = &copy;
    }
  }
  const double* data() const { return src->data(); }
  bool empty() const { return src->empty(); }
  const Buffer* src;
  Buffer copy;
};

}  // namespace

Var conv2d(const Var& x, const Var& w, const std::optional<Var>& b, const ConvParams& p) {
  check_params(p);
  check_operands(x, w, b, "conv2d");
  Geom g;
  g.p = p;
  g.N = x.shape()[0], g.C = x.shape()[1], g.H = x.shape()[2], g.W = x.shape()[3];
  g.O = w.shape()[0], g.G = p.groups, g.kh = w.shape()[2], g.kw = w.shape()[3];
  if (g.C % g.G != 0 || g.O % g.G != 0)
    invalid(
        fmt::format("Given groups={}, expected input channels ({}) and weight channels ({}) to be divisible "
                    "by groups",
                    g.G, g.C, g.O));
  if (w.shape()[1] != g.Cg())
    invalid(
        fmt::format("Given groups={}, weight of size {}, expected input{} to have {} channels, but got {} "
                    "channels instead",
                    g.G, shape_to_string(w.shape()), shape_to_string(x.shape()), w.shape()[1] * g.G, g.C));
  if (b && (b->ndim() != 1 || b->numel() != g.O))
    invalid(fmt::format(
        "Given weight of size {}, expected bias to be 1-dimensional with {} elements, but got bias "
        "of size {} instead",
        shape_to_string(w.shape()), g.O, shape_to_string(b->shape())));
  g.OH = out_size(g.H, g.kh, p.stride[0], p.pad_lo[0], p.pad_hi[0], p.dilation[0]);
  g.OW = out_size(g.W, g.kw, p.stride[1], p.pad_lo[1], p.pad_hi[1], p.dilation[1]);
  if (g.OH <= 0 || g.OW <= 0 || g.H + p.pad_lo[0] + p.pad_hi[0] < p.dilation[0] * (g.kh - 1) + 1 ||
      g.W + p.pad_lo[1] + p.pad_hi[1] < p.dilation[1] * (g.kw - 1) + 1)
    invalid(fmt::format(
        "Calculated padded input size per channel: ({} x {}). Kernel size: ({} x {}). Kernel size "
        "can't be greater than actual input size",
        g.H + p.pad_lo[0] + p.pad_hi[0], g.W + p.pad_lo[1] + p.pad_hi[1], p.dilation[0] * (g.kh - 1) + 1,
        p.dilation[1] * (g.kw - 1) + 1));
  const DType dt = x.dtype();
  check_alloc(static_cast<double>(g.N) * static_cast<double>(g.O) * static_cast<double>(g.OH) *
                  static_cast<double>(g.OW),
              "conv2d");
  check_alloc(static_cast<double>(g.K()) * static_cast<double>(g.OH) * static_cast<double>(g.OW), "conv2d");
  const Operand xd(x, dt), wd(w, dt);
  Buffer y(static_cast<std::size_t>(g.N * g.O * g.P()));
  // With a weight gradient ahead, the forward's columns are kept (up to 2^27 values, 1 GiB) so that the
  // backward does not redo im2col.
  auto cols = std::make_shared<Buffer>();
  if (GradMode::enabled() && w.requires_grad() && !g.pointwise() &&
      static_cast<double>(g.N * g.G) * static_cast<double>(g.K() * g.P()) <= 134217728.0)
    cols->resize(static_cast<std::size_t>(g.N * g.G * g.K() * g.P()));
  if (!y.empty()) conv_fwd(g, xd.data(), wd.data(), y.data(), cols->empty() ? nullptr : cols.get());
  if (b) add_bias(y, b->data(), g.N, g.O, g.P());
  detail::maybe_round_f32(y, dt);
  std::vector<Var> parents{x, w};
  if (b) parents.push_back(*b);
  const Shape os{g.N, g.O, g.OH, g.OW};
  return make_result(os, std::move(y), dt, parents, [g, x, w, b, cols](const Buffer& dy) {
    std::vector<Buffer> r(b ? 3 : 2);
    if (x.requires_grad()) {
      r[0].assign(static_cast<std::size_t>(x.numel()), 0.0);
      if (!dy.empty()) conv_bwd_data(g, dy.data(), w.data().data(), r[0].data());
    }
    if (w.requires_grad()) {
      r[1].assign(static_cast<std::size_t>(w.numel()), 0.0);
      if (!dy.empty())
        conv_bwd_weight(g, x.data().data(), dy.data(), r[1].data(), cols->empty() ? nullptr : cols.get());
    }
    if (b && b->requires_grad()) r[2] = bias_grad(dy, g.N, g.O, g.P());
    return r;
  });
}

Var conv_transpose2d(const Var& x, const Var& w, const std::optional<Var>& b, const ConvParams& p,
                     std::array<std::int64_t, 2> output_padding) {
  check_params(p);
  check_operands(x, w, b, "conv_transpose2d");
  // The geometry of the convolution whose backward-data this is: its "image" is our output.
  Geom g;
  g.p = p;
  g.N = x.shape()[0];
  g.O = x.shape()[1];
  g.G = p.groups;
  g.kh = w.shape()[2], g.kw = w.shape()[3];
  if (w.shape()[0] != g.O)
    invalid(
        fmt::format("Given transposed=1, weight of size {}, expected input{} to have {} channels, but got {} "
                    "channels instead",
                    shape_to_string(w.shape()), shape_to_string(x.shape()), w.shape()[0], g.O));
  if (g.O % g.G != 0) invalid("conv_transpose2d: input channels must be divisible by groups");
  g.C = w.shape()[1] * g.G;
  g.OH = x.shape()[2], g.OW = x.shape()[3];
  for (std::size_t i = 0; i < 2; ++i)
    if (output_padding[i] < 0 || (output_padding[i] >= p.stride[i] && output_padding[i] >= p.dilation[i]))
      invalid("output padding must be smaller than either stride or dilation");
  check_alloc(static_cast<double>(g.N) * static_cast<double>(g.C) *
                  (static_cast<double>(g.OH - 1) * static_cast<double>(p.stride[0]) +
                   static_cast<double>(g.kh) * static_cast<double>(p.dilation[0])) *
                  (static_cast<double>(g.OW - 1) * static_cast<double>(p.stride[1]) +
                   static_cast<double>(g.kw) * static_cast<double>(p.dilation[1])),
              "conv_transpose2d");
  check_alloc(static_cast<double>(g.K()) * static_cast<double>(g.OH) * static_cast<double>(g.OW),
              "conv_transpose2d");
  g.H = (g.OH - 1) * p.stride[0] - p.pad_lo[0] - p.pad_hi[0] + p.dilation[0] * (g.kh - 1) + 1 +
        output_padding[0];
  g.W = (g.OW - 1) * p.stride[1] - p.pad_lo[1] - p.pad_hi[1] + p.dilation[1] * (g.kw - 1) + 1 +
        output_padding[1];
  if (g.H <= 0 || g.W <= 0)
    invalid(fmt::format("conv_transpose2d: the output size ({} x {}) is too small", g.H, g.W));
  if (b && (b->ndim() != 1 || b->numel() != g.C))
    invalid(fmt::format("conv_transpose2d: expected bias of {} elements, got {}", g.C,
                        shape_to_string(b->shape())));
  const DType dt = x.dtype();
  const Operand xd(x, dt), wd(w, dt);
  Buffer y(static_cast<std::size_t>(g.N * g.C * g.H * g.W), 0.0);
  if (!y.empty() && !xd.empty()) conv_bwd_data(g, xd.data(), wd.data(), y.data());
  if (b) add_bias(y, b->data(), g.N, g.C, g.H * g.W);
  detail::maybe_round_f32(y, dt);
  std::vector<Var> parents{x, w};
  if (b) parents.push_back(*b);
  const Shape os{g.N, g.C, g.H, g.W};
  return make_result(os, std::move(y), dt, parents, [g, x, w, b](const Buffer& dy) {
    std::vector<Buffer> r(b ? 3 : 2);
    if (x.requires_grad()) {  // dx = conv(dy)
      r[0].assign(static_cast<std::size_t>(x.numel()), 0.0);
      if (!r[0].empty()) conv_fwd(g, dy.data(), w.data().data(), r[0].data());
    }
    if (w.requires_grad()) {  // dw = x col(dy)^T
      r[1].assign(static_cast<std::size_t>(w.numel()), 0.0);
      if (!x.data().empty()) conv_bwd_weight(g, dy.data(), x.data().data(), r[1].data());
    }
    if (b && b->requires_grad()) r[2] = bias_grad(dy, g.N, g.C, g.H * g.W);
    return r;
  });
}

namespace {

// padding= int / list / 'same' / 'valid' -> per-dim (lo, hi) for `nd` spatial dims of kernel `k`.
void resolve_padding(Ctx& c, std::size_t nd, const std::vector<std::int64_t>& k, ConvParams& p,
                     const std::vector<std::int64_t>& stride, const std::vector<std::int64_t>& dil) {
  const Value& v = c["padding"];
  const std::size_t off = 2 - nd;  // conv1d uses the width slot
  if (v.kind() == Value::Kind::String) {
    const std::string s = v.as_string();
    if (s == "valid") return;
    if (s != "same") invalid(fmt::format("Invalid padding string: '{}'", s));
    for (std::size_t i = 0; i < nd; ++i)
      if (stride[i] != 1) invalid("padding='same' is not supported for strided convolutions");
    for (std::size_t i = 0; i < nd; ++i) {
      const std::int64_t total = dil[i] * (k[i] - 1);
      p.pad_lo[off + i] = total / 2;
      p.pad_hi[off + i] = total - total / 2;  // torch pads the extra element at the end
    }
    return;
  }
  const auto pad = expand_ints(v.as_int_list(), nd, "padding");
  for (std::size_t i = 0; i < nd; ++i) p.pad_lo[off + i] = p.pad_hi[off + i] = pad[i];
}

// Adds the batch dim of an unbatched call and, for 1-d, the height dim.
Var to4d(const Var& x, std::size_t nd, bool batched) {
  Var r = batched ? x : ops::unsqueeze(x, 0);
  return nd == 1 ? ops::unsqueeze(r, 2) : r;
}
Var from4d(const Var& y, std::size_t nd, bool batched) {
  Var r = nd == 1 ? ops::squeeze(y, 2) : y;
  return batched ? r : ops::squeeze(r, 0);
}

Outs conv_runner(Ctx& c, std::size_t nd, bool transposed) {
  Var x = c.t("input"), w = c.t("weight");
  std::optional<Var> b = c.opt_t("bias");
  const std::string fn = transposed ? fmt::format("conv_transpose{}d", nd) : fmt::format("conv{}d", nd);
  if (static_cast<std::size_t>(w.ndim()) != nd + 2)
    invalid(fmt::format("{}: expected weight to be {}-dimensional, got {}-dimensional weight of size {}", fn,
                        nd + 2, w.ndim(), shape_to_string(w.shape())));
  const bool batched = static_cast<std::size_t>(x.ndim()) == nd + 2;
  if (!batched && static_cast<std::size_t>(x.ndim()) != nd + 1)
    invalid(fmt::format("Expected {}D (unbatched) or {}D (batched) input to {}, but got input of size: {}",
                        nd + 1, nd + 2, fn, shape_to_string(x.shape())));
  need_floating(x, transposed ? "slow_conv_transpose2d" : "slow_conv2d_cpu");
  const auto stride = expand_ints(c.ints("stride"), nd, "stride");
  const auto dil = expand_ints(c.ints("dilation"), nd, "dilation");
  std::vector<std::int64_t> k(w.shape().end() - static_cast<std::ptrdiff_t>(nd), w.shape().end());
  ConvParams p;
  p.groups = c.i("groups");
  const std::size_t off = 2 - nd;
  for (std::size_t i = 0; i < nd; ++i) {
    p.stride[off + i] = stride[i];
    p.dilation[off + i] = dil[i];
  }
  Var x4 = to4d(x, nd, batched), w4 = nd == 1 ? ops::unsqueeze(w, 2) : w;
  if (transposed) {
    const auto pad = expand_ints(c.ints("padding"), nd, "padding");
    const auto op = expand_ints(c.ints("output_padding"), nd, "output_padding");
    std::array<std::int64_t, 2> opad{0, 0};
    for (std::size_t i = 0; i < nd; ++i) {
      p.pad_lo[off + i] = p.pad_hi[off + i] = pad[i];
      opad[off + i] = op[i];
    }
    return {from4d(conv_transpose2d(x4, w4, b, p, opad), nd, batched)};
  }
  resolve_padding(c, nd, k, p, stride, dil);
  return {from4d(conv2d(x4, w4, b, p), nd, batched)};
}

}  // namespace

}  // namespace probe::runners::nn

namespace probe::runners {

void register_conv_runners(RunnerRegistry& reg) {
  for (const std::size_t nd : {std::size_t{1}, std::size_t{2}}) {
    const std::string fn = fmt::format("conv{}d", nd);
    def(reg, names(fn, kTorch | kFunctional | kMintFunctional | kMsOps),
        fn + "(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, Any padding=0, int[] "
             "dilation=1, "
             "int groups=1) -> Tensor",
        [nd](Ctx& c) -> Outs { return nn::conv_runner(c, nd, false); });
    const std::string tfn = fmt::format("conv_transpose{}d", nd);
    def(reg, names(tfn, kTorch | kFunctional | kMintFunctional),
        tfn +
            "(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, int[] padding=0, int[] "
            "output_padding=0, int groups=1, int[] dilation=1) -> Tensor",
        [nd](Ctx& c) -> Outs { return nn::conv_runner(c, nd, true); });
  }
}

}  // namespace probe::runners
