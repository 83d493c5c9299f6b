#include "runners/Ops.h"

#include <fmt/format.h>

#include <cmath>

#include "probe/error.h"

namespace probe::runners::ops {

namespace {
double one(double, double, double) { return 1.0; }
}  // namespace

Var scalar_like(double v, const Var&) { return wrapped_scalar(v, DType::Float64); }

Var add(const Var& a, const Var& b, double alpha) {
  return zip(
      a, b, result_type({a, b}), [alpha](double x, double y) { return x + alpha * y; }, one,
      [alpha](double, double, double) { return alpha; });
}
Var sub(const Var& a, const Var& b, double alpha) {
  return zip(
      a, b, result_type({a, b}), [alpha](double x, double y) { return x - alpha * y; }, one,
      [alpha](double, double, double) { return -alpha; });
}
Var mul(const Var& a, const Var& b) {
  return zip(
      a, b, result_type({a, b}), [](double x, double y) { return x * y; },
      [](double, double y, double) { return y; }, [](double x, double, double) { return x; });
}
Var div(const Var& a, const Var& b) {
  return zip(
      a, b, float_or_default(result_type({a, b})), [](double x, double y) { return x / y; },
      [](double, double y, double) { return 1.0 / y; },
      [](double x, double y, double) { return -x / (y * y); });
}
Var maximum(const Var& a, const Var& b) {
  return zip(
      a, b, result_type({a, b}),
      [](double x, double y) { return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y); },
      [](double x, double y, double) { return x == y  ? 0.5
                                              : x < y ? 0.0
                                                      : 1.0; },
      [](double x, double y, double) { return x == y  ? 0.5
                                              : x > y ? 0.0
                                                      : 1.0; });
}
Var minimum(const Var& a, const Var& b) {
  return zip(
      a, b, result_type({a, b}),
      [](double x, double y) { return std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y); },
      [](double x, double y, double) { return x == y  ? 0.5
                                              : x > y ? 0.0
                                                      : 1.0; },
      [](double x, double y, double) { return x == y  ? 0.5
                                              : x < y ? 0.0
                                                      : 1.0; });
}
Var neg(const Var& x) {
  return map(
      x, x.dtype(), [](double v) { return -v; }, [](double, double) { return -1.0; });
}
Var exp(const Var& x) {
  return map(
      x, float_or_default(x.dtype()), [](double v) { return std::exp(v); },
      [](double, double y) { return y; });
}
Var log(const Var& x) {
  return map(
      x, float_or_default(x.dtype()), [](double v) { return std::log(v); },
      [](double v, double) { return 1.0 / v; });
}
Var sqrt(const Var& x) {
  return map(
      x, float_or_default(x.dtype()), [](double v) { return std::sqrt(v); },
      [](double, double y) { return 0.5 / y; });
}
Var rsqrt(const Var& x) {
  return map(
      x, float_or_default(x.dtype()), [](double v) { return 1.0 / std::sqrt(v); },
      [](double, double y) { return -0.5 * y * y * y; });
}
Var square(const Var& x) {
  return map(
      x, x.dtype(), [](double v) { return v * v; }, [](double v, double) { return 2.0 * v; });
}
Var abs(const Var& x) {
  return map(
      x, x.dtype(), [](double v) { return std::fabs(v); },
      [](double v, double) { return v > 0   ? 1.0
                                    : v < 0 ? -1.0
                                            : 0.0; });
}

Var sum(const Var& x, const std::vector<std::int64_t>& dims, bool keepdim, std::optional<DType> dtype) {
  Var in = dtype ? cast(x, *dtype) : x;
  const DType out = dtype ? *dtype : (is_floating(x.dtype()) ? x.dtype() : DType::Int64);
  return runners::sum(in, reduce_dims(in, dims), keepdim, out);
}

Var mean(const Var& x, const std::vector<std::int64_t>& dims, bool keepdim, std::optional<DType> dtype) {
  Var in = dtype ? cast(x, *dtype) : x;
  if (!is_floating(in.dtype()))
    throw Error(
        ErrorKind::InvalidArgument,
        fmt::format("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                    "complex dtype. Got: {}",
                    name(in.dtype())));
  const auto rd = reduce_dims(in, dims);
  std::int64_t n = 1;
  for (int d : rd) n *= in.shape()[static_cast<std::size_t>(d)];
  Var s = runners::sum(in, rd, keepdim, in.dtype());
  const double inv = static_cast<double>(n);
  return map(
      s, s.dtype(), [inv](double v) { return v / inv; }, [inv](double, double) { return 1.0 / inv; });
}

Var var(const Var& x, const std::vector<std::int64_t>& dims, double correction, bool keepdim) {
  if (!is_floating(x.dtype()))
    throw Error(
        ErrorKind::InvalidArgument,
        fmt::format("std and var only support floating point and complex dtypes, got {}", name(x.dtype())));
  const auto rd = reduce_dims(x, dims);
  std::int64_t n = 1;
  for (int d : rd) n *= x.shape()[static_cast<std::size_t>(d)];
  std::vector<std::int64_t> d64(rd.begin(), rd.end());
  Var m = mean(x, d64, true);
  Var dev = sub(x, m);
  Var ss = runners::sum(square(dev), rd, keepdim, x.dtype());
  const double denom = std::max(0.0, static_cast<double>(n) - correction);
  return map(
      ss, ss.dtype(), [denom](double v) { return v / denom; },
      [denom](double, double) { return 1.0 / denom; });
}

Var unsqueeze(const Var& x, std::int64_t dim) {
  const int d = wrap_dim(dim, x.ndim() + 1);
  Shape s = x.shape();
  s.insert(s.begin() + d, 1);
  return reshape(x, s);
}

Var squeeze(const Var& x, std::int64_t dim) {
  if (x.ndim() == 0) return x;
  const int d = wrap_dim(dim, x.ndim());
  Shape s = x.shape();
  if (s[static_cast<std::size_t>(d)] != 1) return x;
  s.erase(s.begin() + d);
  return reshape(x, s);
}

Var matmul(const Var& a, const Var& b) {
  if (a.ndim() == 0 || b.ndim() == 0)
    throw Error(ErrorKind::InvalidArgument, "both arguments to matmul need to be at least 1D");
  if (a.dtype() != b.dtype())
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("expected m1 and m2 to have the same dtype, but got: {} != {}", name(a.dtype()),
                            name(b.dtype())));
  const DType dt = a.dtype();
  if (a.ndim() == 1 && b.ndim() == 1) {
    if (a.numel() != b.numel()) throw Error(ErrorKind::InvalidArgument, "inconsistent tensor size in dot");
    return reshape(bmm_broadcast(unsqueeze(a, 0), unsqueeze(b, 1), dt), {});
  }
  if (a.ndim() == 1) return squeeze(bmm_broadcast(unsqueeze(a, 0), b, dt), -2);
  if (b.ndim() == 1) return squeeze(bmm_broadcast(a, unsqueeze(b, 1), dt), -1);
  return bmm_broadcast(a, b, dt);
}

}  // namespace probe::runners::ops
