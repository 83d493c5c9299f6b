// Joining, splitting and repeating (float64 reference): cat/stack and the h/v/d/column stacks, atleast_nd,
// split/chunk/unbind/tensor_split, repeat/tile/repeat_interleave, kron and diff. The kernels take Vars and
// plain values; the registrations at the end only bind arguments and call them.
#include <fmt/format.h>

#include <algorithm>

#include "probe/error.h"
#include "runners/Ops.h"
#include "runners/RunnerKit.h"

namespace probe::runners {

namespace {

Var stack(const std::vector<Var>& xs, std::int64_t dim) {
  if (xs.empty()) invalid("stack expects a non-empty TensorList");
  std::vector<Var> u;
  for (const Var& v : xs) {
    if (v.shape() != xs.front().shape())
      invalid(fmt::format("stack expects each tensor to be equal size, but got {} and {}",
                          shape_to_string(xs.front().shape()), shape_to_string(v.shape())));
    u.push_back(ops::unsqueeze(v, dim));
  }
  return cat(u, wrap_dim(dim, xs.front().ndim() + 1));
}

// atleast_{1,2,3}d of one tensor: torch's placement of the new size-1 dims.
Var atleast(const Var& x, int n) {
  if (x.ndim() >= n) return x;
  if (x.ndim() == 0) return reshape(x, Shape(static_cast<std::size_t>(n), 1));
  if (n == 2 || x.ndim() == 2) {  // [a] -> [1, a] -> (3-d) [1, a, 1]; [a, b] -> [a, b, 1]
    Var r = x.ndim() == 1 ? reshape(x, {1, x.shape()[0]}) : x;
    return n == 2 ? r : reshape(r, {r.shape()[0], r.shape()[1], 1});
  }
  return reshape(x, {1, x.shape()[0], 1});  // 1-d to 3-d
}

std::vector<Var> atleast_all(const std::vector<Var>& xs, int n) {
  std::vector<Var> r;
  for (const Var& x : xs) r.push_back(atleast(x, n));
  return r;
}

// torch.atleast_nd(t) gives a tensor; atleast_nd(t1, t2, ...) or atleast_nd([t]) gives a tuple.
Outs atleast_call(const std::vector<Var>& xs, const Value& tensors, int n) {
  std::vector<Var> r = atleast_all(xs, n);
  if (r.size() == 1 && tensors.is_list() && tensors.list().size() == 1 && tensors.list()[0].is_tensor())
    return {r[0]};
  return spread(std::move(r));
}

Var hstack(const std::vector<Var>& tensors) {
  std::vector<Var> xs = atleast_all(tensors, 1);
  if (xs.empty()) invalid("hstack expects a non-empty TensorList");
  return cat(xs, xs[0].ndim() == 1 ? 0 : 1);
}

Var column_stack(const std::vector<Var>& tensors) {
  std::vector<Var> xs;
  for (const Var& x : tensors) xs.push_back(x.ndim() <= 1 ? reshape(x, {x.numel(), 1}) : x);
  return cat(xs, 1);
}

std::vector<Var> split_sizes(const Var& x, const std::vector<std::int64_t>& sizes, std::int64_t dim) {
  const int d = wrap_dim(dim, x.ndim());
  std::vector<Var> out;
  std::int64_t start = 0;
  for (auto n : sizes) {
    out.push_back(slice(x, d, start, start + n, 1));
    start += n;
  }
  if (start != x.shape()[static_cast<std::size_t>(d)])
    invalid(fmt::format("split_with_sizes expects split_sizes to sum exactly to {}",
                        x.shape()[static_cast<std::size_t>(d)]));
  return out;
}

std::vector<Var> split(const Var& x, const Value& how, std::int64_t dim) {
  if (how.is_list()) return split_sizes(x, how.as_int_list(), dim);
  const std::int64_t step = how.as_int();
  if (step <= 0 && x.size(static_cast<int>(dim)) > 0) invalid("split_size must be positive");
  const std::int64_t len = x.size(static_cast<int>(dim));
  std::vector<std::int64_t> sizes;
  for (std::int64_t s = 0; s < len; s += step) sizes.push_back(std::min(step, len - s));
  if (sizes.empty()) sizes.push_back(0);
  return split_sizes(x, sizes, dim);
}

std::vector<Var> chunk(const Var& x, std::int64_t chunks, std::int64_t dim) {
  if (chunks <= 0) invalid("chunk expects `chunks` to be greater than 0");
  const std::int64_t len = x.size(static_cast<int>(dim));
  const std::int64_t step = (len + chunks - 1) / chunks;
  if (step == 0)
    return split_sizes(
        x, std::vector<std::int64_t>(static_cast<std::size_t>(std::min<std::int64_t>(chunks, 1)), 0), dim);
  return split(x, Value(step), dim);
}

std::vector<Var> unbind(const Var& x, std::int64_t dim) {
  const int d = wrap_dim(dim, x.ndim());
  std::vector<Var> o;
  for (std::int64_t i = 0; i < x.shape()[static_cast<std::size_t>(d)]; ++i)
    o.push_back(ops::squeeze(index_select(x, d, {i}), d));
  return o;
}

// tensor_split: `how` is a number of sections (int) or a list of split indices.
std::vector<Var> tensor_split(const Var& x, const Value& how, std::int64_t dim) {
  if (x.ndim() == 0)
    invalid("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  const int d = wrap_dim(dim, x.ndim());
  const std::int64_t n = x.shape()[static_cast<std::size_t>(d)];
  std::vector<Var> out;
  if (how.is_list() || how.is_tensor()) {
    std::vector<std::int64_t> idx;
    if (how.is_tensor())
      for (double v : how.tensor().to_doubles()) idx.push_back(static_cast<std::int64_t>(v));
    else
      idx = how.as_int_list();
    // each piece is input[idx[k-1]:idx[k]] with Python slice semantics (negatives wrap, ends clamp)
    auto norm = [n](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + n : v, 0, n); };
    for (std::size_t k = 0; k <= idx.size(); ++k) {
      const std::int64_t a = k == 0 ? 0 : norm(idx[k - 1]), b = k < idx.size() ? norm(idx[k]) : n;
      out.push_back(slice(x, d, a, std::max(a, b), 1));
    }
    return out;
  }
  const auto sections = static_cast<std::int64_t>(how.as_double());
  if (sections <= 0) invalid(fmt::format("number of sections must be larger than 0, got {}", sections));
  const std::int64_t base = n / sections, extra = n % sections;
  std::int64_t start = 0;
  for (std::int64_t k = 0; k < sections; ++k) {
    const std::int64_t len = base + (k < extra ? 1 : 0);
    out.push_back(slice(x, d, start, start + len, 1));
    start += len;
  }
  return out;
}

// hsplit / vsplit / dsplit: tensor_split along dim 1 / 0 / 2 (hsplit of a 1-d tensor: dim 0), where a
// number of sections must divide the dim.
std::vector<Var> directional_split(const std::string& fn, int dim, const Var& x, const Value& how) {
  const int need = fn == "dsplit" ? 3 : fn == "vsplit" ? 2 : 1;
  if (x.ndim() < need)
    invalid(fmt::format(
        "torch.{} requires a tensor with at least {} dimension, but got a tensor with {} dimensions!", fn,
        need, x.ndim()));
  const int d = fn == "hsplit" && x.ndim() == 1 ? 0 : dim;
  if (!how.is_list() && !how.is_tensor()) {
    const auto n = static_cast<std::int64_t>(how.as_double());
    if (n <= 0 || x.shape()[static_cast<std::size_t>(d)] % n != 0)
      invalid(fmt::format(
          "torch.{} attempted to split along dimension {}, but the size of the dimension {} is not "
          "divisible by the split_size {}!",
          fn, d, x.shape()[static_cast<std::size_t>(d)], n));
  }
  return tensor_split(x, how, d);
}

Var repeat(const Var& x, std::vector<std::int64_t> reps) {
  if (reps.size() < static_cast<std::size_t>(x.ndim()))
    invalid("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  Shape xs = x.shape();
  xs.insert(xs.begin(), reps.size() - xs.size(), 1);
  Shape out(reps.size());
  for (std::size_t i = 0; i < reps.size(); ++i) {
    if (reps[i] < 0) invalid("Trying to create tensor with negative dimension");
    out[i] = xs[i] * reps[i];
  }
  const auto st = contiguous_strides(xs);
  std::vector<std::int64_t> idx(static_cast<std::size_t>(checked_numel(out)));
  std::vector<std::int64_t> pos(out.size(), 0);
  for (auto& v : idx) {
    std::int64_t off = 0;
    for (std::size_t d = 0; d < out.size(); ++d) off += (pos[d] % xs[d]) * st[d];
    v = off;
    for (std::size_t d = out.size(); d-- > 0;) {
      if (++pos[d] < out[d]) break;
      pos[d] = 0;
    }
  }
  return take(x, std::move(idx), out);
}

// tile: repeat with `dims` padded by leading 1s to the input's rank.
Var tile(const Var& x, std::vector<std::int64_t> reps) {
  if (reps.size() < static_cast<std::size_t>(x.ndim())) reps.insert(reps.begin(), x.ndim() - reps.size(), 1);
  return repeat(x, reps);
}

Var repeat_interleave(Var x, const Var& repeats, std::optional<std::int64_t> dim) {
  if (!dim) x = reshape(x, {x.numel()});
  const int d = !dim ? 0 : wrap_dim(*dim, x.ndim());
  const std::int64_t len = x.ndim() ? x.shape()[static_cast<std::size_t>(d)] : 1;
  if (repeats.numel() != 1 && repeats.numel() != len)
    invalid("repeats must have the same size as input along dim, or be a single value");
  std::vector<std::int64_t> sel;
  for (std::int64_t i = 0; i < len; ++i) {
    const double n = repeats.data()[static_cast<std::size_t>(repeats.numel() == 1 ? 0 : i)];
    if (n < 0) invalid("repeats can not be negative");
    if (static_cast<double>(sel.size()) + n > static_cast<double>(kMaxElements))
      checked_numel({kMaxElements + 1});
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(n); ++k) sel.push_back(i);
  }
  return index_select(x, d, sel);
}

Var kron(const Var& a, const Var& b) {
  const int nd = std::max(a.ndim(), b.ndim());
  auto pad = [nd](const Var& v) {
    Shape s(static_cast<std::size_t>(nd - v.ndim()), 1);
    s.insert(s.end(), v.shape().begin(), v.shape().end());
    return reshape(v, s);
  };
  Var pa = pad(a), pb = pad(b);
  // a[i] * b[j] laid out as [a0, b0, a1, b1, ...] then merged pairwise
  Shape sa, sb, out;
  for (int k = 0; k < nd; ++k) {
    const auto ak = pa.shape()[static_cast<std::size_t>(k)], bk = pb.shape()[static_cast<std::size_t>(k)];
    sa.insert(sa.end(), {ak, 1});
    sb.insert(sb.end(), {1, bk});
    out.push_back(ak * bk);
  }
  return reshape(ops::mul(reshape(pa, sa), reshape(pb, sb)), out);
}

Var diff(Var x, std::int64_t n, std::int64_t dim, const std::optional<Var>& prepend,
         const std::optional<Var>& append) {
  if (x.ndim() == 0) invalid("diff expects input to be at least one-dimensional");
  const int d = wrap_dim(dim, x.ndim());
  std::vector<Var> parts;
  if (prepend) parts.push_back(*prepend);
  parts.push_back(x);
  if (append) parts.push_back(*append);
  if (parts.size() > 1) x = cat(parts, d);
  if (n < 0) invalid(fmt::format("order must be non-negative but got {}", n));
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t len = x.shape()[static_cast<std::size_t>(d)];
    if (len == 0) break;
    Var hi = slice(x, d, 1, len, 1), lo = slice(x, d, 0, len - 1, 1);
    x = x.dtype() == DType::Bool
            ? zip_nograd(hi, lo, DType::Bool, [](double a, double b) { return a != b ? 1.0 : 0.0; })
            : ops::sub(hi, lo);
  }
  return x;
}

}  // namespace

void register_joining_runners(RunnerRegistry& reg) {
  def(reg, names("cat", kTorch | kMint | kMsOps, {"Torch.concat", "Torch.concatenate", "ms:Mint.concat"}),
      "cat(Tensor[] tensors, int dim=0, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {cat(c.ts("tensors"), c.i("dim"))}; });
  def(reg, names("stack", kTorch | kMint | kMsOps),
      "stack(Tensor[] tensors, int dim=0, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {stack(c.ts("tensors"), c.i("dim"))}; });
  def(reg, names("repeat", kTensor | kMsTensor), "repeat(Tensor input, int... repeats) -> Tensor",
      [](Ctx& c) -> Outs { return {repeat(c.t("input"), c.ints("repeats"))}; });
  def(reg, names("tile", kTorch | kTensor | kMint | kMsOps), "tile(Tensor input, int[] dims) -> Tensor",
      [](Ctx& c) -> Outs { return {tile(c.t("input"), c.ints("dims"))}; });
  def(reg, names("repeat_interleave", kTorch | kTensor | kMint | kMsOps),
      "repeat_interleave(Tensor input, Tensor repeats, int? dim=None, *, int? output_size=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const std::optional<std::int64_t> dim = c.opt_i("dim");
        return {repeat_interleave(x, c.t("repeats"), dim)};
      });
  def(reg, names("split", kTorch | kTensor | kMint | kMsOps, {"Torch.unsafe_split", "Tensor.unsafe_split"}),
      "split(Tensor input, Any split_size_or_sections, int dim=0) -> Tensor[]",
      [](Ctx& c) -> Outs { return spread(split(c.t("input"), c["split_size_or_sections"], c.i("dim"))); });
  def(reg,
      names("split_with_sizes", kTorch | kTensor,
            {"Torch.unsafe_split_with_sizes", "Tensor.unsafe_split_with_sizes"}),
      "split_with_sizes(Tensor input, int[] split_sizes, int dim=0) -> Tensor[]",
      [](Ctx& c) -> Outs { return spread(split_sizes(c.t("input"), c.ints("split_sizes"), c.i("dim"))); });
  def(reg, names("chunk", kTorch | kTensor | kMint | kMsOps, {"Torch.unsafe_chunk", "Tensor.unsafe_chunk"}),
      "chunk(Tensor input, int chunks, int dim=0) -> Tensor[]",
      [](Ctx& c) -> Outs { return spread(chunk(c.t("input"), c.i("chunks"), c.i("dim"))); });
  def(reg, names("unbind", kTorch | kTensor | kMint), "unbind(Tensor input, int dim=0) -> Tensor[]",
      [](Ctx& c) -> Outs { return spread(unbind(c.t("input"), c.i("dim"))); });
  for (int n = 1; n <= 3; ++n)
    def(reg, names("atleast_" + std::to_string(n) + "d", kTorch),
        "atleast_" + std::to_string(n) + "d(Tensor... tensors) -> Tensor",
        [n](Ctx& c) -> Outs { return atleast_call(c.ts("tensors"), c["tensors"], n); });
  def(reg, names("vstack", kTorch, {"Torch.row_stack"}),
      "vstack(Tensor[] tensors, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {cat(atleast_all(c.ts("tensors"), 2), 0)}; });
  def(reg, names("hstack", kTorch), "hstack(Tensor[] tensors, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {hstack(c.ts("tensors"))}; });
  def(reg, names("dstack", kTorch), "dstack(Tensor[] tensors, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {cat(atleast_all(c.ts("tensors"), 3), 2)}; });
  def(reg, names("column_stack", kTorch), "column_stack(Tensor[] tensors, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {column_stack(c.ts("tensors"))}; });
  def(reg, names("tensor_split", kTorch | kTensor),
      "tensor_split(Tensor input, Any indices_or_sections, int dim=0) -> Tensor[]", [](Ctx& c) -> Outs {
        return spread(tensor_split(c.t("input"), c["indices_or_sections"], c.i("dim")));
      });
  const std::pair<const char*, int> splits[] = {{"hsplit", 1}, {"vsplit", 0}, {"dsplit", 2}};
  for (const auto& [fn, dim] : splits)
    def(reg, names(fn, kTorch | kTensor),
        std::string(fn) + "(Tensor input, Any indices_or_sections) -> Tensor[]",
        [fn = std::string(fn), dim = dim](Ctx& c) -> Outs {
          Var x = c.t("input");
          return spread(directional_split(fn, dim, x, c["indices_or_sections"]));
        });
  def(reg, names("diff", kTorch | kTensor),
      "diff(Tensor input, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        std::optional<Var> prepend = c.opt_t("prepend"), append = c.opt_t("append");
        return {diff(x, c.i("n"), c.i("dim"), prepend, append)};
      });
  def(reg, names("kron", kTorch | kTensor), "kron(Tensor input, Tensor other, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var a = c.t("input"), b = c.t("other");
        return {kron(a, b)};
      });
}

}  // namespace probe::runners
