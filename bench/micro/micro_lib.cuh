// What the micro-benchmarks built from the library's headers share (comp3_shapes.cu,
// morphk_shapes.cu, packed3x3_shapes.cu): the two functions of the library's device.cu that the
// headers' launchers call (so that each file links without the library; these micros launch
// kernels themselves, so the stubs only print) and the reference's reflect101 index.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "src/backends/cuda/check.cuh"

bool pixflow::cuda::debug_sync() {
  return false;
}
[[noreturn]] void pixflow::cuda::throw_cuda_error(cudaError_t err, const char* what, const char*,
                                                  int) {
  printf("%s: %s\n", what, cudaGetErrorString(err));
  exit(1);
}

// border_index for reflect101 (any distance).
static int reflect101(int i, int n) {
  if (n == 1) return 0;
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}
