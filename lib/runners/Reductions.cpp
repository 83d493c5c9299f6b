// Reductions, scans, norms, statistics, sort/topk (float64 reference).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "probe/error.h"
#include "runners/Ops.h"
#include "runners/RunnerKit.h"

namespace probe::runners {

namespace {

std::vector<std::int64_t> dims_of(const Ctx& c, const char* p) {
  if (c.none(p)) return {};
  return c.ints(p);
}

// Integer/bool inputs of sum/prod/cumsum accumulate in int64 unless a dtype is given.
DType acc_dtype(const Var& x, std::optional<DType> dt) {
  if (dt) return *dt;
  return is_floating(x.dtype()) ? x.dtype() : DType::Int64;
}

// How torch 1.13's CPU kernels order one slice: which algorithm runs decides where equal values land,
// so the bench runs the same standard algorithm with the same comparator on the same (value, position)
// pairs and gets the same indices (float64 values order exactly as the bf16/fp16/fp32 inputs do).
enum class SliceOrder { Sort, StableSort, TopK, KthSmallest };

using ValueAt = std::pair<double, std::int64_t>;
// NaN is larger than every number (numpy's order), as in torch's sort/topk comparators.
bool nan_last_less(const ValueAt& a, const ValueAt& b) {
  return (!std::isnan(a.first) && std::isnan(b.first)) || a.first < b.first;
}
bool nan_first_greater(const ValueAt& a, const ValueAt& b) {
  return (std::isnan(a.first) && !std::isnan(b.first)) || a.first > b.first;
}

// torch's quick-select (Sedgewick's partitioning, median-of-three pivot) used by kthvalue: puts the
// element of rank `k` at q[k].
void quick_select(std::vector<ValueAt>& q, std::int64_t k) {
  auto gt = [](double a, double b) { return (std::isnan(a) && !std::isnan(b)) || a > b; };
  auto at = [&](std::int64_t i) -> ValueAt& { return q[static_cast<std::size_t>(i)]; };
  auto swap_at = [&](std::int64_t i, std::int64_t j) { std::swap(at(i), at(j)); };
  std::int64_t lo = 0, hi = static_cast<std::int64_t>(q.size()) - 1;
  for (;;) {
    if (hi <= lo) return;
    if (hi == lo + 1) {
      if (gt(at(lo).first, at(hi).first)) swap_at(lo, hi);
      return;
    }
    swap_at((lo + hi) >> 1, lo + 1);
    if (gt(at(lo + 1).first, at(hi).first)) swap_at(lo + 1, hi);
    if (gt(at(lo).first, at(hi).first)) swap_at(lo, hi);
    if (gt(at(lo + 1).first, at(lo).first)) swap_at(lo + 1, lo);
    std::int64_t i = lo + 1, j = hi;
    const double pivot = at(lo).first;
    for (;;) {
      do ++i;
      while (gt(pivot, at(i).first));
      do --j;
      while (gt(at(j).first, pivot));
      if (j < i) break;
      swap_at(i, j);
    }
    swap_at(lo, j);
    if (j <= k) lo = i;
    if (j >= k) hi = j - 1;
  }
}

void order_slice(std::vector<ValueAt>& q, SliceOrder how, bool descending, std::int64_t k) {
  const auto cmp = descending ? nan_first_greater : nan_last_less;
  const auto n = static_cast<std::int64_t>(q.size());
  switch (how) {
    case SliceOrder::Sort:
      std::sort(q.begin(), q.end(), cmp);
      break;
    case SliceOrder::StableSort:
      std::stable_sort(q.begin(), q.end(), cmp);
      break;
    case SliceOrder::TopK:
      if (k == 0) break;
      if (k * 64 <= n) {
        std::partial_sort(q.begin(), q.begin() + k, q.end(), cmp);
      } else {
        std::nth_element(q.begin(), q.begin() + (k - 1), q.end(), cmp);
        std::sort(q.begin(), q.begin() + (k - 1), cmp);  // torch sorts only the first k-1
      }
      break;
    case SliceOrder::KthSmallest:
      quick_select(q, k);
      break;
  }
}

// The first `k` positions of each slice along `dim` in torch's order (see SliceOrder): flat source
// offsets (to gather values so gradients flow back) and the positions along dim (the index output).
std::pair<std::vector<std::int64_t>, Buffer> sort_along(const Var& x, int d, bool descending, std::int64_t k,
                                                        SliceOrder how = SliceOrder::Sort) {
  Shape s = x.shape().empty() ? Shape{1} : x.shape();
  std::int64_t outer = 1, len = s[static_cast<std::size_t>(d)], inner = 1;
  for (int i = 0; i < d; ++i) outer *= s[static_cast<std::size_t>(i)];
  for (std::size_t i = static_cast<std::size_t>(d) + 1; i < s.size(); ++i) inner *= s[i];
  const Buffer& xd = x.data();
  std::vector<ValueAt> q(static_cast<std::size_t>(len));
  const std::int64_t first = how == SliceOrder::KthSmallest ? k - 1 : 0;
  const std::int64_t count = how == SliceOrder::KthSmallest ? 1 : k;
  std::vector<std::int64_t> out_flat(static_cast<std::size_t>(outer * count * inner));
  Buffer out_idx(out_flat.size());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      const std::int64_t base = o * len * inner + i;
      for (std::int64_t j = 0; j < len; ++j)
        q[static_cast<std::size_t>(j)] = {xd[static_cast<std::size_t>(base + j * inner)], j};
      order_slice(q, how, descending, how == SliceOrder::KthSmallest ? k - 1 : k);
      for (std::int64_t j = 0; j < count; ++j) {
        const std::int64_t pos = q[static_cast<std::size_t>(first + j)].second;
        const auto at = static_cast<std::size_t>((o * count + j) * inner + i);
        out_flat[at] = base + pos * inner;
        out_idx[at] = static_cast<double>(pos);
      }
    }
  return {out_flat, out_idx};
}

Var vector_norm(const Var& x0, double ord, const std::vector<std::int64_t>& dims, bool keepdim,
                std::optional<DType> dtype) {
  Var x = dtype ? cast(x0, *dtype) : x0;
  if (!is_floating(x.dtype()))
    invalid(fmt::format("linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}",
                        name(x.dtype())));
  const auto rd = reduce_dims(x, dims);
  if (std::isinf(ord)) return amax(ops::abs(x), rd, keepdim, ord < 0);
  if (ord == 0) {
    Var nz = map(
        x, x.dtype(), [](double v) { return v != 0 ? 1.0 : 0.0; }, [](double, double) { return 0.0; });
    return runners::sum(nz, rd, keepdim, x.dtype());
  }
  if (ord == 1) return runners::sum(ops::abs(x), rd, keepdim, x.dtype());
  // sum(|x|^p)^(1/p) as one primitive so that the gradient at a zero norm is 0 (torch's masked formula).
  Var p_sum = runners::sum(map(
                               x, x.dtype(), [ord](double v) { return std::pow(std::fabs(v), ord); },
                               [](double, double) { return 0.0; }),
                           rd, keepdim, x.dtype());
  Buffer nv(p_sum.data().size());
  for (std::size_t i = 0; i < nv.size(); ++i)
    nv[i] = ord == 2 ? std::sqrt(p_sum.data()[i]) : std::pow(p_sum.data()[i], 1.0 / ord);
  detail::maybe_round_f32(nv, x.dtype());
  const Shape keep = [&] {
    Shape s = x.shape();
    for (int d : rd) s[static_cast<std::size_t>(d)] = 1;
    return s;
  }();
  const Buffer norms = nv;
  return make_result(p_sum.shape(), std::move(nv), x.dtype(), {x}, [x, norms, keep, ord](const Buffer& g) {
    // d||x||/dx = x |x|^(p-2) / ||x||^(p-1); 0 where the norm is 0.
    Var gn = make_leaf(keep, g, DType::Float64), nn = make_leaf(keep, norms, DType::Float64);
    Var ge = expand(gn, x.shape()), ne = expand(nn, x.shape());
    Buffer gx(x.data().size());
    for (std::size_t i = 0; i < gx.size(); ++i) {
      const double v = x.data()[i], n = ne.data()[i];
      if (n == 0) {
        gx[i] = 0;
        continue;
      }
      gx[i] = ord == 2 ? ge.data()[i] * v / n
                       : ge.data()[i] * v * std::pow(std::fabs(v), ord - 2) / std::pow(n, ord - 1);
    }
    return std::vector<Buffer>{std::move(gx)};
  });
}

// torch.var/std accept (dim, unbiased, keepdim), (unbiased) and (dim, *, correction, keepdim).
// var/std arguments: dim may be the legacy `unbiased` bool; correction wins over unbiased.
std::pair<std::vector<std::int64_t>, double> var_args(Ctx& c) {
  std::vector<std::int64_t> dims;
  double correction = 1;
  const Value& d = c["dim"];
  if (d.kind() == Value::Kind::Bool) {
    correction = d.as_bool() ? 1 : 0;
  } else if (!d.is_none()) {
    dims = d.as_int_list();
  }
  if (!c.none("unbiased")) correction = c.b("unbiased") ? 1 : 0;
  if (!c.none("correction")) correction = c.f("correction");
  return {dims, correction};
}

Var var_std(Ctx& c, bool is_std) {
  const auto [dims, correction] = var_args(c);
  Var v = ops::var(c.t("input"), dims, correction, c.b("keepdim"));
  return is_std ? ops::sqrt(v) : v;
}

// The runs of a tensor along one dim: f(base, stride, len) for every position of the other dims.
template <class F>
void each_run(const Var& x, int d, F f) {
  const Shape s = x.shape().empty() ? Shape{1} : x.shape();
  std::int64_t outer = 1, inner = 1;
  const std::int64_t len = s[static_cast<std::size_t>(d)];
  for (int i = 0; i < d; ++i) outer *= s[static_cast<std::size_t>(i)];
  for (std::size_t i = static_cast<std::size_t>(d) + 1; i < s.size(); ++i) inner *= s[i];
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) f(o * len * inner + i, inner, len);
}

int scan_dim(const Var& x, std::int64_t dim) {
  return x.ndim() == 0 ? wrap_dim(dim, 1) : wrap_dim(dim, x.ndim());
}

// cumprod with the exact gradient also where inputs are zero: dy_j/dx_i = prod_{k<=j, k!=i} x_k, summed as
// grad_i = (prod_{k<i} x_k) * t_i with t_i = g_i + x_{i+1} t_{i+1} (no division by x).
Var cumprod(const Var& x, int d, DType out) {
  Buffer y(x.data().size());
  const Buffer& xd = x.data();
  each_run(x, d, [&](std::int64_t b, std::int64_t st, std::int64_t n) {
    double acc = 1;
    for (std::int64_t k = 0; k < n; ++k) {
      const auto at = static_cast<std::size_t>(b + k * st);
      acc *= xd[at];
      y[at] = acc;
    }
  });
  if (!is_floating(out))
    for (double& v : y) v = round_to(v, out);
  return make_result(x.shape(), std::move(y), out, {x}, [x, d](const Buffer& g) {
    const Buffer& xv = x.data();
    Buffer gx(g.size());
    each_run(x, d, [&](std::int64_t b, std::int64_t st, std::int64_t n) {
      double t = 0;
      for (std::int64_t k = n - 1; k >= 0; --k) {
        const auto at = static_cast<std::size_t>(b + k * st);
        t = g[at] + (k + 1 < n ? xv[static_cast<std::size_t>(b + (k + 1) * st)] * t : 0.0);
        gx[at] = t;
      }
      double pre = 1;
      for (std::int64_t k = 0; k < n; ++k) {
        const auto at = static_cast<std::size_t>(b + k * st);
        gx[at] *= pre;
        pre *= xv[at];
      }
    });
    return std::vector<Buffer>{std::move(gx)};
  });
}

// out_j = log(sum_{k<=j} exp(x_k)); grad_i = sum_{j>=i} g_j exp(x_i - out_j), every exponent <= 0.
Var logcumsumexp(const Var& x, int d) {
  Buffer y(x.data().size());
  const Buffer& xd = x.data();
  each_run(x, d, [&](std::int64_t b, std::int64_t st, std::int64_t n) {
    double acc = -std::numeric_limits<double>::infinity();
    for (std::int64_t k = 0; k < n; ++k) {
      const auto at = static_cast<std::size_t>(b + k * st);
      const double v = xd[at];
      if (std::isnan(v) || std::isnan(acc))
        acc = std::nan("");
      else if (!(std::isinf(acc) && acc == v))
        acc = std::max(acc, v) + std::log1p(std::exp(-std::fabs(acc - v)));
      y[at] = acc;
    }
  });
  Var r = make_result(x.shape(), y, x.dtype(), {x}, [x, d, y](const Buffer& g) {
    const Buffer& xv = x.data();
    Buffer gx(g.size(), 0.0);
    each_run(x, d, [&](std::int64_t b, std::int64_t st, std::int64_t n) {
      for (std::int64_t i = 0; i < n; ++i) {
        const auto ai = static_cast<std::size_t>(b + i * st);
        if (xv[ai] == -std::numeric_limits<double>::infinity()) continue;
        double acc = 0;
        for (std::int64_t j = i; j < n; ++j) {
          const auto aj = static_cast<std::size_t>(b + j * st);
          acc += g[aj] * std::exp(xv[ai] - y[aj]);
        }
        gx[ai] = acc;
      }
    });
    return std::vector<Buffer>{std::move(gx)};
  });
  return r;
}

// cummax / cummin: torch's rule, a new element wins on ties (>= / <=) and every NaN wins; values gathered
// from the input so the gradient goes to the winning position.
std::pair<Var, Var> cum_extreme(const Var& x, int d, bool is_min) {
  const Buffer& xd = x.data();
  std::vector<std::int64_t> flat(xd.size());
  Buffer idx(xd.size());
  each_run(x, d, [&](std::int64_t b, std::int64_t st, std::int64_t n) {
    double best = 0;
    std::int64_t bi = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      const auto at = static_cast<std::size_t>(b + k * st);
      const double v = xd[at];
      if (k == 0 || std::isnan(v) || (!std::isnan(best) && (is_min ? v <= best : v >= best))) {
        best = v;
        bi = k;
      }
      flat[at] = b + bi * st;
      idx[at] = static_cast<double>(bi);
    }
  });
  return {take(x, std::move(flat), x.shape()), make_leaf(x.shape(), std::move(idx), DType::Int64)};
}

// The element of sorted rank `rank` along dim d (NaN sorts largest), values gathered from x so the gradient
// goes to that element; with `nan_wins` (median) a slice holding NaN yields its first NaN instead.
std::pair<Var, Var> select_rank(const Var& x, int d, std::int64_t rank, bool keepdim, bool nan_wins) {
  const std::int64_t len = x.ndim() == 0 ? 1 : x.shape()[static_cast<std::size_t>(d)];
  // median's nth_element orders by (value, position): a stable sort gives the same total order.
  // Named members, not a structured binding: clang 14 (the fuzzer build's compiler) cannot capture those.
  const auto sorted = sort_along(x, d, false, len, SliceOrder::StableSort);
  const auto& flat = sorted.first;
  const auto& idx = sorted.second;
  Shape out = x.shape().empty() ? Shape{} : x.shape();
  if (!out.empty()) out[static_cast<std::size_t>(d)] = 1;
  std::vector<std::int64_t> pick;
  Buffer pick_idx;
  const Buffer& xd = x.data();
  each_run(x, d, [&](std::int64_t b, std::int64_t st, std::int64_t n) {
    // sort_along's output for this run sits at the same positions (b + k * st) as the run itself
    std::int64_t chosen = b + rank * st;
    if (nan_wins)
      for (std::int64_t k = 0; k < n; ++k)
        if (std::isnan(xd[static_cast<std::size_t>(b + k * st)])) {
          pick.push_back(b + k * st);
          pick_idx.push_back(static_cast<double>(k));
          return;
        }
    pick.push_back(flat[static_cast<std::size_t>(chosen)]);
    pick_idx.push_back(idx[static_cast<std::size_t>(chosen)]);
  });
  // each_run visits outer-major, inner-minor: the order of a keepdim result
  Var v = take(x, std::move(pick), out);
  Var i = make_leaf(out, std::move(pick_idx), DType::Int64);
  if (!keepdim && x.ndim() > 0) {
    v = ops::squeeze(v, d);
    i = ops::squeeze(i, d);
  }
  return {v, i};
}

}  // namespace

void register_reduction_runners(RunnerRegistry& reg) {
  const unsigned red = kTorch | kTensor | kMint | kMsTensor;
  def(reg, names("sum", red | kAten, {"Aten.sum.dim_IntList"}),
      "sum(Tensor input, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
      [](Ctx& c) -> Outs {
        return {ops::sum(c.t("input"), dims_of(c, "dim"), c.b("keepdim"), c.dtype("dtype"))};
      });
  def(reg, names("nansum", kTorch | kTensor),
      "nansum(Tensor input, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        Var z = map(
            x, x.dtype(), [](double v) { return std::isnan(v) ? 0.0 : v; },
            [](double v, double) { return std::isnan(v) ? 0.0 : 1.0; });
        return {ops::sum(z, dims_of(c, "dim"), c.b("keepdim"), c.dtype("dtype"))};
      });
  def(reg, names("mean", red | kAten, {"Aten.mean.dim"}),
      "mean(Tensor input, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
      [](Ctx& c) -> Outs {
        return {ops::mean(c.t("input"), dims_of(c, "dim"), c.b("keepdim"), c.dtype("dtype"))};
      });
  def(reg, names("prod", red),
      "prod(Tensor input, int? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const DType dt = acc_dtype(x, c.dtype("dtype"));
        Var in = cast(x, dt);
        std::vector<std::int64_t> dims;
        if (auto d = c.opt_i("dim")) dims = {*d};
        return {prod(in, reduce_dims(in, dims), c.none("dim") ? false : c.b("keepdim"), dt)};
      });
  def(reg, names("cumsum", kTorch | kTensor | kInplace | kMint | kMsOps),
      "cumsum(Tensor input, int dim, *, ScalarType? dtype=None) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const DType dt = acc_dtype(x, c.dtype("dtype"));
        return {cumsum(cast(x, dt), static_cast<int>(c.i("dim")), dt)};
      });
  def(reg, names("cumprod", kTorch | kTensor | kInplace),
      "cumprod(Tensor input, int dim, *, ScalarType? dtype=None) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const DType dt = acc_dtype(x, c.dtype("dtype"));
        return {cumprod(cast(x, dt), scan_dim(x, c.i("dim")), dt)};
      });
  def(reg, names("logcumsumexp", kTorch | kTensor), "logcumsumexp(Tensor input, int dim) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        if (!is_floating(x.dtype())) invalid("logcumsumexp(): expected a floating input");
        return {logcumsumexp(x, scan_dim(x, c.i("dim")))};
      });
  for (const bool is_min : {false, true}) {
    const std::string fn = is_min ? "cummin" : "cummax";
    def(reg, names(fn, kTorch | kTensor), fn + "(Tensor input, int dim) -> Tensor", [is_min](Ctx& c) -> Outs {
      Var x = c.t("input");
      auto [v, i] = cum_extreme(x, scan_dim(x, c.i("dim")), is_min);
      return {v, i};
    });
  }
  for (const bool is_min : {false, true}) {
    const std::string fn = is_min ? "min" : "max";
    // max(input) / max(input, dim, keepdim) -> (values, indices) / max(input, other) = maximum.
    def(reg, names(fn, red | kMsOps), fn + "(Tensor input, Any dim=None, bool keepdim=False) -> Tensor",
        [is_min](Ctx& c) -> Outs {
          Var x = c.t("input");
          const Value& d = c["dim"];
          if (d.is_tensor()) return {is_min ? ops::minimum(x, c.t("dim")) : ops::maximum(x, c.t("dim"))};
          if (d.is_none()) {
            if (x.numel() == 0)
              invalid(
                  "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                  "reduction "
                  "dim with the 'dim' argument.");
            return {amax(x, reduce_dims(x, {}), false, is_min)};
          }
          auto [v, i] = max_dim(x, static_cast<int>(d.as_int()), c.b("keepdim"), is_min);
          return {v, i};
        });
    const std::string afn = is_min ? "amin" : "amax";
    def(reg, names(afn, red | kMsOps), afn + "(Tensor input, int[1] dim=[], bool keepdim=False) -> Tensor",
        [is_min](Ctx& c) -> Outs {
          Var x = c.t("input");
          return {amax(x, reduce_dims(x, c.ints("dim")), c.b("keepdim"), is_min)};
        });
    const std::string argfn = is_min ? "argmin" : "argmax";
    def(
        reg, names(argfn, red | kMsOps),
        argfn + "(Tensor input, int? dim=None, bool keepdim=False) -> Tensor",
        [is_min](Ctx& c) -> Outs {
          Var x = c.t("input");
          if (c.none("dim")) {
            Var flat = reshape(x, {x.numel()});
            auto r = max_dim(flat, 0, false, is_min).second;
            return {c.b("keepdim") ? reshape(r, Shape(static_cast<std::size_t>(x.ndim()), 1)) : r};
          }
          return {max_dim(x, static_cast<int>(c.i("dim")), c.b("keepdim"), is_min).second};
        },
        false);
  }
  auto all_any = [&](const char* fn, bool is_all) {
    def(
        reg, names(fn, red),
        std::string(fn) + "(Tensor input, int[1]? dim=None, bool keepdim=False) -> Tensor",
        [is_all](Ctx& c) -> Outs {
          Var x = c.t("input");
          Var nz = map(
              x, DType::Bool, [](double v) { return v != 0 ? 1.0 : 0.0; },
              [](double, double) { return 0.0; });
          Var m = amax(nz, reduce_dims(nz, dims_of(c, "dim")), c.b("keepdim"), is_all);
          if (x.numel() == 0) m = full(m.shape(), is_all ? 1.0 : 0.0, DType::Bool);
          return {cast(m, x.dtype() == DType::UInt8 ? DType::UInt8 : DType::Bool)};
        },
        false);
  };
  all_any("all", true);
  all_any("any", false);

  def(reg, names("logsumexp", kTorch | kTensor | kMint | kMsOps),
      "logsumexp(Tensor input, int[1] dim, bool keepdim=False) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input");
        if (!is_floating(x.dtype())) x = cast(x, DType::Float32);
        const auto rd = reduce_dims(x, c.ints("dim"));
        // max-shifted like torch; an infinite max is replaced by 0 so that all -inf rows give -inf.
        Var m = detach(amax(x, rd, true, false));
        for (double& v : m.node()->data)
          if (std::isinf(v)) v = 0;
        Var s = runners::sum(ops::exp(ops::sub(x, m)), rd, true, x.dtype());
        Var r = ops::add(ops::log(s), m);
        if (!c.b("keepdim"))
          for (auto it = rd.rbegin(); it != rd.rend(); ++it) r = ops::squeeze(r, *it);
        return {r};
      });
  def(reg, names("var", red),
      "var(Tensor input, Any dim=None, bool? unbiased=None, bool keepdim=False, *, Scalar? correction=None) "
      "-> Tensor",
      [](Ctx& c) -> Outs { return {var_std(c, false)}; });
  def(reg, names("std", red),
      "std(Tensor input, Any dim=None, bool? unbiased=None, bool keepdim=False, *, Scalar? correction=None) "
      "-> Tensor",
      [](Ctx& c) -> Outs { return {var_std(c, true)}; });
  for (const bool is_std : {false, true}) {
    const std::string fn = is_std ? "std_mean" : "var_mean";
    def(reg, names(fn, kTorch),
        fn + "(Tensor input, Any dim=None, bool? unbiased=None, bool keepdim=False, *, Scalar? "
             "correction=None) "
             "-> Tensor",
        [is_std](Ctx& c) -> Outs {
          const auto dims = var_args(c).first;
          return {var_std(c, is_std), ops::mean(c.t("input"), dims, c.b("keepdim"))};
        });
  }
  def(reg, names("nanmean", kTorch | kTensor),
      "nanmean(Tensor input, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        if (!is_floating(x.dtype())) invalid("nanmean(): expected input to have floating point dtype");
        const auto dims = dims_of(c, "dim");
        const bool keep = c.b("keepdim");
        // nansum's NaN -> 0 with gradient grad * (x == x), as torch: an all-NaN slice (count 0) gets NaN.
        Var kept = map(
            x, x.dtype(), [](double v) { return std::isnan(v) ? 0.0 : v; },
            [](double v, double) { return std::isnan(v) ? 0.0 : 1.0; });
        Var count = ops::sum(cast(map(
                                      x, x.dtype(), [](double v) { return std::isnan(v) ? 0.0 : 1.0; },
                                      [](double, double) { return 0.0; }),
                                  x.dtype()),
                             dims, keep);
        Var r = ops::div(ops::sum(kept, dims, keep), detach(count));
        if (auto dt = c.dtype("dtype")) r = cast(r, *dt);
        return {r};
      });
  def(
      reg, names("count_nonzero", kTorch | kTensor),
      "count_nonzero(Tensor input, int[1]? dim=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        Var nz = map(
            x, DType::Int64, [](double v) { return v != 0 ? 1.0 : 0.0; }, [](double, double) { return 0.0; });
        return {runners::sum(nz, reduce_dims(x, dims_of(c, "dim")), false, DType::Int64)};
      },
      false);
  def(
      reg, names("aminmax", kTorch | kTensor, {"Torch._aminmax"}),
      "aminmax(Tensor input, *, int? dim=None, bool keepdim=False) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        if (x.numel() == 0) invalid("aminmax(): cannot compute aminmax over an empty dimension");
        std::vector<std::int64_t> dims;
        if (auto d = c.opt_i("dim")) dims = {*d};
        const auto rd = reduce_dims(x, dims);
        const bool keep = c.b("keepdim");
        return {amax(x, rd, keep, true), amax(x, rd, keep, false)};
      },
      false);  // torch 1.13: "derivative for aten::aminmax is not implemented"
  def(reg, names("median", kTorch | kTensor),
      "median(Tensor input, int? dim=None, bool keepdim=False) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input");
        if (c.none("dim")) {  // the lower median of all elements, a 0-d tensor
          if (x.numel() == 0) return {full({}, std::nan(""), x.dtype())};
          Var flat = reshape(x, {x.numel()});
          return {select_rank(flat, 0, (x.numel() - 1) / 2, false, true).first};
        }
        const int d = x.ndim() == 0 ? 0 : wrap_dim(c.i("dim"), x.ndim());
        const std::int64_t len = x.ndim() == 0 ? 1 : x.shape()[static_cast<std::size_t>(d)];
        if (len == 0) invalid("median(): Expected reduction dim to have non-zero size.");
        auto [v, i] = select_rank(x, d, (len - 1) / 2, c.b("keepdim"), true);
        return {v, i};
      });
  def(reg, names("kthvalue", kTorch | kTensor),
      "kthvalue(Tensor input, int k, int dim=-1, bool keepdim=False) -> Tensor", [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const int d = x.ndim() == 0 ? 0 : wrap_dim(c.i("dim"), x.ndim());
        const std::int64_t len = x.ndim() == 0 ? 1 : x.shape()[static_cast<std::size_t>(d)];
        const std::int64_t k = c.i("k");
        if (k < 1 || k > len)
          invalid(fmt::format("kthvalue(): selected number k out of range for dimension {}", d));
        auto [flat, idx] = sort_along(x, d, false, k, SliceOrder::KthSmallest);
        Shape out = x.shape();
        if (!out.empty()) out[static_cast<std::size_t>(d)] = 1;
        Var v = take(x, std::move(flat), out);
        Var i = make_leaf(out, std::move(idx), DType::Int64);
        if (!c.b("keepdim") && x.ndim() > 0) {
          v = ops::squeeze(v, d);
          i = ops::squeeze(i, d);
        }
        return {v, i};
      });
  def(reg, names("mode", kTorch | kTensor),
      "mode(Tensor input, int dim=-1, bool keepdim=False) -> (Tensor, Tensor)", [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const int d = x.ndim() == 0 ? 0 : wrap_dim(c.i("dim"), x.ndim());
        Shape out = x.shape();
        if (!out.empty()) out[static_cast<std::size_t>(d)] = 1;
        std::vector<std::int64_t> pick;
        Buffer pick_idx;
        const Buffer& xd = x.data();
        std::vector<ValueAt> q;
        each_run(x, d, [&](std::int64_t b, std::int64_t st, std::int64_t n) {
          if (n == 0) invalid("mode(): Expected reduction dim to have non-zero size.");
          q.resize(static_cast<std::size_t>(n));
          for (std::int64_t k = 0; k < n; ++k)
            q[static_cast<std::size_t>(k)] = {xd[static_cast<std::size_t>(b + k * st)], k};
          // torch 1.13's CPU kernel: std::sort by value alone, then the first longest run of equal
          // values wins, reported with the position of that run's last element.
          std::sort(q.begin(), q.end(), [](const ValueAt& u, const ValueAt& v) { return u.first < v.first; });
          std::int64_t best = 0, best_len = 0, run = 0;
          for (std::int64_t k = 0; k < n; ++k) {
            ++run;
            if (k == n - 1 ||
                q[static_cast<std::size_t>(k)].first != q[static_cast<std::size_t>(k + 1)].first) {
              if (run > best_len) {
                best_len = run;
                best = q[static_cast<std::size_t>(k)].second;
              }
              run = 0;
            }
          }
          pick.push_back(b + best * st);
          pick_idx.push_back(static_cast<double>(best));
        });
        Var v = take(x, std::move(pick), out);
        Var i = make_leaf(out, std::move(pick_idx), DType::Int64);
        if (!c.b("keepdim") && x.ndim() > 0) {
          v = ops::squeeze(v, d);
          i = ops::squeeze(i, d);
        }
        return {v, i};
      });
  def(reg, names("msort", kTorch | kTensor), "msort(Tensor input) -> Tensor", [](Ctx& c) -> Outs {
    Var x = c.t("input");
    if (x.ndim() == 0) return {x};
    auto [flat, idx] = sort_along(x, 0, false, x.shape()[0]);
    return {take(x, flat, x.shape())};
  });
  def(reg, names("dist", kTorch | kTensor), "dist(Tensor input, Tensor other, Scalar p=2) -> Tensor",
      [](Ctx& c) -> Outs {
        return {vector_norm(ops::sub(c.t("input"), c.t("other")), c.f("p"), {}, false, std::nullopt)};
      });
  def(reg, names("cdist", kTorch),
      "cdist(Tensor x1, Tensor x2, float p=2.0, str? compute_mode=None) -> Tensor", [](Ctx& c) -> Outs {
        Var a = c.t("x1"), b = c.t("x2");
        if (a.ndim() < 2 || b.ndim() < 2) invalid("cdist only supports at least 2D tensors");
        if (a.shape().back() != b.shape().back())
          invalid(fmt::format("X1 and X2 must have the same number of columns. X1: {} X2: {}",
                              a.shape().back(), b.shape().back()));
        const double p = c.f("p");
        if (p < 0) invalid("cdist only supports non-negative p values");
        // |x1[..., i, :] - x2[..., j, :]|_p from the broadcast difference (the exact definition)
        Var d = ops::sub(ops::unsqueeze(a, -2), ops::unsqueeze(b, -3));
        return {vector_norm(d, p, {-1}, false, std::nullopt)};
      });
  auto cross = [](const Var& a, const Var& b, std::optional<std::int64_t> dim) {
    const Shape s = broadcast_shapes(a.shape(), b.shape());
    Var x = expand(a, s), y = expand(b, s);
    int d = -1;
    if (dim) {
      d = wrap_dim(*dim, static_cast<int>(s.size()));
    } else {
      for (std::size_t k = 0; k < s.size() && d < 0; ++k)
        if (s[k] == 3) d = static_cast<int>(k);
      if (d < 0) invalid("no dimension of size 3 in input");
    }
    if (s[static_cast<std::size_t>(d)] != 3)
      invalid(fmt::format("linalg.cross: inputs dimension {} must have length 3. Got {} and {}", d,
                          a.ndim() > d ? a.shape()[static_cast<std::size_t>(d)] : 0,
                          b.ndim() > d ? b.shape()[static_cast<std::size_t>(d)] : 0));
    auto at = [d](const Var& v, std::int64_t i) { return slice(v, d, i, i + 1, 1); };
    Var c0 = ops::sub(ops::mul(at(x, 1), at(y, 2)), ops::mul(at(x, 2), at(y, 1)));
    Var c1 = ops::sub(ops::mul(at(x, 2), at(y, 0)), ops::mul(at(x, 0), at(y, 2)));
    Var c2 = ops::sub(ops::mul(at(x, 0), at(y, 1)), ops::mul(at(x, 1), at(y, 0)));
    return cat({c0, c1, c2}, d);
  };
  def(reg, names("cross", kTorch | kTensor), "cross(Tensor input, Tensor other, int? dim=None) -> Tensor",
      [cross](Ctx& c) -> Outs { return {cross(c.t("input"), c.t("other"), c.opt_i("dim"))}; });
  def(reg, {"Torch.linalg.cross"}, "cross(Tensor input, Tensor other, *, int dim=-1) -> Tensor",
      [cross](Ctx& c) -> Outs { return {cross(c.t("input"), c.t("other"), c.i("dim"))}; });
  // ---- normalisation and distances built on vector_norm (its gradient is 0 at a zero norm, like torch) ----
  def(reg, names("normalize", kFunctional),
      "normalize(Tensor input, float p=2.0, int dim=1, float eps=1e-12, Tensor? out=None) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        Var n = vector_norm(x, c.f("p"), {c.i("dim")}, true, std::nullopt);
        const double eps = c.f("eps");
        Var d = map(
            n, n.dtype(), [eps](double v) { return std::isnan(v) ? v : std::max(v, eps); },
            [eps](double v, double) { return v >= eps ? 1.0 : 0.0; });
        return {ops::div(x, d)};
      });
  def(reg, names("cosine_similarity", kFunctional | kTorch),
      "cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-8) -> Tensor", [](Ctx& c) -> Outs {
        // torch >= 1.13: sum((x1 / max(||x1||, eps)) * (x2 / max(||x2||, eps)), dim) after broadcasting
        Var a = c.t("x1"), b = c.t("x2");
        const Shape s = broadcast_shapes(a.shape(), b.shape());
        a = expand(a, s);
        b = expand(b, s);
        const std::int64_t dim = c.i("dim");
        const double eps = c.f("eps");
        auto unit = [dim, eps](const Var& v) {
          Var n = vector_norm(v, 2.0, {dim}, true, std::nullopt);
          Var d = map(
              n, n.dtype(), [eps](double u) { return std::isnan(u) ? u : std::max(u, eps); },
              [eps](double u, double) { return u >= eps ? 1.0 : 0.0; });
          return ops::div(v, d);
        };
        return {ops::sum(ops::mul(unit(a), unit(b)), {dim})};
      });
  def(reg, names("pairwise_distance", kFunctional | kTorch),
      "pairwise_distance(Tensor x1, Tensor x2, float p=2.0, float eps=1e-6, bool keepdim=False) -> Tensor",
      [](Ctx& c) -> Outs {
        Var a = c.t("x1"), b = c.t("x2");
        const int nd = std::max(a.ndim(), b.ndim());
        Var d = ops::add(ops::sub(a, b), ops::scalar_like(c.f("eps"), a));
        return {vector_norm(d, c.f("p"), {nd == 0 ? 0 : -1}, c.b("keepdim"), std::nullopt)};
      });
  def(reg, {"Torch.linalg.vector_norm", "Aten.linalg_vector_norm.default", "ms:Mint.linalg.vector_norm"},
      "vector_norm(Tensor input, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? "
      "dtype=None) -> Tensor",
      [](Ctx& c) -> Outs {
        return {vector_norm(c.t("input"), c.f("ord"), dims_of(c, "dim"), c.b("keepdim"), c.dtype("dtype"))};
      });
  def(reg, names("norm", kTorch | kTensor | kMint | kMsOps),
      "norm(Tensor input, Any p='fro', int[1]? dim=None, bool keepdim=False, *, Tensor? out=None, "
      "ScalarType? dtype=None) -> Tensor",
      [](Ctx& c) -> Outs {
        const Value& p = c["p"];
        double ord = 2;
        if (p.kind() == Value::Kind::String) {
          if (p.as_string() != "fro")
            throw Error(ErrorKind::Unsupported,
                        fmt::format("norm with p='{}' is not supported", p.as_string()));
        } else if (!p.is_none()) {
          ord = p.as_double();
        }
        return {vector_norm(c.t("input"), ord, dims_of(c, "dim"), c.b("keepdim"), c.dtype("dtype"))};
      });
  def(reg, names("topk", kTorch | kTensor | kMint | kMsOps),
      "topk(Tensor input, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor, Tensor)",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const int d = x.ndim() == 0 ? 0 : wrap_dim(c.i("dim"), x.ndim());
        const std::int64_t len = x.ndim() == 0 ? 1 : x.shape()[static_cast<std::size_t>(d)];
        const std::int64_t k = c.i("k");
        if (k < 0 || k > len) invalid("selected index k out of range");
        auto [flat, idx] = sort_along(x, d, c.b("largest"), k, SliceOrder::TopK);
        Shape s = x.shape();
        if (!s.empty()) s[static_cast<std::size_t>(d)] = k;
        return {take(x, flat, s), make_leaf(s, idx, DType::Int64)};
      });
  def(reg, names("sort", kTorch | kTensor | kMint | kMsOps),
      "sort(Tensor input, int dim=-1, bool descending=False, *, bool? stable=False) -> (Tensor, Tensor)",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const int d = x.ndim() == 0 ? 0 : wrap_dim(c.i("dim"), x.ndim());
        const std::int64_t len = x.ndim() == 0 ? 1 : x.shape()[static_cast<std::size_t>(d)];
        const bool stable = !c.none("stable") && c.b("stable");
        auto [flat, idx] =
            sort_along(x, d, c.b("descending"), len, stable ? SliceOrder::StableSort : SliceOrder::Sort);
        return {take(x, flat, x.shape()), make_leaf(x.shape(), idx, DType::Int64)};
      });
  def(
      reg, names("argsort", kTorch | kTensor | kMint),
      "argsort(Tensor input, int dim=-1, bool descending=False, *, bool stable=False) -> Tensor",
      [](Ctx& c) -> Outs {
        Var x = c.t("input");
        const int d = x.ndim() == 0 ? 0 : wrap_dim(c.i("dim"), x.ndim());
        const std::int64_t len = x.ndim() == 0 ? 1 : x.shape()[static_cast<std::size_t>(d)];
        const SliceOrder how = c.b("stable") ? SliceOrder::StableSort : SliceOrder::Sort;
        return {make_leaf(x.shape(), sort_along(x, d, c.b("descending"), len, how).second, DType::Int64)};
      },
      false);
}

}  // namespace probe::runners
