// probe metrics BENCH DEVICE: every metric of msprobe's pre-check and dump compare for two tensor files,
// and the verdict of each standard.
#include <fmt/core.h>
#include <fmt/format.h>

#include <string>

#include "ArgParser.h"
#include "Commands.h"
#include "probe/error.h"
#include "probe/judge.h"
#include "probe/metric_table.h"
#include "probe/output_compare.h"
#include "probe/pair_metrics.h"
#include "probe/tensor_file.h"

namespace probe::cli {
namespace {

constexpr const char* kHelp =
    "usage: probe metrics BENCH DEVICE [--api NAME] [--magnitude FILE --accumulation K] [--exact-scalars]\n"
    "                     [--metrics LIST] [--json] [--profile probe|msprobe] [--standards FILE]\n\n"
    "Computes every accuracy metric of DEVICE against BENCH (tensor files: .npy, .pt/.pth, or an .npz member "
    "as\n"
    "FILE.npz:NAME) in one pass, and judges the pair with msprobe's old rule, the new precision standard "
    "chosen\n"
    "for the API, and the MindSpore rule. In the probe profile `status` and `message` are the error bound's\n"
    "(DECISIONS D14: every element within a bound derived from the API's numerics; `worst` names the worst\n"
    "element), and run_ut's old rule is `run_ut_status` / `run_ut_message`.\n\n"
    "  --api NAME         API name (base like 'matmul' or full like 'Torch.matmul.0') that selects the new\n"
    "                     precision standard and D14's family; default: the benchmark standard, and for D14\n"
    "                     an element-wise function accurate to 4 ulps in float32\n"
    "  --magnitude FILE   D14's magnitude bench for an API that accumulates (matmul, linear, conv, sum, "
    "add):\n"
    "                     the API run in float64 on the inputs' absolute values, e.g. |a| @ |b|\n"
    "  --accumulation K   D14: terms summed into one output element (matmul's inner dim); with --magnitude\n"
    "  --exact-scalars    D25: the call's Python numbers (alpha, beta, a scalar operand) are exact in the\n"
    "                     device dtype, so D14 adds no term for their rounding\n"
    "  --metrics LIST     what to compute and print besides run_ut's metrics and verdict: a comma-separated\n"
    "                     list of ulp, dump (dump compare), mindspore, all (default: all); 'run_ut' alone\n"
    "                     computes run_ut's metrics only, the fastest\n"
    "  --json             print one JSON object instead of text\n"
    "  --profile P        'probe' (default, DECISIONS D1-D3) or 'msprobe' (msprobe HEAD thresholds)\n"
    "  --standards FILE   precision standards JSON to use instead of the shipped precision_standards.json\n"
    "                     (default: $PROBE_STANDARDS_FILE, else the first found in $PROBE_DATA_DIR, the\n"
    "                     installed share/probe, the source tree's data/)\n"
    "  -h, --help         this help\n";

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\')
      o += '\\', o += c;
    else if (c == '\n')
      o += "\\n";
    else
      o += c;
  }
  return o;
}

// FILE.npz:NAME names one member; a bare FILE.npz must hold exactly one array; anything else is a tensor
// file.
Tensor load_operand(const std::string& spec) {
  if (const auto colon = spec.rfind(".npz:"); colon != std::string::npos)
    return load_npz_member(spec.substr(0, colon + 4), spec.substr(colon + 5));
  if (spec.size() > 4 && spec.compare(spec.size() - 4, 4, ".npz") == 0) {
    std::vector<NamedTensor> members = load_npz(spec);
    if (members.size() == 1) return std::move(members.front().tensor);
    std::string names;
    for (const auto& m : members) names += (names.empty() ? "" : ", ") + m.name;
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("holds {} arrays; name one as FILE.npz:NAME ({})", members.size(),
                            names.empty() ? "none" : names),
                spec);
  }
  return load_tensor_file(spec);
}

}  // namespace

int run_metrics(Args args) {
  enum Flag {
    Api,
    Metrics,
    Json,
    ProfileFlag,
    StandardsFile,
    FrameworkFlag,
    MagnitudeFile,
    Accumulation,
    ExactScalars
  };
  const std::vector<FlagSpec> specs = {
      {Api, {"--api"}, Arity::One},
      {MagnitudeFile, {"--magnitude"}, Arity::One},
      {Accumulation, {"--accumulation"}, Arity::One},
      {ExactScalars, {"--exact-scalars"}, Arity::None},
      {Metrics, {"--metrics"}, Arity::One},
      {Json, {"--json"}, Arity::None},
      {ProfileFlag, {"--profile"}, Arity::One},
      {StandardsFile, {"--standards"}, Arity::One},
      {FrameworkFlag, {"--framework"}, Arity::One},
  };
  std::string api = "benchmark_default", standards, profile_text = "probe", magnitude_file;
  bool json = false, api_given = false, exact_scalars = false;
  std::int64_t accumulation = 0;
  PairParts parts = PairParts::all();
  // Every positional argument is kept, so that a wrong count gets the message below.
  ParsedArgs parsed = parse_args(args, specs, args.size());
  for (const ParsedFlag& f : parsed.flags) {
    switch (f.id) {
      case kHelpFlag:
        fmt::print("{}{}", kHelp, kExitCodesNote);
        return 0;
      case Api:
        api = f.value();
        api_given = true;
        break;
      case MagnitudeFile:
        magnitude_file = f.value();
        break;
      case Accumulation:
        accumulation = parse_integer(f.value(), "--accumulation");
        if (accumulation < 1)
          throw Error(ErrorKind::InvalidArgument, "must be >= 1, got " + f.value(), "", "--accumulation");
        break;
      case ExactScalars:
        exact_scalars = true;
        break;
      case Metrics:
        parts = parse_pair_parts(f.value());
        break;
      case Json:
        json = true;
        break;
      case ProfileFlag:
        profile_text = f.value();
        break;
      case StandardsFile:
        standards = f.value();
        break;
      case FrameworkFlag:  // accepted for symmetry with the other commands; the metrics do not depend on it
        break;
    }
  }
  const std::vector<std::string>& files = parsed.positional;
  if (files.size() != 2) {
    fmt::print(stderr,
               "probe metrics: expected two tensor files (BENCH DEVICE), got {}; see probe metrics --help\n",
               files.size());
    return exit_code(ErrorKind::InvalidArgument);  // a bad command line; 1 means "no command given"
  }
  Profile profile = parse_profile(profile_text);
  Standards cfg = standards.empty() ? Standards::builtin(profile) : Standards::load(standards, profile);
  const Tensor bench = load_operand(files[0]), device = load_operand(files[1]);
  // DECISIONS D14 decides in the probe profile; where it applies, its scan runs inside the metrics pass.
  std::optional<Tensor> magnitude;
  if (profile == Profile::Probe && !magnitude_file.empty()) magnitude = load_operand(magnitude_file);
  PairErrorBoundChoice d14 =
      choose_pair_error_bound(api_given ? api : "", profile, magnitude ? &*magnitude : nullptr, accumulation);
  if (d14.bound) d14.bound->options.exact_scalars = exact_scalars;
  const std::optional<PairErrorBound>& bound = d14.bound;
  const std::string& why_not = d14.why_not;
  const std::string pair_api = api_base_name(api).value_or(api);
  const PairMetrics pm = bound ? compare_pair(pair_api, bench, device, cfg, parts, *bound)
                               : compare_pair(pair_api, bench, device, cfg, parts);
  std::vector<std::pair<std::string, std::string>> out = {
      {"bench_dtype", std::string(torch_name(bench.dtype()))},
      {"device_dtype", std::string(torch_name(device.dtype()))},
      {"shape", shape_to_string(device.shape())},
      {"profile", std::string(to_string(profile))}};
  if (pm.metrics) {
    const TensorMetrics& m = *pm.metrics;
    out.emplace_back("standard", pm.standard ? std::string(standard_id(*pm.standard)) : "none");
    for (const MetricColumn& c : metric_table()) {
      // The ULP metrics only when asked for or computed for the API's standard.
      const bool ulp_row = c.reported_by(Standard::Ulp);
      if (!ulp_row || parts.ulp || !(m.*c.value).is_blank()) out.emplace_back(c.id, (m.*c.value).format());
    }
    if (pm.dump) {
      const DumpCompareResult& dc = *pm.dump;
      out.insert(out.end(), {{"dump_cosine", dc.cosine.format(12)},
                             {"dump_euc_dist", dc.euc_dist.format(12)},
                             {"dump_max_abs", dc.max_abs.format(12)},
                             {"dump_max_rel", dc.max_rel.format(12)},
                             {"dump_one_thousandth", dc.one_thousandth.format(12)},
                             {"dump_five_thousandths", dc.five_thousandths.format(12)},
                             {"dump_accuracy_reached",
                              std::string(to_string(dump_accuracy_reached(dc.cosine, dc.max_abs)))}});
    }
  }
  if (profile == Profile::Probe) {
    // DECISIONS D14 decides; run_ut's old rule is reported beside it.
    const std::optional<Verdict>& v = pm.error_bound;
    if (v) {
      out.insert(out.end(), {{"status", std::string(to_string(v->status))}, {"message", v->message}});
      if (!v->worst.empty()) {
        const ElementError& w = v->worst.front();
        out.emplace_back("worst",
                         fmt::format("[{}] device {} bench {} error {} bound {}", fmt::join(w.coords, ", "),
                                     w.device, w.bench, w.abs_err, w.bound));
      }
    } else {
      out.insert(out.end(), {{"status", std::string(to_string(pm.row.status))},
                             {"message", why_not + (pm.row.message.empty() ? "" : ": " + pm.row.message)}});
    }
    out.insert(out.end(), {{"run_ut_status", std::string(to_string(pm.row.status))},
                           {"run_ut_message", pm.row.message}});
  } else {
    out.insert(out.end(), {{"status", std::string(to_string(pm.row.status))}, {"message", pm.row.message}});
  }
  if (pm.mindspore) {
    const MindSporeRow& ms = *pm.mindspore;
    out.insert(out.end(), {{"mindspore_cosine", ms.cosine.format()},
                           {"mindspore_max_abs", ms.max_abs.format()},
                           {"mindspore_max_rel", ms.max_rel.format()},
                           {"mindspore_status", std::string(to_string(ms.status))}});
  }
  if (json) {
    fmt::print("{{");
    for (std::size_t i = 0; i < out.size(); ++i)
      fmt::print("{}\"{}\": \"{}\"", i ? ", " : "", out[i].first, json_escape(out[i].second));
    fmt::print("}}\n");
  } else {
    for (const auto& [k, v] : out) fmt::print("{:<24} {}\n", k, json_escape(v));
  }
  return 0;
}

}  // namespace probe::cli
