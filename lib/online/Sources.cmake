set(PROBE_SOURCES
  OnlineChecker.cpp
  PrecheckFrame.cpp
)
