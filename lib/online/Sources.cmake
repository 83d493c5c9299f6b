set(PROBE_SOURCES
  DumpRecords.cpp
  OnlineChecker.cpp
  OnlineClient.cpp
  OnlineServer.cpp
  OnlineWire.cpp
  PrecheckFrame.cpp
)
