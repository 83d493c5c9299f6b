// The fused metrics kernel: one pass over the bench and device buffers computes every per-element
// statistic of every msprobe metric (old rule, all precision standards, dump compare, MindSpore).
//
// Summation order. numpy reduces a contiguous array in buffers of 8192 elements, summing each buffer
// pairwise (8 interleaved accumulators over leaves of <= 128 elements) and adding the buffer sums in
// order. msprobe's float32 means (mean relative error, mean ULP error, the MSE inside RMSE) are printed
// with float32's shortest repr, so they must be rounded exactly as numpy rounds them: the kernel uses
// numpy's block structure for every sum. Blocks are independent, so threads take whole blocks and the
// per-block results are merged in block order: results never depend on the thread count. The float64
// sums (cosine dot products, dump-compare norms) use the same fixed structure.
//
// This file dispatches and merges; the block loops are KernelBody.inc, compiled once per instruction set in
// KernelIsaBase.cpp, KernelIsaAvx2.cpp and KernelIsaAvx512.cpp (see KernelShared.h).
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <type_traits>
#include <vector>

#include "metrics/KernelControl.h"
#include "metrics/KernelShared.h"
#include "metrics/NumpyFloat.h"
#include "metrics/RangeObserver.h"
#include "probe/error.h"
#include "probe/metrics.h"
#include "support/Dispatch.h"
#include "support/ThreadPool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace probe::metrics_kernel {
namespace {
// The baseline copy's types, for their traits and the scalar element code of the cosine fallback; the block
// loops run through the entry points of KernelIsa*.cpp.
#define PROBE_KERNEL_ISA 0
#include "metrics/KernelBody.inc"
#undef PROBE_KERNEL_ISA
}  // namespace
}  // namespace probe::metrics_kernel

namespace probe {
namespace {
using namespace metrics_kernel;

std::atomic<bool> g_scalar_only{false};
std::atomic<long> g_compaction_window{0};

// The float32/float16 mean relative error is numpy's mean of the compacted selection (rel[mask]), summed
// in 8192-element buffers that start wherever the running count of selected elements crosses a multiple
// of 8192: known only once every earlier element is counted. The main pass writes each piece's selected
// values (a piece = consecutive blocks one thread runs) to a piece buffer; pieces are summed in order by
// whichever thread completes the in-order prefix. Memory stays a few pieces per thread, and the tensors
// are read once (a separate second pass halved the throughput of bfloat16 comparisons).
class CompactedSum {
 public:
  using SumFn = float (*)(const float*, std::int64_t);  // numpy's pairwise sum of one buffer

  CompactedSum(SumFn sum, std::int64_t window_blocks) : sum_(sum), window_(window_blocks) {
    carry_.reserve(kBlock);
  }

  // Blocks until the piece starting at `block` is at most the window ahead of the summed prefix (a
  // stalled thread must not make the others pile up buffers). The thread holding the prefix never waits.
  void wait_turn(std::int64_t block) {
    std::unique_lock lock(m_);
    room_.wait(lock, [&] { return aborted_ || block - next_block_ <= window_; });
  }
  // A piece failed (out of memory): waiting threads go on, and the sum is not used.
  void abort() {
    std::lock_guard lock(m_);
    aborted_ = true;
    room_.notify_all();
  }
  // A buffer for `size` values, reused from finished pieces when possible.
  std::vector<float> take(std::size_t size) {
    std::vector<float> v;
    {
      std::lock_guard lock(m_);
      if (!free_.empty()) {
        v = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (v.size() < size) v.resize(size);
    return v;
  }
  // Hands over the `count` selected values of blocks [first, end); sums every piece now in order.
  void publish(std::int64_t first, std::int64_t end, std::vector<float> values, std::int64_t count) {
    std::unique_lock lock(m_);
    ready_.emplace(first, Piece{end, std::move(values), count});
    if (consuming_) return;  // the consuming thread picks it up when it is next
    consuming_ = true;
    for (auto it = ready_.find(next_block_); it != ready_.end(); it = ready_.find(next_block_)) {
      Piece piece = std::move(it->second);
      ready_.erase(it);
      lock.unlock();
      consume(piece.values.data(), piece.count);
      lock.lock();
      next_block_ = piece.end;
      free_.push_back(std::move(piece.values));
      room_.notify_all();
    }
    consuming_ = false;
  }
  // The sum after every piece is published: the last, partial buffer is added too.
  float finish() {
    if (!carry_.empty()) add_buffer(carry_.data(), static_cast<std::int64_t>(carry_.size()));
    carry_.clear();
    return total_;
  }

 private:
  struct Piece {
    std::int64_t end;
    std::vector<float> values;
    std::int64_t count;
  };
  // numpy adds the buffer sums in order, in float32.
  void add_buffer(const float* v, std::int64_t n) { total_ = total_ + sum_(v, n); }
  // Only the consuming thread gets here, so carry_ and total_ need no lock.
  void consume(const float* v, std::int64_t count) {
    std::int64_t i = 0;
    if (!carry_.empty()) {
      const std::int64_t take = std::min(count, kBlock - static_cast<std::int64_t>(carry_.size()));
      carry_.insert(carry_.end(), v, v + take);
      i = take;
      if (static_cast<std::int64_t>(carry_.size()) < kBlock) return;
      add_buffer(carry_.data(), kBlock);
      carry_.clear();
    }
    for (; count - i >= kBlock; i += kBlock) add_buffer(v + i, kBlock);
    carry_.insert(carry_.end(), v + i, v + count);
  }

  SumFn sum_;
  std::int64_t window_;
  std::mutex m_;
  std::condition_variable room_;
  std::map<std::int64_t, Piece> ready_;
  std::vector<std::vector<float>> free_;
  std::int64_t next_block_ = 0;
  bool consuming_ = false;
  bool aborted_ = false;
  std::vector<float> carry_;
  float total_ = 0;
};

std::atomic<int> g_max_isa{2};

int isa_level() noexcept {
  int level = 0;
#ifdef PROBE_KERNEL_ISAS
  static const int cpu = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("bmi2"))
      return 2;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt"))
      return 1;
    return 0;
  }();
  level = std::min(cpu, g_max_isa.load(std::memory_order_relaxed));
#endif
  return level;
}

// The entry points of the kernel compiled for the best instruction set this CPU has.
struct Fns {
  void (*run_blocks)(const Job&, std::int64_t, std::int64_t, std::int64_t, Block*);
  float (*pairwise)(const float*, std::int64_t) noexcept;
};
template <class RawB, class RawD, bool Ulp, bool Extra, bool Base>
Fns isa_entry() noexcept {
#ifdef PROBE_KERNEL_ISAS
  switch (isa_level()) {
    case 2:
      return {&Entry<2, RawB, RawD, Ulp, Extra, Base>::run_blocks,
              &Entry<2, RawB, RawD, Ulp, Extra, Base>::pairwise};
    case 1:
      return {&Entry<1, RawB, RawD, Ulp, Extra, Base>::run_blocks,
              &Entry<1, RawB, RawD, Ulp, Extra, Base>::pairwise};
    default:
      break;
  }
#endif
  return {&Entry<0, RawB, RawD, Ulp, Extra, Base>::run_blocks,
          &Entry<0, RawB, RawD, Ulp, Extra, Base>::pairwise};
}

double dtype_eps(DType t) {
  switch (t) {
    case DType::Float16:
      return 0x1p-10;
    case DType::Float32:
      return 0x1p-23;
    default:
      return 0x1p-52;
  }
}

DType nk_dtype(NK k) { return k == NK::H ? DType::Float16 : k == NK::F ? DType::Float32 : DType::Float64; }

MetricValue typed(double v, NK k) {
  if (k == NK::D) return MetricValue::f64(v);
  if (k == NK::F) return MetricValue::f32(static_cast<float>(v));
  return MetricValue::f16(v);
}

double nan_max(double m, std::int64_t nans) { return nans ? std::numeric_limits<double>::quiet_NaN() : m; }

template <class RawB, class RawD, bool Ulp, bool Extra, bool Base>
TensorMetrics run(const Tensor& bench, const Tensor& device, const MetricParams& p,
                  detail::RangeObserver* observer) {
  using K = metrics_kernel::Kernel<RawB, RawD, Ulp, Extra, Base>;
  const std::int64_t n = bench.numel();
  Thresholds th{};
  th.t[0] = 0.01;
  th.t[1] = 0.001;
  th.t[2] = 0.0001;
  th.b_small = p.small_value;
  th.b_atol = p.small_value_atol_benchmark;
  th.a_atol = p.small_value_atol_absolute;
  th.rtol = p.rtol;
  th.c_small = p.accumulative_small_value;
  th.c_bound = p.accumulative_bound;
  th.ulp_thr = p.ulp_threshold;
  th.ulp_min_eb = p.ulp_min_eb;
  th.ulp_mant = p.ulp_mantissa_bits;
  constexpr bool dev_bf16 = K::kDevBf16;
  if constexpr (dev_bf16) {
    th.clip_hi = 3.3895313892515355e+38;
  } else if constexpr (K::ND == NK::H) {
    th.clip_hi = 65504.0;
  } else if constexpr (K::ND == NK::F) {
    th.clip_hi = std::numeric_limits<float>::max();
  } else {
    th.clip_hi = std::numeric_limits<double>::max();
  }
  th.clip_lo = -th.clip_hi;
  double eps = dev_bf16 ? 0x1p-8 : dtype_eps(nk_dtype(K::NB));
  K kern(bench.data<RawB>(), device.data<RawD>(), th, eps);
  kern.scalar_only = g_scalar_only.load(std::memory_order_relaxed);

  const std::int64_t nblocks = (n + kBlock - 1) / kBlock;
  std::vector<Block> blocks(static_cast<std::size_t>(nblocks));
  // The compacted mean is needed only when float32/float16 rounding is printed; float64 means keep the
  // masked-with-zeros sum (deterministic, as accurate).
  const bool compact = K::kCompact && p.exact_numpy_means;
  using S = typename K::S;
  S compacted_rel = 0;
  const Job job{bench.data<RawB>(), device.data<RawD>(), th, eps, kern.scalar_only};
  const Fns fns = isa_entry<RawB, RawD, Ulp, Extra, Base>();
  auto run_blocks = [&](std::int64_t b0, std::int64_t b1) { fns.run_blocks(job, b0, b1, n, blocks.data()); };
  // One block, then the observer on the same elements while they are in cache.
  auto run_observed = [&](std::int64_t b, int chunk) {
    run_blocks(b, b + 1);
    observer->range(b * kBlock, std::min(n, (b + 1) * kBlock), chunk);
  };
  [&] {
    // Roughly 64K elements per task so that small tensors stay on the calling thread.
    constexpr std::int64_t kGrain = 8;
    if (observer) observer->start(detail::parallel_chunks(nblocks, kGrain));
    if constexpr (K::kCompact) {
      if (compact) {
        // Pieces of 16 blocks: a 512 KiB buffer, still in cache when its thread sums it.
        constexpr std::int64_t kPiece = 16;
        const std::int64_t threads = detail::parallel_chunks(nblocks, kGrain);
        const long window = g_compaction_window.load(std::memory_order_relaxed);
        CompactedSum sums(fns.pairwise,
                          window > 0 ? window : 2 * threads * detail::kMaxRangeGrains * kGrain + kPiece);
        detail::parallel_for(0, nblocks, kGrain, [&](std::int64_t b0, std::int64_t b1, int chunk) {
          for (std::int64_t p0 = b0; p0 < b1; p0 += kPiece) {
            const std::int64_t p1 = std::min(b1, p0 + kPiece);
            sums.wait_turn(p0);
            std::vector<float> buf;
            try {
              buf = sums.take(static_cast<std::size_t>(std::min(n, p1 * kBlock) - p0 * kBlock + 16));
            } catch (...) {
              sums.abort();  // nobody may wait for this piece
              throw;
            }
            float* cursor = buf.data();
            for (std::int64_t b = p0; b < p1; ++b) {
              Block& blk = blocks[static_cast<std::size_t>(b)];
              blk.cout = cursor;
              if (observer)
                run_observed(b, chunk);
              else
                run_blocks(b, b + 1);
              cursor = blk.cout;
              blk.cout = nullptr;
            }
            const std::int64_t count = cursor - buf.data();
            sums.publish(p0, p1, std::move(buf), count);
          }
        });
        compacted_rel = sums.finish();
        return;
      }
    }
    detail::parallel_for(0, nblocks, kGrain, [&](std::int64_t b0, std::int64_t b1, int chunk) {
      if (!observer) return run_blocks(b0, b1);
      for (std::int64_t b = b0; b < b1; ++b) run_observed(b, chunk);
    });
  }();

  Block t;
  using U = typename K::U;
  S mse = 0, rel = 0;
  U ulp = 0;
  for (const Block& k : blocks) {
    t.fin += k.fin;
    for (int q = 0; q < 3; ++q) t.lt[q] += k.lt[q];
    t.eb_gt += k.eb_gt;
    t.eb_lt += k.eb_lt;
    t.b_small += k.b_small;
    t.b_small_err += k.b_small_err;
    t.b_sel += k.b_sel;
    t.a_small_err += k.a_small_err;
    t.a_normal_err += k.a_normal_err;
    t.a_inf_fail += k.a_inf_fail;
    t.c_small += k.c_small;
    t.c_small_err += k.c_small_err;
    t.c_normal_err += k.c_normal_err;
    t.c_inf_fail += k.c_inf_fail;
    t.ulp_gt += k.ulp_gt;
    t.bin_ne += k.bin_ne;
    t.dump_mismatch += k.dump_mismatch;
    t.dump_lt1 += k.dump_lt1;
    t.dump_lt5 += k.dump_lt5;
    t.nan_abs += k.nan_abs;
    t.nan_d += k.nan_d;
    t.nan_b += k.nan_b;
    t.nan_ulp += k.nan_ulp;
    t.nan_ms_abs += k.nan_ms_abs;
    t.nan_ms_rel += k.nan_ms_rel;
    t.max_abs = std::max(t.max_abs, k.max_abs);
    t.max_rel = std::max(t.max_rel, k.max_rel);
    t.max_d = std::max(t.max_d, k.max_d);
    t.max_b = std::max(t.max_b, k.max_b);
    t.ulp_max = std::max(t.ulp_max, k.ulp_max);
    t.ms_max_abs = std::max(t.ms_max_abs, k.ms_max_abs);
    t.ms_max_rel = std::max(t.ms_max_rel, k.ms_max_rel);
    t.dump_max_abs = std::max(t.dump_max_abs, k.dump_max_abs);
    t.dump_max_re = std::max(t.dump_max_re, k.dump_max_re);
    // numpy adds the buffer sums in order, in the sum dtype.
    mse = static_cast<S>(mse + static_cast<S>(k.mse));
    rel = static_cast<S>(rel + static_cast<S>(k.rel));
    ulp = static_cast<U>(ulp + static_cast<U>(k.ulp));
    t.sdb += k.sdb;
    t.sdd += k.sdd;
    t.sbb += k.sbb;
    t.zdb += k.zdb;
    t.zdd += k.zdd;
    t.zbb += k.zbb;
    t.zdiff2 += k.zdiff2;
  }

  if (compact) rel = compacted_rel;

  TensorMetrics m;
  m.count = n;
  m.compute_dtype = nk_dtype(K::NC);
  const double nd = static_cast<double>(n);
  const double qnan = std::numeric_limits<double>::quiet_NaN();

  // Dump-compare and MindSpore metrics.
  auto fill_extra = [&] {
    if constexpr (Extra) {
      m.ms_cosine = (1e-8 + t.sdb) / (1e-8 + std::sqrt(t.sbb) * std::sqrt(t.sdd));
      m.ms_max_abs = nan_max(t.ms_max_abs, t.nan_ms_abs);
      m.ms_max_rel = nan_max(t.ms_max_rel, t.nan_ms_rel);
      m.dump_inf_nan_mismatch = t.dump_mismatch > 0;
      m.dump_norm_device = std::sqrt(t.zdd);
      m.dump_norm_bench = std::sqrt(t.zbb);
      m.dump_cosine = t.zdb / (m.dump_norm_device * m.dump_norm_bench);
      m.dump_euc = std::sqrt(t.zdiff2);
      m.dump_max_abs = t.dump_max_abs;
      m.dump_max_rel = t.dump_max_re;
      m.dump_one_thousandth = static_cast<double>(t.dump_lt1) / nd;
      m.dump_five_thousandths = static_cast<double>(t.dump_lt5) / nd;
    }
  };
  if constexpr (!Base) {
    fill_extra();
    return m;
  }

  // Cosine (§2.3): msprobe divides each side by its max magnitude before the dot products. The
  // quotient is scale-invariant, so one pass of raw float64 sums gives the same value up to rounding
  // unless the squares overflow or underflow; only then a second, normalising pass is run.
  double nmax = nan_max(t.max_d, t.nan_d), bmax = nan_max(t.max_b, t.nan_b);
  if (n == 1) {
    m.cosine_ok = true;
    m.cosine_message =
        "All the data in device dump data is scalar. Please refer to other compare algorithms.";
  } else if (nmax <= kF64Eps && bmax <= kF64Eps) {
    m.cosine_ok = true;
    m.cosine_message = "All the data in device and bench outputs are zero.";
  } else if (nmax <= kF64Eps) {
    m.cosine_message = "All the data is zero in device dump data.";
  } else if (bmax <= kF64Eps) {
    m.cosine_message = "All the data is zero in bench dump data.";
  } else {
    double cos;
    if (!std::isfinite(nmax) || !std::isfinite(bmax)) {
      cos = qnan;
    } else {
      double dot = t.sdb, dd = t.sdd, bb = t.sbb;
      bool safe = nmax < 1e150 && bmax < 1e150 && nmax > 1e-140 && bmax > 1e-140 && std::isfinite(dot);
      if (!safe) {
        dot = dd = bb = 0;
        const K& kk = kern;
        for (std::int64_t i = 0; i < n; ++i) {
          auto e = kk.elem(i);
          double x = static_cast<double>(e.d) / nmax, y = static_cast<double>(e.b) / bmax;
          dot += x * y;
          dd += x * x;
          bb += y * y;
        }
        cos = dot / (std::sqrt(dd) * std::sqrt(bb));
      } else {
        cos = (dot / (nmax * bmax)) / ((std::sqrt(dd) / nmax) * (std::sqrt(bb) / bmax));
      }
    }
    if (std::isnan(cos))
      m.cosine_message = "Dump data has NaN when comparing with Cosine Similarity.";
    else
      cos = std::clamp(cos, -1.0, 1.0);
    m.cosine = MetricValue::f64(cos);
    m.cosine_ok = cos > 0.99;
  }

  m.max_abs_err = typed(nan_max(t.max_abs, t.nan_abs), K::NC);
  m.hundredth = MetricValue::f64(static_cast<double>(t.lt[0]) / nd);
  m.thousandth = MetricValue::f64(static_cast<double>(t.lt[1]) / nd);
  m.ten_thousandth = MetricValue::f64(static_cast<double>(t.lt[2]) / nd);

  auto ratio = [](std::int64_t num, std::int64_t den) {
    return den == 0 ? MetricValue::integer(0)
                    : MetricValue::f64(static_cast<double>(num) / static_cast<double>(den));
  };
  m.error_balance = MetricValue::f64(static_cast<double>(std::llabs(t.eb_gt - t.eb_lt)) / nd);
  {
    std::int64_t masked = n - t.b_sel;
    double mse_mean;
    if constexpr (K::NS == NK::D)
      mse_mean = static_cast<double>(mse) / nd;
    else if constexpr (K::NC == NK::H)
      mse_mean = round_half(static_cast<double>(mse) / nd);
    else
      mse_mean = static_cast<float>(static_cast<double>(mse) / nd);
    double factor = nd / (static_cast<double>(n - masked) + 0.0001) + 0.0001;
    m.rmse = MetricValue::f64(std::sqrt(mse_mean * factor));
  }
  m.small_value_err_ratio = ratio(t.b_small_err, t.b_small);
  m.max_rel_err = t.max_rel >= 0 ? typed(t.max_rel, K::NC) : MetricValue::integer(0);
  if (t.b_sel == 0) {
    m.mean_rel_err = MetricValue::integer(0);
  } else {
    double v = static_cast<double>(rel) / static_cast<double>(t.b_sel);
    if constexpr (K::NS == NK::D)
      m.mean_rel_err = MetricValue::f64(v);
    else if constexpr (K::NC == NK::H)
      m.mean_rel_err = MetricValue::f16(round_half(v));
    else
      m.mean_rel_err = MetricValue::f32(static_cast<float>(v));
  }
  const std::int64_t inf_nan = n - t.fin;
  m.inf_nan_err_ratio = ratio(t.a_inf_fail, inf_nan);
  m.rel_err_ratio = ratio(t.a_normal_err, t.fin - t.b_small);  // one small_value for both standards
  m.abs_err_ratio = ratio(t.a_small_err, t.b_small);
  m.acc_inf_nan_err_ratio = ratio(t.c_inf_fail, inf_nan);
  m.acc_rel_err_ratio = ratio(t.c_normal_err, t.fin - t.c_small);
  m.acc_abs_err_ratio = ratio(t.c_small_err, t.c_small);
  m.binary_err_rate = MetricValue::f64(static_cast<double>(t.bin_ne) / nd);
  if constexpr (Ulp) {
    m.ulp_max = typed(nan_max(t.ulp_max, t.nan_ulp), K::NU);
    double mean = static_cast<double>(ulp) / nd;
    m.ulp_mean = K::NU == NK::D ? MetricValue::f64(mean) : MetricValue::f32(static_cast<float>(mean));
    m.ulp_ratio = MetricValue::f64(static_cast<double>(t.ulp_gt) / nd);
  }
  fill_extra();
  return m;
}

template <class RawB, class RawD>
TensorMetrics run_flags(const Tensor& b, const Tensor& d, const MetricParams& p, detail::RangeObserver* o) {
  if (!p.compute_run_ut) {
    if (!p.compute_extra || p.compute_ulp)
      throw Error(ErrorKind::InvalidArgument,
                  "compute_metrics: without the run_ut set only the dump-compare metrics can be computed "
                  "(compute_extra on, compute_ulp off)");
    return run<RawB, RawD, false, true, false>(b, d, p, o);
  }
  if (p.compute_ulp) {
    return p.compute_extra ? run<RawB, RawD, true, true, true>(b, d, p, o)
                           : run<RawB, RawD, true, false, true>(b, d, p, o);
  }
  return p.compute_extra ? run<RawB, RawD, false, true, true>(b, d, p, o)
                         : run<RawB, RawD, false, false, true>(b, d, p, o);
}

template <class F>
decltype(auto) visit_float(DType t, F&& f) {
  switch (t) {
    case DType::Float16:
      return f(detail::TypeTag<float16_t>{});
    case DType::BFloat16:
      return f(detail::TypeTag<bfloat16_t>{});
    case DType::Float32:
      return f(detail::TypeTag<float>{});
    case DType::Float64:
      return f(detail::TypeTag<double>{});
    default:
      break;
  }
  throw Error(ErrorKind::InvalidArgument,
              "compute_metrics needs floating tensors, got " + std::string(name(t)));
}

}  // namespace

namespace detail {
void set_metrics_scalar_only(bool on) noexcept { g_scalar_only.store(on); }
void set_metrics_max_isa(int level) noexcept { g_max_isa.store(level); }
void set_metrics_compaction_window(long blocks) noexcept { g_compaction_window.store(blocks); }
int metrics_isa() noexcept { return isa_level(); }
bool metrics_scalar_only() noexcept { return g_scalar_only.load(); }
}  // namespace detail

DType metric_compute_dtype(DType bench, DType device) {
  if (device == DType::BFloat16) return DType::Float32;
  auto rank = [](DType t) { return t == DType::Float16 ? 0 : t == DType::Float64 ? 2 : 1; };
  return rank(bench) >= rank(device) ? (rank(bench) == 0   ? DType::Float16
                                        : rank(bench) == 1 ? DType::Float32
                                                           : DType::Float64)
                                     : (rank(device) == 0   ? DType::Float16
                                        : rank(device) == 1 ? DType::Float32
                                                            : DType::Float64);
}

TensorMetrics compute_metrics(const Tensor& bench, const Tensor& device, const MetricParams& params) {
  return detail::compute_metrics_observed(bench, device, params, nullptr);
}

namespace {

// The report's element-error histogram (MetricParams::histogram), binned from each block the kernel just
// read, then handed on to the caller's observer (if any) for the same block.
template <class RB, class RD>
class HistogramObserver final : public detail::RangeObserver {
 public:
  HistogramObserver(const Tensor& bench, const Tensor& device, const MetricParams& p,
                    detail::RangeObserver* next)
      : b_(bench.data<RB>()), d_(device.data<RD>()), unit_(*p.histogram), next_(next) {
    // msprobe's ULP (precheck.md §2.9): units of the device dtype at the bench's exponent, floored at the
    // smallest normal's.
    min_eb_ = p.ulp_min_eb;
    mant_ = p.ulp_mantissa_bits;
  }
  void start(int chunks) override {
    parts_.assign(static_cast<std::size_t>(std::max(chunks, 1)), {});
    for (ErrorHistogram& h : parts_) h.unit = unit_;
    if (next_) next_->start(chunks);
  }
  void range(std::int64_t begin, std::int64_t end, int chunk) override {
    // Four interleaved count arrays: a run of elements in one bin would otherwise wait on its own increment.
    std::array<std::array<std::int64_t, ErrorHistogram::kSlots>, 4> slots{};
    const bool ulp = unit_ == HistogramUnit::Ulp;
    for (std::int64_t i = begin; i < end; ++i) {
      const double b = detail::as_double(b_[i]), d = detail::as_double(d_[i]);
      double err;
      if (b == d || (std::isnan(b) && std::isnan(d))) {
        err = 0;
      } else if (!std::isfinite(b) || !std::isfinite(d)) {
        err = std::numeric_limits<double>::quiet_NaN();
      } else if (ulp) {
        // floor(log2 |b|) from the bits; a zero or subnormal bench is floored at min_eb anyway.
        const int biased = static_cast<int>((std::bit_cast<std::uint64_t>(b) >> 52) & 0x7ff);
        const int k = mant_ - std::max(b == 0 ? 0 : biased - 1023, min_eb_);
        err = k > -1023 && k < 1024
                  ? std::fabs(d - b) * std::bit_cast<double>(static_cast<std::uint64_t>(1023 + k) << 52)
                  : std::ldexp(std::fabs(d - b), k);
      } else {
        err = b == 0 ? std::numeric_limits<double>::infinity() : std::fabs(d - b) / std::fabs(b);
      }
      ++slots[static_cast<std::size_t>(i & 3)][static_cast<std::size_t>(ErrorHistogram::slot(err))];
    }
    ErrorHistogram& h = parts_[static_cast<std::size_t>(chunk)];
    for (const auto& s : slots) h.add_slots(s);
    if (next_) next_->range(begin, end, chunk);
  }
  ErrorHistogram total() const {
    ErrorHistogram t;
    t.unit = unit_;
    for (const ErrorHistogram& h : parts_) t.merge(h);
    return t;
  }

 private:
  const RB* b_;
  const RD* d_;
  HistogramUnit unit_;
  detail::RangeObserver* next_;
  int min_eb_ = 0, mant_ = 0;
  std::vector<ErrorHistogram> parts_;
};

}  // namespace

TensorMetrics detail::compute_metrics_observed(const Tensor& bench, const Tensor& device,
                                               const MetricParams& params, RangeObserver* observer) {
  if (bench.shape() != device.shape())
    throw Error(ErrorKind::InvalidArgument, "bench shape " + shape_to_string(bench.shape()) +
                                                " differs from device shape " +
                                                shape_to_string(device.shape()));
  return visit_float(bench.dtype(), [&](auto bt) {
    using RB = typename decltype(bt)::type;
    return visit_float(device.dtype(), [&](auto dt) -> TensorMetrics {
      using RD = typename decltype(dt)::type;
      if (bench.numel() == 0) {
        TensorMetrics m;
        m.compute_dtype = metric_compute_dtype(bench.dtype(), device.dtype());
        return m;
      }
      if (!params.histogram) return run_flags<RB, RD>(bench, device, params, observer);
      HistogramObserver<RB, RD> hist(bench, device, params, observer);
      TensorMetrics m = run_flags<RB, RD>(bench, device, params, &hist);
      m.histogram = hist.total();
      return m;
    });
  });
}

namespace {
// Element equality for binary consistency. A free function rather than nested `if constexpr`
// inside the dispatch lambdas, which clang instantiates eagerly for every dtype pair.
template <class TB, class TD>
bool same_element_value(TB b, TD d) {
  if constexpr (std::is_integral_v<TB> && std::is_integral_v<TD>) {
    // Exact integer comparison (int64 values beyond 2^53 must not collapse through double).
    if constexpr (std::is_signed_v<TB> == std::is_signed_v<TD>)
      return b == d;
    else
      return static_cast<long double>(b) == static_cast<long double>(d);
  } else {
    return detail::as_double(b) == detail::as_double(d);
  }
}
}  // namespace

double binary_error_rate(const Tensor& bench, const Tensor& device) {
  if (bench.numel() != device.numel())
    throw Error(ErrorKind::InvalidArgument, "binary_error_rate needs tensors of equal size");
  const std::int64_t n = bench.numel();
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  std::int64_t ne = detail::visit_dtype(bench.dtype(), [&](auto bt) {
    using TB = typename decltype(bt)::type;
    return detail::visit_dtype(device.dtype(), [&](auto dt) -> std::int64_t {
      using TD = typename decltype(dt)::type;
      const TB* b = bench.data<TB>();
      const TD* d = device.data<TD>();
      std::int64_t c = 0;
      for (std::int64_t i = 0; i < n; ++i) c += !same_element_value(b[i], d[i]);
      return c;
    });
  });
  return static_cast<double>(ne) / static_cast<double>(n);
}

}  // namespace probe
