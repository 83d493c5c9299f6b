// run_overflow_check: which recorded overflows the exact result explains.
//
// msprobe re-runs each forward API on the CPU and on the NPU and calls the overflow normal when both or
// neither overflow. probe has no device to re-run: the recorded outputs are the device side (as in run_ut's
// tensor dumps) and the bench is the float64 runner rounded to the output dtype, judged element by element
// (DECISIONS D18).
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>

#include "probe/csv.h"
#include "probe/dump.h"
#include "probe/error.h"
#include "probe/number_format.h"
#include "probe/overflow_check.h"
#include "probe/run_ut.h"
#include "run_ut/DumpedCall.h"
#include "support/FileOps.h"
#include "support/Timestamp.h"

namespace probe {
namespace fs = std::filesystem;

const char* to_string(OverflowKind k) noexcept {
  return k == OverflowKind::InfNan ? "inf_nan" : "saturation";
}

const char* to_string(OverflowVerdict v) noexcept {
  switch (v) {
    case OverflowVerdict::Normal:
      return "normal overflow";
    case OverflowVerdict::Abnormal:
      return "abnormal overflow";
    case OverflowVerdict::Skip:
      return "SKIP";
  }
  return "SKIP";
}

std::string overflow_sentence(const OverflowApi& api) {
  switch (api.verdict) {
    case OverflowVerdict::Normal:
      return fmt::format("The {} overflow is a normal overflow.", api.api);
    case OverflowVerdict::Abnormal:
      return fmt::format("The {} overflow is an abnormal overflow.", api.api);
    case OverflowVerdict::Skip:
      break;
  }
  return "";
}

namespace {

// The largest finite value of a floating dtype: what saturation mode clamps an overflow to.
double dtype_max(DType t) {
  switch (t) {
    case DType::Float16:
      return 65504.0;
    case DType::BFloat16:
      return 0x1.fep127;
    case DType::Float32:
      return std::numeric_limits<float>::max();
    default:
      return std::numeric_limits<double>::max();
  }
}

bool stat_overflows(const Statistic& s, std::optional<DType> dtype) {
  if (s.kind != Statistic::Kind::Float) return false;
  if (!std::isfinite(s.d)) return true;
  return dtype && is_floating(*dtype) && std::fabs(s.d) == dtype_max(*dtype);
}

bool nonfinite(const Statistic& s) { return s.kind == Statistic::Kind::Float && !std::isfinite(s.d); }

// An input overflowed when it holds inf/NaN. A value at ±max is not taken for one: attention masks are
// filled with the dtype's lowest value, and an input saturated by an earlier overflow only makes this API's
// overflow a normal one when it is re-run.
bool input_overflows(const TensorInfo& t) { return nonfinite(t.max) || nonfinite(t.min); }

bool tensor_overflows(const TensorInfo& t) {
  return stat_overflows(t.max, t.dtype) || stat_overflows(t.min, t.dtype);
}

std::vector<const TensorInfo*> tensors_of(const DumpNode* node) {
  std::vector<const TensorInfo*> out;
  if (node) node->collect_tensors(out);
  return out;
}

void flatten(const Value& v, std::vector<Tensor>& out) {
  if (v.is_tensor()) {
    out.push_back(v.tensor());
  } else if (v.is_list()) {
    for (const Value& x : v.list()) flatten(x, out);
  }
}

// Statistics only: no recorded elements to compare, so the output overflows normally when the rounded
// bench overflows anywhere.
OverflowOutput judge_from_statistics(const Tensor& bench, DType dtype, std::size_t index, OverflowKind kind) {
  OverflowOutput o;
  o.output_index = index;
  o.kind = kind;
  o.device = std::numeric_limits<double>::quiet_NaN();
  o.from_statistics = true;
  const std::vector<double> exact = bench.to(DType::Float64).to_doubles();
  const std::vector<double> rounded = bench.to(dtype).to_doubles();
  for (std::size_t i = 0; i < rounded.size(); ++i)
    if (!std::isfinite(rounded[i])) {
      o.verdict = OverflowVerdict::Normal;
      o.element = static_cast<std::int64_t>(i);
      o.bench = exact[i];
      return o;
    }
  o.verdict = OverflowVerdict::Abnormal;
  o.bench = std::numeric_limits<double>::quiet_NaN();
  return o;
}

std::string cell(double v) { return python_repr(v); }

}  // namespace

// DECISIONS D18
std::optional<OverflowOutput> judge_overflow(const Tensor& device, const Tensor& bench, DType dtype,
                                             std::size_t output_index) {
  if (device.numel() != bench.numel())
    throw Error(
        ErrorKind::InvalidArgument,
        fmt::format("the recorded output has {} elements, the bench {}", device.numel(), bench.numel()), {},
        fmt::format("output.{}", output_index));
  const std::vector<double> dev = device.to(DType::Float64).to_doubles();
  const std::vector<double> exact = bench.to(DType::Float64).to_doubles();
  const std::vector<double> rounded = bench.to(dtype).to_doubles();
  const double fmax = dtype_max(dtype);
  std::int64_t first_flagged = -1, first_unexplained = -1;
  bool any_nonfinite = false;
  for (std::size_t i = 0; i < dev.size(); ++i) {
    const bool nonfinite = !std::isfinite(dev[i]);
    const bool saturated = std::fabs(dev[i]) == fmax;
    if (!nonfinite && !saturated) continue;
    any_nonfinite = any_nonfinite || nonfinite;
    const bool exact_overflows = !std::isfinite(rounded[i]);
    // A saturated value the exact result rounds to is no overflow at all.
    const bool unexplained =
        nonfinite ? !exact_overflows : (!exact_overflows && std::fabs(rounded[i]) != fmax);
    if (unexplained && first_unexplained < 0) first_unexplained = static_cast<std::int64_t>(i);
    if ((nonfinite || exact_overflows) && first_flagged < 0) first_flagged = static_cast<std::int64_t>(i);
  }
  if (first_unexplained < 0 && first_flagged < 0) return std::nullopt;
  OverflowOutput o;
  o.output_index = output_index;
  o.kind = any_nonfinite ? OverflowKind::InfNan : OverflowKind::Saturation;
  o.verdict = first_unexplained >= 0 ? OverflowVerdict::Abnormal : OverflowVerdict::Normal;
  o.element = first_unexplained >= 0 ? first_unexplained : first_flagged;
  o.device = dev[static_cast<std::size_t>(o.element)];
  o.bench = exact[static_cast<std::size_t>(o.element)];
  return o;
}

namespace {

OverflowApi check_api(const Dump& dump, const DumpEntry& entry, const std::string& full,
                      const OverflowCheckOptions& options, const RunnerRegistry& registry, bool& overflowed) {
  OverflowApi api;
  api.api = full;
  RunUtOptions ru;
  ru.seed = options.seed;
  ru.max_api_elements = options.max_api_elements;
  const rut::DumpedCall dc = rut::build_dumped_call(dump, entry, full, ru);
  const ApiResult bench = registry.run_forward(Framework::PyTorch, full, dc.call, RunnerRole::Bench);
  std::vector<Tensor> outs;
  for (const Value& v : bench.outputs) flatten(v, outs);
  const std::vector<const TensorInfo*> recorded = tensors_of(entry.outputs());
  if (outs.size() != recorded.size())
    throw Error(ErrorKind::Unsupported,
                fmt::format("the bench returned {} tensors, the dump records {} outputs", outs.size(),
                            recorded.size()),
                dump.path(), "output", full);
  if (!dc.generated.empty()) {
    api.message = "inputs generated from statistics: ";
    for (std::size_t i = 0; i < dc.generated.size(); ++i) api.message += (i ? ", " : "") + dc.generated[i];
  }
  for (std::size_t k = 0; k < recorded.size(); ++k) {
    const TensorInfo& info = *recorded[k];
    if (!tensor_overflows(info) || !info.dtype || !is_floating(*info.dtype)) continue;
    const bool nonfinite_stat = (info.max.kind == Statistic::Kind::Float && !std::isfinite(info.max.d)) ||
                                (info.min.kind == Statistic::Kind::Float && !std::isfinite(info.min.d));
    std::optional<OverflowOutput> o;
    if (info.has_file() && dc.generated.empty()) {
      o = judge_overflow(dump.load_tensor(entry, info), outs[k], *info.dtype, k);
    } else {
      o = judge_from_statistics(outs[k], *info.dtype, k,
                                nonfinite_stat ? OverflowKind::InfNan : OverflowKind::Saturation);
    }
    if (o) api.outputs.push_back(*o);
  }
  overflowed = !api.outputs.empty();
  api.verdict = OverflowVerdict::Normal;
  for (const OverflowOutput& o : api.outputs)
    if (o.verdict == OverflowVerdict::Abnormal) api.verdict = OverflowVerdict::Abnormal;
  return api;
}

void write_csv(const OverflowCheckSummary& s, const std::string& path) {
  const std::string tmp = path + ".tmp";
  std::error_code ec;
  fs::remove(tmp, ec);
  {
    CsvWriter w(tmp, {"API Name", "Direction", "Output Index", "Element Index", "Device Value", "Bench Value",
                      "Overflow Kind", "Verdict", "Message"});
    for (const OverflowApi& a : s.apis) {
      if (a.verdict == OverflowVerdict::Skip) {
        w.write_row({csv_escape_formula(a.api), "forward", "N/A", "N/A", "N/A", "N/A", "N/A", "SKIP",
                     csv_escape_formula(a.message)});
        continue;
      }
      for (const OverflowOutput& o : a.outputs) {
        const bool known = o.element >= 0;
        w.write_row({csv_escape_formula(a.api), "forward", std::to_string(o.output_index),
                     known ? std::to_string(o.element) : "N/A", o.from_statistics ? "N/A" : cell(o.device),
                     known ? cell(o.bench) : "N/A", to_string(o.kind), to_string(o.verdict),
                     csv_escape_formula(a.message)});
      }
    }
    w.sync();
  }
  detail::publish_new_file(tmp, path);
}

}  // namespace

OverflowCheckSummary run_overflow_check(const OverflowCheckOptions& options, const RunnerRegistry& registry) {
  if (options.api_info.empty())
    throw Error(ErrorKind::InvalidArgument, "no dump.json given", {}, "-api_info");
  const std::string ts = options.timestamp.empty() ? detail::local_timestamp() : options.timestamp;
  if (!detail::is_timestamp(ts))
    throw Error(ErrorKind::InvalidArgument, "expected 14 digits YYYYmmddHHMMSS", {}, "--timestamp");
  const Dump dump = Dump::open(options.api_info);
  if (dump.framework() == Framework::MindSpore)
    throw Error(ErrorKind::Unsupported, "run_overflow_check analyses PyTorch dumps", options.api_info,
                "framework");
  OverflowCheckSummary s;
  for (const DumpEntry& entry : dump.entries()) {
    if (entry.name.is_module || entry.name.direction != EntryDirection::Forward) continue;
    ++s.forward_apis;
    bool inputs_overflow = false, outputs_overflow = false;
    for (const TensorInfo* t : tensors_of(entry.inputs()))
      inputs_overflow = inputs_overflow || input_overflows(*t);
    for (const TensorInfo* t : tensors_of(entry.kwargs()))
      inputs_overflow = inputs_overflow || input_overflows(*t);
    for (const TensorInfo* t : tensors_of(entry.outputs()))
      outputs_overflow = outputs_overflow || tensor_overflows(*t);
    // msprobe's analysis covers only forward APIs whose inputs did not overflow and whose outputs did.
    if (inputs_overflow || !outputs_overflow) continue;
    const std::string full = entry.name.full_name;
    OverflowApi api;
    bool overflowed = true;
    if (entry.name.prefix == "Distributed") {
      // A communication op's output is what the other ranks sent: re-running it on this rank's inputs
      // cannot say anything about it.
      api.api = full;
      api.verdict = OverflowVerdict::Skip;
      api.message =
          "a communication op: its output comes from the other ranks (nan_analyze on the step directory "
          "follows it to the rank where inf/NaN appeared)";
    } else {
      try {
        api = check_api(dump, entry, full, options, registry, overflowed);
      } catch (const Error& e) {
        api.api = full;
        api.verdict = OverflowVerdict::Skip;
        std::string where;
        if (!e.file().empty()) where += fs::path(e.file()).filename().string() + ": ";
        if (!e.field().empty()) where += e.field() + ": ";
        api.message = where + e.message();
      }
    }
    if (!overflowed) {
      ++s.not_overflow;
      continue;
    }
    (api.verdict == OverflowVerdict::Normal     ? s.normal
     : api.verdict == OverflowVerdict::Abnormal ? s.abnormal
                                                : s.skipped)++;
    s.apis.push_back(std::move(api));
  }
  if (!options.out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(options.out_dir, ec);
    if (!fs::is_directory(options.out_dir, ec))
      throw Error(ErrorKind::Io, "cannot create the output directory", options.out_dir, "-o");
    // Without --timestamp a run whose name is taken (an earlier run in the same second) moves on to the next
    // free second, as run_ut and compare do; with --timestamp an existing output is refused.
    std::string stamp = ts;
    auto name = [&] {
      return (fs::path(options.out_dir) / fmt::format("overflow_check_result_{}.csv", stamp));
    };
    for (int tries = 0; options.timestamp.empty() && tries < 600 && fs::exists(name(), ec); ++tries)
      stamp = detail::next_timestamp(stamp);
    s.csv = name().string();
    write_csv(s, s.csv);
  }
  return s;
}

OverflowCheckSummary run_overflow_check(const OverflowCheckOptions& options) {
  return run_overflow_check(options, RunnerRegistry::with_builtins());
}

}  // namespace probe
