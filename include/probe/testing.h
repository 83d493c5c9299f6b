// GoogleTest helpers for operator-library tests (CMake target probe::gtest, `find_package(probe COMPONENTS
// gtest)`; libprobe itself never needs GoogleTest). A device result is accurate when run_ut's rule passes
// it and the precision standard for the API does not fail it (probe::judge, both rules). A failure
// prints the verdicts, each criterion with value and threshold, the worst elements and a `__REPRO:` line:
// the case saved as .npy files and the `probe metrics` command that judges it again.
//
//   EXPECT_PROBE_ACCURATE("Functional.gelu", probe::testing::args(x), my_gelu(x));
//   EXPECT_THAT(my_gelu(x), probe::testing::IsAccurate(bench, probe::DType::BFloat16));
//   EXPECT_PRED_FORMAT2(probe::testing::AssertAccurate, bench, my_gelu(x));
//
// Thread-safety: as GoogleTest's assertions; the helpers keep no state besides the built-in registry and
// standards (built once) and a per-test counter naming the REPRO directories.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "probe/export.h"
#include "probe/judge.h"
#include "probe/runner.h"
#include "probe/tensor.h"

namespace probe::testing {

/// Everything the helpers can be told; the defaults fit most tests.
struct PROBE_API CheckOptions {
  /// Where bench runners come from; nullptr: RunnerRegistry::with_builtins().
  const RunnerRegistry* registry = nullptr;
  Profile profile = Profile::Probe;
  /// Judge with this precision standard instead of the API's (§4.2); without an API name: benchmark.
  std::optional<Standard> standard;
  std::size_t worst_count = 3;
  /// Directory for REPRO files; empty: $PROBE_REPRO_DIR, else GoogleTest's TempDir()/probe_repro.
  std::string repro_dir;
  /// The error bound's magnitude bench and accumulation length (JudgeOptions); EXPECT_PROBE_ACCURATE
  /// computes them from the call, check_output and IsAccurate take them from here.
  std::optional<Tensor> magnitude;
  std::int64_t accumulation = 0;
  /// The call's Python numbers are exact in the output dtype (JudgeOptions::exact_scalars; computed by
  /// EXPECT_PROBE_ACCURATE).
  bool exact_scalars = false;
};

/// The verdicts of one output and what the failure message needs.
struct PROBE_API Accuracy {
  Verdict run_ut, standard;
  /// DECISIONS D14's verdict (Method::ErrorBound) in the probe profile when it covers the API and has what
  /// it needs (an accumulating API: the magnitude bench); else Method::NotCompared.
  Verdict error_bound;
  /// The error bound passes, where it was judged; otherwise run_ut's rule says pass and the precision
  /// standard says pass or has no rule for the dtype (float64).
  bool accurate() const noexcept;
};

/// The ApiCall of positional arguments, e.g. args(x, 1) for gelu(x) or softmax(x, 1).
template <class... T>
ApiCall args(T&&... positional) {
  ApiCall call;
  (call.args.emplace_back(std::forward<T>(positional)), ...);
  return call;
}

/// Judges one device output (converted to `dtype`) against a float64 bench by every rule; `api` is msprobe's
/// list name or a dump name ("gelu", "Functional.gelu"; empty: no API, the benchmark standard). An API no
/// standard lists is judged by the default standard for the dtype, as probe::judge does.
PROBE_API Accuracy check_output(std::string_view api, const Tensor& bench, const Tensor& device, DType dtype,
                                const CheckOptions& options = {});

/// The failure text of `accuracy` for `what` (e.g. "Functional.gelu output 0"); saves the REPRO files.
/// `input`, when it has the output's shape, is shown next to each worst element.
PROBE_API std::string describe(const Accuracy& accuracy, std::string_view what, std::string_view api,
                               const Tensor& bench, const Tensor& device, DType dtype,
                               const CheckOptions& options, const Tensor* input = nullptr);

/// Runs the bench runner of `api` ("Functional.gelu") on `call` and judges every device output.
PROBE_API ::testing::AssertionResult api_accurate(std::string_view api, const ApiCall& call,
                                                  const std::vector<Tensor>& device_outputs,
                                                  const CheckOptions& options = {});

/// Predicate-format for EXPECT_PRED_FORMAT2(AssertAccurate, bench, device): the device tensor's own dtype.
PROBE_API ::testing::AssertionResult AssertAccurate(const char* bench_expr, const char* device_expr,
                                                    const Tensor& bench, const Tensor& device);

/// Predicate-format for EXPECT_PRED_FORMAT3(AssertApiAccurate, api, call, device_outputs).
PROBE_API ::testing::AssertionResult AssertApiAccurate(const char* api_expr, const char* call_expr,
                                                       const char* outputs_expr, std::string_view api,
                                                       const ApiCall& call,
                                                       const std::vector<Tensor>& device_outputs);

/// Matcher of a device tensor (its values taken as `dtype`) against a float64 bench.
PROBE_API ::testing::Matcher<const Tensor&> IsAccurate(Tensor bench, DType dtype,
                                                       std::optional<Standard> standard = {});

}  // namespace probe::testing

/// Checks `device_outputs` (a Tensor or std::vector<Tensor>) of API `api` called with `call` against the
/// registry's bench runner; non-fatal, like EXPECT_*.
#define EXPECT_PROBE_ACCURATE(api, call, device_outputs)              \
  EXPECT_PRED_FORMAT3(::probe::testing::AssertApiAccurate, api, call, \
                      ::probe::testing::outputs(device_outputs))
/// As EXPECT_PROBE_ACCURATE, fatal.
#define ASSERT_PROBE_ACCURATE(api, call, device_outputs)              \
  ASSERT_PRED_FORMAT3(::probe::testing::AssertApiAccurate, api, call, \
                      ::probe::testing::outputs(device_outputs))

namespace probe::testing {
/// One tensor or a list of them as the list EXPECT_PROBE_ACCURATE checks.
inline std::vector<Tensor> outputs(const Tensor& t) { return {t}; }
inline std::vector<Tensor> outputs(std::vector<Tensor> ts) { return ts; }
}  // namespace probe::testing
