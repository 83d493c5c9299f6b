// The layouts of run_ut's two checkers (precheck.md §3.5 PyTorch, §7.3 MindSpore): their headers and row
// rules, what reading the files back needs apart from RowFormat.cpp's rows. PyTorch's headers are
// output_compare.h's (lib/standards/DetailsRows.cpp).
#include "probe/metric_table.h"
#include "probe/output_compare.h"
#include "run_ut/RowFormat.h"
#include "standards/DetailsRows.h"

namespace probe {
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
    static const CsvRow h = detail::details_header_of(&MetricColumn::mindspore_header, "Tested Dtype");
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
