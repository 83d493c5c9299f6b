// msprobe's per-tensor statistics and "md5" (dump-and-compare §1.4.4, §1.4.8), as JSON tokens.
#include <zlib.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>

#include "dump_writer/PyJson.h"
#include "probe/dump_writer.h"
#include "support/Dispatch.h"

namespace probe {
namespace {

template <class T>
constexpr bool is_complex_v =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

// The value msprobe gets when it computes a statistic in dtype `t` (the tensor's own dtype for
// fp16/bf16/fp32, float32 for everything else): the exact result rounded once to that dtype.
double round_to(double v, DType t) {
  switch (t) {
    case DType::Float16:
      return to_double(to_float16(v));
    case DType::BFloat16:
      return to_double(to_bfloat16(v));
    default:
      return static_cast<double>(static_cast<float>(v));
  }
}

std::string int_token(const Tensor& t) {
  return detail::visit_dtype(t.dtype(), [&](auto tag) -> std::string {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const T v = *reinterpret_cast<const T*>(t.bytes());
      return std::to_string(v);
    } else {
      return {};
    }
  });
}

}  // namespace

DumpStatistics dump_statistics(const Tensor& t, Framework framework) {
  const bool mindspore = framework == Framework::MindSpore;
  if (t.numel() == 0) return {"null", "null", "null", "null"};
  const DType dt = t.dtype();
  const std::int64_t n = t.numel();

  if (is_complex(dt)) {
    // Statistics of |z| (numpy abs) in float64; PyTorch leaves the norm out.
    double mx = -std::numeric_limits<double>::infinity(), mn = std::numeric_limits<double>::infinity();
    double sum = 0, sumsq = 0;
    bool nan = false;
    detail::visit_dtype(dt, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (is_complex_v<T>) {
        const T* p = reinterpret_cast<const T*>(t.bytes());
        for (std::int64_t i = 0; i < n; ++i) {
          const double a = static_cast<double>(std::abs(p[i]));  // numpy's abs keeps the component precision
          nan |= std::isnan(a);
          mx = std::max(mx, a);
          mn = std::min(mn, a);
          sum += a;
          sumsq += a * a;
        }
      }
    });
    if (nan) mx = mn = std::numeric_limits<double>::quiet_NaN();
    return {dump_writer::json_float(mx), dump_writer::json_float(mn),
            dump_writer::json_float(sum / static_cast<double>(n)),
            mindspore ? dump_writer::json_float(std::sqrt(sumsq)) : "null"};
  }

  if (dt == DType::Bool) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(t.bytes());
    bool any = false, all = true;
    for (std::int64_t i = 0; i < n; ++i) {
      any |= p[i] != 0;
      all &= p[i] != 0;
    }
    return {any ? "true" : "false", all ? "true" : "false", "null", "null"};
  }

  if (t.ndim() == 0) {  // the value itself, in its own type (a 0-d int tensor gives JSON ints)
    const std::string v = is_integral(dt) ? int_token(t) : dump_writer::json_float(t.at(0));
    return {v, v, v, v};
  }

  // One pass: max, min, sum and sum of squares in float64, NaN propagating like torch.max does.
  double mx = -std::numeric_limits<double>::infinity(), mn = std::numeric_limits<double>::infinity();
  double sum = 0, sumsq = 0;
  bool nan = false;
  detail::visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_complex_v<T> && !std::is_same_v<T, bool>) {
      const T* p = reinterpret_cast<const T*>(t.bytes());
      for (std::int64_t i = 0; i < n; ++i) {
        const double v = detail::as_double(p[i]);
        nan |= std::isnan(v);
        mx = v > mx ? v : mx;
        mn = v < mn ? v : mn;
        sum += v;
        sumsq += v * v;
      }
    }
  });
  if (nan) mx = mn = std::numeric_limits<double>::quiet_NaN();
  // msprobe's "low" precision: fp16/bf16/fp32 statistics in the tensor's own dtype, everything else
  // (float64, integers) through float32; MindSpore widens bf16 to float32 first.
  DType stat_dtype = DType::Float32;
  if (dt == DType::Float16 || (dt == DType::BFloat16 && !mindspore)) stat_dtype = dt;
  return {dump_writer::json_float(round_to(mx, stat_dtype)),
          dump_writer::json_float(round_to(mn, stat_dtype)),
          dump_writer::json_float(round_to(sum / static_cast<double>(n), stat_dtype)),
          dump_writer::json_float(round_to(std::sqrt(sumsq), stat_dtype))};
}

std::string dump_crc32(const Tensor& t, Framework framework) {
  // PyTorch hashes the raw bytes in the tensor's own dtype; MindSpore widens bf16 to float32 first.
  const Tensor& src = t;
  Tensor widened;
  const Tensor* p = &src;
  if (framework == Framework::MindSpore && t.dtype() == DType::BFloat16) {
    widened = t.to(DType::Float32);
    p = &widened;
  }
  const auto crc = static_cast<unsigned long>(
      crc32_z(0, reinterpret_cast<const Bytef*>(p->numel() ? p->bytes() : nullptr), p->nbytes()));
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08lx", crc & 0xFFFFFFFFul);
  return buf;
}

}  // namespace probe
