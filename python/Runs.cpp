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
  py::dict d;
  d["done"] = p.done;
  d["total"] = p.total;
  d["tensor_bytes"] = p.tensor_bytes;
  return d;
}

py::dict run_ut_summary(const RunUtSummary& s) {
  py::dict d;
  d["apis"] = s.apis;
  d["pass"] = s.pass;
  d["warning"] = s.warning;
  d["error"] = s.error;
  d["skip"] = s.skip;
  d["forward_error"] = s.forward_error;
  d["backward_error"] = s.backward_error;
  d["backward_skip"] = s.backward_skip;
  d["checked"] = s.checked;
  d["tensor_bytes"] = s.tensor_bytes;
  d["result_csv"] = s.result_csv;
  d["details_csv"] = s.details_csv;
  d["error_data_dir"] = s.error_data_dir;
  d["error_data_failures"] = s.error_data_failures;
  d["cancelled"] = s.cancelled;
  return d;
}

py::dict run_ut_py(const std::string& api_info, const std::string& out_path, const std::string& csv_path,
                   bool resume_foreign, const std::string& config, bool save_error_data, bool filter_api,
                   const std::optional<std::string>& framework, int threads, std::uint64_t seed,
                   const std::string& profile, const std::string& timestamp, const std::string& device_runner,
                   std::uint64_t max_api_elements, double max_api_flops, const py::object& progress) {
  RunUtOptions o;
  o.api_info = api_info;
  o.out_dir = out_path;
  o.result_csv = csv_path;
  o.resume_foreign = resume_foreign;
  o.config_path = config;
  o.save_error_data = save_error_data;
  o.filter_api = filter_api;
  if (framework) o.framework = parse_framework(*framework);
  o.threads = threads;
  o.seed = seed;
  o.profile = parse_profile(profile);
  o.timestamp = timestamp;
  if (device_runner == "emulated")
    o.device_side = DeviceSide::Runner;
  else if (device_runner != "auto")
    throw Error(ErrorKind::InvalidArgument, "device_runner must be 'auto' or 'emulated'", "",
                "device_runner");
  o.max_api_elements = max_api_elements;
  o.max_api_flops = max_api_flops;
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
  py::dict d;
  d["done"] = p.npu_rows_done;
  d["total"] = p.npu_rows;
  d["result_rows"] = p.result_rows;
  return d;
}

py::dict apc_summary(const ApiPrecisionCompareSummary& s) {
  py::dict d;
  d["result_csv"] = s.result_csv;
  d["details_csv"] = s.details_csv;
  d["detail_rows"] = s.detail_rows;
  d["result_rows"] = s.result_rows;
  d["forward_pass"] = s.forward_pass;
  d["forward_error"] = s.forward_error;
  d["forward_skip"] = s.forward_skip;
  d["skipped"] = s.skipped.size();
  d["missing_in_gpu"] = s.missing_in_gpu.size();
  d["cancelled"] = s.cancelled;
  return d;
}

py::dict compare_progress(const DumpCompareProgress& p) {
  py::dict d;
  d["npu_json"] = p.npu_json;
  d["done"] = p.rows_done;
  d["total"] = p.rows;
  return d;
}

py::dict compare_summary(const DumpCompareSummary& s) {
  py::dict d;
  py::list outputs;
  for (const auto& o : s.outputs) {
    py::dict od;
    od["rank_suffix"] = o.rank_suffix;
    od["csv"] = o.csv;
    od["xlsx"] = o.xlsx;
    od["advisor"] = o.advisor;
    od["mode"] = std::string(to_string(o.mode));
    od["rows"] = o.rows;
    od["suspects"] = o.suspects;
    od["cancelled"] = o.cancelled;
    outputs.append(od);
  }
  d["outputs"] = outputs;
  d["cancelled"] = s.cancelled;
  return d;
}

}  // namespace

void register_runs(py::module_& m) {
  m.def("run_ut", &run_ut_py, py::arg("api_info"), py::arg("out_path") = "./", py::arg("csv_path") = "",
        py::arg("resume_foreign") = false, py::arg("config") = "", py::arg("save_error_data") = false,
        py::arg("filter_api") = false, py::arg("framework") = py::none(), py::arg("threads") = 0,
        py::arg("seed") = 1234, py::arg("profile") = "probe", py::arg("timestamp") = "",
        py::arg("device_runner") = "auto", py::arg("max_api_elements") = std::uint64_t{1} << 24,
        py::arg("max_api_flops") = 0x1p37, py::arg("progress") = py::none());
  m.def(
      "api_precision_compare",
      [](const std::string& npu_csv, const std::string& gpu_csv, const std::string& out_path,
         const std::string& profile, const std::string& timestamp, const std::string& thresholds,
         const py::object& progress) {
        ApiPrecisionCompareOptions o;
        o.npu_csv = npu_csv;
        o.gpu_csv = gpu_csv;
        o.out_dir = out_path;
        o.profile = parse_profile(profile);
        o.timestamp = timestamp;
        o.thresholds_file = thresholds;
        return cancellable<ApiPrecisionCompareSummary, ApiPrecisionCompareProgress>(
            progress,
            [&](const ApiPrecisionCompareProgressFn& fn, std::stop_token stop) {
              return run_api_precision_compare(o, fn, stop);
            },
            apc_summary, apc_progress);
      },
      py::arg("npu_csv_path"), py::arg("gpu_csv_path"), py::arg("out_path") = ".",
      py::arg("profile") = "probe", py::arg("timestamp") = "", py::arg("thresholds") = "",
      py::arg("progress") = py::none());
  m.def(
      "compare",
      [](const std::string& input_path, const std::string& output_path, bool stack_mode, bool compare_only,
         bool fuzzy_match, bool highlight, const std::string& data_mapping,
         const std::optional<std::string>& api_mapping, const std::optional<std::string>& cell_mapping,
         const std::optional<std::string>& layer_mapping, bool xlsx,
         const std::optional<std::string>& framework, const std::string& profile,
         const std::string& timestamp, const py::object& progress) {
        DumpCompareOptions o;
        o.out_dir = output_path;
        o.stack_mode = stack_mode;
        o.compare_only = compare_only;
        o.fuzzy_match = fuzzy_match;
        o.highlight = highlight;
        o.data_mapping = data_mapping;
        if (api_mapping) o.api_mapping = true, o.api_mapping_file = *api_mapping;
        if (cell_mapping) o.cell_mapping = true, o.cell_mapping_file = *cell_mapping;
        if (layer_mapping) o.layer_mapping = true, o.layer_mapping_file = *layer_mapping;
        o.write_xlsx = xlsx;
        if (framework) o.framework = parse_framework(*framework);
        o.profile = parse_profile(profile);
        o.timestamp = timestamp;
        return cancellable<DumpCompareSummary, DumpCompareProgress>(
            progress,
            [&](const DumpCompareProgressFn& fn, std::stop_token stop) {
              return run_dump_compare(read_compare_json(input_path), o, fn, stop);
            },
            compare_summary, compare_progress);
      },
      py::arg("input_path"), py::arg("output_path") = "./output", py::arg("stack_mode") = false,
      py::arg("compare_only") = false, py::arg("fuzzy_match") = false, py::arg("highlight") = false,
      py::arg("data_mapping") = "", py::arg("api_mapping") = py::none(), py::arg("cell_mapping") = py::none(),
      py::arg("layer_mapping") = py::none(), py::arg("xlsx") = true, py::arg("framework") = py::none(),
      py::arg("profile") = "probe", py::arg("timestamp") = "", py::arg("progress") = py::none());
  m.def(
      "run_overflow_check",
      [](const std::string& api_info, const std::string& out_path, const std::string& timestamp,
         std::uint64_t seed, std::uint64_t max_api_elements) {
        OverflowCheckOptions o;
        o.api_info = api_info;
        o.out_dir = out_path;
        o.timestamp = timestamp;
        o.seed = seed;
        o.max_api_elements = max_api_elements;
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
      },
      py::arg("api_info"), py::arg("out_path") = ".", py::arg("timestamp") = "", py::arg("seed") = 1234,
      py::arg("max_api_elements") = std::uint64_t{1} << 24);
}

}  // namespace probe::python
