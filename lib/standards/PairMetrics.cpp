// compare_pair: one kernel pass serves run_ut's row, the dump-compare cells and the MindSpore row.
#include <fmt/core.h>

#include <string>

#include "dump_compare/DumpCompareCells.h"
#include "metrics/RangeObserver.h"
#include "probe/api_name.h"
#include "probe/error.h"
#include "probe/error_bound.h"
#include "probe/pair_metrics.h"
#include "standards/ErrorBound.h"
#include "standards/ItemCompare.h"

namespace probe {

PairParts parse_pair_parts(std::string_view list) {
  PairParts parts = PairParts::run_ut_only();
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    const std::string_view item =
        list.substr(start, comma == std::string_view::npos ? list.npos : comma - start);
    if (item == "all")
      parts = PairParts::all();
    else if (item == "ulp")
      parts.ulp = true;
    else if (item == "dump")
      parts.dump_compare = true;
    else if (item == "mindspore")
      parts.mindspore = true;
    else if (item != "run_ut")
      throw Error(ErrorKind::InvalidArgument,
                  item.empty()
                      ? std::string("an empty item in the list of metric parts")
                      : fmt::format("unknown metric part '{}' (run_ut, ulp, dump, mindspore, all)", item),
                  std::string(list));
    if (comma == std::string_view::npos) return parts;
    start = comma + 1;
  }
}

namespace {

// D14's scan, handed each block of the metrics pass.
class BoundObserver final : public detail::RangeObserver {
 public:
  explicit BoundObserver(detail::ErrorBoundScan& scan) : scan_(scan) {}
  void start(int chunks) override { scan_.start(chunks); }
  void range(std::int64_t begin, std::int64_t end, int chunk) override { scan_.scan(begin, end, chunk); }

 private:
  detail::ErrorBoundScan& scan_;
};

// The pair's one metrics pass can carry an observer only where it runs (a non-empty, same-shape floating
// pair).
bool fusable(const Tensor& bench, const Tensor& device) {
  return is_floating(bench.dtype()) && is_floating(device.dtype()) && bench.shape() == device.shape() &&
         bench.numel() > 0;
}

PairMetrics compare_pair_observed(std::string_view api, const Tensor& bench, const Tensor& device,
                                  const Standards& cfg, const PairParts& parts,
                                  detail::RangeObserver* observer) {
  PairMetrics out;
  const Value bench_value(bench), device_value(device);
  if (!fusable(bench, device)) {
    out.row = compare_item(api, bench_value, device_value, cfg);
    if (parts.mindspore) out.mindspore = compare_mindspore(bench_value, device_value, cfg);
    return out;
  }
  const std::string device_dtype(torch_name(device.dtype()));
  if (cfg.new_standard_supported(device_dtype)) out.standard = cfg.standard_for(api, device_dtype);
  MetricParams params = cfg.metric_params(device.dtype());
  // compare_item needs the ULP metrics of an API judged by the ULP standard.
  params.compute_ulp = parts.ulp || out.standard == Standard::Ulp;
  const bool want_extra = parts.dump_compare || parts.mindspore;
  params.compute_extra = want_extra;
  // run_ut rounds a float64 bench to float32 when the device is bfloat16; dump compare and MindSpore keep
  // it in float64. Other pairs hold the same values either way, so one pass serves all.
  const bool bench_f64_device_bf16 = bench.dtype() == DType::Float64 && device.dtype() == DType::BFloat16;
  if (bench_f64_device_bf16) params.compute_extra = false;
  TensorMetrics m = detail::compute_metrics_observed(bench, device, params, observer);
  if (bench_f64_device_bf16 && want_extra) {
    MetricParams extra;
    extra.compute_ulp = false;
    extra.compute_run_ut = false;
    // Without the run_ut set the kernel keeps the float64 bench beside the bfloat16 device, reading both
    // in place (a second pass over the inputs, but no converted copy).
    const TensorMetrics e = compute_metrics(bench, device, extra);
    m.ms_cosine = e.ms_cosine;
    m.ms_max_abs = e.ms_max_abs;
    m.ms_max_rel = e.ms_max_rel;
    m.dump_inf_nan_mismatch = e.dump_inf_nan_mismatch;
    m.dump_cosine = e.dump_cosine;
    m.dump_euc = e.dump_euc;
    m.dump_max_abs = e.dump_max_abs;
    m.dump_max_rel = e.dump_max_rel;
    m.dump_one_thousandth = e.dump_one_thousandth;
    m.dump_five_thousandths = e.dump_five_thousandths;
    m.dump_norm_device = e.dump_norm_device;
    m.dump_norm_bench = e.dump_norm_bench;
  }
  out.row =
      detail::compare_item_traced(api, bench_value, device_value, cfg, false, std::nullopt, nullptr, &m);
  if (parts.dump_compare) out.dump = detail::dump_compare_cells(m, device, bench);
  if (parts.mindspore) out.mindspore = detail::mindspore_row(&m, cfg);
  out.metrics = std::move(m);
  return out;
}

}  // namespace

PairErrorBoundChoice choose_pair_error_bound(std::string_view api, Profile profile, const Tensor* magnitude,
                                             std::int64_t accumulation, std::size_t worst_count) {
  PairErrorBoundChoice c;
  // DECISIONS D14 decides in the probe profile only.
  if (profile != Profile::Probe) return c;
  const std::string d14_api = api.empty() ? std::string("elementwise") : std::string(api);
  const ErrorBoundSupport support = error_bound_support(d14_api);
  if (!support.covered) {
    c.why_not = "no error bound for " + d14_api + " (D14): run_ut's rule judged";
    return c;
  }
  if (support.needs_magnitude) {
    // The inputs are named as JudgeOptions names them; each caller's own spelling maps one to one.
    const bool no_magnitude = magnitude == nullptr, no_accumulation = accumulation < 1;
    if (no_magnitude || no_accumulation) {
      c.why_not = "the error bound of " + d14_api + " (" + support.family + " family) needs " +
                  (no_magnitude && no_accumulation ? "magnitude and accumulation"
                   : no_magnitude                  ? "magnitude"
                                                   : "accumulation") +
                  " (D14): run_ut's rule judged";
      return c;
    }
  }
  PairErrorBound& b = c.bound.emplace();
  b.api = d14_api;
  b.options.rule = JudgeRule::ErrorBound;
  b.options.accumulation = accumulation;
  b.options.worst_count = worst_count;
  if (magnitude) b.options.magnitude = magnitude->to(DType::Float64);
  return c;
}

PairMetrics compare_pair(std::string_view api, const Tensor& bench, const Tensor& device,
                         const Standards& cfg, const PairParts& parts) {
  return compare_pair_observed(api_list_name(api), bench, device, cfg, parts, nullptr);
}

PairMetrics compare_pair(std::string_view api_spelling, const Tensor& bench, const Tensor& device,
                         const Standards& cfg, const PairParts& parts, const PairErrorBound& bound) {
  // Every spelling of an API ("Functional.gelu", a dump key, "gelu") compares as its list name.
  const std::string api = api_list_name(api_spelling);
  const std::string bound_api = api_list_name(bound.api);
  const JudgeOptions& opt = bound.options;
  std::optional<detail::ErrorBoundCall> d14;
  if (fusable(bench, device) && !opt.reference)
    d14 = detail::error_bound_call(bound_api, bench, device.dtype(), cfg, opt);
  if (!d14) {
    PairMetrics out = compare_pair_observed(api, bench, device, cfg, parts, nullptr);
    out.error_bound = judge(bound_api, bench, device, cfg, device.dtype(), opt);
    return out;
  }
  detail::ErrorBoundScan scan(d14->family, bench, device, d14->magnitude, d14->accumulation, opt.worst_count);
  BoundObserver observer(scan);
  PairMetrics out = compare_pair_observed(api, bench, device, cfg, parts, &observer);
  out.error_bound = scan.finish();
  return out;
}

}  // namespace probe
