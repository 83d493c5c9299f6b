#!/usr/bin/env bash
# Online pre-check on one machine: a `probe run_ut` server checks API calls as a "training process"
# streams them over TCP (here `probe replay`, sending the example dump's forward APIs as training would),
# then the same dump is checked offline and the forward verdicts of both runs are compared.
# Usage: run_online_example.sh PATH/TO/probe [OUT_DIR]. Exits non-zero if the verdicts differ.
set -euo pipefail
probe=${1:?usage: run_online_example.sh PATH/TO/probe [OUT_DIR]}
here=$(cd "$(dirname "$0")" && pwd)
dump=$here/../dump/dump.json
out=${2:-$here/../../build/online_example_output}
rm -rf "$out"
mkdir -p "$out/online" "$out/offline"

# Port 0: the server takes any free loopback port and prints it; --producers 1: it ends after one
# training process has sent its stop and every record is written.
source "$here/start_server.sh"
start_server "$probe" "$out"

"$probe" replay -api_info "$dump" --host 127.0.0.1 --port "$port" --rank 0 -q
wait "$server"
trap - EXIT
cat "$out/server.log"

"$probe" -f pytorch run_ut -api_info "$dump" -o "$out/offline" -q >/dev/null
online=$(ls "$out"/online/accuracy_checking_result_*_rank0.csv)
offline=$(ls "$out"/offline/accuracy_checking_result_*.csv)
# Forward verdicts (API name, Forward Test Success) of every API both runs checked.
cut -d, -f1,2 "$online" | sort >"$out/online_forward.txt"
cut -d, -f1,2 "$offline" | sort >"$out/offline_forward.txt"
if ! diff "$out/offline_forward.txt" "$out/online_forward.txt"; then
  echo "online and offline forward verdicts differ" >&2
  exit 1
fi
echo
echo "online == offline forward verdicts for $(($(wc -l <"$out/online_forward.txt") - 1)) APIs;" \
     "flagged as error:"
grep -a ',error' "$online" | cut -d, -f1,2 || echo "  none"
