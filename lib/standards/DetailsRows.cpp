// The two CSV headers output_compare.h declares, of run_ut's PyTorch checker (precheck.md §3.5), written
// from the metric table (a details row's cells are DetailRow::to_csv, OutputCompare.cpp).
#include "standards/DetailsRows.h"

#include "probe/output_compare.h"

namespace probe {

namespace detail {

CsvRow details_header_of(std::string_view MetricColumn::*header, const char* tested_dtype) {
  CsvRow h{"API Name", "Bench Dtype", tested_dtype, "Shape"};
  for (const MetricColumn& m : metric_table())
    if (!(m.*header).empty()) h.emplace_back(m.*header);
  h.insert(h.end(), {"Status", "Message"});
  return h;
}

}  // namespace detail

const CsvRow& details_csv_header() {
  static const CsvRow h = detail::details_header_of(&MetricColumn::pytorch_header, "DEVICE Dtype");
  return h;
}

const CsvRow& result_csv_header() {
  static const CsvRow h{"API name", "Forward Test Success", "Backward Test Success", "Message"};
  return h;
}

}  // namespace probe
