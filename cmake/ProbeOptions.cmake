# Build switches and the warning/sanitizer flags shared by every probe target.
option(PROBE_BUILD_TESTS "Build the GoogleTest suite" ${PROBE_IS_TOP_LEVEL})
option(PROBE_BUILD_BENCHMARKS "Build the Google Benchmark drivers" ${PROBE_IS_TOP_LEVEL})
# Static by default; BUILD_SHARED_LIBS=ON or PROBE_BUILD_SHARED=ON makes libprobe a shared library that
# exports only the public API (include/probe/export.h).
option(PROBE_BUILD_SHARED "Build libprobe as a shared library" ${BUILD_SHARED_LIBS})
option(PROBE_BUILD_GTEST "Build probe::gtest, the GoogleTest helpers for operator libraries" ON)
option(PROBE_BUILD_FUZZERS "Build libFuzzer targets (needs clang)" OFF)
option(PROBE_WERROR "Treat warnings as errors" OFF)
option(PROBE_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(PROBE_TSAN "Build with ThreadSanitizer (not together with PROBE_SANITIZE)" OFF)
if(PROBE_SANITIZE AND PROBE_TSAN)
  message(FATAL_ERROR "PROBE_SANITIZE and PROBE_TSAN cannot be combined: use two build directories")
endif()
# probe::torch, the LibTorch adapter (Debian libtorch-dev): AUTO builds it when CMake finds Torch, ON makes a
# missing Torch a configure error (CI: its tests must run, never skip), OFF never builds it.
set(PROBE_TORCH AUTO CACHE STRING "Build the LibTorch adapter probe::torch: AUTO, ON or OFF")
set_property(CACHE PROBE_TORCH PROPERTY STRINGS AUTO ON OFF)
# probe::mpi (lib/mpi) and the CLI under mpirun: AUTO builds them when CMake finds MPI (Debian libopenmpi-dev), ON
# makes a missing MPI a configure error (CI: the MPI tests must run, never skip), OFF never builds them.
set(PROBE_WITH_MPI AUTO CACHE STRING "Build probe::mpi and an MPI-aware CLI: AUTO, ON or OFF")
set_property(CACHE PROBE_WITH_MPI PROPERTY STRINGS AUTO ON OFF)
# The Python module `probe` (python/, pybind11 over libprobe's public API): AUTO builds it when CMake finds
# pybind11 (Debian pybind11-dev) and Python 3's development files (python3-dev), ON makes them required.
set(PROBE_WITH_PYTHON AUTO CACHE STRING "Build the Python module probe: AUTO, ON or OFF")
set_property(CACHE PROBE_WITH_PYTHON PROPERTY STRINGS AUTO ON OFF)
option(PROBE_USE_OPENBLAS "float64 GEMM (matmul, linear, conv) through OpenBLAS; OFF: Eigen's own GEMM" ON)

add_library(probe_warnings INTERFACE)
target_compile_options(probe_warnings INTERFACE -Wall -Wextra -Wpedantic
  $<$<BOOL:${PROBE_WERROR}>:-Werror>)
# GCC 12 misreports -Wmaybe-uninitialized inside sanitizer-instrumented libstdc++ (std::regex's
# std::function states); the plain -Werror build keeps the warning.
if(PROBE_SANITIZE OR PROBE_TSAN)
  target_compile_options(probe_warnings INTERFACE $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>)
endif()

# Never -ffast-math: NaN/Inf semantics are part of every metric. Trapping math off lets
# the compiler vectorise comparisons without changing results.
add_library(probe_codegen INTERFACE)
target_compile_options(probe_codegen INTERFACE -fno-trapping-math)

if(PROBE_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
if(PROBE_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
