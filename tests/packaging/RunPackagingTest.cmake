# Script mode: installs the built probe into WORK_DIR/prefix, moves the install elsewhere (a relocated
# install), then builds and runs a consumer via find_package(probe) and via pkg-config, and configures a
# parent project that vendors probe with add_subdirectory.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${PROBE_BINARY_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install failed")
endif()
file(RENAME ${WORK_DIR}/prefix ${WORK_DIR}/moved)
set(prefix ${WORK_DIR}/moved)
# No variable may point probe at its data: the relocated install must find it by itself.
unset(ENV{PROBE_DATA_DIR})
unset(ENV{PROBE_STANDARDS_FILE})

function(check_consumer exe how)
  execute_process(COMMAND ${exe} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc OR NOT out MATCHES "probe [0-9]+\\.[0-9]+\\.[0-9]+ float32 \\(2, 3\\) pass")
    message(FATAL_ERROR "${how} consumer failed (${rc}): ${out}${err}")
  endif()
  # The standards come from the moved share/probe (not the configured prefix, not the source tree).
  if(NOT out MATCHES "standards: ${prefix}/[^\n]*share/probe/precision_standards.json")
    message(FATAL_ERROR "${how} consumer did not read the relocated data files: ${out}")
  endif()
  message(STATUS "${how}: ${out}")
endfunction()

# 1. find_package(probe) from the relocated prefix. A shared libprobe's package requires none of the
# library's private dependencies: the consumer is configured with them made unfindable.
set(private_deps_off)
if(PROBE_SHARED)
  file(GLOB_RECURSE config_file ${prefix}/*/probeConfig.cmake)
  file(READ ${config_file} config_text)
  foreach(dep libzip xlsxwriter yaml ZLIB OpenSSL)
    if(config_text MATCHES "${dep}")
      message(FATAL_ERROR "the shared package's probeConfig.cmake requires the private dependency ${dep}")
    endif()
  endforeach()
  set(private_deps_off -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON -DCMAKE_DISABLE_FIND_PACKAGE_ZLIB=ON
                       -DCMAKE_DISABLE_FIND_PACKAGE_OpenSSL=ON)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${PROBE_PACKAGING_SOURCE} -B ${WORK_DIR}/build
                        -DCMAKE_PREFIX_PATH=${prefix} "-DCMAKE_CXX_FLAGS=${CONSUMER_FLAGS}"
                        "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_FLAGS}" ${private_deps_off} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer configure failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer build failed")
endif()
# Run from the moved prefix's bin/: an executable with the static libprobe linked in finds share/probe
# beside itself (outside the prefix it would fall back to the compiled-in copy).
file(COPY ${WORK_DIR}/build/consumer ${WORK_DIR}/build/first_user DESTINATION ${prefix}/bin)
check_consumer(${prefix}/bin/consumer find_package)
# The first user's scenarios: DumpWriter with requires_grad + run_ut's backward, a device runner without
# backward, judge by a dumped name, cancel/resume byte-identical.
execute_process(COMMAND ${prefix}/bin/first_user ${WORK_DIR}/first_user RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(rc OR NOT out MATCHES "cancel/resume: [0-9]+ APIs, resumed files byte-identical")
  message(FATAL_ERROR "first-user scenarios failed (${rc}): ${out}${err}")
endif()
message(STATUS "first user: ${out}")

# 2. pkg-config: plain --cflags --libs (no --static) must be enough, and must carry C++20.
file(GLOB_RECURSE pc_files ${prefix}/*/probe.pc)
list(LENGTH pc_files n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one installed probe.pc, found: ${pc_files}")
endif()
get_filename_component(pc_dir ${pc_files} DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
execute_process(COMMAND pkg-config --cflags --libs probe RESULT_VARIABLE rc OUTPUT_VARIABLE flags
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(rc OR NOT flags MATCHES "-std=c\\+\\+20" OR NOT flags MATCHES "${prefix}")
  message(FATAL_ERROR "pkg-config flags wrong (${rc}): ${flags}")
endif()
separate_arguments(flag_list UNIX_COMMAND "${flags} ${CONSUMER_FLAGS}")
if(PROBE_SHARED)
  # Where a shared libprobe is found at run time is the consumer's choice; this one records it.
  execute_process(COMMAND pkg-config --variable=libdir probe OUTPUT_VARIABLE pc_libdir
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  list(APPEND flag_list -Wl,-rpath,${pc_libdir})
endif()
execute_process(COMMAND ${CXX} ${PROBE_PACKAGING_SOURCE}/consumer.cpp -o ${prefix}/bin/consumer_pc ${flag_list}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "pkg-config consumer build failed: ${err}")
endif()
check_consumer(${prefix}/bin/consumer_pc pkg-config)
if(PROBE_SHARED)
  # What the README says for a binary linked without a run path: LD_LIBRARY_PATH=$(pkg-config
  # --variable=libdir probe). Without it the loader does not find the moved libprobe.so.
  list(REMOVE_ITEM flag_list -Wl,-rpath,${pc_libdir})
  execute_process(COMMAND ${CXX} ${PROBE_PACKAGING_SOURCE}/consumer.cpp -o ${prefix}/bin/consumer_pc_norpath
                          ${flag_list} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "pkg-config consumer (no run path) build failed: ${err}")
  endif()
  execute_process(COMMAND ${prefix}/bin/consumer_pc_norpath RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc)
    message(FATAL_ERROR "a consumer without run path found the moved libprobe.so by itself")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${pc_libdir} ${prefix}/bin/consumer_pc_norpath
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc OR NOT out MATCHES "float32 \\(2, 3\\) pass")
    message(FATAL_ERROR "pkg-config consumer with LD_LIBRARY_PATH failed (${rc}): ${out}${err}")
  endif()
  message(STATUS "pkg-config without run path, with LD_LIBRARY_PATH: ${out}")
endif()
if(PROBE_GTEST)
  # probe-gtest.pc: the operator-library test of the gtest component, built by pkg-config alone.
  execute_process(COMMAND pkg-config --cflags --libs probe-gtest gtest_main RESULT_VARIABLE rc
                  OUTPUT_VARIABLE gflags ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc)
    message(FATAL_ERROR "pkg-config probe-gtest failed: ${err}")
  endif()
  separate_arguments(gflag_list UNIX_COMMAND "${gflags} ${CONSUMER_FLAGS}")
  if(PROBE_SHARED)
    list(APPEND gflag_list -Wl,-rpath,${pc_libdir})
  endif()
  execute_process(COMMAND ${CXX} ${PROBE_PACKAGING_SOURCE}/gtest_consumer/consumer_test.cpp
                          -o ${prefix}/bin/consumer_gtest_pc ${gflag_list} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "probe-gtest.pc consumer build failed: ${err}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PROBE_REPRO_DIR=${WORK_DIR}/repro ${prefix}/bin/consumer_gtest_pc
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc OR NOT out MATCHES "\\[  PASSED  \\] 2 tests")
    message(FATAL_ERROR "probe-gtest.pc consumer failed (${rc}): ${out}")
  endif()
  message(STATUS "probe-gtest.pc consumer passed")
endif()

# 3. The installed CLI runs from the moved prefix with no environment variable: it finds a shared libprobe
# through its relative run path and the data files beside the library.
execute_process(COMMAND ${prefix}/bin/probe --version RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc OR NOT out MATCHES "probe [0-9]+\\.[0-9]+\\.[0-9]+")
  message(FATAL_ERROR "the relocated CLI failed (${rc}): ${out}${err}")
endif()
if(PROBE_SHARED)
  file(GLOB shared_libs ${prefix}/lib*/libprobe.so.*)
  if(NOT shared_libs)
    message(FATAL_ERROR "PROBE_BUILD_SHARED install has no libprobe.so.*")
  endif()
  execute_process(COMMAND ldd ${prefix}/bin/probe OUTPUT_VARIABLE ldd_out)
  if(NOT ldd_out MATCHES "libprobe\\.so[^\n]*=> ${prefix}/")
    message(FATAL_ERROR "the relocated CLI does not load the relocated libprobe.so: ${ldd_out}")
  endif()
endif()
message(STATUS "relocated CLI: ${out}")

# 4. add_subdirectory: configure only (building probe a second time would double CI's compile time); the
# parent's CMakeLists checks the target, the options and the build type.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${PROBE_PACKAGING_SOURCE}/subproject -B ${WORK_DIR}/subproject
                        -DPROBE_SOURCE=${PROBE_SOURCE_DIR} -DPROBE_TORCH=OFF RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "add_subdirectory parent failed to configure: ${out}${err}")
endif()
message(STATUS "packaging test passed")
