# python.installed: `cmake --install` puts the package into <prefix>/PROBE_PYTHON_INSTALL_DIR; the prefix is
# then moved, and the package must import from the new place and find its libprobe there.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/installed
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
file(RENAME ${WORK_DIR}/installed ${WORK_DIR}/moved)
set(site ${WORK_DIR}/moved/${INSTALL_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${site} ${PYTHON} -c
  "import numpy, probe; assert probe.__file__.startswith('${site}/probe/'), probe.__file__; \
m = probe.metrics(numpy.ones(4), numpy.ones(4, dtype=numpy.float32)); assert m.status == 'pass', m.status; \
print('imported', probe.__file__)"
  WORKING_DIRECTORY ${WORK_DIR} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the moved install does not import (${rc})")
endif()
