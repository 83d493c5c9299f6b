#!/usr/bin/env bash
# Runs probe's main job on the example dump shipped in examples/: the offline pre-check (run_ut) of
# a tiny bfloat16 transformer block, in which Functional.gelu.0's recorded output was broken on
# purpose (examples/make_example_dump.py). Usage: run_example.sh PATH/TO/probe [OUT_DIR]
set -euo pipefail
probe=${1:?usage: run_example.sh PATH/TO/probe [OUT_DIR]}
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-$here/../build/example_output}
mkdir -p "$out"
"$probe" -f pytorch run_ut -api_info "$here/dump/dump.json" -o "$out"
result=$(ls -t "$out"/accuracy_checking_result_*.csv | head -n 1)
echo
echo "APIs flagged as error (API name, forward, backward):"
grep -a ',error' "$result" | cut -d, -f1-3 || echo "  none"
