// probe._probe: the compiled half of the Python module `probe`, over libprobe's public API only
// (include/probe/). Arrays reach libprobe without a copy: a C-contiguous numpy buffer (buffer protocol)
// or a CPU torch tensor (data_ptr) becomes a probe::Tensor over a borrowed Storage. Long calls release the
// GIL and take it back only to call Python (progress callbacks, Python runners).
#include <fmt/format.h>
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "Convert.h"
#include "Keywords.h"
#include "Runners.h"
#include "probe/error.h"
#include "probe/judge.h"
#include "probe/metric_table.h"
#include "probe/pair_metrics.h"
#include "probe/precision_standard.h"
#include "probe/tensor.h"

namespace py = pybind11;

namespace probe::python {

py::object metric_value(const MetricValue& v) {
  switch (v.kind) {
    case MetricKind::Blank:
      return py::none();
    case MetricKind::Integer:
      return py::int_(static_cast<long long>(v.value));
    case MetricKind::Text:
      return py::str(v.text);
    default:
      return py::float_(v.value);
  }
}

py::dict verdict_dict(const Verdict& v) {
  using C = Criterion;
  using E = ElementError;
  py::list criteria, worst;
  for (const C& c : v.criteria)
    criteria.append(fields_dict(c, {{"name", &C::name},
                                    {"value", &C::value},
                                    {"op", [](const C& x) { return std::string(x.op); }},
                                    {"threshold", &C::threshold},
                                    {"passed", &C::pass},
                                    {"decides", &C::decides}}));
  for (const E& e : v.worst)
    worst.append(fields_dict(e, {{"index", &E::index},
                                 {"bench", &E::bench},
                                 {"device", &E::device},
                                 {"abs_err", &E::abs_err},
                                 {"rel_err", &E::rel_err},
                                 {"ulp", &E::ulp},
                                 {"coords", &E::coords},
                                 {"bound", &E::bound}}));
  py::dict d;
  d["status"] = std::string(to_string(v.status));
  d["method"] = std::string(to_string(v.method));
  d["standard"] = v.standard ? py::object(py::str(std::string(standard_id(*v.standard)))) : py::none();
  d["criteria"] = criteria;
  d["pass_if_any"] = v.pass_if_any;
  d["worst"] = worst;
  d["message"] = v.message;
  return d;
}

Standards standards_of(const std::string& profile, const std::string& standards_file) {
  const Profile p = parse_profile(profile);
  return standards_file.empty() ? Standards::builtin(p) : Standards::load(standards_file, p);
}

JudgeRule parse_rule(const std::string& rule) {
  if (rule == "default") return JudgeRule::Default;
  if (rule == "run_ut") return JudgeRule::RunUt;
  if (rule == "precision_standard") return JudgeRule::PrecisionStandard;
  if (rule == "error_bound") return JudgeRule::ErrorBound;
  throw Error(ErrorKind::InvalidArgument,
              "unknown rule '" + rule + "' (default, run_ut, precision_standard, error_bound)", "", "rule");
}

// probe metrics BENCH DEVICE as a dict: `cells` holds the strings the CLI prints (same keys, same text),
// `values` every metric as a Python number (None when blank), `verdict` the deciding verdict with its
// criteria and worst elements.
py::dict metrics(const py::object& bench_obj, const py::object& device_obj,
                 const std::optional<std::string>& api, const std::string& profile_text,
                 const std::string& parts_text, const py::object& magnitude_obj, std::int64_t accumulation,
                 const std::string& standards_file, std::size_t worst_count, bool want_verdict) {
  const Borrowed bench = borrow(bench_obj, "bench"), device = borrow(device_obj, "device");
  std::optional<Borrowed> magnitude;
  if (!magnitude_obj.is_none()) magnitude = borrow(magnitude_obj, "magnitude");
  const PairParts parts = parse_pair_parts(parts_text);
  const Profile profile = parse_profile(profile_text);
  py::dict out, cells, values;
  PairMetrics pm;
  std::string why_not;
  Verdict verdict;
  {
    py::gil_scoped_release release;
    const Standards cfg = standards_of(profile_text, standards_file);
    const PairErrorBoundChoice d14 = choose_pair_error_bound(
        api.value_or(""), profile, magnitude ? &magnitude->tensor : nullptr, accumulation, worst_count);
    const std::optional<PairErrorBound>& bound = d14.bound;
    why_not = d14.why_not;
    const std::string api_name = api ? *api : "benchmark_default";
    const std::string pair_api = api_base_name(api_name).value_or(api_name);
    pm = bound ? compare_pair(pair_api, bench.tensor, device.tensor, cfg, parts, *bound)
               : compare_pair(pair_api, bench.tensor, device.tensor, cfg, parts);
    if (pm.error_bound) {
      verdict = *pm.error_bound;
    } else if (want_verdict) {
      // The old rule's (or the precision standard's) criteria and worst elements: a second pass.
      JudgeOptions o;
      o.rule = profile == Profile::Probe ? JudgeRule::RunUt : JudgeRule::Default;
      o.worst_count = worst_count;
      verdict = judge(pair_api, bench.tensor, device.tensor, cfg, device.tensor.dtype(), o);
    }
  }
  auto cell = [&](const char* k, std::string v) { cells[k] = std::move(v); };
  cell("bench_dtype", std::string(torch_name(bench.tensor.dtype())));
  cell("device_dtype", std::string(torch_name(device.tensor.dtype())));
  cell("shape", shape_to_string(device.tensor.shape()));
  cell("profile", std::string(to_string(profile)));
  if (pm.metrics) {
    const TensorMetrics& m = *pm.metrics;
    cell("standard", pm.standard ? std::string(standard_id(*pm.standard)) : "none");
    for (const MetricColumn& c : metric_table()) {
      const bool ulp_row = c.reported_by(Standard::Ulp);
      if (!ulp_row || parts.ulp || !(m.*c.value).is_blank()) {
        cells[py::str(std::string(c.id))] = (m.*c.value).format();
        values[py::str(std::string(c.id))] = metric_value(m.*c.value);
      }
    }
    values["count"] = m.count;
    values["compute_dtype"] = std::string(name(m.compute_dtype));
    if (pm.dump) {
      const DumpCompareResult& dc = *pm.dump;
      cell("dump_cosine", dc.cosine.format(12));
      cell("dump_euc_dist", dc.euc_dist.format(12));
      cell("dump_max_abs", dc.max_abs.format(12));
      cell("dump_max_rel", dc.max_rel.format(12));
      cell("dump_one_thousandth", dc.one_thousandth.format(12));
      cell("dump_five_thousandths", dc.five_thousandths.format(12));
      cell("dump_accuracy_reached", std::string(to_string(dump_accuracy_reached(dc.cosine, dc.max_abs))));
      values["dump_cosine"] = metric_value(dc.cosine);
      values["dump_euc_dist"] = metric_value(dc.euc_dist);
      values["dump_max_abs"] = metric_value(dc.max_abs);
      values["dump_max_rel"] = metric_value(dc.max_rel);
      values["dump_one_thousandth"] = metric_value(dc.one_thousandth);
      values["dump_five_thousandths"] = metric_value(dc.five_thousandths);
    }
  }
  if (profile == Profile::Probe) {
    if (pm.error_bound) {
      cell("status", std::string(to_string(pm.error_bound->status)));
      cell("message", pm.error_bound->message);
      if (!pm.error_bound->worst.empty()) {
        const ElementError& w = pm.error_bound->worst.front();
        cell("worst", fmt::format("[{}] device {} bench {} error {} bound {}", fmt::join(w.coords, ", "),
                                  w.device, w.bench, w.abs_err, w.bound));
      }
    } else {
      cell("status", std::string(to_string(pm.row.status)));
      cell("message", why_not + (pm.row.message.empty() ? "" : ": " + pm.row.message));
    }
    cell("run_ut_status", std::string(to_string(pm.row.status)));
    cell("run_ut_message", pm.row.message);
  } else {
    cell("status", std::string(to_string(pm.row.status)));
    cell("message", pm.row.message);
  }
  if (pm.mindspore) {
    const MindSporeRow& ms = *pm.mindspore;
    cell("mindspore_cosine", ms.cosine.format());
    cell("mindspore_max_abs", ms.max_abs.format());
    cell("mindspore_max_rel", ms.max_rel.format());
    cell("mindspore_status", std::string(to_string(ms.status)));
    values["mindspore_cosine"] = metric_value(ms.cosine);
    values["mindspore_max_abs"] = metric_value(ms.max_abs);
    values["mindspore_max_rel"] = metric_value(ms.max_rel);
  }
  out["cells"] = cells;
  out["values"] = values;
  out["verdict"] = pm.error_bound || want_verdict ? py::object(verdict_dict(verdict)) : py::none();
  out["rule"] = pm.error_bound ? "error_bound" : "run_ut";
  out["copied"] = bench.copied || device.copied;
  return out;
}

py::dict judge_py(const py::object& bench_obj, const py::object& device_obj, const std::string& api,
                  const py::kwargs& kwargs) {
  const Borrowed bench = borrow(bench_obj, "bench"), device = borrow(device_obj, "device");
  JudgeOptions o;
  std::optional<Borrowed> reference, magnitude;
  DType dd = device.tensor.dtype();
  std::string profile = "probe", standards_file;
  apply_keywords(
      "judge", kwargs, o,
      {{"rule", [](JudgeOptions& o, const std::string& r) { o.rule = parse_rule(r); }},
       {"device_dtype",
        [&](JudgeOptions&, const std::optional<std::string>& d) {
          if (!d) return;
          const auto parsed = parse_dtype(*d);
          if (!parsed)
            throw Error(ErrorKind::InvalidArgument, "unknown dtype '" + *d + "'", "", "device_dtype");
          dd = *parsed;
        }},
       {"standard",
        [](JudgeOptions& o, const std::optional<std::string>& s) {
          if (!s) return;
          o.standard = parse_standard_id(*s);
          if (!o.standard)
            throw Error(ErrorKind::InvalidArgument, "unknown standard '" + *s + "'", "", "standard");
        }},
       {"profile", [&](JudgeOptions&, const std::string& p) { profile = p; }},
       {"reference",
        [&](JudgeOptions&, const py::object& r) {
          if (!r.is_none()) reference = borrow(r, "reference");
        }},
       {"magnitude",
        [&](JudgeOptions&, const py::object& m) {
          if (!m.is_none()) magnitude = borrow(m, "magnitude");
        }},
       {"accumulation", &JudgeOptions::accumulation},
       {"exact_scalars", &JudgeOptions::exact_scalars},
       {"worst_count", &JudgeOptions::worst_count},
       {"fp8_input", &JudgeOptions::fp8_input},
       {"standards", [&](JudgeOptions&, const std::string& f) { standards_file = f; }}});
  Verdict v;
  {
    py::gil_scoped_release release;
    if (reference) o.reference = reference->tensor;
    if (magnitude) o.magnitude = magnitude->tensor.to(DType::Float64);
    const Standards cfg = standards_of(profile, standards_file);
    v = judge(api_base_name(api).value_or(api), bench.tensor, device.tensor, cfg, dd, o);
  }
  py::dict d = verdict_dict(v);
  d["copied"] = bench.copied || device.copied;
  return d;
}

}  // namespace probe::python

using namespace probe::python;

PYBIND11_MODULE(_probe, m) {
  m.doc() = "libprobe's compiled bindings; use the package `probe`";
  register_errors(m);
  m.def("metrics", &metrics, py::arg("bench"), py::arg("device"), py::arg("api") = py::none(),
        py::arg("profile") = "probe", py::arg("parts") = "all", py::arg("magnitude") = py::none(),
        py::arg("accumulation") = 0, py::arg("standards") = "", py::arg("worst_count") = 3,
        py::arg("verdict") = true);
  m.def("judge", &judge_py, py::arg("bench"), py::arg("device"), py::arg("api") = "benchmark_default");
  m.def(
      "tensor_address",
      [](const py::object& obj) {
        const Borrowed b = borrow(obj, "array");
        return py::make_tuple(reinterpret_cast<std::uintptr_t>(b.tensor.bytes()), b.copied);
      },
      py::arg("array"), "Address libprobe reads the array's elements at, and whether it had to copy them.");
  register_dump(m);
  register_runs(m);
  register_runners(m);
  register_online(m);
}
