// Internal: the two layouts of run_ut's result and details files (msprobe's PyTorch and MindSpore checkers).
// Each format owns its headers and turns one API's compared outputs into its rows; run_ut picks one per run.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe/csv.h"
#include "probe/dtype.h"
#include "probe/error_histogram.h"
#include "probe/precision_standard.h"
#include "probe/run_ut.h"
#include "probe/status.h"
#include "probe/value.h"

namespace probe::rut {

/// msprobe's empty cell.
inline const std::string kSpace = " ";

/// One API's line of the result file as run_ut decided it; RunUtFormat::result_cells() writes it.
struct ResultRow {
  std::string api;
  std::optional<Status> forward, backward;  ///< nullopt: the blank cell (" " PyTorch, "" MindSpore)
  std::optional<std::string> message;       ///< nullopt: no Message cell (PyTorch rows without one)
};

/// One API's rows; `result` nullopt means no result row (MindSpore APIs with nothing to compare).
struct ApiRows {
  std::string name;
  std::vector<CsvRow> details;
  std::optional<ResultRow> result;
  /// The flagged (error, Warning) outputs' element-error histograms by details-row name, when
  /// Standards::error_histograms asked for them: the report's sidecar file.
  std::vector<std::pair<std::string, ErrorHistogram>> histograms;
};

/// DECISIONS D15 (probe profile): a direction judged by bit-exact equality of device against bench, with
/// what the bench is ("the input") and why equality is required, for the rows' messages.
struct ExactRule {
  std::string reference, why;
};

/// DECISIONS D16 (probe profile): the check of the gradient flowing into a tensor the API consumes, which
/// its backward rows carry (Skip: not checked, the message says why).
struct DataflowVerdict {
  Status status = Status::Skip;
  std::string message;
};

/// What one API produced once bench and device ran, as the format compares it.
struct ApiOutputs {
  std::string full_name;                                        ///< `Functional.relu.0`
  std::vector<Value> bench, device;                             ///< forward outputs
  std::optional<std::vector<Value>> bench_grads, device_grads;  ///< input gradients, when compared
  std::string backward_skip;                                    ///< non-empty: backward not compared, and why
  std::vector<std::string> backward_notes;   ///< per input gradient: why it was not compared ("" = it was)
  std::optional<DType> msprobe_bench_dtype;  ///< msprobe profile: the dtype msprobe's bench would have used
  /// DECISIONS D14 (probe profile): the runner key that names the API's error-bound family, and, for the
  /// families that accumulate, the magnitude bench of each forward output and input gradient (leaves in
  /// the order of bench / bench_grads; empty: none) with their accumulation lengths. Empty bound_api: the
  /// rows keep run_ut's rule.
  std::string bound_api;
  std::vector<Value> magnitude, grad_magnitude;
  std::vector<std::int64_t> accumulation, grad_accumulation;
  /// DECISIONS D25: per forward output leaf, whether the call's Python numbers are exact in its dtype.
  std::vector<bool> exact_scalars;
  /// DECISIONS D15: directions judged by exact equality (after D14 and run_ut's rule, whose metric columns
  /// stay); nullopt: the direction keeps its rule.
  std::optional<ExactRule> exact_forward, exact_backward;
  /// DECISIONS D16: the dataflow verdict of the tensors this API consumes whose gradient through it is
  /// otherwise unknown; combined into its backward rows and status.
  std::optional<DataflowVerdict> dataflow;
};

/// One API's rows and msprobe's return values (whether each direction counts as passed).
struct ComparedApi {
  ApiRows rows;
  bool forward_ok = false, backward_ok = false;
};

/// What a checker's files look like, apart from how its rows are computed (RowLayout.cpp): all that reading
/// the files back needs (resume, load_and_repair), without the metrics kernel. The two instances are
/// immutable.
class RunUtLayout {
 public:
  virtual ~RunUtLayout() = default;
  virtual const CsvRow& result_header() const = 0;
  virtual const CsvRow& details_header() const = 0;
  /// True when every API checked gets a result row (PyTorch); MindSpore writes none for an API with nothing
  /// to compare.
  virtual bool result_row_per_api() const = 0;
  /// True when a result row with this forward status has details rows (resume checks them).
  virtual bool result_has_details(std::optional<Status> forward) const = 0;
  /// "PyTorch" / "MindSpore", for messages.
  virtual const char* name() const = 0;
};

/// The layout of msprobe's checker for `fw` (MindSpore, else PyTorch).
const RunUtLayout& run_ut_layout(Framework fw);

/// A checker's file layout and its rows. The two instances are immutable: use from many threads is safe.
class RunUtFormat : public RunUtLayout {
 public:
  explicit RunUtFormat(const RunUtLayout& layout) : layout_(layout) {}
  const CsvRow& result_header() const final { return layout_.result_header(); }
  const CsvRow& details_header() const final { return layout_.details_header(); }
  bool result_row_per_api() const final { return layout_.result_row_per_api(); }
  bool result_has_details(std::optional<Status> forward) const final {
    return layout_.result_has_details(forward);
  }
  const char* name() const final { return layout_.name(); }
  /// The result row's cells in this checker's spelling.
  virtual CsvRow result_cells(const ResultRow& row) const = 0;
  /// The rows of an API skipped as a whole, `message` saying why.
  virtual ApiRows skip(const std::string& full_name, const std::string& message) const = 0;
  /// Compares one API's outputs (and gradients) by `standards` and lays them out as rows.
  virtual ComparedApi compare(const ApiOutputs& api, const Standards& standards) const = 0;

 private:
  const RunUtLayout& layout_;
};

/// The format of msprobe's checker for `fw` (MindSpore, else PyTorch).
const RunUtFormat& run_ut_format(Framework fw);

/// DECISIONS D22: marks one API's `direction` ("forward" / "backward") `error` with `message` (a device
/// runner that failed): the Status and Message of its details rows, the result row's direction, and its
/// Message (appended unless already there).
void mark_direction_error(const RunUtFormat& format, ApiRows& rows, std::string_view direction,
                          const std::string& message);

}  // namespace probe::rut
