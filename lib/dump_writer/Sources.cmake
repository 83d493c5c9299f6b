set(PROBE_SOURCES
  DumpWriter.cpp
  PyJson.cpp
  Statistics.cpp
)
