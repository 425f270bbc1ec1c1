# The fuzz targets' bodies (fuzz/targets.hpp): built into the libFuzzer binaries by
# fuzz/CMakeLists.txt and into the test binary by tests/CMakeLists.txt.
set(PIXFLOW_FUZZ_BODY_SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/fuzz_util.cpp
    ${CMAKE_CURRENT_LIST_DIR}/io_targets.cpp
    ${CMAKE_CURRENT_LIST_DIR}/pipeline_target.cpp
    ${CMAKE_CURRENT_LIST_DIR}/differential_target.cpp)
