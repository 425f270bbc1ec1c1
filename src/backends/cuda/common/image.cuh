// Device-side image access shared by every CUDA kernel: a trivially-copyable view passed
// by value, border-aware sample fetch (the one border rule of src/base/numeric.hpp),
// and grid helpers that cover images larger than one grid dimension allows.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "pixflow/image.hpp"
#include "src/base/numeric.hpp"

namespace pixflow::cuda {

/// A device view of samples of type T (channels interleaved).
template <class T>
struct DevView {
  unsigned char* data;
  long long stride;  // bytes
  int w, h, cn;

  __device__ __forceinline__ T* row(long long y) const {
    return reinterpret_cast<T*>(data + y * stride);
  }
};

template <class T>
DevView<T> dev_view(const ImageView& v) {
  return {reinterpret_cast<unsigned char*>(v.data()), v.stride(), int(v.width()), int(v.height()),
          v.channels()};
}
template <class T>
DevView<T> dev_view(const ConstImageView& v) {
  return {const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>(v.data())), v.stride(),
          int(v.width()), int(v.height()), v.channels()};
}

/// Border rule with the constant already converted to the sample type.
template <class T>
struct DevBorder {
  BorderType type;
  T value;
};
template <class T>
DevBorder<T> dev_border(const Border& b) {
  return {b.type, detail::saturate_cast<T>(b.value)};
}

/// Sample (x, y, c) with the border rule applied to x and y independently.
template <class T>
__device__ __forceinline__ T fetch(const DevView<T>& v, long long x, long long y, int c,
                                   const DevBorder<T>& b) {
  if (x < 0 || x >= v.w || y < 0 || y >= v.h) {
    const long long xi = detail::border_index(x, v.w, b.type);
    const long long yi = detail::border_index(y, v.h, b.type);
    if (xi < 0 || yi < 0) return b.value;
    x = xi;
    y = yi;
  }
  return v.row(y)[x * v.cn + c];
}

/// Grid of (ceil(w/bw), min(ceil(h/bh), 65535)) blocks; kernels loop over block rows with
/// `for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y)`.
inline dim3 grid_2d(long long w, long long h, int bw, int bh) {
  long long gx = (w + bw - 1) / bw, gy = (h + bh - 1) / bh;
  if (gy > 65535) gy = 65535;
  return dim3(unsigned(gx), unsigned(gy));
}
inline int blocks_y(long long h, int bh) {
  return int((h + bh - 1) / bh);
}

inline cudaStream_t to_stream(void* s) {
  return static_cast<cudaStream_t>(s);
}

}  // namespace pixflow::cuda
