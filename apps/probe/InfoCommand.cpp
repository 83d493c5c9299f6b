// `probe info`: what a dump holds (framework, task, level, records by prefix, dtypes, bytes) and whether
// the tensor files it references are present and readable.
#include <fmt/core.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ArgParser.h"
#include "Commands.h"
#include "probe/dump_layout.h"
#include "probe/dump_summary.h"
#include "probe/error.h"

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

void print_text(const DumpSummary& s, std::size_t list_limit) {
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
  if (s.files_checked) {
    fmt::print("  tensor files: {} referenced, {} ok{}\n", s.files_referenced, s.files_ok,
               s.problem_counts.empty() ? "" : ", " + counts(s.problem_counts));
    for (std::size_t i = 0; i < s.problems.size() && i < list_limit; ++i) {
      const DumpProblem& p = s.problems[i];
      fmt::print("    {}: {} {}: {}\n", to_string(p.kind), p.record, p.field, p.detail);
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

}  // namespace

int run_info(Args args) {
  enum Flag { Json, NoFileCheck, List, FrameworkFlag };
  const std::vector<FlagSpec> specs = {
      {Json, {"--json"}, Arity::None},
      {NoFileCheck, {"--no-file-check"}, Arity::None},
      {List, {"--list"}, Arity::One},
      {FrameworkFlag, {"-f", "--framework"}, Arity::One},
  };
  bool json = false, check_files = true;
  std::size_t list_limit = 20;
  const ParsedArgs parsed = parse_args(args, specs, 1);
  for (const ParsedFlag& f : parsed.flags) {
    switch (f.id) {
      case kHelpFlag:
        fmt::print("{}{}", kHelp, kExitCodesNote);
        return 0;
      case Json:
        json = true;
        break;
      case NoFileCheck:
        check_files = false;
        break;
      case List: {
        const long long n = parse_integer(f.value(), f.written);
        if (n < 0) command_line_error("--list needs a non-negative integer, not '" + f.value() + "'");
        list_limit = static_cast<std::size_t>(n);
        break;
      }
      case FrameworkFlag:
        if (!parse_framework(f.value()))
          command_line_error("--framework must be pytorch or mindspore, not '" + f.value() + "'");
        break;
    }
  }
  if (parsed.positional.empty()) command_line_error("missing the dump path (see probe info --help)");
  const std::string& target = parsed.positional.front();

  const DumpLayout layout = DumpLayout::discover(target);
  std::vector<DumpSummary> ranks;
  for (const RankDump& r : layout.ranks) ranks.push_back(summarise_dump(r, check_files));

  if (json) {
    fmt::print("{}\n", dump_summaries_json(target, ranks));
    return 0;
  }
  std::size_t records = 0, tensors = 0, problems = 0;
  std::int64_t bytes = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i) fmt::print("\n");
    print_text(ranks[i], list_limit);
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
