set(PROBE_SOURCES
  DumpRecords.cpp
  OnlineChecker.cpp
  OnlineWire.cpp
  PrecheckFrame.cpp
)
