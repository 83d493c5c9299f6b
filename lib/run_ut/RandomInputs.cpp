#include "run_ut/RandomInputs.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "probe/error.h"

namespace probe::rut {
namespace {

std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [0, 1) with 53 random bits.
double uniform01(std::uint64_t& s) { return static_cast<double>(splitmix(s) >> 11) * 0x1p-53; }

double finite_max(DType t) {
  switch (t) {
    case DType::Float16:
      return 65504.0;
    case DType::BFloat16:
      return 3.3895313892515355e+38;
    case DType::Float32:
      return static_cast<double>(std::numeric_limits<float>::max());
    default:
      return std::numeric_limits<double>::max();
  }
}

// Writes `v` into element i of a float64 staging buffer; the final cast rounds to the dtype
// (and truncates toward zero for integers, as assigning a float into a torch int tensor does).
void pin(std::vector<double>& buf, std::int64_t i, double v) {
  if (i >= 0 && static_cast<std::size_t>(i) < buf.size()) buf[static_cast<std::size_t>(i)] = v;
}

}  // namespace

std::uint64_t derive_seed(std::uint64_t run_seed, std::string_view api, std::string_view field) {
  // FNV-1a over the names, then mixed with the seed: stable across platforms and runs.
  std::uint64_t h = 1469598103934665603ull;
  auto eat = [&h](std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xFF) * 1099511628211ull;
  };
  eat(api);
  eat(field);
  std::uint64_t s = run_seed ^ h;
  return splitmix(s);
}

Tensor random_tensor(const RandomSpec& spec, std::uint64_t seed) {
  const DType dt = spec.dtype;
  if (is_complex(dt)) throw Error(ErrorKind::Unsupported, "random data for complex tensors is not supported");
  const std::int64_t n = numel(spec.shape);
  bool empty = std::any_of(spec.shape.begin(), spec.shape.end(), [](std::int64_t d) { return d == 0; });
  if (empty) return Tensor::zeros(dt, spec.shape);
  if (!spec.low || !spec.high)
    throw Error(ErrorKind::InvalidArgument, "Data info Min: " + spec.min_text + ", Max: " + spec.max_text +
                                                ", info type must be int or float.");
  const double low = *spec.low, high = *spec.high;
  const double low_o = spec.low_origin.value_or(low), high_o = spec.high_origin.value_or(high);
  std::uint64_t state = seed;
  std::vector<double> buf(static_cast<std::size_t>(n));

  if (dt == DType::Bool) {
    auto lo = static_cast<std::int64_t>(low), hi = static_cast<std::int64_t>(high);
    if (lo > hi) std::swap(lo, hi);
    auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    for (auto& v : buf) v = (lo + static_cast<std::int64_t>(splitmix(state) % span)) > 0 ? 1.0 : 0.0;
    return Tensor::from_values(buf, spec.shape).to(DType::Bool);
  }
  if (is_floating(dt)) {
    if (std::isnan(high)) {
      std::fill(buf.begin(), buf.end(), std::nan(""));
      return Tensor::from_values(buf, spec.shape).to(dt);
    }
    if (high_o != 0 && std::isinf(high)) {
      // The whole last sub-tensor along the first dimension takes Min (a 0-d tensor: its element).
      std::fill(buf.begin(), buf.end(), high);
      std::int64_t last = spec.shape.empty() ? 1 : n / spec.shape.front();
      std::fill(buf.end() - last, buf.end(), low);
      return Tensor::from_values(buf, spec.shape).to(dt);
    }
    const double fmax = finite_max(dt);
    double lo_s = std::isinf(low) ? (low > 0 ? fmax : -fmax) : low;
    double hi_s = std::isinf(high) ? (high > 0 ? fmax : -fmax) : high;
    double scale = hi_s - lo_s;
    for (auto& v : buf) v = uniform01(state) * scale + lo_s;
  } else {
    auto lo = static_cast<std::int64_t>(low), hi = static_cast<std::int64_t>(high);
    if (lo > hi) std::swap(lo, hi);
    auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    for (auto& v : buf)
      v = static_cast<double>(lo + static_cast<std::int64_t>(span ? splitmix(state) % span : 0));
  }
  // Pin the extremes so the generated tensor has the dumped Max/Min (and their inf/NaN).
  if (std::isnan(high_o)) {
    if (n <= 2) {
      pin(buf, 0, std::nan(""));
      pin(buf, n - 1, high);
    } else {
      pin(buf, 0, low);
      pin(buf, 1, std::nan(""));
      pin(buf, n - 1, high);
    }
  } else {
    pin(buf, 0, low);
    pin(buf, n - 1, high);
    if (std::isinf(high_o)) pin(buf, n - 1, high_o);
    if (std::isinf(low_o)) pin(buf, 0, low_o);
  }
  if (!is_floating(dt)) {
    // NaN/inf cannot live in an integer tensor: torch's assignment would give garbage; use 0/limits.
    for (auto& v : buf) {
      if (std::isnan(v)) v = 0;
      v = std::clamp(std::trunc(v), is_signed(dt) ? -9.2e18 : 0.0, 9.2e18);
    }
  }
  return Tensor::from_values(buf, spec.shape).to(dt);
}

}  // namespace probe::rut
