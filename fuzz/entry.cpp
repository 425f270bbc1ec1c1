// libFuzzer's entry point for one target body (fuzz/targets.hpp): fuzz/CMakeLists.txt builds
// this file once per target with PIXFLOW_FUZZ_BODY set to the body's name.
#include <cstddef>
#include <cstdint>

#include "fuzz/targets.hpp"

#ifndef PIXFLOW_FUZZ_BODY
#error "PIXFLOW_FUZZ_BODY must name a body of fuzz/targets.hpp"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return pixflow::fuzz::PIXFLOW_FUZZ_BODY(data, size);
}
