// The error-bound verdict (DECISIONS D14): every output element is held to a tolerance derived from the
// numerics of the operation that produced it, never from the output's scale. The families below say how
// an API's elements are bounded; callers that hold the API's inputs compute the magnitude bench the
// family asks for (the operation on the inputs' absolute values) and the accumulation length.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "probe/judge.h"
#include "probe/output_compare.h"
#include "probe/precision_standard.h"
#include "probe/tensor.h"

namespace probe::detail {

/// What an element's accumulation error is proportional to.
enum class MagnitudeKind {
  Bench,         ///< |bench|: correctly roundable functions, products, quotients, softmax
  BenchPlusOne,  ///< |bench| + 1: the logarithm of a sum (log_softmax)
  BenchLog,      ///< |bench| (1 + |ln |bench|| + ln K): softmax, whose exp sees x - max rounded
  AbsInputs,     ///< the operation on the inputs' absolute values, e.g. sum |a||b| for a GEMM
  /// layer_norm: r |w| (|x - mean| + mean |x|) + |b| per element (r = 1 / sqrt(var + eps)), from the inputs
  Normalization,
};

/// Whether the family's magnitude bench comes from the call (the caller must supply it).
inline bool takes_magnitude(MagnitudeKind k) {
  return k == MagnitudeKind::AbsInputs || k == MagnitudeKind::Normalization;
}

/// How the number of terms summed into one output element follows from the input shapes.
enum class AccumulationKind {
  None,                 ///< one term
  LastDimOfFirst,       ///< the first tensor input's last dim: mm, matmul, bmm, linear, dot
  LastDimOfSecond,      ///< the second tensor input's last dim: addmm(bias, mat1, mat2), baddbmm
  ConvWeight,           ///< weight elements per output channel: conv1d/2d/3d, weight [out, in/groups, k...]
  ConvWeightAnyLayout,  ///< aten's convolution, maybe transposed ([in, out/groups, k...]): bounds both
  ReducedCount,         ///< input elements per output element: sum, mean
  LargestDim,           ///< the largest input dim (a reduction along one dim): softmax, cumsum
  Normalized,           ///< the elements of normalized_shape: layer_norm
};

/// One family of the D14 table.
struct BoundFamily {
  std::string_view name;  ///< "gemm", "reduction", "transcendental", ...
  MagnitudeKind magnitude;
  AccumulationKind accumulation;
  /// The family's own rounding error besides the accumulation, in units of the accumulation dtype's unit
  /// roundoff (a few for library functions, 0 for exact operations).
  double own_ulps;
  /// The operator whose runner computes the magnitude bench when it is not the API's own ("add" for "sub").
  std::string_view magnitude_op;
  /// A Python-number operand (alpha, beta, a scalar divisor) is rounded to the op's dtype before the op
  /// (torch casts it to the tensor's scalar type): one more u_out times the magnitude.
  bool scalar_operand = false;
  /// DECISIONS D20: the roundings beyond the final one that torch's CPU kernel for a float16/bfloat16
  /// output makes in that dtype (each intermediate result rounded); 0 when the kernel rounds once. An
  /// element beyond the bound but within band_roundings u_out more (times |bench|, or the magnitude when
  /// band_on_magnitude) is a Warning naming that cause.
  double band_roundings = 0;
  bool band_on_magnitude = false;
  /// DECISIONS D20: operands the backward reuses from the device's forward, rounded to the output dtype
  /// (softmax's saved output): their rounding adds rounded_operands u_out times the magnitude.
  double rounded_operands = 0;
};

/// The family of an API in any spelling ("Functional.gelu.0", "Aten.mm.default", "gelu", "__matmul__");
/// nullptr when D14 has no bound for it (the caller falls back to run_ut's rule). `backward`: the family
/// that bounds the API's input gradients, where it differs from the forward's (silu, DECISIONS D20).
const BoundFamily* bound_family(std::string_view api, bool backward = false);

/// DECISIONS D24: the family judging output `output` of `api`: bound_family(api, backward), except for the
/// aten ops of D24's table (native_layer_norm, native_layer_norm_backward, _softmax_backward_data,
/// _log_softmax_backward_data, gelu_backward), whose outputs take their offline counterpart's families;
/// nullptr where run_ut's rule judges that output.
const BoundFamily* output_family(std::string_view api, std::size_t output, bool backward = false);

/// DECISIONS D24: the offline API an aten op of D24's table is judged as, and whether the op computes that
/// API's input gradients.
struct AtenCounterpart {
  std::string_view api;
  bool gradient;
};
std::optional<AtenCounterpart> aten_counterpart(std::string_view api);

/// Terms per output element for `family` from the shapes of the call's tensor inputs (in call order) and
/// of the output; at least 1.
std::int64_t accumulation_length(const BoundFamily& family, const std::vector<Shape>& inputs,
                                 const Shape& output);

/// The D14 verdict of one output. `magnitude` (float64, the bench's shape) is required for AbsInputs
/// families and ignored otherwise; `accumulation` is the family's K (>= 1). `histogram`: also fill
/// Verdict::histogram (every element's error over its bound, in the same scan).
Verdict error_bound_verdict(const BoundFamily& family, const Tensor& bench, const Tensor& device,
                            const Tensor* magnitude, std::int64_t accumulation, std::size_t worst_count,
                            bool histogram = false);

/// g(K, u) of D14: the error bound of a K-term sum accumulated in unit roundoff u, in units of its
/// magnitude (worst case up to 64 terms, the probabilistic bound above).
double accumulation_bound(std::int64_t k, double u);

/// The unit roundoff of a floating dtype (2^-24 for float32) and its smallest subnormal; nullopt for
/// integer and bool dtypes.
std::optional<std::pair<double, double>> rounding_of(DType t);

/// What judge() hands to error_bound_verdict: the family, the magnitude (null unless the family takes one)
/// and K.
struct ErrorBoundCall {
  /// The API's family; a copy, as JudgeOptions::exact_scalars drops its scalar rounding term.
  BoundFamily family;
  const Tensor* magnitude;
  std::int64_t accumulation;
};

/// The D14 call judge(api, bench, device, cfg, device_dtype, opt) makes, or nullopt when judge() uses
/// another rule (not the ErrorBound rule, a non-floating pair, no family). Throws what judge() throws when
/// an accumulating family lacks its magnitude or K. `opt` must outlive the result.
std::optional<ErrorBoundCall> error_bound_call(std::string_view api, const Tensor& bench, DType device_dtype,
                                               const Standards& cfg, const JudgeOptions& opt);

/// error_bound_verdict in three steps, so that its per-element scan can run inside another pass over the
/// same elements (compare_pair scans each block right after the metrics kernel read it, while it is in
/// cache). The verdict does not depend on how [0, numel) is split into ranges or chunk ids.
class ErrorBoundScan {
 public:
  /// Throws probe::Error (InvalidArgument) when the shapes differ or an AbsInputs/Normalization family
  /// has no magnitude of the bench's shape. The tensors must outlive the scan.
  ErrorBoundScan(const BoundFamily& family, const Tensor& bench, const Tensor& device,
                 const Tensor* magnitude, std::int64_t accumulation, std::size_t worst_count);
  ~ErrorBoundScan();
  ErrorBoundScan(const ErrorBoundScan&) = delete;
  ErrorBoundScan& operator=(const ErrorBoundScan&) = delete;
  /// Before start(): also count every element's error over its bound into Verdict::histogram.
  void want_histogram();
  /// Before any scan(): the chunk ids will be 0..chunks-1.
  void start(int chunks);
  /// Scans elements [begin, end); concurrent calls must have distinct chunk ids.
  void scan(std::int64_t begin, std::int64_t end, int chunk);
  /// The verdict, once every element was scanned exactly once.
  Verdict finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// The leaves of a list of outputs or gradients (nested lists flattened), in the order of their rows.
std::vector<Value> value_leaves(const std::vector<Value>& values);

/// The index per dimension of element `flat` of a row-major tensor of `shape` ({} for a scalar).
std::vector<std::int64_t> unravel_index(std::int64_t flat, const Shape& shape);
/// The multi-dimensional index of element `flat` of a row-major tensor of `shape`, as "[1, 0, 2]".
std::string index_text(std::int64_t flat, const Shape& shape);

/// Re-judges the rows compare_output wrote for one direction by D14: rows[first + i] belongs to leaf i of
/// `bench`/`device` (lists flattened). A row keeps run_ut's verdict, with a Message saying why, where D14
/// has no family for `api`, the pair is not two floating tensors of one shape, or an accumulating family
/// has no magnitude[i]. `accumulation[i]` is output i's K. Returns the direction's rolled-up status.
/// `backward`: the rows are input gradients (bound_family(api, true) judges them). `histograms`: each
/// re-judged row gets its DetailRow::histogram in bound units. `exact_scalars[i]`: output i's Python-number
/// operands are exact in its dtype (JudgeOptions::exact_scalars; missing: not known to be).
Status rejudge_rows(std::string_view api, const std::vector<Value>& bench, const std::vector<Value>& device,
                    const std::vector<Value>& magnitude, const std::vector<std::int64_t>& accumulation,
                    std::vector<DetailRow>& rows, std::size_t first, Aggregation how, bool backward = false,
                    bool histograms = false, const std::vector<bool>& exact_scalars = {});

}  // namespace probe::detail
