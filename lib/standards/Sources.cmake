set(PROBE_SOURCES
  Standards.cpp
  OutputCompare.cpp
  Judge.cpp
  ErrorBound.cpp
  PairMetrics.cpp
  MetricTable.cpp
)
