// Launch shapes (threads per block, outputs per block) of every CUDA engine, in one place.
// Each was chosen by measurement on the H100; the step numbers refer to bench/NOTES.md
// ("History: predictions and outcomes"), which gives the before/after timings. Changing one
// changes speed, never results (every kernel loops over block rows, see grid_2d).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "pixflow/image.hpp"

namespace pixflow::cuda {

// The u8 byte-tile kernels (box, gaussian, dilate/erode of any window) keep their shapes in
// common/byte_tile.cuh; box u8 x 1's warp-strip kernel (windows 5..31 wide) in
// box_warp_u8.hpp (kWarps, kMinBlocks, kMinSegRows, kAhead: the host emulation
// test plans with them); the packed u8 median 5x5/7x7 in median_u8_packed.hpp; filter2d's
// strip tile kernel (3x3/7x7) beside it in filter2d.cu (kF2d*), its 5x5 float-tile kernel in
// filter2d_ftile.hpp (kFtileTX/TY) and filter2d.cu (kFtile*); bilateral's tile kernels
// (radius <= 4) in bilateral_u8_packed.hpp (u8) and bilateral.cu (f32).
//
// Tile engines (common/separable.cuh, common/window.cuh, median's small windows): 32 x 8
// threads computing 32 x 32 outputs (4 rows per thread), so the halo costs little and every
// thread has several loads in flight (step 2: dilate 3x3 1055 -> 535 us). The loops are
// written for 32 x 8 threads: launching 32 x 32 computed every output four times (step 7).
constexpr int kTileBX = 32, kTileBY = 32, kTileTY = 8;

// epsilon u8 (epsilon.cu, arithmetic in epsilon_u8_packed.hpp): 256 threads, a block = 64
// pixels x 32 rows of one channel at a time (2 items of 4 pixels a thread); the tiles (byte
// tile, channel plane, quad words) stay under 48 KB up to r = 7 with 4 channels.
constexpr int kEpsU8Threads = 256, kEpsU8Px = 64, kEpsU8Rows = 32;
// epsilon f32 (epsilon.cu): 32 x 8 threads, each kEpsF32J consecutive pixels of 4 rows (so a
// window row's 2r + kEpsF32J samples are loaded and widened to double once for kEpsF32J
// outputs): 128 x 32 outputs a block.
constexpr int kEpsF32BX = 32, kEpsF32TY = 8, kEpsF32J = 4, kEpsF32BY = 32;

// Per-pixel kernels reading global memory through the border rule (the engines' fallbacks
// for windows whose tile does not fit, median's histogram / radix select, bilateral's
// windows of radius > 4 and f32 x 3).
constexpr int kPixelBX = 32, kPixelBY = 4;

// Packed u8 3x3 kernels (u8_3x3.cuh): the rows8 shape (32 x 4 threads, a warp 256 bytes x 4
// rows, its constants there) for 4-byte aligned sources; else these tile shapes. Tiles: 32 x 8
// threads, each 4 adjacent pixels of 8 rows, so 128 x 64 outputs per block (step 4: median 3x3
// 116.5 us, dilate 3x3 89 us at 8K). Small images take the short shape, 2 rows a thread (128 x 16
// outputs a block), by the rule of tall_blocks_fill below: at 1920x1080 the tall shape gave 15 x 17
// = 255 blocks (1.9 a SM, 13.8-17.5 us for 2 us of copy), the short one gives 15 x 68 = 1020 (7.7 a
// SM).
constexpr int kPackedTX = 32, kPackedTY = 8;
constexpr int kPackedPX = 4, kPackedRows = 8, kPackedRowsShort = 2;
// Resident short blocks a SM of deriv3 and linear3 (u8_3x3.cuh, __launch_bounds__): 8, a
// 32-register bound, so that 1920x1080 u8x1's 1020 short blocks run in one wave on 132 SMs (6,
// the other families' 40-register bound: 792 a wave, 1.3 waves). 6 restores the old bound for
// an A/B run (separates the occupancy from the edge loader, load_edge_tile_short).
constexpr int kPackedShortFillBlocks = 8;
// (A streaming shape for small images — one wave of blocks, each walking consecutive 128 x 16
// tiles with the next tile's loads in flight — measured slower than the short shape on the
// H100 in session 13: 1080p u8x1 median/dilate/sobel 3x3 8.0/8.8/8.6 us against 6.5/7.0/6.5,
// u8x3 dilate 23.2 against 13.7; ncu: 35 % achieved occupancy, each block's tiles in a row
// waiting out the latency the short grid hides across blocks. Removed: bench/NOTES.md.)

// The packed 3x3 composites on one u8 channel (morphology.cu, morph3_comp_u8_kernel,
// morph3_grad_u8_kernel) take the packed 3x3 shapes above (tall / short by tall_blocks_fill).
// Resident tall blocks a SM: 5, a 48-register bound, as the tall dilate (morph3) was measured
// with; the short shape 6 (40 registers, u8_3x3::kMinBlocks). Not measured yet (branch comp3).
constexpr int kComp3TallBlocks = 5;
// Resident blocks a SM of the composites' rows8 kernels (comp3_u8.cuh; 128 threads) at 4
// output rows a warp: 6, an 80-register bound (ptxas -v, sm_90, session 18: open / close no
// spills, tophat / blackhat 12 bytes; at 8 blocks 104-112 bytes, at 7 24-52). At
// kComp3R8TallRows = 8 rows a warp (grids that fill the GPU) the blocks a SM are per op
// (comp3_u8.cuh, kComp3R8TallBlocks).
constexpr int kComp3R8Blocks = 6;
constexpr int kComp3R8TallRows = 8;

// dilate/erode of small centred windows on one u8 channel (morphology.cu, morphk_u8_kernel:
// 5x5, 7x7): 32 x 8 threads, each 8 adjacent outputs (two 4-byte tile words plus one on each
// side, one 8-byte store a row) of kMorphKRows rows, so 256 x 8R outputs a block from a
// 288-byte x (8R + K - 1)-row tile; the short shape (kMorphKRowsShort rows a thread) below
// tall_blocks_fill. The windows' rows overlap: a thread's R output rows take R + K - 1 input
// rows of horizontal work, 1.5x at R = 8 and K = 5, 1.25x at 16. R = 8 despite the extra
// horizontal work: measured on the H100 (session 14, one machine, A/B), 8192^2 u8x1 dilate 5x5
// took 72.2 us at R = 16 and 62.2 at R = 8 (ncu at 16: 0.32 warps issued a scheduler, 40 %
// achieved occupancy, 68 % of cycles with no eligible warp: latency-bound, and half the rows
// a block doubles the blocks); 1080p unchanged (short shape). The van Herk kernel it
// replaces for these windows ran 5x5 at 106 us.
constexpr int kMorphKTX = 32, kMorphKTY = 8, kMorphKPX = 8;
constexpr int kMorphKRows = 8, kMorphKRowsShort = 2;
// Resident blocks a SM (__launch_bounds__): 4 = a 64-register bound (32 warps a SM). ptxas
// (sm_90) at R = 8: 56 (K = 5) and 60 (K = 7) registers tall with 20.2 / 19.6 KB of tile, 44
// short, no spills (at R = 16: 56 and 64).
constexpr int kMorphKMinBlocks = 4;
// The same windows in the rows8 shape (morphk_rows8.cuh, morphk_rows8_kernel; 128 threads a
// block): resident blocks a SM at 4 output rows a warp (63 / 64 registers at K = 5 / 7, no
// spills), and kMorphKR8TallRows = 8 rows a warp at 6 blocks (K = 5: 79 registers) where
// that grid fills the GPU (tall_blocks_fill on blocks of 8 kR8Warps rows). Measured at 5x5
// (bench/micro/morphk_shapes.cu, session 19): 8192^2 4 rows at 6 / 8 / 10 blocks 62.3 / 54.4 /
// 60.7 us (10: 44 bytes spilled), 8 rows at 5 / 6 blocks 54.3 / 50.2; 1920x1080 4 rows 4.5-4.9,
// 8 rows 5.3-5.6.
constexpr int kMorphKR8Blocks = 8;
constexpr int kMorphKR8TallRows = 8, kMorphKR8TallBlocks = 6;
// The 15x15 kernel (morphology.cu, morphv_u8_kernel; branch morph6, not measured yet): morphk's
// tile and block (32 x 8 threads, 256 output bytes) at kMorphVRows = 8 (64 output rows, a
// 288 x 78-byte tile) plus the 64 x 272-byte vertical result: 39.9 KB of shared memory, so 5
// blocks a SM (40 warps). kMorphVMinBlocks = 5 for __launch_bounds__: ptxas (sm_90) 47
// registers, no spills, the same SASS counts as at 4 (52 registers); 4 is the A/B.
constexpr int kMorphVRows = 8;
constexpr int kMorphVMinBlocks = 5;

// f32 x 1 3x3 kernels (f32_3x3.cuh: dilate/erode, median, box, Gaussian, sobel/scharr): the
// packed u8 shape in f32 — 32 x 8 threads, each 4 adjacent outputs (one 16-byte load of the
// tile and one 16-byte store a row) of 8 rows: 128 x 64 outputs a block, a 136 x 66 word tile
// (35.9 KB, 3% halo rows); the short shape (2 rows a thread: 128 x 16, a 9.8 KB tile) by
// tall_blocks_fill below (1920x1080: 15 x 68 = 1020 blocks instead of 255). Not measured yet
// (f32-3x3 branch); the generic engines ran these at 474-547 us at 8192^2 (copy 178.6).
constexpr int kF32TX = 32, kF32TY = 8, kF32PX = 4, kF32Rows = 8, kF32RowsShort = 2;

// Point-wise ops (arith.cu): 256 threads a block. convert and threshold: each kPointVecs chunks of
// 16 bytes of one row for u8 (1 chunk for wider samples, see arith.cu's kVecs), blockDim.x chunks
// apart (so every warp access is 512 contiguous bytes), all loaded before the first store (step 1,
// 16 bytes a thread: add 378 -> 69 us, at the copy floor). The block's width in threads follows the
// row (point_block_x): with a fixed 256 x 1, a 1920-byte row used 120 of 256 threads, 1080 blocks
// of 40-register threads at 1920x1080 u8x1, more than one wave (6 blocks a SM: 792), 3.4-4.3 us
// against NPP's 2.2-2.5 (bench/RESULTS.md, 2026-11-25); u8x3 took 2160 blocks (2.7 waves). Two
// chunks a thread halve the threads (810 blocks at 1920x1080 u8x3, one wave at 6 a SM) and double
// each thread's loads in flight; 1 restores 16 bytes a thread for an A/B run.
constexpr int kPointThreads = 256, kPointVecs = 2;

/// Threads a block spans in x for rows of `chunks` 16-byte chunks, `vecs` a thread: the widest
/// of 256, 128, 64 that leaves at most 1/8 of the row's block span idle (1920 bytes u8x1, 2
/// chunks a thread: 120 chunks -> 64 threads x 4 rows, 8 idle of 128), else 32. The rest of
/// kPointThreads goes to rows.
inline int point_block_x(long long chunks, int vecs) {
  for (int bx = kPointThreads; bx > 32; bx /= 2) {
    const long long span = (long long)bx * vecs;
    if (((chunks + span - 1) / span * span - chunks) * 8 <= chunks) return bx;
  }
  return 32;
}

// Image and scalar arithmetic instead take one 16-byte chunk a thread over the image's chunks
// in row-major order across row ends (flat: consecutive threads on consecutive chunks). At
// 1920x1080 u8 the flat grid took a simple point-wise kernel from 2.20 us (the shape above) to
// 1.86 (copy 1.97; bench/micro/pointwise_shapes.cu) and u8x1 absdiff/mul from 2.3/2.7 to
// 2.05/2.2 us; convert and threshold, which do more work a sample, lost 1-8 % with it
// (bench/NOTES.md, session 17), so they keep the shape above.

/// The flat grid of arith: rows in groups of `rows_per`, group g on blockIdx.y (then every
/// gridDim.y-th), its chunks on the x blocks. A group holds at most
/// kPointGroupChunks chunks (or one row), so a chunk's row is one 32-bit division; 2^18 (4 MB
/// of u8) rather than 2^30 so that the tests cover several groups (arith_test's 4100 x 1100
/// u8x3: 4 groups; 8192^2 u8x1 in the bench: 16).
struct PointGrid {
  int cpr;       // chunks a row (the last one partial when the row is not a multiple)
  int rows_per;  // rows a group
  int h;         // rows of the image
};
constexpr long long kPointGroupChunks = 1ll << 18;

inline PointGrid point_grid(long long chunks_per_row, long long rows) {
  // As few groups as the limit allows, their rows balanced (1920x1080 u8x3: 2 x 540 rows,
  // not 728 + 352 with half of the second group's blocks idle).
  // (Clamped to one chunk and one row: an empty image launches one block that stores nothing.)
  const long long cpr = std::max<long long>(1, chunks_per_row), h = std::max<long long>(1, rows);
  const long long most = std::max<long long>(1, kPointGroupChunks / cpr);
  const long long groups = (h + most - 1) / most;
  return {int(cpr), int((h + groups - 1) / groups), int(rows)};
}

inline dim3 point_blocks(const PointGrid& g) {
  const long long chunks = (long long)g.rows_per * g.cpr;
  const long long groups = (g.h + g.rows_per - 1) / g.rows_per;
  return dim3(unsigned((chunks + kPointThreads - 1) / kPointThreads),
              unsigned(std::min<long long>(groups, 65535)));
}

// transpose (transpose.cu): 32 x 32 pixel tiles, 32 x 8 threads; u8 x 1: 64 x 64 byte tiles,
// 16 x 16 threads moving 4 x 4 byte blocks (step 5: 118 -> 49.5 us).
constexpr int kTransposeTile = 32, kTransposeRows = 8;
constexpr int kTransposeU8Tile = 64, kTransposeU8Threads = 16;

// gray (color.cu): 128 x 1 threads, 8 consecutive pixels each (one pixel per thread was
// latency-bound).
constexpr int kGrayBX = 128, kGrayPx = 8;
// gray on 16-byte aligned rows: 128 threads, one 16-byte output vector each.
constexpr int kGrayVecBX = 128;

// remap (remap.cu): 32 x 8 threads; in the fast kernel each thread kRemapPx adjacent outputs
// of one row (pixels of <= 4 bytes: one float4 of each map, one 4..16-byte store, 16 tap loads
// in flight), kRemapPxWide for wider pixels (u16x3..f32x4: 8..32 taps' registers). The general
// kernel (sources of >= 2^23 a side or >= 2 GiB): one pixel per thread. Not measured yet
// (cuda-remap branch: predicted ~250 us at 8192^2 u8x1 linear against 1160 for one pixel a
// thread through the border rule).
constexpr int kRemapBX = 32, kRemapBY = 8;
constexpr int kRemapPx = 4, kRemapPxWide = 2;
// The fast kernel's schedule (rows a thread, the map ring, blocks a SM, the grid) is in
// remap_ring.hpp, with its host emulation test.

// matmul (gemm.cu): 64 x 64 output tile, 16-deep K slices, 256 threads (4 x 4 outputs each).
constexpr int kGemmTM = 64, kGemmTN = 64, kGemmTK = 16, kGemmThreads = 256;
// dot (gemm.cu): 128 x 2 threads, one output each.
constexpr int kDotBX = 128, kDotBY = 2;

// ---- Block height by image size: the one rule of every engine with several shapes ----------
// SMs of the H100 the shapes were measured on. On a GPU with fewer SMs the rule errs towards
// the tall shapes (still correct; a little idle at the sizes near the threshold).
constexpr long long kSmCount = 132;
// Blocks a grid must have before an engine takes its tall shape: 8 a SM. The tall shapes
// (256-512 threads, 46-63 registers or 35-60 KB of shared memory) fit 3-4 blocks a SM, so
// this is two or more full waves: every SM busy until the last wave's tail, which is then a
// small part of the time, and the tall blocks' smaller halo (64 + 2 rows loaded for 64
// output rows, against 16 + 2 for 16) and fewer barriers a row pay off. Below it the grid is
// one partial wave (1920x1080: 255 packed 3x3 blocks, 136 van Herk blocks on 132 SMs) whose
// few warps a SM each run a long serial chain (tile loads, a barrier, 32 outputs); the short
// shapes give 4x the blocks, so ~8 blocks x 8 warps a SM are in flight. Arithmetic (u8x1):
//   8192x8192, packed 3x3 tall: 64 x 128 = 8192 blocks >= 1056 -> tall (unchanged);
//   3840x2160: 30 x 34 = 1020 -> short (4080 blocks); 1920x1080: 255 -> short (1020).
// Results never depend on the shape (tests run both: images above and below the threshold).
constexpr long long kTallGridBlocks = 8 * kSmCount;

/// True when a grid of blocks_x x ceil(h / tall_rows) blocks (the tall shape's) fills the
/// GPU by the rule above; engines with several shapes call this and nothing else.
inline bool tall_blocks_fill(long long blocks_x, long long h, int tall_rows) {
  return blocks_x * ((h + tall_rows - 1) / tall_rows) >= kTallGridBlocks;
}

/// True when the view's start and every row start are aligned to `bytes`.
inline bool rows_aligned(const ConstImageView& v, std::int64_t bytes) {
  return reinterpret_cast<std::uintptr_t>(v.data()) % std::uintptr_t(bytes) == 0 &&
         v.stride() % bytes == 0;
}

}  // namespace pixflow::cuda
