// Runs the built `probe` CLI from a test.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace probe::testing {

struct CliResult {
  int code = -1;    ///< exit status, -1 if the process did not exit normally
  std::string out;  ///< stdout + stderr
};

/// `probe ARGS` through the shell (ARGS is shell-quoted by the caller), in directory `cwd` when one is given.
inline CliResult run_cli(const std::string& args, const std::string& cwd = {}) {
  std::string cmd = std::string("'") + PROBE_CLI_PATH + "' " + args + " 2>&1";
  if (!cwd.empty()) cmd = "cd '" + cwd + "' && " + cmd;
  CliResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace probe::testing
