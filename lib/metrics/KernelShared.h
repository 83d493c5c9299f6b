// Internal: what the fused metrics kernel's translation units share. Kernel.cpp dispatches and merges;
// KernelIsaBase.cpp, KernelIsaAvx2.cpp and KernelIsaAvx512.cpp each compile KernelBody.inc once for their
// instruction set (so a parallel build compiles the three copies at once) and explicitly instantiate its
// entry points for every (bench dtype, device dtype, metric set) in PROBE_KERNEL_INSTANCES.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "metrics/NumpyFloat.h"
#include "probe/scalar_types.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

// The AVX2 and AVX-512 copies: GCC on x86-64 only, and not in sanitizer builds (PROBE_KERNEL_BASE_ONLY: they
// perform the same loads and stores as the baseline copy, which the Release suite proves equal, and
// instrumenting three copies made the kernel take a quarter of an hour to build on 2 cores).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(PROBE_KERNEL_BASE_ONLY)
#define PROBE_KERNEL_ISAS 1
#endif

namespace probe::metrics_kernel {

using detail::round_half;

constexpr std::int64_t kBlock = 8192;  // numpy's reduction buffer size
constexpr double kF64Eps = 2.220446049250313e-16;

// numpy precision of an array: half (stored in float), single, double.
enum class NK { H, F, D };
template <NK K>
using Store = std::conditional_t<K == NK::D, double, float>;
constexpr NK max_nk(NK a, NK b) { return static_cast<int>(a) > static_cast<int>(b) ? a : b; }

// Rounds a value to precision K (numpy's result of an operation in that dtype).
template <NK K, class T>
inline Store<K> rnd(T x) noexcept {
  if constexpr (K == NK::H)
    return round_half(x);
  else
    return static_cast<Store<K>>(x);
}

template <class Raw>
constexpr NK raw_nk(bool device_bf16) {
  if (device_bf16) return std::is_same_v<Raw, double> ? NK::F : NK::F;
  if constexpr (std::is_same_v<Raw, float16_t>)
    return NK::H;
  else if constexpr (std::is_same_v<Raw, double>)
    return NK::D;
  else
    return NK::F;  // float32, and bfloat16 bench (numpy has no bf16; treated as float32)
}

template <class Raw, NK K>
inline Store<K> load(const Raw* p, std::int64_t i) noexcept {
  if constexpr (std::is_same_v<Raw, float16_t>)
    return static_cast<Store<K>>(detail::load_half(p[i].bits));
  else if constexpr (std::is_same_v<Raw, bfloat16_t>)
    return static_cast<Store<K>>(detail::load_bf16(p[i].bits));
  else if constexpr (K == NK::H)
    return round_half(p[i]);  // not reached: H only for raw half
  else
    return static_cast<Store<K>>(p[i]);
}

template <class T>
inline bool finite(T x) noexcept {
  return std::isfinite(x);
}

// All vector helpers are internal (anonymous namespace): the psABI note about passing 32/64-byte
// vectors without AVX concerns only calls across translation units.
#pragma GCC diagnostic ignored "-Wpsabi"

// ---- 8-lane vectors -------------------------------------------------------------------------------
// numpy's 8 interleaved pairwise accumulators are 8 SIMD lanes: element g+j of a leaf goes to lane j in
// both the scalar and the vector code, so the vector code performs exactly the scalar operations, lane by
// lane (IEEE operations, no FMA contraction, conversions round to nearest as static_cast does).
typedef double v8d __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));
typedef std::int64_t v8l __attribute__((vector_size(64)));
typedef std::int32_t v8i __attribute__((vector_size(32)));
typedef std::uint32_t v8u __attribute__((vector_size(32)));
typedef std::uint16_t v8h __attribute__((vector_size(16)));
// 16 float lanes: two consecutive 8-lane groups at once (AVX-512 float32 kernels, see group16()).
typedef float v16f __attribute__((vector_size(64)));
typedef std::int32_t v16i __attribute__((vector_size(64)));
typedef std::uint32_t v16u __attribute__((vector_size(64)));
typedef std::uint16_t v16h __attribute__((vector_size(32)));

template <class T>
struct VecOf;
template <>
struct VecOf<double> {
  using V = v8d;
  using M = v8l;
};
template <>
struct VecOf<float> {
  using V = v8f;
  using M = v8i;
};
template <class T>
using Vec = typename VecOf<T>::V;
template <class T>
using Mask = typename VecOf<T>::M;

#define PROBE_VINLINE [[gnu::always_inline]] inline
PROBE_VINLINE v8d vabs(v8d x) noexcept { return (v8d)((v8l)x & std::numeric_limits<std::int64_t>::max()); }
PROBE_VINLINE v8f vabs(v8f x) noexcept { return (v8f)((v8i)x & std::numeric_limits<std::int32_t>::max()); }
[[maybe_unused]] PROBE_VINLINE v16f vabs(v16f x) noexcept {
  return (v16f)((v16i)x & std::numeric_limits<std::int32_t>::max());
}
// A comparison mask as the mask type of element type T (for selects).
template <class T, class M>
PROBE_VINLINE Mask<T> mask_as(M m) noexcept {
  if constexpr (std::is_same_v<M, Mask<T>>)
    return m;
  else
    return __builtin_convertvector(m, Mask<T>);
}
template <class To, class V>
PROBE_VINLINE Vec<To> vcvt(V v) noexcept {
  if constexpr (std::is_same_v<V, Vec<To>>)
    return v;
  else
    return __builtin_convertvector(v, Vec<To>);
}
template <class V>
PROBE_VINLINE V vmax(V m, V x) noexcept {
  return x > m ? x : m;
}
template <class V>
PROBE_VINLINE V splat(typename std::remove_reference_t<decltype(V{}[0])> x) noexcept {
  return V{x, x, x, x, x, x, x, x};  // every vector here has 8 lanes; exact even for -0.0
}

// Loads 8 elements of a raw array as numpy precision K (bf16: a 16-bit shift).
template <class Raw, NK K>
PROBE_VINLINE Vec<Store<K>> vload(const Raw* p, std::int64_t i) noexcept {
  if constexpr (std::is_same_v<Raw, bfloat16_t>) {
    v8h h;
    std::memcpy(&h, p + i, sizeof h);
    v8u u = __builtin_convertvector(h, v8u) << 16;
    return vcvt<Store<K>>((v8f)u);
  } else {
    Vec<Raw> v;
    std::memcpy(&v, p + i, sizeof v);
    return vcvt<Store<K>>(v);
  }
}

// Lane permutations that move the set lanes of an 8-bit mask to the front (AVX2 compress).
struct alignas(32) CompressRow : std::array<std::int32_t, 8> {};
constexpr std::array<CompressRow, 256> make_compress_lut() {
  std::array<CompressRow, 256> t{};
  for (unsigned m = 0; m < 256; ++m) {
    int c = 0;
    for (int j = 0; j < 8; ++j)
      if ((m >> j) & 1u) t[m][static_cast<std::size_t>(c++)] = j;
  }
  return t;
}
[[maybe_unused]] constexpr std::array<CompressRow, 256> kCompressLut = make_compress_lut();

// Per-block statistics. Counts are exact; maxima skip NaN and count them (numpy's max returns NaN).
struct Block {
  std::int64_t fin = 0, lt[3] = {0, 0, 0}, eb_gt = 0, eb_lt = 0;
  std::int64_t b_small = 0, b_small_err = 0, b_sel = 0;
  std::int64_t a_small_err = 0, a_normal_err = 0, a_inf_fail = 0;
  std::int64_t c_small = 0, c_small_err = 0, c_normal_err = 0, c_inf_fail = 0;
  std::int64_t ulp_gt = 0, bin_ne = 0, dump_mismatch = 0, dump_lt1 = 0, dump_lt5 = 0;
  std::int64_t nan_abs = 0, nan_d = 0, nan_b = 0, nan_ulp = 0, nan_ms_abs = 0, nan_ms_rel = 0;
  double max_abs = -1, max_rel = -1, max_d = -1, max_b = -1, ulp_max = -1, ms_max_abs = -1, ms_max_rel = -1,
         dump_max_abs = 0, dump_max_re = -1;
  // Sums: numpy-structured, in the sum precision (stored as double; exact for float sums).
  double mse = 0, rel = 0, ulp = 0;
  double sdb = 0, sdd = 0, sbb = 0, zdb = 0, zdd = 0, zbb = 0, zdiff2 = 0;
  // Compaction cursor: where the next selected relative error goes (null: not collected).
  float* cout = nullptr;
};

struct Thresholds {
  double t[3];
  double b_small, b_atol, a_atol, rtol, c_small, c_bound, ulp_thr, clip_lo, clip_hi;
  int ulp_min_eb, ulp_mant;
};

// One comparison handed to an instruction set's copy of the kernel.
struct Job {
  const void* bench;
  const void* device;
  Thresholds th;
  double eps;
  bool scalar_only;
};

// The entry points of one kernel instantiation for instruction set Isa (0 baseline, 1 AVX2, 2 AVX-512),
// defined and explicitly instantiated only in that instruction set's translation unit (KernelIsa.inc).
template <int Isa, class RawB, class RawD, bool Ulp, bool Extra, bool Base>
struct Entry;
#define PROBE_KERNEL_ENTRY(ISA)                                                                              \
  template <class RawB, class RawD, bool Ulp, bool Extra, bool Base>                                         \
  struct Entry<ISA, RawB, RawD, Ulp, Extra, Base> {                                                          \
    /* Blocks [b0, b1) of an n-element pair into blocks[b0..b1) (compaction cursors as the caller set). */   \
    static void run_blocks(const Job& job, std::int64_t b0, std::int64_t b1, std::int64_t n, Block* blocks); \
    /* numpy's pairwise sum of one buffer of the compacted selection (float32/float16 sums only). */         \
    static float pairwise(const float* a, std::int64_t n) noexcept;                                          \
  };
PROBE_KERNEL_ENTRY(0)
PROBE_KERNEL_ENTRY(1)
PROBE_KERNEL_ENTRY(2)
#undef PROBE_KERNEL_ENTRY

// Every instantiation compute_metrics can reach: X(RawB, RawD, Ulp, Extra, Base) for the 16 dtype pairs and
// the five metric sets of run_flags().
#define PROBE_KERNEL_SETS(X, B, D) \
  X(B, D, false, true, false)      \
  X(B, D, true, true, true) X(B, D, true, false, true) X(B, D, false, true, true) X(B, D, false, false, true)
#define PROBE_KERNEL_DEVICES(X, B)   \
  PROBE_KERNEL_SETS(X, B, float16_t) \
  PROBE_KERNEL_SETS(X, B, bfloat16_t) PROBE_KERNEL_SETS(X, B, float) PROBE_KERNEL_SETS(X, B, double)
#define PROBE_KERNEL_INSTANCES(X)    \
  PROBE_KERNEL_DEVICES(X, float16_t) \
  PROBE_KERNEL_DEVICES(X, bfloat16_t) PROBE_KERNEL_DEVICES(X, float) PROBE_KERNEL_DEVICES(X, double)

}  // namespace probe::metrics_kernel
