#!/bin/sh
# Regenerates the runner table of README.md from `probe runners --markdown`.
# usage: tools/update_runner_table.sh [path/to/probe]   (default: build/bin/probe)
set -eu
cd "$(dirname "$0")/.."
probe=${1:-build/bin/probe}
table=$(mktemp)
"$probe" runners --markdown > "$table"
awk -v table="$table" '
  /<!-- runners-table-begin -->/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
  /<!-- runners-table-end -->/ { skip = 0 }
  !skip { print }
' README.md > README.md.tmp
mv README.md.tmp README.md
rm -f "$table"
