// Shared-memory tiles with a halo: the block's output rectangle plus the window radius on
// each side, loaded once with the border rule, then read by every window op.
#pragma once

#include "src/backends/cuda/common/image.cuh"

namespace pixflow::cuda {

/// Loads the tw x th pixel rectangle whose top-left is (x0, y0) (may lie outside the
/// image) into `tile` (row-major, channels interleaved, tw*cn samples per row) with the
/// border rule. Must be called by every thread of the block; syncs at the end.
template <class T>
__device__ void load_tile(T* tile, int tw, int th, const DevView<T>& v, long long x0, long long y0,
                          const DevBorder<T>& b) {
  const int cn = v.cn;
  const int row = tw * cn;
  // 2-D loops: no index division on the interior path; loads of one thread are independent
  // so several are in flight at once.
  const bool inside = x0 >= 0 && y0 >= 0 && x0 + tw <= v.w && y0 + th <= v.h;
  if (inside) {
    for (int ty = threadIdx.y; ty < th; ty += blockDim.y) {
      const T* src = v.row(y0 + ty) + x0 * cn;
      T* dst = tile + ty * row;
#pragma unroll 4
      for (int e = threadIdx.x; e < row; e += blockDim.x) dst[e] = src[e];
    }
  } else {
    for (int ty = threadIdx.y; ty < th; ty += blockDim.y)
      for (int e = threadIdx.x; e < row; e += blockDim.x) {
        const int tx = e / cn, c = e - tx * cn;
        tile[ty * row + e] = fetch(v, x0 + tx, y0 + ty, c, b);
      }
  }
  __syncthreads();
}

}  // namespace pixflow::cuda
