#include "precision_compare/RowFormat.h"

namespace probe::precision_compare {

const CsvRow& RowFormat::details_header() {
  static const CsvRow h{"API Name",
                        "小值域错误比值",
                        "小值域判定结果",
                        "均方根误差比值",
                        "均方根误差判定结果",
                        "相对误差最大值比值",
                        "相对误差最大值判定结果",
                        "相对误差平均值比值",
                        "相对误差平均值判定结果",
                        "误差均衡性比值",
                        "误差均衡性判定结果",
                        "inf/nan错误率",
                        "inf/nan判定结果",
                        "相对误差错误率",
                        "相对误差判定结果",
                        "绝对误差错误率",
                        "绝对误差判定结果",
                        "二进制一致错误率",
                        "二进制一致错误率判定结果",
                        "ULP误差平均值",
                        "ULP误差大于阈值占比",
                        "ULP误差大于阈值占比比值",
                        "ULP误差判定结果",
                        "双千指标",
                        "双千指标判定结果",
                        "比对结果",
                        "比对算法",
                        "Message"};
  return h;
}

const CsvRow& RowFormat::result_header() {
  static const CsvRow h{"API Name", "Forward Test Success", "Backward Test Success", "Message"};
  return h;
}

CsvRow RowFormat::details_row(const std::string& api) {
  CsvRow row(kDetailColumns, kSpace);
  row[kApiName] = api;
  return row;
}

CsvRow RowFormat::skip_details_row(const std::string& api, const std::string& message) {
  CsvRow row = details_row(api);
  set(row, kCompareResult, Status::Skip);
  row[kMessage] = message;
  return row;
}

CsvRow RowFormat::result_cells(const ResultRow& row) {
  auto cell = [](const std::optional<Status>& s) { return std::string(s ? to_string(*s) : kSpace); };
  return {row.api, cell(row.forward), cell(row.backward), row.message};
}

}  // namespace probe::precision_compare
