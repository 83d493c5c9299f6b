probe_component(metrics USES support
  SOURCES
  Kernel.cpp
  KernelIsaBase.cpp
  KernelIsaAvx2.cpp
  KernelIsaAvx512.cpp
  MetricValue.cpp
  NumpyFloat.cpp
)
# The fused kernel must round exactly like numpy: no FMA contraction (never -ffast-math);
# -fopenmp-simd only enables the `omp simd` hints, no OpenMP runtime. Its three instruction-set copies are
# separate translation units so that a parallel build compiles them at once.
set(_probe_kernel_sources ${CMAKE_CURRENT_LIST_DIR}/Kernel.cpp ${CMAKE_CURRENT_LIST_DIR}/KernelIsaBase.cpp
  ${CMAKE_CURRENT_LIST_DIR}/KernelIsaAvx2.cpp ${CMAKE_CURRENT_LIST_DIR}/KernelIsaAvx512.cpp)
set_source_files_properties(${_probe_kernel_sources} ${CMAKE_CURRENT_LIST_DIR}/NumpyFloat.cpp
  PROPERTIES COMPILE_OPTIONS "-ffp-contract=off;-fopenmp-simd")
# Sanitizer builds (ASan+UBSan and TSan): one (baseline) copy of the kernel, without debug info (see
# KernelShared.h); the AVX2 and AVX-512 units compile empty. The copies share the threading code (Kernel.cpp),
# which TSan still sees whole; instrumenting the other two cost ~150 CPU-s of every TSan build.
if(PROBE_SANITIZE OR PROBE_TSAN)
  set_property(SOURCE ${_probe_kernel_sources} APPEND PROPERTY COMPILE_DEFINITIONS PROBE_KERNEL_BASE_ONLY)
  set_property(SOURCE ${_probe_kernel_sources} APPEND PROPERTY COMPILE_OPTIONS -g0)
endif()
