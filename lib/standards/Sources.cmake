probe_component(standards USES dump_compare metrics runners support
  SOURCES
  Standards.cpp
  DetailsRows.cpp
  OutputCompare.cpp
  Judge.cpp
  ErrorBound.cpp
  PairMetrics.cpp
  MetricTable.cpp
  Thresholds.cpp
)
# The error bound's SIMD pre-pass (AVX2/AVX-512 functions in ErrorBound.cpp) must round exactly like its
# scalar loop: no FMA contraction.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/ErrorBound.cpp PROPERTIES COMPILE_OPTIONS "-ffp-contract=off")
