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

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/common/tile.cuh"

namespace pixflow::cuda {

// Launch shape: kTileBX x kTileTY threads, kTileBX x kTileBY outputs per block (launch.cuh).

struct SepWindow {
  int kw, kh, ax, ay;
};

// KW, KH > 0: the window size at compile time (the hot 3x3 and 5x5: loops unrolled);
// 0: taken from `w` at run time.
template <class T, class Out, class Policy, int KW, int KH>
__global__ void __launch_bounds__(kTileBX* kTileTY)
    separable_kernel(DevView<T> src, DevView<Out> dst, DevBorder<T> border, SepWindow w, Policy pol,
                     int rows_of_blocks) {
  if constexpr (KW > 0) w.kw = KW;
  if constexpr (KH > 0) w.kh = KH;
  using Acc = typename Policy::Acc;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int cn = src.cn;
  const int TW = kTileBX + w.kw - 1, TH = kTileBY + w.kh - 1;
  const int tile_e = TW * cn;      // samples per tile row
  const int row_e = kTileBX * cn;  // samples per output row of the block
  T* tile = reinterpret_cast<T*>(smem_raw);
  const std::size_t tile_bytes = (std::size_t(tile_e) * TH * sizeof(T) + 15) / 16 * 16;
  Acc* buf = reinterpret_cast<Acc*>(smem_raw + tile_bytes);
  const long long bx0 = (long long)blockIdx.x * kTileBX;
  const long long e_end = ((long long)dst.w - bx0) * cn;  // valid samples of an output row
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long y0 = (long long)by * kTileBY;
    load_tile(tile, TW, TH, src, bx0 - w.ax, y0 - w.ay, border);
    if constexpr (Policy::kVerticalFirst) {
      // Column sums of every tile column for each output row, then across kw columns.
      for (int ty = threadIdx.y; ty < kTileBY; ty += kTileTY)
        for (int e = threadIdx.x; e < tile_e; e += kTileBX) {
          const T* p = tile + ty * tile_e + e;
          Acc acc = pol.h_init();
          _Pragma("unroll") for (int k = 0; k < (KH > 0 ? KH : w.kh); ++k) acc =
              pol.h(acc, p[k * tile_e], k);
          buf[ty * tile_e + e] = acc;
        }
      __syncthreads();
      for (int ty = threadIdx.y; ty < kTileBY; ty += kTileTY) {
        const long long y = y0 + ty;
        if (y >= dst.h) break;
        Out* out = dst.row(y) + bx0 * cn;
        for (int e = threadIdx.x; e < row_e && e < e_end; e += kTileBX) {
          const Acc* q = buf + ty * tile_e + e;
          Acc acc = pol.v_init();
          _Pragma("unroll") for (int k = 0; k < (KW > 0 ? KW : w.kw); ++k) acc =
              pol.v(acc, q[k * cn], k);
          out[e] = pol.out(acc);
        }
      }
    } else {
      // Row sums over kw for every tile row, then down kh rows.
      for (int ty = threadIdx.y; ty < TH; ty += kTileTY)
        for (int e = threadIdx.x; e < row_e; e += kTileBX) {
          const T* p = tile + ty * tile_e + e;
          Acc acc = pol.h_init();
          _Pragma("unroll") for (int k = 0; k < (KW > 0 ? KW : w.kw); ++k) acc =
              pol.h(acc, p[k * cn], k);
          buf[ty * row_e + e] = acc;
        }
      __syncthreads();
      for (int ty = threadIdx.y; ty < kTileBY; ty += kTileTY) {
        const long long y = y0 + ty;
        if (y >= dst.h) break;
        Out* out = dst.row(y) + bx0 * cn;
        for (int e = threadIdx.x; e < row_e && e < e_end; e += kTileBX) {
          const Acc* q = buf + ty * row_e + e;
          Acc acc = pol.v_init();
          _Pragma("unroll") for (int k = 0; k < (KH > 0 ? KH : w.kh); ++k) acc =
              pol.v(acc, q[k * row_e], k);
          out[e] = pol.out(acc);
        }
      }
    }
    __syncthreads();
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
      (std::size_t(kTileBX + w.kw - 1) * (kTileBY + w.kh - 1) * cn * sizeof(T) + 15) / 16 * 16;
  const std::size_t buf = vertical_first
                              ? std::size_t(kTileBY) * (kTileBX + w.kw - 1) * cn * sizeof(Acc)
                              : std::size_t(kTileBY + w.kh - 1) * kTileBX * cn * sizeof(Acc);
  return tile + buf;
}

/// Runs the policy over every output pixel: the shared-memory kernel when its tile fits
/// (opting in to more than 48 KB up to kMaxSmem), the global-memory kernel otherwise.
constexpr std::size_t kMaxSmem = 200 * 1024;

template <class T, class Out, class Policy>
void launch_separable(const DevView<T>& s, const DevView<Out>& d, const DevBorder<T>& b,
                      const SepWindow& w, const Policy& pol, cudaStream_t st) {
  const std::size_t smem = separable_smem<T, typename Policy::Acc>(w, s.cn, Policy::kVerticalFirst);
  if (smem <= kMaxSmem) {
    const dim3 grid = grid_2d(d.w, d.h, kTileBX, kTileBY), block(kTileBX, kTileTY);
    const int rows = blocks_y(d.h, kTileBY);
    // Tiles over 48 KB (wide windows, 4 channels, double sums) need the opt-in.
    auto launch = [&](auto kernel) {
      if (smem > 48 * 1024)
        PIXFLOW_CUDA_CHECK(
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
      kernel<<<grid, block, smem, st>>>(s, d, b, w, pol, rows);
    };
    if (w.kw == 3 && w.kh == 3)
      launch(separable_kernel<T, Out, Policy, 3, 3>);
    else if (w.kw == 5 && w.kh == 5)
      launch(separable_kernel<T, Out, Policy, 5, 5>);
    else
      launch(separable_kernel<T, Out, Policy, 0, 0>);
  } else {
    separable_global_kernel<T, Out, Policy>
        <<<grid_2d(d.w, d.h, kPixelBX, kPixelBY), dim3(kPixelBX, kPixelBY), 0, st>>>(s, d, b, w,
                                                                                     pol);
  }
  PIXFLOW_CUDA_CHECK_LAUNCH("separable");
}

}  // namespace pixflow::cuda
