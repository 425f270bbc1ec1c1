// Separately rounded float and double arithmetic for code that runs both on the device and on
// the host (the shared rules in src/base, the CPU tests that emulate a kernel body):
// __fmul_rn / __fsub_rn / __fadd_rn / __fdiv_rn and __dmul_rn / __dadd_rn / __ddiv_rn on the
// device, which are never contracted into an FMA, the plain operators on the host (built without
// contraction). The rules that forbid FMA (filter2d, bilateral, the f32 3x3 filters, remap)
// use these. Also the float <-> bits casts those bodies use (__uint_as_float / __float_as_uint
// on the device, memcpy on the host).
#pragma once

#include <cstdint>
#include <cstring>

#include "src/base/qualifiers.hpp"

namespace pixflow::rounded {

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

PIXFLOW_HD float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
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

PIXFLOW_HD double dmul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

PIXFLOW_HD double dadd_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

PIXFLOW_HD double ddiv_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

}  // namespace pixflow::rounded
