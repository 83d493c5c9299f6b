set(PROBE_SOURCES Rows.cpp Match.cpp Compare.cpp Output.cpp)
