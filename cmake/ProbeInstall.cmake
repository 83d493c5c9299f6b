# Installs libprobe, its headers, the CLI, a CMake package config and a pkg-config file.
include(CMakePackageConfigHelpers)

install(TARGETS probe EXPORT probeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS probe_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/probe DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/data/ DESTINATION ${CMAKE_INSTALL_DATADIR}/probe OPTIONAL)
install(EXPORT probeTargets NAMESPACE probe:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/probe)
# find_package(probe COMPONENTS gtest) loads this second export set (probeConfig.cmake).
if(PROBE_BUILD_GTEST)
  install(TARGETS probe_gtest EXPORT probeGtestTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT probeGtestTargets NAMESPACE probe:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/probe)
endif()

set(PROBE_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/probe)
if(PROBE_BUILD_SHARED)
  set(PROBE_CONFIG_PRIVATE_DEPENDENCIES "# (shared build: none)")
else()
  string(JOIN "\n" PROBE_CONFIG_PRIVATE_DEPENDENCIES
    "find_dependency(PkgConfig)"
    "pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)"
    "pkg_check_modules(XLSXWRITER REQUIRED IMPORTED_TARGET xlsxwriter)"
    "pkg_check_modules(YAML REQUIRED IMPORTED_TARGET yaml-0.1)"
    "find_dependency(ZLIB)"
    "find_dependency(OpenSSL 3.0)")
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/probeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/probeConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/probe
  PATH_VARS PROBE_INSTALL_DATADIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/probeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/probeConfig.cmake ${PROJECT_BINARY_DIR}/probeConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/probe)

# prefix is derived from the .pc file's own place, so the file stays right when the install is moved.
file(RELATIVE_PATH PROBE_PC_PREFIX_FROM_PCDIR ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" PROBE_PC_PREFIX_FROM_PCDIR "${PROBE_PC_PREFIX_FROM_PCDIR}")
set(probe_pc_requires "libzip xlsxwriter yaml-0.1 zlib libssl libcrypto")
if(PROBE_BUILD_SHARED)
  # libprobe.so carries its own dependencies: a consumer links only -lprobe (and -pthread, which the public
  # headers' std::jthread needs); --static would add the rest.
  set(PROBE_PC_DEPENDENCIES "Requires.private: ${probe_pc_requires}\nLibs: -L\${libdir} -lprobe -pthread\nLibs.private: -lfmt -ldl")
else()
  set(PROBE_PC_DEPENDENCIES "# libprobe is a static library: its dependencies are needed by every link, not only with --static.\nRequires: ${probe_pc_requires}\nLibs: -L\${libdir} -lprobe -lfmt -ldl -pthread")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/probe.pc.in ${PROJECT_BINARY_DIR}/probe.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/probe.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# probe-gtest.pc: the GoogleTest helpers over probe.pc and GoogleTest's own gtest.pc / gmock.pc.
if(PROBE_BUILD_GTEST)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/probe-gtest.pc.in ${PROJECT_BINARY_DIR}/probe-gtest.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/probe-gtest.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
