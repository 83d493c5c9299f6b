probe_component(overflow USES dump run_ut runners support
  SOURCES OverflowCheck.cpp NanAnalyze.cpp)
