// `probe compare`: msprobe's offline accuracy compare of an NPU dump against a bench dump.
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "ArgParser.h"
#include "Cluster.h"
#include "Commands.h"
#include "Terminal.h"
#include "probe/dump_compare.h"
#include "probe/error.h"
#include "probe/report.h"

namespace probe::cli {

namespace {

constexpr const char* kHelp =
    R"(usage: probe [-f pytorch|mindspore] compare -i compare.json [-o OUT] [-s] [-c] [-f] [-hl] [-dm MAP]
                                          [-am [MAP]] [-cm [MAP]] [-lm [MAP]] [-da] [--profile probe|msprobe]

Compares an NPU dump with a bench dump (msprobe's offline accuracy compare). compare.json names the inputs:
  {"npu_path": ".../dump.json", "bench_path": ".../dump.json", "stack_path": ".../stack.json"}
Both paths are dump.json (or debug.json) files, or both are step directories holding rank* directories, which
are paired by position. The mode follows the dumps: task "tensor" compares the tensor files (Cosine, EucDist,
MaxAbsErr, MaxRelativeErr, error ratios), task "statistics" compares Max/Min/Mean/Norm, and statistics dumps with
md5 values compare the CRC-32 of every tensor. Rows follow the NPU dump.json order; NPU rows without a bench row
are kept with N/A cells. Writes into OUT, for each compared pair ({rank} = _rank0, ... for directories):
  compare_result{rank}_<YYYYmmddHHMMSS>.csv   the result table, always
  compare_result{rank}_<YYYYmmddHHMMSS>.xlsx  the same table (rows coloured with -hl)
  advisor{rank}_<YYYYmmddHHMMSS>.txt          the first suspect row (unless -c)
(debug.json pairs write debug_compare_result... files.)

options:
  -i, --input_path FILE       compare.json (required)
  -o, --output_path DIR       output directory, created if missing (default: ./output)
  -s, --stack_mode            add NPU_Stack_Info when compare.json names stack_path (without stack_path the
                              column appears whenever stack.json lies beside the NPU dump.json)
  -c, --compare_only          do not write the advisor file
  -f, --fuzzy_match           match rows ignoring call counters, in order (after the sub-command -f is this
                              flag; the framework goes before it: probe -f mindspore compare ...)
  -hl, --highlight            apply msprobe's red/yellow rules: messages appended to Err_message, rows
                              filled in the xlsx
  -dm, --data_mapping FILE    {NPU row name: bench row name} mapping (YAML 'a: b' lines, or a .json object);
                              mapped rows match on the name only (no shape or dtype check)
  -am, --api_mapping [FILE]   MindSpore NPU vs PyTorch bench: Mint.* names match Torch.*, MintFunctional.*
                              match Functional.*, other MindSpore APIs their PyTorch counterpart from
                              data/ms_to_pt_api.yaml. FILE (YAML) adds records, a list of
                                - {ms_api: Functional.flash_attention_score, pt_api: NPU.npu_fusion_attention,
                                   ms_args: [0, 1], pt_args: [0, 1], ms_outputs: [0], pt_outputs: [0]}
                              (optional ms_parameters/pt_parameters, ms_parameters_grad/pt_parameters_grad;
                              paired lists of equal length); rows of ms_api whose index is not listed stay
                              unmatched
  -cm, --cell_mapping [FILE]  MindSpore NPU vs PyTorch bench: Cell.* rows match Module.* rows; FILE maps
                              {cell_path.Class: module_path.Class}
  -lm, --layer_mapping [FILE] MindSpore NPU dumps of level mix/L0: entries are placed in a layer tree built
                              from stack.json and construct.json beside each dump.json (both required) and
                              paired by position in the tree, then rows by their suffix (.input.0, ...);
                              matched on the name only, like -dm. FILE (YAML) renames children per class:
                                ParallelTransformerLayer: {attention: self_attention}
                                VocabParallelEmbedding: {reduce_from_mp_region.all_reduce: all_reduce}
                              (TopLayer, alias Cell, is the root; a '(...)' after a bench name is ignored).
                              Layer numbers under ParallelTransformer.layers count from 0 on both sides.
                              Not combinable with -am, -cm or -dm
  -da, --diff_analyze         find the first different entry of a multi-rank run (step directories only):
                              tensor dumps are compared by their recorded statistics; an entry differs when
                              an output's Max/Min/Mean/Norm relative error exceeds 50% (statistics) or its
                              md5 differs (thresholds and lists: data/diff_analyze.json); the first one
                              before any communication op is reported per rank, else the earliest layer of
                              the communication graph (send/recv by peer, collectives by group ranks), else
                              the first after the last communication op. Writes, instead of the CSV/xlsx:
                                compare_result_{rank}_<YYYYmmddHHMMSS>.json  {entry: {is_same, op_items}}
                                diff_analyze_<ns>.json  {rank_N: [{op_name, data_info, stack_info}]}
                              (the latter only when something differs)
  --no-xlsx                   write only the CSV
  --report                    also write report_compare_<ts>.html beside the CSV: the self-contained HTML
                              page of the comparison (probe report); not with -da
  --framework pytorch|mindspore  the NPU dump's framework (what a leading -f gives); a MindSpore NPU dump is
                              compared with a PyTorch bench dump across frameworks
  --profile probe|msprobe     probe (default) writes the 0-d tensor message once; msprobe repeats it 16 times
                              as msprobe HEAD does. Metrics and verdicts are the same in both.
  --timestamp YYYYmmddHHMMSS  use this instead of the local time in the output names (reproducible runs)
  -h, --help                  show this help

Exit codes: 0 done (whatever was found), 2 bad command line or invalid argument (e.g. tasks differ, md5
in one dump only, mismatched rank counts), 3 I/O error (missing file), 4 malformed input, 5 unsupported,
6 unsafe.
)";

// -da: per-rank json results, then the first different entries (or none).
int run_diff_analyze(const CompareInput& in, const DumpCompareOptions& options) {
  const DiffAnalyzeResult r = analyze_first_diff(in, options);
  const std::vector<std::string> files = write_diff_analyze(r, options);
  for (std::size_t i = 0; i < r.ranks.size(); ++i)
    fmt::print("{} mode, {} entries, {} different: {}\n", to_string(r.ranks[i].table.mode),
               r.ranks[i].entries.size(),
               std::count_if(r.ranks[i].entries.begin(), r.ranks[i].entries.end(),
                             [](const DiffAnalyzeRank::Entry& e) { return !e.is_same; }),
               files[i]);
  if (r.first_diff.empty()) {
    fmt::print("no different entry found\n");
    return 0;
  }
  for (const DiffAnalyzeNode& n : r.first_diff)
    fmt::print("first diff ({}): rank_{} {}\n", r.phase, r.ranks[n.rank_index].rank,
               r.ranks[n.rank_index].entries[n.entry_index].key);
  fmt::print("  analysis: {}\n", files.back());
  return 0;
}

}  // namespace

int run_compare(Args args) {
  enum Flag {
    Input,
    Output,
    Stack,
    CompareOnly,
    Fuzzy,
    Highlight,
    DataMapping,
    ApiMapping,
    CellMapping,
    LayerMapping,
    DiffAnalyze,
    NoXlsx,
    FrameworkFlag,
    Profile,
    Timestamp,
    Report
  };
  const std::vector<FlagSpec> specs = {
      {Input, {"-i", "--input_path"}, Arity::One},
      {Output, {"-o", "--output_path"}, Arity::One},
      {Stack, {"-s", "--stack_mode"}, Arity::None},
      {CompareOnly, {"-c", "--compare_only"}, Arity::None},
      {Fuzzy, {"-f", "--fuzzy_match"}, Arity::None},
      {Highlight, {"-hl", "--highlight"}, Arity::None},
      {DataMapping, {"-dm", "--data_mapping"}, Arity::One},
      {ApiMapping, {"-am", "--api_mapping"}, Arity::Optional},
      {CellMapping, {"-cm", "--cell_mapping"}, Arity::Optional},
      {LayerMapping, {"-lm", "--layer_mapping"}, Arity::Optional},
      {DiffAnalyze, {"-da", "--diff_analyze"}, Arity::None},
      {NoXlsx, {"--no-xlsx"}, Arity::None},
      {Report, {"--report"}, Arity::None},
      {FrameworkFlag, {"--framework"}, Arity::One},
      {Profile, {"--profile"}, Arity::One},
      {Timestamp, {"--timestamp"}, Arity::One},
  };
  DumpCompareOptions options;
  std::string input;
  bool diff_analyze = false, report = false;
  auto optional_file = [](const ParsedFlag& f) { return f.values.empty() ? std::string() : f.value(); };
  for (const ParsedFlag& f : parse_args(args, specs).flags) {
    switch (f.id) {
      case kHelpFlag:
        fmt::print("{}{}", kHelp, kExitCodesNote);
        return 0;
      case Input:
        input = f.value();
        break;
      case Output:
        options.out_dir = f.value();
        break;
      case Stack:
        options.stack_mode = true;
        break;
      case CompareOnly:
        options.compare_only = true;
        break;
      case Fuzzy:
        options.fuzzy_match = true;
        break;
      case Highlight:
        options.highlight = true;
        break;
      case DataMapping:
        options.data_mapping = f.value();
        break;
      case ApiMapping:
        options.api_mapping = true;
        options.api_mapping_file = optional_file(f);
        break;
      case CellMapping:
        options.cell_mapping = true;
        options.cell_mapping_file = optional_file(f);
        break;
      case LayerMapping:
        options.layer_mapping = true;
        options.layer_mapping_file = optional_file(f);
        break;
      case DiffAnalyze:
        diff_analyze = true;
        break;
      case NoXlsx:
        options.write_xlsx = false;
        break;
      case Report:
        report = true;
        break;
      case FrameworkFlag:
        if (const auto fw = parse_framework(f.value()))
          options.framework = *fw;
        else
          throw Error(ErrorKind::InvalidArgument, "expected pytorch or mindspore, got '" + f.value() + "'",
                      {}, "-f");
        break;
      case Profile:
        if (f.value() != "probe" && f.value() != "msprobe")
          throw Error(ErrorKind::InvalidArgument, "expected probe or msprobe, got '" + f.value() + "'", {},
                      "--profile");
        options.profile = parse_profile(f.value());
        break;
      case Timestamp:
        options.timestamp = f.value();
        break;
    }
  }
  if (input.empty()) command_line_error("-i compare.json is required");
  options.group = &job();  // under mpirun: the step directory's ranks split across the job
  const CompareInput in = read_compare_json(input);
  if (diff_analyze && report) command_line_error("--report does not apply to -da (it writes no compare CSV)");
  if (diff_analyze) return run_diff_analyze(in, options);
  const DumpCompareSummary s = run_dump_compare(in, options);
  for (const auto& o : s.outputs) {
    // The worst rows before each summary line; the table is a view of the finished CSV, never fails the run.
    try {
      if (!o.csv.empty())
        fmt::print("{}", worst_compare_table(read_compare_report(o.csv), 5, terminal_columns()));
    } catch (const Error& e) {
      fmt::print(stderr, "probe compare: no table of the worst rows: {}\n", e.what());
    }
    fmt::print("{} mode, {} rows, {} suspect: {}\n", to_string(o.mode), o.rows, o.suspects, o.csv);
    if (!o.xlsx.empty()) fmt::print("  xlsx:    {}\n", o.xlsx);
    if (!o.advisor.empty()) fmt::print("  advisor: {}\n", o.advisor);
    // msprobe writes such rows with "unsupported" cells and a Message, and counts nothing: the summary line
    // alone would read as a complete compare.
    if (o.unreadable > 0)
      fmt::print(
          stderr,
          "probe compare: warning: {} row(s) not compared, a tensor file missing or unreadable; first: {}\n",
          o.unreadable, o.first_unreadable);
    if (o.rows > 0 && o.unmatched == o.rows)
      fmt::print(
          stderr,
          "probe compare: warning: none of the {} NPU rows found a bench row: dumps of other models or "
          "steps, names that differ only in call counters (-f), or a bench of the other framework "
          "(-am, -cm, -lm)\n",
          o.rows);
    if (report && !o.csv.empty() && job().rank() == 0) {
      const auto dir = std::filesystem::path(o.csv).parent_path();
      fmt::print("  report:  {}\n",
                 write_compare_report(o.csv, dir.empty() ? std::string(".") : dir.string()));
    }
  }
  return 0;
}

}  // namespace probe::cli
