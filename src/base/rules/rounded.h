/* Separately rounded float / double operations and float <-> bits casts for the rules that
 * forbid FMA contraction (the float filter rules). Device code under nvcc uses __fmul_rn and
 * friends, which are never contracted; host C++ is built with -ffp-contract=off and OpenCL
 * programs carry `#pragma OPENCL FP_CONTRACT OFF` (kernels/common.cl), so the plain operators
 * are rounded once there. src/base/rounded.hpp (pixflow::rounded) wraps these. */
#ifndef PIXFLOW_RULES_ROUNDED_H
#define PIXFLOW_RULES_ROUNDED_H

#include "src/base/rules/base.h"

#if defined(__CUDA_ARCH__)
#define PX_FMUL(a, b) __fmul_rn(a, b)
#define PX_FADD(a, b) __fadd_rn(a, b)
#define PX_FSUB(a, b) __fsub_rn(a, b)
#define PX_FDIV(a, b) __fdiv_rn(a, b)
#define PX_DMUL(a, b) __dmul_rn(a, b)
#define PX_DADD(a, b) __dadd_rn(a, b)
#define PX_DDIV(a, b) __ddiv_rn(a, b)
#else
#define PX_FMUL(a, b) ((a) * (b))
#define PX_FADD(a, b) ((a) + (b))
#define PX_FSUB(a, b) ((a) - (b))
#define PX_FDIV(a, b) ((a) / (b))
#define PX_DMUL(a, b) ((a) * (b))
#define PX_DADD(a, b) ((a) + (b))
#define PX_DDIV(a, b) ((a) / (b))
#endif

PX_FN float px_mul_rn(float a, float b) {
  return PX_FMUL(a, b);
}
PX_FN float px_add_rn(float a, float b) {
  return PX_FADD(a, b);
}
PX_FN float px_sub_rn(float a, float b) {
  return PX_FSUB(a, b);
}
/* The correctly rounded float quotient. OpenCL C allows float division 2.5 ulp unless the
 * program is built with -cl-fp32-correctly-rounded-divide-sqrt (runtime.cpp passes it where
 * the device has it), and NVIDIA's driver used its approximate division even for a quotient
 * written in double: the OpenCL kernels that divide floats take the quotient in double,
 * (float)((double)a / (double)b), the same bits (53 >= 2 * 24 + 2), and say so. */
PX_FN float px_div_rn(float a, float b) {
  return PX_FDIV(a, b);
}

PX_FN float px_bits_float(px_u32 u) {
#if PX_OPENCL
  return as_float(u);
#elif defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}
PX_FN px_u32 px_float_bits(float f) {
#if PX_OPENCL
  return as_uint(f);
#elif defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  px_u32 u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}

#endif /* PIXFLOW_RULES_ROUNDED_H */

/* The double operations: a section of its own, since an OpenCL program's prelude
 * (kernels/common.cl) includes this header before the program enables cl_khr_fp64; the
 * program includes it again after (PX_HAS_F64 is evaluated where it is used). */
#if PX_HAS_F64 && !defined(PIXFLOW_RULES_ROUNDED_F64_H)
#define PIXFLOW_RULES_ROUNDED_F64_H
PX_FN double px_dmul_rn(double a, double b) {
  return PX_DMUL(a, b);
}
PX_FN double px_dadd_rn(double a, double b) {
  return PX_DADD(a, b);
}
PX_FN double px_ddiv_rn(double a, double b) {
  return PX_DDIV(a, b);
}
#endif
