// The metric table (include/probe/metric_table.h) against msprobe's own details CSV: the header row of
// msprobe HEAD's accuracy_checking_details file (conformance data) names every metric column, in order.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "probe/csv.h"
#include "probe/error.h"
#include "probe/metric_table.h"
#include "probe/metrics.h"
#include "probe/output_compare.h"

namespace {

const std::filesystem::path kMsprobeDetails = std::filesystem::path(PROBE_CONFORMANCE_DIR) / "msprobe_e2e" /
                                              "head" / "npu_accuracy_checking_details_20250101000000.csv";

// msprobe's header minus the leading "API Name, Bench Dtype, DEVICE Dtype, Shape" and the trailing
// "Status, Message": the metric columns.
std::vector<std::string> msprobe_metric_columns() {
  const std::vector<probe::CsvRow> rows = probe::csv_read_file(kMsprobeDetails.string());
  std::vector<std::string> header = rows.at(0);
  EXPECT_EQ(header.at(3), "Shape");
  EXPECT_EQ(header.at(header.size() - 2), "Status");
  return {header.begin() + 4, header.end() - 2};
}

TEST(MetricTable, PytorchColumnsAreMsprobesInOrder) {
  std::vector<std::string> from_table;
  for (const probe::MetricColumn& m : probe::metric_table())
    if (!m.pytorch_header.empty()) from_table.emplace_back(m.pytorch_header);
  EXPECT_EQ(from_table, msprobe_metric_columns());
}

TEST(MetricTable, DetailsHeaderIsBuiltFromTheTable) {
  const probe::CsvRow& header = probe::details_csv_header();
  const std::vector<std::string> columns = msprobe_metric_columns();
  ASSERT_EQ(header.size(), columns.size() + 6);
  EXPECT_TRUE(std::equal(columns.begin(), columns.end(), header.begin() + 4));
}

TEST(MetricTable, IdsAreUniqueAndEachColumnIsFilledOnceByAMetricOfItsOwn) {
  using Column = probe::MetricValue probe::DetailRow::*;
  std::set<std::string_view> ids;
  std::vector<Column> own_columns;  // member pointers have no order: a vector, searched
  auto has = [&](Column c) {
    return std::find(own_columns.begin(), own_columns.end(), c) != own_columns.end();
  };
  for (const probe::MetricColumn& m : probe::metric_table()) {
    EXPECT_TRUE(ids.insert(m.id).second) << m.id;
    if (m.pytorch_header.empty()) continue;
    EXPECT_FALSE(has(m.column)) << m.id;
    own_columns.push_back(m.column);
  }
  // The accumulative standard's three ratios share the absolute threshold's columns.
  for (const probe::MetricColumn& m : probe::metric_table()) {
    if (m.pytorch_header.empty()) {
      EXPECT_TRUE(has(m.column)) << m.id;
    }
  }
  EXPECT_EQ(ids.size(), 20u);
}

TEST(MetricTable, ReportingStandardsFollowPrecheckSection41) {
  auto find = [](std::string_view id) {
    for (const probe::MetricColumn& m : probe::metric_table())
      if (m.id == id) return m;
    throw probe::Error(probe::ErrorKind::Internal, std::string("no metric ") + std::string(id));
  };
  EXPECT_TRUE(find("rmse").reported_by(probe::Standard::Benchmark));
  EXPECT_FALSE(find("rmse").reported_by(probe::Standard::AbsoluteThreshold));
  EXPECT_TRUE(find("error_balance").reported_by(probe::Standard::Accumulative));
  EXPECT_TRUE(find("ulp_ratio").reported_by(probe::Standard::Ulp));
  // The old rule's columns are reported by no new standard except the thousandth one.
  EXPECT_FALSE(find("cosine").reported_by(probe::Standard::Benchmark));
  EXPECT_TRUE(find("thousandth").reported_by(probe::Standard::Thousandth));
}

TEST(MetricTable, PytorchHeaderLookup) {
  EXPECT_EQ(probe::metric_pytorch_header("rmse"), "均方根误差");
  EXPECT_EQ(probe::metric_pytorch_header("cosine"), "余弦相似度");
  EXPECT_THROW(probe::metric_pytorch_header("acc_rel_err_ratio"), probe::Error);  // shares a column
  EXPECT_THROW(probe::metric_pytorch_header("no_such_metric"), probe::Error);
}

}  // namespace
