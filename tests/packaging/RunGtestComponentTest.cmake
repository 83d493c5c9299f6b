# Script mode: install the built probe into WORK_DIR/prefix, then configure, build and run a GoogleTest
# consumer that asks for the optional component: find_package(probe COMPONENTS gtest).
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${PROBE_BINARY_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${WORK_DIR}/build
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "gtest consumer configure failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "gtest consumer build failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env PROBE_REPRO_DIR=${WORK_DIR}/repro ${WORK_DIR}/build/consumer_test
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc OR NOT out MATCHES "\\[  PASSED  \\] 1 test")
  message(FATAL_ERROR "gtest consumer failed (${rc}): ${out}")
endif()
message(STATUS "gtest component test passed")
