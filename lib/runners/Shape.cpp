// Views and reshapes (float64 reference): reshape/view/flatten/squeeze, transposes and permutations,
// expand/broadcast, narrowing (slice, select, diagonal) and the pixel/channel shuffles. The kernels take
// Vars and plain values; the registrations at the end only bind arguments and call them.
#include <fmt/format.h>

#include <algorithm>

#include "probe/error.h"
#include "runners/Ops.h"
#include "runners/RunnerKit.h"

namespace probe::runners {

namespace {

Var flatten(const Var& x, std::int64_t start, std::int64_t end) {
  if (x.ndim() == 0) return reshape(x, {1});
  const int s = wrap_dim(start, x.ndim()), e = wrap_dim(end, x.ndim());
  if (s > e) invalid("flatten() has invalid args: start_dim cannot come after end_dim");
  Shape out;
  std::int64_t m = 1;
  for (int i = 0; i < x.ndim(); ++i) {
    const std::int64_t d = x.shape()[static_cast<std::size_t>(i)];
    if (i < s || i > e)
      out.push_back(d);
    else {
      m *= d;
      if (i == e) out.push_back(m);
    }
  }
  return reshape(x, out);
}

Var unflatten(const Var& x, std::int64_t dim, const std::vector<std::int64_t>& sizes) {
  const int d = wrap_dim(dim, x.ndim());
  Shape s(x.shape().begin(), x.shape().begin() + d);
  for (auto v : sizes) s.push_back(v);
  s.insert(s.end(), x.shape().begin() + d + 1, x.shape().end());
  return reshape(x, s);
}

// Tensor.view(*shape) / view(shape-list); view(dtype) reinterprets bits, which a float64 reference cannot.
Var view(const Var& x, const Value& size) {
  if (size.list().size() == 1 &&
      (size.list()[0].kind() == Value::Kind::DType || size.list()[0].kind() == Value::Kind::String))
    throw Error(ErrorKind::Unsupported, "Tensor.view(dtype) reinterprets bits and is not supported");
  std::vector<std::int64_t> shape;
  for (const Value& v : size.list())
    if (v.is_list()) {
      for (const Value& w : v.list()) shape.push_back(w.as_int());
    } else {
      shape.push_back(v.as_int());
    }
  return reshape(x, shape);
}

Var squeeze_dims(const Var& x, const Value& dims) {
  Shape s;
  std::vector<bool> drop(static_cast<std::size_t>(x.ndim()), dims.is_none());
  if (!dims.is_none())
    for (auto d : dims.as_int_list()) {
      if (x.ndim() == 0) {
        wrap_dim(d, 0);
        continue;
      }
      drop[static_cast<std::size_t>(wrap_dim(d, x.ndim()))] = true;
    }
  for (int i = 0; i < x.ndim(); ++i) {
    const auto iu = static_cast<std::size_t>(i);
    if (!(drop[iu] && x.shape()[iu] == 1)) s.push_back(x.shape()[iu]);
  }
  return reshape(x, s);
}

Var matrix_t(const Var& x) {
  if (x.ndim() > 2)
    invalid(fmt::format("t() expects a tensor with <= 2 dimensions, but self is {}D", x.ndim()));
  return x.ndim() < 2 ? x : transpose(x, 0, 1);
}

Var movedim(const Var& x, const std::vector<std::int64_t>& src, const std::vector<std::int64_t>& dst) {
  if (src.size() != dst.size())
    invalid(
        fmt::format("movedim: Invalid source or destination dims: source ({} dims) should contain the "
                    "same number of dims as destination ({} dims)",
                    src.size(), dst.size()));
  const auto n = static_cast<std::size_t>(x.ndim());
  std::vector<std::int64_t> perm(n, -1);
  std::vector<bool> used(n, false);
  for (std::size_t k = 0; k < src.size(); ++k) {
    const auto s0 = static_cast<std::size_t>(wrap_dim(src[k], x.ndim()));
    const auto d0 = static_cast<std::size_t>(wrap_dim(dst[k], x.ndim()));
    if (used[s0] || perm[d0] != -1) invalid("movedim: repeated dim in source or destination");
    perm[d0] = static_cast<std::int64_t>(s0);
    used[s0] = true;
  }
  std::size_t next = 0;
  for (std::size_t d = 0; d < n; ++d) {
    if (perm[d] != -1) continue;
    while (used[next]) ++next;
    perm[d] = static_cast<std::int64_t>(next);
    used[next] = true;
  }
  return permute(x, perm);
}

Var broadcast_to(const Var& x, const std::vector<std::int64_t>& size) { return expand(x, size); }

std::vector<Var> broadcast_tensors(const std::vector<Var>& xs) {
  Shape s;
  for (const Var& x : xs) s = broadcast_shapes(s, x.shape());
  std::vector<Var> out;
  for (const Var& x : xs) out.push_back(expand(x, s));
  return out;
}

// narrow / narrow_copy: `length` elements from `start` (which may be negative) along `dim`.
Var narrow(const Var& x, std::int64_t dim, std::int64_t start, std::int64_t length) {
  const int d = wrap_dim(dim, x.ndim());
  const std::int64_t len = x.shape()[static_cast<std::size_t>(d)];
  if (start < -len || start > len) invalid("start out of range");
  if (start < 0) start += len;
  if (length < 0 || start + length > len)
    invalid(fmt::format("start ({}) + length ({}) exceeds dimension size ({}).", start, length, len));
  return slice(x, d, start, start + length, 1);
}

// aten::slice: Python slice bounds (negatives wrap, ends clamp), positive step.
Var aten_slice(const Var& x, std::int64_t dim, std::optional<std::int64_t> start,
               std::optional<std::int64_t> end, std::int64_t step) {
  const int d = wrap_dim(dim, x.ndim());
  const std::int64_t n = x.shape()[static_cast<std::size_t>(d)];
  if (step <= 0) invalid("slice step must be positive");
  auto norm = [n](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + n : v, 0, n); };
  const std::int64_t a = start ? norm(*start) : 0;
  const std::int64_t b = end ? norm(*end) : n;
  return slice(x, d, a, std::max(a, b), step);
}

Var select(const Var& x, std::int64_t dim, std::int64_t index) {
  if (x.ndim() == 0) invalid("select() cannot be applied to a 0-dim tensor.");
  const int d = wrap_dim(dim, x.ndim());
  const std::int64_t n = x.shape()[static_cast<std::size_t>(d)];
  std::int64_t k = index;
  if (k < -n || k >= n)
    invalid(fmt::format("select(): index {} out of range for tensor of size {} at dimension {}", k,
                        shape_to_string(x.shape()), d));
  if (k < 0) k += n;
  return ops::squeeze(index_select(x, d, {k}), d);
}

Var diagonal(const Var& x, std::int64_t offset, std::int64_t dim1, std::int64_t dim2) {
  const int d1 = wrap_dim(dim1, x.ndim()), d2 = wrap_dim(dim2, x.ndim());
  if (d1 == d2) invalid("diagonal dimensions cannot be identical");
  const std::int64_t off = offset;
  const std::int64_t n1 = x.shape()[static_cast<std::size_t>(d1)],
                     n2 = x.shape()[static_cast<std::size_t>(d2)];
  const std::int64_t len =
      std::max<std::int64_t>(0, off >= 0 ? std::min(n1, n2 - off) : std::min(n1 + off, n2));
  const auto st = contiguous_strides(x.shape());
  Shape out;
  std::vector<int> rest;
  for (int d = 0; d < x.ndim(); ++d)
    if (d != d1 && d != d2) {
      rest.push_back(d);
      out.push_back(x.shape()[static_cast<std::size_t>(d)]);
    }
  out.push_back(len);
  const std::int64_t total = checked_numel(out);
  std::vector<std::int64_t> idx(static_cast<std::size_t>(total));
  const std::int64_t base =
      off >= 0 ? off * st[static_cast<std::size_t>(d2)] : -off * st[static_cast<std::size_t>(d1)];
  const std::int64_t step = st[static_cast<std::size_t>(d1)] + st[static_cast<std::size_t>(d2)];
  std::vector<std::int64_t> pos(rest.size(), 0);
  for (std::int64_t k = 0; k < total; ++k) {
    const std::int64_t j = len ? k % len : 0;
    std::int64_t o = base + j * step;
    for (std::size_t r = 0; r < rest.size(); ++r) o += pos[r] * st[static_cast<std::size_t>(rest[r])];
    idx[static_cast<std::size_t>(k)] = o;
    if (j + 1 == len)
      for (std::size_t r = rest.size(); r-- > 0;) {
        if (++pos[r] < x.shape()[static_cast<std::size_t>(rest[r])]) break;
        pos[r] = 0;
      }
  }
  return take(x, std::move(idx), out);
}

// pixel_shuffle (r > 0) / pixel_unshuffle (r < 0) over the last three dims [C, H, W].
Var pixel_shuffle(const Var& x, std::int64_t r, bool unshuffle) {
  if (x.ndim() < 3)
    invalid(
        fmt::format("pixel_{}shuffle expects input to have at least 3 dimensions, but got input with {} "
                    "dimension(s)",
                    unshuffle ? "un" : "", x.ndim()));
  if (r <= 0) invalid("pixel_shuffle expects a positive factor");
  const auto nd = static_cast<std::size_t>(x.ndim());
  Shape batch(x.shape().begin(), x.shape().end() - 3);
  const std::int64_t C = x.shape()[nd - 3], H = x.shape()[nd - 2], W = x.shape()[nd - 1];
  std::vector<std::int64_t> perm;
  for (std::size_t k = 0; k < batch.size(); ++k) perm.push_back(static_cast<std::int64_t>(k));
  const auto b = static_cast<std::int64_t>(batch.size());
  Shape s = batch, out = batch;
  if (!unshuffle) {
    if (C % (r * r) != 0)
      invalid(
          "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
          "square of upscale_factor");
    s.insert(s.end(), {C / (r * r), r, r, H, W});
    perm.insert(perm.end(), {b, b + 3, b + 1, b + 4, b + 2});
    out.insert(out.end(), {C / (r * r), H * r, W * r});
  } else {
    if (H % r != 0 || W % r != 0)
      invalid("pixel_unshuffle expects height and width to be divisible by downscale_factor");
    s.insert(s.end(), {C, H / r, r, W / r, r});
    perm.insert(perm.end(), {b, b + 2, b + 4, b + 1, b + 3});
    out.insert(out.end(), {C * r * r, H / r, W / r});
  }
  return reshape(permute(reshape(x, s), perm), out);
}

Var channel_shuffle(const Var& x, std::int64_t groups) {
  if (x.ndim() < 3) invalid("channel_shuffle expects input to have at least 3 dimensions");
  if (groups <= 0)
    invalid(
        fmt::format("Number of groups to divide channels in must be positive. Value of groups:{}", groups));
  const std::int64_t C = x.shape()[1];
  if (C % groups != 0) invalid("Number of channels must be divisible by groups.");
  Shape s{x.shape()[0], groups, C / groups};
  s.insert(s.end(), x.shape().begin() + 2, x.shape().end());
  return reshape(transpose(reshape(x, s), 1, 2), x.shape());
}

Var confusion_transpose(const Var& x, const std::vector<std::int64_t>& perm,
                        const std::vector<std::int64_t>& shape, bool transpose_first) {
  if (transpose_first) return reshape(permute(x, perm), Shape(shape.begin(), shape.end()));
  return permute(reshape(x, Shape(shape.begin(), shape.end())), perm);
}

}  // namespace

void register_view_runners(RunnerRegistry& reg) {
  def(reg, names("reshape", kTorch | kTensor | kMint | kMsOps | kMsTensor),
      "reshape(Tensor input, int... shape) -> Tensor",
      [](Ctx& c) -> Outs { return {reshape(c.t("input"), c.ints("shape"))}; });
  def(reg, names("view", kTensor | kMsTensor, {"Aten.view.default"}),
      "view(Tensor input, Any... size) -> Tensor",
      [](Ctx& c) -> Outs { return {view(c.t("input"), c["size"])}; });
  def(reg, names("flatten", kTorch | kTensor | kMint | kMsOps),
      "flatten(Tensor input, int start_dim=0, int end_dim=-1) -> Tensor",
      [](Ctx& c) -> Outs { return {flatten(c.t("input"), c.i("start_dim"), c.i("end_dim"))}; });
  def(reg, names("squeeze", kTorch | kTensor | kInplace | kMint | kMsOps),
      "squeeze(Tensor input, Any dim=None) -> Tensor",
      [](Ctx& c) -> Outs { return {squeeze_dims(c.t("input"), c["dim"])}; });
  def(reg, names("unsqueeze", kTorch | kTensor | kInplace | kMint | kMsOps),
      "unsqueeze(Tensor input, int dim) -> Tensor",
      [](Ctx& c) -> Outs { return {ops::unsqueeze(c.t("input"), c.i("dim"))}; });
  def(reg,
      names("transpose", kTorch | kTensor | kInplace | kMint,
            {"Torch.swapaxes", "Tensor.swapaxes", "Torch.swapdims", "Tensor.swapdims"}),
      "transpose(Tensor input, int dim0, int dim1) -> Tensor",
      [](Ctx& c) -> Outs { return {transpose(c.t("input"), c.i("dim0"), c.i("dim1"))}; });
  def(reg, names("permute", kTorch | kTensor | kMint | kMsOps | kMsTensor),
      "permute(Tensor input, int... dims) -> Tensor",
      [](Ctx& c) -> Outs { return {permute(c.t("input"), c.ints("dims"))}; });
  def(reg, names("t", kTorch | kTensor | kInplace | kMint), "t(Tensor input) -> Tensor",
      [](Ctx& c) -> Outs { return {matrix_t(c.t("input"))}; });
  def(reg, names("contiguous", kTensor | kMsTensor),
      "contiguous(Tensor input, Any memory_format=None) -> Tensor",
      [](Ctx& c) -> Outs { return {c.t("input")}; });
  def(reg, names("expand", kTensor | kMsTensor), "expand(Tensor input, int... size) -> Tensor",
      [](Ctx& c) -> Outs { return {expand(c.t("input"), c.ints("size"))}; });
  def(reg, names("expand_as", kTensor | kMsTensor), "expand_as(Tensor input, Tensor other) -> Tensor",
      [](Ctx& c) -> Outs { return {expand(c.t("input"), c.t("other").shape())}; });
  def(reg, names("broadcast_to", kTorch | kTensor | kMint | kMsOps),
      "broadcast_to(Tensor input, int[] size) -> Tensor",
      [](Ctx& c) -> Outs { return {broadcast_to(c.t("input"), c.ints("size"))}; });
  def(reg, names("narrow", kTorch | kTensor | kMint | kMsOps),
      "narrow(Tensor input, int dim, Tensor start, int length) -> Tensor", [](Ctx& c) -> Outs {
        return {narrow(c.t("input"), c.i("dim"), static_cast<std::int64_t>(c.f("start")), c.i("length"))};
      });
  def(reg, {"Aten.slice.Tensor"},
      "slice(Tensor input, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor",
      [](Ctx& c) -> Outs {
        return {aten_slice(c.t("input"), c.i("dim"), c.opt_i("start"), c.opt_i("end"), c.i("step"))};
      });
  def(reg, {"Aten._unsafe_view.default", "Aten._reshape_alias.default"},
      "_unsafe_view(Tensor input, int[] size, Any stride=None) -> Tensor",
      [](Ctx& c) -> Outs { return {reshape(c.t("input"), c.ints("size"))}; });
  def(reg, {"Torch.alias", "Aten.alias.default", "Aten.lift_fresh.default", "Aten.lift.default"},
      "alias(Tensor input) -> Tensor", [](Ctx& c) -> Outs { return {c.t("input")}; });
  def(reg, {"Aten.expand.default"}, "expand(Tensor input, int[] size, *, bool implicit=False) -> Tensor",
      [](Ctx& c) -> Outs { return {expand(c.t("input"), c.ints("size"))}; });
  def(reg, names("movedim", kTorch | kTensor, {"Torch.moveaxis", "Tensor.moveaxis"}),
      "movedim(Tensor input, int[1] source, int[1] destination) -> Tensor",
      [](Ctx& c) -> Outs { return {movedim(c.t("input"), c.ints("source"), c.ints("destination"))}; });
  def(reg, names("select", kTorch | kTensor), "select(Tensor input, int dim, int index) -> Tensor",
      [](Ctx& c) -> Outs { return {select(c.t("input"), c.i("dim"), c.i("index"))}; });
  def(reg, names("diagonal", kTorch | kTensor),
      "diagonal(Tensor input, int offset=0, int dim1=0, int dim2=1) -> Tensor",
      [](Ctx& c) -> Outs { return {diagonal(c.t("input"), c.i("offset"), c.i("dim1"), c.i("dim2"))}; });
  def(reg, names("view_as", kTensor), "view_as(Tensor input, Tensor other) -> Tensor",
      [](Ctx& c) -> Outs { return {reshape(c.t("input"), c.t("other").shape())}; });
  def(reg, names("reshape_as", kTensor), "reshape_as(Tensor input, Tensor other) -> Tensor",
      [](Ctx& c) -> Outs { return {reshape(c.t("input"), c.t("other").shape())}; });
  def(reg, names("broadcast_tensors", kTorch), "broadcast_tensors(Tensor... tensors) -> Tensor",
      [](Ctx& c) -> Outs { return spread(broadcast_tensors(c.ts("tensors"))); });
  for (const bool un : {false, true})
    def(reg, names(un ? "pixel_unshuffle" : "pixel_shuffle", kFunctional | kTorch),
        std::string(un ? "pixel_unshuffle(Tensor input, int downscale_factor)"
                       : "pixel_shuffle(Tensor input, int "
                         "upscale_factor)") +
            " -> Tensor",
        [un](Ctx& c) -> Outs {
          return {pixel_shuffle(c.t("input"), c.i(un ? "downscale_factor" : "upscale_factor"), un)};
        });
  def(reg, names("channel_shuffle", kFunctional | kTorch),
      "channel_shuffle(Tensor input, int groups) -> Tensor",
      [](Ctx& c) -> Outs { return {channel_shuffle(c.t("input"), c.i("groups"))}; });
  def(reg, {"NPU.npu_confusion_transpose"},
      "npu_confusion_transpose(Tensor input, int[] perm, int[] shape, bool transpose_first) -> Tensor",
      [](Ctx& c) -> Outs {
        return {confusion_transpose(c.t("input"), c.ints("perm"), c.ints("shape"), c.b("transpose_first"))};
      });
  def(
      reg, names("narrow_copy", kTorch | kTensor),
      "narrow_copy(Tensor input, int dim, int start, int length) -> Tensor",
      [](Ctx& c) -> Outs { return {narrow(c.t("input"), c.i("dim"), c.i("start"), c.i("length"))}; },
      false);  // torch 1.13: "derivative for aten::narrow_copy is not implemented"
  def(reg, names("ravel", kTorch | kTensor), "ravel(Tensor input) -> Tensor", [](Ctx& c) -> Outs {
    Var x = c.t("input");
    return {reshape(x, {x.numel()})};
  });
  def(reg, names("unflatten", kTorch | kTensor), "unflatten(Tensor input, int dim, int[] sizes) -> Tensor",
      [](Ctx& c) -> Outs { return {unflatten(c.t("input"), c.i("dim"), c.ints("sizes"))}; });
}

}  // namespace probe::runners
