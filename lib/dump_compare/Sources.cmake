probe_component(dump_compare USES dump metrics support
  SOURCES Rows.cpp Match.cpp LayerMapping.cpp Compare.cpp Output.cpp DiffAnalyze.cpp
  DumpCompare.cpp
)
