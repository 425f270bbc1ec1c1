// Separately rounded float multiply and add for code that runs both on the device and on the
// host (the CPU tests that emulate a kernel body): __fmul_rn / __fadd_rn on the device, which
// are never contracted into an FMA, the plain operators on the host (built without
// contraction). The rules that forbid FMA (filter2d, bilateral, the f32 3x3 filters, remap) use
// these.
#pragma once

#include "src/base/qualifiers.hpp"

namespace pixflow::cuda {

PIXFLOW_HD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

PIXFLOW_HD float sub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

PIXFLOW_HD float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

}  // namespace pixflow::cuda
