// The width of the terminal the CLI prints to, for tables and progress bars that must not wrap.
#pragma once

namespace probe::cli {

/// Columns of the terminal on stdout, else on stderr, else $COLUMNS, else 100 (a file or a pipe).
int terminal_columns();

}  // namespace probe::cli
