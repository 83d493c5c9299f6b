set(PROBE_SOURCES
  OnlineChecker.cpp
)
