set(PROBE_SOURCES GradCompare.cpp)
