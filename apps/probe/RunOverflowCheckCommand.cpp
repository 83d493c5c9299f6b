// `probe run_overflow_check`: msprobe's overflow analysis of a dump, without a device.
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "ArgParser.h"
#include "Commands.h"
#include "probe/error.h"
#include "probe/overflow_check.h"

namespace probe::cli {

namespace {

constexpr const char* kHelp =
    R"(usage: probe [-f pytorch] run_overflow_check -api_info DUMP.json [-o OUT] [-j JIT] [-d DEVICE]
                                                [--seed N] [--max_api_elements N] [--timestamp TS]

msprobe's overflow analysis: for every forward API of the dump (task overflow_check, tensor or statistics)
whose inputs hold no inf/NaN (by their Max/Min) and whose outputs hold inf/NaN or a value at +-max of their
float dtype, the API is re-run on the dumped inputs in float64 by probe's bench runner and the exact result is
rounded to the output dtype. Where the recorded output is inf/NaN, or saturated to +-max of its dtype
(saturation mode of the Atlas training series), and the exact result overflows the dtype too, the overflow
is normal; where the exact result is finite, the device made it: an abnormal overflow. Each judged API
prints msprobe's sentence:
  The {api} overflow is a normal overflow.
  The {api} overflow is an abnormal overflow.
and OUT/overflow_check_result_<YYYYmmddHHMMSS>.csv gets one row per overflowing output: API Name, Direction,
Output Index, Element Index (flat, the first element the exact result does not explain, else the first that
overflowed), Device Value, Bench Value (exact), Overflow Kind (inf_nan or saturation), Verdict (normal
overflow, abnormal overflow, SKIP) and Message. Without tensor files (statistics dumps) the inputs are
generated from Max/Min as run_ut does and the verdict says whether the exact result overflows anywhere.

options:
  -api_info, --api_info_file FILE  dump.json to analyse (required)
  -o, -out, --out_path DIR         directory of the CSV, created if missing (default: the current directory)
  -j, --jit_compile VALUE          accepted for msprobe's command line; no effect (no device)
  -d, --device ID                  accepted for msprobe's command line; no effect (no device)
  --seed N                         seed of inputs generated from statistics (default 1234, as run_ut)
  --max_api_elements N             bound of one API's generated inputs (default 16777216, as run_ut)
  --timestamp YYYYmmddHHMMSS       use this instead of the local time in the CSV's name
  -h, --help                       show this help

An API that cannot be re-run (no runner, unreadable tensor file) is a SKIP row, with the reason on stderr; so
is a communication op (Distributed.*), whose output came from the other ranks: nan_analyze follows those.
Exit codes: 0 done (whatever was found), 2 bad command line, 3 I/O error, 4 malformed dump, 5 unsupported
(a MindSpore dump).
)";

}  // namespace

int run_run_overflow_check(Args args) {
  enum Flag { ApiInfo, Out, Jit, Device, Seed, MaxElements, Timestamp, FrameworkFlag };
  const std::vector<FlagSpec> specs = {
      {ApiInfo, {"-api_info", "--api_info_file"}, Arity::One},
      {Out, {"-o", "-out", "--out_path"}, Arity::One},
      {Jit, {"-j", "--jit_compile"}, Arity::One},
      {Device, {"-d", "--device"}, Arity::One},
      {Seed, {"--seed"}, Arity::One},
      {MaxElements, {"--max_api_elements"}, Arity::One},
      {Timestamp, {"--timestamp"}, Arity::One},
      {FrameworkFlag, {"--framework"}, Arity::One},
  };
  OverflowCheckOptions options;
  for (const ParsedFlag& f : parse_args(args, specs).flags) {
    switch (f.id) {
      case kHelpFlag:
        fmt::print("{}", kHelp);
        return 0;
      case ApiInfo:
        options.api_info = f.value();
        break;
      case Out:
        options.out_dir = f.value();
        break;
      case Jit:
        break;
      case Device:
        parse_integer(f.value(), f.written);
        break;
      case Seed: {
        const long long v = parse_integer(f.value(), f.written);
        if (v < 0) throw Error(ErrorKind::InvalidArgument, "expected a non-negative integer", {}, f.written);
        options.seed = static_cast<std::uint64_t>(v);
        break;
      }
      case MaxElements: {
        const long long v = parse_integer(f.value(), f.written);
        if (v <= 0) throw Error(ErrorKind::InvalidArgument, "expected a positive integer", {}, f.written);
        options.max_api_elements = static_cast<std::uint64_t>(v);
        break;
      }
      case Timestamp:
        options.timestamp = f.value();
        break;
      case FrameworkFlag:
        if (parse_framework(f.value()) != Framework::PyTorch)
          throw Error(ErrorKind::Unsupported, "run_overflow_check analyses PyTorch dumps", {},
                      "-f " + f.value());
        break;
    }
  }
  if (options.api_info.empty()) command_line_error("-api_info DUMP.json is required");
  if (options.out_dir.empty()) options.out_dir.push_back('.');  // -o "" means here, as msprobe
  const OverflowCheckSummary s = run_overflow_check(options);
  for (const OverflowApi& a : s.apis) {
    if (a.verdict == OverflowVerdict::Skip) {
      fmt::print(stderr, "warning: {} could not be re-run: {}\n", a.api, a.message);
      continue;
    }
    fmt::print("{}\n", overflow_sentence(a));
  }
  fmt::print("forward APIs {} overflow candidates {}: normal {} abnormal {} skip {} not an overflow {}\n",
             s.forward_apis, s.apis.size() + s.not_overflow, s.normal, s.abnormal, s.skipped, s.not_overflow);
  fmt::print("result: {}\n", s.csv);
  std::fflush(stdout);
  return 0;
}

}  // namespace probe::cli
