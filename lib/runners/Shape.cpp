// Views, shape manipulation, joining/splitting, indexing and casts (float64 reference).
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "probe/error.h"
#include "runners/Ops.h"
#include "runners/RunnerKit.h"

namespace probe::runners {

namespace {

[[noreturn]] void invalid(const std::string& m) { throw Error(ErrorKind::InvalidArgument, m); }

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

// Flat offsets of every element of `shape` in a row-major tensor of that shape where coordinate `dim`
// is replaced by `index[i]` (gather/scatter/index_add addressing). `index` has the element order of `shape`.
std::vector<std::int64_t> along_dim_offsets(const Shape& target, const Shape& shape, int dim,
                                            const std::vector<double>& index) {
  const auto ts = contiguous_strides(target);
  const std::size_t n = shape.size();
  std::vector<std::int64_t> out(index.size());
  std::vector<std::int64_t> pos(n, 0);
  const std::int64_t len = target.empty() ? 1 : target[static_cast<std::size_t>(dim)];
  for (std::size_t i = 0; i < index.size(); ++i) {
    std::int64_t k = static_cast<std::int64_t>(index[i]);
    if (k < -len || k >= len)
      invalid(fmt::format("index {} is out of bounds for dimension {} with size {}", k, dim, len));
    if (k < 0) k += len;
    std::int64_t off = 0;
    for (std::size_t d = 0; d < n; ++d) off += (static_cast<int>(d) == dim ? k : pos[d]) * ts[d];
    out[i] = off;
    for (std::size_t d = n; d-- > 0;) {
      if (++pos[d] < shape[d]) break;
      pos[d] = 0;
    }
  }
  return out;
}

Var int_index(Ctx& c, const char* p) {
  Var i = c.t(p);
  if (is_floating(i.dtype()) || i.dtype() == DType::Bool)
    invalid(fmt::format("{}(): Expected dtype int64 for index", c.args.schema().name));
  return i;
}

void check_gather_shape(const Var& x, const Var& index, int d, bool scatter) {
  if (scatter && (x.ndim() == 0 || index.ndim() == 0))
    throw Error(ErrorKind::Unsupported, "scatter/index_add on 0-d tensors is not supported");
  if (index.ndim() != x.ndim() && !(index.ndim() <= 1 && x.ndim() <= 1))
    invalid("Index tensor must have the same number of dimensions as input tensor");
  for (int i = 0; i < index.ndim(); ++i)
    if (i != d && index.shape()[static_cast<std::size_t>(i)] > x.shape()[static_cast<std::size_t>(i)])
      invalid(fmt::format(
          "Size does not match at dimension {} expected index {} to be smaller than self {} apart "
          "from dimension {}",
          i, shape_to_string(index.shape()), shape_to_string(x.shape()), d));
  (void)scatter;
}

// src[i] for every position i of `shape` (src may be larger than shape in any dim, as in scatter).
Var take_prefix(const Var& src, const Shape& shape) {
  if (src.shape() == shape) return src;
  const auto ss = contiguous_strides(src.shape());
  std::vector<std::int64_t> idx(static_cast<std::size_t>(probe::numel(shape)));
  std::vector<std::int64_t> pos(shape.size(), 0);
  for (auto& v : idx) {
    std::int64_t off = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) off += pos[d] * ss[d];
    v = off;
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++pos[d] < shape[d]) break;
      pos[d] = 0;
    }
  }
  return take(src, std::move(idx), shape);
}

Var triangle(const Var& x, std::int64_t diagonal, bool lower) {
  if (x.ndim() < 2) invalid("tril/triu: input tensor must have at least 2 dimensions");
  const std::int64_t rows = x.size(-2), cols = x.size(-1);
  Buffer keep(static_cast<std::size_t>(x.numel()));
  for (std::size_t i = 0; i < keep.size(); ++i) {
    const std::int64_t r = (static_cast<std::int64_t>(i) / cols) % rows,
                       col = static_cast<std::int64_t>(i) % cols;
    keep[i] = (lower ? col - r <= diagonal : col - r >= diagonal) ? 1.0 : 0.0;
  }
  Var mask = make_leaf(x.shape(), std::move(keep), DType::Bool);
  return cast(where(mask, x, wrapped_scalar(0.0, is_floating(x.dtype()) ? DType::Float64 : DType::Int64)),
              x.dtype());
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

// ---- __getitem__ (basic + advanced indexing, numpy/torch rules) ----------------------------------
bool is_index_item_seq(const Value& v) {
  // A list is a tuple of indices if it contains slices, None, Ellipsis, tensors or lists; else an index list.
  for (const Value& it : v.list()) {
    const auto k = it.kind();
    if (k == Value::Kind::Slice || k == Value::Kind::None || k == Value::Kind::Ellipsis ||
        k == Value::Kind::Tensor || k == Value::Kind::List)
      return true;
  }
  return false;
}

std::vector<double> int_values(const Value& v) {
  std::vector<double> out;
  if (v.is_tensor()) return v.tensor().to_doubles();
  for (const Value& it : v.list()) out.push_back(static_cast<double>(it.as_int()));
  return out;
}

Var getitem(const Var& x0, const Value& index) {
  std::vector<Value> items;
  if (index.is_list() && is_index_item_seq(index))
    items = index.list();
  else
    items.push_back(index);
  // Expand bool tensors into one int index per dim they cover, count consumed dims.
  struct Adv {
    int dim;
    Shape shape;
    std::vector<double> values;
  };
  int consumed = 0;
  for (const Value& it : items) {
    if (it.is_tensor())
      consumed += it.tensor().dtype() == DType::Bool ? std::max(it.tensor().ndim(), 0) : 1;
    else if (it.kind() == Value::Kind::Bool)
      consumed += 0;
    else if (it.kind() != Value::Kind::None && it.kind() != Value::Kind::Ellipsis)
      consumed += 1;
  }
  if (consumed > x0.ndim()) invalid(fmt::format("too many indices for tensor of dimension {}", x0.ndim()));
  Var v = x0;
  int dim = 0;  // current dim in v
  bool seen_ellipsis = false;
  std::vector<Adv> adv;
  for (const Value& it : items) {
    switch (it.kind()) {
      case Value::Kind::Ellipsis:
        if (seen_ellipsis) invalid("an index can only have a single ellipsis ('...')");
        seen_ellipsis = true;
        dim += x0.ndim() - consumed;
        break;
      case Value::Kind::None:
        v = ops::unsqueeze(v, dim++);
        break;
      case Value::Kind::Bool: {  // x[True] adds a dim of 1, x[False] of 0
        v = ops::unsqueeze(v, dim);
        adv.push_back(
            {dim++, {it.as_bool() ? 1 : 0}, it.as_bool() ? std::vector<double>{0} : std::vector<double>{}});
        break;
      }
      case Value::Kind::Int: {
        const std::int64_t k = it.as_int(), len = v.shape()[static_cast<std::size_t>(dim)];
        if (k < -len || k >= len)
          invalid(fmt::format("index {} is out of bounds for dimension {} with size {}", k, dim, len));
        v = ops::squeeze(index_select(v, dim, {k}), dim);
        break;
      }
      case Value::Kind::Slice: {
        const Slice& sl = it.as_slice();
        const std::int64_t len = v.shape()[static_cast<std::size_t>(dim)];
        const std::int64_t step = sl.step.value_or(1);
        if (step <= 0) invalid("step must be greater than zero");
        v = slice(v, dim, sl.start.value_or(0), sl.stop.value_or(len), step);
        ++dim;
        break;
      }
      case Value::Kind::Tensor:
      case Value::Kind::List: {
        if (it.is_tensor() && it.tensor().dtype() == DType::Bool) {
          const Tensor& m = it.tensor();
          for (int k = 0; k < m.ndim(); ++k)
            if (m.shape()[static_cast<std::size_t>(k)] != v.shape()[static_cast<std::size_t>(dim + k)])
              invalid(fmt::format(
                  "The shape of the mask {} at index {} does not match the shape of the indexed tensor {}",
                  shape_to_string(m.shape()), k, shape_to_string(v.shape())));
          // nonzero(): one coordinate vector per mask dim
          std::vector<std::vector<double>> coords(static_cast<std::size_t>(m.ndim()));
          const auto ms = contiguous_strides(m.shape());
          for (std::int64_t i = 0; i < m.numel(); ++i)
            if (m.at(i) != 0)
              for (int k = 0; k < m.ndim(); ++k)
                coords[static_cast<std::size_t>(k)].push_back(static_cast<double>(
                    (i / ms[static_cast<std::size_t>(k)]) % m.shape()[static_cast<std::size_t>(k)]));
          const std::int64_t nnz = m.ndim() ? static_cast<std::int64_t>(coords[0].size()) : 0;
          for (int k = 0; k < m.ndim(); ++k)
            adv.push_back({dim + k, {nnz}, coords[static_cast<std::size_t>(k)]});
          if (m.ndim() == 0) {  // 0-d bool tensor behaves like a Python bool
            v = ops::unsqueeze(v, dim);
            adv.push_back(
                {dim, {m.at(0) != 0 ? 1 : 0}, m.at(0) != 0 ? std::vector<double>{0} : std::vector<double>{}});
            ++dim;
            break;
          }
          dim += m.ndim();
        } else {
          if (it.is_tensor() && is_floating(it.tensor().dtype()))
            invalid("tensors used as indices must be long, int, byte or bool tensors");
          Shape sh =
              it.is_tensor() ? it.tensor().shape() : Shape{static_cast<std::int64_t>(it.list().size())};
          adv.push_back({dim++, sh, int_values(it)});
        }
        break;
      }
      default:
        invalid(fmt::format("unsupported index {}", it.to_string()));
    }
  }
  if (adv.empty()) return v;
  // Advanced indexing on the result of basic indexing.
  Shape b;
  for (const Adv& a : adv) b = broadcast_shapes(b, a.shape);
  bool adjacent = true;
  for (std::size_t i = 1; i < adv.size(); ++i) adjacent = adjacent && adv[i].dim == adv[i - 1].dim + 1;
  std::vector<int> rest;
  for (int d = 0; d < v.ndim(); ++d)
    if (std::none_of(adv.begin(), adv.end(), [d](const Adv& a) { return a.dim == d; })) rest.push_back(d);
  const int insert_at = adjacent ? adv.front().dim : 0;
  // output dims: rest dims before insert_at, B dims, remaining rest dims
  Shape out;
  std::vector<int> out_src;  // >= 0: dim of v; -1 - j: B dim j
  std::size_t ri = 0;
  for (; ri < rest.size() && rest[ri] < insert_at; ++ri) {
    out.push_back(v.shape()[static_cast<std::size_t>(rest[ri])]);
    out_src.push_back(rest[ri]);
  }
  if (!adjacent) ri = 0, out.clear(), out_src.clear();
  for (std::size_t j = 0; j < b.size(); ++j) {
    out.push_back(b[j]);
    out_src.push_back(-1 - static_cast<int>(j));
  }
  for (; ri < rest.size(); ++ri) {
    out.push_back(v.shape()[static_cast<std::size_t>(rest[ri])]);
    out_src.push_back(rest[ri]);
  }
  // broadcast every index array to B
  std::vector<std::vector<double>> bidx;
  for (const Adv& a : adv) {
    Var iv = expand(make_leaf(a.shape, a.values, DType::Int64), b);
    bidx.push_back(iv.data());
  }
  const auto vs = contiguous_strides(v.shape());
  const auto bs = contiguous_strides(b);
  std::vector<std::int64_t> idx(static_cast<std::size_t>(probe::numel(out)));
  std::vector<std::int64_t> pos(out.size(), 0);
  for (auto& o : idx) {
    std::int64_t off = 0, bflat = 0;
    for (std::size_t k = 0; k < out.size(); ++k)
      if (out_src[k] >= 0)
        off += pos[k] * vs[static_cast<std::size_t>(out_src[k])];
      else
        bflat += pos[k] * bs[static_cast<std::size_t>(-1 - out_src[k])];
    for (std::size_t a = 0; a < adv.size(); ++a) {
      const std::int64_t len = v.shape()[static_cast<std::size_t>(adv[a].dim)];
      std::int64_t k = static_cast<std::int64_t>(bidx[a][static_cast<std::size_t>(bflat)]);
      if (k < -len || k >= len)
        invalid(fmt::format("index {} is out of bounds for dimension {} with size {}", k, adv[a].dim, len));
      if (k < 0) k += len;
      off += k * vs[static_cast<std::size_t>(adv[a].dim)];
    }
    o = off;
    for (std::size_t d = out.size(); d-- > 0;) {
      if (++pos[d] < out[d]) break;
      pos[d] = 0;
    }
  }
  return take(v, std::move(idx), out);
}

// The dtype a `Tensor.to(...)`-style call asks for: a dtype argument, or the dtype of a tensor argument.
std::optional<DType> requested_dtype(const Value& v) {
  if (v.kind() == Value::Kind::DType) return v.as_dtype();
  if (v.kind() == Value::Kind::String) return parse_dtype(v.as_string());
  if (v.is_tensor()) return v.tensor().dtype();
  return std::nullopt;
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

// A tuple result: one dump output per tensor.
Outs spread(std::vector<Var> xs) {
  Outs o;
  for (Var& v : xs) o.push_back(std::move(v));
  return o;
}

}  // namespace

void register_shape_runners(RunnerRegistry& reg) {
  def(reg, names("reshape", kTorch | kTensor | kMint | kMsOps | kMsTensor),
      "reshape(Tensor input, int... shape) -> Tensor",
      [](Ctx& c) -> Outs { return {reshape(c.t("input"), c.ints("shape"))}; });
  def(reg, names("view", kTensor | kMsTensor, {"Aten.view.default"}),
      "view(Tensor input, Any... size) -> Tensor", [](Ctx& c) -> Outs {
        const Value& s = c["size"];
        // view(dtype) reinterprets bits, which a float64 reference cannot express.
        if (s.list().size() == 1 &&
            (s.list()[0].kind() == Value::Kind::DType || s.list()[0].kind() == Value::Kind::String))
          throw Error(ErrorKind::Unsupported, "Tensor.view(dtype) reinterprets bits and is not supported");
        std::vector<std::int64_t> shape;
        for (const Value& v : s.list())
          if (v.is_list()) {
            for (const Value& w : v.list()) shape.push_back(w.as_int());
          } else {
            shape.push_back(v.as_int());
          }
        return {reshape(c.t("input"), shape)};
      });
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
  def(reg, names("t", kTorch | kTensor | kInplace | kMint), "t(Tensor input) -> Tensor", [](Ctx& c) -> Outs {
    Var x = c.t("input");
    if (x.ndim() > 2)
      invalid(fmt::format("t() expects a tensor with <= 2 dimensions, but self is {}D", x.ndim()));
    return {x.ndim() < 2 ? x : transpose(x, 0, 1)};
  });
  def(reg, names("contiguous", kTensor | kMsTensor),
      "contiguous(Tensor input, Any memory_format=None) -> Tensor",
      [](Ctx& c) -> Outs { return {c.t("input")}; });
  def(reg, names("cat", kTorch | kMint | kMsOps, {"Torch.concat", "Torch.concatenate", "ms:Mint.concat"}),
      "cat(Tensor[] tensors, int dim=0, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {cat(c.ts("tensors"), c.i("dim"))}; });
  def(reg, names("stack", kTorch | kMint | kMsOps),
      "stack(Tensor[] tensors, int dim=0, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {stack(c.ts("tensors"), c.i("dim"))}; });

  def(reg, names("expand", kTensor | kMsTensor), "expand(Tensor input, int... size) -> Tensor",
      [](Ctx& c) -> Outs { return {expand(c.t("input"), c.ints("size"))}; });
  def(reg, names("expand_as", kTensor | kMsTensor), "expand_as(Tensor input, Tensor other) -> Tensor",
      [](Ctx& c) -> Outs { return {expand(c.t("input"), c.t("other").shape())}; });
  def(reg, names("broadcast_to", kTorch | kTensor | kMint | kMsOps),
      "broadcast_to(Tensor input, int[] size) -> Tensor",
      [](Ctx& c) -> Outs { return {expand(c.t("input"), c.ints("size"))}; });
  def(reg, names("repeat", kTensor | kMsTensor), "repeat(Tensor input, int... repeats) -> Tensor",
      [](Ctx& c) -> Outs { return {repeat(c.t("input"), c.ints("repeats"))}; });
  def(reg, names("tile", kTorch | kTensor | kMint | kMsOps), "tile(Tensor input, int[] dims) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        auto reps = c.ints("dims");
        if (reps.size() < static_cast<std::size_t>(x.ndim()))
          reps.insert(reps.begin(), x.ndim() - reps.size(), 1);
        return {repeat(x, reps)};
      });
  def(reg, names("repeat_interleave", kTorch | kTensor | kMint | kMsOps),
      "repeat_interleave(Tensor input, Tensor repeats, int? dim=None, *, int? output_size=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        if (c.none("dim")) x = reshape(x, {x.numel()});
        const int d = c.none("dim") ? 0 : wrap_dim(c.i("dim"), x.ndim());
        const std::int64_t len = x.ndim() ? x.shape()[static_cast<std::size_t>(d)] : 1;
        Var r = c.t("repeats");
        if (r.numel() != 1 && r.numel() != len)
          invalid("repeats must have the same size as input along dim, or be a single value");
        std::vector<std::int64_t> sel;
        for (std::int64_t i = 0; i < len; ++i) {
          const double n = r.data()[static_cast<std::size_t>(r.numel() == 1 ? 0 : i)];
          if (n < 0) invalid("repeats can not be negative");
          if (static_cast<double>(sel.size()) + n > static_cast<double>(kMaxElements))
            checked_numel({kMaxElements + 1});
          for (std::int64_t k = 0; k < static_cast<std::int64_t>(n); ++k) sel.push_back(i);
        }
        return {index_select(x, d, sel)};
      });
  def(reg, names("split", kTorch | kTensor | kMint | kMsOps, {"Torch.unsafe_split", "Tensor.unsafe_split"}),
      "split(Tensor input, Any split_size_or_sections, int dim=0) -> Tensor[]", [](Ctx& c) -> Outs {
        Outs o;
        for (Var& v : split(c.t("input"), c["split_size_or_sections"], c.i("dim"))) o.push_back(v);
        return o;
      });
  def(reg,
      names("split_with_sizes", kTorch | kTensor,
            {"Torch.unsafe_split_with_sizes", "Tensor.unsafe_split_with_sizes"}),
      "split_with_sizes(Tensor input, int[] split_sizes, int dim=0) -> Tensor[]", [](Ctx& c) -> Outs {
        Outs o;
        for (Var& v : split_sizes(c.t("input"), c.ints("split_sizes"), c.i("dim"))) o.push_back(v);
        return o;
      });
  def(reg, names("chunk", kTorch | kTensor | kMint | kMsOps, {"Torch.unsafe_chunk", "Tensor.unsafe_chunk"}),
      "chunk(Tensor input, int chunks, int dim=0) -> Tensor[]", [](Ctx& c) -> Outs {
        Outs o;
        for (Var& v : chunk(c.t("input"), c.i("chunks"), c.i("dim"))) o.push_back(v);
        return o;
      });
  def(reg, names("unbind", kTorch | kTensor | kMint), "unbind(Tensor input, int dim=0) -> Tensor[]",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const int d = wrap_dim(c.i("dim"), x.ndim());
        Outs o;
        for (std::int64_t i = 0; i < x.shape()[static_cast<std::size_t>(d)]; ++i)
          o.push_back(ops::squeeze(index_select(x, d, {i}), d));
        return o;
      });
  def(reg, names("narrow", kTorch | kTensor | kMint | kMsOps),
      "narrow(Tensor input, int dim, Tensor start, int length) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const int d = wrap_dim(c.i("dim"), x.ndim());
        const std::int64_t len = x.shape()[static_cast<std::size_t>(d)];
        std::int64_t start = static_cast<std::int64_t>(c.f("start"));
        const std::int64_t n = c.i("length");
        if (start < -len || start > len) invalid("start out of range");
        if (start < 0) start += len;
        if (n < 0 || start + n > len)
          invalid(fmt::format("start ({}) + length ({}) exceeds dimension size ({}).", start, n, len));
        return {slice(x, d, start, start + n, 1)};
      });
  def(reg, {"Tensor.__getitem__", "ms:Tensor.__getitem__"}, "__getitem__(Tensor input, Any index) -> Tensor",
      [](Ctx& c) -> Outs { return {getitem(c.t("input"), c["index"])}; });
  def(reg, names("index_select", kTorch | kTensor | kMint | kMsOps),
      "index_select(Tensor input, int dim, Tensor index) -> Tensor", [](Ctx& c) -> Outs {
        Var i = int_index(c, "index");
        if (i.ndim() > 1) invalid("index_select(): Index is supposed to be a vector");
        std::vector<std::int64_t> sel;
        for (double v : i.data()) sel.push_back(static_cast<std::int64_t>(v));
        return {index_select(c.t("input"), c.i("dim"), sel)};
      });
  def(reg, names("gather", kTorch | kTensor | kMint),
      "gather(Tensor input, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input"), i = int_index(c, "index");
        const int d = x.ndim() == 0 ? 0 : wrap_dim(c.i("dim"), x.ndim());
        check_gather_shape(x, i, d, false);
        if (x.ndim() == 0 || i.ndim() == 0) {  // torch treats 0-d operands as 1-element vectors
          Var x1 = reshape(x, {x.numel()});
          return {reshape(take(x1, along_dim_offsets(x1.shape(), {i.numel()}, 0, i.data()), {i.numel()}),
                          i.shape())};
        }
        return {take(x, along_dim_offsets(x.shape(), i.shape(), d, i.data()), i.shape())};
      });
  auto scatter_fn = [](bool always_add) {
    return [always_add](Ctx& c) -> Outs {
      Var x = c.t("input"), i = int_index(c, "index");
      const int d = x.ndim() == 0 ? 0 : wrap_dim(c.i("dim"), x.ndim());
      check_gather_shape(x, i, d, true);
      bool add = always_add;
      if (!always_add && !c.none("reduce")) {
        if (c.s("reduce") != "add")
          throw Error(ErrorKind::Unsupported,
                      fmt::format("scatter reduce='{}' is not supported", c.s("reduce")));
        add = true;
      }
      const Value& sv = always_add ? c["src"] : (c.none("src") ? c["value"] : c["src"]);
      if (sv.is_none()) invalid("scatter() needs `src` or `value`");
      if (sv.is_tensor()) {
        const Tensor& st = sv.tensor();
        bool fits = st.ndim() == i.ndim();
        for (int k = 0; fits && k < i.ndim(); ++k)
          fits = i.shape()[static_cast<std::size_t>(k)] <= st.shape()[static_cast<std::size_t>(k)];
        if (!fits)
          invalid(fmt::format("Expected index {} to be smaller than src {} in every dimension",
                              shape_to_string(i.shape()), shape_to_string(st.shape())));
      }
      Var src =
          sv.is_tensor() ? take_prefix(c.t("src"), i.shape()) : full(i.shape(), sv.as_double(), x.dtype());
      return {put(x, along_dim_offsets(x.shape(), i.shape(), d, i.data()), cast(src, x.dtype()), add)};
    };
  };
  def(reg, names("scatter", kTorch | kTensor | kInplace | kMint, {"Aten.scatter.src", "Aten.scatter.value"}),
      "scatter(Tensor input, int dim, Tensor index, Tensor? src=None, *, Scalar? value=None, str? "
      "reduce=None) -> Tensor",
      scatter_fn(false));
  def(reg, names("scatter_add", kTorch | kTensor | kInplace | kMint),
      "scatter_add(Tensor input, int dim, Tensor index, Tensor src) -> Tensor", scatter_fn(true));
  def(reg, names("index_add", kTorch | kTensor | kInplace | kMint),
      "index_add(Tensor input, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input"), i = int_index(c, "index"), src = c.t("source");
        const int d = x.ndim() == 0 ? 0 : wrap_dim(c.i("dim"), x.ndim());
        if (i.ndim() > 1) invalid("index_add_(): Index is supposed to be a vector");
        if (x.ndim() == 0 || src.ndim() != x.ndim())
          throw Error(ErrorKind::Unsupported,
                      "index_add: source and input must have the same number (>= 1) of dims");
        for (int k = 0; k < x.ndim(); ++k)
          if (k != d && src.shape()[static_cast<std::size_t>(k)] != x.shape()[static_cast<std::size_t>(k)])
            invalid(fmt::format("index_add_(): source {} and input {} must match outside dim {}",
                                shape_to_string(src.shape()), shape_to_string(x.shape()), d));
        // per source element: its index along d comes from index[coord_d]
        std::vector<double> along(static_cast<std::size_t>(src.numel()));
        const auto ss = contiguous_strides(src.shape());
        const std::int64_t sl = src.ndim() ? src.shape()[static_cast<std::size_t>(d)] : 1;
        if (sl != i.numel()) invalid("index_add_(): Number of indices should be equal to source.size(dim)");
        for (std::size_t k = 0; k < along.size(); ++k) {
          const std::int64_t coord =
              src.ndim() ? (static_cast<std::int64_t>(k) / ss[static_cast<std::size_t>(d)]) % sl : 0;
          along[k] = i.data()[static_cast<std::size_t>(coord)];
        }
        const double alpha = c.f("alpha");
        Var scaled = alpha == 1 ? src : ops::mul(src, wrapped_scalar(alpha, DType::Float64));
        return {put(x, along_dim_offsets(x.shape(), src.shape(), d, along), cast(scaled, x.dtype()), true)};
      });
  def(reg, names("masked_select", kTorch | kTensor | kMint | kMsOps),
      "masked_select(Tensor input, Tensor mask) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input"), m = c.t("mask");
        if (m.dtype() != DType::Bool) invalid("masked_select: expected BoolTensor for mask");
        const Shape s = broadcast_shapes(x.shape(), m.shape());
        Var xe = expand(x, s), me = expand(m, s);
        std::vector<std::int64_t> idx;
        for (std::size_t k = 0; k < me.data().size(); ++k)
          if (me.data()[k] != 0) idx.push_back(static_cast<std::int64_t>(k));
        const auto n = static_cast<std::int64_t>(idx.size());
        return {take(xe, std::move(idx), {n})};
      });
  def(reg, names("tril", kTorch | kTensor | kInplace | kMint | kMsOps),
      "tril(Tensor input, int diagonal=0) -> Tensor",
      [](Ctx& c) -> Outs { return {triangle(c.t("input"), c.i("diagonal"), true)}; });
  def(reg, names("triu", kTorch | kTensor | kInplace | kMint | kMsOps),
      "triu(Tensor input, int diagonal=0) -> Tensor",
      [](Ctx& c) -> Outs { return {triangle(c.t("input"), c.i("diagonal"), false)}; });
  def(reg, names("flip", kTorch | kTensor | kMint | kMsOps), "flip(Tensor input, int... dims) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        for (auto d : c.ints("dims")) {
          const int w = wrap_dim(d, x.ndim());
          std::vector<std::int64_t> sel;
          for (std::int64_t i = x.shape()[static_cast<std::size_t>(w)]; i-- > 0;) sel.push_back(i);
          x = index_select(x, w, sel);
        }
        return {x};
      });

  // ---- casts and constructors ---------------------------------------------------------------------
  def(reg, {"Tensor.to", "ms:Tensor.to"},
      "to(Tensor input, Any a=None, Any b=None, bool non_blocking=False, bool copy=False, *, ScalarType? "
      "dtype=None, "
      "Any device=None, Any memory_format=None) -> Tensor",
      [](Ctx& c) -> Outs {
        std::optional<DType> dt = c.dtype("dtype");
        if (!dt) dt = requested_dtype(c["a"]);
        if (!dt) dt = requested_dtype(c["b"]);
        Var x = c.t("input");
        if (!dt) {
          // Only a device (or nothing) was given: the values and dtype stay.
          for (const char* p : {"a", "b"})
            if (c[p].kind() == Value::Kind::Opaque && c[p].to_string().empty())
              throw Error(ErrorKind::Unsupported,
                          "Tensor.to: the dump did not record the positional dtype argument");
          return {x};
        }
        return {cast(x, *dt)};
      });
  const std::pair<const char*, DType> casts[] = {{"float", DType::Float32},     {"half", DType::Float16},
                                                 {"bfloat16", DType::BFloat16}, {"double", DType::Float64},
                                                 {"int", DType::Int32},         {"long", DType::Int64},
                                                 {"bool", DType::Bool},         {"short", DType::Int16},
                                                 {"char", DType::Int8},         {"byte", DType::UInt8}};
  for (const auto& [fn, dt] : casts)
    def(reg, {std::string("Tensor.") + fn},
        std::string(fn) + "(Tensor input, Any memory_format=None) -> Tensor",
        [dt = dt](Ctx& c) -> Outs { return {cast(c.t("input"), dt)}; });
  def(reg, {"Tensor.type", "ms:Tensor.astype"},
      "type(Tensor input, Any dtype=None, bool non_blocking=False) -> Tensor", [](Ctx& c) -> Outs {
        auto dt = requested_dtype(c["dtype"]);
        if (!dt) throw Error(ErrorKind::Unsupported, "Tensor.type() without a dtype returns a string");
        return {cast(c.t("input"), *dt)};
      });
  def(reg, {"Tensor.type_as"}, "type_as(Tensor input, Tensor other) -> Tensor",
      [](Ctx& c) -> Outs { return {cast(c.t("input"), c.t("other").dtype())}; });
  def(reg, names("clone", kTorch | kTensor | kMint | kMsOps),
      "clone(Tensor input, *, Any memory_format=None) -> Tensor",
      [](Ctx& c) -> Outs { return {c.t("input")}; });
  def(reg, names("detach", kTorch | kTensor), "detach(Tensor input) -> Tensor",
      [](Ctx& c) -> Outs { return {detach(c.t("input"))}; });
  auto like = [](const char* value_param, double fixed) {
    return [value_param, fixed](Ctx& c) -> Outs {
      Var x = c.t("input");
      const double v = value_param ? c.f(value_param) : fixed;
      DType dt = c.dtype("dtype").value_or(x.dtype());
      // D5: a floating fill value stays float64 in the bench; integer dtypes truncate like torch.
      return {full(x.shape(), is_floating(dt) ? v : round_to(v, dt), dt)};
    };
  };
  const char* like_tail =
      ", *, ScalarType? dtype=None, Any layout=None, Any device=None, bool? pin_memory=None, "
      "bool? requires_grad=False, Any memory_format=None) -> Tensor";
  def(reg, names("zeros_like", kTorch | kMint | kMsOps), std::string("zeros_like(Tensor input") + like_tail,
      like(nullptr, 0.0), false);
  def(reg, names("ones_like", kTorch | kMint | kMsOps), std::string("ones_like(Tensor input") + like_tail,
      like(nullptr, 1.0), false);
  def(reg, names("full_like", kTorch | kMint | kMsOps),
      std::string("full_like(Tensor input, Scalar fill_value") + like_tail, like("fill_value", 0.0), false);
  // ---- constructors (no tensor inputs: the bench is the exact values in the requested dtype) ----------
  // DECISIONS D5: floating values stay float64 in the bench; integer dtypes truncate like a cast.
  auto exact_in = [](double v, DType dt) { return is_floating(dt) ? v : round_to(v, dt); };
  const char* ctor_tail =
      "ScalarType? dtype=None, Any layout=None, Any device=None, bool? pin_memory=None, bool? "
      "requires_grad=False, "
      "Any out=None) -> Tensor";
  // torch's default dtype for a constructor from Python numbers: bool, int64, or float32 if any is a float
  auto number_dtype = [](std::initializer_list<const Value*> vs) {
    bool any_float = false, all_bool = true;
    for (const Value* v : vs) {
      if (!v || v->is_none()) continue;
      any_float = any_float || v->kind() == Value::Kind::Float ||
                  (v->is_tensor() && is_floating(v->tensor().dtype()));
      all_bool = all_bool && v->kind() == Value::Kind::Bool;
    }
    return any_float ? DType::Float32 : all_bool ? DType::Bool : DType::Int64;
  };
  def(
      reg, names("arange", kTorch),
      std::string("arange(Scalar a, Scalar? b=None, Scalar c=1, *, ") + ctor_tail,
      [number_dtype, exact_in](Ctx& c) -> Outs {
        const bool one = c.none("b");
        const double start = one ? 0.0 : c.f("a"), end = one ? c.f("a") : c.f("b"), step = c.f("c");
        if (step == 0) invalid("step must be nonzero");
        if (!std::isfinite(start) || !std::isfinite(end))
          invalid("unsupported range: " + std::to_string(start));
        if ((step > 0 && end < start) || (step < 0 && end > start))
          invalid("upper bound and larger bound inconsistent with step sign");
        DType dt = c.dtype("dtype").value_or(number_dtype({&c["a"], &c["b"], &c["c"]}));
        if (dt == DType::Bool) dt = DType::Int64;
        const double len = std::ceil((end - start) / step);
        const Shape s{static_cast<std::int64_t>(len)};
        Buffer v(static_cast<std::size_t>(checked_numel(s)));
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = exact_in(start + static_cast<double>(i) * step, dt);
        return {make_leaf(s, std::move(v), dt)};
      },
      false);
  def(
      reg, names("full", kTorch),
      std::string("full(int[] size, Scalar fill_value, *, Any names=None, ") + ctor_tail,
      [number_dtype, exact_in](Ctx& c) -> Outs {
        const DType dt = c.dtype("dtype").value_or(number_dtype({&c["fill_value"]}));
        Shape s;
        for (auto d : c.ints("size")) {
          if (d < 0) invalid(fmt::format("Trying to create tensor with negative dimension {}", d));
          s.push_back(d);
        }
        checked_numel(s);
        return {full(s, exact_in(c.f("fill_value"), dt), dt)};
      },
      false);
  def(
      reg, names("eye", kTorch), std::string("eye(int n, int? m=None, *, ") + ctor_tail,
      [](Ctx& c) -> Outs {
        const std::int64_t n = c.i("n"), m = c.none("m") ? n : c.i("m");
        if (n < 0 || m < 0)
          invalid(fmt::format("n and m must be greater or equal to 0, got {} and {}", n, m));
        const DType dt = c.dtype("dtype").value_or(DType::Float32);
        const Shape s{n, m};
        Buffer v(static_cast<std::size_t>(checked_numel(s)), 0.0);
        for (std::int64_t i = 0; i < std::min(n, m); ++i) v[static_cast<std::size_t>(i * m + i)] = 1.0;
        return {make_leaf(s, std::move(v), dt)};
      },
      false);
  def(
      reg, names("linspace", kTorch),
      std::string("linspace(Scalar start, Scalar end, int steps, *, ") + ctor_tail,
      [exact_in](Ctx& c) -> Outs {
        const double a = c.f("start"), b = c.f("end");
        const std::int64_t n = c.i("steps");
        if (n < 0) invalid("number of steps must be non-negative");
        const DType dt = c.dtype("dtype").value_or(DType::Float32);
        const Shape s{n};
        Buffer v(static_cast<std::size_t>(checked_numel(s)));
        // torch fills the first half from start and the second half back from end (one step: start)
        const double step = n > 1 ? (b - a) / static_cast<double>(n - 1) : 0.0;
        for (std::int64_t i = 0; i < n; ++i)
          v[static_cast<std::size_t>(i)] =
              exact_in((n == 1 || i < n / 2) ? a + step * static_cast<double>(i)
                                             : b - step * static_cast<double>(n - 1 - i),
                       dt);
        return {make_leaf(s, std::move(v), dt)};
      },
      false);
  def(
      reg, names("scalar_tensor", kTorch), std::string("scalar_tensor(Scalar s, *, ") + ctor_tail,
      [exact_in](Ctx& c) -> Outs {
        const DType dt = c.dtype("dtype").value_or(DType::Float32);
        return {full({}, exact_in(c.f("s"), dt), dt)};
      },
      false);
  def(reg, {"Aten.slice.Tensor"},
      "slice(Tensor input, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const int d = wrap_dim(c.i("dim"), x.ndim());
        const std::int64_t n = x.shape()[static_cast<std::size_t>(d)], step = c.i("step");
        if (step <= 0) invalid("slice step must be positive");
        auto norm = [n](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + n : v, 0, n); };
        const std::int64_t a = c.none("start") ? 0 : norm(*c.opt_i("start"));
        const std::int64_t b = c.none("end") ? n : norm(*c.opt_i("end"));
        return {slice(x, d, a, std::max(a, b), step)};
      });
  def(reg, {"Aten._unsafe_view.default", "Aten._reshape_alias.default"},
      "_unsafe_view(Tensor input, int[] size, Any stride=None) -> Tensor",
      [](Ctx& c) -> Outs { return {reshape(c.t("input"), c.ints("size"))}; });
  // ---- new_* / zeros / ones / zero_ / copy_ / identity aliases ------------------------------------------
  auto new_filled = [](const char* value_param, double fixed) {
    return [value_param, fixed](Ctx& c) -> Outs {
      Var x = c.t("input");
      const double v = value_param ? c.f(value_param) : fixed;
      const DType dt = c.dtype("dtype").value_or(x.dtype());
      Shape s;
      for (auto d : c.ints("size")) {
        if (d < 0) invalid(fmt::format("Trying to create tensor with negative dimension {}", d));
        s.push_back(d);
      }
      checked_numel(s);
      return {full(s, is_floating(dt) ? v : round_to(v, dt), dt)};  // DECISIONS D5
    };
  };
  const char* new_tail =
      ", *, ScalarType? dtype=None, Any layout=None, Any device=None, bool? pin_memory=None, bool? "
      "requires_grad=False) -> Tensor";
  def(reg, names("new_zeros", kTensor), std::string("new_zeros(Tensor input, int... size") + new_tail,
      new_filled(nullptr, 0.0), false);
  def(reg, names("new_ones", kTensor), std::string("new_ones(Tensor input, int... size") + new_tail,
      new_filled(nullptr, 1.0), false);
  def(reg, names("new_full", kTensor),
      std::string("new_full(Tensor input, int[] size, Scalar fill_value") + new_tail,
      new_filled("fill_value", 0.0), false);
  for (const bool one : {false, true})
    def(
        reg, names(one ? "ones" : "zeros", kTorch),
        std::string(one ? "ones" : "zeros") +
            "(int... size, *, Any names=None, ScalarType? dtype=None, Any layout=None, Any device=None, "
            "bool? "
            "pin_memory=None, bool? requires_grad=False, Any out=None) -> Tensor",
        [one](Ctx& c) -> Outs {
          Shape s;
          for (auto d : c.ints("size")) {
            if (d < 0) invalid(fmt::format("Trying to create tensor with negative dimension {}", d));
            s.push_back(d);
          }
          checked_numel(s);
          return {full(s, one ? 1.0 : 0.0, c.dtype("dtype").value_or(DType::Float32))};
        },
        false);
  def(
      reg, {"Tensor.zero_", "Aten.zero.default", "Aten.zero_.default"}, "zero_(Tensor input) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        return {full(x.shape(), 0.0, x.dtype())};
      },
      false);
  def(reg, {"Tensor.copy_", "Aten.copy.default", "Aten.copy_.default"},
      "copy_(Tensor input, Tensor src, bool non_blocking=False) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input"), src = c.t("src");
        if (broadcast_shapes(x.shape(), src.shape()) != x.shape())
          invalid(fmt::format("copy_: src of shape {} does not broadcast to {}", shape_to_string(src.shape()),
                              shape_to_string(x.shape())));
        Var e = expand(src, x.shape());
        // DECISIONS D5: floating to floating keeps the float64 bench value; to an integer dtype truncates
        return {is_floating(x.dtype()) && is_floating(src.dtype()) ? relabel(e, x.dtype())
                                                                   : cast(e, x.dtype())};
      });
  def(reg, {"Torch.alias", "Aten.alias.default", "Aten.lift_fresh.default", "Aten.lift.default"},
      "alias(Tensor input) -> Tensor", [](Ctx& c) -> Outs { return {c.t("input")}; });
  def(reg, {"Aten.expand.default"}, "expand(Tensor input, int[] size, *, bool implicit=False) -> Tensor",
      [](Ctx& c) -> Outs { return {expand(c.t("input"), c.ints("size"))}; });
  // ---- more indexing and rearranging ---------------------------------------------------------------
  def(reg, names("roll", kTorch | kTensor), "roll(Tensor input, int[1] shifts, int[1] dims=[]) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const auto shifts = c.ints("shifts");
        const auto dims = c.ints("dims");
        auto roll1 = [](const Var& v, std::int64_t shift, int d) {
          const std::int64_t n = v.shape()[static_cast<std::size_t>(d)];
          if (n == 0) return v;
          std::vector<std::int64_t> sel(static_cast<std::size_t>(n));
          for (std::int64_t i = 0; i < n; ++i) sel[static_cast<std::size_t>(i)] = (((i - shift) % n) + n) % n;
          return index_select(v, d, sel);
        };
        if (dims.empty()) {
          if (shifts.size() != 1) invalid("roll(): shifts must have one element when dims is not given");
          return {reshape(roll1(reshape(x, {x.numel()}), shifts[0], 0), x.shape())};
        }
        if (shifts.size() != dims.size())
          invalid(fmt::format("shifts and dimensions must align. shifts: {}, dims:{}", shifts.size(),
                              dims.size()));
        for (std::size_t k = 0; k < dims.size(); ++k) x = roll1(x, shifts[k], wrap_dim(dims[k], x.ndim()));
        return {x};
      });
  for (const bool lr : {true, false})
    def(reg, names(lr ? "fliplr" : "flipud", kTorch | kTensor),
        std::string(lr ? "fliplr" : "flipud") + "(Tensor input) -> Tensor", [lr](Ctx& c) -> Outs {
          Var x = c.t("input");
          if (x.ndim() < (lr ? 2 : 1)) invalid(fmt::format("Input must be >= {}-d.", lr ? 2 : 1));
          const int d = lr ? 1 : 0;
          std::vector<std::int64_t> sel;
          for (std::int64_t i = x.shape()[static_cast<std::size_t>(d)]; i-- > 0;) sel.push_back(i);
          return {index_select(x, d, sel)};
        });
  def(reg, names("movedim", kTorch | kTensor, {"Torch.moveaxis", "Tensor.moveaxis"}),
      "movedim(Tensor input, int[1] source, int[1] destination) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const auto src = c.ints("source"), dst = c.ints("destination");
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
        return {permute(x, perm)};
      });
  def(reg, names("take", kTorch | kTensor), "take(Tensor input, Tensor index) -> Tensor", [](Ctx& c) -> Outs {
    Var x = c.t("input"), i = int_index(c, "index");
    Var x1 = reshape(x, {x.numel()});
    return {take(x1, along_dim_offsets(x1.shape(), {i.numel()}, 0, i.data()), i.shape())};
  });
  def(reg, names("take_along_dim", kTorch | kTensor),
      "take_along_dim(Tensor input, Tensor indices, int? dim=None) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input"), i = int_index(c, "indices");
        if (c.none("dim")) {
          Var x1 = reshape(x, {x.numel()});
          return {take(x1, along_dim_offsets(x1.shape(), {i.numel()}, 0, i.data()), {i.numel()})};
        }
        if (x.ndim() != i.ndim())
          invalid("torch.take_along_dim(): input and indices should have the same number of dimensions");
        const int d = wrap_dim(c.i("dim"), x.ndim());
        Shape sx = x.shape(), si = i.shape();
        sx[static_cast<std::size_t>(d)] = si[static_cast<std::size_t>(d)] = 1;
        Shape b = broadcast_shapes(sx, si);
        Shape bx = b, bi = b;
        bx[static_cast<std::size_t>(d)] = x.shape()[static_cast<std::size_t>(d)];
        bi[static_cast<std::size_t>(d)] = i.shape()[static_cast<std::size_t>(d)];
        Var xe = expand(x, bx), ie = expand(detach(i), bi);
        return {take(xe, along_dim_offsets(xe.shape(), ie.shape(), d, ie.data()), ie.shape())};
      });
  def(reg, names("select", kTorch | kTensor), "select(Tensor input, int dim, int index) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        if (x.ndim() == 0) invalid("select() cannot be applied to a 0-dim tensor.");
        const int d = wrap_dim(c.i("dim"), x.ndim());
        const std::int64_t n = x.shape()[static_cast<std::size_t>(d)];
        std::int64_t k = c.i("index");
        if (k < -n || k >= n)
          invalid(fmt::format("select(): index {} out of range for tensor of size {} at dimension {}", k,
                              shape_to_string(x.shape()), d));
        if (k < 0) k += n;
        return {ops::squeeze(index_select(x, d, {k}), d)};
      });
  def(reg, names("diagonal", kTorch | kTensor),
      "diagonal(Tensor input, int offset=0, int dim1=0, int dim2=1) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const int d1 = wrap_dim(c.i("dim1"), x.ndim()), d2 = wrap_dim(c.i("dim2"), x.ndim());
        if (d1 == d2) invalid("diagonal dimensions cannot be identical");
        const std::int64_t off = c.i("offset");
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
        return {take(x, std::move(idx), out)};
      });
  // index_fill / index_copy: the positions whose coordinate along `dim` is listed in `index`.
  auto index_positions = [](const Var& x, int d, const Var& i, const Shape& shape) {
    if (i.ndim() > 1) invalid("Index is supposed to be a vector");
    const auto ss = contiguous_strides(shape);
    const std::int64_t len = shape.empty() ? 1 : shape[static_cast<std::size_t>(d)];
    if (len != i.numel()) invalid("index_copy_(): Number of indices should be equal to source.size(dim)");
    std::vector<double> along(static_cast<std::size_t>(checked_numel(shape)));
    for (std::size_t k = 0; k < along.size(); ++k) {
      const std::int64_t coord =
          shape.empty() ? 0 : (static_cast<std::int64_t>(k) / ss[static_cast<std::size_t>(d)]) % len;
      along[k] = i.data()[static_cast<std::size_t>(coord)];
    }
    return along_dim_offsets(x.shape(), shape, d, along);
  };
  def(reg, names("index_fill", kTorch | kTensor | kInplace),
      "index_fill(Tensor input, int dim, Tensor index, Tensor value) -> Tensor",
      [index_positions](Ctx& c) -> Outs {
        Var x = c.t("input"), i = int_index(c, "index"), v = c.t("value");
        if (v.ndim() != 0) invalid("index_fill_ only supports a 0-dimensional value tensor");
        const int d = x.ndim() == 0 ? 0 : wrap_dim(c.i("dim"), x.ndim());
        Shape s = x.shape();
        if (!s.empty()) s[static_cast<std::size_t>(d)] = i.numel();
        Var src = expand(cast(v, x.dtype()), s);
        return {put(x, index_positions(x, d, i, s), src, false)};
      });
  def(reg, names("index_copy", kTorch | kTensor | kInplace),
      "index_copy(Tensor input, int dim, Tensor index, Tensor source) -> Tensor",
      [index_positions](Ctx& c) -> Outs {
        Var x = c.t("input"), i = int_index(c, "index"), src = c.t("source");
        const int d = x.ndim() == 0 ? 0 : wrap_dim(c.i("dim"), x.ndim());
        if (src.ndim() != x.ndim())
          invalid(
              "index_copy_(): When source and destination are not scalars, their dimensionality must match.");
        for (int k = 0; k < x.ndim(); ++k)
          if (k != d && src.shape()[static_cast<std::size_t>(k)] != x.shape()[static_cast<std::size_t>(k)])
            invalid(fmt::format(
                "index_copy_(): Source/destination tensor must have same slice shapes. Destination "
                "slice shape: {}, source slice shape: {}",
                shape_to_string(x.shape()), shape_to_string(src.shape())));
        if (src.dtype() != x.dtype())
          invalid("index_copy_(): self and source expected to have the same dtype");
        return {put(x, index_positions(x, d, i, src.shape()), src, false)};
      });
  def(reg, names("view_as", kTensor), "view_as(Tensor input, Tensor other) -> Tensor",
      [](Ctx& c) -> Outs { return {reshape(c.t("input"), c.t("other").shape())}; });
  def(reg, names("reshape_as", kTensor), "reshape_as(Tensor input, Tensor other) -> Tensor",
      [](Ctx& c) -> Outs { return {reshape(c.t("input"), c.t("other").shape())}; });
  def(
      reg, names("one_hot", kFunctional), "one_hot(Tensor input, int num_classes=-1) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        if (x.dtype() != DType::Int64) invalid("one_hot is only applicable to index tensor.");
        std::int64_t n = c.i("num_classes");
        if (n < -1) invalid("num_classes should be -1 or a non-negative number");
        double hi = -1;
        for (double v : x.data()) {
          if (v < 0) invalid("Class values must be non-negative.");
          hi = std::max(hi, v);
        }
        if (n == -1) {
          if (x.numel() == 0) invalid("Can not infer total number of classes from empty tensor.");
          n = static_cast<std::int64_t>(hi) + 1;
        } else if (hi >= static_cast<double>(n)) {
          invalid("Class values must be smaller than num_classes.");
        }
        Shape s = x.shape();
        s.push_back(n);
        Buffer out(static_cast<std::size_t>(checked_numel(s)), 0.0);
        for (std::size_t k = 0; k < x.data().size(); ++k)
          out[k * static_cast<std::size_t>(n) + static_cast<std::size_t>(x.data()[k])] = 1.0;
        return {make_leaf(s, std::move(out), DType::Int64)};
      },
      false);
  def(reg, names("diag", kTorch | kTensor), "diag(Tensor input, int diagonal=0) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const std::int64_t k = c.i("diagonal");
        if (x.ndim() == 1) {
          const std::int64_t n = x.shape()[0], m = n + (k < 0 ? -k : k);
          std::vector<std::int64_t> idx;
          for (std::int64_t i = 0; i < n; ++i) idx.push_back((k >= 0 ? i : i - k) * m + (k >= 0 ? i + k : i));
          return {put(full({m, m}, 0.0, x.dtype()), std::move(idx), x, false)};
        }
        if (x.ndim() != 2)
          invalid("diag(): Supports 1D or 2D tensors. Got " + std::to_string(x.ndim()) + "D");
        const std::int64_t r = x.shape()[0], cols = x.shape()[1];
        std::vector<std::int64_t> idx;
        for (std::int64_t i = std::max<std::int64_t>(0, -k); i < r && i + k < cols; ++i)
          idx.push_back(i * cols + i + k);
        const auto len = static_cast<std::int64_t>(idx.size());
        return {take(x, std::move(idx), {len})};
      });
  def(reg, names("rot90", kTorch | kTensor), "rot90(Tensor input, int k=1, int[] dims=[0, 1]) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const auto dims = c.ints("dims");
        if (dims.size() != 2)
          invalid(fmt::format("expected total rotation dims == 2, but got dims = {}", dims.size()));
        if (x.ndim() < 2) invalid(fmt::format("expected total dims >= 2, but got total dims = {}", x.ndim()));
        const int d0 = wrap_dim(dims[0], x.ndim()), d1 = wrap_dim(dims[1], x.ndim());
        if (d0 == d1) invalid("expected rotation dims to be different");
        auto flip = [](const Var& v, int d) {
          std::vector<std::int64_t> sel;
          for (std::int64_t i = v.shape()[static_cast<std::size_t>(d)]; i-- > 0;) sel.push_back(i);
          return index_select(v, d, sel);
        };
        const std::int64_t k = ((c.i("k") % 4) + 4) % 4;
        if (k == 1) return {transpose(flip(x, d1), d0, d1)};
        if (k == 2) return {flip(flip(x, d0), d1)};
        if (k == 3) return {transpose(flip(x, d0), d0, d1)};
        return {x};
      });
  for (int n = 1; n <= 3; ++n)
    def(reg, names("atleast_" + std::to_string(n) + "d", kTorch),
        "atleast_" + std::to_string(n) + "d(Tensor... tensors) -> Tensor", [n](Ctx& c) -> Outs {
          const Value& v = c["tensors"];
          std::vector<Var> xs = atleast_all(c.ts("tensors"), n);
          // one tensor argument gives a tensor; several (or a list) give a tuple
          if (xs.size() == 1 && v.is_list() && v.list().size() == 1 && v.list()[0].is_tensor())
            return {xs[0]};
          return spread(std::move(xs));
        });
  def(reg, names("vstack", kTorch, {"Torch.row_stack"}),
      "vstack(Tensor[] tensors, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {cat(atleast_all(c.ts("tensors"), 2), 0)}; });
  def(reg, names("hstack", kTorch), "hstack(Tensor[] tensors, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs {
        std::vector<Var> xs = atleast_all(c.ts("tensors"), 1);
        if (xs.empty()) invalid("hstack expects a non-empty TensorList");
        return {cat(xs, xs[0].ndim() == 1 ? 0 : 1)};
      });
  def(reg, names("dstack", kTorch), "dstack(Tensor[] tensors, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return {cat(atleast_all(c.ts("tensors"), 3), 2)}; });
  def(reg, names("column_stack", kTorch), "column_stack(Tensor[] tensors, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs {
        std::vector<Var> xs;
        for (const Var& x : c.ts("tensors")) xs.push_back(x.ndim() <= 1 ? reshape(x, {x.numel(), 1}) : x);
        return {cat(xs, 1)};
      });
  def(reg, names("broadcast_tensors", kTorch), "broadcast_tensors(Tensor... tensors) -> Tensor",
      [](Ctx& c) -> Outs {
        std::vector<Var> xs = c.ts("tensors");
        Shape s;
        for (const Var& x : xs) s = broadcast_shapes(s, x.shape());
        std::vector<Var> out;
        for (const Var& x : xs) out.push_back(expand(x, s));
        return spread(std::move(out));
      });
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
          const int need = fn == "dsplit" ? 3 : fn == "vsplit" ? 2 : 1;
          if (x.ndim() < need)
            invalid(
                fmt::format("torch.{} requires a tensor with at least {} dimension, but got a tensor with {} "
                            "dimensions!",
                            fn, need, x.ndim()));
          const Value& how = c["indices_or_sections"];
          const int d = fn == "hsplit" && x.ndim() == 1 ? 0 : dim;
          if (!how.is_list() && !how.is_tensor()) {
            const auto n = static_cast<std::int64_t>(how.as_double());
            if (n <= 0 || x.shape()[static_cast<std::size_t>(d)] % n != 0)
              invalid(
                  fmt::format("torch.{} attempted to split along dimension {}, but the size of the dimension "
                              "{} is not divisible by the split_size {}!",
                              fn, d, x.shape()[static_cast<std::size_t>(d)], n));
          }
          return spread(tensor_split(x, how, d));
        });
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
      "channel_shuffle(Tensor input, int groups) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const std::int64_t g = c.i("groups");
        if (x.ndim() < 3) invalid("channel_shuffle expects input to have at least 3 dimensions");
        if (g <= 0)
          invalid(
              fmt::format("Number of groups to divide channels in must be positive. Value of groups:{}", g));
        const std::int64_t C = x.shape()[1];
        if (C % g != 0) invalid("Number of channels must be divisible by groups.");
        Shape s{x.shape()[0], g, C / g};
        s.insert(s.end(), x.shape().begin() + 2, x.shape().end());
        return {reshape(transpose(reshape(x, s), 1, 2), x.shape())};
      });
  def(reg, {"NPU.npu_confusion_transpose"},
      "npu_confusion_transpose(Tensor input, int[] perm, int[] shape, bool transpose_first) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const auto perm = c.ints("perm");
        const auto shape = c.ints("shape");
        if (c.b("transpose_first")) return {reshape(permute(x, perm), Shape(shape.begin(), shape.end()))};
        return {permute(reshape(x, Shape(shape.begin(), shape.end())), perm)};
      });
  def(
      reg, names("nonzero", kTorch | kTensor, {"Torch.argwhere", "Tensor.argwhere"}),
      "nonzero(Tensor input, *, bool as_tuple=False, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const auto st = contiguous_strides(x.shape());
        std::vector<std::int64_t> hits;
        for (std::size_t k = 0; k < x.data().size(); ++k)
          if (x.data()[k] != 0) hits.push_back(static_cast<std::int64_t>(k));
        const auto n = static_cast<std::int64_t>(hits.size());
        const std::int64_t nd = x.ndim();
        Buffer out(static_cast<std::size_t>(n * nd));
        for (std::int64_t r = 0; r < n; ++r)
          for (std::int64_t d = 0; d < nd; ++d)
            out[static_cast<std::size_t>(r * nd + d)] =
                static_cast<double>((hits[static_cast<std::size_t>(r)] / st[static_cast<std::size_t>(d)]) %
                                    x.shape()[static_cast<std::size_t>(d)]);
        Var idx = make_leaf({n, nd}, std::move(out), DType::Int64);
        if (!c.b("as_tuple")) return {idx};
        Outs cols;  // as_tuple: one index tensor per dim (a 0-d input counts as one dim)
        if (nd == 0) return {make_leaf({n}, Buffer(static_cast<std::size_t>(n), 0.0), DType::Int64)};
        for (std::int64_t d = 0; d < nd; ++d) cols.push_back(ops::squeeze(slice(idx, 1, d, d + 1, 1), 1));
        return cols;
      },
      false);
  def(reg, names("diff", kTorch | kTensor),
      "diff(Tensor input, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        if (x.ndim() == 0) invalid("diff expects input to be at least one-dimensional");
        const int d = wrap_dim(c.i("dim"), x.ndim());
        std::vector<Var> parts;
        if (auto p = c.opt_t("prepend")) parts.push_back(*p);
        parts.push_back(x);
        if (auto a = c.opt_t("append")) parts.push_back(*a);
        if (parts.size() > 1) x = cat(parts, d);
        const std::int64_t n = c.i("n");
        if (n < 0) invalid(fmt::format("order must be non-negative but got {}", n));
        for (std::int64_t k = 0; k < n; ++k) {
          const std::int64_t len = x.shape()[static_cast<std::size_t>(d)];
          if (len == 0) break;
          Var hi = slice(x, d, 1, len, 1), lo = slice(x, d, 0, len - 1, 1);
          x = x.dtype() == DType::Bool
                  ? zip_nograd(hi, lo, DType::Bool, [](double a, double b) { return a != b ? 1.0 : 0.0; })
                  : ops::sub(hi, lo);
        }
        return {x};
      });
  def(reg, names("kron", kTorch | kTensor), "kron(Tensor input, Tensor other, *, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var a = c.t("input"), b = c.t("other");
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
          const auto ak = pa.shape()[static_cast<std::size_t>(k)],
                     bk = pb.shape()[static_cast<std::size_t>(k)];
          sa.insert(sa.end(), {ak, 1});
          sb.insert(sb.end(), {1, bk});
          out.push_back(ak * bk);
        }
        return {reshape(ops::mul(reshape(pa, sa), reshape(pb, sb)), out)};
      });
  def(
      reg, names("narrow_copy", kTorch | kTensor),
      "narrow_copy(Tensor input, int dim, int start, int length) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const int d = wrap_dim(c.i("dim"), x.ndim());
        const std::int64_t len = x.shape()[static_cast<std::size_t>(d)];
        std::int64_t start = c.i("start");
        const std::int64_t n = c.i("length");
        if (start < -len || start > len) invalid("start out of range");
        if (start < 0) start += len;
        if (n < 0 || start + n > len)
          invalid(fmt::format("start ({}) + length ({}) exceeds dimension size ({}).", start, n, len));
        return {slice(x, d, start, start + n, 1)};
      },
      false);  // torch 1.13: "derivative for aten::narrow_copy is not implemented"
  def(reg, names("ravel", kTorch | kTensor), "ravel(Tensor input) -> Tensor", [](Ctx& c) -> Outs {
    Var x = c.t("input");
    return {reshape(x, {x.numel()})};
  });
  def(reg, names("unflatten", kTorch | kTensor), "unflatten(Tensor input, int dim, int[] sizes) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const int d = wrap_dim(c.i("dim"), x.ndim());
        Shape s(x.shape().begin(), x.shape().begin() + d);
        for (auto v : c.ints("sizes")) s.push_back(v);
        s.insert(s.end(), x.shape().begin() + d + 1, x.shape().end());
        Var r = reshape(x, s);
        return {r};
      });
}

}  // namespace probe::runners
