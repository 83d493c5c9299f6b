// The compare stage of run_ut (precheck.md §2-§3): bench vs device outputs of one API call become the
// rows of the details CSV and the Forward/Backward Test Success of the result CSV, byte-exact with
// msprobe HEAD in the `msprobe` profile.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probe/csv.h"
#include "probe/export.h"
#include "probe/metrics.h"
#include "probe/precision_standard.h"
#include "probe/status.h"
#include "probe/value.h"

namespace probe {

/// One row of accuracy_checking_details_*.csv (23 columns, see details_csv_header()).
struct PROBE_API DetailRow {
  std::string api_name;  ///< `<full name>.forward.output.<i>`
  std::string bench_dtype = " ", device_dtype = " ", shape = " ";
  MetricValue cosine, max_abs, hundredth, thousandth, ten_thousandth, binary_err_rate, error_balance, rmse,
      small_value_err_ratio, max_rel_err, mean_rel_err, inf_nan_err_ratio, rel_err_ratio, abs_err_ratio,
      ulp_max, ulp_mean, ulp_ratio;
  Status status = Status::Skip;
  std::string message;
  /// The element errors' distribution (Standards::error_histograms); never written to the CSV.
  std::optional<ErrorHistogram> histogram;
  /// The CSV cells, numbers formatted as msprobe does (`precision` decimals for float64).
  CsvRow to_csv(int precision = 14) const;
};

/// `API Name,Bench Dtype,DEVICE Dtype,Shape,余弦相似度,...,Status,Message`.
PROBE_API const CsvRow& details_csv_header();
/// `API name,Forward Test Success,Backward Test Success,Message`.
PROBE_API const CsvRow& result_csv_header();

/// Outputs of one API call. Lists/tuples are Value lists; a dict output may be given as an OpaqueValue of
/// type "dict" whose text lists its keys (msprobe only checks the key sets of dicts).
struct PROBE_API OutputCompareInput {
  std::string full_api_name;  ///< e.g. `Functional.relu.0`
  Value bench_output, device_output;
  std::optional<Value> bench_grad, device_grad;  ///< lists of input gradients, if backward ran
  std::string backward_message;                  ///< non-empty forces a backward SKIP row (§3.5)
  bool fp8_input = false;                        ///< a device input was fp8 (§4.2 rule 2)
};

struct PROBE_API OutputCompareResult {
  Status forward_status = Status::Skip;
  std::optional<Status> backward_status;         ///< nullopt: no backward compared (" " in the CSV)
  std::vector<DetailRow> rows;                   ///< forward rows, then backward rows
  bool forward_ok = false, backward_ok = false;  ///< msprobe's return value (§3.6)
  /// The result row's Message: the first SKIP row's message when a direction is SKIP, else none.
  std::optional<std::string> result_message;
};

/// Compares one API's outputs (and gradients). Throws probe::Error (InvalidArgument) with msprobe's text
/// "list index out of range" when the bench list is longer than the device list (run_ut turns it into
/// a SKIP row), and for an API name that does not split into 3 or 4 parts.
PROBE_API OutputCompareResult compare_output(const OutputCompareInput& in, const Standards& config);

/// Compares one (bench, device) item as msprobe's compare_core does; fills everything but api_name.
PROBE_API DetailRow compare_item(std::string_view api_name, const Value& bench, const Value& device,
                                 const Standards& config, bool fp8_input = false);

/// Direction roll-up of item statuses (§3.4; DECISIONS D1 in the probe profile).
PROBE_API Status aggregate_statuses(const std::vector<Status>& statuses, Aggregation how);

/// Dropout check (§3.2): zero counts of bench and device within the configured ratio.
PROBE_API Status compare_dropout(const Tensor& bench, const Tensor& device, const Standards& config);

/// API base name used for list lookups (§6.3), parse_api_name's name: "Torch.linalg.vector_norm.0" ->
/// "linalg.vector_norm", "Torch.matmul" and "Torch.matmul.0.forward" -> "matmul", "Aten.add.Tensor" ->
/// "add.Tensor". nullopt for what does not parse and for a counted name outside run_ut's form
/// ("Torch.a.b.c.0"), which compare_output refuses as msprobe does.
PROBE_API std::optional<std::string> api_base_name(std::string_view full_api_name);

/// One MindSpore details row's metrics and status (§7.3; DECISIONS D3 via config.mindspore_max_abs).
struct PROBE_API MindSporeRow {
  MetricValue cosine, max_abs, max_rel;  ///< float64, repr-formatted; blank when the pair is invalid
  Status status = Status::Skip;
  std::string message;
};
PROBE_API MindSporeRow compare_mindspore(const Value& bench, const Value& tested, const Standards& config);

}  // namespace probe
