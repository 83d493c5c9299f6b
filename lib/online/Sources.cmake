set(PROBE_SOURCES
  OnlineChecker.cpp
  OnlineWire.cpp
  PrecheckFrame.cpp
)
