// compare_item with what judge() needs besides the row: the checks the old rule made, and a standard
// chosen by the caller instead of by the API name.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "probe/judge.h"
#include "probe/output_compare.h"

namespace probe::detail {

/// The old rule's decision for one item, in the order it was reached.
struct ItemTrace {
  Method method = Method::NotCompared;
  std::vector<Criterion> criteria;
};

/// compare_item; `forced` replaces §4.2's choice of standard; `trace` (optional) receives the decision.
/// `computed` (optional): the pair's metrics already computed by compute_metrics with the config's
/// metric_params for the device dtype (compute_ulp on when the standard is the ULP standard); the tensors
/// are then not read again.
DetailRow compare_item_traced(std::string_view api_name, const Value& bench, const Value& device,
                              const Standards& config, bool fp8_input, std::optional<Standard> forced,
                              ItemTrace* trace, const TensorMetrics* computed = nullptr);

/// msprobe's ULP error of one finite element (precheck.md §2.9): |device - bench| in units of the device
/// dtype at the bench's exponent, floored at the smallest normal's; nullopt for non-floating dtypes.
std::optional<double> msprobe_ulp(double abs_err, double bench, DType device_dtype);

/// compare_mindspore's row from the float64 MindSpore metrics (ms_*) of a valid pair; nullptr: an invalid
/// pair.
MindSporeRow mindspore_row(const TensorMetrics* metrics, const Standards& config);

}  // namespace probe::detail
