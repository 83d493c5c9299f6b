set(PROBE_SOURCES
  DumpJson.cpp
  DumpModel.cpp
  DumpTensorLoad.cpp
  DumpLayout.cpp
  JsonSupport.cpp
  StackConstruct.cpp
)
