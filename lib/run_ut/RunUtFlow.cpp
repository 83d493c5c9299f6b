// run_ut itself: reads the dump, decides which APIs to check (filter_api), claims the output files and
// drives the per-API check (run_ut/ApiChecker.h) through the engine; also the online record checker.
#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "probe/api_name.h"
#include "probe/dump.h"
#include "probe/error.h"
#include "probe/error_bound.h"
#include "probe/precheck_frame.h"
#include "probe/precision_standard.h"
#include "probe/run_ut.h"
#include "probe/runner.h"
#include "probe/tensor_file.h"
#include "probe/version.h"
#include "run_ut/ApiChecker.h"
#include "run_ut/ApiSelection.h"
#include "run_ut/BenchCost.h"
#include "run_ut/CheckContext.h"
#include "run_ut/Dataflow.h"
#include "run_ut/Engine.h"
#include "run_ut/OutputFiles.h"
#include "run_ut/ParamGrads.h"
#include "run_ut/RecordChecker.h"
#include "run_ut/RowFormat.h"
#include "run_ut/RunRecord.h"
#include "run_ut/RunSetup.h"
#include "support/FileOps.h"
#include "support/RankWork.h"
#include "support/Timestamp.h"

namespace probe {
namespace rut {
namespace {

namespace fs = std::filesystem;

bool stat_equal(const Statistic& x, const Statistic& y) {
  if (x.kind != y.kind) return false;
  switch (x.kind) {
    case Statistic::Kind::Bool:
      return x.b == y.b;
    case Statistic::Kind::Int:
      return x.i == y.i;
    case Statistic::Kind::Float:
      return x.d == y.d;  // NaN != NaN, as Python compares floats
    default:
      return true;
  }
}

bool node_equal(const DumpNode& a, const DumpNode& b, bool ignore_minmax) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case DumpNode::Kind::Null:
      return true;
    case DumpNode::Kind::Tensor: {
      const TensorInfo &x = a.tensor(), &y = b.tensor();
      return x.type == y.type && x.dtype_name == y.dtype_name && x.shape == y.shape &&
             (ignore_minmax || (stat_equal(x.max, y.max) && stat_equal(x.min, y.min))) &&
             stat_equal(x.mean, y.mean) && stat_equal(x.norm, y.norm) &&
             stat_equal(x.max_except_inf_nan, y.max_except_inf_nan) &&
             stat_equal(x.min_except_inf_nan, y.min_except_inf_nan) && x.requires_grad == y.requires_grad &&
             x.data_name == y.data_name && x.md5 == y.md5;
    }
    case DumpNode::Kind::Value:
      return a.leaf().type == b.leaf().type && a.leaf().value.kind() == b.leaf().value.kind() &&
             a.leaf().value.to_string() == b.leaf().value.to_string();
    case DumpNode::Kind::List: {
      const auto &x = a.items(), &y = b.items();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!node_equal(x[i], y[i], false)) return false;
      return true;
    }
    case DumpNode::Kind::Dict: {
      const auto &x = a.members(), &y = b.members();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (x[i].first != y[i].first || !node_equal(x[i].second, y[i].second, false)) return false;
      return true;
    }
  }
  return false;
}

// §6.4: msprobe's signature keeps only the dict elements of input_args (tensors and typed leaves),
// without their Max/Min, and the complete input_kwargs.
bool filter_equal(const DumpEntry& a, const DumpEntry& b) {
  auto dict_args = [](const DumpEntry& e) {
    std::vector<const DumpNode*> v;
    if (const DumpNode* in = e.section("input_args"))
      for (const auto& n : in->items())
        if (n.is_tensor() || n.kind() == DumpNode::Kind::Dict ||
            (n.kind() == DumpNode::Kind::Value && !n.leaf().type.empty()))
          v.push_back(&n);
    return v;
  };
  auto x = dict_args(a), y = dict_args(b);
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!node_equal(*x[i], *y[i], true)) return false;
  const DumpNode *ka = a.kwargs(), *kb = b.kwargs();
  if (!ka || !kb) return ka == kb;
  return node_equal(*ka, *kb, false);
}

// What this run's verdicts depend on, for the run record a resume checks (RunRecord.h). The tensor files
// enter by name and size only: re-reading their data would cost as much as the run, and a dump with other
// data has another dump.json (its Max/Min/Norm statistics).
RunFingerprint run_fingerprint(const RunUtOptions& options, const Standards& standards, const Dump& dump,
                               Framework framework) {
  RunFingerprint fp;
  fp.push_back({"probe_version", probe::version()});
  fp.push_back(
      {"dump_json", hex64(fnv1a(detail::read_whole_file(options.api_info, "cannot open dump.json", true)))});
  std::uint64_t h = kFnvBasis;
  std::size_t files = 0;
  const fs::path dir = dump.tensor_dir();
  for (const DumpEntry& e : dump.entries())
    for (const TensorInfo* t : e.tensors()) {
      if (!t->has_file()) continue;
      std::error_code ec;
      const auto size = fs::file_size(dir / t->data_name, ec);
      h = fnv1a(t->data_name, h);
      h = fnv1a(ec ? std::string("\0missing\n") : "\0" + std::to_string(size) + "\n", h);
      ++files;
    }
  fp.push_back({"tensor_files", std::to_string(files) + " files, " + hex64(h)});
  fp.push_back({"framework", std::string(to_string(framework))});
  fp.push_back({"profile", std::string(to_string(standards.profile()))});
  fp.push_back({"device_runner", options.device_side == DeviceSide::Runner ? "emulated" : "auto"});
  fp.push_back({"filter_api", options.filter_api ? "true" : "false"});
  fp.push_back({"config", options.config_path.empty()
                              ? std::string("none")
                              : hex64(fnv1a(detail::read_whole_file(options.config_path, "cannot open config",
                                                                    true)))});
  fp.push_back({"seed", std::to_string(options.seed)});
  fp.push_back({"max_api_elements", std::to_string(options.max_api_elements)});
  fp.push_back({"max_api_flops", fmt::format("{}", options.max_api_flops)});
  return fp;
}

}  // namespace

}  // namespace rut

RunUtSummary run_ut(const RunUtOptions& options, const RunUtProgressFn& progress, std::stop_token stop) {
  const RunnerRegistry registry = RunnerRegistry::with_builtins();
  const Standards standards = Standards::builtin(options.profile);
  return run_ut(options, registry, standards, progress, std::move(stop));
}

RunUtSummary run_ut(const RunUtOptions& options, const RunnerRegistry& registry,
                    const Standards& given_standards, const RunUtProgressFn& progress, std::stop_token stop) {
  using namespace rut;
  Standards with_histograms = given_standards;
  with_histograms.error_histograms = options.error_histograms || given_standards.error_histograms;
  const Standards& standards = with_histograms;
  if (options.api_info.empty()) throw Error(ErrorKind::InvalidArgument, "-api_info DUMP.json is required");
  if (options.framework) require_checker_framework(*options.framework);
  std::error_code ec;
  if (fs::path(options.api_info).extension() != ".json")
    throw Error(ErrorKind::InvalidArgument, "-api_info must name a .json file", options.api_info);
  if (!fs::is_regular_file(options.api_info, ec))
    throw Error(ErrorKind::Io, "dump.json does not exist or is not a regular file", options.api_info);

  Context ctx;
  ctx.options = &options;
  if (!options.config_path.empty()) ctx.config = load_run_ut_config(options.config_path);
  Dump dump = Dump::open(options.api_info);
  ctx.dump = &dump;
  // DECISIONS (silent accepts): a task or framework run_ut does not know would decide how inputs are
  // built on a guess; refuse it, naming the field.
  if (const std::string& task = dump.task();
      !task.empty() && task != "statistics" && task != "tensor" && task != "overflow_check")
    throw Error(ErrorKind::Format,
                "run_ut checks statistics or tensor dumps; this dump's task is '" + task + "'",
                options.api_info, "task");
  if (!dump.framework_field().empty() && dump.framework() == probe::Framework::Unknown && !options.framework)
    throw Error(ErrorKind::Format,
                "unknown framework '" + dump.framework_field() +
                    "' (pytorch, mindspore or mindtorch); pass -f pytorch|mindspore to choose the checker",
                options.api_info, "framework");
  // DECISIONS (silent accepts): -f naming the other framework than the dump's own checked nothing (the
  // MindSpore checker keeps only the APIs it can bench, so a PyTorch dump gave 0 APIs and exit 0); refuse
  // it, as compare does. A mindtorch dump (PyTorch APIs run on MindSpore) goes with either checker.
  if (options.framework &&
      (dump.framework() == probe::Framework::PyTorch || dump.framework() == probe::Framework::MindSpore) &&
      dump.framework() != *options.framework)
    throw Error(ErrorKind::InvalidArgument,
                "-f " + std::string(to_string(*options.framework)) + " but this is a " +
                    std::string(to_string(dump.framework())) + " dump" +
                    (dump.framework_field().empty() ? " (no framework field; its tensor types say so)" : "") +
                    " (leave -f out to check it as one)",
                options.api_info, "framework");
  ctx.mindtorch = dump.framework() == probe::Framework::MindTorch;
  if (options.framework) {
    ctx.framework = *options.framework;
  } else {
    ctx.framework =
        dump.framework() == probe::Framework::MindSpore ? Framework::MindSpore : Framework::PyTorch;
  }
  ctx.runner_fw =
      ctx.framework == Framework::MindSpore && !ctx.mindtorch ? Framework::MindSpore : Framework::PyTorch;
  ctx.registry = &registry;
  ctx.standards = &standards;
  ctx.format = &run_ut_format(ctx.framework);
  if (dump.task() != "tensor")
    for (const DumpEntry& e : dump.entries()) {
      const auto tensors = e.tensors();
      if (std::any_of(tensors.begin(), tensors.end(), [](const TensorInfo* t) { return t->has_file(); })) {
        ctx.statistics_dump_with_files = true;
        break;
      }
    }

  // The APIs to check, in dump order.
  std::vector<std::string> names;
  std::vector<const DumpEntry*> entries;
  auto maps = dump.run_ut_maps();
  for (const auto& [name, e] : maps.backward) ctx.backward.emplace(name, e);
  std::map<std::string, std::vector<const DumpEntry*>> kept_by_base;
  for (const auto& [name, e] : maps.forward) {
    if (ctx.framework == Framework::MindSpore) {
      if (!mindspore_bench_name(name, ctx.mindtorch)) continue;  // §7.1: not checkable, silently ignored
    }
    if (options.filter_api) {
      // The API without its call counter; a name without one is its own group.
      const std::optional<ApiName> api = parse_api_name(name);
      const std::string base = api && api->call_index ? api->key() : name;
      auto& kept = kept_by_base[base];
      bool dup = std::any_of(kept.begin(), kept.end(),
                             // Captures a copy: clang 14 cannot capture structured bindings.
                             [&, entry = e](const DumpEntry* k) { return k && filter_equal(*k, *entry); });
      if (dup) continue;
      kept.push_back(e);
    }
    names.push_back(name);
    entries.push_back(e);
  }

  EngineConfig cfg;
  detail::LockedFile lock;  // held until the run ends: no other run writes into these files meanwhile
  // Rank 0 alone names, claims and locks the files; every rank learns the names.
  auto claim = [&] {
    if (!options.result_csv.empty()) {
      cfg.paths = resume_output_paths(options.result_csv);
      lock = claim_outputs(cfg.paths, true);
    } else {
      lock = claim_new_outputs([&](const std::string& ts) { return new_output_paths(options.out_dir, ts); },
                               options.timestamp, cfg.paths);
    }
  };
  cfg.resume = !options.result_csv.empty();
  if (options.group && options.group->size() > 1) {
    const std::string named = detail::decide_on_root(*options.group, [&] {
      claim();
      detail::WireOut out;
      out.strs({cfg.paths.result, cfg.paths.details, cfg.paths.timestamp});
      return std::move(out.bytes());
    });
    detail::WireIn in(named);
    const std::vector<std::string> paths = in.strs();
    cfg.paths = {paths.at(0), paths.at(1), paths.at(2)};
    cfg.group = options.group;
  } else {
    claim();
  }
  cfg.outputs_claimed = true;
  cfg.framework = ctx.framework;
  cfg.fingerprint = run_fingerprint(options, standards, dump, ctx.framework);
  cfg.resume_foreign = options.resume_foreign;
  cfg.threads = options.threads > 0 ? options.threads
                                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (options.save_error_data) ctx.error_data_dir = error_data_dir(ctx.config, cfg.paths);

  // DECISIONS D16: the pre-pass over the dump: which API output each input tensor is.
  std::optional<Dataflow> dataflow;
  if (standards.profile() == Profile::Probe && ctx.framework == Framework::PyTorch && !ctx.mindtorch &&
      dump.task() == "tensor" && use_dumped_device(ctx))
    ctx.dataflow = &dataflow.emplace(dump, maps.forward, maps.backward, registry, ctx.runner_fw);

  ApiChecker checker(ctx);
  const TensorSource source{&dump, nullptr};
  // DECISIONS D17: the probe profile adds one row per parameters_grad entry of a PyTorch tensor dump,
  // after the APIs.
  std::optional<ParamGradChecker> params;
  if (standards.profile() == Profile::Probe && ctx.framework == Framework::PyTorch && !ctx.mindtorch &&
      dump.task() == "tensor") {
    params.emplace(dump, registry, standards);
    for (const DumpEntry* e : params->entries()) names.push_back(e->key);
  }
  // Across ranks the heaviest APIs go first (BenchCost.h): dumped bytes and the bench's FLOPs; parameter
  // gradients by their bytes.
  if (cfg.group)
    cfg.weight = [&](std::size_t i) {
      if (i >= entries.size()) return check_weight("", *params->entries()[i - entries.size()], nullptr);
      const auto parsed = parse_api_name(names[i]);
      const auto bwd = ctx.backward.find(names[i]);
      return check_weight(parsed ? parsed->name : names[i], *entries[i],
                          bwd == ctx.backward.end() ? nullptr : bwd->second);
    };
  RunUtSummary s = run_engine(
      names,
      [&](std::size_t i) {
        return i < entries.size() ? checker.check(names[i], *entries[i], source)
                                  : params->check(*params->entries()[i - entries.size()]);
      },
      cfg, progress, &ctx.bytes, std::move(stop));
  if (dataflow) {
    s.dataflow = true;
    s.dataflow_links = dataflow->stats().links;
    s.dataflow_tensors = dataflow->stats().checked_tensors;
    s.dataflow_hashed = dataflow->stats().tensors_hashed;
    s.dataflow_hashed_bytes = dataflow->stats().bytes_hashed;
    s.dataflow_link_seconds = dataflow->stats().seconds;
    s.dataflow_check_seconds = dataflow->check_seconds();
  }
  if (ctx.error_dir_made) s.error_data_dir = ctx.error_data_dir;
  s.error_data_failures = ctx.error_data_failures;
  s.error_data_problem = ctx.error_data_problem;
  if (cfg.group) {
    // Every rank saved the error data of the APIs it checked: the summary reports them all (the first problem
    // by rank), on every rank.
    detail::WireOut mine;
    mine.str(s.error_data_dir);
    mine.u64(s.error_data_failures);
    mine.str(s.error_data_problem);
    const std::vector<std::string> all = cfg.group->gather(mine.bytes());
    detail::WireOut joined;
    if (cfg.group->rank() == 0) {
      std::string dir, problem;
      std::uint64_t failures = 0;
      for (const std::string& bytes : all) {
        detail::WireIn in(bytes);
        const std::string d = in.str();
        const std::uint64_t f = in.u64();
        const std::string p = in.str();
        if (dir.empty()) dir = d;
        if (problem.empty()) problem = p;
        failures += f;
      }
      joined.str(dir);
      joined.u64(failures);
      joined.str(problem);
    }
    cfg.group->broadcast(joined.bytes());
    detail::WireIn in(joined.bytes());
    s.error_data_dir = in.str();
    s.error_data_failures = in.u64();
    s.error_data_problem = in.str();
  }
  std::set<std::string> dumped;
  for (const auto& [name, e] : maps.forward)
    if (const std::optional<ApiName> api = parse_api_name(name)) dumped.insert(api->name);
  for (const auto& [list, entries_of_list] :
       {std::pair{"white_list", &ctx.config.white_list}, std::pair{"black_list", &ctx.config.black_list}})
    for (const std::string& entry : *entries_of_list)
      if (!dumped.count(entry)) s.unmatched_list_entries.push_back(std::string(list) + ": " + entry);
  return s;
}

}  // namespace probe

namespace probe::rut {

struct RecordChecker::State {
  Context ctx;
  std::unique_ptr<ApiChecker> checker;
};

RecordChecker::RecordChecker(const RunUtOptions& options, Framework framework, const RunnerRegistry& registry,
                             const Standards& standards, std::string error_data_dir)
    : state_(std::make_unique<State>()) {
  require_checker_framework(framework);
  Context& ctx = state_->ctx;
  ctx.options = &options;
  if (!options.config_path.empty()) ctx.config = load_run_ut_config(options.config_path);
  ctx.framework = framework;
  ctx.runner_fw = framework;
  ctx.registry = &registry;
  ctx.standards = &standards;
  ctx.format = &run_ut_format(framework);
  if (options.save_error_data) ctx.error_data_dir = std::move(error_data_dir);
  state_->checker = std::make_unique<ApiChecker>(ctx);
}

RecordChecker::~RecordChecker() = default;

std::optional<std::string> RecordChecker::api_of(const online::Frame& record) const {
  const RunUtKey key = classify_run_ut_key(record.entry().key);
  if (key.kind != RunUtKey::Kind::Forward) return std::nullopt;
  if (state_->ctx.framework == Framework::MindSpore && !mindspore_bench_name(key.full_name, false))
    return std::nullopt;  // §7.1: not checkable, ignored as offline
  return key.full_name;
}

ApiRows RecordChecker::check(const std::string& full, const online::Frame& record) const {
  const TensorSource source{&record.header, &record};
  return state_->checker->check(full, record.entry(), source);
}

std::uint64_t RecordChecker::tensor_bytes() const { return state_->ctx.bytes.load(); }

std::string RecordChecker::error_data_dir_written() const {
  std::lock_guard lock(state_->ctx.error_dir_mutex);
  return state_->ctx.error_dir_made ? state_->ctx.error_data_dir : std::string();
}

std::size_t RecordChecker::error_data_failures() const {
  std::lock_guard lock(state_->ctx.error_dir_mutex);
  return state_->ctx.error_data_failures;
}

std::string RecordChecker::error_data_problem() const {
  std::lock_guard lock(state_->ctx.error_dir_mutex);
  return state_->ctx.error_data_problem;
}

}  // namespace probe::rut
