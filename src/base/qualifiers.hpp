// Function qualifiers for the rule code of src/base, so that one definition compiles as C++
// (host: the reference and the CPU backend), as CUDA (host and device) and as OpenCL C
// (embedded into OpenCL programs).
//
// PIXFLOW_HD  qualifies a rule function: `inline` for C++, `__host__ __device__
//             __forceinline__` under nvcc, `inline` in OpenCL C (where functions of a program
//             are device functions already).
// PIXFLOW_OPENCL is 1 when compiled as OpenCL C. The per-sample rules the OpenCL kernels
// share are the C subset of src/base/rules (its PX_FN plays this role there).
#pragma once

#if defined(__OPENCL_C_VERSION__) || defined(__OPENCL_VERSION__)
#define PIXFLOW_HD inline
#define PIXFLOW_OPENCL 1
#elif defined(__CUDACC__)
#define PIXFLOW_HD __host__ __device__ __forceinline__
#define PIXFLOW_OPENCL 0
#else
#define PIXFLOW_HD inline
#define PIXFLOW_OPENCL 0
#endif

// PIXFLOW_UNROLL: `#pragma unroll` in the device pass of code shared with the host (kernel
// bodies the CPU tests emulate); host compilers, nvcc's host pass included, neither need nor
// know the pragma.
#if defined(__CUDA_ARCH__)
#define PIXFLOW_UNROLL _Pragma("unroll")
#else
#define PIXFLOW_UNROLL
#endif
