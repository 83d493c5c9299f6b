// Dump-compare metrics (msprobe `compare`, dump-and-compare.md §3.6 and §3.8) on top of the fused kernel.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "dump_compare/DumpCompareCells.h"
#include "dump_compare/DumpVerdicts.h"
#include "probe/metrics.h"
#include "probe/number_format.h"

namespace probe {
namespace {

constexpr double kEps = 2.220446049250313e-16;

// Python float(f"{v:.{d}f}").
double round_text(double v, int decimals) {
  if (!std::isfinite(v)) return v;
  return std::strtod(fmt::format("{:.{}f}", v, decimals).c_str(), nullptr);
}

// msprobe reads bfloat16 as float32: the kernel's dump-compare pass reads bfloat16 in place, exactly.
Tensor as_comparable(const Tensor& t) {
  if (!is_floating(t.dtype())) return t.to(DType::Float64);
  return t;
}

}  // namespace

DumpCompareResult dump_compare(const Tensor& npu, const Tensor& bench) {
  DumpCompareResult r;
  auto all = [&](const MetricValue& v) {
    r.cosine = r.euc_dist = r.max_abs = r.max_rel = r.one_thousandth = r.five_thousandths = v;
  };
  if (npu.numel() == 0) {
    all(MetricValue::str("unsupported"));
    r.message = "This is empty data, can not compare.";
    return r;
  }
  if (npu.shape() != bench.shape()) {
    all(MetricValue::str("shape unmatched"));
    r.message = "Shape of NPU and bench tensor do not match. Skipped.";
    return r;
  }
  if (is_complex(npu.dtype()) || is_complex(bench.dtype())) {
    all(MetricValue::str("unsupported"));
    r.message = "Data is unreadable.";
    return r;
  }
  MetricParams p;
  p.compute_ulp = false;
  p.compute_extra = true;
  p.compute_run_ut = false;  // only the dump-compare statistics: a lighter pass, no compacted-mean pass
  return detail::dump_compare_cells(compute_metrics(as_comparable(bench), as_comparable(npu), p), npu, bench);
}

DumpCompareResult detail::dump_compare_cells(const TensorMetrics& m, const Tensor& npu, const Tensor& bench) {
  DumpCompareResult r;
  auto all = [&](const MetricValue& v) {
    r.cosine = r.euc_dist = r.max_abs = r.max_rel = r.one_thousandth = r.five_thousandths = v;
  };
  if (m.dump_inf_nan_mismatch) {
    all(MetricValue::str("N/A"));
    r.message = "The position of inf or nan in NPU and bench Tensor do not match.";
    return r;
  }
  if (npu.dtype() != bench.dtype()) r.message += "Dtype of NPU and bench tensor do not match.";
  const bool zero_d = npu.ndim() == 0;
  if (zero_d || npu.numel() == 1) {
    r.cosine = MetricValue::str("unsupported");
    if (!zero_d) r.message += "This is a 1-d tensor of length 1.";
  } else if (m.dump_norm_device <= kEps && m.dump_norm_bench <= kEps) {
    r.cosine = MetricValue::f64(1.0);
  } else if (m.dump_norm_device <= kEps) {
    r.cosine = MetricValue::str("Nan");
    r.message += "Cannot compare by Cosine Similarity, All the data is Zero in npu dump data.";
  } else if (m.dump_norm_bench <= kEps) {
    r.cosine = MetricValue::str("Nan");
    r.message += "Cannot compare by Cosine Similarity, All the data is Zero in Bench dump data.";
  } else if (std::isnan(m.dump_cosine)) {
    r.cosine = MetricValue::str("Nan");
    r.message += "Cannot compare by Cosine Similarity, the dump data has NaN.";
  } else {
    double c = round_text(m.dump_cosine, 12);
    if (c > 0.9999) c = round_text(c, 6);
    r.cosine = MetricValue::f64(c);
  }
  if (zero_d) {
    r.euc_dist = r.one_thousandth = r.five_thousandths = MetricValue::str("unsupported");
    r.message +=
        "This is type of 0-d tensor, can not calculate 'Cosine', 'EucDist', 'One Thousandth Err Ratio' "
        "and 'Five Thousandths Err Ratio'. ";
  } else {
    r.euc_dist = MetricValue::f64(m.dump_euc);
    r.one_thousandth = MetricValue::f64(round_text(m.dump_one_thousandth, 12));
    r.five_thousandths = MetricValue::f64(round_text(m.dump_five_thousandths, 12));
  }
  if (std::isnan(m.dump_max_abs)) {
    r.max_abs = MetricValue::str("Nan");
    r.message += "Cannot compare by MaxAbsError, the data contains nan/inf/-inf in dump data.";
  } else {
    r.max_abs = MetricValue::f64(round_text(m.dump_max_abs, 12));
  }
  if (std::isnan(m.dump_max_rel)) {
    r.max_rel = MetricValue::str("Nan");
    r.message += "Cannot compare by MaxRelativeError, the data contains nan/inf/-inf in dump data.";
  } else {
    r.max_rel = MetricValue::f64(round_text(m.dump_max_rel, 12));
  }
  return r;
}

std::string_view to_string(AccuracyReached reached) noexcept {
  switch (reached) {
    case AccuracyReached::Yes:
      return "Yes";
    case AccuracyReached::No:
      return "No";
    case AccuracyReached::None:
      return "None";
    case AccuracyReached::Unmatched:
      return "Unmatched";
  }
  return "None";
}

AccuracyReached dump_accuracy_reached(const MetricValue& cosine, const MetricValue& max_abs) {
  return detail::dump_accuracy_reached(cosine, max_abs, DumpCompareThresholds{});
}

AccuracyReached detail::dump_accuracy_reached(const MetricValue& cosine, const MetricValue& max_abs,
                                              const DumpCompareThresholds& t) {
  if (cosine.kind == MetricKind::Text && cosine.text == "shape unmatched") return AccuracyReached::Unmatched;
  auto is_text = [](const MetricValue& v, const char* s) {
    return v.kind == MetricKind::Text && v.text == s;
  };
  if (is_text(cosine, "None") || is_text(max_abs, "None")) return AccuracyReached::None;
  if (is_text(cosine, "N/A") || is_text(max_abs, "N/A")) return AccuracyReached::No;
  // Python float() accepts "Nan" (NaN) but not "unsupported".
  auto to_num = [](const MetricValue& v, double& out) {
    if (v.is_number()) {
      out = v.value;
      return true;
    }
    if (v.kind == MetricKind::Text && (v.text == "Nan" || v.text == "nan")) {
      out = NAN;
      return true;
    }
    return false;
  };
  double c, a;
  if (!to_num(cosine, c) || !to_num(max_abs, a)) return AccuracyReached::None;
  if (c < t.cosine && a > t.max_abs) return AccuracyReached::No;
  if (c < t.cosine_floor || a > t.max_abs_ceiling) return AccuracyReached::No;
  return AccuracyReached::Yes;
}

StatDiff statistics_diff(std::optional<double> npu, std::optional<double> bench) {
  return detail::statistics_diff(npu, bench, DumpCompareThresholds{}.statistics_warning);
}

StatDiff detail::statistics_diff(std::optional<double> npu, std::optional<double> bench,
                                 double warning_ratio) {
  StatDiff s;
  if (!npu || !bench) {
    s.diff = s.relative = MetricValue::str("N/A");
    return s;
  }
  double diff = *npu - *bench;
  if (std::isnan(diff)) {
    s.diff = s.relative = MetricValue::str("Nan");
    return s;
  }
  s.diff = MetricValue::f64(diff);
  if (*bench == 0)
    s.relative = MetricValue::str("N/A");
  else
    s.relative = MetricValue::str(python_repr(std::fabs(diff / *bench * 100)) + "%");
  double mx = std::fmax(*npu, *bench);
  if (std::isnan(*npu) || std::isnan(*bench)) mx = NAN;  // Python max() keeps the first NaN-ish order
  s.warning = std::fabs(diff) / (std::fabs(mx) + 1e-10) > warning_ratio;
  return s;
}

}  // namespace probe
