// One fused separable window kernel: tile + halo into shared memory, a horizontal pass into
// a shared row buffer, a vertical pass to the output. The op is a policy:
//   Acc h_init(); Acc h(Acc, T sample, int i);       horizontal over i = 0..2rx
//   Acc2 v_init(); Acc2 v(Acc2, Acc, int j);          vertical over j = 0..2ry
//   Out out(Acc2);
#pragma once

#include "src/cuda/check.cuh"
#include "src/cuda/common/tile.cuh"

namespace pixflow::cuda {

constexpr int kSepBX = 32, kSepBY = 8;

template <class T, class Out, class Policy>
__global__ void separable_kernel(DevView<T> src, DevView<Out> dst, DevBorder<T> border, int rx,
                                 int ry, Policy pol, int rows_of_blocks) {
  using Acc = typename Policy::Acc;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int cn = src.cn;
  const int TW = kSepBX + 2 * rx, TH = kSepBY + 2 * ry;
  T* tile = reinterpret_cast<T*>(smem_raw);
  const std::size_t tile_bytes = (std::size_t(TW) * TH * cn * sizeof(T) + 15) / 16 * 16;
  Acc* hbuf = reinterpret_cast<Acc*>(smem_raw + tile_bytes);
  const int row_e = kSepBX * cn;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int nt = blockDim.x * blockDim.y;
  const long long bx0 = (long long)blockIdx.x * kSepBX;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long y0 = (long long)by * kSepBY;
    load_tile(tile, TW, TH, src, bx0 - rx, y0 - ry, border);
    for (int i = tid; i < TH * row_e; i += nt) {
      const int ty = i / row_e, e = i - ty * row_e;
      const int xl = e / cn, c = e - xl * cn;
      const T* p = tile + (std::size_t(ty) * TW + xl) * cn + c;
      Acc acc = pol.h_init();
      for (int k = 0; k <= 2 * rx; ++k) acc = pol.h(acc, p[k * cn], k);
      hbuf[i] = acc;
    }
    __syncthreads();
    for (int i = tid; i < kSepBY * row_e; i += nt) {
      const int ty = i / row_e, e = i - ty * row_e;
      const int xl = e / cn, c = e - xl * cn;
      const long long x = bx0 + xl, y = y0 + ty;
      if (x < dst.w && y < dst.h) {
        auto acc = pol.v_init();
        for (int k = 0; k <= 2 * ry; ++k) acc = pol.v(acc, hbuf[(ty + k) * row_e + e], k);
        dst.row(y)[x * cn + c] = pol.out(acc);
      }
    }
    __syncthreads();
  }
}

/// Shared memory the separable kernel needs (0 if over `limit`: use a fallback).
template <class T, class Acc>
std::size_t separable_smem(int rx, int ry, int cn) {
  const std::size_t tile =
      (std::size_t(kSepBX + 2 * rx) * (kSepBY + 2 * ry) * cn * sizeof(T) + 15) / 16 * 16;
  return tile + std::size_t(kSepBY + 2 * ry) * kSepBX * cn * sizeof(Acc);
}

constexpr std::size_t kMaxDynamicSmem = 200 * 1024;

template <class T, class Out, class Policy>
bool launch_separable(const DevView<T>& s, const DevView<Out>& d, const DevBorder<T>& b, int rx,
                      int ry, const Policy& pol, cudaStream_t st) {
  const std::size_t smem = separable_smem<T, typename Policy::Acc>(rx, ry, s.cn);
  if (smem > kMaxDynamicSmem) return false;
  if (smem > 48 * 1024)
    PIXFLOW_CUDA_CHECK(cudaFuncSetAttribute(separable_kernel<T, Out, Policy>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            int(smem)));
  const dim3 grid = grid_2d(d.w, d.h, kSepBX, kSepBY);
  separable_kernel<T, Out, Policy><<<grid, dim3(kSepBX, kSepBY), smem, st>>>(
      s, d, b, rx, ry, pol, blocks_y(d.h, kSepBY));
  PIXFLOW_CUDA_CHECK_LAUNCH("separable");
  return true;
}

}  // namespace pixflow::cuda
