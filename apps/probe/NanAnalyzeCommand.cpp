// `probe nan_analyze`: msprobe's first inf/NaN of a multi-rank step.
#include <fmt/format.h>

#include <string>

#include "ArgParser.h"
#include "Cluster.h"
#include "Commands.h"
#include "probe/error.h"
#include "probe/nan_analyze.h"

namespace probe::cli {

namespace {

constexpr const char* kHelp =
    R"(usage: probe [-f pytorch] nan_analyze -i STEP_DIR [-o OUT] [--profile probe|msprobe]

msprobe's nan_analyze: finds where inf/NaN first appeared in one step of a multi-rank PyTorch dump. STEP_DIR
holds rank directories (rank0, rank1, ...; "rank" alone is rank 0), each with msprobe's dump.json,
construct.json and stack.json. An entry is an anomaly when the Max/Min of its inputs hold no inf/NaN and those
of its outputs do. The analysis reports, per rank, the first anomaly before the rank's first communication op
(Distributed.*); failing that, it links the communication ops of all ranks (send to recv by peer, collectives
across their group, in call order), orders them into layers, and follows the inf/NaN back to the earliest
anomaly: a compute op that fed a communication op, or a communication op whose inputs were clean; failing that,
each rank's first anomaly after its last communication op.

When it finds one it writes OUT/anomaly_analyze_<ns>.json, msprobe's layout:
  {"rank_N": [{"op_name": ..., "data_info": {"input_args": [...], "input_kwargs": {...}, "output": [...]},
               "construct_info": [outermost module, ..., op_name], "stack_info": [frames]}]}
and prints "The analyze result is saved in: FILE"; otherwise it prints
  Cannot find any anomaly node, no need to generate analyze file.

options:
  -i, --input_path STEP_DIR   the step directory, e.g. dump/step0 (required)
  -o, --output_path DIR       output directory, created if missing (default: ./output)
  --profile probe|msprobe     msprobe: its order exactly; probe (default): DECISIONS D19 (within a layer the
                              compute ops that fed a communication op come before the communication ops)
  -h, --help                  show this help

Exit codes: 0 done (whatever was found), 2 bad command line or no rank directory, 3 I/O error (missing
directory or file), 4 malformed JSON.
)";

}  // namespace

int run_nan_analyze(Args args) {
  enum Flag { Input, Output, ProfileFlag, FrameworkFlag };
  const std::vector<FlagSpec> specs = {
      {Input, {"-i", "--input_path"}, Arity::One},
      {Output, {"-o", "--output_path"}, Arity::One},
      {ProfileFlag, {"--profile"}, Arity::One},
      {FrameworkFlag, {"--framework"}, Arity::One},
  };
  NanAnalyzeOptions options;
  std::string profile = "probe";
  for (const ParsedFlag& f : parse_args(args, specs).flags) {
    switch (f.id) {
      case kHelpFlag:
        fmt::print("{}", kHelp);
        return 0;
      case Input:
        options.input_path = f.value();
        break;
      case Output:
        options.output_path = f.value();
        break;
      case ProfileFlag:
        profile = f.value();
        break;
      case FrameworkFlag:
        if (parse_framework(f.value()) != Framework::PyTorch)
          throw Error(ErrorKind::Unsupported, "nan_analyze analyses PyTorch dumps", {},
                      fmt::format("-f {}", f.value()));
        break;
    }
  }
  if (options.input_path.empty()) command_line_error("-i STEP_DIR is required");
  if (profile != "probe" && profile != "msprobe")
    throw Error(ErrorKind::InvalidArgument, "expected probe or msprobe, got '" + profile + "'", {},
                "--profile");
  options.profile = parse_profile(profile);
  options.group = &job();  // under mpirun: the rank directories are parsed across the job
  const NanAnalyzeResult r = nan_analyze(options);
  for (const std::string& line : r.log) fmt::print("{}\n", line);
  return 0;
}

}  // namespace probe::cli
