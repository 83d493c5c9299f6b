#!/usr/bin/env bash
# Mutation check: does a test catch a one-line bug? Applies a sed expression to one source file, builds one
# test target, runs it with a gtest filter, restores the file and rebuilds, then prints one line:
#   KILLED    the tests failed with the mutant in place (what we want)
#   SURVIVED  the tests passed with the mutant in place: no test catches it
# Exit code: 0 killed, 1 survived, 2 the expression changed nothing, 3 the mutant does not build,
# 4 the filter ran no test.
#
#   tools/mutate.sh [-B build-dir] [-k] FILE 'SED-EXPRESSION' TARGET 'GTEST-FILTER'
#   tools/mutate.sh lib/standards/Judge.cpp 's/return x.key > y.key;/return x.key < y.key;/' \
#       probe_metrics_tests 'Judge.Worst*'
#   tools/mutate.sh [-B build-dir] -f tools/mutants.txt
# TARGET probe_python runs the Python module's pytest suite (python/tests) with FILTER as pytest's -k.
#
# -f runs every mutant of a list (lines FILE<TAB>SED-EXPRESSION<TAB>TARGET<TAB>GTEST-FILTER; # comments)
# one after the other and ends with a table; its exit code is 1 when any mutant was not killed.
# -k keeps the build tree as the mutant left it (no rebuild after restoring the file). The file is restored
# on any exit (Ctrl-C included), with a new modification time so that the next build recompiles it.
# The build runs `ninja -j1`, with ccache's CCACHE_BASEDIR set to the parent of the source tree.
set -euo pipefail

build=build
rebuild=1
list=
while getopts "B:kf:" opt; do
  case $opt in
    B) build=$OPTARG ;;
    k) rebuild=0 ;;
    f) list=$OPTARG ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 64 ;;
  esac
done
shift $((OPTIND - 1))
if [ -n "$list" ]; then
  [ -f "$list" ] || { echo "mutate: no list $list" >&2; exit 64; }
  summary=() failed=0
  while IFS=$'\t' read -r f e t g; do
    case $f in '' | '#'*) continue ;; esac
    set +e
    out=$("$0" -B "$build" "$f" "$e" "$t" "$g" </dev/null 2>&1)
    set -e
    echo "$out"
    verdict=$(echo "$out" | grep -E '^(KILLED|SURVIVED|NO-OP|NO-BUILD|NO-TESTS) ' | tail -1 | cut -c1-9 || true)
    [ "$verdict" = "KILLED   " ] || failed=1
    summary+=("${verdict:-ERROR    } $f: $e ($t '$g')")
  done <"$list"
  printf '%s\n' "" "${summary[@]}"
  exit $failed
fi
if [ $# -ne 4 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2
  exit 64
fi
file=$1 expr=$2 target=$3 filter=$4
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -f "$file" ] || { echo "mutate: no file $file" >&2; exit 64; }
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$root")}

backup=$(mktemp)
restore() {
  if ! cmp -s "$backup" "$file"; then cat "$backup" >"$file"; fi
  rm -f "$backup"
}
cp "$file" "$backup"
trap restore EXIT
trap 'exit 130' INT TERM

sed -i -e "$expr" "$file"
if cmp -s "$backup" "$file"; then
  echo "NO-OP     $file: '$expr' changes nothing"
  exit 2
fi
echo "mutant of $file:"
diff "$backup" "$file" | sed 's/^/  /' || true

log=$(mktemp)
status=0
if ! ninja -C "$build" -j1 "$target" >"$log" 2>&1; then
  tail -30 "$log"
  echo "NO-BUILD  $file: '$expr' (the mutant does not compile)"
  rm -f "$log"
  exit 3
fi
set +e
if [ "$target" = probe_python ]; then
  # The Python module's pytest suite (python/tests); the filter is pytest's -k expression.
  root=$(cd "$(dirname "$0")/.." && pwd)
  PYTHONPATH="$build/python" PROBE_CLI_PATH="$build/bin/probe" PROBE_TEST_DATA_DIR="$root/tests/data" \
    timeout 900 /usr/bin/python3 -m pytest -q -p no:cacheprovider -k "$filter" "$root/python/tests" >"$log" 2>&1
  rc=$?
  set -e
  grep -E '^(FAILED|ERROR) |[0-9]+ (passed|failed)' "$log" | sed -n '1,20s/^/  /p'
  grep -qE '[1-9][0-9]* (passed|failed)' "$log" && ran=1 || ran=0
else
  exe=$(find "$build" -type f -name "$target" -perm -u+x | head -1)
  [ -n "$exe" ] || { echo "mutate: no executable $target under $build" >&2; exit 64; }
  timeout 900 "$exe" --gtest_filter="$filter" >"$log" 2>&1
  rc=$?
  set -e
  # sed reads the whole list (head would close the pipe early, and grep's SIGPIPE would end this script).
  grep -E '^\[  (PASSED|FAILED)  \]|^\[  FAILED  \] [A-Za-z]|Failure$' "$log" | sed -n '1,20s/^/  /p'
  grep -qE '^\[==========\] [1-9][0-9]* tests? from .* ran\.' "$log" && ran=1 || ran=0
fi
if [ $ran -eq 0 ]; then
  echo "NO-TESTS  $target --gtest_filter='$filter' ran no test"
  status=4
elif [ $rc -ne 0 ]; then
  echo "KILLED    $file: '$expr' by $target --gtest_filter='$filter' (exit $rc)"
  status=0
else
  echo "SURVIVED  $file: '$expr' by $target --gtest_filter='$filter'"
  status=1
fi
rm -f "$log"

restore
trap - EXIT
if [ $rebuild -eq 1 ]; then
  ninja -C "$build" -j1 "$target" >/dev/null || echo "mutate: rebuilding $target after restoring $file failed" >&2
fi
exit $status
