// Attention and NPU fused ops (float64 reference): scaled_dot_product_attention, NPU.npu_fusion_attention,
// NPU.npu_swiglu, NPU.npu_rotary_mul. All are compositions of autograd ops (matmul, softmax, masking),
// so forward and backward follow the textbook formulas torch's math path uses.
#include <fmt/format.h>

#include <cmath>
#include <numeric>

#include "probe/error.h"
#include "runners/NnKit.h"
#include "runners/Ops.h"

namespace probe::runners::nn {

namespace {

Var scalar(double v) { return wrapped_scalar(v, DType::Float64); }

// Repeats dim 1 (heads) of [B, n2, S, D] so that head i of the result is head i / (n1 / n2).
Var repeat_heads(const Var& x, std::int64_t n1, int dim) {
  const std::int64_t n2 = x.size(dim);
  if (n2 == n1) return x;
  if (n2 == 0 || n1 % n2 != 0)
    invalid(fmt::format("number of query heads ({}) must be a multiple of the key/value heads ({})", n1, n2));
  std::vector<std::int64_t> idx(static_cast<std::size_t>(n1));
  for (std::int64_t i = 0; i < n1; ++i) idx[static_cast<std::size_t>(i)] = i / (n1 / n2);
  return index_select(x, dim, idx);
}

Var sdpa(Ctx& c) {
  Var q = c.t("query"), k = c.t("key"), v = c.t("value");
  need_floating(q, "scaled_dot_product_attention");
  if (q.ndim() < 2 || k.ndim() < 2 || v.ndim() < 2)
    invalid("scaled_dot_product_attention: inputs must be >= 2-D");
  if (c.f("dropout_p") > 0)
    throw Error(
        ErrorKind::Unsupported,
        "scaled_dot_product_attention with dropout_p > 0 draws a random mask that the float64 reference "
        "cannot reproduce");
  if (c.b("enable_gqa") && q.ndim() >= 3) {
    k = repeat_heads(k, q.size(-3), k.ndim() - 3);
    v = repeat_heads(v, q.size(-3), v.ndim() - 3);
  }
  const std::int64_t L = q.size(-2), S = k.size(-2), E = q.size(-1);
  const double scale = c.none("scale") ? 1.0 / std::sqrt(static_cast<double>(E)) : c.f("scale");
  Var attn = ops::mul(ops::matmul(q, transpose(k, -2, -1)), scalar(scale));
  const Var neg_inf = scalar(-INFINITY);
  if (c.b("is_causal")) {
    if (!c.none("attn_mask"))
      invalid("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
    Buffer keep(static_cast<std::size_t>(L * S));
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t j = 0; j < S; ++j) keep[static_cast<std::size_t>(i * S + j)] = j <= i ? 1.0 : 0.0;
    attn = where(make_leaf({L, S}, std::move(keep), DType::Bool), attn, neg_inf);
  } else if (auto m = c.opt_t("attn_mask")) {
    if (m->dtype() == DType::Bool)
      attn = where(*m, attn, neg_inf);
    else
      attn = ops::add(attn, *m);
  }
  return ops::matmul(ops::softmax(attn, -1), v);
}

// ---- npu_fusion_attention ------------------------------------------------------------------------

// 1 = masked for positions (i, j) of an [s1, s2] score matrix.
Buffer band_mask(std::int64_t s1, std::int64_t s2, std::int64_t pre, std::int64_t next) {
  Buffer m(static_cast<std::size_t>(s1 * s2));
  for (std::int64_t i = 0; i < s1; ++i)
    for (std::int64_t j = 0; j < s2; ++j)
      m[static_cast<std::size_t>(i * s2 + j)] = (j - i > next || i - j > pre) ? 1 : 0;
  return m;
}
Buffer triu_mask(std::int64_t s1, std::int64_t s2, std::int64_t diag) {
  Buffer m(static_cast<std::size_t>(s1 * s2));
  for (std::int64_t i = 0; i < s1; ++i)
    for (std::int64_t j = 0; j < s2; ++j) m[static_cast<std::size_t>(i * s2 + j)] = j - i >= diag ? 1 : 0;
  return m;
}
bool is_compressed_causal(const Var& m) {
  if (m.ndim() != 2 || m.shape()[0] != 2048 || m.shape()[1] != 2048) return false;
  const Buffer& d = m.data();
  for (std::int64_t i = 0; i < 2048; ++i)
    for (std::int64_t j = 0; j < 2048; ++j)
      if ((d[static_cast<std::size_t>(i * 2048 + j)] != 0) != (j > i)) return false;
  return true;
}

// The mask the fused kernel applies (sparse_mode semantics of torch_npu; the 2048x2048 "compressed"
// causal mask of modes 2/3/4 is expanded to [s1, s2] as documented). Empty optional: no mask.
std::optional<Var> fa_mask(Ctx& c, std::int64_t s1, std::int64_t s2) {
  const std::int64_t mode = c.i("sparse_mode"), pre = c.i("pre_tockens"), next = c.i("next_tockens");
  std::optional<Var> given = c.opt_t("atten_mask");
  if (given) {
    Var m = detach(*given);
    if ((mode == 2 || mode == 3 || mode == 4) && is_compressed_causal(m)) {
      if (mode == 2) return make_leaf({s1, s2}, triu_mask(s1, s2, 1), DType::Float64);
      if (mode == 3) return make_leaf({s1, s2}, triu_mask(s1, s2, s2 - s1 + 1), DType::Float64);
      return make_leaf({s1, s2}, band_mask(s1, s2, pre, next), DType::Float64);
    }
    return m;
  }
  switch (mode) {
    case 0:
    case 4:
      if (pre >= s1 && next >= s2 && mode == 0) return std::nullopt;
      return make_leaf({s1, s2}, band_mask(s1, s2, pre, next), DType::Float64);
    case 1:
      return std::nullopt;
    case 2:
      return make_leaf({s1, s2}, triu_mask(s1, s2, 1), DType::Float64);
    case 3:
      return make_leaf({s1, s2}, triu_mask(s1, s2, s2 - s1 + 1), DType::Float64);
    default:
      throw Error(
          ErrorKind::Unsupported,
          fmt::format("npu_fusion_attention sparse_mode={} without atten_mask is not supported", mode));
  }
}

Outs fusion_attention(Ctx& c) {
  Var q = c.t("query"), k = c.t("key"), v = c.t("value");
  need_floating(q, "npu_fusion_attention");
  const std::int64_t n1 = c.i("head_num");
  const std::string layout = c.s("input_layout");
  if (c.f("keep_prob") < 1.0)
    throw Error(
        ErrorKind::Unsupported,
        "npu_fusion_attention with keep_prob < 1 applies a random dropout mask that the float64 reference "
        "cannot reproduce");
  if (!c.none("padding_mask"))
    throw Error(ErrorKind::Unsupported, "npu_fusion_attention padding_mask is reserved");
  if (layout == "TND")
    throw Error(ErrorKind::Unsupported, "npu_fusion_attention input_layout TND is not supported");
  if (n1 <= 0) invalid("npu_fusion_attention: head_num must be positive");
  const std::size_t want_dims = layout == "BSH" || layout == "SBH" ? 3 : 4;
  if (layout != "BSH" && layout != "SBH" && layout != "BSND" && layout != "BNSD")
    invalid(fmt::format("npu_fusion_attention: invalid input_layout '{}'", layout));
  for (const Var* t : {&q, &k, &v})
    if (static_cast<std::size_t>(t->ndim()) != want_dims)
      invalid(fmt::format("npu_fusion_attention: layout {} needs {}-d inputs, got {}", layout, want_dims,
                          shape_to_string(t->shape())));
  std::int64_t d = 0;
  if (want_dims == 3) {
    if (q.size(2) % n1 != 0) invalid("npu_fusion_attention: hidden size must be a multiple of head_num");
    d = q.size(2) / n1;
  } else {
    d = q.size(3);
  }
  if (d == 0) invalid("npu_fusion_attention: head dim must be non-zero");
  auto to_bnsd = [&](const Var& x) -> Var {
    if (layout == "BNSD") return x;
    if (layout == "BSND") return permute(x, {0, 2, 1, 3});
    const std::int64_t n = x.size(2) / d;
    if (layout == "BSH") return permute(reshape(x, {x.size(0), x.size(1), n, d}), {0, 2, 1, 3});
    return permute(reshape(x, {x.size(0), x.size(1), n, d}), {1, 2, 0, 3});  // SBH
  };
  Var qb = to_bnsd(q), kb = to_bnsd(k), vb = to_bnsd(v);
  if (qb.size(1) != n1) invalid("npu_fusion_attention: query heads do not match head_num");
  kb = repeat_heads(kb, n1, 1);
  vb = repeat_heads(vb, n1, 1);
  const std::int64_t B = qb.size(0), s1 = qb.size(2), s2 = kb.size(2);
  Var qk = ops::matmul(qb, transpose(kb, -2, -1));
  if (auto pse = c.opt_t("pse")) qk = ops::add(qk, *pse);
  qk = ops::mul(qk, scalar(c.f("scale")));
  if (auto m = fa_mask(c, s1, s2)) {
    // msprobe's stand-in and the kernel's documented behaviour: masked scores get -40000 added (so a fully
    // masked row averages instead of producing NaN).
    Buffer mm = m->data();
    for (double& x : mm) x = x != 0 ? -40000.0 : 0.0;
    qk = ops::add(qk, make_leaf(m->shape(), std::move(mm), qk.dtype()));
  }
  Var p = ops::softmax(qk, -1);
  Var out = ops::matmul(p, vb);  // [B, N1, S1, D]
  if (layout == "BSND") out = permute(out, {0, 2, 1, 3});
  if (layout == "BSH") out = reshape(permute(out, {0, 2, 1, 3}), {B, s1, n1 * d});
  if (layout == "SBH") out = reshape(permute(out, {2, 0, 1, 3}), {s1, B, n1 * d});
  out = relabel(out, q.dtype());
  // softmax_max / softmax_sum: per row max and sum of exp(score - max), float32, repeated 8 times on the
  // last dim ([B, N1, S1, 8]) as the kernel stores them. No gradient flows through them.
  Var sc = detach(qk);
  Var mx = amax(sc, {3}, true, false);
  Var sm = ops::sum(ops::exp(ops::sub(sc, mx)), {3}, true);
  auto rep8 = [&](const Var& x) { return relabel(expand(x, {B, n1, s1, 8}), DType::Float32); };
  // softmax_out is reserved (empty) in torch_npu; seed/offset/numels describe the dropout RNG: not computed.
  return {out,
          rep8(mx),
          rep8(sm),
          Value(NoneValue{}),
          Value(NoneValue{}),
          Value(NoneValue{}),
          Value(NoneValue{})};
}

Var swiglu(Ctx& c) {
  Var x = c.t("input");
  need_floating(x, "npu_swiglu");
  const int d = wrap_dim(c.i("dim"), x.ndim());
  const std::int64_t n = x.size(d);
  if (n % 2 != 0) invalid(fmt::format("npu_swiglu: the size of dim {} ({}) must be even", d, n));
  Var a = slice(x, d, 0, n / 2, 1), b = slice(x, d, n / 2, n, 1);
  Var s = map(
      a, a.dtype(), [](double v) { return v / (1.0 + std::exp(-v)); },
      [](double v, double) {
        const double sg = 1.0 / (1.0 + std::exp(-v));
        return sg * (1.0 + v * (1.0 - sg));
      });
  return ops::mul(s, b);
}

Var rotary_mul(Ctx& c) {
  Var x = c.t("input"), r1 = c.t("r1"), r2 = c.t("r2");
  need_floating(x, "npu_rotary_mul");
  const std::string mode = c.s("rotary_mode");
  if (x.ndim() < 1) invalid("npu_rotary_mul: input must have at least one dim");
  const std::int64_t D = x.size(-1);
  if (D % 2 != 0) invalid("npu_rotary_mul: the last dim must be even");
  // rotate: x_new[j] = sign[j] * x[src[j]]: half = cat(-x2, x1), interleave = (-x1, x0, -x3, x2, ...).
  std::vector<std::int64_t> src(static_cast<std::size_t>(D));
  Buffer sign(static_cast<std::size_t>(D));
  for (std::int64_t j = 0; j < D; ++j) {
    if (mode == "half") {
      src[static_cast<std::size_t>(j)] = j < D / 2 ? j + D / 2 : j - D / 2;
      sign[static_cast<std::size_t>(j)] = j < D / 2 ? -1.0 : 1.0;
    } else if (mode == "interleave") {
      src[static_cast<std::size_t>(j)] = j % 2 == 0 ? j + 1 : j - 1;
      sign[static_cast<std::size_t>(j)] = j % 2 == 0 ? -1.0 : 1.0;
    } else {
      invalid(fmt::format("npu_rotary_mul: rotary_mode must be 'half' or 'interleave', got '{}'", mode));
    }
  }
  Var rot = ops::mul(index_select(x, -1, src), make_leaf({D}, std::move(sign), DType::Float64));
  rot = relabel(rot, x.dtype());
  return ops::add(ops::mul(r1, x), ops::mul(r2, rot));
}

}  // namespace

}  // namespace probe::runners::nn

namespace probe::runners {

void register_attention_runners(RunnerRegistry& reg) {
  using namespace nn;
  def(reg, names("scaled_dot_product_attention", kFunctional | kMintFunctional),
      "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float "
      "dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor",
      [](Ctx& c) -> Outs { return {sdpa(c)}; });
  // Deviation from msprobe's CPU stand-in (to be listed in DECISIONS.md): scale defaults to 1.0 as the
  // torch_npu signature documents, where msprobe uses 1/sqrt(d) when the dump has no scale kwarg (tested by
  // the bf16_default_scale fixture).
  def(reg, {"NPU.npu_fusion_attention"},
      "npu_fusion_attention(Tensor query, Tensor key, Tensor value, int head_num, str input_layout, Tensor? "
      "pse=None, Tensor? padding_mask=None, Tensor? atten_mask=None, float scale=1.0, float keep_prob=1.0, "
      "int "
      "pre_tockens=2147483647, int next_tockens=2147483647, int inner_precise=0, int[]? prefix=None, int[]? "
      "actual_seq_qlen=None, int[]? actual_seq_kvlen=None, int sparse_mode=0, bool gen_mask_parallel=True, "
      "bool "
      "sync=False) -> (Tensor, Tensor, Tensor, Tensor, int, int, int)",
      [](Ctx& c) -> Outs { return fusion_attention(c); });
  def(reg, {"NPU.npu_swiglu"}, "npu_swiglu(Tensor input, int dim=-1) -> Tensor",
      [](Ctx& c) -> Outs { return {swiglu(c)}; });
  def(reg, {"NPU.npu_rotary_mul"},
      "npu_rotary_mul(Tensor input, Tensor r1, Tensor r2, str rotary_mode='half') -> Tensor",
      [](Ctx& c) -> Outs { return {rotary_mul(c)}; });
}

}  // namespace probe::runners
