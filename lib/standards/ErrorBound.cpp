// DECISIONS D14, the error-bound verdict. For output element i with float64 bench b, device value d,
// magnitude m and accumulation length K, the device passes when
//   |d - b| <= (1 + 2^-10) * (u_out |b| + (c u_acc + g(K, u_acc)) m) + s_out
// u_out: the output dtype's unit roundoff (the final rounding); u_acc: float32's (low-precision kernels
// accumulate in float32) or float64's; c: the family's own error in units of u_acc; s_out: the dtype's
// smallest subnormal (rounding below the normal range is absolute); g(K, u) = min(K u / (1 - K u),
// 8 sqrt(K) u), the worst-case bound of a K-term sum for small K and the probabilistic one (8 standard
// deviations of independent roundings) for large K. An element beyond it but within the same bound with
// 4 u_low m in place of g(K, u_acc) m, u_low the unit roundoff of a reduced-precision accumulation (the
// output dtype's, TF32's for float32), is a Warning naming that cause; beyond both it is an error.
#include "standards/ErrorBound.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "metrics/KernelControl.h"
#include "probe/error.h"
#include "probe/error_bound.h"
#include "standards/ItemCompare.h"
#include "support/Dispatch.h"
#include "support/ThreadPool.h"
#include "support/UninitStorage.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace probe::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSlack = 1.0 + 1.0 / 1024;  // covers the cross terms of the two roundings
constexpr double kLambda = 8.0;
// A sum of K random-signed terms accumulated in precision u errs by about u times its magnitude (the
// partial sums' roundings grow with sqrt(k) while the magnitude grows with k): 4 of those names the cause.
constexpr double kBandUnits = 4.0;

using MK = MagnitudeKind;
using AK = AccumulationKind;

// The D14 table, one row per operator (dunders, reflected and in-place spellings are normalised first).
struct FamilyRow {
  std::string_view op;
  BoundFamily family;
};
constexpr BoundFamily kGemm{"gemm", MK::AbsInputs, AK::LastDimOfFirst, 1, ""};
constexpr BoundFamily kGemmBias{"gemm", MK::AbsInputs, AK::LastDimOfSecond, 2, "", true};
constexpr BoundFamily kConv{"convolution", MK::AbsInputs, AK::ConvWeight, 2, ""};
constexpr BoundFamily kAtenConv{"convolution", MK::AbsInputs, AK::ConvWeightAnyLayout, 2, ""};
constexpr BoundFamily kReduction{"reduction", MK::AbsInputs, AK::ReducedCount, 2, ""};
constexpr BoundFamily kScan{"scan", MK::AbsInputs, AK::LargestDim, 1, ""};
constexpr BoundFamily kAdd{"addition", MK::AbsInputs, AK::None, 2, "", true};
constexpr BoundFamily kSub{"addition", MK::AbsInputs, AK::None, 2, "add", true};
constexpr BoundFamily kRounded{"correctly rounded", MK::Bench, AK::None, 1, "", true};
constexpr BoundFamily kExact{"exact", MK::Bench, AK::None, 0, ""};
// DECISIONS D20: torch's CPU kernels for float16/bfloat16 evaluate these functions with intermediate
// results rounded to the dtype (rsqrt = 1 / sqrt, sigmoid = 1 / (1 + exp(-x)), silu = x / (1 + exp(-x)):
// up to two roundings before the final one, each propagated with a condition number <= 1).
constexpr BoundFamily kLibm{"transcendental", MK::Bench, AK::None, 8, "", false, 2, false};
constexpr BoundFamily kCancelling{"activation x*f(x)", MK::AbsInputs, AK::None, 16, "", false, 2, false};
// DECISIONS D20: silu's gradient dy s (1 + x (1 - s)), s = sigmoid(x), with every intermediate rounded:
// its error is at most u s (6 + |x| (8 (1 - s) + 3 s)) |dy| <= 8 u s (1 + |x|) |dy| (s's 3 roundings
// enter 1 - s and are multiplied by x), so the magnitude is |dy| s(x) (1 + |x|) (silu_grad_magnitude)
// and the band 8 roundings of it.
constexpr BoundFamily kSiluBackward{"silu backward", MK::AbsInputs, AK::None, 16, "", false, 8, true};
// DECISIONS D20: the input gradients of softmax, log_softmax and layer_norm are sums over the softmax dim or
// the normalised elements (and, for layer_norm's weight and bias, over the rows), judged against the same
// sums on absolute values (softmax_grad_magnitude, layer_norm_grad_magnitude) with D14's accumulation
// bound and band. Their backward reuses the device's output y, rounded to the output dtype: its error
// (u_out relative for softmax, u_out |y| absolute for log_softmax, plus the forward's own bound) moves
// the gradient by at most u_out times the magnitude (softmax_grad_magnitude).
constexpr BoundFamily kSoftmaxBackward{
    "softmax backward", MK::AbsInputs, AK::LargestDim, 8, "", false, 0, false, 1};
constexpr BoundFamily kLogSoftmaxBackward{
    "log_softmax backward", MK::AbsInputs, AK::LargestDim, 8, "", false, 0, false, 1};
constexpr BoundFamily kLayerNormBackward{"layer_norm backward", MK::AbsInputs, AK::Normalized, 8, ""};
// DECISIONS D20: mul's gradients g * other (summed over the broadcast dims): torch rounds each product to
// the dtype before the sum (u_out m) and sums in float32 (c = 2, K = the broadcast count); magnitude: the
// bench backward on absolute values.
constexpr BoundFamily kMulBackward{"mul backward", MK::AbsInputs, AK::None, 2, "", false, 0, false, 1};
// DECISIONS D20: rsqrt's gradient -0.5 g y^3 from the saved output y: y's rounding is 3 u_out on y^3;
// pow and the product in float32 (c = 8); the band adds D20's forward band on y (2 more roundings, 6 u_out
// on y^3) and the two roundings of pow and the product: 8 u_out m, m = 0.5 |g| x^-1.5.
constexpr BoundFamily kRsqrtBackward{"rsqrt backward", MK::AbsInputs, AK::None, 8, "", false, 8, true, 3};
constexpr BoundFamily kSoftmax{"softmax", MK::BenchLog, AK::LargestDim, 8, ""};
// DECISIONS D24: torch's bfloat16 log_softmax rounds x - max and the log-sum-exp lse to the dtype before
// y = (x - max) - lse; both are at most |y| (x - max <= 0 <= lse), so the two roundings cost at most
// 2 u_out (|b| + 1), the band (measured on 4096 rows of 8: 1.16 u_out (|b| + 1) in all).
constexpr BoundFamily kLogSoftmax{"log_softmax", MK::BenchPlusOne, AK::LargestDim, 8, "", false, 2, true};
constexpr BoundFamily kLayerNorm{"layer_norm", MK::Normalization, AK::Normalized, 8, ""};

constexpr std::array kFamilies{
    FamilyRow{"mm", kGemm},
    FamilyRow{"matmul", kGemm},
    FamilyRow{"bmm", kGemm},
    FamilyRow{"mv", kGemm},
    FamilyRow{"dot", kGemm},
    FamilyRow{"vdot", kGemm},
    FamilyRow{"inner", kGemm},
    FamilyRow{"linear", kGemm},
    FamilyRow{"addmm", kGemmBias},
    FamilyRow{"addbmm", kGemmBias},
    FamilyRow{"baddbmm", kGemmBias},
    FamilyRow{"addmv", kGemmBias},
    FamilyRow{"conv1d", kConv},
    FamilyRow{"conv2d", kConv},
    FamilyRow{"conv3d", kConv},
    FamilyRow{"convolution", kAtenConv},
    FamilyRow{"_convolution", kAtenConv},
    FamilyRow{"sum", kReduction},
    FamilyRow{"nansum", kReduction},
    FamilyRow{"mean", kReduction},
    FamilyRow{"cumsum", kScan},
    FamilyRow{"add", kAdd},
    FamilyRow{"sub", kSub},
    FamilyRow{"mul", kRounded},
    FamilyRow{"div", kRounded},
    FamilyRow{"true_divide", kRounded},
    FamilyRow{"sqrt", kRounded},
    FamilyRow{"square", kRounded},
    FamilyRow{"reciprocal", kLibm},
    FamilyRow{"rsqrt", kLibm},
    FamilyRow{"abs", kExact},
    FamilyRow{"neg", kExact},
    FamilyRow{"relu", kExact},
    FamilyRow{"clamp", kExact},
    FamilyRow{"maximum", kExact},
    FamilyRow{"minimum", kExact},
    FamilyRow{"float", kExact},
    FamilyRow{"half", kExact},
    FamilyRow{"bfloat16", kExact},
    FamilyRow{"exp", kLibm},
    FamilyRow{"exp2", kLibm},
    FamilyRow{"expm1", kLibm},
    FamilyRow{"log", kLibm},
    FamilyRow{"log2", kLibm},
    FamilyRow{"log10", kLibm},
    FamilyRow{"log1p", kLibm},
    FamilyRow{"sigmoid", kLibm},
    FamilyRow{"tanh", kLibm},
    FamilyRow{"sin", kLibm},
    FamilyRow{"cos", kLibm},
    FamilyRow{"erf", kLibm},
    FamilyRow{"softplus", kLibm},
    // `probe metrics` without --api: an element-wise function accurate to 4 ulps.
    FamilyRow{"elementwise", kLibm},
    FamilyRow{"gelu", kCancelling},
    FamilyRow{"silu", kCancelling},
    FamilyRow{"hardswish", kCancelling},
    FamilyRow{"softmax", kSoftmax},
    FamilyRow{"_softmax", kSoftmax},
    FamilyRow{"log_softmax", kLogSoftmax},
    FamilyRow{"layer_norm", kLayerNorm},
    FamilyRow{"_log_softmax", kLogSoftmax},
};

// DECISIONS D24: the aten ops the online checker (PtdbgDispatch's level, below autograd) sees where offline
// run_ut sees one Functional/Tensor API: each is judged by the family (and D20 band) of its offline
// counterpart, per output. A backward op computes the counterpart's input gradients, so it takes the
// counterpart's backward family and magnitude (error_bound_grad_magnitude on the counterpart's call rebuilt
// from the aten arguments, aten_magnitude). native_layer_norm's mean is a K-term sum of the row
// scaled by 1/K (magnitude mean |x|, c = 2 as D14's mean); its rstd, 1 / sqrt(var + eps) from a K-term
// sum of squares, errs relative to itself (c = 8 as D14's rsqrt, plus the sum's g(K, u_acc)). torch's
// bfloat16 kernel computes both with intermediate results in bfloat16 (D14's layer_norm band): the mean
// gets D14's accumulation band (4 u_out mean |x|; measured 2.25), rstd a band of 4 roundings of |rstd|
// (variance, sqrt and reciprocal rounded, and the variance from a rounded mean; measured on 4096 rows of 16:
// up to 3.81 u_out |rstd|, 40% of the elements not float32's rstd rounded once).
constexpr BoundFamily kLayerNormMean{"layer_norm mean", MK::AbsInputs, AK::Normalized, 2, ""};
constexpr BoundFamily kLayerNormRstd{"layer_norm rstd", MK::Bench, AK::Normalized, 8, "", false, 4, false};

struct AtenRow {
  std::string_view op;                        // aten operator, as operator_of spells it
  std::string_view counterpart;               // the offline API whose family judges it
  bool gradient;                              // the op computes the counterpart's input gradients
  std::array<const BoundFamily*, 3> outputs;  // per output; nullptr: run_ut's rule
};
constexpr std::array kAtenRows{
    AtenRow{
        "native_layer_norm", "Functional.layer_norm", false, {&kLayerNorm, &kLayerNormMean, &kLayerNormRstd}},
    AtenRow{"native_layer_norm_backward",
            "Functional.layer_norm",
            true,
            {&kLayerNormBackward, &kLayerNormBackward, &kLayerNormBackward}},
    AtenRow{"_softmax_backward_data", "Functional.softmax", true, {&kSoftmaxBackward, nullptr, nullptr}},
    AtenRow{"_log_softmax_backward_data",
            "Functional.log_softmax",
            true,
            {&kLogSoftmaxBackward, nullptr, nullptr}},
    AtenRow{"gelu_backward", "Functional.gelu", true, {&kCancelling, nullptr, nullptr}},
};

// "Functional.gelu.0" -> "gelu", "Aten.mm.default" -> "mm", "__rmatmul__" -> "matmul", "add_" -> "add".
std::string_view operator_of(std::string_view api) {
  static constexpr std::array kPrefixes{"Functional.", "Tensor.", "Torch.",          "Aten.",
                                        "NPU.",        "Mint.",   "MintFunctional.", "Distributed."};
  for (std::string_view p : kPrefixes)
    if (api.substr(0, p.size()) == p) {
      api.remove_prefix(p.size());
      break;
    }
  api = api.substr(0, api.find('.'));
  if (api.size() > 4 && api.substr(0, 2) == "__" && api.substr(api.size() - 2) == "__") {
    api = api.substr(2, api.size() - 4);
    if (api.size() > 1 && (api[0] == 'r' || api[0] == 'i')) {
      const std::string_view rest = api.substr(1);
      for (std::string_view known : {"add", "sub", "mul", "matmul", "truediv", "div"})
        if (rest == known) api = rest;
    }
    if (api == "truediv") api = "div";
  }
  while (api.size() > 1 && api.back() == '_' && api.front() != '_') api.remove_suffix(1);
  return api;
}

struct Format {
  int precision;  // significand bits, the implicit one included
  double max_finite, min_subnormal;
};
std::optional<Format> format_of(DType t) {
  switch (t) {
    case DType::Float16:
      return Format{11, 65504.0, std::ldexp(1.0, -24)};
    case DType::BFloat16:
      return Format{8, 3.3895313892515355e38, std::ldexp(1.0, -133)};
    case DType::Float32:
      return Format{24, 3.4028234663852886e38, std::ldexp(1.0, -149)};
    case DType::Float64:
      return Format{53, std::numeric_limits<double>::max(), std::ldexp(1.0, -1074)};
    default:
      return std::nullopt;
  }
}

// The error bound of a K-term sum in units of magnitude.
double sum_bound(std::int64_t k, double u) {
  const double kd = static_cast<double>(std::max<std::int64_t>(k, 1));
  const double worst = kd * u < 1 ? kd * u / (1 - kd * u) : kInf;
  return std::min(worst, kLambda * std::sqrt(kd) * u);
}

// Float64 values of a tensor, without a copy when it already holds float64.
struct Doubles {
  std::vector<double> owned;
  const double* p = nullptr;
  explicit Doubles(const Tensor& t) {
    if (t.dtype() == DType::Float64) {
      p = t.data<double>();
    } else {
      owned = t.to_doubles();
      p = owned.data();
    }
  }
};

std::string coords_text(const std::vector<std::int64_t>& at) {
  return fmt::format("[{}]", fmt::join(at, ", "));
}

}  // namespace

double accumulation_bound(std::int64_t k, double u) { return sum_bound(k, u); }

std::optional<std::pair<double, double>> rounding_of(DType t) {
  const std::optional<Format> f = format_of(t);
  if (!f) return std::nullopt;
  return std::pair{std::ldexp(1.0, -f->precision), f->min_subnormal};
}

const AtenRow* aten_row(std::string_view api) {
  const std::string_view op = operator_of(api);
  for (const AtenRow& row : kAtenRows)
    if (row.op == op) return &row;
  return nullptr;
}

const BoundFamily* output_family(std::string_view api, std::size_t output, bool backward) {
  if (const AtenRow* row = aten_row(api))
    return output < row->outputs.size() ? row->outputs[output] : nullptr;
  return bound_family(api, backward);
}

std::optional<AtenCounterpart> aten_counterpart(std::string_view api) {
  const AtenRow* row = aten_row(api);
  if (!row) return std::nullopt;
  return AtenCounterpart{row->counterpart, row->gradient};
}

const BoundFamily* bound_family(std::string_view api, bool backward) {
  if (const AtenRow* row = aten_row(api)) return row->outputs[0];
  const std::string_view op = operator_of(api);
  if (backward && op == "silu") return &kSiluBackward;
  if (backward && (op == "softmax" || op == "_softmax")) return &kSoftmaxBackward;
  if (backward && (op == "log_softmax" || op == "_log_softmax")) return &kLogSoftmaxBackward;
  if (backward && op == "layer_norm") return &kLayerNormBackward;
  if (backward && op == "mul") return &kMulBackward;
  if (backward && op == "rsqrt") return &kRsqrtBackward;
  for (const FamilyRow& row : kFamilies)
    if (row.op == op) return &row.family;
  return nullptr;
}

std::int64_t accumulation_length(const BoundFamily& family, const std::vector<Shape>& inputs,
                                 const Shape& output) {
  auto last_dim = [&](std::size_t i) -> std::int64_t {
    if (i >= inputs.size() || inputs[i].empty()) return 1;
    return inputs[i].back();
  };
  std::int64_t k = 1;
  switch (family.accumulation) {
    case AccumulationKind::None:
      break;
    case AccumulationKind::LastDimOfFirst:
      k = last_dim(0);
      break;
    case AccumulationKind::LastDimOfSecond:
      k = last_dim(1);
      break;
    case AccumulationKind::ConvWeight:
      // weight [out, in/groups, k...]: one output element sums in/groups * prod(k) products.
      if (inputs.size() >= 2 && inputs[1].size() >= 2)
        k = probe::numel(inputs[1]) / std::max<std::int64_t>(1, inputs[1][0]);
      break;
    case AccumulationKind::ConvWeightAnyLayout:
      // [out, in/groups, k...] or, transposed, [in, out/groups, k...]: a slice along the smaller of the two
      // channel dims holds at least as many elements as either layout's terms per output element.
      if (inputs.size() >= 2 && inputs[1].size() >= 2) {
        const Shape& w = inputs[1];
        k = probe::numel(w) / std::max<std::int64_t>(1, std::min(w[0], w[1]));
      }
      break;
    case AccumulationKind::ReducedCount:
      if (!inputs.empty()) {
        const std::int64_t out = std::max<std::int64_t>(1, probe::numel(output));
        k = probe::numel(inputs[0]) / out;
      }
      break;
    case AccumulationKind::Normalized:  // normalized_shape is no tensor: the largest dim bounds it from above
    case AccumulationKind::LargestDim:
      for (const Shape& s : inputs)
        for (std::int64_t d : s) k = std::max(k, d);
      break;
  }
  return std::max<std::int64_t>(k, 1);
}

namespace {

// The pre-pass of the error-bound scan: whether any element of a block could change what the scan keeps,
// i.e. !(|d - b| <= (kSlack (u_out |b| + acc m) + floor) gate) with m = |magnitude| or |b| + plus (a NaN
// compares false and so counts). Each copy below evaluates the same operations in the same order, one
// IEEE rounding each (no FMA), so all give the same answer; the SIMD ones leave the tail to the scalar one.
struct FilterArgs {
  double u_out, acc, plus, floor, gate;
};

template <class T, bool WithMagnitude>
bool filter_scalar(const double* b, const T* d, const double* m, std::int64_t n, const FilterArgs& a) {
  bool any = false;
  for (std::int64_t i = 0; i < n; ++i) {
    const double bi = b[i], err = std::fabs(as_double(d[i]) - bi), ab = std::fabs(bi);
    const double mag = WithMagnitude ? std::fabs(m[i]) : ab + a.plus;
    any |= !(err <= (kSlack * (a.u_out * ab + a.acc * mag) + a.floor) * a.gate);
  }
  return any;
}

#if defined(__x86_64__)
template <class T, bool WithMagnitude>
bool filter_sse2(const double* b, const T* d, const double* m, std::int64_t n, const FilterArgs& a) {
  const __m128d sign = _mm_set1_pd(-0.0), u = _mm_set1_pd(a.u_out), acc = _mm_set1_pd(a.acc),
                plus = _mm_set1_pd(a.plus), slack = _mm_set1_pd(kSlack), fl = _mm_set1_pd(a.floor),
                gate = _mm_set1_pd(a.gate);
  __m128d any = _mm_setzero_pd();
  std::int64_t i = 0;
  for (; i + 2 <= n; i += 2) {
    __m128d di;
    if constexpr (std::is_same_v<T, float>)
      di = _mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(d + i))));
    else
      di = _mm_loadu_pd(d + i);
    const __m128d bi = _mm_loadu_pd(b + i);
    const __m128d err = _mm_andnot_pd(sign, _mm_sub_pd(di, bi)), ab = _mm_andnot_pd(sign, bi);
    const __m128d mag = WithMagnitude ? _mm_andnot_pd(sign, _mm_loadu_pd(m + i)) : _mm_add_pd(ab, plus);
    const __m128d lim = _mm_mul_pd(
        _mm_add_pd(_mm_mul_pd(slack, _mm_add_pd(_mm_mul_pd(u, ab), _mm_mul_pd(acc, mag))), fl), gate);
    any = _mm_or_pd(any, _mm_cmpnle_pd(err, lim));
  }
  if (_mm_movemask_pd(any)) return true;
  return filter_scalar<T, WithMagnitude>(b + i, d + i, WithMagnitude ? m + i : nullptr, n - i, a);
}

template <class T, bool WithMagnitude>
__attribute__((target("avx2"))) bool filter_avx2(const double* b, const T* d, const double* m, std::int64_t n,
                                                 const FilterArgs& a) {
  const __m256d sign = _mm256_set1_pd(-0.0), u = _mm256_set1_pd(a.u_out), acc = _mm256_set1_pd(a.acc),
                plus = _mm256_set1_pd(a.plus), slack = _mm256_set1_pd(kSlack), fl = _mm256_set1_pd(a.floor),
                gate = _mm256_set1_pd(a.gate);
  __m256d any = _mm256_setzero_pd();
  std::int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256d di;
    if constexpr (std::is_same_v<T, float>)
      di = _mm256_cvtps_pd(_mm_loadu_ps(d + i));
    else
      di = _mm256_loadu_pd(d + i);
    const __m256d bi = _mm256_loadu_pd(b + i);
    const __m256d err = _mm256_andnot_pd(sign, _mm256_sub_pd(di, bi)), ab = _mm256_andnot_pd(sign, bi);
    const __m256d mag =
        WithMagnitude ? _mm256_andnot_pd(sign, _mm256_loadu_pd(m + i)) : _mm256_add_pd(ab, plus);
    const __m256d lim = _mm256_mul_pd(
        _mm256_add_pd(_mm256_mul_pd(slack, _mm256_add_pd(_mm256_mul_pd(u, ab), _mm256_mul_pd(acc, mag))), fl),
        gate);
    any = _mm256_or_pd(any, _mm256_cmp_pd(err, lim, _CMP_NLE_UQ));
  }
  if (_mm256_movemask_pd(any)) return true;
  return filter_scalar<T, WithMagnitude>(b + i, d + i, WithMagnitude ? m + i : nullptr, n - i, a);
}
template <class T, bool WithMagnitude>
__attribute__((target("avx512f"))) bool filter_avx512(const double* b, const T* d, const double* m,
                                                      std::int64_t n, const FilterArgs& a) {
  const __m512d u = _mm512_set1_pd(a.u_out), acc = _mm512_set1_pd(a.acc), plus = _mm512_set1_pd(a.plus),
                slack = _mm512_set1_pd(kSlack), fl = _mm512_set1_pd(a.floor), gate = _mm512_set1_pd(a.gate);
  __mmask8 any = 0;
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m512d di;
    if constexpr (std::is_same_v<T, float>)
      di = _mm512_maskz_cvtps_pd(0xff, _mm256_loadu_ps(d + i));  // (GCC 12 warns on the unmasked form)
    else
      di = _mm512_loadu_pd(d + i);
    const __m512d bi = _mm512_loadu_pd(b + i);
    const __m512d err = _mm512_abs_pd(_mm512_sub_pd(di, bi)), ab = _mm512_abs_pd(bi);
    const __m512d mag = WithMagnitude ? _mm512_abs_pd(_mm512_loadu_pd(m + i)) : _mm512_add_pd(ab, plus);
    const __m512d lim = _mm512_mul_pd(
        _mm512_add_pd(_mm512_mul_pd(slack, _mm512_add_pd(_mm512_mul_pd(u, ab), _mm512_mul_pd(acc, mag))), fl),
        gate);
    any = static_cast<__mmask8>(any | _mm512_cmp_pd_mask(err, lim, _CMP_NLE_UQ));
  }
  if (any) return true;
  return filter_scalar<T, WithMagnitude>(b + i, d + i, WithMagnitude ? m + i : nullptr, n - i, a);
}
#endif

}  // namespace

struct ErrorBoundScan::State {
  struct Ranked {
    double key;
    std::int64_t index;
    double bound;
  };
  // One state per chunk id; each keeps its own worst_count largest ratios (a min-heap), merged in finish().
  struct Part {
    std::int64_t beyond = 0, beyond_band = 0;
    double worst_ratio = 0;
    double gate = 0;  // an error at or below gate * bound changes nothing this part keeps
    std::vector<Ranked> heap;
    ErrorHistogram histogram;
  };

  const BoundFamily& family;
  const Tensor& bench;
  DType out_dtype;  // the device output's own dtype
  Tensor dev;       // the device, read in its own dtype; other dtypes (integers, bool, complex) widened once
  std::int64_t accumulation;
  std::size_t worst_count;
  // The bench and the magnitude are float64 from the runners; anything else is widened once here.
  Doubles b;
  std::optional<Doubles> m;
  const double* mp = nullptr;
  double u_out = 0, acc = 0, acc_low = 0, floor = 0, max_finite = kInf, log_k = 0;
  bool has_band = false;
  bool elementwise_band = false;  // D20's band (roundings in the output dtype), not an accumulation's
  MagnitudeKind kind;
  // The pre-pass's instruction set: -1 scalar, 0 SSE2, 1 AVX2, 2 AVX-512 (metrics_isa(): the fused metrics
  // kernel's choice and its test hooks).
  int isa = -1;
  bool histogram = false;
  std::vector<Part> parts;

  State(const BoundFamily& f, const Tensor& bench_in, const Tensor& device, const Tensor* magnitude,
        std::int64_t k, std::size_t worst)
      : family(f),
        bench(bench_in),
        out_dtype(device.dtype()),
        dev(device),
        accumulation(k),
        worst_count(worst),
        b(bench_in),
        kind(f.magnitude) {
    if (!is_floating(dev.dtype())) dev = device.to(DType::Float64);
    if (takes_magnitude(family.magnitude)) {
      m.emplace(*magnitude);
      mp = m->p;
    }
    const std::optional<Format> fmt_out = format_of(device.dtype());
    // Integer and bool outputs are exact.
    u_out = fmt_out ? std::ldexp(1.0, -fmt_out->precision) : 0;
    const double u_acc = !fmt_out                           ? 0
                         : device.dtype() == DType::Float64 ? std::ldexp(1.0, -53)
                                                            : std::ldexp(1.0, -24);
    // float64 outputs: the bench carries an error of the same size as the device's.
    const double bench_share = device.dtype() == DType::Float64 ? 2 : 1;
    acc = bench_share * (family.own_ulps * u_acc + sum_bound(accumulation, u_acc)) +
          (family.scalar_operand ? u_out : 0) + family.rounded_operands * u_out;
    // The band: sums whose precision is a kernel's choice (GEMM, convolution, reductions), and
    // normalisations computed in the low-precision output dtype itself.
    const bool low_precision_out = device.dtype() == DType::BFloat16 || device.dtype() == DType::Float16;
    has_band = fmt_out && accumulation > 1 &&
               (family.magnitude == MagnitudeKind::AbsInputs
                    ? device.dtype() != DType::Float64
                    : family.magnitude == MagnitudeKind::Normalization && low_precision_out);
    // DECISIONS D20: kernels that round their intermediate results to a float16/bfloat16 output dtype.
    elementwise_band = fmt_out && low_precision_out && family.band_roundings > 0 && !has_band;
    has_band = has_band || elementwise_band;
    const double u_low = device.dtype() == DType::Float32 ? std::ldexp(1.0, -11) : u_out;
    acc_low = family.own_ulps * u_acc + kBandUnits * u_low + (family.scalar_operand ? u_out : 0) +
              family.rounded_operands * u_out;
    floor = fmt_out ? fmt_out->min_subnormal : 0;
    max_finite = fmt_out ? fmt_out->max_finite : kInf;
    log_k = std::log(static_cast<double>(std::max<std::int64_t>(accumulation, 1)));
    isa = metrics_scalar_only() ? -1 : metrics_isa();
  }

  // A non-finite pair that agrees: both NaN, or the device's infinity where the bench is at or beyond the
  // largest finite value of the output format, with the same sign.
  bool same_nonfinite(double bi, double di) const {
    return (std::isnan(bi) && std::isnan(di)) ||
           (std::isinf(di) && std::isfinite(bi) && std::fabs(bi) >= max_finite &&
            std::signbit(bi) == std::signbit(di));
  }
  // The magnitude element i's bound scales with: the magnitude bench's, or |bench| (`ab`) as the family says.
  double magnitude_at(std::int64_t i, double ab) const {
    if (mp) return std::fabs(mp[i]);
    if (kind == MagnitudeKind::BenchPlusOne) return ab + 1;
    if (kind == MagnitudeKind::BenchLog && ab > 0) return ab * (1 + std::fabs(std::log(ab)) + log_k);
    return ab;
  }

  // The report's histogram: every element's error over the bound scan_exact computes, read while the block
  // is in cache for the scan that follows.
  template <class T>
  void bin(const T* dp, std::int64_t begin, std::int64_t end, Part& part) const {
    // Four interleaved count arrays: a run of elements in one bin would otherwise wait on its own increment.
    std::array<std::array<std::int64_t, ErrorHistogram::kSlots>, 4> slots{};
    const auto count = [&](std::int64_t i, double ratio) {
      ++slots[static_cast<std::size_t>(i & 3)][static_cast<std::size_t>(ErrorHistogram::slot(ratio))];
    };
    for (std::int64_t i = begin; i < end; ++i) {
      const double bi = b.p[i], di = as_double(dp[i]);
      if (bi == di) {
        count(i, 0);
        continue;
      }
      if (!std::isfinite(bi) || !std::isfinite(di)) {
        count(i, same_nonfinite(bi, di) ? 0.0 : std::numeric_limits<double>::quiet_NaN());
        continue;
      }
      const double err = std::fabs(di - bi), ab = std::fabs(bi);
      count(i, err / (kSlack * (u_out * ab + acc * magnitude_at(i, ab)) + floor));
    }
    for (const auto& s : slots) part.histogram.add_slots(s);
  }

  // The exact pass: every non-finite mismatch and every element that beats the gate, with its ratio.
  template <class T>
  void scan_exact(const T* dp, std::int64_t begin, std::int64_t end, Part& part) const {
    auto later = [](const Ranked& x, const Ranked& y) { return x.key > y.key; };
    for (std::int64_t i = begin; i < end; ++i) {
      const double bi = b.p[i], di = as_double(dp[i]);
      if (bi == di) continue;
      double ratio = 0, bound = 0;
      bool in_band = false;
      if (!std::isfinite(bi) || !std::isfinite(di)) {
        if (same_nonfinite(bi, di)) continue;
        ratio = kInf;
      } else {
        const double err = std::fabs(di - bi), ab = std::fabs(bi);
        const double mag = magnitude_at(i, ab);
        bound = kSlack * (u_out * ab + acc * mag) + floor;
        // Below both the bound and the ratio that would change anything kept (the largest, the heap's
        // smallest): no division needed.
        if (err <= bound * part.gate) continue;
        ratio = err / bound;
        if (ratio > 1 && elementwise_band)
          in_band = err <= kSlack * (u_out * ab + acc * mag +
                                     family.band_roundings * u_out * (family.band_on_magnitude ? mag : ab)) +
                               floor;
        else if (ratio > 1 && has_band)
          in_band = err <= kSlack * (u_out * ab + acc_low * mag) + floor;
      }
      if (ratio > 1) {
        ++part.beyond;
        if (!in_band) ++part.beyond_band;
      }
      part.worst_ratio = std::max(part.worst_ratio, ratio);
      if (worst_count == 0) {
        part.gate = std::min(1.0, part.worst_ratio);
        continue;
      }
      if (part.heap.size() < worst_count) {
        part.heap.push_back({ratio, i, bound});
        std::push_heap(part.heap.begin(), part.heap.end(), later);
      } else if (ratio > part.heap.front().key) {
        std::pop_heap(part.heap.begin(), part.heap.end(), later);
        part.heap.back() = {ratio, i, bound};
        std::push_heap(part.heap.begin(), part.heap.end(), later);
      }
      if (part.heap.size() == worst_count) part.gate = std::min(1.0, part.heap.front().key);
    }
  }

  // Whether any element of [begin, end) could change what a part with this gate keeps: a branch-free pass
  // the compiler vectorises (a NaN compares false and so counts), so that the exact pass runs only on such
  // blocks.
  template <class T>
  bool block_matters(const T* dp, std::int64_t begin, std::int64_t end, double gate) const {
    const FilterArgs a{u_out, acc, kind == MagnitudeKind::BenchPlusOne ? 1.0 : 0.0, floor, gate};
    const double* bp = b.p + begin;
    const T* d = dp + begin;
    const std::int64_t n = end - begin;
#if defined(__x86_64__)
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (isa == 2)
        return mp ? filter_avx512<T, true>(bp, d, mp + begin, n, a)
                  : filter_avx512<T, false>(bp, d, nullptr, n, a);
      if (isa == 1)
        return mp ? filter_avx2<T, true>(bp, d, mp + begin, n, a)
                  : filter_avx2<T, false>(bp, d, nullptr, n, a);
      if (isa == 0)
        return mp ? filter_sse2<T, true>(bp, d, mp + begin, n, a)
                  : filter_sse2<T, false>(bp, d, nullptr, n, a);
    }
#endif
    return mp ? filter_scalar<T, true>(bp, d, mp + begin, n, a)
              : filter_scalar<T, false>(bp, d, nullptr, n, a);
  }

  template <class T>
  void scan(const T* dp, std::int64_t begin, std::int64_t end, Part& part) const {
    constexpr std::int64_t kBlock = 512;
    // softmax's magnitude takes a logarithm per element: no cheap pre-pass.
    if (kind != MagnitudeKind::BenchLog && end - begin > kBlock) {
      for (std::int64_t lo = begin; lo < end; lo += kBlock) {
        const std::int64_t hi = std::min(end, lo + kBlock);
        if (block_matters(dp, lo, hi, part.gate)) scan_exact(dp, lo, hi, part);
      }
      return;
    }
    scan_exact(dp, begin, end, part);
  }
};

ErrorBoundScan::ErrorBoundScan(const BoundFamily& family, const Tensor& bench, const Tensor& device,
                               const Tensor* magnitude, std::int64_t accumulation, std::size_t worst_count) {
  if (bench.shape() != device.shape())
    throw Error(
        ErrorKind::InvalidArgument,
        "has shape " + shape_to_string(device.shape()) + ", the bench " + shape_to_string(bench.shape()), "",
        "device");
  if (takes_magnitude(family.magnitude) && (!magnitude || magnitude->shape() != bench.shape()))
    throw Error(ErrorKind::InvalidArgument,
                magnitude ? "has shape " + shape_to_string(magnitude->shape()) + ", the bench " +
                                shape_to_string(bench.shape())
                          : "is required by the " + std::string(family.name) + " family",
                "", "magnitude");
  s_ = std::make_unique<State>(family, bench, device, magnitude, accumulation, worst_count);
}

ErrorBoundScan::~ErrorBoundScan() = default;

void ErrorBoundScan::want_histogram() { s_->histogram = true; }

void ErrorBoundScan::start(int chunks) {
  s_->parts.assign(static_cast<std::size_t>(std::max(chunks, 1)), {});
}

void ErrorBoundScan::scan(std::int64_t begin, std::int64_t end, int chunk) {
  State& s = *s_;
  State::Part& part = s.parts.at(static_cast<std::size_t>(chunk));
  visit_dtype(s.dev.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, float16_t> ||
                  std::is_same_v<T, bfloat16_t>) {
      if (s.histogram) s.bin(s.dev.template data<T>(), begin, end, part);
      s.scan(s.dev.template data<T>(), begin, end, part);
    }
  });
}

Verdict ErrorBoundScan::finish() {
  const State& s = *s_;
  const BoundFamily& family = s.family;
  const Tensor& dev = s.dev;
  const std::int64_t n = s.bench.numel();
  Verdict v;
  v.method = Method::ErrorBound;
  std::int64_t beyond = 0, beyond_band = 0;
  double worst_ratio = 0;
  std::vector<State::Ranked> heap;
  if (s.histogram) {
    v.histogram.emplace().unit = HistogramUnit::BoundUnits;
    for (const State::Part& part : s.parts) v.histogram->merge(part.histogram);
  }
  for (const State::Part& part : s.parts) {
    beyond += part.beyond;
    beyond_band += part.beyond_band;
    worst_ratio = std::max(worst_ratio, part.worst_ratio);
    heap.insert(heap.end(), part.heap.begin(), part.heap.end());
  }
  std::sort(heap.begin(), heap.end(), [](const State::Ranked& x, const State::Ranked& y) {
    return x.key != y.key ? x.key > y.key : x.index < y.index;
  });
  if (heap.size() > s.worst_count) heap.resize(s.worst_count);
  for (const State::Ranked& r : heap) {
    ElementError e;
    e.index = r.index;
    e.coords = unravel_index(r.index, s.bench.shape());
    e.bench = s.b.p[r.index];
    e.device = dev.at(r.index);
    e.abs_err = std::fabs(e.device - e.bench);
    e.rel_err = e.bench == 0 ? kInf : e.abs_err / std::fabs(e.bench);
    e.bound = r.key == kInf ? std::numeric_limits<double>::quiet_NaN() : r.bound;
    if (std::isfinite(e.bench) && std::isfinite(e.device))
      e.ulp = msprobe_ulp(e.abs_err, e.bench, dev.dtype());
    v.worst.push_back(std::move(e));
  }

  v.criteria.push_back(
      {"elements beyond their error bound", static_cast<double>(beyond), "==", 0, beyond == 0});
  v.criteria.push_back({"largest error / bound", worst_ratio, "<=", 1, worst_ratio <= 1, false});
  if (s.elementwise_band)
    v.criteria.push_back({"elements beyond the bound of a kernel rounding in the output dtype",
                          static_cast<double>(beyond_band), "==", 0, beyond_band == 0});
  else if (s.has_band)
    v.criteria.push_back({"elements beyond the reduced-precision accumulation bound",
                          static_cast<double>(beyond_band), "==", 0, beyond_band == 0});
  v.status = beyond == 0 ? Status::Pass : beyond_band == 0 ? Status::Warning : Status::Error;
  const std::string bound_text =
      fmt::format("{} family, K={}, {}", family.name, s.accumulation, probe::name(s.out_dtype));
  if (v.status == Status::Pass) {
    v.message = fmt::format("error bound (D14, {}): largest error/bound {:.3g}", bound_text, worst_ratio);
    return v;
  }
  const ElementError w = v.worst.empty() ? ElementError{} : v.worst.front();
  const std::string where = coords_text(w.coords);
  std::string worst_text =
      std::isnan(w.bound) ? fmt::format("device {} where the bench is {}", w.device, w.bench)
                          : fmt::format("device {:.9g}, bench {:.9g}, error {:.3g} > bound {:.3g} ({:.3g}x)",
                                        w.device, w.bench, w.abs_err, w.bound, w.abs_err / w.bound);
  v.message = fmt::format("error bound (D14, {}): {} of {} elements beyond their bound; worst at {}: {}",
                          bound_text, beyond, n, where, worst_text);
  if (v.status == Status::Warning && s.elementwise_band)
    v.message += fmt::format(
        "; every element is within the bound of a kernel that rounds its intermediate results to {} (D20: "
        "{} more roundings of {}, as torch's CPU kernels for that dtype do), or a fault of that size",
        probe::name(s.out_dtype), family.band_roundings,
        family.band_on_magnitude ? std::string_view("the magnitude") : std::string_view("|bench|"));
  else if (v.status == Status::Warning)
    v.message += fmt::format(
        "; every element is within the bound of an accumulation in {} precision: a kernel that computes "
        "(accumulates, or for float32 multiplies) in reduced precision, or a fault of that size",
        s.out_dtype == DType::Float32 ? std::string_view("TF32") : probe::name(s.out_dtype));
  return v;
}

Verdict error_bound_verdict(const BoundFamily& family, const Tensor& bench, const Tensor& device,
                            const Tensor* magnitude, std::int64_t accumulation, std::size_t worst_count,
                            bool histogram) {
  if (bench.shape() != device.shape()) {
    Verdict v;
    v.method = Method::ErrorBound;
    v.status = Status::Error;
    v.message = "error bound (D14): the device output has shape " + shape_to_string(device.shape()) +
                ", the bench " + shape_to_string(bench.shape());
    return v;
  }
  ErrorBoundScan scan(family, bench, device, magnitude, accumulation, worst_count);
  if (histogram) scan.want_histogram();
  constexpr std::int64_t kGrain = 1 << 16;
  const std::int64_t n = bench.numel();
  scan.start(parallel_chunks(n, kGrain));
  parallel_for(0, n, kGrain,
               [&](std::int64_t begin, std::int64_t end, int chunk) { scan.scan(begin, end, chunk); });
  return scan.finish();
}

namespace {
void push_leaves(const Value& v, std::vector<Value>& out) {
  if (!v.is_list()) {
    out.push_back(v);
    return;
  }
  for (const Value& x : v.list()) push_leaves(x, out);
}
}  // namespace

std::vector<std::int64_t> unravel_index(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> at(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 0) {
      at[d] = flat % shape[d];
      flat /= shape[d];
    }
  }
  return at;
}

std::string index_text(std::int64_t flat, const Shape& shape) {
  return coords_text(unravel_index(flat, shape));
}

std::vector<Value> value_leaves(const std::vector<Value>& values) {
  std::vector<Value> out;
  for (const Value& v : values) push_leaves(v, out);
  return out;
}

Status rejudge_rows(std::string_view api, const std::vector<Value>& bench, const std::vector<Value>& device,
                    const std::vector<Value>& magnitude, const std::vector<std::int64_t>& accumulation,
                    std::vector<DetailRow>& rows, std::size_t first, Aggregation how, bool backward,
                    bool histograms, const std::vector<bool>& exact_scalars) {
  std::vector<Status> statuses;
  for (std::size_t i = first; i < rows.size(); ++i) statuses.push_back(rows[i].status);
  if (!bound_family(api, backward) || rows.size() - first != bench.size() || bench.size() != device.size())
    return aggregate_statuses(statuses, how);
  for (std::size_t i = 0; i < bench.size(); ++i) {
    DetailRow& row = rows[first + i];
    // DECISIONS D24: an aten op's outputs may belong to different families (native_layer_norm's mean).
    const BoundFamily* family = output_family(api, i, backward);
    if (!family || row.status == Status::Skip) continue;
    const bool accumulates = takes_magnitude(family->magnitude);
    const Value &b = bench[i], &d = device[i];
    // Empty outputs keep run_ut's row: there is nothing to bound.
    if (!b.is_tensor() || !d.is_tensor() || !is_floating(b.tensor().dtype()) ||
        !is_floating(d.tensor().dtype()) || b.tensor().shape() != d.tensor().shape() ||
        b.tensor().numel() == 0)
      continue;
    const Tensor* m = nullptr;
    if (accumulates) {
      if (i >= magnitude.size() || !magnitude[i].is_tensor() ||
          magnitude[i].tensor().shape() != b.tensor().shape()) {
        row.message = "no magnitude bench for the error bound (D14): run_ut's rule judged" +
                      (row.message.empty() ? std::string() : ": " + row.message);
        continue;
      }
      m = &magnitude[i].tensor();
    }
    const std::int64_t k = i < accumulation.size() ? accumulation[i] : 1;
    BoundFamily f = *family;
    // DECISIONS D25: a Python number exact in the output dtype is not rounded when torch casts it.
    if (i < exact_scalars.size() && exact_scalars[i]) f.scalar_operand = false;
    const Verdict v = error_bound_verdict(f, b.tensor(), d.tensor(), m, k, 1, histograms);
    row.status = v.status;
    row.message = v.message;
    if (histograms) row.histogram = v.histogram;
    statuses[i] = v.status;
  }
  return aggregate_statuses(statuses, how);
}

}  // namespace probe::detail

namespace probe {
namespace {

// A copy of `t` with the sign bit of every element cleared (same dtype, so the runner sees the call's
// dtypes); non-floating tensors are returned as they are.
Tensor abs_copy(const Tensor& t) {
  if (!is_floating(t.dtype())) return t;
  const std::size_t width = itemsize(t.dtype());
  // One pass: each element copied with its sign bit (the top bit, little-endian) cleared.
  auto masked = [&](auto word) {
    using W = decltype(word);
    Tensor out = Tensor::from_storage(t.dtype(), t.shape(), detail::make_uninitialized_storage(t.nbytes()));
    const std::byte* src = t.bytes();  // a view may start anywhere: read through memcpy
    W* dst = reinterpret_cast<W*>(out.mutable_bytes());
    const W keep = static_cast<W>(~(W{1} << (8 * sizeof(W) - 1)));
    detail::parallel_for(0, t.numel(), 1 << 16, [&](std::int64_t begin, std::int64_t end, int) {
      for (std::int64_t i = begin; i < end; ++i) {
        W w;
        std::memcpy(&w, src + i * static_cast<std::int64_t>(sizeof(W)), sizeof(W));
        dst[i] = static_cast<W>(w & keep);
      }
    });
    return out;
  };
  if (width == 2) return masked(std::uint16_t{});
  if (width == 4) return masked(std::uint32_t{});
  if (width == 8) return masked(std::uint64_t{});
  Tensor out = t.clone();
  std::byte* p = out.mutable_bytes();
  const std::byte top{0x7f};
  for (std::int64_t i = 0; i < out.numel(); ++i) p[i * width + width - 1] &= top;  // little-endian sign
  return out;
}

Value abs_value(const Value& v) {
  if (v.is_tensor()) return Value(abs_copy(v.tensor()));
  if (v.is_list()) {
    std::vector<Value> items;
    for (const Value& x : v.list()) items.push_back(abs_value(x));
    return Value(std::move(items), std::get<ValueList>(v.storage()).is_tuple);
  }
  return v;
}

void collect_shapes(const Value& v, std::vector<Shape>& out) {
  if (v.is_tensor()) out.push_back(v.tensor().shape());
  if (v.is_list())
    for (const Value& x : v.list()) collect_shapes(x, out);
}

}  // namespace

ErrorBoundSupport error_bound_support(std::string_view api) {
  ErrorBoundSupport s;
  if (const detail::BoundFamily* f = detail::bound_family(api)) {
    s.covered = true;
    s.needs_magnitude = detail::takes_magnitude(f->magnitude);
    s.family = std::string(f->name);
    s.bounds_backward =
        f->magnitude == detail::MagnitudeKind::AbsInputs || detail::bound_family(api, true) != f;
  }
  return s;
}

namespace {

ApiCall abs_call_of(const ApiCall& call) {
  ApiCall abs_call;
  for (const Value& v : call.args) abs_call.args.push_back(abs_value(v));
  for (const auto& [k, v] : call.kwargs) {
    // alpha/beta scale a term; their sign must not cancel it either.
    const bool scale =
        (k == "alpha" || k == "beta") && v.is_number() && !std::holds_alternative<bool>(v.storage());
    abs_call.kwargs.emplace_back(k, scale ? Value(std::fabs(v.as_double())) : abs_value(v));
  }
  return abs_call;
}

// layer_norm's arguments, bound as torch declares them (aten's layer_norm adds cudnn_enable).
BoundArgs bind_layer_norm(const ApiCall& call) {
  static const auto schema = std::make_shared<const Schema>(
      parse_schema("layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
                   "float eps=1e-05, bool cudnn_enable=True) -> Tensor"));
  return bind(schema, call);
}

// D14's layer_norm magnitude: y = (x - mean) r w + b is computed from a mean and a variance summed over the
// K normalised elements, so each output element errs by a few roundings of r |w| |x - mean| (the
// centring, the scaling, rstd's relative error) plus r |w| times the error of the mean, which is relative
// to mean |x|, plus the bias's rounding: m = r |w| (|x - mean| + mean |x|) + |b|.
Tensor layer_norm_magnitude(const ApiCall& call) {
  const BoundArgs a = bind_layer_norm(call);
  const Tensor& x = a["input"].tensor();
  std::int64_t k = 1;
  for (std::int64_t d : a["normalized_shape"].as_int_list()) k *= d;
  if (k < 1 || x.numel() % k != 0)
    throw Error(ErrorKind::InvalidArgument, "normalized_shape does not divide the input", "",
                "normalized_shape");
  const double eps = a["eps"].as_double();
  const std::vector<double> xv = x.to_doubles();
  const auto uk = static_cast<std::size_t>(k);
  std::vector<double> w(uk, 1.0), b(uk, 0.0);
  if (a["weight"].is_tensor()) w = a["weight"].tensor().to_doubles();
  if (a["bias"].is_tensor()) b = a["bias"].tensor().to_doubles();
  if (w.size() != uk || b.size() != uk)
    throw Error(ErrorKind::InvalidArgument, "weight or bias does not have normalized_shape", "", "weight");
  std::vector<double> m(xv.size());
  for (std::size_t row = 0; row < xv.size(); row += uk) {
    double sum = 0, sum_abs = 0;
    for (std::size_t j = 0; j < uk; ++j) {
      sum += xv[row + j];
      sum_abs += std::fabs(xv[row + j]);
    }
    const double mean = sum / static_cast<double>(k), mean_abs = sum_abs / static_cast<double>(k);
    double var = 0;
    for (std::size_t j = 0; j < uk; ++j) var += (xv[row + j] - mean) * (xv[row + j] - mean);
    const double r = 1 / std::sqrt(var / static_cast<double>(k) + eps);
    for (std::size_t j = 0; j < uk; ++j)
      m[row + j] = r * std::fabs(w[j]) * (std::fabs(xv[row + j] - mean) + mean_abs) + std::fabs(b[j]);
  }
  return Tensor::from_values<double>(m, x.shape());
}

// The registry key whose runner computes the family's magnitude bench.
std::string magnitude_key(const detail::BoundFamily& f, std::string_view api) {
  if (f.magnitude_op.empty()) return std::string(api);
  const std::optional<ApiName> name = parse_api_name(api);
  if (!name) throw Error(ErrorKind::InvalidArgument, "not a registry key", "", "api", std::string(api));
  return name->prefix + "." + std::string(f.magnitude_op) + name->name.substr(name->op().size());
}

}  // namespace

namespace {

// GEMMs: sum_k |a_ik||b_kj| <= ||a_i.|| ||b_.j|| (Cauchy-Schwarz), from row and column norms in
// O(MK + KN) instead of a second GEMM. For independent random factors the norms' product is about pi/2
// times the sum; for a one-hot row against a dense column up to sqrt(K) times.

// A float64 tensor the caller overwrites in full (no zero-fill).
Tensor uninitialized_f64(Shape shape) {
  const std::size_t bytes = static_cast<std::size_t>(probe::numel(shape)) * sizeof(double);
  return Tensor::from_storage(DType::Float64, std::move(shape), detail::make_uninitialized_storage(bytes));
}

// Norms over dim `dim` (-1 or -2) of a tensor, keeping that dim as size 1; float64. Each norm's squares are
// summed in index order, so the result does not depend on how the work below is split.
Tensor norms(const Tensor& t, int dim) {
  const Shape& s = t.shape();
  const int nd = static_cast<int>(s.size());
  const int d = nd + dim;
  const std::int64_t n = s[static_cast<std::size_t>(d)];
  std::int64_t inner = 1, outer = 1;
  for (int i = d + 1; i < nd; ++i) inner *= s[static_cast<std::size_t>(i)];
  for (int i = 0; i < d; ++i) outer *= s[static_cast<std::size_t>(i)];
  std::vector<double> out(static_cast<std::size_t>(outer * inner), 0.0);
  // Read in the tensor's own dtype (these are the API's inputs: often large float32 or bfloat16).
  detail::visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* v = reinterpret_cast<const T*>(t.bytes());
    const std::int64_t grain =
        std::max<std::int64_t>(1, (std::int64_t{1} << 16) / std::max<std::int64_t>(n, 1));
    if (inner == 1) {
      // Norms of contiguous rows: one running sum is a chain of dependent additions, so kRows rows are
      // summed side by side (each still in its own order) to keep the adder busy.
      constexpr std::int64_t kRows = 8;
      detail::parallel_for(0, outer, grain, [&](std::int64_t begin, std::int64_t end, int) {
        std::int64_t o = begin;
        for (; o + kRows <= end; o += kRows) {
          std::array<double, kRows> acc{};
          const T* rows = v + o * n;
          for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t r = 0; r < kRows; ++r) {
              const double x = detail::as_double(rows[r * n + j]);
              acc[static_cast<std::size_t>(r)] += x * x;
            }
          std::copy(acc.begin(), acc.end(), out.begin() + o);
        }
        for (; o < end; ++o) {
          double acc = 0;
          for (std::int64_t j = 0; j < n; ++j) {
            const double x = detail::as_double(v[o * n + j]);
            acc += x * x;
          }
          out[static_cast<std::size_t>(o)] = acc;
        }
      });
    } else {
      // Norms of columns: the sums of one row of `inner` columns are independent and vectorise; the
      // work is split by column ranges of kCols.
      constexpr std::int64_t kCols = 512;
      const std::int64_t pieces = (inner + kCols - 1) / kCols;
      detail::parallel_for(0, outer * pieces, std::max<std::int64_t>(1, grain / kCols),
                           [&](std::int64_t begin, std::int64_t end, int) {
                             for (std::int64_t task = begin; task < end; ++task) {
                               const std::int64_t o = task / pieces, c0 = task % pieces * kCols;
                               const std::int64_t c1 = std::min(inner, c0 + kCols);
                               double* acc = out.data() + o * inner;
                               for (std::int64_t j = 0; j < n; ++j) {
                                 const T* row = v + (o * n + j) * inner;
                                 for (std::int64_t i = c0; i < c1; ++i) {
                                   const double x = detail::as_double(row[i]);
                                   acc[i] += x * x;
                                 }
                               }
                             }
                           });
    }
  });
  for (double& x : out) x = std::sqrt(x);
  Shape kept = s;
  kept[static_cast<std::size_t>(d)] = 1;
  return Tensor::from_values<double>(out, kept);
}

// The outer product a[i] b[j] of two vectors as an [a, b] matrix, or as a vector of |a| or |b| elements
// when the other side is one element.
Tensor outer(const Tensor& a, const Tensor& b, Shape shape) {
  const std::vector<double> x = a.to_doubles(), y = b.to_doubles();
  Tensor t = uninitialized_f64(std::move(shape));
  if (static_cast<std::size_t>(t.numel()) != x.size() * y.size())
    throw Error(ErrorKind::Internal, "outer product of the wrong size", "", "magnitude");
  double* out = t.mutable_data<double>();
  const auto cols = static_cast<std::int64_t>(y.size());
  detail::parallel_for(0, static_cast<std::int64_t>(x.size()),
                       std::max<std::int64_t>(1, (1 << 16) / std::max<std::int64_t>(cols, 1)),
                       [&](std::int64_t begin, std::int64_t end, int) {
                         for (std::int64_t i = begin; i < end; ++i)
                           for (std::int64_t j = 0; j < cols; ++j)
                             out[i * cols + j] =
                                 x[static_cast<std::size_t>(i)] * y[static_cast<std::size_t>(j)];
                       });
  return t;
}

const Tensor* tensor_arg(const ApiCall& call, std::size_t pos, std::string_view name) {
  if (pos < call.args.size()) return call.args[pos].is_tensor() ? &call.args[pos].tensor() : nullptr;
  for (const auto& [k, v] : call.kwargs)
    if (k == name) return v.is_tensor() ? &v.tensor() : nullptr;
  return nullptr;
}

// matmul([B..., M, 1], [1, N] or [B..., 1, N]) of two float64 tensors of norms, plus |bias[j]| on column j
// when given: every element is one product (and one sum), computed here in place of the registry's matmul
// and with the same roundings, without its copies. nullopt for other shapes (batch dims that broadcast,
// vectors) and biases that are not one value per column.
std::optional<Tensor> outer_batched(const Tensor& ra, const Tensor& cb, const Tensor* bias) {
  const Shape &sa = ra.shape(), &sb = cb.shape();
  if (sa.size() < 2 || sb.size() < 2 || sa.back() != 1 || sb[sb.size() - 2] != 1) return std::nullopt;
  const Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
  if (!batch_b.empty() && batch_b != batch_a) return std::nullopt;
  const std::int64_t m = sa[sa.size() - 2], n = sb.back();
  const std::int64_t batches = probe::numel(batch_a);
  std::vector<double> bv;
  if (bias) {
    if (bias->ndim() != 1 || bias->numel() != n) return std::nullopt;
    bv = bias->to_doubles();
  }
  Shape shape = batch_a;
  shape.insert(shape.end(), {m, n});
  Tensor t = uninitialized_f64(shape);
  double* out = t.mutable_data<double>();
  const double* r = ra.data<double>();
  const double* c = cb.data<double>();
  const std::int64_t c_step = batch_b.empty() ? 0 : n;
  detail::parallel_for(0, batches * m, std::max<std::int64_t>(1, (1 << 16) / std::max<std::int64_t>(n, 1)),
                       [&](std::int64_t begin, std::int64_t end, int) {
                         for (std::int64_t row = begin; row < end; ++row) {
                           const double ri = r[row];
                           const double* cj = c + row / m * c_step;
                           double* o = out + row * n;
                           if (bias)
                             for (std::int64_t j = 0; j < n; ++j)
                               o[j] = ri * cj[j] + std::fabs(bv[static_cast<std::size_t>(j)]);
                           else
                             for (std::int64_t j = 0; j < n; ++j) o[j] = ri * cj[j];
                         }
                       });
  return t;
}

// out += scale |t| with t broadcast to out's shape (numpy's rule: trailing dims aligned, size-1 and missing
// dims repeat); false when t does not broadcast.
bool add_abs_broadcast(Tensor& out, const Tensor& t, double scale) {
  const Shape &so = out.shape(), &st = t.shape();
  if (st.size() > so.size()) return false;
  const std::size_t lead = so.size() - st.size();
  // The element stride of t along each of out's dims (0 where t repeats).
  std::vector<std::int64_t> stride(so.size(), 0);
  std::int64_t step = 1;
  for (std::size_t i = st.size(); i-- > 0;) {
    if (st[i] != so[lead + i] && st[i] != 1) return false;
    stride[lead + i] = st[i] == 1 ? 0 : step;
    step *= st[i];
  }
  const std::vector<double> tv = t.to_doubles();
  double* o = out.mutable_data<double>();
  std::vector<std::int64_t> idx(so.size(), 0);
  std::int64_t offset = 0;
  for (std::int64_t e = 0, n = out.numel(); e < n; ++e) {
    o[e] += scale * std::fabs(tv[static_cast<std::size_t>(offset)]);
    for (std::size_t d = so.size(); d-- > 0;) {  // next index, last dim fastest
      offset += stride[d];
      if (++idx[d] < so[d]) break;
      offset -= stride[d] * so[d];
      idx[d] = 0;
    }
  }
  return true;
}

// |beta| or |alpha| of a GEMM with an added term (keyword-only in torch and aten), 1 when absent.
double scale_kwarg(const ApiCall& call, std::string_view name) {
  for (const auto& [k, v] : call.kwargs)
    if (k == name && v.is_number() && !std::holds_alternative<bool>(v.storage()))
      return std::fabs(v.as_double());
  return 1.0;
}

// DECISIONS D25: addmm and baddbmm, |beta| |input| + |alpha| sum_k |a_ik||b_kj| <= |beta| |input| +
// |alpha| ||a_i.|| ||b_.j||: the Cauchy-Schwarz product of the two factors plus the added term broadcast.
std::optional<std::vector<Value>> gemm_bias_norm_magnitude(std::string_view op, const ApiCall& call) {
  const bool batched = op == "baddbmm";
  if (!batched && op != "addmm") return std::nullopt;
  const Tensor* c = tensor_arg(call, 0, "input");
  if (!c) c = tensor_arg(call, 0, "self");
  const Tensor* a = tensor_arg(call, 1, batched ? "batch1" : "mat1");
  const Tensor* b = tensor_arg(call, 2, batched ? "batch2" : "mat2");
  const int nd = batched ? 3 : 2;
  if (!c || !a || !b || a->ndim() != nd || b->ndim() != nd) return std::nullopt;
  if (!is_floating(a->dtype()) || !is_floating(b->dtype()) || !is_floating(c->dtype())) return std::nullopt;
  if (a->shape().back() != b->shape()[static_cast<std::size_t>(nd - 2)] ||
      (batched && a->shape()[0] != b->shape()[0]))
    return std::nullopt;
  std::optional<Tensor> m = outer_batched(norms(*a, -1), norms(*b, -2), nullptr);
  if (!m) return std::nullopt;
  const double beta = scale_kwarg(call, "beta"), alpha = scale_kwarg(call, "alpha");
  if (alpha != 1.0)
    for (double *p = m->mutable_data<double>(), *e = p + m->numel(); p != e; ++p) *p *= alpha;
  // beta = 0: torch ignores input (even inf or NaN in it).
  if (beta != 0.0 && !add_abs_broadcast(*m, *c, beta)) return std::nullopt;
  return std::vector<Value>{Value(std::move(*m))};
}

// A copy of `call` with argument `name` (position `pos`) set to `v`, where the call gave it; false when it
// was not given (the runner's default stands).
bool set_arg(ApiCall& call, std::size_t pos, std::string_view name, Value v) {
  if (pos < call.args.size()) {
    call.args[pos] = std::move(v);
    return true;
  }
  for (auto& [k, kv] : call.kwargs)
    if (k == name) {
      kv = std::move(v);
      return true;
    }
  return false;
}

// DECISIONS D25: conv1d/conv2d, sum over the receptive field of |x||w| <= ||x_patch|| ||w_co|| (Cauchy-
// Schwarz per output element) plus |bias|. The squared patch norms are the group's channels of x^2 summed
// first, then one convolution of that with a kernel of ones per group (one input and one output channel per
// group instead of C_in and C_out), by the bench runner itself, so stride, padding, dilation and groups are
// the call's own; nullopt for other calls.
std::optional<std::vector<Value>> conv_norm_magnitude(const RunnerRegistry& registry, Framework framework,
                                                      std::string_view api, std::string_view op,
                                                      const ApiCall& call) {
  if (op != "conv1d" && op != "conv2d") return std::nullopt;
  const Tensor* x = tensor_arg(call, 0, "input");
  const Tensor* w = tensor_arg(call, 1, "weight");
  if (!x || !w || !is_floating(x->dtype()) || !is_floating(w->dtype()) || w->ndim() < 3) return std::nullopt;
  const Tensor* bias = tensor_arg(call, 2, "bias");
  std::int64_t groups = 1;
  const Value* g = call.args.size() > 6 ? &call.args[6] : nullptr;
  for (const auto& [k, v] : call.kwargs)
    if (k == "groups") g = &v;
  if (g) {
    if (g->kind() != Value::Kind::Int) return std::nullopt;
    groups = g->as_int();
  }
  const Shape& ws = w->shape();
  const std::int64_t c_out = ws[0], per_group = ws[1];
  if (groups < 1 || c_out % groups != 0) return std::nullopt;
  // The sum of x^2 over each group's channels, [N, groups, spatial...], and the ones kernel [groups, 1,
  // k...].
  const Shape& xs = x->shape();
  // x's channel dim: 1 batched ([N, C, spatial...]), 0 unbatched ([C, spatial...]).
  const std::size_t x_ch = xs.size() + 1 - ws.size();
  if (xs.size() + 1 < ws.size() || x_ch > 1 || xs[x_ch] != per_group * groups) return std::nullopt;
  std::int64_t x_batch = 1, x_spatial = 1;
  for (std::size_t i = 0; i < x_ch; ++i) x_batch *= xs[i];
  for (std::size_t i = x_ch + 1; i < xs.size(); ++i) x_spatial *= xs[i];
  Shape sum_shape = xs;
  sum_shape[x_ch] = groups;
  Tensor sums = uninitialized_f64(sum_shape);
  double* sum_p = sums.mutable_data<double>();
  std::fill(sum_p, sum_p + sums.numel(), 0.0);
  detail::visit_dtype(x->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = x->data<T>();
    for (std::int64_t n = 0; n < x_batch; ++n)
      for (std::int64_t c = 0; c < per_group * groups; ++c) {
        const T* src = xp + (n * per_group * groups + c) * x_spatial;
        double* dst = sum_p + (n * groups + c / per_group) * x_spatial;
        for (std::int64_t s = 0; s < x_spatial; ++s) {
          const double v = detail::as_double(src[s]);
          dst[s] += v * v;
        }
      }
  });
  Shape ones_shape = ws;
  ones_shape[0] = groups;
  ones_shape[1] = 1;
  ApiCall patch = call;
  set_arg(patch, 0, "input", Value(std::move(sums)));
  set_arg(patch, 1, "weight",
          Value(Tensor::from_values<double>(
              std::vector<double>(static_cast<std::size_t>(probe::numel(ones_shape)), 1.0), ones_shape)));
  set_arg(patch, 2, "bias", Value(NoneValue{}));
  std::vector<Value> out =
      registry.run_forward(framework, std::string(api), patch, RunnerRole::Bench).outputs;
  if (out.size() != 1 || !out[0].is_tensor()) return std::nullopt;
  const Tensor& sq = out[0].tensor();  // [N, groups, spatial...] or [groups, spatial...]
  const Shape& ss = sq.shape();
  const std::size_t ch = ss.size() + 1 - ws.size();  // the channel dim
  if (ss.size() + 1 < ws.size() || ss[ch] != groups) return std::nullopt;
  std::int64_t batch = 1, spatial = 1;
  for (std::size_t i = 0; i < ch; ++i) batch *= ss[i];
  for (std::size_t i = ch + 1; i < ss.size(); ++i) spatial *= ss[i];
  // ||w_co|| over its C_in / groups x k elements.
  const std::vector<double> wv = w->to_doubles();
  const std::int64_t filter = per_group * (probe::numel(ws) / (c_out * per_group));
  std::vector<double> wn(static_cast<std::size_t>(c_out), 0.0);
  for (std::int64_t co = 0; co < c_out; ++co) {
    double s = 0;
    for (std::int64_t e = 0; e < filter; ++e)
      s += wv[static_cast<std::size_t>(co * filter + e)] * wv[static_cast<std::size_t>(co * filter + e)];
    wn[static_cast<std::size_t>(co)] = std::sqrt(s);
  }
  std::vector<double> bv;
  if (bias) {
    if (bias->numel() != c_out) return std::nullopt;
    bv = bias->to_doubles();
  }
  Shape shape = ss;
  shape[ch] = c_out;
  Tensor m = uninitialized_f64(shape);
  double* mp = m.mutable_data<double>();
  const double* sp = sq.data<double>();
  const std::int64_t per = c_out / groups;
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t co = 0; co < c_out; ++co) {
      const double* src = sp + (n * groups + co / per) * spatial;
      double* dst = mp + (n * c_out + co) * spatial;
      const double wc = wn[static_cast<std::size_t>(co)];
      const double bc = bias ? std::fabs(bv[static_cast<std::size_t>(co)]) : 0.0;
      for (std::int64_t s = 0; s < spatial; ++s) dst[s] = std::sqrt(std::max(src[s], 0.0)) * wc + bc;
    }
  return std::vector<Value>{Value(std::move(m))};
}

// The forward magnitude of mm, bmm, matmul and linear by Cauchy-Schwarz (addmm and baddbmm:
// gemm_bias_norm_magnitude), or nullopt for other GEMM calls (the runner on the absolute values serves
// those). Broadcast batch dims go through the registry's matmul of [.., M, 1] by [.., 1, N].
std::optional<std::vector<Value>> gemm_norm_magnitude(const RunnerRegistry& registry, Framework framework,
                                                      std::string_view op, const ApiCall& call) {
  if (auto m = gemm_bias_norm_magnitude(op, call)) return m;
  const bool linear = op == "linear";
  if (!linear && op != "mm" && op != "bmm" && op != "matmul") return std::nullopt;
  const Tensor* a = tensor_arg(call, 0, "input");
  const Tensor* b = tensor_arg(call, 1, linear ? "weight" : op == "matmul" ? "other" : "mat2");
  if (!a || !b || a->ndim() < 1 || b->ndim() < 1 || (linear && b->ndim() != 2)) return std::nullopt;
  if (!is_floating(a->dtype()) || !is_floating(b->dtype())) return std::nullopt;
  const Tensor ra = norms(*a, -1);  // [.., M, 1], or [1] for a vector
  // linear's weight is [N, K]: its rows are the output's columns.
  const Tensor cb = linear           ? norms(*b, -1).reshape({1, b->shape()[0]})
                    : b->ndim() == 1 ? norms(*b, -1)
                                     : norms(*b, -2);
  const Tensor* bias = linear ? tensor_arg(call, 2, "bias") : nullptr;
  if (auto direct = outer_batched(ra, cb, bias)) return std::vector<Value>{Value(std::move(*direct))};
  ApiCall product;
  product.args = {Value(ra), Value(cb)};
  std::vector<Value> out =
      registry.run_forward(framework, "Torch.matmul", product, RunnerRole::Bench).outputs;
  if (linear)
    if (const Tensor* bias = tensor_arg(call, 2, "bias")) {
      Tensor& m = out.at(0).tensor();
      const std::vector<double> bv = bias->to_doubles();
      std::vector<double> mv = m.to_doubles();
      if (bv.empty() || mv.size() % bv.size() != 0) return std::nullopt;
      for (std::size_t i = 0; i < mv.size(); ++i) mv[i] += std::fabs(bv[i % bv.size()]);
      m = Tensor::from_values<double>(mv, m.shape());
    }
  return out;
}

// The input-gradient magnitudes of a 2-D mm or linear by Cauchy-Schwarz: mm's dA = G B^T and dB = A^T G,
// linear's dX = G W, dW = G^T X and dbias = sum over rows of |G| (exact); nullopt for other calls.
std::optional<std::vector<InputGradient>> gemm_norm_grad_magnitude(std::string_view op, const ApiCall& call,
                                                                   const std::vector<Value>& grads) {
  const bool linear = op == "linear";
  if ((!linear && op != "mm" && op != "matmul") || grads.size() != 1 || !grads[0].is_tensor())
    return std::nullopt;
  if (call.args.size() < 2 || !call.args[0].is_tensor() || !call.args[1].is_tensor()) return std::nullopt;
  const Tensor &a = call.args[0].tensor(), &b = call.args[1].tensor(), &g = grads[0].tensor();
  if (a.ndim() != 2 || b.ndim() != 2 || g.ndim() != 2) return std::nullopt;
  const std::int64_t m = a.shape()[0], k = a.shape()[1];
  // mm: B is [K, N]; linear: W is [N, K].
  const std::int64_t n = linear ? b.shape()[0] : b.shape()[1];
  if ((linear ? b.shape()[1] : b.shape()[0]) != k || g.shape() != Shape{m, n}) return std::nullopt;
  const Tensor g_rows = norms(g, -1), g_cols = norms(g, -2);  // [M, 1], [1, N]
  std::vector<InputGradient> out;
  // d input: rows of G against the rows of B (mm: B^T's columns) or the columns of W (linear).
  out.push_back({"input.0", outer(g_rows, linear ? norms(b, -2) : norms(b, -1), {m, k}), a.dtype()});
  // d second: mm's dB[k, n] = sum_m A[m, k] G[m, n]; linear's dW[n, k] = sum_m G[m, n] X[m, k].
  const Tensor a_cols = norms(a, -2);  // [1, K]
  out.push_back(linear ? InputGradient{"input.1", outer(g_cols, a_cols, {n, k}), b.dtype()}
                       : InputGradient{"input.1", outer(a_cols, g_cols, {k, n}), b.dtype()});
  if (linear && call.args.size() > 2 && call.args[2].is_tensor()) {
    const std::vector<double> gv = g.to_doubles();
    std::vector<double> sum(static_cast<std::size_t>(n), 0.0);
    for (std::size_t i = 0; i < gv.size(); ++i) sum[i % static_cast<std::size_t>(n)] += std::fabs(gv[i]);
    out.push_back({"input.2", Tensor::from_values<double>(sum, {n}), call.args[2].tensor().dtype()});
  }
  return out;
}

// The input gradients of add/sub are the output gradient (times alpha for the second): where an input has
// the output's shape, their magnitude is |G| (|alpha| |G|); nullopt when any input broadcasts.
std::optional<std::vector<InputGradient>> addition_grad_magnitude(const detail::BoundFamily& f,
                                                                  const ApiCall& call,
                                                                  const std::vector<Value>& grads) {
  if (f.name != "addition" || grads.size() != 1 || !grads[0].is_tensor()) return std::nullopt;
  const Tensor& g = grads[0].tensor();
  double alpha = 1;
  for (const auto& [k, v] : call.kwargs)
    if (k == "alpha" && v.is_number()) alpha = std::fabs(v.as_double());
  std::vector<InputGradient> out;
  for (std::size_t i = 0; i < call.args.size() && i < 2; ++i) {
    if (!call.args[i].is_tensor()) continue;
    const Tensor& x = call.args[i].tensor();
    if (x.shape() != g.shape()) return std::nullopt;
    Tensor m = uninitialized_f64(x.shape());
    double* mp = m.mutable_data<double>();
    const double scale = i == 1 ? alpha : 1.0;
    detail::visit_dtype(g.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* gp = g.data<T>();
      for (std::int64_t e = 0; e < g.numel(); ++e) mp[e] = std::fabs(detail::as_double(gp[e])) * scale;
    });
    out.push_back({"input." + std::to_string(i), std::move(m), x.dtype()});
  }
  return out;
}

// DECISIONS D20: the magnitude of rsqrt's input gradient, 0.5 |g| x^-1.5 (= |bench|); nullopt for other
// calls.
std::optional<std::vector<InputGradient>> rsqrt_grad_magnitude(std::string_view op, const ApiCall& call,
                                                               const std::vector<Value>& grads) {
  if (op != "rsqrt" || grads.size() != 1 || !grads[0].is_tensor()) return std::nullopt;
  const Tensor* x = tensor_arg(call, 0, "input");
  if (!x || !is_floating(x->dtype()) || x->shape() != grads[0].tensor().shape()) return std::nullopt;
  const std::vector<double> xv = x->to_doubles(), gv = grads[0].tensor().to_doubles();
  std::vector<double> m(xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i)
    m[i] = 0.5 * std::fabs(gv[i]) * std::pow(std::fabs(xv[i]), -1.5);
  std::vector<InputGradient> out;
  out.push_back({"input.0", Tensor::from_values<double>(m, x->shape()), x->dtype()});
  return out;
}

// DECISIONS D20: the magnitude of silu's input gradient, |dy| s(x) (1 + |x|) with s = sigmoid(x) (the
// terms that cancel in dy s (1 + x (1 - s)) near its zero at x ~ -1.28 and that carry s's roundings);
// nullopt for other APIs or when the gradient's shape is not the input's.
std::optional<std::vector<InputGradient>> silu_grad_magnitude(std::string_view op, const ApiCall& call,
                                                              const std::vector<Value>& grads) {
  if (op != "silu" || grads.size() != 1 || !grads[0].is_tensor()) return std::nullopt;
  const Tensor* x = tensor_arg(call, 0, "input");
  if (!x || !is_floating(x->dtype()) || x->shape() != grads[0].tensor().shape()) return std::nullopt;
  const std::vector<double> xv = x->to_doubles(), gv = grads[0].tensor().to_doubles();
  std::vector<double> m(xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const double s = 1 / (1 + std::exp(-xv[i]));
    m[i] = std::fabs(gv[i]) * s * (1 + std::fabs(xv[i]));
  }
  std::vector<InputGradient> out;
  out.push_back({"input.0", Tensor::from_values<double>(m, x->shape()), x->dtype()});
  return out;
}

// The D20 softmax/log_softmax gradient magnitude from the forward's output y (probabilities, or
// log-probabilities when `log`; float64, g's shape) and the output gradient g along `dim` (in range);
// `dtype` is the forward output's (its unit roundoff is u_out).
Tensor softmax_output_grad_magnitude(const std::vector<double>& y, const Tensor& grad, std::int64_t dim,
                                     DType dtype, bool log) {
  const Shape& sh = grad.shape();
  const auto nd = static_cast<std::int64_t>(sh.size());
  std::int64_t outer = 1, inner = 1;
  const std::int64_t n = sh[static_cast<std::size_t>(dim)];
  for (std::int64_t i = 0; i < dim; ++i) outer *= sh[static_cast<std::size_t>(i)];
  for (std::int64_t i = dim + 1; i < nd; ++i) inner *= sh[static_cast<std::size_t>(i)];
  const std::vector<double> gv = grad.to_doubles();
  std::vector<double> m(gv.size());
  // The device's saved output errs relative to y by its rounding u_out plus D14's softmax forward bound,
  // 8 u_acc (1 + |ln y| + ln K): w = 1 + 8 (u_acc / u_out) (1 + |ln y| + ln K) in units of u_out.
  const double ln_k = std::log(static_cast<double>(std::max<std::int64_t>(n, 1)));
  const double units =
      dtype == DType::Float64 ? 8.0 : 8.0 * std::ldexp(1.0, -24) / detail::rounding_of(dtype)->first;
  auto level = [&](double e) { return e > 0 ? 1 + units * (1 + std::fabs(std::log(e)) + ln_k) : 1.0; };
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t in = 0; in < inner; ++in) {
      auto at = [&](std::int64_t j) { return static_cast<std::size_t>((o * n + j) * inner + in); };
      // ag: sum |y||g| (softmax) or sum |g| (log_softmax); agl: sum L |y||g| (softmax).
      double ag = 0, agl = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        const double e = y[at(j)];
        ag += (log ? 1.0 : e) * std::fabs(gv[at(j)]);
        agl += (log ? 0.0 : level(e) * e) * std::fabs(gv[at(j)]);
      }
      for (std::int64_t j = 0; j < n; ++j) {
        const double yj = y[at(j)], g = std::fabs(gv[at(j)]);
        m[at(j)] = log ? g + std::exp(yj) * (1 + std::fabs(yj)) * ag : yj * (level(yj) * (g + ag) + agl);
      }
    }
  return Tensor::from_values<double>(m, sh);
}

// DECISIONS D20: the magnitude of softmax's input gradient y (g - sum y g) along dim, y_i (w_i (|g_i| +
// sum_j y_j |g_j|) + sum_j w_j y_j |g_j|): the device's saved output y_j errs by w_j u_out relative (its
// rounding and D14's softmax forward bound) and each y enters twice; and of log_softmax's g -
// exp(y) sum g, |g| + exp(y) (1 + |y|) sum |g| (the factor |y| for the rounding of the saved output y); y
// from the input in float64. nullopt for other calls, an implicit dim of a non-Functional spelling or a dtype
// argument.
std::optional<std::vector<InputGradient>> softmax_grad_magnitude(std::string_view api, std::string_view op,
                                                                 const ApiCall& call,
                                                                 const std::vector<Value>& grads) {
  const bool log = op == "log_softmax" || op == "_log_softmax";
  if (!log && op != "softmax" && op != "_softmax") return std::nullopt;
  if (grads.size() != 1 || !grads[0].is_tensor()) return std::nullopt;
  const Tensor* x = tensor_arg(call, 0, "input");
  if (!x || !is_floating(x->dtype()) || x->shape() != grads[0].tensor().shape()) return std::nullopt;
  std::optional<std::int64_t> dim;
  if (call.args.size() > 1 && call.args[1].is_number())
    dim = static_cast<std::int64_t>(call.args[1].as_double());
  for (const auto& [k, v] : call.kwargs) {
    if (k == "dim" && v.is_number()) dim = static_cast<std::int64_t>(v.as_double());
    if (k == "dtype" && !v.is_none()) return std::nullopt;
  }
  const auto nd = static_cast<std::int64_t>(x->ndim());
  if (!dim) {
    if (api.substr(0, 11) != "Functional.") return std::nullopt;
    dim = (nd == 0 || nd == 1 || nd == 3) ? 0 : 1;  // torch's legacy implicit dim
  }
  if (nd == 0) return std::nullopt;
  if (*dim < 0) *dim += nd;
  if (*dim < 0 || *dim >= nd) return std::nullopt;
  const Shape& sh = x->shape();
  const std::int64_t n = sh[static_cast<std::size_t>(*dim)];
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t i = 0; i < *dim; ++i) outer *= sh[static_cast<std::size_t>(i)];
  for (std::int64_t i = *dim + 1; i < nd; ++i) inner *= sh[static_cast<std::size_t>(i)];
  const std::vector<double> xv = x->to_doubles();
  std::vector<double> y(xv.size());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t in = 0; in < inner; ++in) {
      auto at = [&](std::int64_t j) { return static_cast<std::size_t>((o * n + j) * inner + in); };
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (std::int64_t j = 0; j < n; ++j) mx = std::max(mx, xv[at(j)]);
      for (std::int64_t j = 0; j < n; ++j) sum += std::exp(xv[at(j)] - mx);
      for (std::int64_t j = 0; j < n; ++j) {
        const double e = std::exp(xv[at(j)] - mx) / sum;
        y[at(j)] = log ? std::log(e) : e;
      }
    }
  std::vector<InputGradient> out;
  out.push_back(
      {"input.0", softmax_output_grad_magnitude(y, grads[0].tensor(), *dim, x->dtype(), log), x->dtype()});
  return out;
}

// DECISIONS D20: the magnitudes of layer_norm's input gradients. With xh = (x - mean) r, a = |xh| +
// r mean |x| (xh and the error of the mean it carries, as D14's forward magnitude) and gw = |g w|:
// dx = r (g w - mean(g w) - xh mean(g w xh)) has r (gw + mean gw + a mean(gw a)); the weight's gradient
// sum over rows of g xh has sum |g| a; the bias's sum over rows of g has sum |g|. nullopt for other calls.
std::optional<std::vector<InputGradient>> layer_norm_grad_magnitude(std::string_view op, const ApiCall& call,
                                                                    const std::vector<Value>& grads) {
  if (op != "layer_norm" || grads.size() != 1 || !grads[0].is_tensor()) return std::nullopt;
  const BoundArgs a = bind_layer_norm(call);
  const Tensor& x = a["input"].tensor();
  if (!is_floating(x.dtype()) || x.shape() != grads[0].tensor().shape()) return std::nullopt;
  std::int64_t k = 1;
  for (std::int64_t d : a["normalized_shape"].as_int_list()) k *= d;
  if (k < 1 || x.numel() % k != 0) return std::nullopt;
  const double eps = a["eps"].as_double();
  const auto uk = static_cast<std::size_t>(k);
  const std::vector<double> xv = x.to_doubles(), gv = grads[0].tensor().to_doubles();
  std::vector<double> w(uk, 1.0);
  if (a["weight"].is_tensor()) w = a["weight"].tensor().to_doubles();
  if (w.size() != uk) return std::nullopt;
  std::vector<double> dx(xv.size()), dw(uk, 0.0), db(uk, 0.0), av(uk);
  for (std::size_t row = 0; row < xv.size(); row += uk) {
    double sum = 0, sum_abs = 0;
    for (std::size_t j = 0; j < uk; ++j) {
      sum += xv[row + j];
      sum_abs += std::fabs(xv[row + j]);
    }
    const double kd = static_cast<double>(k), mean = sum / kd, mean_abs = sum_abs / kd;
    double var = 0;
    for (std::size_t j = 0; j < uk; ++j) var += (xv[row + j] - mean) * (xv[row + j] - mean);
    const double r = 1 / std::sqrt(var / kd + eps);
    double mean_gw = 0, mean_gwa = 0;
    for (std::size_t j = 0; j < uk; ++j) {
      av[j] = std::fabs(xv[row + j] - mean) * r + r * mean_abs;
      const double gw = std::fabs(gv[row + j] * w[j]);
      mean_gw += gw / kd;
      mean_gwa += gw * av[j] / kd;
      dw[j] += std::fabs(gv[row + j]) * av[j];
      db[j] += std::fabs(gv[row + j]);
    }
    for (std::size_t j = 0; j < uk; ++j)
      dx[row + j] = r * (std::fabs(gv[row + j] * w[j]) + mean_gw + av[j] * mean_gwa);
  }
  const Shape ns = a["weight"].is_tensor() ? a["weight"].tensor().shape() : Shape{k};
  std::vector<InputGradient> out;
  out.push_back({"input.0", Tensor::from_values<double>(dx, x.shape()), x.dtype()});
  // Paths by position: layer_norm(input, normalized_shape, weight, bias).
  if (call.args.size() > 2 && call.args[2].is_tensor())
    out.push_back({"input.2", Tensor::from_values<double>(dw, ns), call.args[2].tensor().dtype()});
  if (call.args.size() > 3 && call.args[3].is_tensor())
    out.push_back({"input.3", Tensor::from_values<double>(db, call.args[3].tensor().shape()),
                   call.args[3].tensor().dtype()});
  return out;
}

// A call's argument by position or keyword; nullptr when absent.
const Value* arg_of(const ApiCall& call, std::size_t pos, std::string_view name) {
  if (pos < call.args.size()) return &call.args[pos];
  for (const auto& [k, v] : call.kwargs)
    if (k == name) return &v;
  return nullptr;
}

const Tensor& tensor_of(const ApiCall& call, std::size_t pos, std::string_view api, std::string_view name) {
  const Value* v = arg_of(call, pos, name);
  if (!v || !v->is_tensor())
    throw Error(ErrorKind::InvalidArgument, fmt::format("{}: argument {} is not a tensor", api, name), "",
                std::string(name));
  return v->tensor();
}

std::int64_t normalized_count(const ApiCall& call, std::size_t pos, std::string_view api) {
  const Value* v = arg_of(call, pos, "normalized_shape");
  if (!v)
    throw Error(ErrorKind::InvalidArgument, fmt::format("{}: no normalized_shape", api), "",
                "normalized_shape");
  std::int64_t k = 1;
  for (std::int64_t d : v->as_int_list()) k *= d;
  return std::max<std::int64_t>(k, 1);
}

// DECISIONS D24: the magnitude benches of the outputs of an aten op of D24's table, from its aten arguments;
// nullopt for other APIs.
std::optional<std::vector<Value>> aten_magnitude(const RunnerRegistry& registry, Framework framework,
                                                 std::string_view api, const ApiCall& call) {
  if (!detail::aten_counterpart(api)) return std::nullopt;
  const std::string_view op = detail::operator_of(api);
  if (op == "native_layer_norm") {
    // native_layer_norm(input, normalized_shape, weight, bias, eps): layer_norm's arguments by position.
    const Tensor& x = tensor_of(call, 0, api, "input");
    const std::int64_t k = normalized_count(call, 1, api);
    if (x.numel() % k != 0)
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("{}: normalized_shape does not divide the input", api), "", "normalized_shape");
    // The mean's magnitude: mean |x| over each row, in the mean's shape (the normalised dims kept as 1).
    const std::vector<double> xv = x.to_doubles();
    std::vector<double> mean_abs(xv.size() / static_cast<std::size_t>(k), 0.0);
    for (std::size_t i = 0; i < xv.size(); ++i) mean_abs[i / static_cast<std::size_t>(k)] += std::fabs(xv[i]);
    for (double& v : mean_abs) v /= static_cast<double>(k);
    Shape stat = x.shape();
    for (std::int64_t left = k, d = static_cast<std::int64_t>(stat.size()) - 1; left > 1 && d >= 0; --d) {
      left /= std::max<std::int64_t>(stat[static_cast<std::size_t>(d)], 1);
      stat[static_cast<std::size_t>(d)] = 1;
    }
    return std::vector<Value>{Value(layer_norm_magnitude(call)),
                              Value(Tensor::from_values<double>(mean_abs, stat)), Value()};
  }
  if (op == "native_layer_norm_backward") {
    // (grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask) -> (dx, dweight, dbias):
    // layer_norm(input, normalized_shape, weight, bias)'s input gradients for grad_out.
    ApiCall ln;
    ln.args = {Value(tensor_of(call, 1, api, "input")), *arg_of(call, 2, "normalized_shape")};
    for (auto [pos, name] : {std::pair<std::size_t, std::string_view>{5, "weight"}, {6, "bias"}}) {
      const Value* v = arg_of(call, pos, name);
      ln.args.push_back(v ? *v : Value());
    }
    const std::vector<Value> g{Value(tensor_of(call, 0, api, "grad_out"))};
    std::vector<Value> out(3);
    for (InputGradient& ig :
         error_bound_grad_magnitude(registry, framework, "Functional.layer_norm", ln, g)) {
      const std::size_t at = ig.path == "input.0"   ? 0
                             : ig.path == "input.2" ? 1
                             : ig.path == "input.3" ? 2
                                                    : 3;
      if (at < 3) out[at] = Value(std::move(ig.grad));
    }
    return out;
  }
  if (op == "_softmax_backward_data" || op == "_log_softmax_backward_data") {
    // (grad_output, output, dim, input_dtype): the forward's output is given, as the device saved it.
    const Tensor& g = tensor_of(call, 0, api, "grad_output");
    const Tensor& y = tensor_of(call, 1, api, "output");
    const Value* dv = arg_of(call, 2, "dim");
    const auto nd = static_cast<std::int64_t>(y.ndim());
    if (!dv || !dv->is_number() || nd == 0 || g.shape() != y.shape() || !is_floating(y.dtype()))
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("{}: needs grad_output and output of one shape and a dim", api), "", "dim");
    std::int64_t dim = static_cast<std::int64_t>(dv->as_double());
    if (dim < 0) dim += nd;
    if (dim < 0 || dim >= nd)
      throw Error(ErrorKind::InvalidArgument, fmt::format("{}: dim out of range", api), "", "dim");
    return std::vector<Value>{Value(softmax_output_grad_magnitude(y.to_doubles(), g, dim, y.dtype(),
                                                                  op == "_log_softmax_backward_data"))};
  }
  // gelu_backward(grad_output, self, approximate): |g| gelu'(|x|), the offline gelu backward on absolute
  // values (D14's AbsInputs gradient magnitude).
  return registry.run_forward(framework, std::string(api), abs_call_of(call), RunnerRole::Bench).outputs;
}

// DECISIONS D24: K of an output of an aten op of D24's table; nullopt for other APIs.
std::optional<std::int64_t> aten_accumulation(std::string_view api, const ApiCall& call,
                                              const Shape& output) {
  if (!detail::aten_counterpart(api)) return std::nullopt;
  const std::string_view op = detail::operator_of(api);
  if (op == "native_layer_norm") return normalized_count(call, 1, api);
  if (op == "native_layer_norm_backward") {
    // D14's gradient length: numel(x) K / numel(gradient) terms (K for dx, the rows times K for the
    // weight's).
    const std::int64_t k = normalized_count(call, 2, api);
    const double terms = static_cast<double>(tensor_of(call, 1, api, "input").numel()) *
                         static_cast<double>(k) /
                         static_cast<double>(std::max<std::int64_t>(1, probe::numel(output)));
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(terms)));
  }
  const detail::BoundFamily* f = detail::output_family(api, 0);
  std::vector<Shape> shapes;
  for (const Value& v : call.args) collect_shapes(v, shapes);
  return detail::accumulation_length(*f, shapes, output);
}

}  // namespace

std::vector<Value> error_bound_magnitude(const RunnerRegistry& registry, Framework framework,
                                         std::string_view api, const ApiCall& call) {
  if (auto m = aten_magnitude(registry, framework, api, call)) return std::move(*m);
  const detail::BoundFamily* f = detail::bound_family(api);
  if (f && f->magnitude == detail::MagnitudeKind::Normalization) return {Value(layer_norm_magnitude(call))};
  if (!f || f->magnitude != detail::MagnitudeKind::AbsInputs) return {};
  if (registry.find(framework, "Torch.matmul"))
    if (auto m = gemm_norm_magnitude(registry, framework, detail::operator_of(api), call))
      return std::move(*m);
  if (auto m = conv_norm_magnitude(registry, framework, api, detail::operator_of(api), call))
    return std::move(*m);
  return registry.run_forward(framework, magnitude_key(*f, api), abs_call_of(call), RunnerRole::Bench)
      .outputs;
}

std::vector<InputGradient> error_bound_grad_magnitude(const RunnerRegistry& registry, Framework framework,
                                                      std::string_view api, const ApiCall& call,
                                                      const std::vector<Value>& grad_outputs) {
  const std::string_view op = detail::operator_of(api);
  if (auto g = softmax_grad_magnitude(api, op, call, grad_outputs)) return std::move(*g);
  if (auto g = layer_norm_grad_magnitude(op, call, grad_outputs)) return std::move(*g);
  if (auto g = rsqrt_grad_magnitude(op, call, grad_outputs)) return std::move(*g);
  const detail::BoundFamily* f = detail::bound_family(api, true);
  if (!f || f->magnitude != detail::MagnitudeKind::AbsInputs) return {};
  if (auto g = gemm_norm_grad_magnitude(detail::operator_of(api), call, grad_outputs)) return std::move(*g);
  if (auto g = addition_grad_magnitude(*f, call, grad_outputs)) return std::move(*g);
  if (auto g = silu_grad_magnitude(detail::operator_of(api), call, grad_outputs)) return std::move(*g);
  std::vector<Value> abs_grads;
  for (const Value& g : grad_outputs) abs_grads.push_back(abs_value(g));
  return registry.run_backward(framework, magnitude_key(*f, api), abs_call_of(call), abs_grads,
                               RunnerRole::Bench);
}

std::int64_t error_bound_grad_accumulation(std::string_view api, const ApiCall& call, const Shape& output,
                                           const Shape& input) {
  const std::int64_t k = error_bound_accumulation(api, call, output);
  const double in = static_cast<double>(std::max<std::int64_t>(1, probe::numel(input)));
  const double terms = static_cast<double>(probe::numel(output)) * static_cast<double>(k) / in;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(terms)));
}

bool error_bound_exact_scalars(const ApiCall& call, DType output) {
  if (!is_floating(output)) return false;
  auto exact_in_output = [output](double x) {
    return Tensor::from_values<double>({x}, {}).to(output).to_doubles()[0] == x;
  };
  auto exact = [&](const Value& v) {
    // A one-element tensor of no dimensions is a number too: aten receives Python's scalars wrapped so,
    // in float64, and casts them to the other operand's dtype.
    if (v.is_tensor() && v.tensor().ndim() == 0 && is_floating(v.tensor().dtype()))
      return exact_in_output(v.tensor().to_doubles()[0]);
    if (!v.is_number() || std::holds_alternative<bool>(v.storage())) return true;
    return exact_in_output(v.as_double());
  };
  for (const Value& v : call.args)
    if (!exact(v)) return false;
  for (const auto& [k, v] : call.kwargs)
    if (!exact(v)) return false;
  return true;
}

std::int64_t error_bound_accumulation(std::string_view api, const ApiCall& call, const Shape& output) {
  if (const std::optional<std::int64_t> k = aten_accumulation(api, call, output)) return *k;
  const detail::BoundFamily* f = detail::bound_family(api);
  if (!f) return 1;
  if (f->accumulation == detail::AccumulationKind::Normalized) {
    std::int64_t k = 1;
    for (std::int64_t d : bind_layer_norm(call)["normalized_shape"].as_int_list()) k *= d;
    return std::max<std::int64_t>(k, 1);
  }
  std::vector<Shape> shapes;
  for (const Value& v : call.args) collect_shapes(v, shapes);
  for (const auto& kv : call.kwargs) collect_shapes(kv.second, shapes);
  return detail::accumulation_length(*f, shapes, output);
}

}  // namespace probe
