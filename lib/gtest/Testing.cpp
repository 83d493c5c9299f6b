// probe::gtest: GoogleTest helpers over probe::judge (include/probe/testing.h).
#include "probe/testing.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>

#include "probe/error_bound.h"
#include "probe/tensor_file.h"

namespace probe::testing {
namespace {

namespace fs = std::filesystem;

const Standards& standards(Profile profile) {
  static const Standards probe_cfg = Standards::builtin(Profile::Probe);
  static const Standards msprobe_cfg = Standards::builtin(Profile::MsProbe);
  return profile == Profile::Probe ? probe_cfg : msprobe_cfg;
}

const RunnerRegistry& builtin_registry() {
  static const RunnerRegistry registry = RunnerRegistry::with_builtins();
  return registry;
}

// Shortest text that reads back as the same double (the numbers a kernel author compares by eye).
std::string num(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

std::string criterion_line(const Criterion& c) {
  std::string line = "    " + c.name + " = " + num(c.value) + " (needs " + std::string(c.op) + " " +
                     num(c.threshold) + "): " + (c.pass ? "pass" : "FAIL");
  if (!c.decides) line += " (reported, never decides)";
  return line + "\n";
}

std::string verdict_block(const char* title, const Verdict& v) {
  std::string out = std::string(title) + ": " + std::string(to_string(v.status)) + " (" +
                    std::string(to_string(v.method)) + ")\n";
  for (const auto& c : v.criteria) out += criterion_line(c);
  if (v.pass_if_any && !v.criteria.empty()) out += "    (one passing check suffices)\n";
  std::istringstream lines(v.message);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) out += "    message: " + line + "\n";
  return out;
}

// REPRO directory of the current check: <base>/<Suite.Test>[-N] for the N-th failure in one test.
fs::path repro_dir(const CheckOptions& options) {
  fs::path base = options.repro_dir;
  if (base.empty()) {
    const char* env = std::getenv("PROBE_REPRO_DIR");
    base = env && *env ? fs::path(env) : fs::path(::testing::TempDir()) / "probe_repro";
  }
  std::string test = "outside_a_test";
  if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info())
    test = std::string(info->test_suite_name()) + "." + info->name();
  static std::mutex mutex;
  static std::map<std::string, int> seen;
  int n;
  {
    std::lock_guard lock(mutex);
    n = ++seen[test];
  }
  for (char& c : test)
    if (c == '/') c = '_';  // parameterised tests
  return base / (n == 1 ? test : test + "-" + std::to_string(n));
}

// numpy has no bfloat16 (a .npy would widen it to float32): such tensors go to a .pt file.
fs::path save(const fs::path& dir, const std::string& stem, const Tensor& t) {
  if (t.dtype() == DType::BFloat16) {
    fs::path p = dir / (stem + ".pt");
    save_pt(p.string(), t);
    return p;
  }
  fs::path p = dir / (stem + ".npy");
  save_npy(p.string(), t);
  return p;
}

// The tensors of a runner's outputs, depth-first (ApiResult::device_dtypes has one dtype for each).
void flatten(const Value& v, std::vector<Tensor>& out) {
  if (v.is_tensor())
    out.push_back(v.tensor());
  else if (v.is_list())
    for (const auto& x : v.list()) flatten(x, out);
}

}  // namespace

bool Accuracy::accurate() const noexcept {
  if (error_bound.method == Method::ErrorBound) return error_bound.status == Status::Pass;
  return run_ut.status == Status::Pass && standard.status != Status::Error &&
         standard.status != Status::Warning;
}

Accuracy check_output(std::string_view api, const Tensor& bench, const Tensor& device, DType dtype,
                      const CheckOptions& options) {
  JudgeOptions o;
  o.standard = options.standard;
  o.worst_count = options.worst_count;
  Accuracy a;
  // msprobe's rules know an API by its list name ("gelu"); judge resolves every spelling to it.
  const std::string list_name = api_list_name(api);
  o.rule = JudgeRule::RunUt;
  a.run_ut = judge(list_name, bench, device, standards(options.profile), dtype, o);
  o.rule = JudgeRule::PrecisionStandard;
  a.standard = judge(list_name, bench, device, standards(options.profile), dtype, o);
  // Without an API, D14 takes an element-wise function accurate to 4 ulps, as `probe metrics` does.
  const std::string d14_api = api.empty() ? std::string("elementwise") : std::string(api);
  const ErrorBoundSupport d14 = error_bound_support(d14_api);
  if (options.profile == Profile::Probe && d14.covered && (!d14.needs_magnitude || options.magnitude)) {
    o.rule = JudgeRule::ErrorBound;
    o.magnitude = options.magnitude;
    o.accumulation = options.accumulation;
    o.exact_scalars = options.exact_scalars;
    a.error_bound = judge(d14_api, bench, device, standards(options.profile), dtype, o);
  }
  return a;
}

std::string describe(const Accuracy& a, std::string_view what, std::string_view api, const Tensor& bench,
                     const Tensor& device_in, DType dtype, const CheckOptions& options, const Tensor* input) {
  const Tensor device = device_in.dtype() == dtype ? device_in : device_in.to(dtype);
  std::string out = std::string(what) + " is not accurate (" + std::string(torch_name(dtype)) + ", shape " +
                    shape_to_string(device.shape()) + ", profile " + std::string(to_string(options.profile)) +
                    ")\n";
  if (a.error_bound.method == Method::ErrorBound)
    out += verdict_block("  error bound (D14, decides)", a.error_bound);
  out += verdict_block("  run_ut rule", a.run_ut);
  const std::string title = "  precision standard" +
                            (a.standard.standard ? " " + std::string(standard_id(*a.standard.standard)) : "");
  out += verdict_block(title.c_str(), a.standard);
  const std::vector<ElementError>& worst = !a.error_bound.worst.empty() ? a.error_bound.worst
                                           : a.run_ut.worst.empty()     ? a.standard.worst
                                                                        : a.run_ut.worst;
  const bool elementwise = input && input->shape() == device.shape();
  const std::vector<double> in = elementwise ? input->to_doubles() : std::vector<double>{};
  if (!worst.empty()) out += "  worst elements:\n";
  for (const auto& e : worst) {
    // The index per dimension ("[1, 0, 2]"); a 0-d output has none, so its flat index.
    out += "    [";
    if (e.coords.empty()) out += std::to_string(e.index);
    for (std::size_t k = 0; k < e.coords.size(); ++k) out += (k ? ", " : "") + std::to_string(e.coords[k]);
    out += "]";
    if (elementwise) out += " input " + num(in[static_cast<std::size_t>(e.index)]) + ",";
    out += " bench " + num(e.bench) + ", device " + num(e.device) + ", abs err " + num(e.abs_err) +
           ", rel err " + num(e.rel_err);
    if (e.ulp) out += ", " + num(*e.ulp) + " ulp";
    if (!std::isnan(e.bound)) out += ", bound " + num(e.bound);
    out += "\n";
  }
  const fs::path dir = repro_dir(options);
  std::string repro;
  try {
    fs::create_directories(dir);
    const fs::path b = save(dir, "bench", bench), d = save(dir, "device", device);
    if (input) save(dir, "input", *input);
    repro = "probe metrics " + b.string() + " " + d.string();
    if (!api.empty()) repro += " --api " + std::string(api);
    // D14 judged with the magnitude bench: without it `probe metrics` cannot apply the same bound and falls
    // back to run_ut's rule, which may pass what failed here.
    if (a.error_bound.method == Method::ErrorBound && options.magnitude) {
      const fs::path m = save(dir, "magnitude", *options.magnitude);
      repro += " --magnitude " + m.string() + " --accumulation " + std::to_string(options.accumulation);
    }
    if (a.error_bound.method == Method::ErrorBound && options.exact_scalars) repro += " --exact-scalars";
    repro += " --profile " + std::string(to_string(options.profile));
  } catch (const std::exception& e) {
    repro = "(could not save the case in " + dir.string() + ": " + e.what() + ")";
  }
  return out + "__REPRO: " + repro + "\n";
}

::testing::AssertionResult api_accurate(std::string_view api, const ApiCall& call,
                                        const std::vector<Tensor>& device_outputs,
                                        const CheckOptions& options) {
  const RunnerRegistry& registry = options.registry ? *options.registry : builtin_registry();
  ApiResult result;
  try {
    result = registry.run_forward(Framework::PyTorch, api, call);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "the bench runner of " << api << " failed: " << e.what();
  }
  std::vector<Tensor> bench;
  for (const auto& v : result.outputs) flatten(v, bench);
  if (bench.size() != device_outputs.size())
    return ::testing::AssertionFailure()
           << api << " gives " << bench.size() << " tensor output(s), the device " << device_outputs.size();
  const std::optional<ApiName> name = parse_api_name(api);
  const std::string list_name = name ? name->name : std::string(api);
  // DECISIONS D14's magnitude bench, for the APIs that accumulate.
  std::vector<Tensor> magnitude;
  if (options.profile == Profile::Probe) {
    try {
      for (const auto& v : error_bound_magnitude(registry, Framework::PyTorch, api, call))
        flatten(v, magnitude);
    } catch (const std::exception& e) {
      return ::testing::AssertionFailure() << "the magnitude bench of " << api << " failed: " << e.what();
    }
  }
  // The elementwise input shown next to each worst element: the first tensor argument of the output's shape.
  std::vector<Tensor> inputs;
  for (const auto& v : call.args)
    if (v.is_tensor()) inputs.push_back(v.tensor());
  std::string failures;
  for (std::size_t i = 0; i < bench.size(); ++i) {
    const DType want = i < result.device_dtypes.size() ? result.device_dtypes[i] : device_outputs[i].dtype();
    const std::string what = std::string(api) + " output " + std::to_string(i);
    if (device_outputs[i].dtype() != want) {
      failures += what + " has dtype " + std::string(torch_name(device_outputs[i].dtype())) +
                  ", torch gives " + std::string(torch_name(want)) + "\n";
      continue;
    }
    const Tensor* input = nullptr;
    for (const auto& t : inputs)
      if (t.shape() == bench[i].shape()) {
        input = &t;
        break;
      }
    CheckOptions with_bound = options;
    if (i < magnitude.size()) {
      with_bound.magnitude = magnitude[i];
      with_bound.accumulation = error_bound_accumulation(api, call, bench[i].shape());
    }
    with_bound.exact_scalars = error_bound_exact_scalars(call, want);
    const Accuracy a = check_output(api, bench[i], device_outputs[i], want, with_bound);
    if (!a.accurate())
      failures += describe(a, what, list_name, bench[i], device_outputs[i], want, with_bound, input);
  }
  if (failures.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << failures;
}

::testing::AssertionResult AssertAccurate(const char* bench_expr, const char* device_expr,
                                          const Tensor& bench, const Tensor& device) {
  const CheckOptions options;
  const Accuracy a = check_output("", bench, device, device.dtype(), options);
  if (a.accurate()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << describe(a, std::string(device_expr) + " (bench " + bench_expr + ")", "", bench, device,
                     device.dtype(), options);
}

::testing::AssertionResult AssertApiAccurate(const char*, const char*, const char*, std::string_view api,
                                             const ApiCall& call, const std::vector<Tensor>& device_outputs) {
  return api_accurate(api, call, device_outputs);
}

namespace {

class AccurateMatcher : public ::testing::MatcherInterface<const Tensor&> {
 public:
  AccurateMatcher(Tensor bench, DType dtype, std::optional<Standard> standard)
      : bench_(std::move(bench)), dtype_(dtype) {
    options_.standard = standard;
  }
  bool MatchAndExplain(const Tensor& device, ::testing::MatchResultListener* listener) const override {
    const Accuracy a = check_output("", bench_, device, dtype_, options_);
    if (a.accurate()) return true;
    *listener << "\n" << describe(a, "the device tensor", "", bench_, device, dtype_, options_);
    return false;
  }
  void DescribeTo(std::ostream* os) const override {
    *os << "is an accurate " << torch_name(dtype_)
        << " result of the bench (run_ut rule and precision standard";
    if (options_.standard) *os << " " << standard_id(*options_.standard);
    *os << ")";
  }
  void DescribeNegationTo(std::ostream* os) const override {
    *os << "is not an accurate " << torch_name(dtype_) << " result of the bench";
  }

 private:
  Tensor bench_;
  DType dtype_;
  CheckOptions options_;
};

}  // namespace

::testing::Matcher<const Tensor&> IsAccurate(Tensor bench, DType dtype, std::optional<Standard> standard) {
  return ::testing::MakeMatcher(new AccurateMatcher(std::move(bench), dtype, standard));
}

}  // namespace probe::testing
