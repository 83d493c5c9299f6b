// Every judgement of one (bench, device) tensor pair from one pass over the data: run_ut's details row and
// old-rule status, all metrics (ULP, dump compare and MindSpore included), the precision standard chosen
// for the API, the dump-compare cells and the MindSpore row. `probe metrics` prints this.
#pragma once

#include <optional>
#include <string_view>

#include "probe/export.h"
#include "probe/metrics.h"
#include "probe/output_compare.h"
#include "probe/precision_standard.h"
#include "probe/tensor.h"

namespace probe {

/// What compare_pair() finds. Each part equals what its own function gives (compare_item, compute_metrics
/// with ULP and extra metrics, dump_compare, compare_mindspore), computed from one fused kernel pass.
struct PROBE_API PairMetrics {
  DetailRow row;  ///< compare_item(api, bench, device): old-rule status and the standard's columns
  /// The rest needs a non-empty, same-shape floating pair; otherwise nullopt.
  std::optional<TensorMetrics> metrics;   ///< every metric, ULP and dump-compare/MindSpore included
  std::optional<Standard> standard;       ///< the API's precision standard (nullopt: dtype without one)
  std::optional<DumpCompareResult> dump;  ///< dump_compare(device, bench)
  MindSporeRow mindspore;                 ///< compare_mindspore(bench, device) (any pair)
};

/// Compares `device` with `bench` for API `api` (a list name such as "linear"; api_base_name() turns a dump
/// name into one). The tensors are read in place (memory-mapped files are not copied), in one multi-threaded
/// pass; a bfloat16 device with a float64 bench needs a second pass (run_ut's metrics read that bench
/// rounded to float32, dump compare and MindSpore in float64). Throws what compare_item throws.
/// Thread-safe; the tensors are only read.
PROBE_API PairMetrics compare_pair(std::string_view api, const Tensor& bench, const Tensor& device,
                                   const Standards& config);

}  // namespace probe
