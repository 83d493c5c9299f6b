probe_component(run_ut USES dump io metrics runners standards support
  SOURCES
  ApiSelection.cpp
  BenchCost.cpp
  Dataflow.cpp
  Engine.cpp
  OutputFiles.cpp
  ParamGrads.cpp
  RandomInputs.cpp
  RecordBook.cpp
  RowFormat.cpp
  RowLayout.cpp
  RunRecord.cpp
  RunUtFlow.cpp
  RunUtStream.cpp
)
