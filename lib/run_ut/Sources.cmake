set(PROBE_SOURCES
  ApiSelection.cpp
  BenchCost.cpp
  Engine.cpp
  OutputFiles.cpp
  RandomInputs.cpp
  RunUtFlow.cpp
)
