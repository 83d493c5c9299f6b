// `probe info`: what a dump holds (framework, task, level, records by prefix, dtypes, bytes) and whether
// the tensor files it references are present and readable.
#include <fmt/core.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "Commands.h"
#include "probe/construct.h"
#include "probe/dump.h"
#include "probe/dump_layout.h"
#include "probe/error.h"
#include "probe/stack.h"
#include "probe/tensor_file.h"

namespace probe::cli {

namespace {

constexpr std::string_view kHelp =
    R"(usage: probe info [options] <dump.json | rank dir | step dir | dump root>

Summarises msprobe dumps: framework, task, level, records by API prefix and direction, tensor
descriptors by dtype, total tensor bytes (shape x itemsize of the dumped dtype), and the state of the
tensor files in dump_tensor_data/: missing, unreadable (bad header or container; tensor data is not
read), holding another shape than dump.json says, or rejected because their data_name leaves the
directory; in a tensor dump, tensors without a data_name ("no file"). For a dump root every step*/rank* directory is summarised.

options:
  --json            print one JSON object instead of text
  --no-file-check   do not open tensor files (only count the references)
  --list N          list at most N problem files per rank (default 20; 0 lists none)
  -f, --framework   accepted for symmetry with other commands; the dump's own framework is reported
  -h, --help        show this help
)";

struct Problem {
  std::string kind;  // missing, unreadable, shape mismatch, rejected, no file, bad shape
  std::string entry, field, detail;
};

struct RankSummary {
  RankDump where;
  std::string framework, task, level;
  std::size_t records = 0;
  std::map<std::string, std::size_t> by_prefix, by_direction, by_dtype;
  std::size_t tensors = 0, unsupported_dtype = 0;
  std::int64_t tensor_bytes = 0;
  std::size_t files_referenced = 0, files_ok = 0;
  std::map<std::string, std::size_t> problem_counts;
  std::vector<Problem> problems;
  std::size_t stack_records = 0, stack_groups = 0, construct_nodes = 0;
  bool has_stack = false, has_construct = false;
  std::string stack_error, construct_error;
};

std::string_view direction_name(EntryDirection d) {
  switch (d) {
    case EntryDirection::Forward:
      return "forward";
    case EntryDirection::Backward:
      return "backward";
    case EntryDirection::ParametersGrad:
      return "parameters_grad";
    case EntryDirection::Debug:
      return "debug";
    case EntryDirection::Unknown:
      break;
  }
  return "other";
}

void check_file(const Dump& dump, const DumpEntry& e, const TensorInfo& t, RankSummary& s) {
  auto problem = [&](std::string kind, std::string detail) {
    ++s.problem_counts[kind];
    s.problems.push_back({std::move(kind), e.key, t.field, std::move(detail)});
  };
  std::string path;
  try {
    path = dump.tensor_path(e, t);
  } catch (const Error& err) {
    problem(err.kind() == ErrorKind::Security ? "rejected" : "missing", err.message());
    return;
  }
  try {
    // Uncompressed tensor files are memory-mapped: this validates headers without reading the data.
    const Tensor loaded = load_tensor_file(path);
    if (loaded.shape() != t.shape) {
      problem("shape mismatch", fmt::format("{}: the file holds {}, dump.json says {}", path,
                                            shape_to_string(loaded.shape()), shape_to_string(t.shape)));
      return;
    }
    ++s.files_ok;
  } catch (const Error& err) {
    problem("unreadable", err.what());
  }
}

RankSummary summarise(const RankDump& where, bool check_files) {
  RankSummary s;
  s.where = where;
  const Dump dump = Dump::open(where.dump_json);
  s.framework = std::string(to_string(dump.framework()));
  if (!dump.framework_field().empty() && dump.framework() == Framework::Unknown)
    s.framework = dump.framework_field();
  s.task = dump.task();
  s.level = dump.level();
  s.records = dump.entries().size();
  for (const DumpEntry& e : dump.entries()) {
    ++s.by_prefix[e.name.prefix];
    ++s.by_direction[std::string(direction_name(e.name.direction))];
    for (const TensorInfo* t : e.tensors()) {
      ++s.tensors;
      ++s.by_dtype[t->dtype_name];
      try {
        if (auto bytes = t->nbytes())
          s.tensor_bytes += *bytes;
        else
          ++s.unsupported_dtype;
      } catch (const Error& err) {
        // One absurd shape is that record's problem, as in run_ut; the rest of the summary stands.
        ++s.problem_counts["bad shape"];
        s.problems.push_back({"bad shape", e.key, t->field, err.message()});
      }
      if (t->has_file()) {
        ++s.files_referenced;
        if (check_files) check_file(dump, e, *t, s);
      } else if (s.task == "tensor" && probe::numel(t->shape) != 0) {  // empty tensors get no file
        // run_ut SKIPs the API: a tensor dump's tensors are never generated from statistics.
        ++s.problem_counts["no file"];
        s.problems.push_back({"no file", e.key, t->field, "tensor dump without data_name for this tensor"});
      }
    }
  }
  if (!where.stack_json.empty()) {
    s.has_stack = true;
    try {
      const StackInfo st = StackInfo::open(where.stack_json);
      s.stack_records = st.key_count();
      s.stack_groups = st.groups().size();
    } catch (const Error& e) {
      s.stack_error = e.what();
    }
  }
  if (!where.construct_json.empty()) {
    s.has_construct = true;
    try {
      s.construct_nodes = ConstructInfo::open(where.construct_json).nodes().size();
    } catch (const Error& e) {
      s.construct_error = e.what();
    }
  }
  return s;
}

std::string human_bytes(std::int64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string counts(const std::map<std::string, std::size_t>& m) {
  std::string out;
  for (const auto& [k, n] : m)
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", k.empty() ? "\"\"" : k, n);
  return out.empty() ? "none" : out;
}

void print_text(const RankSummary& s, bool check_files, std::size_t list_limit) {
  std::string label;
  if (!s.where.mode.empty()) label += s.where.mode + "/";
  if (!s.where.step.empty()) label += s.where.step + "/";
  label += s.where.rank;
  fmt::print("{}{}\n", s.where.dump_json, label.empty() ? "" : "  [" + label + "]");
  fmt::print("  framework: {}   task: {}   level: {}\n", s.framework, s.task.empty() ? "?" : s.task,
             s.level.empty() ? "?" : s.level);
  fmt::print("  records: {} ({})\n", s.records, counts(s.by_direction));
  fmt::print("  by prefix: {}\n", counts(s.by_prefix));
  fmt::print("  tensors: {} descriptors; by dtype: {}\n", s.tensors, counts(s.by_dtype));
  fmt::print(
      "  tensor bytes: {} ({}){}\n", s.tensor_bytes, human_bytes(s.tensor_bytes),
      s.unsupported_dtype
          ? fmt::format("; {} descriptors of dtypes probe does not support not counted", s.unsupported_dtype)
          : "");
  if (check_files) {
    fmt::print("  tensor files: {} referenced, {} ok{}\n", s.files_referenced, s.files_ok,
               s.problem_counts.empty() ? "" : ", " + counts(s.problem_counts));
    for (std::size_t i = 0; i < s.problems.size() && i < list_limit; ++i) {
      const Problem& p = s.problems[i];
      fmt::print("    {}: {} {}: {}\n", p.kind, p.entry, p.field, p.detail);
    }
    if (s.problems.size() > list_limit) fmt::print("    ... {} more\n", s.problems.size() - list_limit);
  } else {
    fmt::print("  tensor files: {} referenced (not checked){}\n", s.files_referenced,
               s.problem_counts.empty() ? "" : ", " + counts(s.problem_counts));
  }
  if (s.has_stack)
    fmt::print("  stack.json: {}\n",
               s.stack_error.empty() ? fmt::format("{} records in {} groups", s.stack_records, s.stack_groups)
                                     : "error: " + s.stack_error);
  else
    fmt::print("  stack.json: absent\n");
  if (s.has_construct)
    fmt::print("  construct.json: {}\n", s.construct_error.empty()
                                             ? fmt::format("{} nodes", s.construct_nodes)
                                             : "error: " + s.construct_error);
  else
    fmt::print("  construct.json: absent\n");
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        else
          out += c;
    }
  }
  return out + "\"";
}

std::string json_counts(const std::map<std::string, std::size_t>& m) {
  std::string out = "{";
  for (const auto& [k, n] : m) out += fmt::format("{}{}: {}", out.size() > 1 ? ", " : "", json_string(k), n);
  return out + "}";
}

std::string json_rank(const RankSummary& s, bool check_files) {
  std::string problems = "[";
  for (const Problem& p : s.problems)
    problems += fmt::format("{}{{\"kind\": {}, \"record\": {}, \"field\": {}, \"detail\": {}}}",
                            problems.size() > 1 ? ", " : "", json_string(p.kind), json_string(p.entry),
                            json_string(p.field), json_string(p.detail));
  problems += "]";
  return fmt::format(
      "{{\"dump_json\": {}, \"mode\": {}, \"step\": {}, \"rank\": {}, \"framework\": {}, \"task\": {}, "
      "\"level\": {}, \"records\": {}, \"by_direction\": {}, \"by_prefix\": {}, \"tensors\": {}, "
      "\"by_dtype\": {}, \"tensor_bytes\": {}, \"unsupported_dtype_tensors\": {}, \"files_referenced\": {}, "
      "\"files_checked\": {}, \"files_ok\": {}, \"file_problems\": {}, \"problems\": {}, "
      "\"stack_records\": {}, \"construct_nodes\": {}}}",
      json_string(s.where.dump_json), json_string(s.where.mode), json_string(s.where.step),
      json_string(s.where.rank), json_string(s.framework), json_string(s.task), json_string(s.level),
      s.records, json_counts(s.by_direction), json_counts(s.by_prefix), s.tensors, json_counts(s.by_dtype),
      s.tensor_bytes, s.unsupported_dtype, s.files_referenced, check_files ? "true" : "false", s.files_ok,
      json_counts(s.problem_counts), problems, s.has_stack ? std::to_string(s.stack_records) : "null",
      s.has_construct ? std::to_string(s.construct_nodes) : "null");
}

}  // namespace

int run_info(Args args) {
  bool json = false, check_files = true;
  std::size_t list_limit = 20;
  std::string target;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      fmt::print("{}", kHelp);
      return 0;
    }
    if (a == "--json")
      json = true;
    else if (a == "--no-file-check")
      check_files = false;
    else if (a == "--list" || a == "-f" || a == "--framework") {
      if (i + 1 >= args.size()) throw Error(ErrorKind::InvalidArgument, a + " needs a value");
      const std::string& v = args[++i];
      if (a == "--list") {
        try {
          std::size_t used = 0;
          const long long n = std::stoll(v, &used);
          if (used != v.size() || n < 0) throw std::invalid_argument(v);
          list_limit = static_cast<std::size_t>(n);
        } catch (const std::exception&) {
          throw Error(ErrorKind::InvalidArgument, "--list needs a non-negative integer, not '" + v + "'");
        }
      } else if (v != "pytorch" && v != "mindspore") {
        throw Error(ErrorKind::InvalidArgument, "--framework must be pytorch or mindspore, not '" + v + "'");
      }
    } else if (!a.empty() && a[0] == '-') {
      throw Error(ErrorKind::InvalidArgument, "unknown option '" + a + "' (see probe info --help)");
    } else if (target.empty()) {
      target = a;
    } else {
      throw Error(ErrorKind::InvalidArgument, "one dump path expected, got '" + target + "' and '" + a + "'");
    }
  }
  if (target.empty())
    throw Error(ErrorKind::InvalidArgument, "missing the dump path (see probe info --help)");

  const DumpLayout layout = DumpLayout::discover(target);
  std::vector<RankSummary> ranks;
  for (const RankDump& r : layout.ranks) ranks.push_back(summarise(r, check_files));

  if (json) {
    std::string out = fmt::format("{{\"path\": {}, \"ranks\": [", json_string(target));
    for (std::size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + json_rank(ranks[i], check_files);
    fmt::print("{}]}}\n", out);
    return 0;
  }
  std::size_t records = 0, tensors = 0, problems = 0;
  std::int64_t bytes = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i) fmt::print("\n");
    print_text(ranks[i], check_files, list_limit);
    records += ranks[i].records;
    tensors += ranks[i].tensors;
    bytes += ranks[i].tensor_bytes;
    problems += ranks[i].problems.size();
  }
  if (ranks.size() > 1)
    fmt::print("\ntotal: {} dumps, {} records, {} tensors, {} ({}){}\n", ranks.size(), records, tensors,
               bytes, human_bytes(bytes), check_files ? fmt::format(", {} file problems", problems) : "");
  return 0;
}

}  // namespace probe::cli
