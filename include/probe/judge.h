// The verdict of one output in memory: run_ut's old rule (the Status column and Forward Test Success of
// its CSVs) or the precision standard that api_precision_compare applies to run_ut's details rows, with
// every criterion's value and threshold and the worst elements. The CSV writers render these verdicts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe/dtype.h"
#include "probe/error_histogram.h"
#include "probe/export.h"
#include "probe/precision_standard.h"
#include "probe/status.h"
#include "probe/tensor.h"

namespace probe {

/// Which of msprobe's two judgements judge() gives.
enum class JudgeRule {
  RunUt,              ///< the old rule run_ut writes into Status (precheck.md §3.1, §2.10)
  PrecisionStandard,  ///< api_precision_compare's 比对结果 for run_ut's row (§4.2, §5.2-§5.3)
  /// DECISIONS D14: every element within a bound derived from the operation's numerics (u of the output
  /// dtype on |bench| plus the accumulation error on the magnitude bench); run_ut's rule for APIs D14 has
  /// no family for (the Message says so).
  ErrorBound,
  Default,  ///< ErrorBound with the `probe` profile's standards, RunUt with the `msprobe` profile's
};

/// What decided a verdict.
enum class Method {
  NotCompared,  ///< nothing was judged: shape/dtype mismatch, empty, a dtype the standards skip
  OldRule,      ///< cosine, max abs error, dual ratios (§3.1)
  ExactMatch,   ///< integer/bool output: binary error rate must be 0 (§2.10)
  Benchmark,
  AbsoluteThreshold,
  BinaryConsistency,
  Ulp,
  Thousandth,
  Accumulative,
  ErrorBound,  ///< DECISIONS D14
};
/// "not compared", "old rule", "exact match", "benchmark", "absolute threshold", ... (for messages).
PROBE_API std::string_view to_string(Method m) noexcept;

/// One check of a verdict: `value op threshold` held (`pass`) or not.
struct PROBE_API Criterion {
  std::string name;     ///< e.g. "cosine", "rmse ratio", "ulp proportion"
  double value = 0;     ///< NaN when the metric is undefined (see Verdict::message)
  std::string_view op;  ///< ">", "<", ">=", "<=" or "=="
  double threshold = 0;
  bool pass = false;
  bool decides = true;  ///< false for a value reported but never deciding (benchmark error balance)
};

/// One element of the output and its error; ulp is in units of the device dtype at the bench's
/// magnitude (msprobe's ULP formula, exponent floored at the dtype's smallest normal), when defined.
struct PROBE_API ElementError {
  std::int64_t index = 0;  ///< flat, row-major
  double bench = 0, device = 0, abs_err = 0, rel_err = 0;
  std::optional<double> ulp;
  std::vector<std::int64_t> coords;  ///< the index per dimension, as `[i, j, k]` of the output's shape
  double bound = std::numeric_limits<double>::quiet_NaN();  ///< the element's D14 bound (ErrorBound)
};

struct PROBE_API Verdict {
  Status status = Status::Skip;
  Method method = Method::NotCompared;
  /// The standard api_precision_compare applies (PrecisionStandard rule; nullopt for NotCompared).
  std::optional<Standard> standard;
  /// Evaluated checks in order. The old rule stops at its first decisive check; the ULP standard passes
  /// when any one check passes (pass_if_any); every other standard needs all deciding checks.
  std::vector<Criterion> criteria;
  bool pass_if_any = false;
  /// Largest errors first: non-finite mismatches, then by ULPs (or relative error where no ULP exists).
  /// Empty when the pair was not compared or when no element differs.
  std::vector<ElementError> worst;
  std::string message;  ///< the CSV Message text of the rule (run_ut's, or why nothing was judged)
  /// The element errors over their bound, when the error bound's scan was asked for them.
  std::optional<ErrorHistogram> histogram;
};

struct PROBE_API JudgeOptions {
  JudgeRule rule = JudgeRule::Default;
  /// Judge with this precision standard instead of the one §4.2 picks for the API name.
  std::optional<Standard> standard;
  /// The benchmark and ULP standards rate the device against a second device's output for the same
  /// inputs (api_precision_compare's GPU side). Without one, the bench rounded to the device dtype (the
  /// correctly rounded result) is that second device. Converted to the device dtype like `device`.
  std::optional<Tensor> reference;
  bool fp8_input = false;  ///< a device input was fp8 (§4.2 rule 2)
  std::size_t worst_count = 3;
  /// ErrorBound: the magnitude bench, float64 of the bench's shape: the API run on its inputs' absolute
  /// values (sum |a||b| for matmul; probe::error_bound_magnitude computes it). Required, with
  /// `accumulation`, by the families that accumulate (GEMM, convolution, sum/mean, add/sub, gelu/silu).
  std::optional<Tensor> magnitude;
  /// ErrorBound: terms summed into one output element (K of a GEMM, the reduced count of a sum;
  /// probe::error_bound_accumulation); 0: 1 for element-wise APIs, the largest dim for softmax-like ones.
  std::int64_t accumulation = 0;
  /// ErrorBound: the call's Python-number operands (alpha, beta, a scalar divisor) are exact in the output
  /// dtype (probe::error_bound_exact_scalars), so torch's cast of them rounds nothing: no term for it.
  bool exact_scalars = false;
};

/// Judges `device` (converted to `device_dtype` first when it holds another dtype, e.g. bfloat16 values
/// widened to float32) against `bench` (normally float64) as run_ut does for one output of API `api`
/// (msprobe's list name: "gelu", "__matmul__", "linalg.vector_norm"; api_base_name() turns a dump name
/// into it). Numbers are the values run_ut writes into its details CSV (14 decimals), so the
/// PrecisionStandard verdict is the one api_precision_compare gives on those files. Pure and thread-safe.
/// An API no standard lists, misspelt or not, is judged by the default standard for the dtype, as msprobe
/// judges an unlisted API (run_ut checks every API it has a runner for; RunnerRegistry::add is where an
/// unknown name is refused).
PROBE_API Verdict judge(std::string_view api, const Tensor& bench, const Tensor& device,
                        const Standards& standards, DType device_dtype, const JudgeOptions& options = {});

}  // namespace probe
