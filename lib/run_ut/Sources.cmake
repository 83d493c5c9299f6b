set(PROBE_SOURCES
  ApiSelection.cpp
  Engine.cpp
  OutputFiles.cpp
  RunUt.cpp
)
