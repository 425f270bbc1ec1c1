// The 3x3 composites on one u8 channel (open, close, tophat, blackhat, gradient) in one packed
// pass: the kernels and their launch (try_comp3_packed), run by morphology.cu's
// "morph_composite" and by bench/micro/comp3_shapes.cu. The thread bodies are
// comp3_u8_packed.hpp's (host-tested, tests/comp3_packed_test.cpp); the shapes and loaders are
// u8_3x3.cuh's.
#pragma once

#include <cstdint>
#include <type_traits>

#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/comp3_u8_packed.hpp"
#include "src/backends/cuda/u8_3x3.cuh"
#include "src/base/passes.hpp"

namespace pixflow::cuda::comp3 {
namespace {

// ---- 3x3 composites on one u8 channel, the packed kernels (u8_3x3.cuh's machinery) ---------
// open / close / tophat / blackhat run in the rows8 shape (morph3_comp_rows8_kernel, below) where
// the source rows are 4-byte aligned; the tile kernels here take the other sources.
// The tile kernels take the shapes of the single 3x3 ops (launch_3x3: 32 x 8 threads, 4 adjacent
// outputs of R rows a thread, the tall R = 8 or short R = 2 by tall_blocks_fill; 16-byte chunk
// tiles, one edge test a tile, lanes of v * 257, evict-first stores), with the thread body of
// comp3_u8_packed.hpp (host-tested): open, close, tophat, blackhat from a tile with two halo rows
// (the first pass for the R + 2 intermediate rows and the 6 intermediate columns the thread's
// second pass reads, rolled through registers: the intermediate never leaves the thread), gradient
// from the single ops' tile. Where morph3_composite_u8_kernel moved the intermediate through a
// second shared tile (two barriers, a ring pass, byte loops at the edges, 4 rows a thread), these
// take ~13 instructions an output (SASS counts: bench/NOTES.md, branch comp3).
//
// Interior tiles (no output of the block reads the intermediate outside the image) run the body
// without fixes and store without tests; edge tiles run it with the thread's Fix (the
// intermediate's own border at x = -1, w and y = -1, h) and clipped byte stores.
template <int K, int R>
__global__ void __launch_bounds__(u8_3x3::kTX* u8_3x3::kTY, u8_3x3::kMinBlocks<R, kComp3TallBlocks>)
    morph3_comp_u8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                          DevBorder<std::uint8_t> border, bool src_aligned, int rows_of_blocks) {
  using namespace u8_3x3;
  __shared__ __align__(16) unsigned tile[kBH<R> + 4][kCTileWords];
  const int bx0 = int(blockIdx.x) * kBW;  // launch_3x3: row bytes < 2^31
  const bool aligned16 = src_aligned && rows_aligned16(src);
  const comp3_u8::Adder ad = opaque_adder();  // the subtractions as IMAD
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long by0 = (long long)by * kBH<R>;
    load_tile_chunks<R, 1, false, 2>(tile, src, border, bx0, by0, src_aligned, aligned16);
    const int tx = tid_x_again(), ty = threadIdx.y;
    const TileRows<kCTileWords, kCOff> rows{&tile[0][0]};
    auto row = [&](int k, unsigned& a, unsigned& b, unsigned& c) {
      const unsigned* p = rows[ty * R + k] + tx;
      a = p[0], b = p[1], c = p[2];
    };
    const int x0 = bx0 + tx * kPX;
    const long long y0 = by0 + ty * R;
    unsigned char* d = dst.data + y0 * dst.stride + x0;
    // The intermediate pixels the block's outputs read: x0 - 1 .. x0 + kBW, y0 - 1 .. y0 + kBH.
    if (bx0 >= 1 && bx0 + kBW < src.w && by0 >= 1 && by0 + kBH<R> < src.h) {
      comp3_u8::comp3_rows<K, R, false>(row, comp3_u8::Fix{}, ad, [&](int, unsigned v) {
        __stcs(reinterpret_cast<unsigned*>(d), v);
        d += dst.stride;
      });
    } else {
      const comp3_u8::Fix f =
          comp3_u8::make_fix(x0, y0, src.w, src.h, border.type, border.value, R);
      const int rows_in = int(min((long long)R, dst.h - y0));  // <= 0: none
      const int n = dst.w - x0;                                // bytes of the 4 in the row
      comp3_u8::comp3_rows<K, R, true>(row, f, ad, [&](int i, unsigned v) {
        if (i < rows_in) {
          if (n > 0) d[0] = std::uint8_t(v);
          if (n > 1) d[1] = std::uint8_t(v >> 8);
          if (n > 2) d[2] = std::uint8_t(v >> 16);
          if (n > 3) d[3] = std::uint8_t(v >> 24);
        }
        d += dst.stride;
      });
    }
    __syncthreads();  // the next tile overwrites this one
  }
}

// gradient = dilate - erode of the source: the single ops' tile and stores (for_each_tile,
// store_rows4), both passes of a row from the same column words.
template <int R>
__global__ void __launch_bounds__(u8_3x3::kTX* u8_3x3::kTY, u8_3x3::kMinBlocks<R, kComp3TallBlocks>)
    morph3_grad_u8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                          DevBorder<std::uint8_t> border, bool src_aligned, int rows_of_blocks) {
  using namespace u8_3x3;
  const int bx0 = int(blockIdx.x) * kBW;
  const comp3_u8::Adder ad = opaque_adder();
  for_each_tile<R, 1, false>(
      src, border, src_aligned, rows_of_blocks, [&](const auto& tile, long long by0) {
        const int tx = threadIdx.x, ty = threadIdx.y;
        store_rows4<R, kPackedEvictFirst>(dst, bx0 + tx * kPX, by0 + ty * R, [&](auto&& put) {
          comp3_u8::gradient_rows<R>(tile_words<R>(tile), ad, put);
        });
      });
}

// The composites in the rows8 shape (u8_3x3.cuh; sources with 4-byte aligned rows): a warp 256
// row bytes x kRows rows, each lane the bodies above for its two 4-byte groups from its window
// rows' registers (two halo rows for the intermediate's; the rule's pixel and row outside the
// image from the host, rows8_edge). Warps whose outputs read the intermediate outside the image
// (the first and last warp columns and rows) run the body with each group's Fix, the others
// without. kRows = kR8Rows (4) at kComp3R8Blocks resident blocks a SM; where the grid of 8-row
// warps fills the GPU, 8 rows at kComp3R8TallBlocks<K> (launch.cuh): the first pass then runs
// 1.25 intermediate rows an output row instead of 1.5. Both shapes are bound by the 16-lane
// integer pipe (ncu at 8192^2, session 19: 73-77 % of its peak at 4 rows, 67 % in the tall
// tiles); measured at 8192^2 (bench/micro/comp3_shapes.cu, session 19) open 71.5 at 4 rows, 62.5
// at 8 (tall tiles 68.8), tophat 74.7 / 67.4 (71.5); at 1920x1080 4 rows 5.4-5.9 (8: 6.7-7.4,
// short tiles 8.4).
// Resident blocks a SM at kComp3R8TallRows (launch.cuh): open / close 4 (no spills, 113
// registers unbounded), tophat / blackhat 5 (96 registers, 56 bytes spilled), the fastest of 4 /
// 5 / 6 at 8192^2 (bench/micro/comp3_shapes.cu, session 19: open 62.5 / 63.6 / 66.0 us, tophat
// 70.1 / 67.4 / 68.2).
template <int K>
constexpr int kComp3R8TallBlocks = K == comp3_u8::kOpen || K == comp3_u8::kClose ? 4 : 5;

template <int K, int kRows, int kBlocks>
__global__ void __launch_bounds__(u8_3x3::kTX* u8_3x3::kR8Warps, kBlocks)
    morph3_comp_rows8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                             DevBorder<std::uint8_t> border, int warp_rows,
                             u8_3x3::Rows8Edge<1> edge) {
  using namespace u8_3x3;
  const comp3_u8::Adder ad = opaque_adder();
  const bool aligned8 = view_rows_aligned<8>(dst);
  const int bx = int(blockIdx.x) * kR8BW;
  for_each_rows8_edge<1, 2, 1, kRows>(
      src, border.value, edge, warp_rows, [&](const Rows8<kRows + 4>& w, int x, int y0) {
        unsigned lo[kRows], hi[kRows];
        auto to_lo = [&](int i, unsigned v) { lo[i] = v; };
        auto to_hi = [&](int i, unsigned v) { hi[i] = v; };
        if (bx >= 1 && bx + kR8BW < src.w && y0 >= 1 && y0 + kRows < src.h) {
          comp3_u8::comp3_rows<K, kRows, false>(w.group(0), comp3_u8::Fix{}, ad, to_lo);
          comp3_u8::comp3_rows<K, kRows, false>(w.group(1), comp3_u8::Fix{}, ad, to_hi);
        } else {
          comp3_u8::comp3_rows<K, kRows, true>(
              w.group(0), comp3_u8::make_fix(x, y0, src.w, src.h, border.type, border.value, kRows),
              ad, to_lo);
          comp3_u8::comp3_rows<K, kRows, true>(
              w.group(1),
              comp3_u8::make_fix(x + 4, y0, src.w, src.h, border.type, border.value, kRows), ad,
              to_hi);
        }
        u8_3x3::store_rows8<kRows, kPackedEvictFirst>(dst, x, y0, aligned8, [&](auto&& put) {
#pragma unroll
          for (int i = 0; i < kRows; ++i) put(i, lo[i], hi[i]);
        });
      });
}

// gradient in the rows8 shape (gradient_rows for each 4-byte group).
__global__ void __launch_bounds__(u8_3x3::kTX* u8_3x3::kR8Warps, kComp3R8Blocks)
    morph3_grad_rows8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                             DevBorder<std::uint8_t> border, bool, int warp_rows) {
  using namespace u8_3x3;
  const comp3_u8::Adder ad = opaque_adder();
  for_each_rows8<1>(src, border, warp_rows, [&](const Rows8<>& w, int x, int y0) {
    rows8_store_u8(dst, w, x, y0, [&](auto&& words, auto&& put) {
      comp3_u8::gradient_rows<kR8Rows>(words, ad, put);
    });
  });
}

// Launches morph3_comp_rows8_kernel<K, ...> (kRows by the rule above) where the rows8 shape
// takes the source and the destination rows are 4-byte aligned; false otherwise.
template <int K>
bool launch_comp3_rows8(const ConstImageView& s, const ImageView& d, const Border& border,
                        cudaStream_t st) {
  using namespace u8_3x3;
  if (s.depth() != Depth::u8 || s.channels() != 1 || !rows8_fits(s, d, 1) || !rows_aligned(d, 4))
    return false;
  const long long bx = (d.width() + kR8BW - 1) / kR8BW;
  const bool tall = tall_blocks_fill(bx, d.height(), kComp3R8TallRows * kR8Warps);
  const Rows8Grid g = rows8_grid(d.width(), d.height(), tall ? kComp3R8TallRows : kR8Rows);
  auto launch = [&](auto kernel) {
    kernel<<<g.grid, dim3(kTX, kR8Warps), 0, st>>>(
        dev_view<std::uint8_t>(s), dev_view<std::uint8_t>(d), dev_border<std::uint8_t>(border),
        g.warp_rows, rows8_edge<1>(s, border, 1));
  };
  if (tall)
    launch(morph3_comp_rows8_kernel<K, kComp3R8TallRows, kComp3R8TallBlocks<K>>);
  else
    launch(morph3_comp_rows8_kernel<K, kR8Rows, kComp3R8Blocks>);
  PIXFLOW_CUDA_CHECK_LAUNCH("morphology");
  return true;
}

// The packed composite for op: open / close / tophat / blackhat in the rows8 shape
// (launch_comp3_rows8), else the tiles (u8_3x3::launch_3x3's rule and checks: destination rows
// 4-byte aligned, row bytes < 2^31); gradient through launch_3x3 (its rows8 kernel at every
// size); false where none applies.
bool try_comp3_packed(const ConstImageView& s, const ImageView& d, const detail::MorphPass& m,
                      cudaStream_t st) {
  using namespace u8_3x3;
  // K's rows8 kernel, else its tile kernels.
  auto run = [&](auto kind) {
    constexpr int K = decltype(kind)::value;
    return launch_comp3_rows8<K>(s, d, m.border, st) ||
           launch_3x3(Kernel<std::uint8_t>(nullptr), morph3_comp_u8_kernel<K, kRowsTall>,
                      morph3_comp_u8_kernel<K, kRowsShort>, s, d, m.border, "morphology", st);
  };
  switch (m.op) {
    case MorphOp::open:
      return run(std::integral_constant<int, comp3_u8::kOpen>{});
    case MorphOp::close:
      return run(std::integral_constant<int, comp3_u8::kClose>{});
    case MorphOp::tophat:
      return run(std::integral_constant<int, comp3_u8::kTophat>{});
    case MorphOp::blackhat:
      return run(std::integral_constant<int, comp3_u8::kBlackhat>{});
    case MorphOp::gradient:
      return launch_3x3(morph3_grad_rows8_kernel, morph3_grad_u8_kernel<kRowsTall>,
                        morph3_grad_u8_kernel<kRowsShort>, s, d, m.border, "morphology", st);
    default:
      return false;
  }
}

}  // namespace
}  // namespace pixflow::cuda::comp3
