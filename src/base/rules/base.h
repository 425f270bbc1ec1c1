/* The shared rule subset (issue 11): C that compiles as OpenCL C 1.2 (embedded into every
 * OpenCL program, cmake/embed_cl.cmake), as C++ (the reference and the CPU backend, built with
 * -ffp-contract=off) and under nvcc (host and device, -fmad=false). The C++ rule headers of
 * src/base are thin wrappers over these functions, so src/ref, the CPU backend, the CUDA
 * kernels and the OpenCL kernels evaluate one definition of each per-sample rule.
 *
 * The subset: no templates, no namespaces, no references, no C++ casts; plain `if` / `switch`;
 * names start with px_ (rules) or PX_ (macros); a function per type where a rule is typed
 * (px_sat_u8_f64, ...), generated from one body by a macro where the bodies would be copies.
 * Each header has a classic include guard (the embedding inlines the text; no #pragma once).
 *
 *   PX_FN        qualifies a rule: `inline` (C++ and OpenCL C), `__host__ __device__
 *                __forceinline__` under nvcc.
 *   PX_OPENCL    1 when compiled as OpenCL C.
 *   PX_DEVICE    1 in device code (OpenCL C, or nvcc's device pass): where a rule may use a
 *                device built-in that computes the same bits as the portable expression.
 *   PX_HAS_F64   1 where `double` may be used: always in C++ and CUDA; in OpenCL C only where
 *                the program enabled cl_khr_fp64 and said so by `#define PX_FP64 1` before it
 *                included the rules (the double rules are left out otherwise). In OpenCL it
 *                expands to PX_FP64, so it is evaluated where it is used: the prelude
 *                (kernels/common.cl) includes base.h before a program enables fp64.
 *   px_u8 .. px_u64  fixed-width integer types: OpenCL's uchar / ushort / short / int / uint /
 *                long / ulong, <stdint.h>'s elsewhere (the same widths: OpenCL fixes them). */
#ifndef PIXFLOW_RULES_BASE_H
#define PIXFLOW_RULES_BASE_H

#if defined(__OPENCL_C_VERSION__) || defined(__OPENCL_VERSION__)
#define PX_FN inline
#define PX_OPENCL 1
#define PX_DEVICE 1
#define PX_HAS_F64 PX_FP64
typedef uchar px_u8;
typedef ushort px_u16;
typedef short px_s16;
typedef int px_s32;
typedef uint px_u32;
typedef long px_s64;
typedef ulong px_u64;
#else
#if defined(__CUDACC__)
#define PX_FN __host__ __device__ __forceinline__
#else
#define PX_FN inline
#endif
#define PX_OPENCL 0
#if defined(__CUDA_ARCH__)
#define PX_DEVICE 1
#else
#define PX_DEVICE 0
#endif
#define PX_HAS_F64 1
#include <math.h>
#include <stdint.h>
#include <string.h>
typedef uint8_t px_u8;
typedef uint16_t px_u16;
typedef int16_t px_s16;
typedef int32_t px_s32;
typedef uint32_t px_u32;
typedef int64_t px_s64;
typedef uint64_t px_u64;
#endif

/* fabs of a float: OpenCL C's fabs is overloaded and has no fabsf. */
#if PX_OPENCL
#define PX_FABSF(x) fabs(x)
#else
#define PX_FABSF(x) fabsf(x)
#endif

#endif /* PIXFLOW_RULES_BASE_H */
