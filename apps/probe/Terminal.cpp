// The width of the terminal the CLI prints to.
#include "Terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace probe::cli {

int terminal_columns() {
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    winsize ws{};
    if (::isatty(fd) == 1 && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  }
  if (const char* c = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long n = std::strtol(c, &end, 10);
    if (end != c && *end == '\0' && n > 0 && n < 10000) return static_cast<int>(n);
  }
  return 100;
}

}  // namespace probe::cli
