// Indexing (float64 reference): __getitem__ (basic and advanced), index_select, gather/scatter,
// index_add/fill/copy, masked_select, take, nonzero, one_hot, triangles and diagonals, flips and rolls.
// The kernels take Vars and plain values; the registrations at the end only bind arguments and call them.
#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "probe/error.h"
#include "runners/Ops.h"
#include "runners/RunnerKit.h"

namespace probe::runners {

namespace {

// Flat offsets of every element of `shape` in a row-major tensor of that shape where coordinate `dim`
// is replaced by `index[i]` (gather/scatter/index_add addressing). `index` has the element order of `shape`.
std::vector<std::int64_t> along_dim_offsets(const Shape& target, const Shape& shape, int dim,
                                            std::span<const double> index) {
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

// An index argument: integer dtypes only (torch rejects floating and bool index tensors here).
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

// x reversed along dim d.
Var reverse(const Var& x, int d) {
  std::vector<std::int64_t> sel;
  for (std::int64_t i = x.shape()[static_cast<std::size_t>(d)]; i-- > 0;) sel.push_back(i);
  return index_select(x, d, sel);
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

Buffer int_values(const Value& v) {
  Buffer out;
  if (v.is_tensor()) {
    const std::vector<double> d = v.tensor().to_doubles();
    return Buffer(d.begin(), d.end());
  }
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
    Buffer values;
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
        adv.push_back({dim++, {it.as_bool() ? 1 : 0}, it.as_bool() ? Buffer{0.0} : Buffer{}});
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
          std::vector<Buffer> coords(static_cast<std::size_t>(m.ndim()));
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
            adv.push_back({dim, {m.at(0) != 0 ? 1 : 0}, m.at(0) != 0 ? Buffer{0.0} : Buffer{}});
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
  std::vector<Buffer> bidx;
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

Var index_select_of(const Var& x, std::int64_t dim, const Var& index) {
  if (index.ndim() > 1) invalid("index_select(): Index is supposed to be a vector");
  std::vector<std::int64_t> sel;
  for (double v : index.data()) sel.push_back(static_cast<std::int64_t>(v));
  return index_select(x, dim, sel);
}

Var gather(const Var& x, std::int64_t dim, const Var& i) {
  const int d = x.ndim() == 0 ? 0 : wrap_dim(dim, x.ndim());
  check_gather_shape(x, i, d, false);
  if (x.ndim() == 0 || i.ndim() == 0) {  // torch treats 0-d operands as 1-element vectors
    Var x1 = reshape(x, {x.numel()});
    return reshape(take(x1, along_dim_offsets(x1.shape(), {i.numel()}, 0, i.data()), {i.numel()}), i.shape());
  }
  return take(x, along_dim_offsets(x.shape(), i.shape(), d, i.data()), i.shape());
}

// scatter's `src` (a tensor, whose leading block is used) or `value` must cover the index in every dim.
void check_scatter_source(const Var& i, const Value& source) {
  if (source.is_none()) invalid("scatter() needs `src` or `value`");
  if (!source.is_tensor()) return;
  const Tensor& st = source.tensor();
  bool fits = st.ndim() == i.ndim();
  for (int k = 0; fits && k < i.ndim(); ++k)
    fits = i.shape()[static_cast<std::size_t>(k)] <= st.shape()[static_cast<std::size_t>(k)];
  if (!fits)
    invalid(fmt::format("Expected index {} to be smaller than src {} in every dimension",
                        shape_to_string(i.shape()), shape_to_string(st.shape())));
}

// x with src[k] written (or added) at the position of index[k] along dim d.
Var scatter(const Var& x, int d, const Var& i, const Var& src, bool add) {
  return put(x, along_dim_offsets(x.shape(), i.shape(), d, i.data()), cast(src, x.dtype()), add);
}

// scatter / scatter_add: checks in torch's order (index shape, reduce, source), then the kernel.
Outs scatter_runner(Ctx& c, bool always_add) {
  Var x = c.t("input"), i = int_index(c, "index");
  const int d = x.ndim() == 0 ? 0 : wrap_dim(c.i("dim"), x.ndim());
  check_gather_shape(x, i, d, true);
  bool add = always_add;
  if (!always_add && !c.none("reduce")) {
    if (c.s("reduce") != "add")
      throw Error(ErrorKind::Unsupported, fmt::format("scatter reduce='{}' is not supported", c.s("reduce")));
    add = true;
  }
  const Value& source = always_add ? c["src"] : (c.none("src") ? c["value"] : c["src"]);
  check_scatter_source(i, source);
  Var src = source.is_tensor() ? take_prefix(c.t("src"), i.shape())
                               : full(i.shape(), source.as_double(), x.dtype());
  return {scatter(x, d, i, src, add)};
}

Var index_add(const Var& x, std::int64_t dim, const Var& i, const Var& src, double alpha) {
  const int d = x.ndim() == 0 ? 0 : wrap_dim(dim, x.ndim());
  if (i.ndim() > 1) invalid("index_add_(): Index is supposed to be a vector");
  if (x.ndim() == 0 || src.ndim() != x.ndim())
    throw Error(ErrorKind::Unsupported,
                "index_add: source and input must have the same number (>= 1) of dims");
  for (int k = 0; k < x.ndim(); ++k)
    if (k != d && src.shape()[static_cast<std::size_t>(k)] != x.shape()[static_cast<std::size_t>(k)])
      invalid(fmt::format("index_add_(): source {} and input {} must match outside dim {}",
                          shape_to_string(src.shape()), shape_to_string(x.shape()), d));
  // per source element: its index along d comes from index[coord_d]
  Buffer along(static_cast<std::size_t>(src.numel()));  // every element written below
  const auto ss = contiguous_strides(src.shape());
  const std::int64_t sl = src.ndim() ? src.shape()[static_cast<std::size_t>(d)] : 1;
  if (sl != i.numel()) invalid("index_add_(): Number of indices should be equal to source.size(dim)");
  for (std::size_t k = 0; k < along.size(); ++k) {
    const std::int64_t coord =
        src.ndim() ? (static_cast<std::int64_t>(k) / ss[static_cast<std::size_t>(d)]) % sl : 0;
    along[k] = i.data()[static_cast<std::size_t>(coord)];
  }
  Var scaled = alpha == 1 ? src : ops::mul(src, wrapped_scalar(alpha, DType::Float64));
  return put(x, along_dim_offsets(x.shape(), src.shape(), d, along), cast(scaled, x.dtype()), true);
}

// index_fill / index_copy: the positions whose coordinate along `dim` is listed in `index`.
std::vector<std::int64_t> index_positions(const Var& x, int d, const Var& i, const Shape& shape) {
  if (i.ndim() > 1) invalid("Index is supposed to be a vector");
  const auto ss = contiguous_strides(shape);
  const std::int64_t len = shape.empty() ? 1 : shape[static_cast<std::size_t>(d)];
  if (len != i.numel()) invalid("index_copy_(): Number of indices should be equal to source.size(dim)");
  Buffer along(static_cast<std::size_t>(checked_numel(shape)));  // every element written below
  for (std::size_t k = 0; k < along.size(); ++k) {
    const std::int64_t coord =
        shape.empty() ? 0 : (static_cast<std::int64_t>(k) / ss[static_cast<std::size_t>(d)]) % len;
    along[k] = i.data()[static_cast<std::size_t>(coord)];
  }
  return along_dim_offsets(x.shape(), shape, d, along);
}

Var index_fill(const Var& x, std::int64_t dim, const Var& i, const Var& value) {
  if (value.ndim() != 0) invalid("index_fill_ only supports a 0-dimensional value tensor");
  const int d = x.ndim() == 0 ? 0 : wrap_dim(dim, x.ndim());
  Shape s = x.shape();
  if (!s.empty()) s[static_cast<std::size_t>(d)] = i.numel();
  Var src = expand(cast(value, x.dtype()), s);
  return put(x, index_positions(x, d, i, s), src, false);
}

Var index_copy(const Var& x, std::int64_t dim, const Var& i, const Var& src) {
  const int d = x.ndim() == 0 ? 0 : wrap_dim(dim, x.ndim());
  if (src.ndim() != x.ndim())
    invalid("index_copy_(): When source and destination are not scalars, their dimensionality must match.");
  for (int k = 0; k < x.ndim(); ++k)
    if (k != d && src.shape()[static_cast<std::size_t>(k)] != x.shape()[static_cast<std::size_t>(k)])
      invalid(
          fmt::format("index_copy_(): Source/destination tensor must have same slice shapes. Destination "
                      "slice shape: {}, source slice shape: {}",
                      shape_to_string(x.shape()), shape_to_string(src.shape())));
  if (src.dtype() != x.dtype()) invalid("index_copy_(): self and source expected to have the same dtype");
  return put(x, index_positions(x, d, i, src.shape()), src, false);
}

Var masked_select(const Var& x, const Var& m) {
  if (m.dtype() != DType::Bool) invalid("masked_select: expected BoolTensor for mask");
  const Shape s = broadcast_shapes(x.shape(), m.shape());
  Var xe = expand(x, s), me = expand(m, s);
  std::vector<std::int64_t> idx;
  for (std::size_t k = 0; k < me.data().size(); ++k)
    if (me.data()[k] != 0) idx.push_back(static_cast<std::int64_t>(k));
  const auto n = static_cast<std::int64_t>(idx.size());
  return take(xe, std::move(idx), {n});
}

// torch.take: the flattened input at each index, in the index's shape.
Var take_flat(const Var& x, const Var& i, const Shape& out_shape) {
  Var x1 = reshape(x, {x.numel()});
  return take(x1, along_dim_offsets(x1.shape(), {i.numel()}, 0, i.data()), out_shape);
}

Var take_along_dim(const Var& x, const Var& i, std::optional<std::int64_t> dim) {
  if (!dim) return take_flat(x, i, {i.numel()});
  if (x.ndim() != i.ndim())
    invalid("torch.take_along_dim(): input and indices should have the same number of dimensions");
  const int d = wrap_dim(*dim, x.ndim());
  Shape sx = x.shape(), si = i.shape();
  sx[static_cast<std::size_t>(d)] = si[static_cast<std::size_t>(d)] = 1;
  Shape b = broadcast_shapes(sx, si);
  Shape bx = b, bi = b;
  bx[static_cast<std::size_t>(d)] = x.shape()[static_cast<std::size_t>(d)];
  bi[static_cast<std::size_t>(d)] = i.shape()[static_cast<std::size_t>(d)];
  Var xe = expand(x, bx), ie = expand(detach(i), bi);
  return take(xe, along_dim_offsets(xe.shape(), ie.shape(), d, ie.data()), ie.shape());
}

Outs nonzero(const Var& x, bool as_tuple) {
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
  if (!as_tuple) return {idx};
  Outs cols;  // as_tuple: one index tensor per dim (a 0-d input counts as one dim)
  if (nd == 0) return {make_leaf({n}, Buffer(static_cast<std::size_t>(n), 0.0), DType::Int64)};
  for (std::int64_t d = 0; d < nd; ++d) cols.push_back(ops::squeeze(slice(idx, 1, d, d + 1, 1), 1));
  return cols;
}

Var one_hot(const Var& x, std::int64_t num_classes) {
  if (x.dtype() != DType::Int64) invalid("one_hot is only applicable to index tensor.");
  std::int64_t n = num_classes;
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
  return make_leaf(s, std::move(out), DType::Int64);
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

Var diag(const Var& x, std::int64_t k) {
  if (x.ndim() == 1) {
    const std::int64_t n = x.shape()[0], m = n + (k < 0 ? -k : k);
    std::vector<std::int64_t> idx;
    for (std::int64_t i = 0; i < n; ++i) idx.push_back((k >= 0 ? i : i - k) * m + (k >= 0 ? i + k : i));
    return put(full({m, m}, 0.0, x.dtype()), std::move(idx), x, false);
  }
  if (x.ndim() != 2) invalid("diag(): Supports 1D or 2D tensors. Got " + std::to_string(x.ndim()) + "D");
  const std::int64_t r = x.shape()[0], cols = x.shape()[1];
  std::vector<std::int64_t> idx;
  for (std::int64_t i = std::max<std::int64_t>(0, -k); i < r && i + k < cols; ++i)
    idx.push_back(i * cols + i + k);
  const auto len = static_cast<std::int64_t>(idx.size());
  return take(x, std::move(idx), {len});
}

Var flip(Var x, const std::vector<std::int64_t>& dims) {
  for (auto d : dims) x = reverse(x, wrap_dim(d, x.ndim()));
  return x;
}

// fliplr (lr) reverses dim 1 of a >= 2-d tensor, flipud dim 0 of a >= 1-d tensor.
Var flip_lr_ud(const Var& x, bool lr) {
  if (x.ndim() < (lr ? 2 : 1)) invalid(fmt::format("Input must be >= {}-d.", lr ? 2 : 1));
  return reverse(x, lr ? 1 : 0);
}

Var rot90(const Var& x, std::int64_t turns, const std::vector<std::int64_t>& dims) {
  if (dims.size() != 2)
    invalid(fmt::format("expected total rotation dims == 2, but got dims = {}", dims.size()));
  if (x.ndim() < 2) invalid(fmt::format("expected total dims >= 2, but got total dims = {}", x.ndim()));
  const int d0 = wrap_dim(dims[0], x.ndim()), d1 = wrap_dim(dims[1], x.ndim());
  if (d0 == d1) invalid("expected rotation dims to be different");
  const std::int64_t k = ((turns % 4) + 4) % 4;
  if (k == 1) return transpose(reverse(x, d1), d0, d1);
  if (k == 2) return reverse(reverse(x, d0), d1);
  if (k == 3) return transpose(reverse(x, d0), d0, d1);
  return x;
}

Var roll(Var x, const std::vector<std::int64_t>& shifts, const std::vector<std::int64_t>& dims) {
  auto roll1 = [](const Var& v, std::int64_t shift, int d) {
    const std::int64_t n = v.shape()[static_cast<std::size_t>(d)];
    if (n == 0) return v;
    std::vector<std::int64_t> sel(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) sel[static_cast<std::size_t>(i)] = (((i - shift) % n) + n) % n;
    return index_select(v, d, sel);
  };
  if (dims.empty()) {
    if (shifts.size() != 1) invalid("roll(): shifts must have one element when dims is not given");
    return reshape(roll1(reshape(x, {x.numel()}), shifts[0], 0), x.shape());
  }
  if (shifts.size() != dims.size())
    invalid(fmt::format("shifts and dimensions must align. shifts: {}, dims:{}", shifts.size(), dims.size()));
  for (std::size_t k = 0; k < dims.size(); ++k) x = roll1(x, shifts[k], wrap_dim(dims[k], x.ndim()));
  return x;
}

}  // namespace

void register_indexing_runners(RunnerRegistry& reg) {
  def(reg, {"Tensor.__getitem__", "ms:Tensor.__getitem__"}, "__getitem__(Tensor input, Any index) -> Tensor",
      [](Ctx& c) -> Outs { return {getitem(c.t("input"), c["index"])}; });
  def(reg, names("index_select", kTorch | kTensor | kMint | kMsOps),
      "index_select(Tensor input, int dim, Tensor index) -> Tensor", [](Ctx& c) -> Outs {
        Var i = int_index(c, "index");
        return {index_select_of(c.t("input"), c.i("dim"), i)};
      });
  def(reg, names("gather", kTorch | kTensor | kMint),
      "gather(Tensor input, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input"), i = int_index(c, "index");
        return {gather(x, c.i("dim"), i)};
      });
  def(reg, names("scatter", kTorch | kTensor | kInplace | kMint, {"Aten.scatter.src", "Aten.scatter.value"}),
      "scatter(Tensor input, int dim, Tensor index, Tensor? src=None, *, Scalar? value=None, str? "
      "reduce=None) -> Tensor",
      [](Ctx& c) -> Outs { return scatter_runner(c, false); });
  def(reg, names("scatter_add", kTorch | kTensor | kInplace | kMint),
      "scatter_add(Tensor input, int dim, Tensor index, Tensor src) -> Tensor",
      [](Ctx& c) -> Outs { return scatter_runner(c, true); });
  def(reg, names("index_add", kTorch | kTensor | kInplace | kMint),
      "index_add(Tensor input, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input"), i = int_index(c, "index"), src = c.t("source");
        return {index_add(x, c.i("dim"), i, src, c.f("alpha"))};
      });
  def(reg, names("masked_select", kTorch | kTensor | kMint | kMsOps),
      "masked_select(Tensor input, Tensor mask) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input"), m = c.t("mask");
        return {masked_select(x, m)};
      });
  def(reg, names("tril", kTorch | kTensor | kInplace | kMint | kMsOps),
      "tril(Tensor input, int diagonal=0) -> Tensor",
      [](Ctx& c) -> Outs { return {triangle(c.t("input"), c.i("diagonal"), true)}; });
  def(reg, names("triu", kTorch | kTensor | kInplace | kMint | kMsOps),
      "triu(Tensor input, int diagonal=0) -> Tensor",
      [](Ctx& c) -> Outs { return {triangle(c.t("input"), c.i("diagonal"), false)}; });
  def(reg, names("flip", kTorch | kTensor | kMint | kMsOps), "flip(Tensor input, int... dims) -> Tensor",
      [](Ctx& c) -> Outs { return {flip(c.t("input"), c.ints("dims"))}; });
  def(reg, names("index_fill", kTorch | kTensor | kInplace),
      "index_fill(Tensor input, int dim, Tensor index, Tensor value) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input"), i = int_index(c, "index"), v = c.t("value");
        return {index_fill(x, c.i("dim"), i, v)};
      });
  def(reg, names("index_copy", kTorch | kTensor | kInplace),
      "index_copy(Tensor input, int dim, Tensor index, Tensor source) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input"), i = int_index(c, "index"), src = c.t("source");
        return {index_copy(x, c.i("dim"), i, src)};
      });
  def(
      reg, names("one_hot", kFunctional), "one_hot(Tensor input, int num_classes=-1) -> Tensor",
      [](Ctx& c) -> Outs { return {one_hot(c.t("input"), c.i("num_classes"))}; }, false);
  def(reg, names("diag", kTorch | kTensor), "diag(Tensor input, int diagonal=0) -> Tensor",
      [](Ctx& c) -> Outs { return {diag(c.t("input"), c.i("diagonal"))}; });
  def(reg, names("rot90", kTorch | kTensor), "rot90(Tensor input, int k=1, int[] dims=[0, 1]) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        return {rot90(x, c.i("k"), c.ints("dims"))};
      });
  def(
      reg, names("nonzero", kTorch | kTensor, {"Torch.argwhere", "Tensor.argwhere"}),
      "nonzero(Tensor input, *, bool as_tuple=False, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs { return nonzero(c.t("input"), c.b("as_tuple")); }, false);
  def(reg, names("roll", kTorch | kTensor), "roll(Tensor input, int[1] shifts, int[1] dims=[]) -> Tensor",
      [](Ctx& c) -> Outs { return {roll(c.t("input"), c.ints("shifts"), c.ints("dims"))}; });
  for (const bool lr : {true, false})
    def(reg, names(lr ? "fliplr" : "flipud", kTorch | kTensor),
        std::string(lr ? "fliplr" : "flipud") + "(Tensor input) -> Tensor",
        [lr](Ctx& c) -> Outs { return {flip_lr_ud(c.t("input"), lr)}; });
  def(reg, names("take", kTorch | kTensor), "take(Tensor input, Tensor index) -> Tensor", [](Ctx& c) -> Outs {
    Var x = c.t("input"), i = int_index(c, "index");
    return {take_flat(x, i, i.shape())};
  });
  def(reg, names("take_along_dim", kTorch | kTensor),
      "take_along_dim(Tensor input, Tensor indices, int? dim=None) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input"), i = int_index(c, "indices");
        return {take_along_dim(x, i, c.opt_i("dim"))};
      });
}

}  // namespace probe::runners
