// probe CLI entry point: picks the sub-command, turns probe::Error into one line and an exit code.
#include <fmt/core.h>
#include <malloc.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "ArgParser.h"
#include "Cluster.h"
#include "Commands.h"
#include "probe/error.h"
#include "probe/version.h"

namespace {

using probe::cli::Command;

// The one explicit list of sub-commands.
constexpr Command kCommands[] = {
    {"info", "summarise a dump: framework, task, level, APIs, dtypes, tensor files", probe::cli::run_info},
    {"run_ut", "pre-check every API of a dump against a float64 bench (msprobe run_ut)",
     probe::cli::run_run_ut},
    {"multi_run_ut", "run_ut with -n worker threads (msprobe multi_run_ut)", probe::cli::run_multi_run_ut},
    {"api_precision_compare", "judge NPU vs GPU run_ut details CSVs with the new precision standard",
     probe::cli::run_api_precision_compare},
    {"metrics", "every accuracy metric and standard verdict of two tensor files", probe::cli::run_metrics},
    {"runners", "list the APIs probe can run (schema, backward)", probe::cli::run_runners},
    {"compare", "compare an NPU dump with a bench dump: real data, statistics or md5 (msprobe compare)",
     probe::cli::run_compare},
    {"replay", "send a dump's forward APIs to an online run_ut server, as a training process would",
     probe::cli::run_replay},
    {"run_overflow_check",
     "normal or abnormal: re-run the APIs whose outputs overflowed in float64 (msprobe)",
     probe::cli::run_run_overflow_check},
    {"nan_analyze", "the first inf/NaN of a multi-rank step, followed through communication ops (msprobe)",
     probe::cli::run_nan_analyze},
    {"grad_compare", "similarities of two gradient-monitor dumps and the first suspicious step (msprobe)",
     probe::cli::run_grad_compare},
    {"report",
     "a self-contained HTML report of a run_ut, compare, api_precision_compare or grad_compare output",
     probe::cli::run_report},
};

}  // namespace

std::string probe::cli::exit_codes_table() {
  using probe::ErrorKind;
  std::string t =
      "Exit codes:\n  0    done, whatever was found (a run_ut with error rows still exits 0)\n"
      "  1    no command given\n";
  for (ErrorKind k : {ErrorKind::InvalidArgument, ErrorKind::Io, ErrorKind::Format, ErrorKind::Unsupported,
                      ErrorKind::Security, ErrorKind::Runner, ErrorKind::Internal})
    t += fmt::format("  {:<4} {}\n", probe::exit_code(k), probe::to_string(k));
  return t + "  130  interrupted by SIGINT/SIGTERM; the files written so far resume\n";
}

namespace {

void print_usage(std::FILE* out) {
  fmt::print(out, "probe {} - find deep-learning APIs whose device results are numerically wrong\n\n",
             probe::version());
  fmt::print(out, "usage: probe [-f pytorch|mindspore] <command> [options]\n\ncommands:\n");
  for (const auto& c : kCommands) fmt::print(out, "  {:<24} {}\n", c.name, c.summary);
  fmt::print(out, "\nRun 'probe <command> --help' for the options of a command.\n\n{}",
             probe::cli::exit_codes_table());
}

// run_ut and metrics allocate and free tensor-sized buffers (MBs) for every API. glibc serves those with a
// fresh mmap each (above its dynamic threshold) and unmaps or trims them on free, so every buffer costs a
// page fault per 4 KiB and the kernel's zeroing. Keeping blocks up to 32 MiB on the heap and never
// trimming it lets freed buffers be reused; peak RSS stays bounded by the largest working set.
void keep_freed_buffers() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_buffers();
  std::vector<std::string> args(argv + 1, argv + argc);
  // msprobe puts the framework before the sub-command: `msprobe -f pytorch run_ut ...`.
  std::string framework;
  if (args.size() >= 2 && (args[0] == "-f" || args[0] == "--framework")) {
    framework = args[1];
    args.erase(args.begin(), args.begin() + 2);
  }
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    print_usage(args.empty() ? stderr : stdout);
    return args.empty() ? 1 : 0;
  }
  if (args[0] == "--version") {
    fmt::print("probe {}\n", probe::version());
    return 0;
  }
  for (const auto& c : kCommands) {
    if (args[0] != c.name) continue;
    std::vector<std::string> rest(args.begin() + 1, args.end());
    if (!framework.empty()) {
      rest.insert(rest.begin(), framework);
      rest.insert(rest.begin(), "--framework");
    }
    // One rank's failure ends the job (the others may wait for it in a collective); each rank prints its
    // own message, prefixed with its rank.
    probe::cli::JobScope scope(&argc, &argv);
    auto fail = [&](int code) {
      if (probe::cli::job().size() > 1) probe::cli::job().abort(code);
      return code;
    };
    const std::string who = probe::cli::job().size() > 1
                                ? fmt::format("probe {} (rank {} of {})", c.name, probe::cli::job().rank(),
                                              probe::cli::job().size())
                                : fmt::format("probe {}", c.name);
    // Under mpirun the commands that split their work (run_ut, multi_run_ut, compare, nan_analyze) run on
    // every rank; the others run on rank 0 alone while the rest wait, so no file is written twice.
    const bool splits =
        c.name == "run_ut" || c.name == "multi_run_ut" || c.name == "compare" || c.name == "nan_analyze";
    try {
      if (!splits && probe::cli::job().size() > 1) {
        int code = 0;
        if (probe::cli::job().rank() == 0) code = c.run(rest);
        probe::cli::job().barrier();
        return code;
      }
      return c.run(rest);
    } catch (const probe::cli::CommandLineError& e) {
      fmt::print(stderr, "{}: {}; see probe {} --help\n", who, e.message(), c.name);
      return fail(probe::exit_code(e.kind()));
    } catch (const probe::Error& e) {
      fmt::print(stderr, "{}: {}: {}\n", who, probe::to_string(e.kind()), e.what());
      return fail(probe::exit_code(e.kind()));
    } catch (const std::bad_alloc&) {
      fmt::print(stderr, "{}: out of memory\n", who);
      return fail(70);
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}: internal error: {}\n", who, e.what());
      return fail(70);
    }
  }
  fmt::print(stderr, "probe: unknown command '{}'; see probe --help\n", args[0]);
  return 2;
}
