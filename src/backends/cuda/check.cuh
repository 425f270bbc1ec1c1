// The one checking macro for CUDA runtime calls: throws pixflow::Error naming the call,
// the CUDA error, the file and the line. Out-of-memory is reported as out_of_memory.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "pixflow/error.hpp"

namespace pixflow::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* what, const char* file, int line);

}  // namespace pixflow::cuda

#define PIXFLOW_CUDA_CHECK(call)                                                  \
  do {                                                                            \
    cudaError_t pixflow_err_ = (call);                                            \
    if (pixflow_err_ != cudaSuccess)                                              \
      ::pixflow::cuda::throw_cuda_error(pixflow_err_, #call, __FILE__, __LINE__); \
  } while (0)

/// After every launch: checks the launch, and with PIXFLOW_DEBUG_SYNC=1 also syncs.
#define PIXFLOW_CUDA_CHECK_LAUNCH(name)                                             \
  do {                                                                              \
    PIXFLOW_CUDA_CHECK(cudaGetLastError());                                         \
    if (::pixflow::cuda::debug_sync()) PIXFLOW_CUDA_CHECK(cudaDeviceSynchronize()); \
  } while (0)

namespace pixflow::cuda {
bool debug_sync();
}
