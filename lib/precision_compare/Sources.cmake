probe_component(precision_compare USES standards support
  SOURCES
  ApiPrecisionCompare.cpp
  DetailsTable.cpp
  Judge.cpp
  RowFormat.cpp
)
