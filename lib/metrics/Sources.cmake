set(PROBE_SOURCES
  Kernel.cpp
  MetricValue.cpp
  NumpyFloat.cpp
  DumpCompare.cpp
)
# The fused kernel must round exactly like numpy: no FMA contraction (never -ffast-math);
# -fopenmp-simd only enables the `omp simd` hints, no OpenMP runtime.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/Kernel.cpp ${CMAKE_CURRENT_LIST_DIR}/NumpyFloat.cpp
  PROPERTIES COMPILE_OPTIONS "-ffp-contract=off;-fopenmp-simd")
# Sanitizer builds: one (baseline) copy of the kernel, without debug info (see Kernel.cpp).
if(PROBE_SANITIZE)
  set_property(SOURCE ${CMAKE_CURRENT_LIST_DIR}/Kernel.cpp APPEND PROPERTY COMPILE_DEFINITIONS PROBE_KERNEL_BASE_ONLY)
  set_property(SOURCE ${CMAKE_CURRENT_LIST_DIR}/Kernel.cpp APPEND PROPERTY COMPILE_OPTIONS -g0)
endif()
