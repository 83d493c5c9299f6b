// probe.run_ut / compare / api_precision_compare / run_overflow_check: the CLI's runs with the GIL released.
// The progress hook takes the GIL on the calling thread, checks for signals (Ctrl-C raises
// KeyboardInterrupt there) and calls the user's callback; an exception from either requests the run's stop
// token, so the run ends after the item being written and its files stay resumable; the exception is
// raised again once the run has returned, with the run's summary as its `summary` attribute.
#include <pybind11/stl.h>

#include <optional>
#include <stop_token>
#include <utility>

#include "Convert.h"
#include "Keywords.h"
#include "Runners.h"
#include "probe/api_precision_compare.h"
#include "probe/dump_compare.h"
#include "probe/overflow_check.h"
#include "probe/run_ut.h"
#include "probe/runner.h"

namespace py = pybind11;

namespace probe::python {
namespace {

// Runs fn(progress, stop) with the GIL released; see the file comment.
template <class Summary, class ProgressT, class Fn, class ToDict>
py::dict cancellable(const py::object& callback, const Fn& fn, const ToDict& to_dict,
                     py::dict (*progress_dict)(const ProgressT&)) {
  std::stop_source stop;
  std::optional<py::error_already_set> raised;
  auto progress = [&](const ProgressT& p) {
    py::gil_scoped_acquire gil;
    if (raised) return;
    try {
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (!callback.is_none()) callback(progress_dict(p));
    } catch (py::error_already_set& e) {
      raised.emplace(std::move(e));
      stop.request_stop();
    }
  };
  Summary s;
  {
    py::gil_scoped_release release;
    s = fn(progress, stop.get_token());
  }
  py::dict d = to_dict(s);
  if (raised) {
    if (raised->value()) py::setattr(raised->value(), "summary", d);
    throw *raised;
  }
  return d;
}

Framework parse_framework(const std::string& text) {
  if (text == "pytorch" || text == "PyTorch") return Framework::PyTorch;
  if (text == "mindspore" || text == "MindSpore") return Framework::MindSpore;
  throw Error(ErrorKind::InvalidArgument, "framework must be 'pytorch' or 'mindspore', not '" + text + "'",
              "", "framework");
}

py::dict run_ut_progress(const RunUtProgress& p) {
  using P = RunUtProgress;
  return fields_dict(p, {{"done", &P::done}, {"total", &P::total}, {"tensor_bytes", &P::tensor_bytes}});
}

py::dict run_ut_summary(const RunUtSummary& s) {
  using S = RunUtSummary;
  return fields_dict(s, {{"apis", &S::apis},
                         {"pass", &S::pass},
                         {"warning", &S::warning},
                         {"error", &S::error},
                         {"skip", &S::skip},
                         {"forward_error", &S::forward_error},
                         {"backward_error", &S::backward_error},
                         {"backward_skip", &S::backward_skip},
                         {"checked", &S::checked},
                         {"tensor_bytes", &S::tensor_bytes},
                         {"result_csv", &S::result_csv},
                         {"details_csv", &S::details_csv},
                         {"error_data_dir", &S::error_data_dir},
                         {"error_data_failures", &S::error_data_failures},
                         {"cancelled", &S::cancelled}});
}

py::dict run_ut_py(const py::kwargs& kwargs) {
  using O = RunUtOptions;
  O o;
  py::object progress = py::none();
  apply_keywords("run_ut", kwargs, o,
                 {{"api_info", &O::api_info, KeywordUse::Required},
                  {"out_path", &O::out_dir},
                  {"csv_path", &O::result_csv},
                  {"resume_foreign", &O::resume_foreign},
                  {"config", &O::config_path},
                  {"save_error_data", &O::save_error_data},
                  {"filter_api", &O::filter_api},
                  {"framework",
                   [](O& o, const std::optional<std::string>& f) {
                     if (f) o.framework = parse_framework(*f);
                   }},
                  {"threads", &O::threads},
                  {"seed", &O::seed},
                  {"profile", [](O& o, const std::string& p) { o.profile = parse_profile(p); }},
                  {"timestamp", &O::timestamp},
                  {"device_runner",
                   [](O& o, const std::string& d) {
                     if (d == "emulated")
                       o.device_side = DeviceSide::Runner;
                     else if (d != "auto")
                       throw Error(ErrorKind::InvalidArgument, "device_runner must be 'auto' or 'emulated'",
                                   "", "device_runner");
                   }},
                  {"max_api_elements", &O::max_api_elements},
                  {"max_api_flops", &O::max_api_flops},
                  {"progress", [&](O&, const py::object& p) { progress = p; }}});
  const RunnerRegistry registry = registry_snapshot();
  return cancellable<RunUtSummary, RunUtProgress>(
      progress,
      [&](const RunUtProgressFn& fn, std::stop_token stop) {
        const Standards standards = Standards::builtin(o.profile);
        return run_ut(o, registry, standards, fn, stop);
      },
      run_ut_summary, run_ut_progress);
}

py::dict apc_progress(const ApiPrecisionCompareProgress& p) {
  using P = ApiPrecisionCompareProgress;
  return fields_dict(
      p, {{"done", &P::npu_rows_done}, {"total", &P::npu_rows}, {"result_rows", &P::result_rows}});
}

py::dict apc_summary(const ApiPrecisionCompareSummary& s) {
  using S = ApiPrecisionCompareSummary;
  py::dict d = fields_dict(s, {{"result_csv", &S::result_csv},
                               {"details_csv", &S::details_csv},
                               {"detail_rows", &S::detail_rows},
                               {"result_rows", &S::result_rows},
                               {"forward_pass", &S::forward_pass},
                               {"forward_error", &S::forward_error},
                               {"forward_skip", &S::forward_skip}});
  d["skipped"] = s.skipped.size();
  d["missing_in_gpu"] = s.missing_in_gpu.size();
  d["cancelled"] = s.cancelled;
  return d;
}

py::dict compare_progress(const DumpCompareProgress& p) {
  using P = DumpCompareProgress;
  return fields_dict(p, {{"npu_json", &P::npu_json}, {"done", &P::rows_done}, {"total", &P::rows}});
}

py::dict compare_summary(const DumpCompareSummary& s) {
  using O = DumpCompareSummary::Output;
  py::list outputs;
  for (const O& o : s.outputs)
    outputs.append(fields_dict(o, {{"rank_suffix", &O::rank_suffix},
                                   {"csv", &O::csv},
                                   {"xlsx", &O::xlsx},
                                   {"advisor", &O::advisor},
                                   {"mode", [](const O& x) { return std::string(to_string(x.mode)); }},
                                   {"rows", &O::rows},
                                   {"suspects", &O::suspects},
                                   {"cancelled", &O::cancelled}}));
  py::dict d;
  d["outputs"] = outputs;
  d["cancelled"] = s.cancelled;
  return d;
}

}  // namespace

void register_runs(py::module_& m) {
  m.def("run_ut", &run_ut_py);
  m.def("api_precision_compare", [](const py::kwargs& kwargs) {
    using O = ApiPrecisionCompareOptions;
    O o;
    py::object progress = py::none();
    apply_keywords("api_precision_compare", kwargs, o,
                   {{"npu_csv_path", &O::npu_csv, KeywordUse::Required},
                    {"gpu_csv_path", &O::gpu_csv, KeywordUse::Required},
                    {"out_path", &O::out_dir},
                    {"profile", [](O& o, const std::string& p) { o.profile = parse_profile(p); }},
                    {"timestamp", &O::timestamp},
                    {"thresholds", &O::thresholds_file},
                    {"progress", [&](O&, const py::object& p) { progress = p; }}});
    return cancellable<ApiPrecisionCompareSummary, ApiPrecisionCompareProgress>(
        progress,
        [&](const ApiPrecisionCompareProgressFn& fn, std::stop_token stop) {
          return run_api_precision_compare(o, fn, stop);
        },
        apc_summary, apc_progress);
  });
  m.def("compare", [](const py::kwargs& kwargs) {
    using O = DumpCompareOptions;
    O o;
    std::string input_path;
    py::object progress = py::none();
    // A mapping keyword names its file ("" for the built-in map); None leaves the mapping off.
    const auto mapping = [](bool O::*on, std::string O::*file) {
      return [on, file](O& o, const std::optional<std::string>& f) {
        if (f) o.*on = true, o.*file = *f;
      };
    };
    apply_keywords("compare", kwargs, o,
                   {{"input_path", [&](O&, const std::string& p) { input_path = p; }, KeywordUse::Required},
                    {"output_path", &O::out_dir},
                    {"stack_mode", &O::stack_mode},
                    {"compare_only", &O::compare_only},
                    {"fuzzy_match", &O::fuzzy_match},
                    {"highlight", &O::highlight},
                    {"data_mapping", &O::data_mapping},
                    {"api_mapping", mapping(&O::api_mapping, &O::api_mapping_file)},
                    {"cell_mapping", mapping(&O::cell_mapping, &O::cell_mapping_file)},
                    {"layer_mapping", mapping(&O::layer_mapping, &O::layer_mapping_file)},
                    {"xlsx", &O::write_xlsx},
                    {"framework",
                     [](O& o, const std::optional<std::string>& f) {
                       if (f) o.framework = parse_framework(*f);
                     }},
                    {"profile", [](O& o, const std::string& p) { o.profile = parse_profile(p); }},
                    {"timestamp", &O::timestamp},
                    {"progress", [&](O&, const py::object& p) { progress = p; }}});
    return cancellable<DumpCompareSummary, DumpCompareProgress>(
        progress,
        [&](const DumpCompareProgressFn& fn, std::stop_token stop) {
          return run_dump_compare(read_compare_json(input_path), o, fn, stop);
        },
        compare_summary, compare_progress);
  });
  m.def("run_overflow_check", [](const py::kwargs& kwargs) {
    using O = OverflowCheckOptions;
    O o;
    apply_keywords("run_overflow_check", kwargs, o,
                   {{"api_info", &O::api_info, KeywordUse::Required},
                    {"out_path", &O::out_dir},
                    {"timestamp", &O::timestamp},
                    {"seed", &O::seed},
                    {"max_api_elements", &O::max_api_elements}});
    OverflowCheckSummary s;
    const RunnerRegistry registry = registry_snapshot();
    {
      py::gil_scoped_release release;
      s = run_overflow_check(o, registry);
    }
    py::dict d;
    d["forward_apis"] = s.forward_apis;
    d["normal"] = s.normal;
    d["abnormal"] = s.abnormal;
    d["skipped"] = s.skipped;
    d["not_overflow"] = s.not_overflow;
    d["csv"] = s.csv;
    py::list apis;
    for (const OverflowApi& a : s.apis) apis.append(py::make_tuple(a.api, overflow_sentence(a)));
    d["apis"] = apis;
    return d;
  });
}

}  // namespace probe::python
