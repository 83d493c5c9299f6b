#!/usr/bin/env bash
# Makes a step directory of a multi-rank dump out of single-rank fixtures: STEP/rank<i> -> the i-th DUMP_DIR.
#   make_step.sh STEP DUMP_DIR...
set -euo pipefail
step=$1
shift
rm -rf "$step"
mkdir -p "$step"
i=0
for d in "$@"; do
  ln -s "$d" "$step/rank$i"
  i=$((i + 1))
done
