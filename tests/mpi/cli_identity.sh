#!/usr/bin/env bash
# Runs one probe command as a plain process and under `mpirun -n 1/2/3`, each into a fresh output directory,
# and fails unless every output is byte-identical to the plain run's and rank 0 printed what the plain run did. Two things differ by design and are
# compared by content: the xlsx's docProps/core.xml (its creation time; every other member byte for byte)
# and the files named by the clock (-da's diff_analyze_<ns>.json, nan_analyze's anomaly_analyze_<ns>.json,
# --report's report_<time>.html, which also names the run's directory:
# compared under their names without it).
#   cli_identity.sh PROBE MPIRUN WORK CWD ARGS...   (ARGS: the command line, @OUT@ = the output directory)
set -euo pipefail
probe=$1 mpirun=$2 work=$3 cwd=$4
shift 4
rm -rf "$work"
mkdir -p "$work"
run() {  # run <label> [launcher...]: the command into $work/<label>
  local label=$1
  shift
  local args=()
  for a in "${cmd[@]}"; do args+=("${a//@OUT@/$work/$label}"); done
  (cd "$cwd" && "$@" "$probe" "${args[@]}") >"$work/$label.out" 2>"$work/$label.log" || {
    echo "FAILED: $label exited $?"; cat "$work/$label.out" "$work/$label.log"; exit 1; }
  # What rank 0 printed, with this run's directory, the clock-named files and the seconds taken out; the line
  # timing the ranks exists only under mpirun with more than one rank.
  sed -e "s#$work/$label#OUT#g" -e 's#\(diff\|anomaly\)_analyze_[0-9]*\.json#\1_analyze.json#g' -e 's#report_[0-9]*\.html#report.html#g' -e '/^ranks [0-9]*: /d' \
    -e 's#[0-9.]* s\b#T s#g' \
    "$work/$label.out" >"$work/$label.stdout"
  for f in "$work/$label"/diff_analyze_*.json; do [ -e "$f" ] && mv "$f" "$work/$label/diff_analyze.json"; done
  for f in "$work/$label"/anomaly_analyze_*.json; do [ -e "$f" ] && mv "$f" "$work/$label/anomaly_analyze.json"; done
  # The report names its run's files by their paths: this run's directory becomes OUT.
  for f in "$work/$label"/report_*.html; do [ -e "$f" ] && sed "s#$work/$label#OUT#g" "$f" >"$work/$label/report.html" && rm "$f"; done
  return 0
}
cmd=("$@")
run one
same() {  # same <a> <b>: byte-identical, or for xlsx every zip member but the creation time
  case "$1" in
    *.xlsx)
      /usr/bin/python3 - "$1" "$2" <<'PY'
import sys, zipfile
a, b = (zipfile.ZipFile(p) for p in sys.argv[1:3])
names = a.namelist()
sys.exit(0 if names == b.namelist() and all(a.read(n) == b.read(n) for n in names if n != "docProps/core.xml") else 1)
PY
      ;;
    *) cmp -s "$1" "$2" ;;
  esac
}
files=$(cd "$work/one" && find . -type f | sort)
[ -n "$files" ] || { echo "FAILED: the plain run wrote nothing"; exit 1; }
for n in 1 2 3; do
  run "n$n" "$mpirun" --oversubscribe -n "$n"
  other=$(cd "$work/n$n" && find . -type f | sort)
  [ "$files" = "$other" ] || { echo "FAILED: -n $n wrote other files:"; diff <(echo "$files") <(echo "$other"); exit 1; }
  cmp -s "$work/one.stdout" "$work/n$n.stdout" ||
    { echo "FAILED: -n $n printed otherwise than one process:"; diff "$work/one.stdout" "$work/n$n.stdout"; exit 1; }
  for f in $files; do
    same "$work/one/$f" "$work/n$n/$f" || { echo "FAILED: -n $n: $f differs from one process"; exit 1; }
  done
  echo "-n $n: $(echo "$files" | wc -l) files identical to one process"
done
echo "IDENTICAL"
