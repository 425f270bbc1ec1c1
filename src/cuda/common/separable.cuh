// One fused separable window kernel: tile + halo into shared memory, a horizontal pass into
// a shared row buffer, a vertical pass to the output. The op is a policy:
//   Acc h_init(); Acc h(Acc, T sample, int i);       horizontal over i = 0..kw-1
//   Acc v_init(); Acc v(Acc, Acc, int j);            vertical over j = 0..kh-1
//   Out out(Acc);
// A policy with `static constexpr bool kVerticalFirst = true` runs the same two passes in
// the other order (first over j down each column, then over i across the column results),
// for ops whose reference sums columns first (box: the float order must match).
// The window of output (x, y) spans x - ax .. x - ax + kw - 1 (and likewise in y), so even
// sizes and OpenCV's scaled anchors work. Windows whose tile does not fit in shared memory
// run the same policy, in the same order, through a per-pixel kernel that reads global
// memory (exact, slower).
#pragma once

#include "src/cuda/check.cuh"
#include "src/cuda/common/tile.cuh"

namespace pixflow::cuda {

constexpr int kSepBX = 32, kSepBY = 8;

struct SepWindow {
  int kw, kh, ax, ay;
};

template <class T, class Out, class Policy>
__global__ void separable_kernel(DevView<T> src, DevView<Out> dst, DevBorder<T> border, SepWindow w,
                                 Policy pol, int rows_of_blocks) {
  using Acc = typename Policy::Acc;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int cn = src.cn;
  const int TW = kSepBX + w.kw - 1, TH = kSepBY + w.kh - 1;
  T* tile = reinterpret_cast<T*>(smem_raw);
  const std::size_t tile_bytes = (std::size_t(TW) * TH * cn * sizeof(T) + 15) / 16 * 16;
  Acc* hbuf = reinterpret_cast<Acc*>(smem_raw + tile_bytes);
  const int row_e = kSepBX * cn;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int nt = blockDim.x * blockDim.y;
  const long long bx0 = (long long)blockIdx.x * kSepBX;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long y0 = (long long)by * kSepBY;
    load_tile(tile, TW, TH, src, bx0 - w.ax, y0 - w.ay, border);
    if constexpr (Policy::kVerticalFirst) {
      const int tile_e = TW * cn;
      for (int i = tid; i < kSepBY * tile_e; i += nt) {  // column sums for each output row
        const int ty = i / tile_e, e = i - ty * tile_e;
        Acc acc = pol.h_init();
        for (int k = 0; k < w.kh; ++k) acc = pol.h(acc, tile[(ty + k) * tile_e + e], k);
        hbuf[i] = acc;
      }
      __syncthreads();
      for (int i = tid; i < kSepBY * row_e; i += nt) {
        const int ty = i / row_e, e = i - ty * row_e;
        const int xl = e / cn, c = e - xl * cn;
        const long long x = bx0 + xl, y = y0 + ty;
        if (x < dst.w && y < dst.h) {
          Acc acc = pol.v_init();
          for (int k = 0; k < w.kw; ++k) acc = pol.v(acc, hbuf[ty * tile_e + (xl + k) * cn + c], k);
          dst.row(y)[x * cn + c] = pol.out(acc);
        }
      }
      __syncthreads();
    } else {
      for (int i = tid; i < TH * row_e; i += nt) {
        const int ty = i / row_e, e = i - ty * row_e;
        const int xl = e / cn, c = e - xl * cn;
        const T* p = tile + (std::size_t(ty) * TW + xl) * cn + c;
        Acc acc = pol.h_init();
        for (int k = 0; k < w.kw; ++k) acc = pol.h(acc, p[k * cn], k);
        hbuf[i] = acc;
      }
      __syncthreads();
      for (int i = tid; i < kSepBY * row_e; i += nt) {
        const int ty = i / row_e, e = i - ty * row_e;
        const int xl = e / cn, c = e - xl * cn;
        const long long x = bx0 + xl, y = y0 + ty;
        if (x < dst.w && y < dst.h) {
          Acc acc = pol.v_init();
          for (int k = 0; k < w.kh; ++k) acc = pol.v(acc, hbuf[(ty + k) * row_e + e], k);
          dst.row(y)[x * cn + c] = pol.out(acc);
        }
      }
      __syncthreads();
    }
  }
}

template <class T, class Out, class Policy>
__global__ void separable_global_kernel(DevView<T> src, DevView<Out> dst, DevBorder<T> border,
                                        SepWindow w, Policy pol) {
  using Acc = typename Policy::Acc;
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < dst.h;
       y += (long long)gridDim.y * blockDim.y) {
    if (x >= dst.w) continue;
    for (int c = 0; c < src.cn; ++c) {
      Acc acc = pol.v_init();
      if constexpr (Policy::kVerticalFirst) {
        for (int i = 0; i < w.kw; ++i) {
          Acc col = pol.h_init();
          for (int j = 0; j < w.kh; ++j)
            col = pol.h(col, fetch(src, x - w.ax + i, y - w.ay + j, c, border), j);
          acc = pol.v(acc, col, i);
        }
      } else {
        for (int j = 0; j < w.kh; ++j) {
          Acc h = pol.h_init();
          for (int i = 0; i < w.kw; ++i)
            h = pol.h(h, fetch(src, x - w.ax + i, y - w.ay + j, c, border), i);
          acc = pol.v(acc, h, j);
        }
      }
      dst.row(y)[x * src.cn + c] = pol.out(acc);
    }
  }
}

template <class T, class Acc>
std::size_t separable_smem(const SepWindow& w, int cn, bool vertical_first) {
  const std::size_t tile =
      (std::size_t(kSepBX + w.kw - 1) * (kSepBY + w.kh - 1) * cn * sizeof(T) + 15) / 16 * 16;
  const std::size_t buf = vertical_first
                              ? std::size_t(kSepBY) * (kSepBX + w.kw - 1) * cn * sizeof(Acc)
                              : std::size_t(kSepBY + w.kh - 1) * kSepBX * cn * sizeof(Acc);
  return tile + buf;
}

/// Runs the policy over every output pixel: the shared-memory kernel when the tile fits in
/// 48 KB, the global-memory kernel otherwise.
template <class T, class Out, class Policy>
void launch_separable(const DevView<T>& s, const DevView<Out>& d, const DevBorder<T>& b,
                      const SepWindow& w, const Policy& pol, cudaStream_t st) {
  const std::size_t smem = separable_smem<T, typename Policy::Acc>(w, s.cn, Policy::kVerticalFirst);
  if (smem <= 48 * 1024) {
    separable_kernel<T, Out, Policy>
        <<<grid_2d(d.w, d.h, kSepBX, kSepBY), dim3(kSepBX, kSepBY), smem, st>>>(
            s, d, b, w, pol, blocks_y(d.h, kSepBY));
  } else {
    separable_global_kernel<T, Out, Policy>
        <<<grid_2d(d.w, d.h, 32, 4), dim3(32, 4), 0, st>>>(s, d, b, w, pol);
  }
  PIXFLOW_CUDA_CHECK_LAUNCH("separable");
}

}  // namespace pixflow::cuda
