set(PROBE_SOURCES
  ApiPrecisionCompare.cpp
  DetailsTable.cpp
  Judge.cpp
  RowFormat.cpp
  Thresholds.cpp
)
