// `probe report`: the self-contained HTML report of a run_ut (online checker, online server) output
// directory.
#include <fmt/format.h>

#include <string>

#include "ArgParser.h"
#include "Commands.h"
#include "probe/error.h"
#include "probe/report.h"

namespace probe::cli {

namespace {

constexpr const char* kHelp =
    R"(usage: probe report DIR [-o OUT_DIR]
       probe report --result RESULT.csv --details DETAILS.csv [-o OUT_DIR]

Writes one self-contained HTML page, OUT_DIR/report_<ts>.html (OUT_DIR defaults to DIR, or to the result
CSV's directory), from run_ut's accuracy_checking_result_<ts>.csv and accuracy_checking_details_<ts>.csv (the
online checker's and server's _rank<N> files have the same layout). DIR: the newest result CSV with its
details CSV. The page needs no network and no other file: a summary per direction and per output dtype, the
flagged outputs worst first (criterion, value against threshold or bound, the rule that judged, the worst
element), plots of each output's error against its bound and of its max relative error (log scale,
coloured by verdict, the pointer names the output), every output in a filterable, sortable, paged table, and
the SKIP reasons grouped. Prints the page's path.

compare, api_precision_compare and grad_compare outputs have no page yet.

options:
  DIR                         a run_ut output directory
  --result FILE               a result CSV (with --details instead of DIR)
  --details FILE              its details CSV
  -o, --out_path OUT_DIR      where to write the page (created if missing)
  -h, --help                  show this help

Exit codes: 0 written, 2 bad command line, 3 I/O (no result/details pair, unwritable OUT_DIR), 4 malformed CSV.
)";

}  // namespace

int run_report(Args args) {
  enum Flag { Result, Details, Out };
  const std::vector<FlagSpec> specs = {
      {Result, {"--result"}, Arity::One},
      {Details, {"--details"}, Arity::One},
      {Out, {"-o", "--out_path"}, Arity::One},
  };
  std::string result, details, out;
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
      case Out:
        out = f.value();
        break;
    }
  }
  std::string path;
  if (!result.empty() || !details.empty()) {
    if (result.empty() || details.empty()) command_line_error("--result and --details go together");
    if (!parsed.positional.empty()) command_line_error("give DIR or --result/--details, not both");
    if (out.empty()) {
      const auto slash = result.find_last_of('/');
      out = slash == std::string::npos ? std::string(".") : result.substr(0, slash + 1);
    }
    path = write_run_ut_report(result, details, out);
  } else {
    if (parsed.positional.size() != 1) command_line_error("expected one DIR (see probe report --help)");
    path = write_report(parsed.positional[0], out);
  }
  fmt::print("report: {}\n", path);
  return 0;
}

}  // namespace probe::cli
