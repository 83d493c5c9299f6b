// The metric table (include/probe/metric_table.h): the one list of run_ut's per-output metrics.
#include <array>
#include <initializer_list>
#include <string>

#include "probe/error.h"
#include "probe/metric_table.h"

namespace probe {
namespace {

constexpr std::uint32_t by(std::initializer_list<Standard> standards) {
  std::uint32_t bits = 0;
  for (Standard s : standards) bits |= 1u << static_cast<unsigned>(s);
  return bits;
}

using TM = TensorMetrics;
using DR = DetailRow;
using S = Standard;

// Columns and their order: precheck.md §3.5 (PyTorch details) and §7.3 (MindSpore); reporting standards:
// §4.1.
constexpr std::array<MetricColumn, 20> kTable{{
    {"cosine", "余弦相似度", "Cosine", &TM::cosine, &DR::cosine, 0},
    {"max_abs_err", "最大绝对误差", "MaxAbsErr", &TM::max_abs_err, &DR::max_abs, 0},
    {"hundredth", "双百指标", "", &TM::hundredth, &DR::hundredth, 0},
    {"thousandth", "双千指标", "", &TM::thousandth, &DR::thousandth, by({S::Thousandth})},
    {"ten_thousandth", "双万指标", "", &TM::ten_thousandth, &DR::ten_thousandth, 0},
    {"binary_err_rate", "二进制一致错误率", "", &TM::binary_err_rate, &DR::binary_err_rate,
     by({S::BinaryConsistency})},
    {"error_balance", "误差均衡性", "", &TM::error_balance, &DR::error_balance,
     by({S::Benchmark, S::Accumulative})},
    {"rmse", "均方根误差", "", &TM::rmse, &DR::rmse, by({S::Benchmark})},
    {"small_value_err_ratio", "小值域错误占比", "", &TM::small_value_err_ratio, &DR::small_value_err_ratio,
     by({S::Benchmark})},
    {"max_rel_err", "相对误差最大值", "MaxRelativeErr", &TM::max_rel_err, &DR::max_rel_err,
     by({S::Benchmark})},
    {"mean_rel_err", "相对误差平均值", "", &TM::mean_rel_err, &DR::mean_rel_err, by({S::Benchmark})},
    {"inf_nan_err_ratio", "inf/nan错误率", "", &TM::inf_nan_err_ratio, &DR::inf_nan_err_ratio,
     by({S::AbsoluteThreshold})},
    {"rel_err_ratio", "相对误差错误率", "", &TM::rel_err_ratio, &DR::rel_err_ratio,
     by({S::AbsoluteThreshold})},
    {"abs_err_ratio", "绝对误差错误率", "", &TM::abs_err_ratio, &DR::abs_err_ratio,
     by({S::AbsoluteThreshold})},
    {"acc_inf_nan_err_ratio", "", "", &TM::acc_inf_nan_err_ratio, &DR::inf_nan_err_ratio,
     by({S::Accumulative})},
    {"acc_rel_err_ratio", "", "", &TM::acc_rel_err_ratio, &DR::rel_err_ratio, by({S::Accumulative})},
    {"acc_abs_err_ratio", "", "", &TM::acc_abs_err_ratio, &DR::abs_err_ratio, by({S::Accumulative})},
    {"ulp_max", "ULP误差最大值", "", &TM::ulp_max, &DR::ulp_max, by({S::Ulp})},
    {"ulp_mean", "ULP误差平均值", "", &TM::ulp_mean, &DR::ulp_mean, by({S::Ulp})},
    {"ulp_ratio", "ULP误差大于阈值占比", "", &TM::ulp_ratio, &DR::ulp_ratio, by({S::Ulp})},
}};

}  // namespace

std::span<const MetricColumn> metric_table() noexcept { return kTable; }

std::string_view metric_pytorch_header(std::string_view id) {
  for (const MetricColumn& m : kTable)
    if (m.id == id && !m.pytorch_header.empty()) return m.pytorch_header;
  throw Error(ErrorKind::InvalidArgument, "no details column for metric '" + std::string(id) + "'");
}

}  // namespace probe
