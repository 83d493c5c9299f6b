set(PROBE_SOURCES Rows.cpp Match.cpp LayerMapping.cpp Compare.cpp Output.cpp DiffAnalyze.cpp)
