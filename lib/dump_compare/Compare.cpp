// One NPU/bench dump.json pair compared into msprobe's result table (dump-and-compare §3.2, §3.5-§3.9).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include "dump_compare/DumpCompareInternal.h"
#include "dump_compare/DumpVerdicts.h"
#include "probe/csv.h"
#include "probe/error.h"
#include "probe/metrics.h"
#include "probe/number_format.h"
#include "support/DataFiles.h"
#include "support/ThreadPool.h"

namespace probe {

const char* to_string(DumpCompareMode mode) noexcept {
  switch (mode) {
    case DumpCompareMode::RealData:
      return "all";
    case DumpCompareMode::Statistics:
      return "summary";
    case DumpCompareMode::Md5:
      return "md5";
  }
  return "?";
}

namespace dump_compare_detail {
namespace fs = std::filesystem;

namespace {

struct Cell {
  std::string text;
  CellKind kind = CellKind::Text;
};
Cell text(std::string s) { return {std::move(s), CellKind::Text}; }
Cell number(double v) { return {python_repr(v), CellKind::Number}; }
Cell boolean(bool b) { return {b ? "True" : "False", CellKind::Bool}; }
Cell stat(const StatCell& s) {
  return {s.text, s.numeric && !std::isnan(s.value) ? CellKind::Number : CellKind::Text};
}
Cell metric(const MetricValue& m) {
  if (m.is_number()) return number(m.value);
  return text(m.kind == MetricKind::Blank ? "" : m.text);
}

// Numbers the highlight rules look at, per row.
struct RowNums {
  std::optional<double> npu_max, bench_max, max_diff, one_thousandth, cosine, max_rel;
};

bool has_md5(const Dump& d) {
  for (const DumpEntry& e : d.entries())
    for (const TensorInfo* t : e.tensors())
      if (!t->md5.empty()) return true;
  return false;
}

DumpCompareMode detect_mode(const Dump& npu, const Dump& bench) {
  if (npu.task() != bench.task())
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("the NPU dump's task '{}' differs from the bench dump's task '{}'", npu.task(),
                            bench.task()),
                bench.path(), "task");
  if (npu.task() == "tensor") return DumpCompareMode::RealData;
  if (npu.task() == "statistics") {
    const bool a = has_md5(npu), b = has_md5(bench);
    if (a != b)
      throw Error(ErrorKind::InvalidArgument, "md5 values are present in only one of the two dumps",
                  a ? bench.path() : npu.path(), "md5");
    return a ? DumpCompareMode::Md5 : DumpCompareMode::Statistics;
  }
  throw Error(ErrorKind::Unsupported,
              fmt::format("task '{}' cannot be compared (tensor or statistics only)", npu.task()), npu.path(),
              "task");
}

std::optional<double> num(const StatCell& s) {
  if (s.numeric) return s.value;
  return std::nullopt;
}

std::optional<double> num(const MetricValue& m) {
  if (m.is_number()) return m.value;
  return std::nullopt;
}

const std::vector<std::string> kPrefix = {"NPU Name",          "Bench Name",         "NPU Dtype",
                                          "Bench Dtype",       "NPU Tensor Shape",   "Bench Tensor Shape",
                                          "NPU Requires_grad", "Bench Requires_grad"};
const std::vector<std::string> kStatCols = {"NPU max",   "NPU min",   "NPU mean",   "NPU l2norm",
                                            "Bench max", "Bench min", "Bench mean", "Bench l2norm"};

std::vector<std::string> header_of(DumpCompareMode mode, bool stack) {
  std::vector<std::string> h = kPrefix;
  auto add = [&](std::initializer_list<const char*> cols) {
    for (const char* c : cols) h.emplace_back(c);
  };
  switch (mode) {
    case DumpCompareMode::RealData:
      add({"Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio",
           "Five Thousandths Err Ratio"});
      h.insert(h.end(), kStatCols.begin(), kStatCols.end());
      add({"Requires_grad Consistent", "Accuracy Reached or Not", "Err_message"});
      if (stack) add({"NPU_Stack_Info"});
      add({"Data_name"});
      break;
    case DumpCompareMode::Statistics:
      add({"Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr", "MinRelativeErr",
           "MeanRelativeErr", "NormRelativeErr"});
      h.insert(h.end(), kStatCols.begin(), kStatCols.end());
      add({"Requires_grad Consistent", "Result", "Err_message"});
      if (stack) add({"NPU_Stack_Info"});
      break;
    case DumpCompareMode::Md5:
      add({"NPU MD5", "BENCH MD5", "Requires_grad Consistent", "Result"});
      if (stack) add({"NPU_Stack_Info"});
      break;
  }
  return h;
}

constexpr const char* kZeroDimMessage =
    "This is type of 0-d tensor, can not calculate 'Cosine', 'EucDist', 'One Thousandth Err Ratio' and "
    "'Five Thousandths Err Ratio'. ";

struct Context {
  const Dump& npu_dump;
  const Dump& bench_dump;
  const std::vector<OpItem>& npu;
  const std::vector<OpItem>& bench;
  const MatchResult& match;
  DumpCompareMode mode;
  bool stack;
  bool msprobe_profile;
  bool fuzzy;
  const DumpCompareThresholds& thresholds;
};

struct BuiltRow {
  std::vector<Cell> cells;
  RowNums nums;
  bool suspect = false;
  bool rg_consistent = true;
  std::string unreadable;  ///< the tensor file that could not be read, and why
};

std::vector<Cell> prefix_cells(const OpItem& n, const OpItem* b) {
  const std::string na = "N/A";
  return {text(n.name),  text(b ? b->name : na),  text(n.dtype),         text(b ? b->dtype : na),
          text(n.shape), text(b ? b->shape : na), text(n.requires_grad), text(b ? b->requires_grad : na)};
}

const OpItem* matched_bench(const Context& c, std::size_t i) {
  return c.match.bench[i] ? &c.bench[*c.match.bench[i]] : nullptr;
}

// The columns and requires_grad check that every compare mode starts its row with.
BuiltRow start_row(const OpItem& n, const OpItem* b) {
  BuiltRow row;
  row.cells = prefix_cells(n, b);
  row.rg_consistent = n.requires_grad == (b ? b->requires_grad : std::string("N/A"));
  return row;
}

Cell stack_cell(const OpItem& n) {
  if (n.first_of_entry && n.stack) return text(python_list_repr(*n.stack));
  return text("N/A");
}

BuiltRow real_data_row(const Context& c, std::size_t i) {
  const OpItem& n = c.npu[i];
  const OpItem* b = matched_bench(c, i);
  BuiltRow row = start_row(n, b);

  std::string err = b ? "" : "No bench data matched.";
  // msprobe sets (not appends) this, so it replaces "No bench data matched." (§3.8).
  if (!row.rg_consistent) err = "Requires_grad inconsistent. ";
  DumpCompareResult r;
  auto all = [&](const char* t) {
    r.cosine = r.euc_dist = r.max_abs = r.max_rel = r.one_thousandth = r.five_thousandths =
        MetricValue::str(t);
  };
  const std::string bench_dn = b ? b->data_name : "N/A";
  if (n.data_name == "-1") {
    all("unsupported");
    err += "NPU does not have data file.";
  } else if (bench_dn == "-1") {
    all("unsupported");
    err += "Bench does not have data file.";
  } else if (bench_dn == "N/A") {
    all("unsupported");
    err += "Bench api/module unmatched.";
  } else {
    std::optional<Tensor> nt, bt;
    std::string failed, why;
    try {
      failed = n.data_name;
      nt = c.npu_dump.load_tensor(*n.entry, *n.tensor);
      failed = b->data_name;
      bt = c.bench_dump.load_tensor(*b->entry, *b->tensor);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Security) throw;
      nt.reset();
      why = e.what();
    }
    if (!nt || !bt) row.unreadable = why.empty() ? failed : why;
    if (!nt || !bt) {
      all("unsupported");
      err += fmt::format("Dump file: {} not found or read failed.", failed);
    } else {
      // msprobe reads bf16 .pt tensors as float32 before anything else (§3.8), so bf16 vs fp32 is no
      // mismatch.
      if (nt->dtype() == DType::BFloat16) nt = nt->to(DType::Float32);
      if (bt->dtype() == DType::BFloat16) bt = bt->to(DType::Float32);
      r = dump_compare(*nt, *bt);
      std::string msg = r.message;
      // DECISIONS (compare, 0-d message): msprobe HEAD appends the 0-d message 16 times; the probe profile
      // writes it once. The msprobe profile reproduces the repetition.
      if (c.msprobe_profile && nt->ndim() == 0 && nt->numel() == 1) {
        if (auto p = msg.find(kZeroDimMessage); p != std::string::npos) {
          std::string rep;
          for (int k = 0; k < 16; ++k) rep += kZeroDimMessage;
          msg.replace(p, std::string(kZeroDimMessage).size(), rep);
        }
      }
      err += msg;
      if (c.fuzzy && n.name != b->name)
        err += " Fuzzy matching data, the comparison accuracy may be affected.";
    }
  }
  const AccuracyReached acc = detail::dump_accuracy_reached(r.cosine, r.max_abs, c.thresholds);
  for (const MetricValue* m :
       {&r.cosine, &r.euc_dist, &r.max_abs, &r.max_rel, &r.one_thousandth, &r.five_thousandths})
    row.cells.push_back(metric(*m));
  for (const StatCell& s : n.stats) row.cells.push_back(stat(s));
  for (int k = 0; k < 4; ++k) row.cells.push_back(b ? stat(b->stats[k]) : text("N/A"));
  row.cells.push_back(boolean(row.rg_consistent));
  row.cells.push_back(text(std::string(to_string(acc))));
  row.cells.push_back(text(err));
  if (c.stack) row.cells.push_back(stack_cell(n));
  row.cells.push_back(text(python_list_repr({n.data_name, bench_dn})));
  row.suspect = acc == AccuracyReached::No;
  row.nums.npu_max = num(n.stats[0]);
  if (b) row.nums.bench_max = num(b->stats[0]);
  row.nums.max_diff = num(r.max_abs);
  row.nums.one_thousandth = num(r.one_thousandth);
  row.nums.cosine = num(r.cosine);
  return row;
}

BuiltRow statistics_row(const Context& c, std::size_t i) {
  const OpItem& n = c.npu[i];
  const OpItem* b = matched_bench(c, i);
  BuiltRow row = start_row(n, b);
  std::vector<Cell> diffs(4, text("N/A")), rels(4, text("N/A"));
  RowResult result = RowResult::Unmatched;
  std::string err = "No bench data matched.";
  if (b) {
    bool warning = false;
    for (int k = 0; k < 4; ++k) {
      const auto nv = num(n.stats[k]), bv = num(b->stats[k]);
      if (!nv || !bv) continue;
      const StatDiff d = detail::statistics_diff(nv, bv, c.thresholds.statistics_warning);
      diffs[k] = metric(d.diff);
      long long int_diff = 0;  // Python int - int stays an exact int
      if (n.stats[k].integer && b->stats[k].integer &&
          !__builtin_sub_overflow(std::stoll(n.stats[k].text), std::stoll(b->stats[k].text), &int_diff))
        diffs[k].text = std::to_string(int_diff);
      rels[k] = metric(d.relative);
      if (d.diff.is_number() && std::isinf(d.diff.value)) diffs[k].kind = CellKind::Text;
      if (k == 0) row.nums.max_diff = num(d.diff);
      if (k == 0 && d.relative.kind == MetricKind::Text && d.relative.text.ends_with("%"))
        row.nums.max_rel = std::strtod(d.relative.text.c_str(), nullptr) / 100.0;
      warning = warning || d.warning;
    }
    result = warning ? RowResult::Warning : RowResult::None;
    err = warning ? "Need double check api accuracy. " : "";
  }
  if (!row.rg_consistent) err += "Requires_grad inconsistent. ";
  for (auto& d : diffs) row.cells.push_back(d);
  for (auto& r : rels) row.cells.push_back(r);
  for (const StatCell& s : n.stats) row.cells.push_back(stat(s));
  for (int k = 0; k < 4; ++k) row.cells.push_back(b ? stat(b->stats[k]) : text("N/A"));
  // msprobe turns inf/-inf/nan values from "Max diff" on into text with a trailing TAB (§3.6).
  for (std::size_t k = kPrefix.size(); k < row.cells.size(); ++k) {
    Cell& cell = row.cells[k];
    if (cell.text == "inf" || cell.text == "-inf" || cell.text == "nan") {
      cell.text += '\t';
      cell.kind = CellKind::Text;
    }
  }
  row.cells.push_back(boolean(row.rg_consistent));
  row.cells.push_back(text(std::string(to_string(result))));
  row.cells.push_back(text(err));
  if (c.stack) row.cells.push_back(stack_cell(n));
  row.suspect = is_suspect(result);
  row.nums.npu_max = num(n.stats[0]);
  if (b) row.nums.bench_max = num(b->stats[0]);
  return row;
}

BuiltRow md5_row(const Context& c, std::size_t i) {
  const OpItem& n = c.npu[i];
  const OpItem* b = matched_bench(c, i);
  BuiltRow row = start_row(n, b);
  row.cells.push_back(text(n.md5));
  row.cells.push_back(text(b ? b->md5 : "N/A"));
  row.cells.push_back(boolean(row.rg_consistent));
  const RowResult result = !b                ? RowResult::Unmatched
                           : n.md5 == b->md5 ? RowResult::Pass
                                             : RowResult::Different;
  row.cells.push_back(text(std::string(to_string(result))));
  if (c.stack) row.cells.push_back(stack_cell(n));
  row.suspect = is_suspect(result);
  return row;
}

// DECISIONS (compare, CSV injection): msprobe aborts the whole compare when a string in dump.json would start
// a spreadsheet formula (e.g. a str argument "=A1"); probe compares anyway and writes such cells with a
// leading apostrophe, the spreadsheet convention for literal text (csv_escape_formula, the policy of every
// writer: msprobe's pattern plus TAB and CR).
void sanitise(std::string& cell) { cell = csv_escape_formula(std::move(cell)); }

bool is_inf_nan_text(std::string t) {
  if (!t.empty() && t.back() == '\t') t.pop_back();
  return t == "nan" || t == "inf" || t == "-inf";
}

// §3.9: red/yellow rules; messages appended to Err_message.
void highlight(const std::vector<OpItem>& npu, std::vector<BuiltRow>& rows, DumpCompareMode mode,
               std::size_t npu_max_col, std::size_t err_col, std::vector<RowColour>& colours) {
  const std::size_t n = rows.size();
  std::vector<std::vector<std::string>> red(n), yellow(n);
  const bool real = mode == DumpCompareMode::RealData;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& cells = rows[i].cells;
    if (is_inf_nan_text(cells[npu_max_col].text) || is_inf_nan_text(cells[npu_max_col + 1].text))
      red[i].push_back("maximum or minimum is nan, -inf, or inf");
    else if (rows[i].nums.max_diff && std::fabs(*rows[i].nums.max_diff) > 1e10)
      red[i].push_back("maximum absolute error exceeds 1e+10");
  }
  auto three = [&](std::size_t i) {
    const RowNums& r = rows[i].nums;
    return r.npu_max && r.bench_max && r.max_diff;
  };
  for (std::size_t start = 0; start < n;) {
    std::size_t end = start + 1;
    while (end < n && npu[end].entry_key == npu[start].entry_key) ++end;
    for (std::size_t o = start; o < end; ++o) {
      if (npu[o].state != RowState::Output || !red[o].empty() || !three(o)) continue;
      const RowNums& out = rows[o].nums;
      for (std::size_t in = start; in < end; ++in) {
        if ((npu[in].state != RowState::Input && npu[in].state != RowState::Parameters) || !three(in))
          continue;
        const RowNums& inp = rows[in].nums;
        const double a = std::fabs(*inp.max_diff), c = std::fabs(*out.max_diff);
        if (a <= c && a > 1 && c > 1 && std::log10(c) - std::log10(a) >= 1)
          yellow[o].push_back(
              "maximum absolute error of both input/parameters and output exceed 1, with the output larger "
              "by an "
              "order of magnitude");
        if (real) {
          if (inp.one_thousandth && out.one_thousandth) {
            if (*inp.one_thousandth > 0.9 && *out.one_thousandth < 0.6)
              red[o].push_back(
                  "The input/parameter's one thousandth err ratio exceeds 0.9, while the output's is below "
                  "0.6");
            else if (*inp.one_thousandth - *out.one_thousandth > 0.1)
              yellow[o].push_back(
                  "The output's one thousandth err ratio decreases by more than 0.1 compared to the "
                  "input/parameter's");
          }
          if (inp.cosine && out.cosine && *inp.cosine - *out.cosine > 0.1)
            yellow[o].push_back(
                "The output's cosine decreases by more than 0.1 compared to the input/parameter's");
        } else if (out.max_rel) {
          if (*out.max_rel > 0.5) red[o].push_back("maximum relative error exceeds 0.5");
          if (inp.max_rel && *out.max_rel > 0.1 && *inp.max_rel < 0.01)
            yellow[o].push_back(
                "The output's maximum relative error exceeds 0.1, while the input/parameter's is below 0.01");
        }
      }
    }
    start = end;
  }
  for (std::size_t i = 0; i < n; ++i)
    if (!rows[i].rg_consistent) yellow[i].push_back("requires_grad is inconsistent");
  for (std::size_t i = 0; i < n; ++i) {
    const auto& msgs = !red[i].empty() ? red[i] : yellow[i];
    if (msgs.empty()) continue;
    colours[i] = !red[i].empty() ? RowColour::Red : RowColour::Yellow;
    std::string& err = rows[i].cells[err_col].text;
    for (const auto& m : msgs) err += (err.empty() ? "" : "\n") + m;
  }
}

}  // namespace
}  // namespace dump_compare_detail

using namespace dump_compare_detail;

DumpCompareTable compare_dump_files(const std::string& npu_json, const std::string& bench_json,
                                    const std::string& stack_json, const DumpCompareOptions& options,
                                    const DumpCompareThresholds& thresholds,
                                    const DumpCompareProgressFn& progress, std::stop_token stop) {
  return compare_dump_files_ex(npu_json, bench_json, stack_json, options, false, nullptr,
                               {thresholds, progress ? &progress : nullptr, std::move(stop)});
}

DumpCompareTable compare_dump_files(const std::string& npu_json, const std::string& bench_json,
                                    const std::string& stack_json, const DumpCompareOptions& options) {
  return compare_dump_files_ex(npu_json, bench_json, stack_json, options, false, nullptr);
}

DumpCompareTable dump_compare_detail::compare_dump_files_ex(
    const std::string& npu_json, const std::string& bench_json, const std::string& stack_json,
    const DumpCompareOptions& options, bool statistics_only, std::vector<RowFacts>* facts,
    const CompareControl& control) {
  const std::string npu_base = fs::path(npu_json).filename().string();
  const std::string bench_base = fs::path(bench_json).filename().string();
  if (!((npu_base == "dump.json" && bench_base == "dump.json") ||
        (npu_base == "debug.json" && bench_base == "debug.json")))
    throw Error(ErrorKind::InvalidArgument,
                "npu_path and bench_path must both name dump.json files, or both debug.json files", npu_json,
                "npu_path");
  const Dump npu_dump = Dump::open(npu_json);
  const Dump bench_dump = Dump::open(bench_json);
  DumpCompareMode mode = detect_mode(npu_dump, bench_dump);
  // -da compares tensor dumps by the statistics recorded in dump.json, as msprobe does (§3.12).
  if (statistics_only && mode == DumpCompareMode::RealData) mode = DumpCompareMode::Statistics;

  // -f selects the framework of the NPU side; only MindSpore NPU vs PyTorch bench crosses frameworks (§3.2).
  Framework npu_fw = npu_dump.framework();
  if (options.framework) {
    npu_fw = *options.framework;
    if (npu_fw != Framework::PyTorch && npu_fw != Framework::MindSpore)
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("the NPU framework must be PyTorch or MindSpore, got {}", to_string(npu_fw)),
                  {}, "framework");
    if (npu_dump.framework() != Framework::Unknown && npu_dump.framework() != npu_fw)
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("-f {} but the NPU dump is a {} dump", to_string(npu_fw),
                              to_string(npu_dump.framework())),
                  npu_json, "framework");
  }
  const Framework bench_fw = bench_dump.framework();
  MatchConfig cfg;
  cfg.fuzzy = options.fuzzy_match;
  cfg.cross_framework = npu_fw == Framework::MindSpore && bench_fw == Framework::PyTorch;
  if (npu_fw == Framework::PyTorch && bench_fw == Framework::MindSpore)
    throw Error(ErrorKind::Unsupported, "a PyTorch NPU dump cannot be compared with a MindSpore bench dump",
                bench_json, "framework");
  const bool api_mapping = options.api_mapping || !options.api_mapping_file.empty();
  const bool layer_mapping = options.layer_mapping || !options.layer_mapping_file.empty();
  if ((api_mapping || options.cell_mapping || layer_mapping) && npu_fw != Framework::MindSpore)
    throw Error(ErrorKind::InvalidArgument,
                "-am, -cm and -lm are only for MindSpore NPU dumps (-f mindspore)", {},
                api_mapping            ? "-am"
                : options.cell_mapping ? "-cm"
                                       : "-lm");
  // -lm generates the data mapping itself; msprobe then ignores -dm and mixes its keys with -am/-cm in ways
  // no user can predict, so the combination is refused. DECISIONS (compare -lm)
  if (layer_mapping && (api_mapping || options.cell_mapping || !options.data_mapping.empty()))
    throw Error(ErrorKind::InvalidArgument, "-lm cannot be combined with -am, -cm or -dm", {}, "-lm");
  cfg.api_mapping = api_mapping;
  cfg.cell_mapping = options.cell_mapping;
  if (api_mapping && cfg.cross_framework) {
    cfg.ms_to_pt = read_ms_to_pt_table(detail::data_file_path("ms_to_pt_api.yaml"));
    if (!options.api_mapping_file.empty()) cfg.api_records = read_api_mapping(options.api_mapping_file);
  }
  if (!options.cell_mapping_file.empty())
    for (auto& [k, v] : read_flat_mapping(options.cell_mapping_file)) cfg.cell_map[k] = v;
  if (!options.data_mapping.empty()) {
    cfg.data_mapping = true;
    for (auto& [k, v] : read_flat_mapping(options.data_mapping)) cfg.data_map[k] = v;
  }
  if (mode == DumpCompareMode::RealData)
    for (const Dump* d : {&npu_dump, &bench_dump})
      if (!fs::is_directory(d->tensor_dir()))
        throw Error(ErrorKind::Io, "real-data compare needs the dump_tensor_data directory beside dump.json",
                    d->tensor_dir());

  // Stack column: compare.json's stack_path shows it only with -s; otherwise stack.json beside the NPU dump.
  std::optional<StackInfo> stack;
  if (!stack_json.empty()) {
    if (options.stack_mode) stack = StackInfo::open(stack_json);
  } else {
    const fs::path beside = fs::path(npu_json).parent_path() / "stack.json";
    if (fs::is_regular_file(beside)) stack = StackInfo::open(beside.string());
  }

  const std::vector<OpItem> npu = flatten_dump(npu_dump, stack ? &*stack : nullptr);
  const std::vector<OpItem> bench = flatten_dump(bench_dump, nullptr);
  if (layer_mapping) {
    cfg.data_mapping = true;
    cfg.data_map = layer_data_mapping(npu_dump, bench_dump, true,
                                      bench_fw == Framework::MindSpore || bench_fw == Framework::Unknown, npu,
                                      bench, options.layer_mapping_file);
  }
  const MatchResult match = match_rows(npu, bench, cfg);

  const Context ctx{npu_dump,
                    bench_dump,
                    npu,
                    bench,
                    match,
                    mode,
                    stack.has_value(),
                    options.profile == Profile::MsProbe,
                    options.fuzzy_match,
                    control.thresholds};
  std::vector<BuiltRow> built(npu.size());
  // Blocks of whole dump entries: between two blocks the caller hears of progress and may stop the compare,
  // which keeps the rows of the entries done so far (highlighting pairs rows within one entry only). Real
  // data rows load tensors in parallel, so their blocks hold many rows; the other modes go entry by entry.
  const std::size_t block_rows = mode == DumpCompareMode::RealData ? 64 : 1;
  std::size_t done = 0;
  bool cancelled = false;
  while (done < npu.size()) {
    if (control.stop.stop_requested()) {
      cancelled = true;
      break;
    }
    std::size_t end = std::min(npu.size(), done + block_rows);
    while (end < npu.size() && npu[end].entry_key == npu[end - 1].entry_key) ++end;
    if (mode == DumpCompareMode::RealData) {
      // Rows in parallel, each loading and releasing its own two tensors; output order is the NPU order.
      detail::parallel_for(static_cast<std::int64_t>(done), static_cast<std::int64_t>(end), 1,
                           [&](std::int64_t b, std::int64_t e, int) {
                             for (std::int64_t i = b; i < e; ++i)
                               built[i] = real_data_row(ctx, static_cast<std::size_t>(i));
                           });
    } else {
      for (std::size_t i = done; i < end; ++i)
        built[i] = mode == DumpCompareMode::Md5 ? md5_row(ctx, i) : statistics_row(ctx, i);
    }
    done = end;
    if (control.progress) (*control.progress)({npu_json, done, npu.size()});
  }
  built.resize(done);

  DumpCompareTable t;
  t.mode = mode;
  t.cancelled = cancelled;
  t.header = header_of(mode, stack.has_value());
  t.colours.assign(built.size(), RowColour::None);
  constexpr std::size_t kHighlightRowLimit = 1048500;
  if (options.highlight && mode != DumpCompareMode::Md5 && npu_base == "dump.json" &&
      built.size() <= kHighlightRowLimit) {
    const std::size_t npu_max_col = kPrefix.size() + (mode == DumpCompareMode::RealData ? 6 : 8);
    const std::size_t err_col = npu_max_col + 8 + 2;
    highlight(npu, built, mode, npu_max_col, err_col, t.colours);
  }
  if (facts) {
    facts->clear();
    facts->reserve(built.size());
    for (std::size_t i = 0; i < built.size(); ++i) {
      RowFacts f;
      f.state = npu[i].state;
      f.entry_key = npu[i].entry_key;
      f.npu_op = npu[i].p2p_op;
      f.npu_peer = npu[i].p2p_peer;
      if (const OpItem* b = matched_bench(ctx, i)) {
        f.bench_op = b->p2p_op;
        f.bench_peer = b->p2p_peer;
      }
      if (npu[i].first_of_entry && npu[i].stack) f.stack = *npu[i].stack;
      facts->push_back(std::move(f));
    }
  }
  t.first_suspect = built.size();
  t.rows.reserve(built.size());
  t.kinds.reserve(built.size());
  for (std::size_t i = 0; i < built.size(); ++i) {
    if (built[i].suspect && t.first_suspect == built.size()) t.first_suspect = i;
    t.suspects += built[i].suspect;
    if (!built[i].unreadable.empty() && t.unreadable++ == 0) t.first_unreadable = built[i].unreadable;
    t.unmatched += !match.bench[i];
    std::vector<std::string> cells;
    std::vector<CellKind> kinds;
    cells.reserve(built[i].cells.size());
    for (auto& c : built[i].cells) {
      if (c.kind == CellKind::Text) sanitise(c.text);
      cells.push_back(std::move(c.text));
      kinds.push_back(c.kind);
    }
    t.rows.push_back(std::move(cells));
    t.kinds.push_back(std::move(kinds));
  }
  return t;
}

}  // namespace probe
