// msprobe's overflow analysis (`run_overflow_check`): for every forward API of a dump whose inputs hold no
// overflow and whose recorded outputs do, the exact (float64) result on the same inputs says whether the
// output dtype had to overflow (a normal overflow) or the device produced it (an abnormal overflow).
//
// Thread safety: the functions are reentrant; concurrent calls share nothing but the registry, which they
// only read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "probe/dtype.h"
#include "probe/export.h"
#include "probe/runner.h"
#include "probe/tensor.h"

namespace probe {

/// How an output overflowed on the device: inf/NaN (INF/NAN mode), or clamped to ±max of its dtype
/// (saturation mode, Atlas training series).
enum class OverflowKind { InfNan, Saturation };
/// A verdict: the exact result overflows the dtype too (Normal), it does not (Abnormal), or the API could
/// not be re-run (Skip, with the reason).
enum class OverflowVerdict { Normal, Abnormal, Skip };
PROBE_API const char* to_string(OverflowKind k) noexcept;
PROBE_API const char* to_string(OverflowVerdict v) noexcept;

/// One overflowing output tensor and the element that decides its verdict: the first element the exact
/// result does not explain (Abnormal), else the first overflowing one.
struct PROBE_API OverflowOutput {
  std::size_t output_index = 0;  ///< position among the entry's output tensors, in dump order
  OverflowKind kind = OverflowKind::InfNan;
  OverflowVerdict verdict = OverflowVerdict::Normal;
  std::int64_t element = -1;     ///< flat index; -1 when the dump holds statistics only
  double device = 0.0;           ///< recorded value (NaN when unknown: statistics dump)
  double bench = 0.0;            ///< exact float64 value
  bool from_statistics = false;  ///< judged without recorded elements (statistics dump, generated inputs)
};

/// Judges one output: `device` as recorded, `bench` the float64 result of the same call, `dtype` the
/// output's dtype. A non-finite device element is explained when the bench rounded to `dtype` is
/// non-finite; a saturated one (±max) when the rounded bench is non-finite, and is no overflow when the
/// rounded bench is ±max itself. Returns nullopt when no element overflowed. Throws InvalidArgument when
/// the element counts differ.
PROBE_API std::optional<OverflowOutput> judge_overflow(const Tensor& device, const Tensor& bench, DType dtype,
                                                       std::size_t output_index = 0);

/// The result for one API ("Torch.exp.0"): its verdict (Abnormal when any output is) and its outputs.
struct PROBE_API OverflowApi {
  std::string api;
  OverflowVerdict verdict = OverflowVerdict::Normal;
  std::vector<OverflowOutput> outputs;
  std::string message;  ///< why it was skipped, or how its inputs were obtained
};

/// msprobe's sentence: "The {api} overflow is a normal overflow." / "... is an abnormal overflow."; ""
/// for Skip.
PROBE_API std::string overflow_sentence(const OverflowApi& api);

struct PROBE_API OverflowCheckOptions {
  std::string api_info;       ///< dump.json (task overflow_check, tensor or statistics)
  std::string out_dir = ".";  ///< where overflow_check_result_{timestamp}.csv goes; "" writes no CSV
  std::string timestamp;      ///< 14 digits for the file name; "" uses the local time
  std::uint64_t seed = 1234;  ///< inputs generated from statistics (dumps without tensor files), as run_ut
  std::uint64_t max_api_elements = std::uint64_t{1} << 24;  ///< bound of generated inputs, as run_ut
};

struct PROBE_API OverflowCheckSummary {
  std::vector<OverflowApi>
      apis;  ///< candidates in dump order (forward APIs, finite inputs, overflowing outputs)
  std::size_t forward_apis = 0;  ///< forward API entries read
  std::size_t normal = 0, abnormal = 0, skipped = 0;
  std::size_t not_overflow = 0;  ///< candidates whose saturated values the exact result reproduces
  std::string csv;               ///< the file written ("" when out_dir is empty)
};

/// Runs the analysis over `options.api_info` with `registry`'s bench runners. Throws probe::Error (Io,
/// Format naming the file and field) for an unreadable or malformed dump; per-API failures become Skip.
PROBE_API OverflowCheckSummary run_overflow_check(const OverflowCheckOptions& options,
                                                  const RunnerRegistry& registry);
/// The same with the built-in runners.
PROBE_API OverflowCheckSummary run_overflow_check(const OverflowCheckOptions& options);

}  // namespace probe
