set(PROBE_SOURCES
  Standards.cpp
  OutputCompare.cpp
  Judge.cpp
  PairMetrics.cpp
  MetricTable.cpp
)
