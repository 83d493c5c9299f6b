set(PROBE_SOURCES OverflowCheck.cpp NanAnalyze.cpp)
