# Script mode: install the built probe into WORK_DIR/prefix, then configure, build and run a consumer project
# that asks for one optional component (find_package(probe COMPONENTS ${COMPONENT})).
#   COMPONENT        the component's name, for messages
#   CONSUMER_SOURCE  the consumer's CMake project; CONSUMER_EXE  the executable it builds and this script runs
#   EXPECT_OUTPUT    optional regex the consumer's output must match (e.g. GoogleTest's PASSED line)
#   CONSUMER_FLAGS   compile and link flags the consumer needs (the sanitizer runtime of an instrumented probe)
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${PROBE_BINARY_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${WORK_DIR}/build
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix "-DCMAKE_CXX_FLAGS=${CONSUMER_FLAGS}"
                        "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_FLAGS}" RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "${COMPONENT} consumer configure failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "${COMPONENT} consumer build failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env PROBE_REPRO_DIR=${WORK_DIR}/repro ${WORK_DIR}/build/${CONSUMER_EXE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc OR (DEFINED EXPECT_OUTPUT AND NOT out MATCHES "${EXPECT_OUTPUT}"))
  message(FATAL_ERROR "${COMPONENT} consumer failed (${rc}): ${out}")
endif()
message(STATUS "${COMPONENT} component test passed: ${out}")
