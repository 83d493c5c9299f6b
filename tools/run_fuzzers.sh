#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzzer build for a bounded time each, seeded from tests/data.
#   tools/run_fuzzers.sh BUILD_DIR [SECONDS_PER_FUZZER]
# Exits non-zero as soon as a fuzzer finds a crash, leak, timeout or out-of-memory; the reproducer is kept
# in BUILD_DIR/fuzz-artifacts/ and its bytes are printed (base64) so that a CI log is enough to replay it.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: $0 BUILD_DIR [SECONDS]}
seconds=${2:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"

seed() {  # seed <fuzzer> <files...>: a fresh corpus directory holding copies of the seed files
  local dir="$work/$1"
  mkdir -p "$dir"
  shift
  local f
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$dir/$(echo "$f" | tr '/' '_')"; done
  echo "$dir"
}

# The pickle fuzzer reads data.pkl alone: take it out of the .pt seeds.
pickles=()
for pt in tests/data/tensors/*.pt; do
  out="$work/pkl_$(basename "$pt" .pt).pkl"
  if unzip -p "$pt" '*/data.pkl' >"$out" 2>/dev/null; then pickles+=("$out"); fi
done

declare -A corpus
corpus[dumpjson]=$(seed dumpjson $(find tests/data/dumps tests/data/run_ut -name '*.json' -size -64k | sort | head -40))
corpus[npy]=$(seed npy tests/data/tensors/*.npy tests/data/tensors/*.npz)
corpus[pt]=$(seed pt tests/data/tensors/*.pt)
corpus[pickle]=$(seed pickle "${pickles[@]}")
corpus[yaml]=$(seed yaml tests/data/dump_mapping/*/*.yaml tests/data/dump_compare/fuzzy/*.yaml)
corpus[precheckframe]=$(seed precheckframe tests/data/precheck_frame/*.frame)
# The online wire fuzzer's first byte is a control byte (bit 7: checksum off; low bits: read size - 1).
corpus[onlinewire]=$(seed onlinewire)
for f in tests/data/online_wire/*.bin; do
  case $f in *nocrc*) control='\207' ;; *) control='\007' ;; esac
  { printf "$control"; cat "$f"; } >"${corpus[onlinewire]}/$(basename "$f")"
done
# The resume fuzzer reads a result CSV, a 0x00 byte, then its details CSV (run_ut's files, as -csv_path
# resumes them). The last seed is the result file under MindSpore's header, without details.
corpus[resumecsv]=$(seed resumecsv)
for r in tests/data/conformance/msprobe_e2e/*/*_accuracy_checking_result_*.csv; do
  [ -f "$r" ] || continue
  out="${corpus[resumecsv]}/$(echo "$r" | tr '/' '_')"
  { cat "$r"; printf '\0'; cat "${r/_result_/_details_}"; } >"$out"
done
[ -f "${r:-}" ] && sed '1s/API name/API Name/' "$r" >"${corpus[resumecsv]}/mindspore_result_only"

# The records fuzzer reads tagged segments (tests/fuzz/RecordsFuzzer.cpp): 0 + u16 length + a frame,
# 1 + a record (run id, key, digest), 2 + u8 length + a torn tail (a resume), 4 + name byte + digest byte.
# Seeds: each frame alone; frames, a resend, a resume and a record under the same name with another digest;
# short records across two resumes, the first after a torn tail.
byte() { printf "\\$(printf %03o "$1")"; }
u16le() { byte $(($1 & 255)); byte $(($1 >> 8)); }
frame_segment() { byte 0; u16le "$(stat -c %s "$1")"; cat "$1"; }
corpus[records]=$(seed records)
for f in tests/data/precheck_frame/*.frame; do frame_segment "$f" >"${corpus[records]}/$(basename "$f")"; done
{
  for f in tests/data/precheck_frame/*.frame tests/data/precheck_frame/relu.frame; do frame_segment "$f"; done
  byte 2; byte 5; printf 'torn\t'
  byte 1; byte 0; byte 25; printf 'Functional.relu.0.forward'; head -c 32 /dev/zero | tr '\0' 'x'
  byte 1; byte 2; printf 'r2'; byte 25; printf 'Functional.relu.0.forward'; head -c 32 /dev/zero
} >"${corpus[records]}/session"
{
  byte 4; byte 1; byte 1; byte 2; byte 1; printf 'x'; byte 4; byte 2; byte 1; byte 2; byte 0
  byte 4; byte 2; byte 9; byte 4; byte 3; byte 3
} >"${corpus[records]}/names"

status=0
for exe in "$build"/tests/fuzz/probe_fuzz_* "$build"/bin/probe_fuzz_*; do
  [ -x "$exe" ] || continue
  name=${exe##*/probe_fuzz_}
  dir=${corpus[$name]:-$(seed "$name")}
  extra=()
  [ "$name" = dumpjson ] && extra+=(-dict=tests/fuzz/dump_json.dict)
  echo "fuzz: $name for ${seconds}s" >&2
  # -rss_limit_mb bounds a decompression bomb; -timeout turns a hang into a failure.
  if ! "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$artifacts/$name-" "${extra[@]}" "$dir" >"$work/$name.log" 2>&1; then
    status=1
    echo "fuzz: $name FAILED; last lines of its log:" >&2
    tail -n 40 "$work/$name.log" >&2
    for a in "$artifacts/$name-"*; do
      [ -f "$a" ] && { echo "fuzz: reproducer $a (base64):" >&2; base64 -w0 "$a" >&2; echo >&2; }
    done
  else
    grep -E '^stat::number_of_executed_units' "$work/$name.log" | sed "s/^/fuzz: $name /" >&2 || true
  fi
done
exit $status
