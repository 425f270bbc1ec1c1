// Separately rounded float multiply, subtract and add for code that runs both on the device
// and on the host (the CPU tests that emulate a kernel body): __fmul_rn / __fsub_rn / __fadd_rn
// on the device, which are never contracted into an FMA, the plain operators on the host (built
// without contraction). The rules that forbid FMA (filter2d, bilateral, the f32 3x3 filters,
// remap) use these. Also the float <-> bits casts those bodies use (__uint_as_float /
// __float_as_uint on the device, memcpy on the host).
#pragma once

#include <cstdint>
#include <cstring>

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

PIXFLOW_HD float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

PIXFLOW_HD std::uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

}  // namespace pixflow::cuda
