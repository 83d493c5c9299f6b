probe_component(run_ut USES dump io metrics runners standards support
  SOURCES
  ApiChecker.cpp
  ApiSelection.cpp
  BackwardMapping.cpp
  BenchCost.cpp
  Dataflow.cpp
  Engine.cpp
  EngineRanks.cpp
  OutputFiles.cpp
  ParamGrads.cpp
  RandomInputs.cpp
  RecordBook.cpp
  RowEmission.cpp
  RowFormat.cpp
  RowLayout.cpp
  RunRecord.cpp
  RunSetup.cpp
  RunUtFlow.cpp
  RunUtStep.cpp
  RunUtStream.cpp
  ValueBuilder.cpp
)
# The resume tests' kill hooks (PROBE_TEST_KILL_AT, PROBE_TEST_KILL_RANK) exist only in test builds; a library built for use never
# reads that variable.
if(PROBE_BUILD_TESTS)
  set_property(SOURCE ${CMAKE_CURRENT_LIST_DIR}/OutputFiles.cpp ${CMAKE_CURRENT_LIST_DIR}/EngineRanks.cpp APPEND
               PROPERTY COMPILE_DEFINITIONS PROBE_TEST_HOOKS)
endif()
