// `probe api_precision_compare`: msprobe's three-way NPU/GPU/CPU verdict from two run_ut details CSVs.
#include <fmt/core.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "ArgParser.h"
#include "Commands.h"
#include "probe/api_precision_compare.h"
#include "probe/error.h"
#include "probe/report.h"

namespace probe::cli {

namespace {

constexpr const char* kHelp =
    R"(usage: probe api_precision_compare -npu NPU_DETAILS.csv -gpu GPU_DETAILS.csv [-o OUT]
                                   [--profile probe|msprobe]

Judges the APIs of a device (NPU) run against a reference-device (GPU) run, both checked by run_ut against the
CPU, with msprobe's new precision standard, and writes msprobe's two CSVs into OUT:
  api_precision_compare_result_<YYYYmmddHHMMSS>.csv   one row per API: forward/backward pass, error or SKIP
  api_precision_compare_details_<YYYYmmddHHMMSS>.csv  one row per output: ratios, verdicts, algorithm, message
The inputs are accuracy_checking_details_*.csv files written by probe run_ut, msprobe (current) or msprobe 1.0.4.
Rows of the NPU file that have no GPU row are left out (listed as warnings), as msprobe does.

options:
  -npu, --npu_csv_path FILE  details CSV of the device under test (required)
  -gpu, --gpu_csv_path FILE  details CSV of the reference device (required)
  -o, --out_path DIR         output directory, created if missing (default: the current directory)
  --profile probe|msprobe    thresholds profile (default: probe). Both profiles give the same results for this
                             command: probe's deviations D1-D3 concern metric computation and run_ut roll-up,
                             which api_precision_compare does not do.
  --timestamp YYYYmmddHHMMSS use this instead of the local time in the output names (reproducible runs, tests)
  --thresholds FILE          thresholds data file (default: api_precision_compare.json, first found in
                             $PROBE_DATA_DIR, the installed share/probe, the source tree's data/). Its API groups
                             come from precision_standards.json, found the same way ($PROBE_STANDARDS_FILE first)
  --report                   also write report_precision_<ts>.html beside the CSVs: the self-contained HTML
                             page of the verdicts (probe report)
  -h, --help                 show this help

Outputs appear under their final names only once complete; an existing output is never overwritten.
Cells that would start a spreadsheet formula (= + - @ %, TAB, CR, full-width forms) are written with a
leading apostrophe. Exit codes: 0 done (whatever was found), 2 bad command line (unknown option, missing
or invalid value), 3 I/O error, 4 malformed input.
)";

void print_notes(const char* what, const std::vector<ApiPrecisionCompareNote>& notes) {
  constexpr std::size_t kShown = 20;
  for (std::size_t i = 0; i < notes.size() && i < kShown; ++i) {
    const auto& n = notes[i];
    fmt::print(stderr, "warning: {}: {}:{}{}: {}\n", what, n.file, n.row,
               n.column.empty() ? "" : ", " + n.column, n.message);
  }
  if (notes.size() > kShown)
    fmt::print(stderr, "warning: ... and {} more ({})\n", notes.size() - kShown, what);
}

}  // namespace

int run_api_precision_compare(Args args) {
  enum Flag { Npu, Gpu, Out, Profile, Timestamp, Thresholds, FrameworkFlag, Report };
  const std::vector<FlagSpec> specs = {
      {Npu, {"-npu", "--npu_csv_path"}, Arity::One}, {Gpu, {"-gpu", "--gpu_csv_path"}, Arity::One},
      {Out, {"-o", "--out_path"}, Arity::One},       {Profile, {"--profile"}, Arity::One},
      {Timestamp, {"--timestamp"}, Arity::One},      {Thresholds, {"--thresholds"}, Arity::One},
      {FrameworkFlag, {"--framework"}, Arity::One},  {Report, {"--report"}, Arity::None},
  };
  ApiPrecisionCompareOptions options;
  std::string profile = "probe";
  bool report = false;
  for (const ParsedFlag& f : parse_args(args, specs).flags) {
    switch (f.id) {
      case kHelpFlag:
        fmt::print("{}{}", kHelp, kExitCodesNote);
        return 0;
      case Report:
        report = true;
        break;
      case Npu:
        options.npu_csv = f.value();
        break;
      case Gpu:
        options.gpu_csv = f.value();
        break;
      case Out:
        options.out_dir = f.value();
        break;
      case Profile:
        profile = f.value();
        break;
      case Timestamp:
        options.timestamp = f.value();
        break;
      case Thresholds:
        options.thresholds_file = f.value();
        break;
      case FrameworkFlag:
        if (parse_framework(f.value()) != Framework::PyTorch)
          throw Error(ErrorKind::Unsupported, "api_precision_compare compares PyTorch run_ut details CSVs",
                      {}, "-f " + f.value());
        break;
    }
  }
  if (options.npu_csv.empty()) command_line_error("-npu NPU_DETAILS.csv is required");
  if (options.gpu_csv.empty()) command_line_error("-gpu GPU_DETAILS.csv is required");
  if (profile != "probe" && profile != "msprobe")
    throw Error(ErrorKind::InvalidArgument, "expected probe or msprobe, got '" + profile + "'", {},
                "--profile");
  options.profile = parse_profile(profile);

  ApiPrecisionCompareSummary s = probe::run_api_precision_compare(options);
  print_notes("NPU row without a GPU row, left out", s.missing_in_gpu);
  print_notes("row skipped", s.skipped);
  fmt::print("result:  {}\ndetails: {}\n", s.result_csv, s.details_csv);
  fmt::print("{} APIs: {} pass, {} error, {} SKIP (forward); {} detail rows\n", s.result_rows, s.forward_pass,
             s.forward_error, s.forward_skip, s.detail_rows);
  if (report) {
    const auto dir = std::filesystem::path(s.result_csv).parent_path();
    fmt::print("report:  {}\n", write_precision_report(s.result_csv, s.details_csv,
                                                       dir.empty() ? std::string(".") : dir.string()));
  }
  return 0;
}

}  // namespace probe::cli
