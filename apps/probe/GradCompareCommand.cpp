// `probe grad_compare`: msprobe's GradComparator.compare_distributed on two gradient-monitor dumps.
#include <fmt/format.h>

#include <string>

#include "ArgParser.h"
#include "Commands.h"
#include "probe/grad_compare.h"
#include "probe/report.h"

namespace probe::cli {

namespace {

constexpr const char* kHelp =
    R"(usage: probe grad_compare DUMP1 DUMP2 [-o OUT] [--report]

msprobe's gradient comparison (GradComparator.compare_distributed). DUMP1 and DUMP2 are the dump_path of two
grad_probe runs (level L1 or L2): rank{R}/grad_summary_{step}.csv and rank{R}/step{step}/{param}.npy, the
direction of each gradient (grad > 0) as a bool array; probe::torch::GradMonitor writes the same layout.
For every rank and step present in both, a parameter's similarity is the share of elements whose directions
agree, and "summary" is that share over all parameters (weighted by element count). Each rank gets
OUT/rank{R}/similarities.csv, as msprobe writes it (a row "step,0,1,..." then one row per parameter, in the
order of the grad_summary csv, then "summary"). msprobe's PNG pictures are not drawn; --report draws the curves in an HTML page.

Printed per rank: the first suspicious step by msprobe's documented rule (docs/zh/17.grad_probe.md): the first
step at which any row's similarity is below 0.97 at the first compared step, or dropped by more than 0.03 from
the previous compared step; "none" when there is none. The rule is empirical: read the curves too.

options:
  -o, --output OUT   output directory, created if missing (default: ./grad_compare_output)
  --report           also write OUT/report_grad_<ts>.html: every rank's similarities against step with the
                     first suspicious step marked, self-contained (probe report OUT writes the same page)
  -h, --help         show this help

)";

}  // namespace

int run_grad_compare(Args args) {
  enum Flag { Output, Report };
  const std::vector<FlagSpec> specs = {{Output, {"-o", "--output"}, Arity::One},
                                       {Report, {"--report"}, Arity::None}};
  bool report = false;
  GradCompareOptions options;
  options.output_dir = "./grad_compare_output";
  const ParsedArgs parsed = parse_args(args, specs, 2);
  for (const ParsedFlag& f : parsed.flags) {
    switch (f.id) {
      case kHelpFlag:
        fmt::print("{}{}", kHelp, kExitCodesNote);
        return 0;
      case Output:
        options.output_dir = f.value();
        break;
      case Report:
        report = true;
        break;
    }
  }
  if (parsed.positional.size() != 2) command_line_error("expected two dump directories: DUMP1 DUMP2");
  options.path1 = parsed.positional[0];
  options.path2 = parsed.positional[1];
  const GradCompareResult r = grad_compare(options);
  for (const GradRankComparison& rank : r.ranks) {
    const double last = rank.rows.empty() ? 0.0 : rank.rows.back().values.back();
    fmt::print("rank {}: {} steps, summary similarity at step {}: {:.4f}, first suspicious step: {}\n",
               rank.rank, rank.steps.size(), rank.steps.back(), last,
               rank.first_suspicious_step ? std::to_string(*rank.first_suspicious_step) : "none");
    fmt::print("  {}\n", rank.file);
  }
  if (report) fmt::print("report: {}\n", write_grad_report(options.output_dir, options.output_dir));
  return 0;
}

}  // namespace probe::cli
