// Separately rounded float and double arithmetic for code that runs both on the device and on
// the host (the shared rules in src/base, the CPU tests that emulate a kernel body):
// __fmul_rn / __fsub_rn / __fadd_rn / __fdiv_rn and __dmul_rn / __dadd_rn / __ddiv_rn on the
// device, which are never contracted into an FMA, the plain operators on the host (built without
// contraction). The rules that forbid FMA (filter2d, bilateral, the f32 3x3 filters, remap)
// use these. Also the float <-> bits casts those bodies use (__uint_as_float / __float_as_uint
// on the device, memcpy on the host).
#pragma once

#include <cstdint>

#include "src/base/qualifiers.hpp"
#include "src/base/rules/rounded.h"

// The definitions are the C subset's (src/base/rules/rounded.h, which the OpenCL kernels
// include too); these are their C++ names.
namespace pixflow::rounded {

PIXFLOW_HD float mul_rn(float a, float b) {
  return px_mul_rn(a, b);
}
PIXFLOW_HD float sub_rn(float a, float b) {
  return px_sub_rn(a, b);
}
PIXFLOW_HD float add_rn(float a, float b) {
  return px_add_rn(a, b);
}
PIXFLOW_HD float div_rn(float a, float b) {
  return px_div_rn(a, b);
}
PIXFLOW_HD float bits_float(std::uint32_t u) {
  return px_bits_float(u);
}
PIXFLOW_HD std::uint32_t float_bits(float f) {
  return px_float_bits(f);
}
PIXFLOW_HD double dmul_rn(double a, double b) {
  return px_dmul_rn(a, b);
}
PIXFLOW_HD double dadd_rn(double a, double b) {
  return px_dadd_rn(a, b);
}
PIXFLOW_HD double ddiv_rn(double a, double b) {
  return px_ddiv_rn(a, b);
}

}  // namespace pixflow::rounded
