# libprobe's components. Each lib/<component>/Sources.cmake calls
#
#   probe_component(<name> USES <component>... SOURCES <file>...)
#
# which makes the object library probe_<name> and declares the components it uses, LLVM LINK_COMPONENTS
# style: the declared uses become links between the object libraries, so `cmake --graphviz` draws the
# component graph and CMake refuses a cycle among them at generate time ("Cyclic dependencies are allowed only
# among static libraries"). A use that is not declared (an internal header "<other>/X.h" included, or a
# symbol defined in another component) fails the CTest check probe_component_uses
# (tools/check_components.py). libprobe itself is still one library, linked from every component's objects.

# What every component compiles with: the flags are the same for all of them, so ccache shares their objects
# between worktrees and with builds made before the split.
add_library(probe_component_settings INTERFACE)
target_include_directories(probe_component_settings INTERFACE ${PROJECT_SOURCE_DIR}/include
                           ${PROJECT_SOURCE_DIR}/lib)
target_compile_features(probe_component_settings INTERFACE cxx_std_20)
target_link_libraries(probe_component_settings INTERFACE probe_warnings probe_codegen xtensor Eigen3::Eigen
  PkgConfig::LIBZIP PkgConfig::XLSXWRITER PkgConfig::YAML ZLIB::ZLIB OpenSSL::SSL OpenSSL::Crypto fmt::fmt
  Threads::Threads)
target_compile_definitions(probe_component_settings INTERFACE
  PROBE_DATA_DIR="${CMAKE_INSTALL_FULL_DATADIR}/probe"
  PROBE_VERSION_STRING="${PROJECT_VERSION}")

set_property(GLOBAL PROPERTY PROBE_COMPONENTS "")

function(probe_component name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "USES;SOURCES")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "probe_component(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "probe_component(${name}): no SOURCES")
  endif()
  set(target probe_${name})
  list(TRANSFORM arg_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/ REGEX "^[^/]")
  add_library(${target} OBJECT ${arg_SOURCES})
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(PROBE_BUILD_SHARED)
    set_target_properties(${target} PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  endif()
  target_link_libraries(${target} PRIVATE probe_component_settings)
  foreach(used IN LISTS arg_USES)
    target_link_libraries(${target} PRIVATE probe_${used})
  endforeach()
  set_property(GLOBAL APPEND PROPERTY PROBE_COMPONENTS ${name})
  set_property(GLOBAL PROPERTY PROBE_COMPONENT_USES_${name} "${arg_USES}")
  set_property(GLOBAL PROPERTY PROBE_COMPONENT_DIR_${name} "${CMAKE_CURRENT_LIST_DIR}")
endfunction()

# Writes the declarations (component, its folder, its uses, its object files) for the CTest check.
function(probe_write_component_manifest file)
  get_property(components GLOBAL PROPERTY PROBE_COMPONENTS)
  set(text "")
  foreach(name IN LISTS components)
    get_property(uses GLOBAL PROPERTY PROBE_COMPONENT_USES_${name})
    get_property(dir GLOBAL PROPERTY PROBE_COMPONENT_DIR_${name})
    string(REPLACE ";" " " uses "${uses}")
    string(APPEND text "component ${name}\ndir ${dir}\nuses ${uses}\n"
           "objects $<JOIN:$<TARGET_OBJECTS:probe_${name}>,|>\n")
  endforeach()
  file(GENERATE OUTPUT ${file} CONTENT "${text}")
endfunction()
