# Runs an example and checks that it exits 0 and that its output holds every expected line, whole.
#   cmake -DPROGRAM=exe "-DARGS=a|b" "-DEXPECT=line one|line two" -P expect_output.cmake
# PASS_REGULAR_EXPRESSION cannot do this: it ignores the exit code and accepts any ONE of its patterns.
string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "|" ";" expected "${EXPECT}")
execute_process(COMMAND ${PROGRAM} ${args} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}")
endif()
foreach(line IN LISTS expected)
  string(FIND "\n${out}" "\n${line}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "missing output line: '${line}'")
  endif()
endforeach()
