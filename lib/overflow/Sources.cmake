probe_component(overflow USES dump dump_writer run_ut runners support
  SOURCES OverflowCheck.cpp NanAnalyze.cpp)
