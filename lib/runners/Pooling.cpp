// Pooling, padding, interpolation and embedding (float64 reference). Max pooling gathers the arg-max
// with take(); averages, padding and interpolation are sparse linear maps (nn::apply_map), so their
// gradients are the transposed maps, exactly as torch's kernels scatter them.
#include <fmt/format.h>

#include <cmath>

#include "probe/error.h"
#include "runners/NnKit.h"
#include "runners/Ops.h"

namespace probe::runners::nn {

namespace {

// torch's pooling_output_shape.
std::int64_t pool_out(std::int64_t in, std::int64_t k, std::int64_t pad, std::int64_t s, std::int64_t d,
                      bool ceil_mode) {
  const std::int64_t num = in + 2 * pad - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  std::int64_t out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + pad) --out;
  return out;
}

// Pooling arguments as 2-d values; a 1-d op uses the width slot with a height of 1.
struct Pool2d {
  std::int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool ceil_mode = false;
  std::int64_t planes = 0, H = 0, W = 0, OH = 0, OW = 0;
  Shape out_shape;
};

Pool2d pool_args(Ctx& c, const Var& x, std::size_t nd, const char* fn, bool has_dilation) {
  need_floating(x, fn);
  if (static_cast<std::size_t>(x.ndim()) != nd + 1 && static_cast<std::size_t>(x.ndim()) != nd + 2)
    invalid(fmt::format("{}: expected {}D or {}D input, got {}D", fn, nd + 1, nd + 2, x.ndim()));
  const auto k = expand_ints(c.ints("kernel_size"), nd, "kernel_size");
  auto s = c.ints("stride");
  const auto st = s.empty() ? k : expand_ints(s, nd, "stride");
  const auto pad = expand_ints(c.ints("padding"), nd, "padding");
  const auto dil =
      has_dilation ? expand_ints(c.ints("dilation"), nd, "dilation") : std::vector<std::int64_t>(nd, 1);
  Pool2d p;
  p.ceil_mode = c.b("ceil_mode");
  if (nd == 2) {
    p.kh = k[0], p.sh = st[0], p.ph = pad[0], p.dh = dil[0];
  }
  p.kw = k[nd - 1], p.sw = st[nd - 1], p.pw = pad[nd - 1], p.dw = dil[nd - 1];
  for (auto v : {p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.dh, p.dw})
    if (v > (std::int64_t{1} << 40))
      invalid(fmt::format("{}: kernel/stride/padding/dilation is unreasonably large", fn));
  for (auto v : {p.kh, p.kw})
    if (v <= 0) invalid(fmt::format("{}: kernel_size must be greater than zero", fn));
  for (auto v : {p.sh, p.sw})
    if (v <= 0) invalid(fmt::format("{}: stride must be greater than zero", fn));
  for (auto v : {p.dh, p.dw})
    if (v <= 0) invalid(fmt::format("{}: dilation must be greater than zero", fn));
  if (p.ph < 0 || p.pw < 0 || p.ph > p.kh / 2 || p.pw > p.kw / 2)
    invalid(fmt::format("{}: pad should be at most half of effective kernel size", fn));
  const Shape& xs = x.shape();
  p.W = xs.back();
  p.H = nd == 2 ? xs[xs.size() - 2] : 1;
  p.planes = 1;
  for (std::size_t i = 0; i + nd < xs.size(); ++i) p.planes *= xs[i];
  p.OH = nd == 2 ? pool_out(p.H, p.kh, p.ph, p.sh, p.dh, p.ceil_mode) : 1;
  p.OW = pool_out(p.W, p.kw, p.pw, p.sw, p.dw, p.ceil_mode);
  if (p.OH <= 0 || p.OW <= 0)
    invalid(fmt::format("{}: output size is too small (input {})", fn, shape_to_string(xs)));
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (i + nd < xs.size() && i > 0 && xs[i] == 0 && xs.size() == nd + 2)
      invalid(fmt::format("{}: Expected input's non-batch dimensions to have positive length", fn));
  p.out_shape = Shape(xs.begin(), xs.end() - static_cast<std::ptrdiff_t>(nd));
  if (nd == 2) p.out_shape.push_back(p.OH);
  p.out_shape.push_back(p.OW);
  return p;
}

std::pair<Var, Var> max_pool(Ctx& c, std::size_t nd) {
  Var x = c.t("input");
  const Pool2d p = pool_args(c, x, nd, nd == 2 ? "max_pool2d" : "max_pool1d", true);
  const Buffer& xd = x.data();
  std::vector<std::int64_t> take_idx;
  Buffer arg;
  take_idx.reserve(static_cast<std::size_t>(p.planes * p.OH * p.OW));
  for (std::int64_t pl = 0; pl < p.planes; ++pl)
    for (std::int64_t oh = 0; oh < p.OH; ++oh)
      for (std::int64_t ow = 0; ow < p.OW; ++ow) {
        // torch's CPU kernel: first in-range position, then strictly greater or NaN wins.
        std::int64_t h0 = oh * p.sh - p.ph, w0 = ow * p.sw - p.pw;
        const std::int64_t h1 = std::min(h0 + (p.kh - 1) * p.dh + 1, p.H),
                           w1 = std::min(w0 + (p.kw - 1) * p.dw + 1, p.W);
        while (h0 < 0) h0 += p.dh;
        while (w0 < 0) w0 += p.dw;
        std::int64_t best = h0 * p.W + w0;
        double m = -INFINITY;
        for (std::int64_t ih = h0; ih < h1; ih += p.dh)
          for (std::int64_t iw = w0; iw < w1; iw += p.dw) {
            const std::int64_t i = ih * p.W + iw;
            const double v = xd[static_cast<std::size_t>(pl * p.H * p.W + i)];
            if (v > m || std::isnan(v)) {
              m = v;
              best = i;
            }
          }
        take_idx.push_back(pl * p.H * p.W + best);
        arg.push_back(static_cast<double>(best));
      }
  Var values = take(x, std::move(take_idx), p.out_shape);
  return {values, make_leaf(p.out_shape, std::move(arg), DType::Int64, false)};
}

Var avg_pool(Ctx& c, std::size_t nd) {
  Var x = c.t("input");
  const Pool2d p = pool_args(c, x, nd, nd == 2 ? "avg_pool2d" : "avg_pool1d", false);
  const bool include_pad = c.b("count_include_pad");
  std::optional<std::int64_t> divisor;
  if (nd == 2 && !c.none("divisor_override")) {
    divisor = c.i("divisor_override");
    if (*divisor == 0) invalid("divisor must be not zero");
  }
  SparseMap m;
  for (std::int64_t pl = 0; pl < p.planes; ++pl)
    for (std::int64_t oh = 0; oh < p.OH; ++oh)
      for (std::int64_t ow = 0; ow < p.OW; ++ow) {
        std::int64_t h0 = oh * p.sh - p.ph, w0 = ow * p.sw - p.pw;
        std::int64_t h1 = std::min(h0 + p.kh, p.H + p.ph), w1 = std::min(w0 + p.kw, p.W + p.pw);
        const std::int64_t pool_size = (h1 - h0) * (w1 - w0);
        h0 = std::max<std::int64_t>(h0, 0), w0 = std::max<std::int64_t>(w0, 0);
        h1 = std::min(h1, p.H), w1 = std::min(w1, p.W);
        if (h0 < h1 && w0 < w1) {
          const std::int64_t div = divisor ? *divisor : include_pad ? pool_size : (h1 - h0) * (w1 - w0);
          const double wgt = 1.0 / static_cast<double>(div);
          for (std::int64_t ih = h0; ih < h1; ++ih)
            for (std::int64_t iw = w0; iw < w1; ++iw) m.add(pl * p.H * p.W + ih * p.W + iw, wgt);
        }
        m.close();
      }
  return apply_map(x, m, p.out_shape);
}

Var adaptive_avg_pool(Ctx& c, std::size_t nd) {
  Var x = c.t("input");
  need_floating(x, "adaptive_avg_pool2d");
  if (static_cast<std::size_t>(x.ndim()) != nd + 1 && static_cast<std::size_t>(x.ndim()) != nd + 2)
    invalid(fmt::format("adaptive_avg_pool{}d(): Expected {}D or {}D tensor, but got {}", nd, nd + 1, nd + 2,
                        shape_to_string(x.shape())));
  const Value& os = c["output_size"];
  std::vector<std::int64_t> out(nd);
  const Shape& xs = x.shape();
  for (std::size_t i = 0; i < nd; ++i) {
    const Value* v = os.is_list() ? (os.list().size() == nd ? &os.list()[i] : nullptr) : &os;
    if (!v) invalid(fmt::format("adaptive_avg_pool{}d: output_size must be {}", nd, nd));
    out[i] = v->is_none() ? xs[xs.size() - nd + i] : v->as_int();
    if (out[i] < 0) invalid("adaptive_avg_pool: elements of output_size must be greater than or equal to 0");
  }
  double want = 1;
  for (std::size_t i = 0; i + nd < xs.size(); ++i) want *= static_cast<double>(xs[i]);
  for (auto o : out) want *= static_cast<double>(o);
  check_alloc(want, "adaptive_avg_pool");
  const std::int64_t W = xs.back(), H = nd == 2 ? xs[xs.size() - 2] : 1;
  const std::int64_t OW = out.back(), OH = nd == 2 ? out[0] : 1;
  std::int64_t planes = 1;
  for (std::size_t i = 0; i + nd < xs.size(); ++i) planes *= xs[i];
  Shape oshape(xs.begin(), xs.end() - static_cast<std::ptrdiff_t>(nd));
  oshape.insert(oshape.end(), out.begin(), out.end());
  auto lo = [](std::int64_t a, std::int64_t o, std::int64_t i) { return (a * i) / o; };
  auto hi = [](std::int64_t a, std::int64_t o, std::int64_t i) { return ((a + 1) * i + o - 1) / o; };
  SparseMap m;
  for (std::int64_t pl = 0; pl < planes; ++pl)
    for (std::int64_t oh = 0; oh < OH; ++oh)
      for (std::int64_t ow = 0; ow < OW; ++ow) {
        const std::int64_t h0 = lo(oh, OH, H), h1 = hi(oh, OH, H), w0 = lo(ow, OW, W), w1 = hi(ow, OW, W);
        const double wgt = 1.0 / static_cast<double>((h1 - h0) * (w1 - w0));
        for (std::int64_t ih = h0; ih < h1; ++ih)
          for (std::int64_t iw = w0; iw < w1; ++iw) m.add(pl * H * W + ih * W + iw, wgt);
        m.close();
      }
  return apply_map(x, m, oshape);
}

// F.pad: pairs from the last dim backwards; constant mode may crop (negative pads).
Var pad(Ctx& c) {
  Var x = c.t("input");
  const auto pads = c.ints("pad");
  const std::string mode = c.s("mode");
  if (pads.size() % 2 != 0) invalid("Padding length must be divisible by 2");
  const std::size_t np = pads.size() / 2;
  if (np > static_cast<std::size_t>(x.ndim())) invalid("Padding length too large");
  const double value = c.none("value") ? 0.0 : c.f("value");
  if (mode != "constant") {
    if (!c.none("value") && value != 0.0)
      invalid(fmt::format("Padding mode \"{}\" doesn't take in value argument", mode));
    if (mode != "reflect" && mode != "replicate" && mode != "circular")
      invalid(fmt::format("Unrecognised padding mode {}", mode));
    if (np > 3 || static_cast<std::size_t>(x.ndim()) < np + 1 || static_cast<std::size_t>(x.ndim()) > np + 2)
      invalid(fmt::format("{} padding of {} dims is not supported for a {}-d input", mode, np, x.ndim()));
    need_floating(x, mode + "_pad");
  }
  const Shape& xs = x.shape();
  const std::size_t n = xs.size();
  Shape os = xs;
  std::vector<std::int64_t> lo(n, 0);
  for (std::size_t i = 0; i < np; ++i) {
    const std::size_t d = n - 1 - i;
    constexpr std::int64_t kHuge = std::int64_t{1} << 40;
    for (const std::int64_t v : {pads[2 * i], pads[2 * i + 1]})
      if (v > kHuge || v < -kHuge) invalid("pad: padding is unreasonably large");
    lo[d] = pads[2 * i];
    os[d] = xs[d] + pads[2 * i] + pads[2 * i + 1];
    if (os[d] < 0 || (mode == "constant" && os[d] < 0))
      invalid(
          fmt::format("The input size {}, plus negative padding {} and {} resulted in a negative output size",
                      xs[d], pads[2 * i], pads[2 * i + 1]));
    if (mode == "reflect" && (pads[2 * i] >= xs[d] || pads[2 * i + 1] >= xs[d]))
      invalid(
          fmt::format("Argument #4: Padding size should be less than the corresponding input dimension, but "
                      "got: padding ({}, {}) at dimension {} of input {}",
                      pads[2 * i], pads[2 * i + 1], d, shape_to_string(xs)));
    if (mode == "circular" && (pads[2 * i] > xs[d] || pads[2 * i + 1] > xs[d]))
      invalid("Padding value causes wrapping around more than once.");
    if (mode != "constant" && (pads[2 * i] < 0 || pads[2 * i + 1] < 0) && mode != "circular")
      invalid(fmt::format("{} padding does not support negative pads", mode));
    if ((mode == "replicate" || mode == "reflect") && xs[d] == 0 && os[d] > 0)
      invalid(fmt::format("{} padding of an empty dimension", mode));
  }
  double want = 1;
  for (auto d : os) want *= static_cast<double>(d);
  check_alloc(want, "pad");
  const auto xstr = contiguous_strides(xs);
  const std::int64_t total = probe::numel(os);
  SparseMap m;
  std::vector<std::int64_t> idx(n, 0);
  for (std::int64_t o = 0; o < total; ++o) {
    std::int64_t src = 0;
    bool inside = true;
    for (std::size_t d = 0; d < n; ++d) {
      std::int64_t j = idx[d] - lo[d];
      const std::int64_t len = xs[d];
      if (j < 0 || j >= len) {
        if (mode == "constant") {
          inside = false;
          break;
        }
        if (mode == "reflect")
          j = j < 0 ? -j : 2 * (len - 1) - j;
        else if (mode == "replicate")
          j = j < 0 ? 0 : len - 1;
        else
          j = ((j % len) + len) % len;
      }
      src += j * xstr[d];
    }
    if (inside) m.add(src, 1.0);
    m.close();
    for (std::size_t d = n; d-- > 0;) {
      if (++idx[d] < os[d]) break;
      idx[d] = 0;
    }
  }
  return apply_map(x, m, os, value);
}

// Source index and weights of one output position for interpolate (torch's upsample kernels).
struct Taps {
  std::int64_t i0 = 0, i1 = 0;
  double l0 = 1, l1 = 0;
};
std::vector<Taps> interp_taps(std::int64_t in, std::int64_t out, const std::string& mode, bool align_corners,
                              std::optional<double> scale_factor) {
  std::vector<Taps> t(static_cast<std::size_t>(out));
  if (mode == "nearest" || mode == "nearest-exact") {
    // torch computes the nearest source index in float32.
    const float scale = scale_factor && *scale_factor > 0 ? static_cast<float>(1.0 / *scale_factor)
                                                          : static_cast<float>(in) / static_cast<float>(out);
    for (std::int64_t o = 0; o < out; ++o) {
      std::int64_t s;
      if (mode == "nearest") {
        if (out == in)
          s = o;
        else if (out == 2 * in)
          s = o >> 1;
        else
          s = std::min(static_cast<std::int64_t>(std::floor(static_cast<float>(o) * scale)), in - 1);
      } else {
        s = out == in ? o
                      : std::min(static_cast<std::int64_t>(
                                     std::floor(static_cast<float>((static_cast<double>(o) + 0.5) * scale))),
                                 in - 1);
      }
      t[static_cast<std::size_t>(o)].i0 = t[static_cast<std::size_t>(o)].i1 = s;
    }
    return t;
  }
  double scale;
  if (align_corners)
    scale = out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  else
    scale = scale_factor && *scale_factor > 0 ? 1.0 / *scale_factor
                                              : static_cast<double>(in) / static_cast<double>(out);
  for (std::int64_t o = 0; o < out; ++o) {
    double src =
        align_corners ? scale * static_cast<double>(o) : scale * (static_cast<double>(o) + 0.5) - 0.5;
    if (!align_corners && src < 0) src = 0;
    Taps& tp = t[static_cast<std::size_t>(o)];
    tp.i0 = static_cast<std::int64_t>(src);
    tp.i1 = tp.i0 + (tp.i0 < in - 1 ? 1 : 0);
    tp.l1 = src - static_cast<double>(tp.i0);
    tp.l0 = 1.0 - tp.l1;
  }
  return t;
}

Var interpolate(Ctx& c) {
  Var x = c.t("input");
  const std::string mode = c.s("mode");
  const std::size_t nd = static_cast<std::size_t>(std::max(x.ndim() - 2, 0));
  if (nd < 1 || nd > 2)
    throw Error(ErrorKind::Unsupported,
                fmt::format("interpolate of a {}-d input is not supported by the reference (3-d and 4-d are)",
                            x.ndim()));
  if (mode == "linear" && nd != 1) invalid("Got 4D input, but linear mode needs 3D input");
  if (mode == "bilinear" && nd != 2)
    invalid(fmt::format("Got {}D input, but bilinear mode needs 4D input", x.ndim()));
  const bool linear = mode == "linear" || mode == "bilinear";
  if (!linear && mode != "nearest" && mode != "nearest-exact")
    throw Error(ErrorKind::Unsupported,
                fmt::format("interpolate mode '{}' is not supported by the reference", mode));
  if (c.b("antialias"))
    throw Error(ErrorKind::Unsupported, "interpolate with antialias=True is not supported");
  bool align = false;
  if (!c.none("align_corners")) {
    if (!linear)
      invalid(
          "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | "
          "trilinear");
    align = c.b("align_corners");
  }
  if (!linear) need_floating(x, "upsample_nearest");
  need_floating(x, "upsample");
  const Shape& xs = x.shape();
  std::vector<std::int64_t> out(nd);
  std::vector<std::optional<double>> scales(nd);
  if (!c.none("size")) {
    if (!c.none("scale_factor")) invalid("only one of size or scale_factor should be defined");
    out = expand_ints(c.ints("size"), nd, "size");
  } else if (!c.none("scale_factor")) {
    const Value& sf = c["scale_factor"];
    std::vector<double> f;
    if (sf.is_list())
      for (const Value& v : sf.list()) f.push_back(v.as_double());
    else
      f.assign(nd, sf.as_double());
    if (f.size() != nd) invalid("scale_factor shape must match input shape");
    const bool recompute = !c.none("recompute_scale_factor") && c.b("recompute_scale_factor");
    for (std::size_t i = 0; i < nd; ++i) {
      const double o = std::floor(static_cast<double>(xs[2 + i]) * f[i]);
      if (!(o < 1099511627776.0))
        invalid(fmt::format("interpolate: scale_factor {} is unreasonably large", f[i]));
      out[i] = static_cast<std::int64_t>(o);
      if (!recompute) scales[i] = f[i];
    }
  } else {
    invalid("either size or scale_factor should be defined");
  }
  double want = static_cast<double>(xs[0]) * static_cast<double>(xs[1]) * (linear ? 4.0 : 1.0);
  for (auto o : out) {
    if (o <= 0) invalid("Input and output sizes should be greater than 0");
    want *= static_cast<double>(o);
  }
  check_alloc(want, "interpolate");
  const std::int64_t H = nd == 2 ? xs[2] : 1, W = xs.back(), OH = nd == 2 ? out[0] : 1, OW = out.back();
  const auto th = nd == 2 ? interp_taps(H, OH, mode, align, scales[0]) : std::vector<Taps>{Taps{}};
  const auto tw = interp_taps(W, OW, mode, align, scales[nd - 1]);
  const std::int64_t planes = xs[0] * xs[1];
  SparseMap m;
  for (std::int64_t pl = 0; pl < planes; ++pl)
    for (std::int64_t oh = 0; oh < OH; ++oh)
      for (std::int64_t ow = 0; ow < OW; ++ow) {
        const Taps& a = th[static_cast<std::size_t>(oh)];
        const Taps& b = tw[static_cast<std::size_t>(ow)];
        const std::int64_t base = pl * H * W;
        if (!linear) {
          m.add(base + a.i0 * W + b.i0, 1.0);
        } else {
          m.add(base + a.i0 * W + b.i0, a.l0 * b.l0);
          m.add(base + a.i0 * W + b.i1, a.l0 * b.l1);
          m.add(base + a.i1 * W + b.i0, a.l1 * b.l0);
          m.add(base + a.i1 * W + b.i1, a.l1 * b.l1);
        }
        m.close();
      }
  Shape os{xs[0], xs[1]};
  os.insert(os.end(), out.begin(), out.end());
  return apply_map(x, m, os);
}

Var embedding(Ctx& c) {
  Var idx = c.t("input"), w = c.t("weight");
  if (idx.dtype() != DType::Int64 && idx.dtype() != DType::Int32)
    invalid(fmt::format(
        "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
        "Int; but got {} instead",
        name(idx.dtype())));
  if (w.ndim() != 2) invalid("'weight' must be 2-D");
  const std::int64_t rows = w.shape()[0], D = w.shape()[1];
  std::optional<std::int64_t> padding_idx = c.opt_i("padding_idx");
  if (padding_idx) {
    if (*padding_idx >= rows || *padding_idx < -rows) invalid("Padding_idx must be within num_embeddings");
    if (*padding_idx < 0) *padding_idx += rows;
  }
  std::vector<std::int64_t> ids;
  for (double v : idx.data()) {
    const auto i = static_cast<std::int64_t>(v);
    if (i < 0 || i >= rows)
      invalid(fmt::format("index out of range in self (index {}, {} embeddings)", i, rows));
    ids.push_back(i);
  }
  Buffer wd = w.data();
  if (!c.none("max_norm")) {  // torch renormalises the referenced rows of weight in place, without gradient
    const double max_norm = c.f("max_norm"), p = c.f("norm_type");
    std::vector<bool> done(static_cast<std::size_t>(rows), false);
    for (auto i : ids) {
      if (done[static_cast<std::size_t>(i)]) continue;
      done[static_cast<std::size_t>(i)] = true;
      double norm = 0;
      for (std::int64_t j = 0; j < D; ++j)
        norm += std::pow(std::fabs(wd[static_cast<std::size_t>(i * D + j)]), p);
      norm = std::pow(norm, 1.0 / p);
      if (norm > max_norm) {
        const double s = max_norm / (norm + 1e-7);
        for (std::int64_t j = 0; j < D; ++j) wd[static_cast<std::size_t>(i * D + j)] *= s;
      }
    }
  }
  Buffer out(ids.size() * static_cast<std::size_t>(D));
  for (std::size_t k = 0; k < ids.size(); ++k)
    std::copy_n(wd.begin() + ids[k] * D, D, out.begin() + static_cast<std::ptrdiff_t>(k) * D);
  Shape os = idx.shape();
  os.push_back(D);
  const bool by_freq = c.b("scale_grad_by_freq");
  if (c.b("sparse"))
    throw Error(ErrorKind::Unsupported, "embedding with sparse=True gives a sparse gradient");
  return make_result(os, std::move(out), w.dtype(), {w},
                     [ids, D, rows, padding_idx, by_freq](const Buffer& g) {
                       Buffer gw(static_cast<std::size_t>(rows * D), 0.0);
                       std::vector<double> count(static_cast<std::size_t>(rows), 0.0);
                       if (by_freq)
                         for (auto i : ids) count[static_cast<std::size_t>(i)] += 1;
                       for (std::size_t k = 0; k < ids.size(); ++k) {
                         const std::int64_t i = ids[k];
                         if (padding_idx && i == *padding_idx) continue;
                         const double s = by_freq ? 1.0 / count[static_cast<std::size_t>(i)] : 1.0;
                         for (std::int64_t j = 0; j < D; ++j)
                           gw[static_cast<std::size_t>(i * D + j)] +=
                               g[k * static_cast<std::size_t>(D) + static_cast<std::size_t>(j)] * s;
                       }
                       return std::vector<Buffer>{std::move(gw)};
                     });
}

}  // namespace

}  // namespace probe::runners::nn

namespace probe::runners {

void register_pooling_runners(RunnerRegistry& reg) {
  using namespace nn;
  const unsigned fns = kFunctional | kMintFunctional;
  def(reg, names("max_pool2d", fns | kTorch),
      "max_pool2d(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, int[] dilation=1, "
      "bool "
      "ceil_mode=False, bool return_indices=False) -> Tensor",
      [](Ctx& c) -> Outs {
        auto [v, i] = max_pool(c, 2);
        if (c.b("return_indices")) return {v, i};
        return {v};
      });
  def(reg, names("max_pool2d_with_indices", kFunctional),
      "max_pool2d_with_indices(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, int[] "
      "dilation=1, bool ceil_mode=False, bool return_indices=False) -> (Tensor, Tensor)",
      [](Ctx& c) -> Outs {
        auto [v, i] = max_pool(c, 2);
        return {v, i};
      });
  def(reg, names("max_pool1d", fns | kTorch),
      "max_pool1d(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, int[] dilation=1, "
      "bool "
      "ceil_mode=False, bool return_indices=False) -> Tensor",
      [](Ctx& c) -> Outs {
        auto [v, i] = max_pool(c, 1);
        if (c.b("return_indices")) return {v, i};
        return {v};
      });
  def(reg, names("avg_pool2d", fns | kAten),
      "avg_pool2d(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, bool "
      "ceil_mode=False, bool "
      "count_include_pad=True, int? divisor_override=None) -> Tensor",
      [](Ctx& c) -> Outs { return {avg_pool(c, 2)}; });
  def(reg, names("avg_pool1d", fns | kTorch),
      "avg_pool1d(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, bool "
      "ceil_mode=False, bool "
      "count_include_pad=True) -> Tensor",
      [](Ctx& c) -> Outs { return {avg_pool(c, 1)}; });
  def(reg, names("adaptive_avg_pool2d", fns | kTorch),
      "adaptive_avg_pool2d(Tensor input, Any output_size) -> Tensor",
      [](Ctx& c) -> Outs { return {adaptive_avg_pool(c, 2)}; });
  def(reg, names("adaptive_avg_pool1d", fns | kTorch),
      "adaptive_avg_pool1d(Tensor input, Any output_size) -> Tensor",
      [](Ctx& c) -> Outs { return {adaptive_avg_pool(c, 1)}; });
  def(reg, names("pad", fns, {"Torch._C._nn.pad"}),
      "pad(Tensor input, int[] pad, str mode='constant', float? value=None) -> Tensor",
      [](Ctx& c) -> Outs { return {nn::pad(c)}; });
  def(reg, names("interpolate", fns, {"Functional.upsample"}),
      "interpolate(Tensor input, Any size=None, Any scale_factor=None, str mode='nearest', bool? "
      "align_corners=None, "
      "bool? recompute_scale_factor=None, bool antialias=False) -> Tensor",
      [](Ctx& c) -> Outs { return {interpolate(c)}; });
  def(reg, names("embedding", fns),
      "embedding(Tensor input, Tensor weight, int? padding_idx=None, float? max_norm=None, float "
      "norm_type=2.0, "
      "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",
      [](Ctx& c) -> Outs { return {embedding(c)}; });
}

}  // namespace probe::runners
