set(PROBE_SOURCES
  ApiSelection.cpp
  Engine.cpp
  OutputFiles.cpp
  RandomInputs.cpp
  RunUtFlow.cpp
)
