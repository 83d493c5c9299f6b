probe_component(dump_writer USES io support
  SOURCES
  DumpWriter.cpp
  PyJson.cpp
  Statistics.cpp
)
