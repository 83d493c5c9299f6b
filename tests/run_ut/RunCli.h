// Runs the built `probe` CLI for the run_ut tests.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace probe::testing {

struct CliResult {
  int code = -1;    ///< exit status, -1 if the process did not exit normally
  std::string out;  ///< stdout + stderr
};

/// `probe ARGS` through the shell (ARGS is shell-quoted by the caller).
inline CliResult run_cli(const std::string& args) {
  std::string cmd = std::string(PROBE_CLI_PATH) + " " + args + " 2>&1";
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p)) r.out += buf.data();
  int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace probe::testing
