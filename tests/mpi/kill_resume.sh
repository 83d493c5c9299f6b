#!/usr/bin/env bash
# A rank killed (SIGKILL) in the middle of `mpirun -n 3 probe run_ut` ends the job with mpirun's message and
# leaves files that -csv_path resumes, under other rank counts, to the CSVs of one uninterrupted process.
#   kill_resume.sh PROBE MPIRUN WORK API_INFO RESULT [RANK]   (RESULT: the result CSV to resume, relative to the
#                     output directory: a step run's is <rank dir>/accuracy_...csv; RANK: the rank killed, 1)
set -euo pipefail
probe=$1 mpirun=$2 work=$3 api_info=$4 result=$5 victim=${6:-1}
rm -rf "$work"
mkdir -p "$work"
ts=20260101000000
"$probe" run_ut -api_info "$api_info" -o "$work/one" --timestamp $ts -n 1 -q >"$work/one.log" 2>&1 ||
  { echo "FAILED: the plain run"; cat "$work/one.log"; exit 1; }
# The victim rank kills itself as the third round starts (PROBE_TEST_KILL_RANK, a hook of test builds): rounds of
# 3 ranks x 1 thread x 4 APIs, so the 24 APIs of two rounds are on disk.
status=0
PROBE_TEST_KILL_RANK=$victim:3 "$mpirun" --oversubscribe -n 3 "$probe" run_ut -api_info "$api_info" -o "$work/killed" \
  --timestamp $ts -n 1 -q >"$work/killed.log" 2>&1 || status=$?
[ "$status" -ne 0 ] || { echo "FAILED: the job with a killed rank exited 0"; cat "$work/killed.log"; exit 1; }
grep -q "exited on signal 9" "$work/killed.log" ||
  { echo "FAILED: no message naming the killed rank"; cat "$work/killed.log"; exit 1; }
rows=$(($(wc -l <"$work/killed/$result") - 1))
echo "killed job: exit $status, $rows result rows kept"
[ "$rows" -eq 24 ] || { echo "FAILED: expected the 24 APIs of two rounds on disk, found $rows"; exit 1; }
for n in 2 1; do  # resume under 2 ranks, then (a no-op on finished files) under 1
  "$mpirun" --oversubscribe -n $n "$probe" run_ut -api_info "$api_info" -csv_path "$work/killed/$result" -n 1 -q \
    >"$work/resume$n.log" 2>&1 || { echo "FAILED: resume under -n $n"; cat "$work/resume$n.log"; exit 1; }
done
csvs=$(cd "$work/one" && find . -name '*.csv' | sort)
[ "$csvs" = "$(cd "$work/killed" && find . -name '*.csv' | sort)" ] || { echo "FAILED: other CSV files"; exit 1; }
for f in $csvs; do
  cmp "$work/one/$f" "$work/killed/$f" || { echo "FAILED: the resumed $f differs from one process"; exit 1; }
done
echo "RESUMED IDENTICAL ($(echo "$csvs" | wc -l) CSVs)"
