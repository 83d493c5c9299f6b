#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (run as root, or with sudo available):
#   tools/bootstrap.sh example   install what is missing, build, run probe on the example dump
#   tools/bootstrap.sh test      install what is missing, build, run the whole test suite (CTest)
#   tools/bootstrap.sh sanitize  same as test, built with AddressSanitizer + UndefinedBehaviorSanitizer
#   tools/bootstrap.sh tsan      the threaded components' tests (core, run_ut, online, dump_compare,
#                                dump_writer) under
#                                ThreadSanitizer
#   tools/bootstrap.sh clang     same as test, built with clang (optional developer check, not run by CI)
#   tools/bootstrap.sh format    fail if any tracked C/C++ file differs from clang-format-14's output
#   tools/bootstrap.sh fuzz      build the libFuzzer targets (clang) and run each for PROBE_FUZZ_SECONDS (20)
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
case "$mode" in
  example|test|sanitize|tsan|clang|format|fuzz) ;;
  *) echo "usage: $0 example|test|sanitize|tsan|clang|format|fuzz" >&2; exit 2;;
esac

packages=(cmake ninja-build g++ pkg-config rapidjson-dev libxtensor-dev xtl-dev libzip-dev libxlsxwriter-dev
          libeigen3-dev libfmt-dev zlib1g-dev libgtest-dev libgmock-dev libbenchmark-dev libyaml-dev
          libopenblas-dev libopenblas0-serial libssl-dev)
if [ "$mode" = clang ]; then packages+=(clang); fi  # Debian 12: clang 14, the compiler of the fuzzer build
# The suite checks that Python's torch.load reads the .pt files probe writes (tests/io), with Debian's own
# interpreter: a missing torch is a test failure, never a skip, so every test mode installs it.
if [ "$mode" != example ] && [ "$mode" != fuzz ]; then packages+=(python3 python3-numpy python3-torch); fi
# The online TLS tests make their certificates with the openssl command (a missing one would be a skip).
if [ "$mode" != example ] && [ "$mode" != fuzz ]; then packages+=(openssl); fi
# The LibTorch adapter probe::torch and its tests (PROBE_TORCH=ON below: a missing Torch fails the configure).
if [ "$mode" = test ] || [ "$mode" = sanitize ]; then packages+=(libtorch-dev); fi
# probe::mpi, the CLI under mpirun and their tests (PROBE_WITH_MPI=ON in test mode: a missing MPI fails the
# configure, so the mpirun tests always run there).
if [ "$mode" = test ]; then packages+=(libopenmpi-dev openmpi-bin); fi
# The Python module `probe` (python/, PROBE_WITH_PYTHON=ON below) and its pytest suite, run by Debian's python3.
if [ "$mode" = test ]; then packages+=(pybind11-dev python3-dev python3-pytest); fi
# The report's browser test renders the page in headless Chromium (--dump-dom, --screenshot; a missing
# chromium is a test failure, never a skip).
if [ "$mode" = test ] || [ "$mode" = sanitize ] || [ "$mode" = clang ]; then packages+=(chromium); fi
if [ "$mode" = fuzz ]; then packages+=(clang unzip); fi  # unzip: data.pkl seeds out of the .pt fixtures
# The style check needs only git and the formatter the tree is formatted with (clang-format 14).
if [ "$mode" = format ]; then packages=(git clang-format-14); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}" >&2
  SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  t0=$SECONDS
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "bootstrap: installed ${#missing[@]} packages (and their dependencies) in $((SECONDS - t0)) s" >&2
fi

jobs=$(nproc)
launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# The sanitizer and fuzzer builds (RelWithDebInfo) at -O1 with line tables only (-g1): the sanitizers' stack
# traces need only file:line, and OSS-Fuzz builds its fuzzers the same way. CMake's default -O2 -g made these
# builds the longest part of CI.
instrumented=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
configure() {  # configure <build dir> [extra cmake args...]
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPROBE_WERROR=ON "${launcher[@]}" "$@" >/dev/null
  build "$dir"
}
build() {  # build <build dir> [targets...]: prints how long the build took (CI's log shows where time goes)
  local dir=$1 t0=$SECONDS
  shift
  cmake --build "$dir" -j "$jobs" ${1:+--target "$@"}
  echo "bootstrap: built $dir${1:+ ($*)} in $((SECONDS - t0)) s"
}

# CTest exits 0 when it finds no test at all or when tests report GTEST_SKIP, so a misconfigured build dir or a
# missing data file would look green. Count what ran from CTest's JUnit report and fail on zero or on any skip.
run_suite() {  # run_suite <build dir> [extra ctest args...]
  local dir=$1; shift
  local junit
  junit=$(realpath -m "$dir/ctest-junit.xml")
  rm -f "$junit"
  local status=0
  ctest --test-dir "$dir" -j "$jobs" --output-on-failure --no-tests=error --output-junit "$junit" "$@" || status=$?
  local ran skipped
  ran=$(grep -c '<testcase ' "$junit" 2>/dev/null || true)
  skipped=$(grep -c '<testcase [^>]*status="\(notrun\|disabled\)"' "$junit" 2>/dev/null || true)
  if [ "${ran:-0}" -eq 0 ]; then
    echo "bootstrap: CTest ran no test in $dir" >&2; return 1
  fi
  if [ "${skipped:-0}" -ne 0 ]; then
    echo "bootstrap: $skipped of $ran tests did not run (skipped or disabled) in $dir; that is not a pass:" >&2
    grep -o '<testcase name="[^"]*"[^>]*status="\(notrun\|disabled\)"' "$junit" |
      sed 's/<testcase name="\([^"]*\)".*/  \1/' >&2
    return 1
  fi
  [ "$status" -eq 0 ] || return "$status"
  echo "bootstrap: $ran tests ran in $dir, none skipped"
}

case "$mode" in
  example)
    # Each mode states every option it depends on: build/ is shared by example and test, in either order.
    configure build -DPROBE_BUILD_TESTS=OFF -DPROBE_BUILD_BENCHMARKS=OFF -DPROBE_TORCH=OFF -DPROBE_BUILD_SHARED=ON
    exec examples/run_example.sh build/bin/probe
    ;;
  test)
    # Shared libprobe here (the CLI, the examples and the installed consumers of the packaging tests link
    # libprobe.so, so a public entity missing PROBE_API fails the build); the sanitizer builds are static.
    configure build -DPROBE_BUILD_TESTS=ON -DPROBE_BUILD_BENCHMARKS=ON -DPROBE_TORCH=ON -DPROBE_BUILD_SHARED=ON \
      -DPROBE_WITH_MPI=ON -DPROBE_WITH_PYTHON=ON -DPython3_EXECUTABLE=/usr/bin/python3
    run_suite build --timeout 900
    ;;
  sanitize)
    # A static libprobe here, so its packaging tests (consumers linked with the sanitizer runtime) check the
    # static package. -Werror stays on in the main build; under sanitizer instrumentation GCC 12 emits false-positive
    # -Wmaybe-uninitialized/-Wrestrict warnings inside libstdc++ (std::regex, std::string), so here
    # warnings are reported but do not fail the build. MPI stays out (its tests run in test mode): Open MPI's
    # runtime keeps allocations past MPI_Finalize that LeakSanitizer would report.
    configure build-asan "${instrumented[@]}" -DPROBE_SANITIZE=ON -DPROBE_BUILD_BENCHMARKS=OFF \
      -DPROBE_WERROR=OFF -DPROBE_BUILD_TESTS=ON -DPROBE_TORCH=ON -DPROBE_WITH_MPI=OFF -DPROBE_WITH_PYTHON=OFF
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      PROBE_UNDER_SANITIZER=1 run_suite build-asan --timeout 1800
    ;;
  tsan)
    # Only the components that run threads (the thread pool, run_ut's workers and its CLI with -n, the online
    # checker, dump compare, the dump writer): ThreadSanitizer slows code 5-15x and a whole-suite run would not
    # fit CI's budget.
    # The LibTorch adapter is left out: libtorch itself is not instrumented, so TSan cannot see its locks.
    cmake -S . -B build-tsan -G Ninja "${instrumented[@]}" -DPROBE_TSAN=ON -DPROBE_WERROR=OFF -DPROBE_WITH_PYTHON=OFF \
      -DPROBE_BUILD_TESTS=ON -DPROBE_BUILD_BENCHMARKS=OFF -DPROBE_TORCH=OFF -DPROBE_WITH_MPI=OFF "${launcher[@]}" >/dev/null
    build build-tsan probe_cli probe_core_tests probe_run_ut_tests probe_online_tests \
      probe_dump_compare_tests probe_dump_writer_tests
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tools/tsan.supp" \
      run_suite build-tsan --timeout 1800 -L '^(core|run_ut|online|dump_compare|dump_writer)$'
    ;;
  format)
    # --dry-run --Werror prints each drifting line and fails; the fix is `clang-format-14 -i FILE`.
    git ls-files -z '*.cpp' '*.h' '*.hpp' '*.inc' '*.cc' | xargs -0 clang-format-14 --dry-run --Werror
    echo "format: $(git ls-files '*.cpp' '*.h' '*.hpp' '*.inc' '*.cc' | wc -l) files clean"
    ;;
  clang)
    # clang warns where g++ is silent (C++20 reversed operators, code only an #if branch uses); keeping both
    # compilers at -Werror keeps the fuzzer build (clang only) working.
    configure build-clang -DCMAKE_CXX_COMPILER=clang++ -DPROBE_BUILD_TESTS=ON
    run_suite build-clang --timeout 900
    ;;
  fuzz)
    cmake -S . -B build-fuzz -G Ninja "${instrumented[@]}" -DCMAKE_CXX_COMPILER=clang++ \
      -DPROBE_BUILD_FUZZERS=ON -DPROBE_BUILD_TESTS=OFF -DPROBE_BUILD_BENCHMARKS=OFF "${launcher[@]}" >/dev/null
    # Only the fuzzers (and the library they link), not the CLI.
    build build-fuzz $(ninja -C build-fuzz -t targets all | sed -n 's/^\(probe_fuzz_[a-z_]*\):.*/\1/p' | sort -u)
    tools/run_fuzzers.sh build-fuzz "${PROBE_FUZZ_SECONDS:-20}"
    ;;
esac
