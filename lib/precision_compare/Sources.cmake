set(PROBE_SOURCES
  ApiPrecisionCompare.cpp
  DetailsTable.cpp
  Judge.cpp
  Thresholds.cpp
)
