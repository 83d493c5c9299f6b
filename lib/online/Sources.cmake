probe_component(online USES dump dump_compare dump_writer io metrics run_ut runners standards support
  SOURCES
  ClientConfig.cpp
  DumpRecords.cpp
  OnlineChecker.cpp
  OnlineClient.cpp
  OnlineServer.cpp
  OnlineWire.cpp
  SharedDir.cpp
  Tls.cpp
)
