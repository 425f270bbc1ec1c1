// A generic 2-D window kernel: each thread computes one output pixel (all channels) from a
// window read through an accessor — shared memory when the tile fits, the border-aware
// global fetch otherwise. The op is a policy with
//   template <class Win> Out compute(const Win& w, int c) const;
// where w(i, j) is the sample at window offset (i, j), i in [0, kw), j in [0, kh), of
// channel c, and w.center() the centre's sample (anchor (ax, ay)).
#pragma once

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/common/tile.cuh"

namespace pixflow::cuda {

// Launch shape: kTileBX x kTileTY threads, kTileBX x kTileBY outputs per block (launch.cuh).

template <class T>
struct SmemWin {
  const T* p;  // the window's top-left sample of channel c
  int row;     // samples per tile row
  int cn, ax, ay;
  __device__ __forceinline__ T operator()(int i, int j) const { return p[j * row + i * cn]; }
  __device__ __forceinline__ T center() const { return (*this)(ax, ay); }
};

template <class T>
struct GlobalWin {
  const DevView<T>* v;
  const DevBorder<T>* b;
  long long x0, y0;  // window top-left in image coordinates
  int c, ax, ay;
  __device__ __forceinline__ T operator()(int i, int j) const {
    return fetch(*v, x0 + i, y0 + j, c, *b);
  }
  __device__ __forceinline__ T center() const { return (*this)(ax, ay); }
};

template <class T, class Out, class Policy>
__global__ void window_tile_kernel(DevView<T> src, DevView<Out> dst, DevBorder<T> border, int kw,
                                   int kh, int ax, int ay, Policy pol, int rows_of_blocks) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* tile = reinterpret_cast<T*>(smem_raw);
  const int cn = src.cn;
  const int TW = kTileBX + kw - 1, TH = kTileBY + kh - 1;
  const long long x = (long long)blockIdx.x * kTileBX + threadIdx.x;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long y0 = (long long)by * kTileBY;
    load_tile(tile, TW, TH, src, (long long)blockIdx.x * kTileBX - ax, y0 - ay, border);
    for (int ty = threadIdx.y; ty < kTileBY; ty += kTileTY) {
      const long long y = y0 + ty;
      if (x >= dst.w || y >= dst.h) break;
      for (int c = 0; c < cn; ++c) {
        SmemWin<T> w{tile + (std::size_t(ty) * TW + threadIdx.x) * cn + c, TW * cn, cn, ax, ay};
        dst.row(y)[x * dst.cn + c] = pol.compute(w, c);
      }
    }
    __syncthreads();
  }
}

template <class T, class Out, class Policy>
__global__ void window_global_kernel(DevView<T> src, DevView<Out> dst, DevBorder<T> border, int ax,
                                     int ay, Policy pol) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < dst.h;
       y += (long long)gridDim.y * blockDim.y) {
    if (x >= dst.w) continue;
    for (int c = 0; c < src.cn; ++c) {
      GlobalWin<T> w{&src, &border, x - ax, y - ay, c, ax, ay};
      dst.row(y)[x * dst.cn + c] = pol.compute(w, c);
    }
  }
}

/// Runs the policy over every output pixel; anchor (ax, ay) inside the kw x kh window.
template <class T, class Out, class Policy>
void launch_window(const DevView<T>& s, const DevView<Out>& d, const DevBorder<T>& b, int kw,
                   int kh, int ax, int ay, const Policy& pol, cudaStream_t st) {
  const std::size_t smem = std::size_t(kTileBX + kw - 1) * (kTileBY + kh - 1) * s.cn * sizeof(T);
  if (smem <= 48 * 1024) {
    window_tile_kernel<T, Out, Policy>
        <<<grid_2d(d.w, d.h, kTileBX, kTileBY), dim3(kTileBX, kTileTY), smem, st>>>(
            s, d, b, kw, kh, ax, ay, pol, blocks_y(d.h, kTileBY));
  } else {
    window_global_kernel<T, Out, Policy>
        <<<grid_2d(d.w, d.h, kPixelBX, kPixelBY), dim3(kPixelBX, kPixelBY), 0, st>>>(s, d, b, ax,
                                                                                     ay, pol);
  }
  PIXFLOW_CUDA_CHECK_LAUNCH("window");
}

}  // namespace pixflow::cuda
