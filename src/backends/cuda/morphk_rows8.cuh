// dilate / erode of centred 5x5 and 7x7 windows on one u8 channel in the rows8 shape: the kernel
// and its launch, run by morphology.cu's "morph_pass" and by bench/micro/morphk_shapes.cu.
#pragma once

#include <cstdint>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/morph_k_u8_packed.hpp"
#include "src/backends/cuda/u8_3x3.cuh"

namespace pixflow::cuda::morphk_r8 {
namespace {

// The same windows in the rows8 shape (u8_3x3.cuh: a warp 256 row bytes x kR8Rows rows, a lane
// 8 bytes with its kR8Rows + K - 1 window rows loaded before any is used and its neighbours'
// 4 bytes each side by shuffles, no tile, no barrier): morphk_u8_kernel's arithmetic (hrow on
// the lane's words x - 4 .. x + 11 of each window row, vpair for each pair of output rows) with
// the rule's K / 2 pixels and rows outside the image found on the host (rows8_edge). Where the
// packed 3x3 ops moved from tiles to this shape, 8192^2 dilate went 58.6 -> 47.9 us and 1920 x
// 1080 5.4 -> 3.2 (bench/NOTES.md, session 18).
// kRows output rows a warp, kBlocks resident blocks a SM (launch_morphk_rows8: kR8Rows at
// kMorphKR8Blocks, or kMorphKR8TallRows at kMorphKR8TallBlocks on grids that fill the GPU;
// launch.cuh; bench/micro/morphk_shapes.cu instantiates others).
template <bool kMax, int K, int kRows, int kBlocks>
__global__ void __launch_bounds__(u8_3x3::kTX* u8_3x3::kR8Warps, kBlocks)
    morphk_rows8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                        DevBorder<std::uint8_t> border, int warp_rows,
                        u8_3x3::Rows8Edge<K / 2> edge) {
  using namespace u8_3x3;
  static_assert(kRows % 2 == 0, "morphk_rows8_kernel: output rows in pairs");
  const bool aligned8 = view_rows_aligned<8>(dst);
  for_each_rows8_edge<1, K / 2, K / 2, kRows>(
      src, border.value, edge, warp_rows, [&](const Rows8<kRows + K - 1>& w, int x, int y0) {
        unsigned hw[kRows + K - 1][4];
#pragma unroll
        for (int r = 0; r < kRows + K - 1; ++r)
          morph_k::hrow<K, kMax>(w.left(r), w.b[r], w.c[r], w.right(r), hw[r]);
        unsigned lo[kRows], hi[kRows];
#pragma unroll
        for (int i = 0; i < kRows; i += 2) {
          unsigned r0[2], r1[2];
          morph_k::vpair_rows<K, kMax>(hw, i, r0, r1);
          lo[i] = r0[0], hi[i] = r0[1];
          lo[i + 1] = r1[0], hi[i + 1] = r1[1];
        }
        u8_3x3::store_rows8<kRows, kPackedEvictFirst>(dst, x, y0, aligned8, [&](auto&& put) {
#pragma unroll
          for (int i = 0; i < kRows; ++i) put(i, lo[i], hi[i]);
        });
      });
}

// Launches morphk_rows8_kernel for a centred k x k window (k = 5 or 7; kMax: dilate) where the
// rows8 shape takes the source (u8_3x3::rows8_fits) and the destination rows are 4-byte aligned;
// false otherwise (the caller's tile kernel).
template <bool kMax>
bool launch_morphk_rows8(const ConstImageView& s, const ImageView& d, int k, const Border& border,
                         cudaStream_t st) {
  using namespace u8_3x3;
  if (s.depth() != Depth::u8 || s.channels() != 1 || (k != 5 && k != 7) || !rows8_fits(s, d, 1) ||
      !rows_aligned(d, 4))
    return false;
  const long long bx = (d.width() + kR8BW - 1) / kR8BW;
  const bool tall = k == 5 && tall_blocks_fill(bx, d.height(), kMorphKR8TallRows * kR8Warps);
  const Rows8Grid g = rows8_grid(d.width(), d.height(), tall ? kMorphKR8TallRows : kR8Rows);
  auto launch = [&](auto kernel, auto edge) {
    kernel<<<g.grid, dim3(kTX, kR8Warps), 0, st>>>(
        dev_view<std::uint8_t>(s), dev_view<std::uint8_t>(d), dev_border<std::uint8_t>(border),
        g.warp_rows, edge);
  };
  if (tall)
    launch(morphk_rows8_kernel<kMax, 5, kMorphKR8TallRows, kMorphKR8TallBlocks>,
           rows8_edge<2>(s, border, 1));
  else if (k == 5)
    launch(morphk_rows8_kernel<kMax, 5, kR8Rows, kMorphKR8Blocks>, rows8_edge<2>(s, border, 1));
  else
    launch(morphk_rows8_kernel<kMax, 7, kR8Rows, kMorphKR8Blocks>, rows8_edge<3>(s, border, 1));
  PIXFLOW_CUDA_CHECK_LAUNCH("morphology");
  return true;
}

}  // namespace
}  // namespace pixflow::cuda::morphk_r8
