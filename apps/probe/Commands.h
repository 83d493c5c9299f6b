// Sub-commands of the probe CLI. Each takes the arguments after its name and returns the exit code.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace probe::cli {

using Args = std::span<const std::string>;

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(Args args);
};

/// The last line of every command's --help: where the exit codes are listed.
inline constexpr std::string_view kExitCodesNote =
    "Exit codes: the table printed by 'probe --help' (and in the README's CLI section).\n";
/// That table: 0, 1, one row per probe::ErrorKind (probe::exit_code, include/probe/error.h) and 130.
std::string exit_codes_table();

int run_info(Args args);
int run_run_ut(Args args);
int run_multi_run_ut(Args args);
int run_api_precision_compare(Args args);
int run_metrics(Args args);
int run_runners(Args args);
int run_compare(Args args);
int run_replay(Args args);
int run_run_overflow_check(Args args);
int run_nan_analyze(Args args);
int run_grad_compare(Args args);
int run_report(Args args);

}  // namespace probe::cli
