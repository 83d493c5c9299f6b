probe_component(grad USES io support
  SOURCES GradCompare.cpp)
