// Shared-memory tiles with a halo: the block's output rectangle plus the window radius on
// each side, loaded once with the border rule, then read by every window op.
#pragma once

#include "src/cuda/common/image.cuh"

namespace pixflow::cuda {

/// Loads the tw x th pixel rectangle whose top-left is (x0, y0) (may lie outside the
/// image) into `tile` (row-major, channels interleaved, tw*cn samples per row) with the
/// border rule. Must be called by every thread of the block; syncs at the end.
template <class T>
__device__ void load_tile(T* tile, int tw, int th, const DevView<T>& v, long long x0, long long y0,
                          const DevBorder<T>& b) {
  const int cn = v.cn;
  const int row = tw * cn;
  const int n = row * th;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int nt = blockDim.x * blockDim.y;
  const bool inside = x0 >= 0 && y0 >= 0 && x0 + tw <= v.w && y0 + th <= v.h;
  if (inside) {
    for (int i = tid; i < n; i += nt) {
      const int ty = i / row, e = i - ty * row;
      tile[i] = v.row(y0 + ty)[x0 * cn + e];
    }
  } else {
    for (int i = tid; i < n; i += nt) {
      const int ty = i / row, e = i - ty * row;
      const int tx = e / cn, c = e - tx * cn;
      tile[i] = fetch(v, x0 + tx, y0 + ty, c, b);
    }
  }
  __syncthreads();
}

}  // namespace pixflow::cuda
