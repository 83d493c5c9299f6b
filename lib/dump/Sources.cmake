probe_component(dump USES io support
  SOURCES
  DumpJson.cpp
  DumpModel.cpp
  DumpTensorLoad.cpp
  DumpLayout.cpp
  DumpSummary.cpp
  JsonSupport.cpp
  StackConstruct.cpp
  PrecheckFrame.cpp
)
