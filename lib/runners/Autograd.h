// Internal: a small reverse-mode autograd over float64 arrays. Every value is a Var: float64 data,
// a shape, and the dtype the API would produce on the device (its "logical" dtype). Primitives record
// a closure that maps the output gradient to input gradients, so composite runners written from
// primitives get backward for free. Integers and bools are held as exact doubles (|v| <= 2^53 checked
// at the boundaries).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "probe/dtype.h"
#include "probe/tensor.h"
#include "support/LargeAlloc.h"

namespace probe::runners {

/// Allocator whose value-initialisation (`Buffer(n)`, `resize(n)`) leaves doubles unset: every runner
/// writes its outputs and gradients in full, so zero-filling them first is wasted work. Code that needs zeros
/// says so (`Buffer(n, 0.0)`, `assign(n, 0.0)`). Debug and sanitizer builds fill such elements with NaN
/// instead, so a site that reads before writing fails the tests.
template <class T>
struct UninitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() noexcept = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U>&) noexcept {}
  // Large buffers on huge pages (support/LargeAlloc.h): their page faults were a quarter of run_ut's time.
  T* allocate(std::size_t n) {
    if (n > std::size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(probe::detail::allocate_tensor_bytes(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t) noexcept { probe::detail::free_tensor_bytes(p); }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0 && std::is_floating_point_v<U>) {
#if !defined(NDEBUG) || defined(__SANITIZE_ADDRESS__) || defined(PROBE_POISON_UNINITIALIZED)
      ::new (static_cast<void*>(p)) U(std::numeric_limits<U>::quiet_NaN());
#else
      ::new (static_cast<void*>(p)) U;
#endif
    } else {
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
  }
};
template <class T, class U>
bool operator==(const UninitAllocator<T>&, const UninitAllocator<U>&) noexcept {
  return true;
}

using Buffer = std::vector<double, UninitAllocator<double>>;
struct Node;

/// A node of the autograd graph (value plus how to push gradients to its parents).
class Var {
 public:
  Var() = default;
  explicit Var(std::shared_ptr<Node> n) : n_(std::move(n)) {}
  const Shape& shape() const;
  const Buffer& data() const;
  DType dtype() const;
  std::int64_t numel() const;
  int ndim() const;
  std::int64_t size(int dim) const;  ///< dim may be negative
  bool wrapped() const;              ///< a Python number (type promotion treats it specially)
  bool requires_grad() const;
  double item() const;  ///< the single element; throws if numel != 1
  Node* node() const { return n_.get(); }
  const std::shared_ptr<Node>& ptr() const { return n_; }
  explicit operator bool() const { return static_cast<bool>(n_); }

 private:
  std::shared_ptr<Node> n_;
};

/// Gradient closure: output gradient -> one gradient buffer per parent (an empty buffer is "no gradient"
/// unless the parent itself has no elements).
using VjpFn = std::function<std::vector<Buffer>(const Buffer& grad_out)>;

struct Node {
  Shape shape;
  Buffer data;
  DType dtype = DType::Float64;
  bool wrapped = false;
  bool requires_grad = false;
  std::vector<Var> parents;
  VjpFn vjp;
  Buffer grad;  // filled by backward()
  bool has_grad = false;
};

// ---- Evaluation mode (per thread) --------------------------------------------------------------
/// While alive, primitives record gradient closures (only for inputs that require grad).
struct GradMode {
  explicit GradMode(bool on);
  ~GradMode();
  static bool enabled();
  bool prev;
};
/// While alive, every floating primitive result is rounded to float32 (device emulation: float32
/// compute inside each op) and matmuls run in float32.
struct EmulateFloat32 {
  explicit EmulateFloat32(bool on);
  ~EmulateFloat32();
  static bool enabled();
  bool prev;
};

// ---- Construction ------------------------------------------------------------------------------
/// A leaf from a probe::Tensor (any real dtype); the logical dtype is the tensor's dtype.
Var from_tensor(const Tensor& t, bool requires_grad);
/// The elements of a real tensor as float64 (the one widening copy of an input). Throws Unsupported for
/// complex tensors and for 64-bit integers beyond 2^53.
Buffer widen(const Tensor& t);
/// A leaf with given data.
Var make_leaf(Shape shape, Buffer data, DType dtype, bool requires_grad = false);
/// A Python number as a wrapped 0-d value (bool -> Bool, int -> Int64, float -> Float64 marked wrapped).
Var wrapped_scalar(double v, DType dtype);
/// A constant-filled value.
Var full(Shape shape, double v, DType dtype);
/// Result of a custom primitive: `parents` get gradients from `vjp` if any of them requires grad.
Var make_result(Shape shape, Buffer data, DType dtype, std::vector<Var> parents, VjpFn vjp);
/// The value without its graph (no gradient flows through it).
Var detach(const Var& v);
/// Same data, different logical dtype, gradient passes through (for float<->float casts).
Var relabel(const Var& v, DType dtype);

/// Converts a result to a probe::Tensor: floating -> Float64 data, integers/bools in their own dtype.
Tensor to_tensor(const Var& v);
/// Same, taking over the buffer when `v` is the last reference to a graph-free result.
Tensor to_tensor(Var&& v);
/// Rounds floating data to the logical dtype and returns a Tensor of that dtype (device emulation).
Tensor to_device_tensor(const Var& v);
/// Rounds a double as a cast to `dtype` would (float16/bfloat16/float32 rounding; ints truncate).
double round_to(double v, DType dtype);

/// Back-propagates: seeds each output with its gradient (empty buffer = none) and fills Node::grad of
/// every reachable node that requires grad.
void backward(const std::vector<Var>& outputs, const std::vector<Buffer>& grads);

// ---- Shapes and type promotion -----------------------------------------------------------------
int wrap_dim(std::int64_t dim, int ndim);  ///< Python-style negative dims; throws on out of range
Shape broadcast_shapes(const Shape& a, const Shape& b);
std::vector<std::int64_t> contiguous_strides(const Shape& s);
/// torch.promote_types.
DType promote_types(DType a, DType b);
/// torch.result_type over operands (tensors with dims > 0-d tensors > wrapped numbers).
DType result_type(std::span<const Var> operands);
inline DType result_type(std::initializer_list<Var> ops) {
  return result_type(std::span<const Var>(ops.begin(), ops.size()));
}
/// The default floating dtype (float32) when `t` is integral/bool, else t (ops like sqrt, true div).
DType float_or_default(DType t);
/// Largest tensor a runner creates (2 GiB of float64): larger results from hostile or mistaken arguments
/// (expand to 10^10 elements, ...) are Error(Unsupported) instead of an exhausted machine.
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 28;
/// numel(shape), throwing Unsupported above kMaxElements.
std::int64_t checked_numel(const Shape& shape);
/// Reduces a broadcast gradient of shape `from` back to `to` (sums broadcast dims). Equal shapes return
/// `g` itself: pass it as an rvalue to avoid the copy.
Buffer sum_to(Buffer g, const Shape& from, const Shape& to);
/// Throws Unsupported if an integer value does not fit the exact double range.
void check_exact_int(double v);

// ---- Elementwise primitives --------------------------------------------------------------------
/// y = f(x) with dy/dx = df(x, y); output dtype `out`.
template <class F, class DF>
Var map(const Var& x, DType out, F f, DF df);
/// z = f(a, b) with broadcasting; dz/da = da(a, b, z), dz/db = db(a, b, z).
template <class F, class DA, class DB>
Var zip(const Var& a, const Var& b, DType out, F f, DA da, DB db);
/// Non-differentiable elementwise with broadcasting (comparisons, logical ops, integer ops).
template <class F>
Var zip_nograd(const Var& a, const Var& b, DType out, F f);

/// Iterates a broadcast of a and b into out_shape, calling fn(out_index, a_index, b_index).
/// inner(o, ia, sa, ib, sb, n) handles n consecutive outputs from o; a advances by sa (0 or 1) from ia.
using BroadcastInner = std::function<void(std::int64_t o, std::int64_t ia, std::int64_t sa, std::int64_t ib,
                                          std::int64_t sb, std::int64_t n)>;
void broadcast_loop(const Shape& out, const Shape& a, const Shape& b, const BroadcastInner& inner);

// ---- Structural primitives (all differentiable) ------------------------------------------------
/// out[i] = x.flat[idx[i]], shaped `shape` (gather, slicing, permute, expand, advanced indexing).
Var take(const Var& x, std::vector<std::int64_t> idx, Shape shape);
/// x with x.flat[idx[i]] = src.flat[i] (accumulate: +=). Duplicate indices without accumulate: last wins.
Var put(const Var& x, std::vector<std::int64_t> idx, const Var& src, bool accumulate);
Var reshape(const Var& x, Shape shape);  ///< shape may contain one -1
Var permute(const Var& x, std::vector<std::int64_t> dims);
Var transpose(const Var& x, std::int64_t d0, std::int64_t d1);
Var expand(const Var& x, Shape shape);  ///< torch.expand (-1 keeps a dim)
Var slice(const Var& x, std::int64_t dim, std::int64_t start, std::int64_t stop, std::int64_t step);
Var index_select(const Var& x, std::int64_t dim, const std::vector<std::int64_t>& index);
Var cat(const std::vector<Var>& xs, std::int64_t dim);
Var where(const Var& cond, const Var& a, const Var& b);
Var cast(const Var& x, DType dtype);  ///< .to(dtype): float->int truncates, ->bool is != 0

// ---- Reductions --------------------------------------------------------------------------------
/// Normalised reduction dims (empty list = all dims, as torch's dim=None).
std::vector<int> reduce_dims(const Var& x, const std::vector<std::int64_t>& dims);
Var sum(const Var& x, const std::vector<int>& dims, bool keepdim, DType out);
/// max/min along one dim with indices (first occurrence; NaN wins, like torch).
std::pair<Var, Var> max_dim(const Var& x, int dim, bool keepdim, bool is_min);
/// amax/amin over dims; gradient shared equally between ties (torch semantics).
Var amax(const Var& x, const std::vector<int>& dims, bool keepdim, bool is_min);
Var prod(const Var& x, const std::vector<int>& dims, bool keepdim, DType out);
Var cumsum(const Var& x, int dim, DType out);

// ---- Linear algebra ----------------------------------------------------------------------------
/// Batched matrix product [..., m, k] x [..., k, n] with broadcast batch dims (torch.matmul for >=2-d).
Var bmm_broadcast(const Var& a, const Var& b, DType out);
/// Raw float64 GEMM used by bmm (exposed for the benchmark): C[m,n] = A[m,k] * B[k,n], row-major. With
/// PROBE_USE_OPENBLAS (the default) it is OpenBLAS's dgemm, loaded on first use (LazyBlas.h; its
/// single-threaded build under a SerialBlasScope), else Eigen's.
void gemm(const double* a, const double* b, double* c, std::int64_t m, std::int64_t k, std::int64_t n);
/// C = op(A) op(B) (C += ... when accumulate) with op(A) = A^T when trans_a (A stored [k, m]) and
/// op(B) = B^T when trans_b (B stored [n, k]).
void gemm(const double* a, const double* b, double* c, std::int64_t m, std::int64_t k, std::int64_t n,
          bool trans_a, bool trans_b, bool accumulate = false);

// ---- Template implementations ------------------------------------------------------------------
namespace detail {
void maybe_round_f32(Buffer& data, DType dtype);
}

template <class F, class DF>
Var map(const Var& x, DType out, F f, DF df) {
  const Buffer& xd = x.data();
  Buffer y(xd.size());
  for (std::size_t i = 0; i < xd.size(); ++i) y[i] = f(xd[i]);
  detail::maybe_round_f32(y, out);
  VjpFn vjp;
  if (GradMode::enabled() && x.requires_grad()) {
    vjp = [x, df, yv = y](const Buffer& g) {
      const Buffer& xv = x.data();
      Buffer gx(g.size());
      for (std::size_t i = 0; i < g.size(); ++i) gx[i] = g[i] * df(xv[i], yv[i]);
      return std::vector<Buffer>{std::move(gx)};
    };
  }
  return make_result(x.shape(), std::move(y), out, {x}, std::move(vjp));
}

template <class F>
Var zip_nograd(const Var& a, const Var& b, DType out, F f) {
  Shape s = broadcast_shapes(a.shape(), b.shape());
  Buffer z(static_cast<std::size_t>(probe::numel(s)));
  const double* ad = a.data().data();
  const double* bd = b.data().data();
  double* zd = z.data();
  if (a.shape() == b.shape()) {
    for (std::size_t i = 0; i < z.size(); ++i) zd[i] = f(ad[i], bd[i]);
  } else if (b.numel() == 1 && a.shape() == s) {
    const double bv = bd[0];
    for (std::size_t i = 0; i < z.size(); ++i) zd[i] = f(ad[i], bv);
  } else {
    broadcast_loop(s, a.shape(), b.shape(),
                   [&](std::int64_t o, std::int64_t ia, std::int64_t sa, std::int64_t ib, std::int64_t sb,
                       std::int64_t n) {
                     for (std::int64_t j = 0; j < n; ++j) zd[o + j] = f(ad[ia + sa * j], bd[ib + sb * j]);
                   });
  }
  return make_result(std::move(s), std::move(z), out, {}, {});
}

template <class F, class DA, class DB>
Var zip(const Var& a, const Var& b, DType out, F f, DA da, DB db) {
  Var z = zip_nograd(a, b, out, f);
  detail::maybe_round_f32(z.node()->data, out);
  if (!GradMode::enabled() || !is_floating(out) || !(a.requires_grad() || b.requires_grad())) return z;
  const bool ga = a.requires_grad(), gb = b.requires_grad();
  const Shape zs = z.shape();
  VjpFn vjp = [a, b, ga, gb, da, db, zs, zw = std::weak_ptr<Node>(z.ptr())](const Buffer& g) {
    auto zn = zw.lock();
    const Buffer& zv = zn->data;
    Buffer g_a, g_b;
    if (ga) g_a.resize(g.size());  // every element is written below
    if (gb) g_b.resize(g.size());
    const double* ad = a.data().data();
    const double* bd = b.data().data();
    broadcast_loop(zs, a.shape(), b.shape(),
                   [&](std::int64_t o, std::int64_t ia, std::int64_t sa, std::int64_t ib, std::int64_t sb,
                       std::int64_t n) {
                     for (std::int64_t j = 0; j < n; ++j) {
                       const double gj = g[o + j];
                       const double av = ad[ia + sa * j], bv = bd[ib + sb * j], zj = zv[o + j];
                       if (ga) g_a[o + j] = gj * da(av, bv, zj);
                       if (gb) g_b[o + j] = gj * db(av, bv, zj);
                     }
                   });
    std::vector<Buffer> r(2);
    if (ga) r[0] = sum_to(std::move(g_a), zs, a.shape());
    if (gb) r[1] = sum_to(std::move(g_b), zs, b.shape());
    return r;
  };
  Node* n = z.node();
  n->parents = {a, b};
  n->vjp = std::move(vjp);
  n->requires_grad = true;
  return z;
}

}  // namespace probe::runners
