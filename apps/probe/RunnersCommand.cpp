// `probe runners`: lists the APIs probe can run (the README table is this command's --markdown output).
#include <fmt/core.h>

#include "ArgParser.h"
#include "Commands.h"
#include "probe/error.h"
#include "probe/runner.h"

namespace probe::cli {

int run_runners(Args args) {
  bool markdown = false;
  std::string framework;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-h" || args[i] == "--help") {
      fmt::print(
          "usage: probe [-f pytorch|mindspore] runners [--markdown]\n\n"
          "Lists the dumped API names probe has a float64 bench runner for, with the runner's schema and\n"
          "whether backward is available.\n\n"
          "  --markdown      print the table of README.md (both frameworks)\n"
          "  --framework F   only list pytorch or mindspore names (same as probe -f F runners)\n");
      fmt::print("{}", kExitCodesNote);
      return 0;
    }
    if (args[i] == "--markdown") {
      markdown = true;
    } else if (args[i] == "--framework" && i + 1 < args.size()) {
      framework = args[++i];
    } else {
      throw Error(ErrorKind::InvalidArgument, "runners: unknown argument '" + args[i] + "'");
    }
  }
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  if (markdown) {
    fmt::print("{}", runners_markdown(reg));
    return 0;
  }
  const std::optional<Framework> only = framework.empty() ? std::nullopt : parse_framework(framework);
  if (!framework.empty() && !only)
    throw Error(ErrorKind::InvalidArgument, "runners: --framework must be pytorch or mindspore");
  for (Framework fw : {Framework::PyTorch, Framework::MindSpore}) {
    if (only && *only != fw) continue;
    for (const std::string& key : reg.keys(fw)) {
      const Runner* r = reg.find(fw, key);
      fmt::print("{}\t{}\t{}\t{}\n", to_string(fw), key, r->schema,
                 r->backward ? "backward" : "forward-only");
    }
  }
  return 0;
}

}  // namespace probe::cli
