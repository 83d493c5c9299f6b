#include "precision_compare/Judge.h"

#include <array>
#include <cmath>
#include <limits>

#include "probe/metric_table.h"
#include "probe/number_format.h"
#include "standards/Rules.h"

namespace probe::precision_compare {

namespace {

const char* const kApiNameCol = "API Name";
const char* const kDeviceDtype = "DEVICE Dtype";
const char* const kShape = "Shape";
const char* const kMessageCol = "Message";
// The metrics (metric_table() ids) whose run_ut details columns this command reads, besides the benchmark
// standard's (kBenchmarkMetrics).
constexpr std::string_view kOtherMetrics[] = {"binary_err_rate", "inf_nan_err_ratio", "rel_err_ratio",
                                              "abs_err_ratio",   "ulp_mean",          "ulp_ratio",
                                              "thousandth"};

// The run_ut details column of a metric, named by the metric table.
std::string col(std::string_view metric_id) { return std::string(metric_pytorch_header(metric_id)); }

std::string fmt(double v) { return format_fixed(v, 14); }

constexpr Status kPass = Status::Pass, kError = Status::Error, kSkip = Status::Skip;

Status verdict(bool pass) { return pass ? kPass : kError; }

bool blank(const std::string& s) {
  // DECISIONS D11: msprobe calls str.isspace() on the pandas value, which throws for empty cells (NaN) and
  // for all-numeric columns; probe reads every cell as text, so an empty cell counts as blank and a number as
  // filled.
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f') return false;
  return true;
}

std::size_t need(const DetailsTable& t, const std::string& name, std::size_t row) {
  if (auto c = t.column(name)) return *c;
  // msprobe reads Shape/Message lazily; a missing one raises KeyError('<name>'), whose text becomes the
  // message.
  throw RowSkip{"'" + std::string(name) + "'", t.path(), t.row_number(row), name,
                "the " + t.role() + " details CSV has no column " + name};
}

double cell_float(const DetailsTable& t, std::size_t row, const std::string& name) {
  return t.to_float(row, need(t, name, row));
}

Status judge_binary(const DetailsTable& npu, std::size_t r, CsvRow& d) {
  std::size_t c = need(npu, col("binary_err_rate"), r);
  const Status status = verdict(binary_consistency_pass(npu.to_float(r, c)));
  d[kErrorRate] = npu.copied(r, c);
  RowFormat::set(d, kErrorRateStatus, status);
  RowFormat::set(d, kCompareResult, status);
  d[kAlgorithm] = standard_csv_name(Standard::BinaryConsistency);
  d[kMessage] = status == kError ? "ERROR: 二进制一致错误率超过阈值\n" : "";
  return status;
}

struct AbsoluteResult {
  double inf_nan, rel, abs;
  Status inf_nan_status, rel_status, abs_status;
  bool error;
};

AbsoluteResult absolute_result(const DetailsTable& npu, std::size_t r) {
  AbsoluteResult a{};
  a.inf_nan = cell_float(npu, r, col("inf_nan_err_ratio"));
  a.rel = cell_float(npu, r, col("rel_err_ratio"));
  a.abs = cell_float(npu, r, col("abs_err_ratio"));
  a.inf_nan_status = verdict(absolute_ratio_pass(a.inf_nan));
  a.rel_status = verdict(absolute_ratio_pass(a.rel));
  a.abs_status = verdict(absolute_ratio_pass(a.abs));
  a.error = !absolute_ratio_pass(a.inf_nan) || !absolute_ratio_pass(a.rel) || !absolute_ratio_pass(a.abs);
  return a;
}

void fill_absolute(const AbsoluteResult& a, CsvRow& d) {
  d[kInfNanRate] = fmt(a.inf_nan);
  RowFormat::set(d, kInfNanStatus, a.inf_nan_status);
  d[kRelErrRate] = fmt(a.rel);
  RowFormat::set(d, kRelErrStatus, a.rel_status);
  d[kAbsErrRate] = fmt(a.abs);
  RowFormat::set(d, kAbsErrStatus, a.abs_status);
}

Status judge_absolute(const DetailsTable& npu, std::size_t r, CsvRow& d) {
  AbsoluteResult a = absolute_result(npu, r);
  fill_absolute(a, d);
  const Status status = verdict(!a.error);
  RowFormat::set(d, kCompareResult, status);
  d[kAlgorithm] = standard_csv_name(Standard::AbsoluteThreshold);
  // HEAD joins these without separators (1.0.4 ended each with a newline).
  std::string msg;
  if (a.inf_nan_status == kError) msg += "ERROR: inf/nan错误率超过阈值";
  if (a.rel_status == kError) msg += "ERROR: 相对误差错误率超过阈值";
  if (a.abs_status == kError) msg += "ERROR: 绝对误差错误率超过阈值";
  d[kMessage] = msg;
  return status;
}

Status judge_accumulative(const Thresholds& t, const DetailsTable& npu, std::size_t r,
                          const std::string& dtype, CsvRow& d) {
  AbsoluteResult a = absolute_result(npu, r);
  double eb = cell_float(npu, r, col("error_balance"));
  const Status eb_status = verdict(accumulative_eb_pass(eb, t.eb_threshold(dtype)));
  fill_absolute(a, d);
  d[kEbRatio] = fmt(eb);
  RowFormat::set(d, kEbStatus, eb_status);
  const Status status = verdict(!a.error && eb_status != kError);
  RowFormat::set(d, kCompareResult, status);
  d[kAlgorithm] = standard_csv_name(Standard::Accumulative);
  std::vector<std::string> parts;
  if (a.inf_nan_status == kError) parts.push_back("ERROR: inf/nan错误率超过阈值\n");
  if (a.rel_status == kError) parts.push_back("ERROR: 相对误差错误率超过阈值\n");
  if (a.abs_status == kError) parts.push_back("ERROR: 绝对误差错误率超过阈值\n");
  if (eb_status == kError) parts.push_back("ERROR: 误差均衡性超过阈值\n");
  std::string msg;
  for (std::size_t i = 0; i < parts.size(); ++i) msg += (i ? "\n" : "") + parts[i];
  d[kMessage] = msg;
  return status;
}

Status judge_thousandth(const Thresholds& t, const DetailsTable& npu, std::size_t r, CsvRow& d) {
  std::size_t c = need(npu, col("thousandth"), r);
  const Status status = verdict(thousandth_pass(npu.to_float(r, c), t));
  d[kThousandth] = npu.copied(r, c);
  RowFormat::set(d, kThousandthStatus, status);
  RowFormat::set(d, kCompareResult, status);
  d[kAlgorithm] = standard_csv_name(Standard::Thousandth);
  d[kMessage] = status == kError ? "ERROR: 双千指标不达标\n" : "";
  return status;
}

Status judge_benchmark(const Thresholds& t, const DetailsTable& npu, std::size_t nr, const DetailsTable& gpu,
                       std::size_t gr, const std::string& dtype, CsvRow& d) {
  // Each metric's ratio and verdict columns follow the previous metric's, from 小值域错误比值 on.
  static_assert(kRmseRatio == kSmallRatio + 2 && kMaxRelRatio == kSmallRatio + 4 &&
                kMeanRelRatio == kSmallRatio + 6 && kEbRatio == kSmallRatio + 8 &&
                kSmallStatus == kSmallRatio + 1);
  const double min_err = t.min_err(dtype);
  std::array<Ratio, kBenchmarkMetrics.size()> ratios;
  for (std::size_t i = 0; i < kBenchmarkMetrics.size(); ++i) {
    const std::string column = col(kBenchmarkMetrics[i].id);
    const double x = cell_float(npu, nr, column);  // NPU first: its bad cell is the one reported
    const double y = cell_float(gpu, gr, column);
    ratios[i] = metric_ratio(x, y, min_err, column);
  }
  std::string msg;
  for (const auto& r : ratios) msg += r.message;
  bool error = false;
  std::string errors;
  for (std::size_t i = 0; i < kBenchmarkMetrics.size(); ++i) {
    const BenchmarkMetric& m = kBenchmarkMetrics[i];
    const auto ratio_col = static_cast<DetailCol>(kSmallRatio + 2 * i);
    const Ratio& r = ratios[i];
    const Status status = verdict(benchmark_metric_pass(r, t.*m.threshold));
    d[ratio_col] = fmt(r.value);
    RowFormat::set(d, static_cast<DetailCol>(ratio_col + 1), status);
    if (status == kError && m.decides) {
      error = true;
      // "ERROR: 均方根误差比值超过阈值\n": the ratio's column in this command's details file.
      errors += "ERROR: " + RowFormat::details_header()[ratio_col] + "超过阈值\n";
    }
  }
  const Status status = verdict(!error);
  RowFormat::set(d, kCompareResult, status);
  d[kAlgorithm] = standard_csv_name(Standard::Benchmark);
  d[kMessage] = msg + errors;
  return status;
}

Status judge_ulp(const Thresholds& t, const DetailsTable& npu, std::size_t nr, const DetailsTable& gpu,
                 std::size_t gr, const std::string& dtype, CsvRow& d) {
  static const std::string kUlpError = "ERROR: ULP误差不满足标准\n";
  d[kAlgorithm] = standard_csv_name(Standard::Ulp);
  if (t.fp8_dtypes.count(dtype)) {
    double p = cell_float(npu, nr, col("ulp_ratio"));
    const Status status = verdict(fp8_ulp_pass(p, t));
    d[kUlpProportion] = fmt(p);
    RowFormat::set(d, kUlpStatus, status);
    RowFormat::set(d, kCompareResult, status);
    d[kMessage] = status == kError ? kUlpError : "";
    return status;
  }
  const std::string mean_col = col("ulp_mean"), proportion_col = col("ulp_ratio");
  double m_npu = cell_float(npu, nr, mean_col);
  double m_gpu = cell_float(gpu, gr, mean_col);
  Ratio mean =
      metric_ratio(m_npu, m_gpu, 1.0, mean_col);  // only its consistency verdict and message are used
  double p_npu = cell_float(npu, nr, proportion_col);
  double p_gpu = cell_float(gpu, gr, proportion_col);
  Ratio prop = metric_ratio(p_npu, p_gpu, t.min_err(dtype), proportion_col);
  d[kMeanUlp] = fmt(m_npu);
  d[kUlpProportion] = fmt(p_npu);
  d[kUlpProportionRatio] = fmt(prop.value);
  std::string msg = mean.message + prop.message;
  if (!mean.consistent || !prop.consistent) {
    // HEAD leaves ULP误差判定结果 blank on this path.
    RowFormat::set(d, kCompareResult, kError);
    d[kMessage] = msg + kUlpError;
    return kError;
  }
  bool pass = ulp_pass(dtype == "torch.float32", m_npu, p_npu, prop.value, t);
  const Status status = verdict(pass);
  RowFormat::set(d, kUlpStatus, status);
  RowFormat::set(d, kCompareResult, status);
  d[kMessage] = pass ? msg : msg + kUlpError;
  return status;
}

}  // namespace

const std::vector<std::string>& required_columns() {
  static const std::vector<std::string> c = [] {
    std::vector<std::string> names{kApiNameCol, kDeviceDtype};
    for (const BenchmarkMetric& m : kBenchmarkMetrics) names.push_back(col(m.id));
    for (std::string_view id : kOtherMetrics) names.push_back(col(id));
    return names;
  }();
  return c;
}

Standard choose_algorithm(const Thresholds& t, const DetailsTable& npu, std::size_t row,
                          const std::string& api_name) {
  const std::string& out_dtype = npu.raw(row, *npu.column(kDeviceDtype));
  if (t.fp8_dtypes.count(out_dtype)) return Standard::Ulp;
  // msprobe infers an fp8 *input* from a filled 相对误差错误率 cell, so every row the absolute-threshold or
  // accumulative standard wrote in run_ut is judged here by the absolute threshold.
  if (!blank(npu.raw(row, *npu.column(col("rel_err_ratio"))))) return Standard::AbsoluteThreshold;
  if (!t.float_dtypes.count(out_dtype)) return Standard::BinaryConsistency;
  for (const auto& [algorithm, apis] : t.api_groups)
    if (apis.count(api_name)) return algorithm;
  return Standard::Benchmark;
}

Status judge_row(const Thresholds& t, const DetailsTable& npu, std::size_t nrow, const DetailsTable& gpu,
                 std::size_t grow, const std::string& api_name, CsvRow& detail) {
  const std::string& dtype = npu.raw(nrow, *npu.column(kDeviceDtype));
  // Short-circuits as in msprobe: Shape is only consulted for a supported, non-blank dtype.
  if (blank(dtype) || t.unsupported_dtypes.count(dtype) ||
      npu.raw(nrow, need(npu, kShape, nrow)) == t.zero_shape) {
    std::size_t mc = need(npu, kMessageCol, nrow);
    RowFormat::set(detail, kCompareResult, kSkip);
    // DECISIONS D11: pandas hands msprobe NaN for an empty Message, which it prints as "nan"; probe keeps it
    // empty.
    detail[kMessage] = npu.raw(nrow, mc);
    return kSkip;
  }
  CsvRow d = detail;
  Status status = kSkip;
  switch (choose_algorithm(t, npu, nrow, api_name)) {
    case Standard::BinaryConsistency:
      status = judge_binary(npu, nrow, d);
      break;
    case Standard::AbsoluteThreshold:
      status = judge_absolute(npu, nrow, d);
      break;
    case Standard::Accumulative:
      status = judge_accumulative(t, npu, nrow, dtype, d);
      break;
    case Standard::Thousandth:
      status = judge_thousandth(t, npu, nrow, d);
      break;
    case Standard::Benchmark:
      status = judge_benchmark(t, npu, nrow, gpu, grow, dtype, d);
      break;
    case Standard::Ulp:
      status = judge_ulp(t, npu, nrow, gpu, grow, dtype, d);
      break;
  }
  detail = std::move(d);
  return status;
}

}  // namespace probe::precision_compare
