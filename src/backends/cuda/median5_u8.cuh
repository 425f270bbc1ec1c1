// median 5x5 on one u8 channel: median5_u8_kernel (median_u8_packed.hpp's body in blocks that
// walk tiles) and its launch, run by median.cu's "median" and by bench/micro/median5_shapes.cu.
#pragma once

#include <cstdint>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/byte_tile.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/median_u8_packed.hpp"

namespace pixflow::cuda {
namespace {

// u8 x 1, 5x5: median_u8_packed_kernel's body and block shape (128 x kTY*H outputs, 32 x 8
// threads, median5_rows_shared) in blocks that walk tiles (median_u8_packed.hpp, tile5_origin:
// block b takes tiles b, b + g, ...), each tile's 16-byte rows copied into one of two buffers by
// cp.async while the block sorts the other (a tile inside a 16-byte aligned image; edge tiles
// load through the border rule, load_word_tile_u8, when their turn comes). The library launches
// one block a tile (launch_median5_u8: measured faster than the one wave it launched before), so
// there each tile is copied by cp.async and waited for at once; bench/micro/median5_shapes.cu
// runs the walking grids.
// Why: ncu (session 16) put a quarter of median_u8_packed_kernel<5,8,1>'s stall samples on its
// tile loads (three load round trips a block, each block loading then sorting in series) with
// the min/max pipe at 79 %. One barrier a tile: after it the tile is complete and every thread
// is done with the other buffer (sorted in the previous iteration), which the next copy fills.
// Stores: one word a row where the block's 128 outputs lie inside 4-byte aligned rows.
template <int H>
__global__ void __launch_bounds__(median_u8::kTX* median_u8::kTY<5>, median_u8::kMinBlocksFor<5, H>)
    median5_u8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                      DevBorder<std::uint8_t> border, bool src_aligned16, bool src_aligned,
                      bool dst_aligned, int blocks_x, int tiles) {
  using namespace median_u8;
  constexpr int TH = kTileH<5, H>, BH = kBH<5, H>, kThreads = kTX * median_u8::kTY<5>;
  __shared__ __align__(16) unsigned tile[2][TH * kTile5Pitch];
  const int tx = threadIdx.x, ty = threadIdx.y;
  // The flat thread index, read anew where the loads need it: a plain one let the compiler keep
  // the loads' chunk indices (tile5_chunk of every k, the edge loader's rows and words) live
  // across the sort, past the register budget (8 bytes spilled).
  auto tid = [] {
    unsigned x, y;
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(x));
    asm volatile("mov.u32 %0, %%tid.y;" : "=r"(y));
    return int(y * kTX + x);
  };
  // Tile t lies inside the image (its 16-byte rows copied by cp.async); uniform over the block.
  auto inside = [&](int t, long long& bx0, long long& by0) {
    tile5_origin(t, blocks_x, BH, bx0, by0);
    return tile5_inside(src_aligned16, bx0 - 16, by0 - 2, src.w, src.h, TH);
  };
  // Issues the copy of inside tile (bx0, by0) into buf.
  auto prefetch = [&](long long bx0, long long by0, unsigned* buf) {
    const unsigned char* base = src.data + (by0 - 2) * src.stride + (bx0 - 16);
    const int id = tid();
#pragma unroll
    for (int k = 0; k < kTile5ChunksPerThread<H>; ++k) {
      int i;
      if (tile5_thread_chunk<H>(id, k, i)) {
        int r, c;
        tile5_chunk(i, r, c);
        cp_async16(buf + r * kTile5Pitch + 4 * c, base + r * src.stride + 16 * c);
      }
    }
  };
  if (int(blockIdx.x) < tiles) {
    long long bx0, by0;
    if (inside(blockIdx.x, bx0, by0)) prefetch(bx0, by0, tile[0]);
  }
  // Not carried across the sort (the register budget: 8 bytes spilled with them): the tile
  // index and its buffer come from k, and whether tile t was copied ahead is recomputed
  // (inside) at the top of its iteration.
  for (int k = 0;; ++k) {
    const int t = blockIdx.x + k * gridDim.x;
    if (t >= tiles) break;
    long long bx0, by0;
    unsigned* buf = tile[k & 1];
    if (!inside(t, bx0, by0))
      load_word_tile_u8<kTileWords, kThreads, 1, 0, kTile5Pitch>(
          buf + kTile5Off, TH, tid(), src, border, bx0 - 4, by0 - 2, src_aligned);
    cp_async_wait_all();
    __syncthreads();
    {
      const int tn = t + gridDim.x;
      long long nx0, ny0;
      if (tn < tiles && inside(tn, nx0, ny0)) prefetch(nx0, ny0, tile[(k & 1) ^ 1]);
    }
    const long long x0 = bx0 + tx * kPX, y0 = by0 + ty * H;
    // Output columns and rows of this thread inside the image (0 .. 4, 0 .. H); `lim` = the
    // rows, negated where they take byte stores (one compare a row on the word path).
    const int nx = x0 < dst.w ? int(min(dst.w - x0, 4LL)) : 0;
    const int rows = nx > 0 && y0 < dst.h ? int(min(dst.h - y0, (long long)H)) : 0;
    const int lim = dst_aligned && nx == 4 ? rows : -rows;
    std::uint8_t* d0 = rows > 0 ? dst.row(y0) + x0 : dst.data;
    median5_rows_shared<H, kTile5Pitch>(buf + kTile5Off, tx, ty * H, [&](int i, unsigned o) {
      std::uint8_t* d = d0 + i * dst.stride;
      if (i < lim) {
        *reinterpret_cast<unsigned*>(d) = o;
      } else if (i < -lim) {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (j < nx) d[j] = std::uint8_t(o >> (8 * j));
      }
    });
  }
}

// Launches median5_u8_kernel<H> (u8 x 1, 5x5), or returns false where it does not apply. H and
// the tiles as launch_median_u8_packed; the grid: one block a tile (the kernel takes any grid:
// the micro-benchmark's walking grids run the copies ahead, every output checked).
// Measured (bench/micro/median5_shapes.cu, session 20, H100, 8192^2): one block a tile 178.3
// us, one wave of blocks walking the tiles with the next copied ahead 182.3-184.9 (two and four
// waves 191.9 / 181.3); 1920x1080 has fewer tiles than a wave (510), so one block a tile there
// too.
bool launch_median5_u8(const ConstImageView& s, const ImageView& d, const Border& border,
                       cudaStream_t st) {
  using namespace median_u8;
  if (s.depth() != Depth::u8 || s.channels() != 1 || d.width() > 0x7fffffffLL) return false;
  const long long bx = (d.width() + kBW - 1) / kBW;
  auto launch = [&](auto kernel, int bh) {
    const long long tiles = bx * ((d.height() + bh - 1) / bh);
    // (t + g stays an int for every tile index t below `tiles`.)
    if (tiles > 0x7fffffffLL / 2) return false;
    if (tiles == 0) return true;
    const long long g = tiles;
    kernel<<<unsigned(g), dim3(kTX, median_u8::kTY<5>), 0, st>>>(
        dev_view<std::uint8_t>(s), dev_view<std::uint8_t>(d), dev_border<std::uint8_t>(border),
        rows_aligned(s, 16), rows_aligned(s, 4), rows_aligned(d, 4), int(bx), int(tiles));
    PIXFLOW_CUDA_CHECK_LAUNCH("median");
    return true;
  };
  if (tall_blocks_fill(bx, d.height(), kBH<5>)) return launch(median5_u8_kernel<kRows<5>>, kBH<5>);
  return launch(median5_u8_kernel<kRowsShort<5>>, kBH<5, kRowsShort<5>>);
}

}  // namespace
}  // namespace pixflow::cuda
