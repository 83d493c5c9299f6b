// The headers and row rules of run_ut's two checkers (precheck.md §3.5 PyTorch, §7.3 MindSpore): what reading
// the files back needs, apart from RowFormat.cpp's rows (and the metrics kernel behind them).
#include "probe/metric_table.h"
#include "probe/output_compare.h"
#include "run_ut/RowFormat.h"

namespace probe {
namespace {

// The details header of a checker: four leading columns, one per metric with a `header`, Status, Message.
CsvRow details_header_of(std::string_view MetricColumn::*header, const char* tested_dtype) {
  CsvRow h{"API Name", "Bench Dtype", tested_dtype, "Shape"};
  for (const MetricColumn& m : metric_table())
    if (!(m.*header).empty()) h.emplace_back(m.*header);
  h.insert(h.end(), {"Status", "Message"});
  return h;
}

}  // namespace

const CsvRow& details_csv_header() {
  static const CsvRow h = details_header_of(&MetricColumn::pytorch_header, "DEVICE Dtype");
  return h;
}

const CsvRow& result_csv_header() {
  static const CsvRow h{"API name", "Forward Test Success", "Backward Test Success", "Message"};
  return h;
}

namespace rut {
namespace {

class PyTorchLayout final : public RunUtLayout {
 public:
  const CsvRow& result_header() const override { return result_csv_header(); }
  const CsvRow& details_header() const override { return details_csv_header(); }
  bool result_has_details(std::optional<Status> forward) const override { return forward.has_value(); }
  bool result_row_per_api() const override { return true; }
  const char* name() const override { return "PyTorch"; }
};

class MindSporeLayout final : public RunUtLayout {
 public:
  const CsvRow& result_header() const override {
    // msprobe spells the first column differently in the two checkers.
    static const CsvRow h{"API Name", "Forward Test Success", "Backward Test Success", "Message"};
    return h;
  }
  const CsvRow& details_header() const override {
    static const CsvRow h = details_header_of(&MetricColumn::mindspore_header, "Tested Dtype");
    return h;
  }
  // A forward SKIP has no details row; a row with a status has at least one.
  bool result_has_details(std::optional<Status> forward) const override { return forward != Status::Skip; }
  bool result_row_per_api() const override { return false; }
  const char* name() const override { return "MindSpore"; }
};

}  // namespace

const RunUtLayout& run_ut_layout(Framework fw) {
  static const PyTorchLayout pytorch;
  static const MindSporeLayout mindspore;
  if (fw == Framework::MindSpore) return mindspore;
  return pytorch;
}

}  // namespace rut
}  // namespace probe
