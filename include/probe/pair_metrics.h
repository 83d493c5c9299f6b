// Every judgement of one (bench, device) tensor pair from one pass over the data: run_ut's details row and
// old-rule status, all metrics (ULP, dump compare and MindSpore included), the precision standard chosen
// for the API, the dump-compare cells and the MindSpore row. `probe metrics` prints this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "probe/export.h"
#include "probe/judge.h"
#include "probe/metrics.h"
#include "probe/output_compare.h"
#include "probe/precision_standard.h"
#include "probe/tensor.h"

namespace probe {

/// Which parts of a pair compare_pair() computes besides run_ut's row (always computed). The kernel skips
/// the work of the parts left out: the run_ut set alone costs about half of everything.
struct PROBE_API PairParts {
  bool ulp = true;           ///< ULP metrics (computed anyway when the API's standard is the ULP standard)
  bool dump_compare = true;  ///< PairMetrics::dump and the dump_* fields of the metrics
  bool mindspore = true;     ///< PairMetrics::mindspore and the ms_* fields of the metrics

  /// Every part (the default).
  static PairParts all() noexcept { return {}; }
  /// run_ut's row and metrics only.
  static PairParts run_ut_only() noexcept { return {false, false, false}; }
};

/// Parses a comma-separated list of "run_ut", "ulp", "dump", "mindspore", "all" ("run_ut" alone: run_ut
/// only). Throws probe::Error (InvalidArgument) naming an unknown or empty item.
PROBE_API PairParts parse_pair_parts(std::string_view list);

/// What compare_pair() finds. Each part equals what its own function gives (compare_item, compute_metrics
/// with ULP and extra metrics, dump_compare, compare_mindspore), computed from one fused kernel pass.
struct PROBE_API PairMetrics {
  DetailRow row;  ///< compare_item(api, bench, device): old-rule status and the standard's columns
  /// The rest needs a non-empty, same-shape floating pair; otherwise nullopt.
  std::optional<TensorMetrics> metrics;   ///< every requested metric (parts left out are blank or 0)
  std::optional<Standard> standard;       ///< the API's precision standard (nullopt: dtype without one)
  std::optional<DumpCompareResult> dump;  ///< dump_compare(device, bench); nullopt if not requested
  std::optional<MindSporeRow> mindspore;  ///< compare_mindspore(bench, device) (any pair) if requested
  /// judge(bound.api, bench, device, config, device.dtype(), bound.options) when compare_pair was given a
  /// PairErrorBound; otherwise nullopt.
  std::optional<Verdict> error_bound;
};

/// A verdict compare_pair() also computes (DECISIONS D14: the probe profile's `status` of `probe metrics`).
/// Where judge() applies the error bound to the pair, its per-element scan runs inside the metrics pass,
/// on each block while it is in cache; the verdict equals judge()'s.
struct PROBE_API PairErrorBound {
  std::string api = "elementwise";  ///< the API name judge() takes ("elementwise": no API given)
  JudgeOptions options;             ///< as judge() takes them (rule, magnitude, accumulation, worst_count)
};

/// Whether the probe profile's error-bound verdict (DECISIONS D14) can judge a pair, and if not why.
struct PROBE_API PairErrorBoundChoice {
  std::optional<PairErrorBound> bound;  ///< what to give compare_pair when D14 decides; nullopt otherwise
  /// Why D14 does not decide ("... (D14): run_ut's rule judged"); empty when it decides and in the msprobe
  /// profile, where D14 never decides.
  std::string why_not;
};

/// Chooses for `api` (any spelling; empty: "elementwise", an element-wise function accurate to 4 ulps) in
/// `profile`, given the caller's magnitude bench (nullptr: none; converted to float64) and accumulation
/// length (< 1: none); the bound's JudgeOptions take `worst_count`. Throws only what converting `magnitude`
/// throws. Pure and thread-safe.
PROBE_API PairErrorBoundChoice choose_pair_error_bound(std::string_view api, Profile profile,
                                                       const Tensor* magnitude, std::int64_t accumulation,
                                                       std::size_t worst_count = 3);

/// Compares `device` with `bench` for API `api` (a list name such as "linear"; api_base_name() turns a dump
/// name into one), computing `parts`. The tensors are read in place (memory-mapped files are not copied),
/// in one multi-threaded pass; a bfloat16 device with a float64 bench needs a second pass when dump compare
/// or MindSpore is requested (run_ut's metrics read that bench rounded to float32, they read it in float64).
/// Throws what compare_item throws. Thread-safe; the tensors are only read.
PROBE_API PairMetrics compare_pair(std::string_view api, const Tensor& bench, const Tensor& device,
                                   const Standards& config, const PairParts& parts = PairParts::all());
/// The same, with PairMetrics::error_bound. Throws what judge() throws too.
PROBE_API PairMetrics compare_pair(std::string_view api, const Tensor& bench, const Tensor& device,
                                   const Standards& config, const PairParts& parts,
                                   const PairErrorBound& bound);

}  // namespace probe
