// `probe report`: the self-contained HTML report of a run_ut (online checker, online server) output
// directory.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "ArgParser.h"
#include "Commands.h"
#include "probe/error.h"
#include "probe/report.h"

namespace probe::cli {

namespace {

constexpr const char* kHelp =
    R"(usage: probe report DIR [-o OUT_DIR]
       probe report --result RESULT.csv --details DETAILS.csv [-o OUT_DIR]
       probe report --compare COMPARE_RESULT.csv [-o OUT_DIR]

Writes one self-contained HTML page, OUT_DIR/report_<ts>.html (OUT_DIR defaults to DIR, or to the result
CSV's directory), from run_ut's accuracy_checking_result_<ts>.csv and accuracy_checking_details_<ts>.csv (the
online checker's and server's _rank<N> files have the same layout). DIR: the newest result CSV with its
details CSV. The page needs no network and no other file: a summary per direction and per output dtype, the
flagged outputs worst first (criterion, value against threshold or bound, the rule that judged, the worst
element), plots of each output's error against its bound and of its max relative error (log scale,
coloured by verdict, the pointer names the output), every output in a filterable, sortable, paged table, and
the SKIP reasons grouped; when run_ut ran with --report, also each flagged output's element errors as a
histogram (in error/bound, ULPs or relative error; accuracy_checking_histograms_<ts>.csv). Prints the page's
path.

compare's compare_result_<ts>.csv (in DIR: the newest) gets OUT_DIR/report_compare_<ts>.html: cosine, max
absolute and max relative error along execution order, the first entry that differs by compare -da's rule
marked (data/diff_analyze.json: an output row whose Max/Min/Mean/Norm relative error exceeds the threshold;
in real data mode computed from the NPU and bench statistics), every row in a table, and the statistics side
by side and the stack of a selected row.

api_precision_compare's result and details CSVs (in DIR: the newest pair) get
OUT_DIR/report_precision_<ts>.html: the three-way verdicts per direction, the flagged outputs first with the
NPU/GPU error ratio that judged worst, each output's worst ratio along execution order (log scale), every
output in a table and every ratio with its verdict for a selected output.

grad_compare's output (DIR/rank{R}/similarities.csv) gets OUT_DIR/report_grad_<ts>.html: per rank, every
parameter's similarity and the summary against step, the first suspicious step (msprobe's documented rule)
marked, and the similarities in a table.

options:
  DIR                         a run_ut, compare, api_precision_compare or grad_compare output directory
  --result FILE               a result CSV (with --details instead of DIR)
  --details FILE              its details CSV
  --compare FILE              a compare_result_<ts>.csv (instead of DIR)
  -o, --out_path OUT_DIR      where to write the page (created if missing)
  -h, --help                  show this help

Exit codes: 0 written, 2 bad command line, 3 I/O (none of those CSVs, unwritable OUT_DIR),
4 malformed CSV.
)";

}  // namespace

int run_report(Args args) {
  enum Flag { Result, Details, CompareCsv, Out };
  const std::vector<FlagSpec> specs = {
      {Result, {"--result"}, Arity::One},
      {Details, {"--details"}, Arity::One},
      {CompareCsv, {"--compare"}, Arity::One},
      {Out, {"-o", "--out_path"}, Arity::One},
  };
  std::string result, details, compare, out;
  const ParsedArgs parsed = parse_args(args, specs, 1);
  for (const ParsedFlag& f : parsed.flags) {
    switch (f.id) {
      case kHelpFlag:
        fmt::print("{}", kHelp);
        return 0;
      case Result:
        result = f.value();
        break;
      case Details:
        details = f.value();
        break;
      case CompareCsv:
        compare = f.value();
        break;
      case Out:
        out = f.value();
        break;
    }
  }
  const auto dir_of = [](const std::string& file) {
    const auto slash = file.find_last_of('/');
    return slash == std::string::npos ? std::string(".") : file.substr(0, slash + 1);
  };
  std::vector<std::string> pages;
  if (!result.empty() || !details.empty() || !compare.empty()) {
    if (result.empty() != details.empty()) command_line_error("--result and --details go together");
    if (!parsed.positional.empty())
      command_line_error("give DIR or files (--result/--details, --compare), not both");
    if (!result.empty())
      pages.push_back(write_run_ut_report(result, details, out.empty() ? dir_of(result) : out));
    if (!compare.empty()) pages.push_back(write_compare_report(compare, out.empty() ? dir_of(compare) : out));
  } else {
    if (parsed.positional.size() != 1) command_line_error("expected one DIR (see probe report --help)");
    pages = write_report(parsed.positional[0], out);
  }
  for (const std::string& p : pages) fmt::print("report: {}\n", p);
  return 0;
}

}  // namespace probe::cli
