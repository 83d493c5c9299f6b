// probe::judge: run_ut's compare of one output, kept as a typed verdict instead of CSV cells. The old rule
// comes from the same code that fills run_ut's details rows (compare_item_traced); the precision standards
// apply api_precision_compare's decisions (standards/Rules.h) to the numbers of those rows.
#include "probe/judge.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>

#include "probe/api_name.h"
#include "probe/error.h"
#include "probe/metric_table.h"
#include "standards/ErrorBound.h"
#include "standards/ItemCompare.h"
#include "standards/Rules.h"
#include "standards/Thresholds.h"

namespace probe {
namespace {

namespace pc = precision_compare;

// api_precision_compare's constants for one profile, loaded once per process.
const pc::Thresholds& thresholds_for(Profile profile) {
  static std::mutex mutex;
  static std::map<Profile, pc::Thresholds> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(profile);
  if (it == cache.end())
    it = cache
             .emplace(profile,
                      pc::load_thresholds(pc::default_thresholds_file(), std::string(to_string(profile))))
             .first;
  return it->second;
}

// A details-row cell as api_precision_compare reads it back: the text run_ut writes (14 decimals or a
// float32 repr), parsed; nullopt for a blank cell. Judging these rather than the unrounded metrics keeps
// the in-memory verdict equal to the CSV one at every boundary.
std::optional<double> cell(const MetricValue& v) {
  if (!v.is_number()) return std::nullopt;
  const std::string text = v.format(14);
  return std::strtod(text.c_str(), nullptr);
}

struct UlpFormat {
  int mantissa_bits, min_exponent;
};
std::optional<UlpFormat> ulp_format(DType t) {
  switch (t) {
    case DType::Float16:
      return UlpFormat{10, -14};
    case DType::BFloat16:
      return UlpFormat{7, -126};
    case DType::Float32:
      return UlpFormat{23, -126};
    case DType::Float64:
      return UlpFormat{52, -1022};
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<double> detail::msprobe_ulp(double abs_err, double bench, DType device_dtype) {
  const std::optional<UlpFormat> fmt = ulp_format(device_dtype);
  if (!fmt) return std::nullopt;
  // The exponent of a zero bench is 0, floored at the smallest normal.
  int exponent = bench == 0 ? 0 : static_cast<int>(std::floor(std::log2(std::fabs(bench))));
  exponent = std::max(exponent, fmt->min_exponent);
  return std::ldexp(abs_err, fmt->mantissa_bits - exponent);
}

namespace {

std::vector<ElementError> worst_elements(const Tensor& bench, const Tensor& device, std::size_t count) {
  std::vector<ElementError> out;
  if (count == 0 || bench.shape() != device.shape() || bench.numel() == 0) return out;
  const std::vector<double> b = bench.to_doubles(), d = device.to_doubles();
  struct Ranked {
    double key;
    ElementError e;
  };
  std::vector<Ranked> heap;  // min-heap on key: the `count` largest errors seen so far
  auto later = [](const Ranked& x, const Ranked& y) { return x.key > y.key; };
  for (std::size_t i = 0; i < b.size(); ++i) {
    const double bi = b[i], di = d[i];
    if (di == bi || (std::isnan(di) && std::isnan(bi))) continue;
    ElementError e;
    e.index = static_cast<std::int64_t>(i);
    e.bench = bi;
    e.device = di;
    e.abs_err = std::fabs(di - bi);
    e.rel_err = bi == 0 ? std::numeric_limits<double>::infinity() : e.abs_err / std::fabs(bi);
    const bool finite_pair = std::isfinite(bi) && std::isfinite(di);
    if (finite_pair) e.ulp = detail::msprobe_ulp(e.abs_err, bi, device.dtype());
    const double key = !finite_pair ? std::numeric_limits<double>::infinity() : e.ulp ? *e.ulp : e.rel_err;
    if (heap.size() < count) {
      heap.push_back({key, e});
      std::push_heap(heap.begin(), heap.end(), later);
    } else if (key > heap.front().key) {
      std::pop_heap(heap.begin(), heap.end(), later);
      heap.back() = {key, e};
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }
  std::sort(heap.begin(), heap.end(), [](const Ranked& x, const Ranked& y) {
    return x.key != y.key ? x.key > y.key : x.e.index < y.e.index;
  });
  for (auto& r : heap) {
    r.e.coords = detail::unravel_index(r.e.index, bench.shape());
    out.push_back(std::move(r.e));
  }
  return out;
}

// The DetailRow field metric `id` fills (its row of the metric table).
MetricValue DetailRow::*details_column(std::string_view id) {
  for (const MetricColumn& m : metric_table())
    if (m.id == id) return m.column;
  throw Error(ErrorKind::Internal, "no metric '" + std::string(id) + "' in the metric table");
}

Criterion criterion(std::string name, double value, std::string_view op, double threshold, bool pass,
                    bool decides = true) {
  return {std::move(name), value, op, threshold, pass, decides};
}

// §4.2 as api_precision_compare applies it to a run_ut row (precision_compare/Judge.cpp choose_algorithm).
Standard row_standard(const pc::Thresholds& t, const DetailRow& row, std::string_view api,
                      const Standards& cfg, std::optional<Standard> forced) {
  if (t.fp8_dtypes.count(row.device_dtype)) return Standard::Ulp;
  // A filled 相对误差错误率 reads as an fp8 input, so accumulative rows are judged by the absolute threshold.
  if (!row.rel_err_ratio.is_blank()) return Standard::AbsoluteThreshold;
  if (!t.float_dtypes.count(row.device_dtype)) return Standard::BinaryConsistency;
  return forced ? *forced : cfg.standard_for(api, row.device_dtype);
}

void skip(Verdict& v, std::string message) {
  v.status = Status::Skip;
  v.method = Method::NotCompared;
  v.standard.reset();
  v.criteria.clear();
  v.message = std::move(message);
}

void judge_precision_standard(std::string_view api, const Tensor& bench, const Tensor& device,
                              const Standards& cfg, const JudgeOptions& opt, const DetailRow& row,
                              Verdict& v) {
  const pc::Thresholds& t = thresholds_for(cfg.profile());
  v.message = row.message;
  if (row.device_dtype == " " || t.unsupported_dtypes.count(row.device_dtype) || row.shape == t.zero_shape)
    return skip(v, row.message);
  const Standard standard = row_standard(t, row, api, cfg, opt.standard);
  v.standard = standard;
  v.message.clear();
  const std::string& dtype = row.device_dtype;
  // api_precision_compare cannot read a blank metric cell (structural errors leave them blank).
  const std::string kEmpty = "ERROR: Input data is an empty string";
  auto need = [&](const MetricValue& m) -> std::optional<double> { return cell(m); };
  auto fail_all = [](const std::vector<Criterion>& cs) {
    return std::any_of(cs.begin(), cs.end(), [](const Criterion& c) { return c.decides && !c.pass; });
  };
  switch (standard) {
    case Standard::BinaryConsistency: {
      v.method = Method::BinaryConsistency;
      auto rate = need(row.binary_err_rate);
      if (!rate) return skip(v, kEmpty);
      v.criteria.push_back(
          criterion("binary error rate", *rate, "==", 0, pc::binary_consistency_pass(*rate)));
      break;
    }
    case Standard::AbsoluteThreshold:
    case Standard::Accumulative: {
      v.method = Method::AbsoluteThreshold;
      v.standard = Standard::AbsoluteThreshold;
      auto inf_nan = need(row.inf_nan_err_ratio), rel = need(row.rel_err_ratio),
           abs = need(row.abs_err_ratio);
      if (!inf_nan || !rel || !abs) return skip(v, kEmpty);
      v.criteria.push_back(
          criterion("inf/nan error ratio", *inf_nan, "==", 0, pc::absolute_ratio_pass(*inf_nan)));
      v.criteria.push_back(criterion("relative error ratio", *rel, "==", 0, pc::absolute_ratio_pass(*rel)));
      v.criteria.push_back(criterion("absolute error ratio", *abs, "==", 0, pc::absolute_ratio_pass(*abs)));
      break;
    }
    case Standard::Thousandth: {
      v.method = Method::Thousandth;
      auto th = need(row.thousandth);
      if (!th) return skip(v, kEmpty);
      v.criteria.push_back(criterion("thousandth (share with rel. error < 0.001)", *th,
                                     ">=", t.thousandth_pass, pc::thousandth_pass(*th, t)));
      break;
    }
    case Standard::Benchmark:
    case Standard::Ulp: {
      v.method = standard == Standard::Ulp ? Method::Ulp : Method::Benchmark;
      if (standard == Standard::Ulp && t.fp8_dtypes.count(dtype)) {
        auto p = need(row.ulp_ratio);
        if (!p) return skip(v, kEmpty);
        v.criteria.push_back(criterion("ulp proportion (share above 1 ulp)", *p, "<", t.ulp_low_proportion,
                                       pc::fp8_ulp_pass(*p, t)));
        break;
      }
      // The second device: the caller's reference, else the correctly rounded result.
      const Tensor reference = opt.reference ? opt.reference->to(device.dtype()) : bench.to(device.dtype());
      const DetailRow ref_row = detail::compare_item_traced(api, Value(bench), Value(reference), cfg,
                                                            opt.fp8_input, opt.standard, nullptr);
      const double min_err = t.min_err(dtype);
      if (standard == Standard::Benchmark) {
        for (const pc::BenchmarkMetric& m : pc::kBenchmarkMetrics) {
          const MetricValue DetailRow::*column = details_column(m.id);
          auto x = need(row.*column), y = need(ref_row.*column);
          if (!x || !y) return skip(v, kEmpty);
          const pc::Ratio r = pc::metric_ratio(*x, *y, min_err, metric_pytorch_header(m.id));
          v.message += r.message;
          const double threshold = t.*m.threshold;
          v.criteria.push_back(criterion(std::string(m.criterion), r.value, "<=", threshold,
                                         pc::benchmark_metric_pass(r, threshold), m.decides));
        }
        break;
      }
      auto m_npu = need(row.ulp_mean), m_ref = need(ref_row.ulp_mean), p_npu = need(row.ulp_ratio),
           p_ref = need(ref_row.ulp_ratio);
      if (!m_npu || !m_ref || !p_npu || !p_ref) return skip(v, kEmpty);
      const pc::Ratio mean = pc::metric_ratio(*m_npu, *m_ref, 1.0, metric_pytorch_header("ulp_mean"));
      const pc::Ratio prop = pc::metric_ratio(*p_npu, *p_ref, min_err, metric_pytorch_header("ulp_ratio"));
      v.message = mean.message + prop.message;
      const bool fp32 = dtype == "torch.float32";
      v.pass_if_any = true;
      if (fp32)
        v.criteria.push_back(
            criterion("mean ulp error", *m_npu, "<", t.ulp_fp32_mean, *m_npu < t.ulp_fp32_mean));
      const double p_limit = fp32 ? t.ulp_fp32_proportion : t.ulp_low_proportion;
      v.criteria.push_back(
          criterion(fp32 ? "ulp proportion (share above 32 ulp)" : "ulp proportion (share above 1 ulp)",
                    *p_npu, "<", p_limit, *p_npu < p_limit));
      v.criteria.push_back(criterion("ulp proportion / reference", prop.value, "<", t.ulp_proportion_ratio,
                                     prop.value < t.ulp_proportion_ratio));
      if (!mean.consistent || !prop.consistent) {
        // An inf/nan on one device only fails whatever the proportions say.
        for (auto& c : v.criteria) c.pass = false;
        v.status = Status::Error;
        return;
      }
      v.status = pc::ulp_pass(fp32, *m_npu, *p_npu, prop.value, t) ? Status::Pass : Status::Error;
      return;
    }
  }
  v.status = fail_all(v.criteria) ? Status::Error : Status::Pass;
}

}  // namespace

std::string_view to_string(Method m) noexcept {
  switch (m) {
    case Method::NotCompared:
      return "not compared";
    case Method::OldRule:
      return "old rule";
    case Method::ExactMatch:
      return "exact match";
    case Method::Benchmark:
      return "benchmark";
    case Method::AbsoluteThreshold:
      return "absolute threshold";
    case Method::BinaryConsistency:
      return "binary consistency";
    case Method::Ulp:
      return "ulp";
    case Method::Thousandth:
      return "thousandth";
    case Method::Accumulative:
      return "accumulative";
    case Method::ErrorBound:
      break;
  }
  return "error bound";
}

namespace detail {

std::optional<ErrorBoundCall> error_bound_call(std::string_view api, const Tensor& bench, DType device_dtype,
                                               const Standards& cfg, const JudgeOptions& opt) {
  JudgeRule rule = opt.rule;
  if (rule == JudgeRule::Default)
    rule = cfg.profile() == Profile::Probe ? JudgeRule::ErrorBound : JudgeRule::RunUt;
  const BoundFamily* family =
      rule == JudgeRule::ErrorBound && is_floating(device_dtype) && is_floating(bench.dtype())
          ? bound_family(api)
          : nullptr;
  if (!family) return std::nullopt;
  const bool accumulates = takes_magnitude(family->magnitude);
  if (accumulates && (!opt.magnitude || opt.accumulation < 1))
    throw Error(ErrorKind::InvalidArgument,
                "the " + std::string(family->name) +
                    " family's error bound needs the magnitude bench and the accumulation length "
                    "(probe::error_bound_magnitude, probe::error_bound_accumulation)",
                "", opt.magnitude ? "accumulation" : "magnitude", std::string(api));
  std::int64_t k = opt.accumulation;
  if (k < 1) k = accumulation_length(*family, {bench.shape()}, bench.shape());
  ErrorBoundCall call{*family, accumulates ? &*opt.magnitude : nullptr, k};
  // DECISIONS D25: a Python number exact in the output dtype is not rounded when torch casts it.
  if (opt.exact_scalars) call.family.scalar_operand = false;
  return call;
}

}  // namespace detail

Verdict judge(std::string_view api_spelling, const Tensor& bench, const Tensor& device_in,
              const Standards& cfg, DType device_dtype, const JudgeOptions& opt) {
  // Every spelling of an API ("Torch.matmul", a dump key, "matmul") judges as its list name.
  const std::string list_name = api_list_name(api_spelling);
  const std::string_view api = list_name;
  const Tensor device = device_in.dtype() == device_dtype ? device_in : device_in.to(device_dtype);
  if (opt.reference && opt.reference->shape() != bench.shape())
    throw Error(ErrorKind::InvalidArgument,
                "the reference output has shape " + shape_to_string(opt.reference->shape()) + ", the bench " +
                    shape_to_string(bench.shape()),
                "", "reference", std::string(api));
  JudgeRule rule = opt.rule;
  if (rule == JudgeRule::Default)
    rule = cfg.profile() == Profile::Probe ? JudgeRule::ErrorBound : JudgeRule::RunUt;
  if (const std::optional<detail::ErrorBoundCall> d14 =
          detail::error_bound_call(api, bench, device_dtype, cfg, opt))
    return detail::error_bound_verdict(d14->family, bench, device, d14->magnitude, d14->accumulation,
                                       opt.worst_count);
  detail::ItemTrace trace;
  const DetailRow row =
      detail::compare_item_traced(api, Value(bench), Value(device), cfg, opt.fp8_input, opt.standard, &trace);
  Verdict v;
  if (rule == JudgeRule::ErrorBound) {
    // No D14 family: run_ut's rule judges, and the message says so.
    v.status = row.status;
    v.method = trace.method;
    v.criteria = std::move(trace.criteria);
    v.message = "no error bound for this API (D14): run_ut's rule judged" +
                (row.message.empty() ? std::string() : ": " + row.message);
  } else if (rule == JudgeRule::RunUt) {
    v.status = row.status;
    v.method = trace.method;
    v.criteria = std::move(trace.criteria);
    v.message = row.message;
  } else {
    judge_precision_standard(api, bench, device, cfg, opt, row, v);
  }
  if (v.method != Method::NotCompared) v.worst = worst_elements(bench, device, opt.worst_count);
  return v;
}

}  // namespace probe
