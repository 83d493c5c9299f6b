// judge_one_api: benches one dumped API in float64 and judges the recorded device output in memory, with
// no CSV in between. It loads the API's input and output tensors from the dump, runs probe's built-in
// float64 runner on the input, and calls probe::judge three times: the error bound (DECISIONS D14, the
// probe profile's default), run_ut's rule (the Status column) and the precision standard
// api_precision_compare would apply. It prints the status, the method or standard, every criterion, and
// the worst elements. Usage: judge_one_api DUMP.json [API, default Functional.gelu.0]
//
// Library calls shown: probe::Dump::load_tensor, RunnerRegistry::with_builtins + run_forward,
// Standards::builtin, probe::error_bound_magnitude + error_bound_accumulation, probe::judge with
// JudgeRule::ErrorBound / RunUt / PrecisionStandard, api_base_name.
#include <cmath>
#include <cstdio>
#include <string>

#include "probe/probe.h"

namespace {

void print_verdict(const char* rule, const probe::Verdict& v) {
  std::printf("%s: %s by %s", rule, std::string(to_string(v.status)).c_str(),
              std::string(to_string(v.method)).c_str());
  if (v.standard) std::printf(" (standard %s)", std::string(standard_id(*v.standard)).c_str());
  std::printf("\n");
  for (const probe::Criterion& c : v.criteria)
    std::printf("  %s = %.6g %s %.6g: %s%s\n", c.name.c_str(), c.value, std::string(c.op).c_str(),
                c.threshold, c.pass ? "pass" : "fail", c.decides ? "" : " (reported, not deciding)");
  for (const probe::ElementError& w : v.worst) {
    std::printf("  worst element %lld: bench %.6g device %.6g abs_err %.6g rel_err %.6g",
                static_cast<long long>(w.index), w.bench, w.device, w.abs_err, w.rel_err);
    if (!std::isnan(w.bound)) std::printf(" bound %.6g", w.bound);
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s DUMP.json [API]\n", argv[0]);
    return 2;
  }
  using namespace probe;
  const std::string api = argc == 3 ? argv[2] : "Functional.gelu.0";
  try {
    const Dump dump = Dump::open(argv[1]);
    const DumpEntry* entry = dump.find(api + ".forward");
    if (!entry) throw Error(ErrorKind::InvalidArgument, "no such forward record", argv[1], api);

    // The dumped call, its tensors loaded from dump_tensor_data/ (here one tensor argument).
    ApiCall call;
    for (const DumpNode& arg : entry->inputs()->items())
      call.args.push_back(arg.is_tensor() ? Value(dump.load_tensor(*entry, arg.tensor())) : arg.to_value());
    const TensorInfo& out_info = entry->outputs()->items().at(0).tensor();
    const Tensor device = dump.load_tensor(*entry, out_info);

    // The float64 bench of the same call.
    const RunnerRegistry runners = RunnerRegistry::with_builtins();
    const ApiResult bench =
        runners.run_forward(Framework::PyTorch, entry->name.prefix + "." + entry->name.api, call);

    const Standards standards = Standards::builtin(Profile::Probe);
    const std::string list_name = api_base_name(api).value_or(entry->name.api);
    std::printf("%s.forward.output.0 (%s, %lld elements)\n", api.c_str(), out_info.dtype_name.c_str(),
                static_cast<long long>(device.numel()));
    // D14 needs, for an API that accumulates, the same call on the inputs' absolute values.
    const std::string key = entry->name.prefix + "." + entry->name.api;
    JudgeOptions options;
    options.rule = JudgeRule::ErrorBound;
    const std::vector<Value> magnitude = error_bound_magnitude(runners, Framework::PyTorch, key, call);
    if (!magnitude.empty()) {
      options.magnitude = magnitude.at(0).tensor();
      options.accumulation = error_bound_accumulation(key, call, device.shape());
    }
    print_verdict("error bound", judge(key, bench.outputs.at(0).tensor(), device, standards,
                                       bench.device_dtypes.at(0), options));
    options.rule = JudgeRule::RunUt;
    print_verdict("run_ut", judge(list_name, bench.outputs.at(0).tensor(), device, standards,
                                  bench.device_dtypes.at(0), options));
    options.rule = JudgeRule::PrecisionStandard;
    print_verdict("precision standard", judge(list_name, bench.outputs.at(0).tensor(), device, standards,
                                              bench.device_dtypes.at(0), options));
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return exit_code(e.kind());
  }
}
