// probe::OnlineChecker: a bounded queue of executed ops, worker threads that bench, judge and write them.
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "io/TensorIo.h"
#include "probe/api_name.h"
#include "probe/csv.h"
#include "probe/error.h"
#include "probe/error_bound.h"
#include "probe/metrics.h"
#include "probe/number_format.h"
#include "probe/online_checker.h"
#include "probe/output_compare.h"
#include "probe/tensor_file.h"
#include "run_ut/RunSetup.h"
#include "runners/LazyBlas.h"
#include "standards/ErrorBound.h"
#include "support/DataFiles.h"
#include "support/Timestamp.h"
#include "support/UninitStorage.h"
#include "support/WorkerPool.h"

namespace fs = std::filesystem;

namespace probe {
namespace {

bool valid_name_chars(std::string_view s) {
  if (s.empty() || s.size() > 200) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) return false;
  return true;
}

// "Aten.add.Tensor" / "add.Tensor" / "add" → registry key "Aten.add.Tensor" and short name "add";
// "Functional.gelu" → "Functional.gelu" and "gelu". A name whose first segment is not capitalised is an aten
// op name as PtdbgDispatch reports it. nullopt for a name parse_api_name rejects (an empty segment).
struct OpName {
  std::string key, short_name;
};
std::optional<OpName> split_op(std::string_view api) {
  const bool has_prefix =
      api.find('.') != std::string_view::npos && std::isupper(static_cast<unsigned char>(api[0]));
  OpName n;
  n.key = has_prefix ? std::string(api) : "Aten." + std::string(api);
  const std::optional<ApiName> parsed = parse_api_name(n.key);
  if (!parsed) return std::nullopt;
  n.short_name = parsed->prefix == "Aten" ? std::string(parsed->op()) : parsed->name;
  return n;
}

bool listed(const std::vector<std::string>& list, std::string_view api, const OpName& n) {
  for (const auto& e : list)
    if (e == api || e == n.short_name || e == n.key) return true;
  return false;
}

std::vector<std::string> shipped_black_list() {
  const std::string path = detail::data_file_path("online_dispatch.json");
  const rapidjson::Document doc = detail::parse_data_json(path, "online dispatch black list");
  const rapidjson::Value& root = doc;
  if (!root.IsObject() || !root.HasMember("aten_ops_blacklist") || !root["aten_ops_blacklist"].IsArray())
    throw Error(ErrorKind::Format, "expected an array", path, "aten_ops_blacklist");
  std::vector<std::string> out;
  for (const auto& v : root["aten_ops_blacklist"].GetArray()) {
    if (!v.IsString()) throw Error(ErrorKind::Format, "expected strings", path, "aten_ops_blacklist");
    out.emplace_back(v.GetString(), v.GetStringLength());
  }
  return out;
}

// The one copy check() makes of a view: contiguous, in the caller's dtype (conversion is the workers' job).
Tensor copy_view(const TensorView& v, std::string_view api) {
  const auto bad = [&](const std::string& why) {
    return Error(ErrorKind::InvalidArgument, "tensor view: " + why, {}, {}, std::string(api));
  };
  const std::int64_t n = numel(v.shape);
  if (n > 0 && v.data == nullptr) throw bad("null data");
  if (v.strides.empty()) {
    // memcpy writes every byte, so the copy starts uninitialised: zero-filling first would double the
    // writes on the caller's thread (and fault in fresh pages twice as slowly).
    Tensor t = detail::uninitialized_tensor(v.dtype, v.shape);
    if (n > 0) std::memcpy(t.mutable_bytes(), v.data, t.nbytes());
    return t;
  }
  if (v.strides.size() != v.shape.size()) throw bad("strides and shape differ in length");
  for (std::int64_t s : v.strides)
    if (s < 0) throw bad("negative strides are not supported");
  if (n == 0) return Tensor::zeros(v.dtype, v.shape);
  return io::materialise(v.dtype, v.shape, v.strides, static_cast<const std::byte*>(v.data));
}

Value copy_value(const Value& v) {
  if (v.is_tensor()) return Value(v.tensor().clone());
  if (v.is_list()) {
    std::vector<Value> items;
    items.reserve(v.list().size());
    for (const auto& i : v.list()) items.push_back(copy_value(i));
    return Value(std::move(items), std::get<ValueList>(v.storage()).is_tuple);
  }
  return v;
}

Value copy_arg(const OnlineArg& a, std::string_view api) {
  if (const auto* view = std::get_if<TensorView>(&a)) return Value(copy_view(*view, api));
  return copy_value(std::get<Value>(a));
}

std::string shape_list(const Shape& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

struct Stats {
  std::string max = "N/A", min = "N/A", mean = "N/A";
};
Stats stats_of(const Value& v) {
  Stats s;
  if (!v.is_tensor() || v.tensor().numel() == 0) return s;
  const std::vector<double> d = v.tensor().to_doubles();
  double mx = d[0], mn = d[0], sum = 0;
  for (double x : d) {
    mx = std::isnan(x) || x > mx ? x : mx;
    mn = std::isnan(x) || x < mn ? x : mn;
    sum += x;
  }
  return {python_repr(mx), python_repr(mn), python_repr(sum / static_cast<double>(d.size()))};
}

std::string dtype_text(const Value& v) {
  if (v.is_tensor()) return std::string(torch_name(v.tensor().dtype()));
  return std::string(to_string(v.kind()));
}

// Saves `v` (tensor, number or nested list of them) as {stem}[.i[.j]].npy files; other leaves are skipped,
// as PtdbgDispatch saves only bool/int/float/tensor leaves.
void save_leaves(const std::string& stem, const Value& v) {
  if (v.is_list()) {
    const auto& items = v.list();
    for (std::size_t i = 0; i < items.size(); ++i) save_leaves(stem + "." + std::to_string(i), items[i]);
    return;
  }
  Tensor t;
  switch (v.kind()) {
    case Value::Kind::Tensor:
      t = v.tensor();
      break;
    case Value::Kind::Bool:
      t = Tensor::scalar<bool>(v.as_bool());
      break;
    case Value::Kind::Int:
      t = Tensor::scalar<std::int64_t>(v.as_int());
      break;
    case Value::Kind::Float:
      t = Tensor::scalar<double>(v.as_double());
      break;
    default:
      return;
  }
  save_npy(stem + ".npy", t);
}

struct Job {
  std::string api;
  OpName name;
  std::int64_t idx = 0;
  OnlineCallSite site;
  ApiCall inputs;
  std::vector<Value> outputs;
};

}  // namespace

const std::vector<std::string>& online_details_header() {
  static const std::vector<std::string> h = {
      "NPU Name",         "Bench Name",         "NPU Dtype",      "Bench Dtype",
      "NPU Tensor Shape", "Bench Tensor Shape", "NPU max",        "NPU min",
      "NPU mean",         "Bench max",          "Bench min",      "Bench mean",
      "Cosine",           "MaxAbsErr",          "MaxRelativeErr", "Accuracy Reached or Not",
      "NPU_Stack_Info",   "Err_message"};
  return h;
}

namespace {

// One op's line of the result file: the rule's verdict (Skip: not judged, `message` says why).
struct OnlineResult {
  std::string name;
  Status status = Status::Skip;
  std::string message;
  bool backward = false;  // an op of the backward pass: the verdict goes in the backward column
};

// One output's line of the Documented rule's details file.
struct OnlineDetail {
  std::string name, device_dtype, bench_dtype, device_shape, bench_shape;
  Stats device, bench;
  std::string cosine = "N/A", max_abs = "N/A", max_rel = "N/A", message;
  AccuracyReached reached = AccuracyReached::None;
};

// The online checker's two files in one place: headers and cells of each rule's rows.
class OnlineRowFormat {
 public:
  explicit OnlineRowFormat(OnlineRule rule) : rule_(rule) {}
  const CsvRow& result_header() const { return result_csv_header(); }
  const CsvRow& details_header() const {
    return rule_ == OnlineRule::Documented ? online_details_header() : details_csv_header();
  }
  // The Documented rule answers True/False, the run_ut rule with its status; an op not judged is SKIP.
  CsvRow result_cells(const OnlineResult& r) const {
    std::string verdict(to_string(r.status));
    if (rule_ == OnlineRule::Documented && r.status != Status::Skip)
      verdict = r.status == Status::Pass ? "True" : "False";
    if (r.backward) return {r.name, "Nan", verdict, r.message};
    return {r.name, verdict, "Nan", r.message};
  }
  CsvRow details_cells(const OnlineDetail& d) const {
    return {d.name,
            d.name,
            d.device_dtype,
            d.bench_dtype,
            d.device_shape,
            d.bench_shape,
            d.device.max,
            d.device.min,
            d.device.mean,
            d.bench.max,
            d.bench.min,
            d.bench.mean,
            d.cosine,
            d.max_abs,
            d.max_rel,
            std::string(to_string(d.reached)),
            "",
            d.message};
  }
  CsvRow details_cells(const DetailRow& d) const { return d.to_csv(); }

 private:
  OnlineRule rule_;
};

}  // namespace

struct OnlineChecker::Impl {
  OnlineCheckerOptions o;
  RunnerRegistry registry;
  std::optional<Standards> standards;
  std::vector<std::string> black_list;
  std::string run_dir, npu_dir, cpu_dir;

  mutable std::mutex mu;  // the counters, the summary and the unsupported ops
  std::unordered_map<std::string, std::int64_t> counters;
  OnlineCheckerSummary sum;
  std::set<std::string> unsupported;

  std::mutex out_mu;  // CSV rows of one op stay together
  std::unique_ptr<CsvWriter> result_csv, details_csv;
  std::optional<OnlineRowFormat> format;  // from the rule, at construction
  // The workers: `queue_capacity` ops copied and waiting at most, rows written as each op finishes.
  std::unique_ptr<detail::WorkerPool> pool;

  enum class Outcome { Pass, Fail, Skip, Unsupported };

  // One op on a worker: checked, its rows written, its outcome counted.
  void run(Job& job) {
    Outcome outcome = Outcome::Skip;
    try {
      outcome = process(job);
    } catch (const std::exception& e) {
      write_rows(
          {job_result_name(job), Status::Skip, std::string("check failed: ") + e.what(), job.site.backward},
          {});
    }
    std::lock_guard lock(mu);
    switch (outcome) {
      case Outcome::Pass:
        ++sum.passed;
        break;
      case Outcome::Fail:
        ++sum.failed;
        break;
      case Outcome::Skip:
        ++sum.skipped;
        break;
      case Outcome::Unsupported:
        ++sum.unsupported;
        unsupported.insert(job.api);
        break;
    }
  }

  // DECISIONS D21: the call number in names. msprobe's own layout (the documented rule) keeps its 1-based
  // "{aten}_{idx}_output"; probe's rules write run_ut's names, numbered from 0 as dumps, run_ut and the
  // online server number calls ("Aten.mm.default.0", "Aten.mm.default.0.forward.output.0").
  std::int64_t number(const Job& j) const { return o.rule == OnlineRule::Documented ? j.idx : j.idx - 1; }
  std::string job_stem(const Job& j) const { return j.api + "_" + std::to_string(number(j)); }
  // DECISIONS D8 (LibTorch adapter): the step, when known, leads every row name of the op.
  static std::string step_prefix(const Job& j) {
    return j.site.step ? "step" + std::to_string(*j.site.step) + "." : "";
  }
  std::string job_result_name(const Job& j) const {
    return step_prefix(j) + (o.rule == OnlineRule::Documented ? job_stem(j) + "_output"
                                                              : j.name.key + "." + std::to_string(number(j)));
  }
  static const char* direction(const Job& j) { return j.site.backward ? ".backward" : ".forward"; }

  void write_rows(const OnlineResult& result, const std::vector<CsvRow>& details) {
    const CsvRow cells = format->result_cells(result);
    std::lock_guard lock(out_mu);
    for (const auto& r : details) details_csv->write_row(r);
    result_csv->write_row(cells);
  }

  bool wants_dump(const Job& j, bool passed) const {
    switch (o.dump_mode) {
      case OnlineDumpMode::Off:
        return false;
      case OnlineDumpMode::All:
        return true;
      case OnlineDumpMode::List:
        return listed(o.api_list, j.api, j.name);
      case OnlineDumpMode::Auto:
        return !passed;  // DECISIONS D8: only failing ops, as the documentation says
    }
    return false;
  }

  void dump(const Job& j, const std::vector<Value>& bench_outputs) {
    const std::string stem = job_stem(j);
    for (std::size_t i = 0; i < j.inputs.args.size(); ++i)
      save_leaves(npu_dir + "/" + stem + "_input." + std::to_string(i), j.inputs.args[i]);
    for (const auto& [k, v] : j.inputs.kwargs) save_leaves(npu_dir + "/" + stem + "_input_" + k, v);
    // A single output has no index (PtdbgDispatch writes {op}_{idx}_output.npy).
    auto save_outputs = [&](const std::string& dir, const std::vector<Value>& outs) {
      if (outs.size() == 1 && !outs[0].is_list())
        save_leaves(dir + "/" + stem + "_output", outs[0]);
      else
        save_leaves(dir + "/" + stem + "_output", Value(outs));
    };
    save_outputs(npu_dir, j.outputs);
    save_outputs(cpu_dir, bench_outputs);
  }

  // DECISIONS D14 over run_ut's rows of one op: the magnitude bench is the op's bench runner on the inputs'
  // absolute values; an op whose magnitude bench cannot run keeps run_ut's verdict and says why.
  Status error_bound(const Job& j, const std::vector<Value>& ben, const std::vector<Value>& dev,
                     std::vector<DetailRow>& rows) {
    std::vector<Value> magnitude;
    std::vector<std::int64_t> accumulation;
    if (error_bound_support(j.name.key).needs_magnitude) {
      try {
        magnitude = detail::value_leaves(error_bound_magnitude(registry, o.framework, j.name.key, j.inputs));
      } catch (const Error& e) {
        for (auto& row : rows)
          row.message = "no magnitude bench (" + std::string(e.what()) + "): " + row.message;
      }
    }
    for (const auto& b : ben)
      accumulation.push_back(
          b.is_tensor() ? error_bound_accumulation(j.name.key, j.inputs, b.tensor().shape()) : 1);
    std::vector<bool> exact_scalars;
    for (const auto& d : dev)
      exact_scalars.push_back(d.is_tensor() && error_bound_exact_scalars(j.inputs, d.tensor().dtype()));
    return detail::rejudge_rows(j.name.key, ben, dev, magnitude, accumulation, rows, 0,
                                standards->aggregation, false, false, exact_scalars);
  }

  // Benches, judges, writes the rows of and (per dump_mode) saves one op.
  Outcome process(Job& j) {
    const std::string result_name = job_result_name(j);
    if (!registry.find(o.framework, j.name.key)) {
      write_rows({result_name, Status::Skip, "no bench runner for " + j.name.key, j.site.backward}, {});
      return Outcome::Unsupported;
    }
    ApiResult bench;
    try {
      bench = registry.run_forward(o.framework, j.name.key, j.inputs, RunnerRole::Bench);
    } catch (const Error& e) {
      write_rows({result_name, Status::Skip, e.what(), j.site.backward}, {});
      return Outcome::Skip;
    }
    const std::vector<Value> dev = detail::value_leaves(j.outputs), ben = detail::value_leaves(bench.outputs);

    bool passed = true;
    std::vector<CsvRow> details;
    std::string message;
    if (o.rule == OnlineRule::Documented) {
      if (dev.size() != ben.size()) {
        passed = false;
        message = fmt::format("the device gave {} outputs, the bench {}", dev.size(), ben.size());
      }
      for (std::size_t k = 0; k < std::min(dev.size(), ben.size()); ++k) {
        OnlineDetail row;
        row.name =
            output_row_name(result_name, j.site.backward ? ApiDirection::Backward : ApiDirection::Forward, k);
        row.device_dtype = dtype_text(dev[k]);
        row.bench_dtype = dtype_text(ben[k]);
        row.device_shape = dev[k].is_tensor() ? shape_list(dev[k].tensor().shape()) : "[]";
        row.bench_shape = ben[k].is_tensor() ? shape_list(ben[k].tensor().shape()) : "[]";
        row.device = stats_of(dev[k]);
        row.bench = stats_of(ben[k]);
        if (dev[k].is_tensor() && ben[k].is_tensor() && is_floating(dev[k].tensor().dtype()) &&
            is_floating(ben[k].tensor().dtype())) {
          const DumpCompareResult r = dump_compare(dev[k].tensor(), ben[k].tensor());
          row.cosine = r.cosine.format(12);
          row.max_abs = r.max_abs.format(12);
          row.max_rel = r.max_rel.format(12);
          row.reached = dump_accuracy_reached(r.cosine, r.max_abs);
          row.message = r.message;
          if (row.reached == AccuracyReached::None) {
            // DECISIONS D8: the documented rule needs a cosine; where there is none (one element, all zeros)
            // the output passes only within its absolute bound, never by default.
            row.reached = r.max_abs.is_number() && r.max_abs.value <= 0.001 ? AccuracyReached::Yes
                                                                            : AccuracyReached::No;
            row.message += "Cosine unavailable: judged by MaxAbsErr <= 0.001.";
          }
        } else if (dev[k].is_tensor() && ben[k].is_tensor()) {
          const Tensor& a = dev[k].tensor();
          const Tensor& b = ben[k].tensor();
          const bool same = a.shape() == b.shape() && binary_error_rate(b.to(a.dtype()), a) == 0;
          row.reached = same ? AccuracyReached::Yes : AccuracyReached::No;
          row.message = same ? "" : "integer/bool outputs differ (compared exactly)";
        } else if (dev[k].is_number() && ben[k].is_number()) {
          const double a = dev[k].as_double(), b = ben[k].as_double();
          row.max_abs = python_repr(std::abs(a - b));
          row.reached = a == b ? AccuracyReached::Yes : AccuracyReached::No;
        } else if (dev[k].is_none() && ben[k].is_none()) {
          row.reached = AccuracyReached::Yes;
        } else {
          row.reached = AccuracyReached::No;
          row.message = "device and bench outputs are of different kinds";
        }
        passed &= row.reached == AccuracyReached::Yes;
        details.push_back(format->details_cells(row));
      }
      write_rows({result_name, passed ? Status::Pass : Status::Error, message, j.site.backward}, details);
    } else {
      OutputCompareInput in;
      in.full_api_name = j.name.key + "." + std::to_string(number(j));
      in.bench_output = Value(ben);
      in.device_output = Value(dev);
      OutputCompareResult r;
      try {
        r = compare_output(in, *standards);
      } catch (const Error& e) {
        write_rows({result_name, Status::Skip, e.what(), j.site.backward}, {});
        return Outcome::Skip;
      }
      if (o.rule == OnlineRule::ErrorBound) r.forward_status = error_bound(j, ben, dev, r.rows);
      passed = r.forward_status == Status::Pass;
      // compare_output names the rows "{full_api_name}.forward.output.N": the op's direction and step
      // instead.
      const std::string forward = in.full_api_name + ".forward";
      for (auto& row : r.rows) {
        if (row.api_name.rfind(forward, 0) == 0)
          row.api_name =
              step_prefix(j) + in.full_api_name + direction(j) + row.api_name.substr(forward.size());
        details.push_back(format->details_cells(row));
      }
      write_rows({result_name, r.forward_status, "", j.site.backward}, details);
    }
    if (wants_dump(j, passed)) dump(j, bench.outputs);
    return passed ? Outcome::Pass : Outcome::Fail;
  }
};

OnlineChecker::OnlineChecker(OnlineCheckerOptions options, RunnerRegistry registry)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  if (options.workers < 1)
    throw Error(ErrorKind::InvalidArgument, "must be >= 1", {}, "OnlineCheckerOptions.workers");
  rut::require_checker_framework(options.framework, "OnlineCheckerOptions.framework");
  if (options.queue_capacity < 1)
    throw Error(ErrorKind::InvalidArgument, "must be >= 1", {}, "OnlineCheckerOptions.queue_capacity");
  for (char c : options.tag)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
      throw Error(ErrorKind::InvalidArgument, "tag may contain only [A-Za-z0-9_-]", {},
                  "OnlineCheckerOptions.tag");
  if (options.rank < 0)
    throw Error(ErrorKind::InvalidArgument, "must be >= 0", {}, "OnlineCheckerOptions.rank");
  if (options.dump_mode == OnlineDumpMode::List && options.api_list.empty())
    throw Error(ErrorKind::InvalidArgument, "dump_mode List needs api_list", {},
                "OnlineCheckerOptions.api_list");
  std::error_code ec;
  if (options.dump_path.empty() || !fs::is_directory(options.dump_path, ec))
    throw Error(ErrorKind::Io, "dump_path must be an existing directory", options.dump_path,
                "OnlineCheckerOptions.dump_path");
  // DECISIONS D21: run_ut's 14-digit timestamp is accepted too (milliseconds 000), so one stamp names
  // both runs; the directory keeps msprobe's 17 digits and the CSVs its 14.
  const bool given_ts = !options.timestamp.empty();
  std::string ts = given_ts ? options.timestamp : detail::local_timestamp_ms();
  if (ts.size() == 14) ts += "000";
  if (ts.size() != 17 || ts.find_first_not_of("0123456789") != std::string::npos)
    throw Error(ErrorKind::InvalidArgument, "expected 14 digits YYYYmmddHHMMSS or 17 YYYYmmddHHMMSSmmm", {},
                "OnlineCheckerOptions.timestamp");
  m.black_list = options.black_list ? *options.black_list : shipped_black_list();
  if (options.rule != OnlineRule::Documented) m.standards = Standards::builtin(options.profile);
  m.o = std::move(options);
  m.registry = std::move(registry);

  // The run directory is claimed, not shared: mkdir fails when the name exists, so two checkers never
  // write into (or overwrite) one run's files. Without a given timestamp, a name another checker took in
  // the same millisecond moves on to the next free millisecond; a given timestamp that is taken is an error.
  auto run_dir_for = [&](const std::string& stamp) {
    return (fs::path(m.o.dump_path) / ("msprobe_" + (m.o.tag.empty() ? "" : m.o.tag + "_") + "rank" +
                                       std::to_string(m.o.rank) + "_" + stamp))
        .string();
  };
  for (int attempt = 0;; ++attempt) {
    m.run_dir = run_dir_for(ts);
    if (::mkdir(m.run_dir.c_str(), 0777) == 0) break;
    const int err = errno;
    if (err != EEXIST)
      throw Error(ErrorKind::Io, std::string("cannot create the run directory: ") + std::strerror(err),
                  m.run_dir);
    if (given_ts)
      throw Error(ErrorKind::InvalidArgument,
                  "the run directory exists: another checker or an earlier run used this timestamp",
                  m.run_dir, "OnlineCheckerOptions.timestamp");
    if (attempt >= 10000)
      throw Error(ErrorKind::Io, "no free run directory name after 10000 milliseconds", m.run_dir);
    std::string next = ts;
    while (next == ts) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      next = detail::local_timestamp_ms();
    }
    ts = next;
  }
  m.npu_dir = m.run_dir + "/npu";
  m.cpu_dir = m.run_dir + "/cpu";
  if (m.o.dump_mode != OnlineDumpMode::Off) {
    fs::create_directories(m.npu_dir, ec);
    fs::create_directories(m.cpu_dir, ec);
    if (ec) throw Error(ErrorKind::Io, "cannot create npu/ and cpu/: " + ec.message(), m.run_dir);
  }
  const std::string ts14 = ts.substr(0, 14);
  m.sum.run_dir = m.run_dir;
  m.sum.result_csv = m.run_dir + "/accuracy_checking_result_" + ts14 + ".csv";
  m.sum.details_csv = m.run_dir + "/accuracy_checking_details_" + ts14 + ".csv";
  m.format.emplace(m.o.rule);
  m.result_csv = std::make_unique<CsvWriter>(m.sum.result_csv, m.format->result_header());
  m.details_csv = std::make_unique<CsvWriter>(m.sum.details_csv, m.format->details_header());
  detail::WorkerPool::Options po;
  po.threads = m.o.workers;
  po.max_waiting = m.o.queue_capacity;
  m.pool = std::make_unique<detail::WorkerPool>(po);
}

OnlineChecker::~OnlineChecker() { impl_->pool->finish(); }

bool OnlineChecker::check(std::string_view api, const OnlineCall& inputs,
                          const std::vector<OnlineArg>& outputs, const OnlineCallSite& site) {
  Impl& m = *impl_;
  std::optional<OpName> name = valid_name_chars(api) ? split_op(api) : std::nullopt;
  if (!name)
    throw Error(ErrorKind::InvalidArgument,
                "op names are 1-200 characters of [A-Za-z0-9_.-] in non-empty '.'-separated segments", {},
                "api", std::string(api));
  Job job;
  job.api = std::string(api);
  job.name = std::move(*name);
  job.site = site;
  {
    std::lock_guard lock(m.mu);
    ++m.sum.calls;
    if (listed(m.black_list, api, job.name)) {
      ++m.sum.blacklisted;
      return false;
    }
  }
  // The slot is ours while we copy outside any lock.
  std::optional<detail::WorkerPool::Slot> slot =
      m.pool->reserve(0, m.o.backpressure != Backpressure::Drop, [&] {
        std::lock_guard lock(m.mu);
        job.idx = ++m.counters[job.api];
        return std::uint64_t{0};
      });
  if (!slot) {
    std::lock_guard lock(m.mu);
    ++m.sum.dropped;
    return false;
  }
  try {
    for (const auto& a : inputs.args) job.inputs.args.push_back(copy_arg(a, api));
    for (const auto& [k, a] : inputs.kwargs) job.inputs.kwargs.emplace_back(k, copy_arg(a, api));
    for (const auto& a : outputs) job.outputs.push_back(copy_arg(a, api));
  } catch (...) {
    {
      std::lock_guard lock(m.mu);
      --m.sum.calls;
    }
    throw;  // the slot is given back unused
  }
  m.pool->commit(std::move(*slot), [&m, j = std::make_shared<Job>(std::move(job))]() {
    // The bench shares the process with the program being checked: its GEMMs stay on this worker.
    const runners::SerialBlasScope serial_blas;
    m.run(*j);
    return detail::WorkerPool::Delivery();
  });
  return true;
}

void OnlineChecker::flush() { impl_->pool->wait_idle(); }

OnlineCheckerSummary OnlineChecker::summary() const {
  const std::size_t pending = impl_->pool->outstanding();
  std::lock_guard lock(impl_->mu);
  OnlineCheckerSummary s = impl_->sum;
  s.pending = pending;
  s.unsupported_ops.assign(impl_->unsupported.begin(), impl_->unsupported.end());
  return s;
}

}  // namespace probe
