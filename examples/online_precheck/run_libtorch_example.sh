#!/usr/bin/env bash
# Online pre-check of a LibTorch training process: a `probe run_ut` server on loopback checks every aten op
# that libtorch_online.cpp (probe::torch::CheckScope with a probe::online::Client) streams to it over TCP,
# while the program trains. Checks that the server wrote one row per op the program sent, and that the rows
# flagged as error are exactly the faulty library GELU's, once per step.
# Usage: run_libtorch_example.sh PATH/TO/probe PATH/TO/probe_example_libtorch_online [OUT_DIR] [STEPS]
set -euo pipefail
probe=${1:?usage: run_libtorch_example.sh PATH/TO/probe PATH/TO/probe_example_libtorch_online [OUT_DIR] [STEPS]}
trainer=${2:?usage: run_libtorch_example.sh PATH/TO/probe PATH/TO/probe_example_libtorch_online [OUT_DIR] [STEPS]}
here=$(cd "$(dirname "$0")" && pwd)
out=${3:-$here/../../build/online_libtorch_example_output}
steps=${4:-3}
rm -rf "$out"
mkdir -p "$out/online"

source "$here/start_server.sh"
start_server "$probe" "$out"

# The training process: exits non-zero if any op could not be sent or was not acknowledged.
"$trainer" --host 127.0.0.1 --port "$port" --rank 0 --steps "$steps" | tee "$out/training.log"
wait "$server"
trap - EXIT
cat "$out/server.log"

sent=$(sed -n 's/^streamed \([0-9]*\) ops.*/\1/p' "$out/training.log")
result=$(ls "$out"/online/accuracy_checking_result_*_rank0.csv)
rows=$(($(wc -l <"$result") - 1))
if [ "$rows" != "$sent" ]; then
  echo "the server wrote $rows rows for $sent streamed ops" >&2
  exit 1
fi
# Column 2 is the forward verdict (pass, Warning, error, SKIP).
awk -F, 'NR > 1 && $2 == "error" { print $1 }' "$result" | sort >"$out/flagged.txt"
for ((k = 0; k < steps; k++)); do echo "Aten.gelu.default.$k"; done | sort >"$out/expected_flagged.txt"
if ! diff "$out/expected_flagged.txt" "$out/flagged.txt"; then
  echo "the server flagged other ops than the library GELU of each step" >&2
  exit 1
fi
echo
echo "the server checked all $rows streamed ops; flagged as error: $(paste -sd' ' "$out/flagged.txt")"
