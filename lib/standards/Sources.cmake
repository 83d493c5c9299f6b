set(PROBE_SOURCES
  StandardsConfig.cpp
  OutputCompare.cpp
  Judge.cpp
  PairMetrics.cpp
)
