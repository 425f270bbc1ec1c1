// Fast 3x3 paths for 1-channel u8: median (median.cu), dilate/erode (morphology.cu), box and
// Gaussian (linear3) and sobel/scharr (deriv3) (separable.cu); all launched by launch_3x3.
// dilate/erode, linear3, deriv3 and median also take u8 x 3 (CN = 3, launch_3x3_cn): the same
// kernels over the row's bytes, channels interleaved, so a horizontal neighbour is 3 bytes away; a
// thread's 4 output bytes need the packed words at byte offsets -3, 0, +3 (columns3) where
// one channel needs -1, 0, +1. The tile loader maps each edge byte's pixel by the border rule.
// (u8x3 3x3 went through the byte-tile engines: 26-31 us at 1920x1080 against NPP's 12.4 for
// dilate and 11.5 for Gaussian, bench/RESULTS.md 2026-11-25.)
//
// Where the source rows are 4-byte aligned and offsets fit 32 bits (every image pixflow
// allocates), the kernels run in the rows8 shape (below, "The rows8 shape": a warp 256 row
// bytes x 4 rows, a lane 8 bytes, no tile); the tile shapes described next remain for the
// other sources.
// Each thread computes 4 adjacent pixels of R consecutive rows (R = 8, or 2 for images too
// small to fill the GPU with 8: launch_3x3 picks by tall_blocks_fill); the median on large
// images 8 adjacent bytes of 8 rows instead (median3_wide_u8_kernel, below). (A streaming
// shape for small images, one wave of blocks each walking consecutive tiles with the next
// tile's loads in flight, measured slower than the short one in session 13 and was removed:
// bench/NOTES.md, session 13.) Pixels travel packed two per 32-bit word in 16-bit lanes, so every
// min/max is one Hopper VIMNMX(3).U16x2 instruction (__vminu4 is emulated in about 6 on sm_90);
// dilate/erode and the median hold each byte v as v * 257 in its lane (u8_3x3_dup.hpp: one PRMT a
// lane pair, host-tested), box/Gaussian and the derivatives v (they multiply). Per lane the 3x3
// median is
//   med3(max3(column lows), med3(column mids), min3(column highs))
// of the three window columns sorted vertically. Column sorts are shared: the sorted middle
// pair of rows serves two output rows, and the packed column words of a thread serve both of
// its output words. Input comes from a shared tile of 32-bit words: in the tall and short
// shapes 160 x (8R + 2) bytes for a 128 x 8R output block, ten 16-byte chunks a row
// (load_tile_chunks; edge tiles and 4-byte aligned sources by words, load_word_tile_u8, in
// the short shape load_edge_tile_short: one round trip, a 32-bit border rule). A
// thread's outputs go out through
// store_rows4 (one inside test a tile, then a store and a pointer step a row).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/byte_tile.cuh"
#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/deriv3_u8_packed.hpp"
#include "src/backends/cuda/linear3_u8_packed.hpp"
#include "src/backends/cuda/u8_3x3_cn.hpp"
#include "src/backends/cuda/u8_3x3_dup.hpp"
#include "src/backends/cuda/u8_3x3_edge.hpp"

namespace pixflow::cuda::u8_3x3 {
// Internal linkage: this header is included by median.cu, morphology.cu and separable.cu.
namespace {

constexpr int kPX = kPackedPX;                   // pixels per thread, horizontally
constexpr int kTX = kPackedTX, kTY = kPackedTY;  // threads per block (launch.cuh)
constexpr int kBW = kTX * kPX;                   // 128 output columns per block
constexpr int kTileW = kBW + 8;         // tile bytes per row: 4 left (1 used), 4 right (1 used)
constexpr int kTileWords = kTileW / 4;  // 34
// Rows per thread R: the two compiled shapes (launch.cuh). Output rows per block, tile rows.
constexpr int kRowsTall = kPackedRows, kRowsShort = kPackedRowsShort;
template <int R>
constexpr int kBH = R* kTY;
template <int R>
constexpr int kTileH = kBH<R> + 2;
// Resident blocks a SM (__launch_bounds__; ptxas -v for sm_90 in the comments). The short
// shape runs ~8 blocks a SM at 1920x1080: 6 resident blocks of 256 threads cap it at 40
// registers (8 blocks = 32 registers spilled 8 bytes in morph3/linear3/deriv3). The tall
// shape keeps the occupancy it was measured with at 8K (46/54/44 registers = 5/4/5 blocks for
// morph3/median3/linear3): unbounded, the templated kernels took 56/63/55; with the chunk
// tiles and store_rows4 (branch morph3-issue) 48/56/47-48 (median3 CN = 3: 64), no spills.
// The short shape: 40 for morph3 and median3, 32 for deriv3 and linear3 (below), no spills.
// deriv3: kD3TallBlocks.
// deriv3 and linear3 run their short shape at kPackedShortFillBlocks = 8 blocks a SM (a
// 32-register bound, launch.cuh): one wave of 1020 blocks at 1920x1080 u8x1 (at 6, 792 a wave:
// 1.3 waves), possible once the edge tiles took the 32-bit loader (load_edge_tile_short; with
// the 64-bit word loader they spilled 8-20 bytes at 32).
template <int R, int kTallBlocks, int kShortBlocks = 6>
constexpr int kMinBlocks = R == kRowsShort ? kShortBlocks : kTallBlocks;

__device__ __forceinline__ unsigned vmin(unsigned a, unsigned b) {
  return __vminu2(a, b);
}
__device__ __forceinline__ unsigned vmax(unsigned a, unsigned b) {
  return __vmaxu2(a, b);
}
__device__ __forceinline__ unsigned vmin3(unsigned a, unsigned b, unsigned c) {
  return __vimin3_u16x2(a, b, c);
}
__device__ __forceinline__ unsigned vmax3(unsigned a, unsigned b, unsigned c) {
  return __vimax3_u16x2(a, b, c);
}

// (lane1 of l, lane0 of r): the packed word between two neighbouring packed words.
__device__ __forceinline__ unsigned between(unsigned l, unsigned r) {
  return __byte_perm(l, r, 0x5432);
}

// u8_3x3_dup::Adder with its constants (1, 2^32 - 1) in registers that ptxas cannot prove
// constant (blockDim.x / kTX is 1 in every launch of these kernels), so that its additions stay
// IMADs on the FMA pipe.
__device__ __forceinline__ u8_3x3_dup::Adder opaque_adder() {
  u8_3x3_dup::Adder f;
  f.one = blockDim.x / kTX;
  f.neg = 0u - f.one;
  return f;
}

// threadIdx.x through a volatile read: the compiler re-reads it where it is used instead of
// keeping it (or what it computed from it) live across a loop body.
__device__ __forceinline__ int tid_x_again() {
  int v;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(v));
  return v;
}
// blockIdx.x, re-read likewise.
__device__ __forceinline__ int ctaid_x_again() {
  int v;
  asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(v));
  return v;
}
// The flat thread index, re-read likewise (tid_x_again): the chunk loader's per-thread offsets
// are loop-invariant, and ptxas kept them across the edge path of the short shape's 40-register
// bound in local memory (8 bytes spilled) rather than recompute them a tile.
__device__ __forceinline__ int tid_again() {
  int y;
  asm volatile("mov.u32 %0, %%tid.y;" : "=r"(y));
  return y * kTX + tid_x_again();
}

// The chunk tile of the tall and short shapes (every family): rows of kCTileWords words = input
// bytes bx0 - 16 .. bx0 + 143 of the block's output bytes bx0 .. bx0 + 127 (12 bytes more on
// each side than the 3x3 window needs), so that a tile row is ten whole 16-byte chunks of the
// image row when the source rows are 16-byte aligned: a thread loads 2-3 chunks (LDG.128)
// where the 136-byte word tile took 9 word loads and ~100 instructions of 64-bit address
// arithmetic before its last load left (SASS of the tall dilate: ~170 of its ~550
// instructions a thread; deriv-fast measured the same on sobel). Word kCOff of a row = bytes
// bx0 - 4 .. bx0 - 1, word 0 of the 34-word tile: the windows read words kCOff .. kCOff + 33.
constexpr int kCTileWords = (kBW + 32) / 4;  // 40
constexpr int kCChunks = kCTileWords / 4;    // 10 chunks of 16 bytes a tile row
constexpr int kCOff = 3;

// The short shape's tiles that the chunk path does not take (edge tiles; sources not 16-byte
// aligned): the kH x 34 words the windows read (rows of kCTileWords words, `tile` at word kCOff
// of row 0), word (r, w) = row bytes x0 + 4 w .. + 3 of row y0 + r by the border rule, in one
// load round trip: a thread's <= 3 words (kH = 18: 612 words for 256 threads) all read before
// the first is stored. Tiles inside the row in x with 4-byte aligned rows (a uniform test; the
// top and bottom block rows, unaligned interiors): a word load a word, its row through the
// rule. Others (the left and right block columns): 4 byte loads a word, each byte's pixel
// through the rule (u8_3x3_edge.hpp, host-tested: 32-bit indices; rows and row bytes below
// 2^30, launch_3x3_cn). The word loader's edge path (unbatched, 64-bit positions, called
// 64-bit divisions) took 3 round trips a tile in a row there and spilled at 32 registers.
// Syncs at the end.
template <int kH, int CN>
__device__ __forceinline__ void load_edge_tile_short(unsigned* tile, int tid,
                                                     const DevView<std::uint8_t>& src,
                                                     const DevBorder<std::uint8_t>& border, int x0,
                                                     int y0, bool src_aligned) {
  constexpr int kThreads = kTX * kTY, kTotal = kH * kTileWords;
  constexpr int kFull = kTotal / kThreads, kN = kFull + int(kTotal % kThreads != 0);
  const int w = src.w, wc = w * CN, stride = int(src.stride);
  const BorderType bt = border.type;
  const unsigned char value = border.value;
  const unsigned char* data = src.data;
  // The offsets first (the rule's branches), then every read (none under a branch: reads
  // under a branch were each consumed at its join, one round trip a byte), then the words.
  // A word that does not exist (the tail) reads offset 0 and is not stored.
  if (src_aligned && x0 >= 0 && x0 + 4 * kTileWords <= wc) {
    int off[kN];
#pragma unroll
    for (int k = 0; k < kN; ++k) {
      const int i = tid + k * kThreads, r = i / kTileWords, wd = i - r * kTileWords;
      const int ro = u8_3x3_edge::edge_row_offset(y0 + r, src.h, stride, bt);
      off[k] = ro < 0 || !(k < kFull || i < kTotal) ? -1 : ro + x0 + 4 * wd;
    }
    unsigned v[kN];
#pragma unroll
    for (int k = 0; k < kN; ++k)
      v[k] = *reinterpret_cast<const unsigned*>(data + (off[k] < 0 ? 0 : off[k]));
#pragma unroll
    for (int k = 0; k < kN; ++k) {
      const int i = tid + k * kThreads, r = i / kTileWords, wd = i - r * kTileWords;
      if (k < kFull || i < kTotal)
        tile[r * kCTileWords + wd] = off[k] < 0 ? value * 0x01010101u : v[k];
    }
  } else {
    int off[kN][4];
#pragma unroll
    for (int k = 0; k < kN; ++k) {
      const int i = tid + k * kThreads, r = i / kTileWords, wd = i - r * kTileWords;
      const int ro = u8_3x3_edge::edge_row_offset(y0 + r, src.h, stride, bt);
#pragma unroll
      for (int j = 0; j < 4; ++j)
        off[k][j] = u8_3x3_edge::edge_byte_offset<CN>(ro, x0 + 4 * wd + j, w, bt);
    }
    unsigned v[kN][4];
#pragma unroll
    for (int k = 0; k < kN; ++k)
#pragma unroll
      for (int j = 0; j < 4; ++j)
        v[k][j] = u8_3x3_edge::edge_byte([&](int o) { return data[o]; }, off[k][j], value);
    // The thread's store positions from %tid again (tid_again): kept across the reads, ptxas
    // put the first in local memory (4 bytes, linear3 at 32 registers).
    const int tid2 = tid_again();
#pragma unroll
    for (int k = 0; k < kN; ++k) {
      const int i = tid2 + k * kThreads, r = i / kTileWords, wd = i - r * kTileWords;
      if (k < kFull || i < kTotal)
        tile[r * kCTileWords + wd] = v[k][0] | v[k][1] << 8 | v[k][2] << 16 | v[k][3] << 24;
    }
  }
  __syncthreads();
}

// Tile word (r, w) = row byte bx0 - 16 + 4 w .. + 3 of row by0 - kHalo + r, by the border rule
// (kHalo rows above and below the block's kBH<R> rows: 1 for the 3x3 ops, 2 for the composites
// of two 3x3 passes, morphology.cu).
// Interior tiles of 16-byte aligned sources: every chunk of a thread loaded before the first
// is stored (one load round trip), its address a 32-bit offset from the tile's first byte (the
// 64-bit row address of each chunk was ~8 instructions a load; sources whose stride is too
// large for int offsets take the word path). Other tiles: load_word_tile_u8 over the 34 words
// the windows read (words kCOff .. kCOff + 33 of each row; the other 6 are never read), word
// loads inside the image, the border rule per byte on the edges (kBatched: its interior loads
// in one round trip, the 4-byte aligned sources). Syncs at the end.
template <int R, int CN, bool kBatched = false, int kHalo = 1>
__device__ __forceinline__ void load_tile_chunks(unsigned (&tile)[kBH<R> + 2 * kHalo][kCTileWords],
                                                 const DevView<std::uint8_t>& src,
                                                 const DevBorder<std::uint8_t>& border,
                                                 long long bx0, long long by0, bool src_aligned,
                                                 bool src_aligned16) {
  constexpr int kThreads = kTX * kTY, kH = kBH<R> + 2 * kHalo;
  const int tid = tid_again();
  const long long x0 = bx0 - 16, y0 = by0 - kHalo;
  const long long wc = (long long)src.w * CN;
  constexpr long long kMaxStride = (0x7fffffffLL - 4 * kCTileWords) / kH;
  if (src_aligned16 && x0 >= 0 && x0 + 4 * kCTileWords <= wc && y0 >= 0 && y0 + kH <= src.h &&
      src.stride <= kMaxStride) {
    constexpr int kTotal = kH * kCChunks, kFull = kTotal / kThreads;
    constexpr bool kTail = kTotal % kThreads != 0;
    const unsigned char* base = src.data + y0 * src.stride + x0;
    const int stride = int(src.stride);
    // The tail chunk defined on every path: left undefined where its load is skipped, ptxas
    // carried it across the tile loop in local memory (16 bytes spilled in the short shape).
    uint4 v[kFull + 1];
    v[kFull] = make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int k = 0; k < kFull + int(kTail); ++k) {
      const int i = tid + k * kThreads, r = i / kCChunks, q = i - r * kCChunks;
      if (k < kFull || i < kTotal)
        v[k] = *reinterpret_cast<const uint4*>(base + (r * stride + 16 * q));
    }
    uint4* t = reinterpret_cast<uint4*>(&tile[0][0]);
#pragma unroll
    for (int k = 0; k < kFull + int(kTail); ++k)
      if (k < kFull || tid + k * kThreads < kTotal) t[tid + k * kThreads] = v[k];
    __syncthreads();  // the block agrees on the test above
    return;
  }
  // The composites' 2-row halo (morphology.cu) keeps the word loader: with this one the
  // short open/close spilled 8 bytes at their 40-register bound.
  if constexpr (R == kRowsShort && kHalo == 1)
    load_edge_tile_short<kH, CN>(&tile[0][0] + kCOff, tid, src, border, int(bx0) - 4, int(y0),
                                 src_aligned);
  else
    load_word_tile_u8<kTileWords, kThreads, CN, kBatched ? kH : 0, kCTileWords>(
        &tile[0][0] + kCOff, kH, tid, src, border, bx0 - 4, y0, src_aligned);
}

// The rows of a tile as the kernels' bodies read them: rows[r] = the word of tile row r that
// holds bytes bx0 - 4 .. bx0 - 1 (either layout).
template <int kPitch, int kOff>
struct TileRows {
  const unsigned* base;
  __device__ __forceinline__ const unsigned* operator[](int r) const {
    return base + r * kPitch + kOff;
  }
};

// A view's start and every row start kBytes-aligned (launch.cuh's rows_aligned on the device),
// from the view itself.
template <int kBytes, class T>
__device__ __forceinline__ bool view_rows_aligned(const DevView<T>& v) {
  return ((reinterpret_cast<unsigned long long>(v.data) | (unsigned long long)v.stride) &
          (kBytes - 1)) == 0;
}
// Source rows 16-byte aligned (rows_aligned(s, 16)): the kernels launched through
// launch_3x3_cn without deriv3's extra argument.
__device__ __forceinline__ bool rows_aligned16(const DevView<std::uint8_t>& v) {
  return view_rows_aligned<16>(v);
}

// rows_aligned16 (kBytes = 16; 4: launch_3x3_cn's src_aligned, rows_aligned(s, 4)), computed
// where it is used (volatile: not hoisted out of the tile loop, so no register holds it across
// the loop).
template <int kBytes = 16>
__device__ __forceinline__ bool rows_aligned_again(const DevView<std::uint8_t>& v) {
  unsigned long long a;
  asm volatile("or.b64 %0, %1, %2;"
               : "=l"(a)
               : "l"(reinterpret_cast<unsigned long long>(v.data)),
                 "l"((unsigned long long)v.stride));
  return (a & (kBytes - 1)) == 0;
}
__device__ __forceinline__ bool rows_aligned16_again(const DevView<std::uint8_t>& v) {
  return rows_aligned_again<16>(v);
}

// The rows path of the short shape (deriv3 and linear3, small images): a block column whose
// words lie inside the row (u8_3x3_edge::rows_x_inside, block-uniform) takes no tile, no
// barrier and no shared memory. Each warp (a row of 32 threads: one warp, 128 output bytes)
// loads its own kRows rows, a word a lane a row plus the second word of rows_extra_x, all
// before any is used (one load round trip a warp, not a block's), and gets its lanes' left
// and right words by two shuffles a row (u8_3x3_edge.hpp, host-tested by
// tests/u8_3x3_edge_test.cpp). a, b, c[r] = row bytes x0 - 4 .. x0 + 7 (x0 = bx0 + 4 lane) of
// row y + r through the border rule, as the tile's words tx, tx + 1, tx + 2 of that row.
// (bench/NOTES.md session 16: the short shape's time was the block chain tile load ->
// STS -> barrier -> compute at ~2 rows a thread; its top stall the STS.128 waiting on the
// load.) Valid where launch_3x3_cn takes the short shape (offsets below 2^31).
// The rows path on (deriv3, linear3, morph3 short kernels); false restores the tile for every
// short block, for an A/B run.
constexpr bool kPackedRowsPath = true;

// kRowsIn: rows y .. y + kRows - 1 all lie inside the image (the caller's block-uniform
// test): offsets by the stride, no rule and no constant-border words (16 SEL of the general
// form's 26 in the SASS of sobel u8x1 went to those).
template <int kRows, bool kRowsIn>
__device__ __forceinline__ void load_rows_words(const DevView<std::uint8_t>& src,
                                                const DevBorder<std::uint8_t>& border, int bx0,
                                                int y, unsigned (&a)[kRows], unsigned (&b)[kRows],
                                                unsigned (&c)[kRows]) {
  namespace edge = u8_3x3_edge;
  const int lane = tid_x_again();
  const int stride = int(src.stride);
  const int xb = bx0 + 4 * lane, xe = edge::rows_extra_x(bx0, lane);
  unsigned e[kRows];
  if constexpr (kRowsIn) {
    // Lanes 1 .. 30's second word is their b: only lanes 0 and 31 load it (a predicated
    // load, no branch; 2 sectors a warp instead of 6).
    const unsigned char* p = src.data + (y * stride + xb);
    const int dxe = xe - xb;
    const bool outer = dxe != 0;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      b[r] = *reinterpret_cast<const unsigned*>(p);
      e[r] = outer ? *reinterpret_cast<const unsigned*>(p + dxe) : 0u;
      p += stride;
    }
  } else {
    int ro[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      ro[r] = edge::edge_row_offset(y + r, src.h, stride, border.type);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      b[r] = *reinterpret_cast<const unsigned*>(src.data + edge::rows_word_offset(ro[r], xb));
      e[r] = *reinterpret_cast<const unsigned*>(src.data + edge::rows_word_offset(ro[r], xe));
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      b[r] = edge::rows_word(b[r], ro[r], border.value);
      e[r] = edge::rows_word(e[r], ro[r], border.value);
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    a[r] = edge::rows_left(__shfl_up_sync(0xffffffffu, b[r], 1), e[r], lane);
    c[r] = edge::rows_right(__shfl_down_sync(0xffffffffu, b[r], 1), e[r], lane);
  }
}

// The rows path's tiles of a block (x-inside, u8_3x3_edge::rows_x_inside): for each of the
// block's tile rows (as for_each_tile), the thread's R + 2 window rows' words (load_rows_words;
// the rows-inside form where the block's rows and their halo lie inside the image, a
// block-uniform test) handed to body(words, by0), words(r, a, b, c) as deriv3_out's.
template <int R, class Body>
__device__ __forceinline__ void for_each_rows_tile(const DevView<std::uint8_t>& src,
                                                   const DevBorder<std::uint8_t>& border, int bx0,
                                                   int rows_of_blocks, Body&& body) {
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long by0 = (long long)by * kBH<R>;
    const int y = int(by0) + int(threadIdx.y) * R - 1;
    auto run = [&](auto rows_in) {
      unsigned a[R + 2], b[R + 2], c[R + 2];
      load_rows_words<R + 2, decltype(rows_in)::value>(src, border, bx0, y, a, b, c);
      body(
          [&](int r, unsigned& wa, unsigned& wb, unsigned& wc) { wa = a[r], wb = b[r], wc = c[r]; },
          by0);
    };
    if (u8_3x3_edge::rows_y_inside(int(by0), kBH<R>, src.h))
      run(std::true_type{});
    else
      run(std::false_type{});
  }
}

// The block's tiles, each loaded into shared memory and handed to body(tile, by0) (by0: the
// tile's first output row), for every kernel below; body stores its outputs, the barriers are
// here. Block (x, y) takes tile rows y, y + gridDim.y, ... (grid_2d), each loaded (16-byte
// chunks, load_tile_chunks; kBatched: the word loader's interior words all in flight at once,
// for sources 4-byte but not 16-byte aligned), then computed.
template <int R, int CN, bool kBatched, class Body>
__device__ __forceinline__ void for_each_tile(const DevView<std::uint8_t>& src,
                                              const DevBorder<std::uint8_t>& border,
                                              bool src_aligned, int rows_of_blocks, Body&& body) {
  const long long bx0 = (long long)blockIdx.x * kBW;
  __shared__ __align__(16) unsigned tile[kTileH<R>][kCTileWords];
  const bool aligned16_kept = src_aligned && rows_aligned16(src);
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long by0 = (long long)by * kBH<R>;
    // The short shape tests it a tile (rows_aligned16_again): kept across the loop, the
    // predicate took 4 bytes of local memory in linear3 at its 32-register bound.
    const bool aligned16 =
        R == kRowsShort ? src_aligned && rows_aligned16_again(src) : aligned16_kept;
    load_tile_chunks<R, CN, kBatched>(tile, src, border, bx0, by0, src_aligned, aligned16);
    body(TileRows<kCTileWords, kCOff>{&tile[0][0]}, by0);
    __syncthreads();
  }
}

// The words accessor of a tile (deriv3_out, linear3_rows): words(r, a, b, c) = the tile's
// words tx, tx + 1, tx + 2 of the thread's window row r (tile row ty * R + r).
template <int R, class Rows>
__device__ __forceinline__ auto tile_words(const Rows& tile) {
  return [tile](int r, unsigned& a, unsigned& b, unsigned& c) {
    const int tx = threadIdx.x, ty = threadIdx.y;
    const unsigned* row = tile[ty * R + r];  // word tx = bytes x0 - 4 .. x0 - 1
    a = row[tx], b = row[tx + 1], c = row[tx + 2];
  };
}

// Packed column words of one tile row for the thread whose first output column is x0:
// lanes (x0-1, x0), (x0+1, x0+2), (x0+3, x0+4).
// From the words a, b, c = bytes x0-4 .. x0+7 (the tile's tx, tx + 1, tx + 2, or the rows
// path's registers).
__device__ __forceinline__ void columns(unsigned a, unsigned b, unsigned c, unsigned& p0,
                                        unsigned& p1, unsigned& p2) {
  p0 = __byte_perm(__byte_perm(a, b, 0x0043), 0, 0x5140);
  p1 = __byte_perm(b, 0, 0x5241);
  p2 = __byte_perm(__byte_perm(b, c, 0x0043), 0, 0x5140);
}
__device__ __forceinline__ void columns(const unsigned* row, int tx, unsigned& p0, unsigned& p1,
                                        unsigned& p2) {
  columns(row[tx], row[tx + 1], row[tx + 2], p0, p1, p2);  // bytes x0-4 .. x0+7
}

// u8 x 3: the six packed words of one tile row (u8_3x3_cn.hpp, host-tested).
using u8_3x3_cn::Cols3;
__device__ __forceinline__ Cols3 columns3(const unsigned* row, int tx) {
  return u8_3x3_cn::columns3(row[tx], row[tx + 1], row[tx + 2]);
}
// The same lane pairs with each lane's byte in both halves (u8_3x3_dup.hpp: 6 PRMT where
// columns3 takes 8), for the kernels that only compare lanes (morph3, median3).
__device__ __forceinline__ Cols3 columns3_dup(const unsigned* row, int tx) {
  return u8_3x3_dup::columns3(row[tx], row[tx + 1], row[tx + 2]);
}

// Evict-first stores (st.global.cs) for the packed u8 outputs of the tall and short shapes,
// as deriv3's kD3StreamStores: outputs are never read again by the kernel, so L2 keeps the
// source rows the next block row's tiles read again. false restores plain stores for an A/B
// run.
constexpr bool kPackedEvictFirst = true;

// The stores of a thread's R output rows of 4 bytes (row bytes x0 .. x0 + 3 of rows y0 ..
// y0 + R - 1), clipped to the image. body(put) computes the rows and calls put(i, v) for rows
// i = 0, 1, .., R - 1 in order (the pointer steps a row a call); it is instantiated twice:
// once for the threads whose 4 x R outputs all lie inside the image (all but the last block
// row and column; one test a tile), where put is a store and a pointer step, and once for the
// rest, where put clips. With dst.row(y) and both 64-bit tests in every row (the former
// store4) the stores were 19 of the tall dilate's 29 instructions a row in the SASS; one body
// with a per-row branch on the test kept the clipping state live across the rows and spilled
// at the 48-register bound.
template <int R, bool kEvictFirst, class Body>
__device__ __forceinline__ void store_rows4(const DevView<std::uint8_t>& dst, int x0, long long y0,
                                            Body&& body) {
  unsigned char* d = dst.data + y0 * dst.stride + x0;
  const int rows = int(dst.h - y0);  // y0 < dst.h + R: no overflow
  if (x0 + 3 < dst.w && rows >= R) {
    body([&](int, unsigned v) {
      if constexpr (kEvictFirst)
        __stcs(reinterpret_cast<unsigned*>(d), v);
      else
        *reinterpret_cast<unsigned*>(d) = v;
      d += dst.stride;
    });
  } else {
    // Byte stores under predicates (a loop to the row's end, unrolled with the rows, spilled).
    const int n = dst.w - x0;  // bytes of the 4 inside the row (<= 0: none)
    body([&](int i, unsigned v) {
      if (i < rows) {
        if (n > 0) d[0] = std::uint8_t(v);
        if (n > 1) d[1] = std::uint8_t(v >> 8);
        if (n > 2) d[2] = std::uint8_t(v >> 16);
        if (n > 3) d[3] = std::uint8_t(v >> 24);
      }
      d += dst.stride;
    });
  }
}

// store_rows4 for 8 output bytes a row (x0 .. x0 + 7; the wide median): put(i, lo, hi) stores
// the row's two words. aligned8 (destination rows 8-byte aligned, uniform): one 8-byte store a
// row, else two 4-byte stores; either body is instantiated once for each.
template <int R, bool kEvictFirst, class Body>
__device__ __forceinline__ void store_rows8(const DevView<std::uint8_t>& dst, int x0, long long y0,
                                            bool aligned8, Body&& body) {
  unsigned char* d = dst.data + y0 * dst.stride + x0;
  const int rows = int(dst.h - y0);  // y0 < dst.h + R: no overflow
  auto st = [](unsigned* p, unsigned v) {
    if constexpr (kEvictFirst)
      __stcs(p, v);
    else
      *p = v;
  };
  if (x0 + 7 < dst.w && rows >= R) {
    if (aligned8) {
      body([&](int, unsigned lo, unsigned hi) {
        if constexpr (kEvictFirst)
          __stcs(reinterpret_cast<uint2*>(d), make_uint2(lo, hi));
        else
          *reinterpret_cast<uint2*>(d) = make_uint2(lo, hi);
        d += dst.stride;
      });
    } else {
      body([&](int, unsigned lo, unsigned hi) {
        st(reinterpret_cast<unsigned*>(d), lo);
        st(reinterpret_cast<unsigned*>(d) + 1, hi);
        d += dst.stride;
      });
    }
  } else {
    const int n = dst.w - x0;  // bytes of the 8 inside the row (<= 0: none)
    body([&](int i, unsigned lo, unsigned hi) {
      if (i < rows) {
#pragma unroll
        for (int j = 0; j < 8; ++j)
          if (n > j) d[j] = std::uint8_t((j < 4 ? lo : hi) >> (8 * (j & 3)));
      }
      d += dst.stride;
    });
  }
}

// ---- The rows8 shape (every size; the tall and short shapes above remain for sources that are
// not 4-byte aligned and for images past 32-bit offsets) ---------------------------------------
// No tile, no shared memory, no barrier: a lane owns 8 row bytes x .. x + 7 (x = bx + 8 lane; a
// warp 256 bytes) of kR8Rows output rows, loads its kR8Rows + 2 window rows before any is used
// (an 8-byte load a row, or two word loads where the source rows are 4-byte aligned only) and
// gets the 4 bytes left and right of its 8 from its neighbours by shuffles where a body reads
// them (lanes 0 and 31 load that word themselves). Of the bytes outside the row only the CN
// before its start and the CN after its end reach an output inside it (a 3x3 window): those are
// the pixel the rule puts at -1 and at w; likewise only the rows at -1 and at h. All four are
// found once a kernel in closed form (Rows8Edge, border_adjacent32); the other bytes outside
// hold 0, rows past h read row 0. Words that lie in the row are loaded whole; the row's last
// wc % 4 bytes and the bytes the rule puts beside it are read once a row by the edge warps
// (load_rows8's special bytes). With the rule's switch inlined for every edge byte the kernel
// was 26k SASS instructions, its edge warps' loads serialized behind branches, and dilate at
// 1920x1080 took 24 us (bench/NOTES.md, session 18). The bodies run before any store (the
// shuffles need every lane), then the stores clip.
// Measured against the tall / short shapes on the H100 (bench/micro/stream3x3.cu,
// packed3x3_shapes.cu; bench/NOTES.md session 18): a plain dilate in this shape at 8192^2 47.4
// us against 58.1 (copy 45.9), at 1920x1080 2.5 against 5.5 (copy 2.1): the tile's load ->
// barrier -> compute chain and the short shape's 2 rows a thread were the time, and in a
// one-wave grid the edge blocks' tile path set the kernel's end. kR8Rows = 4: 6 rows loaded
// for 4 outputs (the micro: 4 and 8 rows within 1 % at 8192^2, 4 faster at 1080p). Resident
// blocks a SM per family (kR8MinBlocks, kR8MorphBlocks, kMedR8Blocks): in the micro a plain
// dilate at 8 blocks a SM took 10 % longer at 8192^2 than at 12.
constexpr int kR8Rows = 4;                 // output rows a warp
constexpr int kR8Warps = 4;                // warps a block, stacked in y
constexpr int kR8BW = 8 * 32;              // row bytes a warp (and a block)
constexpr int kR8BH = kR8Rows * kR8Warps;  // rows a block
constexpr int kR8N = kR8Rows + 2;          // window rows a warp loads (3x3: one halo row)

// What the rule puts outside the image (see above), for the kReach pixels and rows each side
// that reach an output (1 for the 3x3 windows, found once a kernel; K / 2 for morphology.cu's
// K x K rows8 kernel, found on the host: rows8_edge).
template <int kReach = 1>
struct Rows8Edge {
  int wc;              // row bytes
  int left[kReach];    // byte offset in a row of the pixel at -1 - d (its channel 0), -1: the
                       // border value
  int right[kReach];   // the same for the pixel at w + d
  int top[kReach];     // offset of the row at -1 - d from the image's first byte, -1: the value
  int bottom[kReach];  // the same for the row at h + d

  // The offset of row yy (outside the image, reach d < kReach) or 0 (row 0: rows further out
  // reach no output). Compile-time indices (a run-time one would put the arrays in local memory).
  __device__ __forceinline__ int row_outside(int yy, int h) const {
    int o = 0;
#pragma unroll
    for (int d = 0; d < kReach; ++d) o = yy == -1 - d ? top[d] : yy == h + d ? bottom[d] : o;
    return o;
  }
  // The column of row byte e outside the row (e < 0 or e >= wc, within kReach pixels of CN
  // bytes), -1: the border value.
  template <int CN>
  __device__ __forceinline__ int col_outside(int e) const {
    int c = -1;
#pragma unroll
    for (int d = 0; d < kReach; ++d) {
      const int lo = -CN * (d + 1), hi = wc + CN * d;  // the pixel's channel 0 either side
      if (e >= lo && e < lo + CN) c = left[d] < 0 ? -1 : left[d] + e - lo;
      if (e >= hi && e < hi + CN) c = right[d] < 0 ? -1 : right[d] + e - hi;
    }
    return c;
  }
};

// A lane's window rows (kN: kR8Rows and kHalo rows above and below; the composites of two 3x3
// passes, morphology.cu, take 2): its own words b, c (bytes x .. x + 7) and, in lanes 0 and
// 31, the word outside the warp e (lane 0: bytes x - 4 .. x - 1; lane 31: x + 8 .. x + 11).
template <int kN = kR8N>
struct Rows8 {
  unsigned b[kN], c[kN], e[kN];

  // Row bytes x - 4 .. x - 1 and x + 8 .. x + 11 of window row r (shuffles: every lane calls).
  __device__ __forceinline__ unsigned left(int r) const {
    const unsigned up = __shfl_up_sync(0xffffffffu, c[r], 1);
    return tid_x_again() == 0 ? e[r] : up;
  }
  __device__ __forceinline__ unsigned right(int r) const {
    const unsigned down = __shfl_down_sync(0xffffffffu, b[r], 1);
    return tid_x_again() == 31 ? e[r] : down;
  }
  // The words accessor of output group k (bytes x + 4 k .. x + 4 k + 3) in the form the 4-byte
  // bodies take (words(r, a, b, c) = bytes x0 - 4 .. x0 + 7, tile_words'): (left, b, c) and
  // (b, c, right).
  __device__ __forceinline__ auto group(int k) const {
    return [this, k](int r, unsigned& wa, unsigned& wb, unsigned& wc) {
      if (k == 0)
        wa = left(r), wb = b[r], wc = c[r];
      else
        wa = b[r], wb = c[r], wc = right(r);
    };
  }
};

// The window rows y .. y + kN - 1 of the lane's bytes (see above). aligned8: source rows
// 8-byte aligned (one 8-byte load a row where all 8 bytes lie in the row), else 4-byte aligned
// (word loads). Words that lie in the row are loaded whole (predicated, no branch); the bytes
// left unread are the special bytes of an edge warp: the last wc % 4 bytes of the row, the CN
// bytes after it (the pixel at w by the rule) and, at the row's start, the CN bytes before it
// (the pixel at -1). An edge warp reads each of these once a row, at the same address for every
// lane, and the lanes whose window holds it place it (a loop over the 2 CN + wc % 4 bytes at
// most: 1920x1080 u8x1 has 2). The general per-byte rule here took 2.5 us more at 1920x1080
// than at 2048x1080 (bench/NOTES.md, session 18).
template <int CN, int kN, int kReach>
__device__ __forceinline__ void load_rows8(const DevView<std::uint8_t>& src, unsigned char value,
                                           int bx, int y, bool aligned8, const Rows8Edge<kReach>& g,
                                           Rows8<kN>& w) {
  static_assert(kReach * CN <= 4, "load_rows8: the bytes outside reach 4 past the lane's 8");
  const int lane = tid_x_again();
  const int x = bx + 8 * lane, stride = int(src.stride), wc = g.wc;
  const unsigned char* data = src.data;
  const unsigned vw = value * 0x01010101u;
  int ro[kN];
  if (y >= 0 && y + kN <= src.h) {
#pragma unroll
    for (int r = 0; r < kN; ++r) ro[r] = (y + r) * stride;
  } else {
#pragma unroll
    for (int r = 0; r < kN; ++r) {
      const int yy = y + r;
      ro[r] = yy >= 0 && yy < src.h ? yy * stride : g.row_outside(yy, src.h);
    }
  }
  // The words of the lane that lie in the row; the others 0 (the special bytes fill them).
  const bool in8 = x + 8 <= wc, in4 = x + 4 <= wc;
  const int xe = lane == 0 ? x - 4 : x + 8;  // the word outside the warp (lanes 0 and 31)
  const bool ine = (lane == 0 || lane == 31) && xe >= 0 && xe + 4 <= wc;
  // Every row's loads before any is used (one round trip): the whole-lane 8-byte form in a
  // branch of its own (all lanes of all but the edge warps), the word form predicated.
  if (aligned8 && in8) {
#pragma unroll
    for (int r = 0; r < kN; ++r) {
      const uint2 v = *reinterpret_cast<const uint2*>(data + (ro[r] < 0 ? 0 : ro[r] + x));
      w.b[r] = v.x, w.c[r] = v.y;
    }
  } else {
#pragma unroll
    for (int r = 0; r < kN; ++r) {
      const unsigned* p = reinterpret_cast<const unsigned*>(data + (ro[r] < 0 ? 0 : ro[r] + x));
      w.b[r] = in4 ? p[0] : 0u;
      w.c[r] = in8 ? p[1] : 0u;
    }
  }
#pragma unroll
  for (int r = 0; r < kN; ++r)
    w.e[r] =
        ine ? *reinterpret_cast<const unsigned*>(data + (ro[r] < 0 || !ine ? 0 : ro[r] + xe)) : 0u;
#pragma unroll
  for (int r = 0; r < kN; ++r)
    if (ro[r] < 0) w.b[r] = vw, w.c[r] = vw, w.e[r] = vw;
  // The special bytes (warp-uniform: the warps at the row's start and end).
  const int pw = wc & ~3;  // first byte of the row's last partial word
  const bool at_start = bx == 0, at_end = bx + kR8BW + 4 > pw;
  if (at_start || at_end) {
    const int s0 = at_start ? -kReach * CN : pw, s1 = at_end ? wc + kReach * CN : 0;
    for (int e = s0; e < s1; ++e) {
      if (e == 0) e = pw;  // from the start's bytes to the end's (at_start and at_end)
      if (e >= s1) break;
      // The byte's column in a row (-1: the border value) and its slot in the lane's window of
      // bytes x - 4 .. x + 11 (0..3: lane 0's e; 4..11: b, c; 12..15: lane 31's e).
      const int col = e >= 0 && e < wc ? e : g.template col_outside<CN>(e);
      const int slot = e - x + 4;
      const bool mine = slot >= 4 && slot < 12    ? true
                        : slot >= 0 && slot < 4   ? lane == 0
                        : slot >= 12 && slot < 16 ? lane == 31
                                                  : false;
      const int sh = 8 * (slot & 3), word = slot >> 2;  // word 0, 3: e; 1: b; 2: c
#pragma unroll
      for (int r = 0; r < kN; ++r) {
        unsigned v = value;
        if (ro[r] >= 0 && col >= 0) v = data[ro[r] + col];
        if (mine && ro[r] >= 0) {
          const unsigned m = v << sh;
          if (word == 1)
            w.b[r] |= m;
          else if (word == 2)
            w.c[r] |= m;
          else
            w.e[r] |= m;
        }
      }
    }
  }
}

// for_each_rows8 (below) with the rule's pixels and rows outside the image given (g: kReach of
// them each side, kReach <= kHalo) and kRows output rows a warp (warp_rows = blocks_y(h, kRows)).
template <int CN, int kHalo, int kReach, int kRows = kR8Rows, class Body>
__device__ __forceinline__ void for_each_rows8_edge(const DevView<std::uint8_t>& src,
                                                    unsigned char value, const Rows8Edge<kReach>& g,
                                                    int warp_rows, Body&& body) {
  static_assert(kReach <= kHalo, "for_each_rows8_edge: rows outside the image past the halo");
  const int bx = int(blockIdx.x) * kR8BW;
  const bool aligned8 = view_rows_aligned<8>(src);
  for (int wy = int(blockIdx.y) * kR8Warps + int(threadIdx.y); wy < warp_rows;
       wy += int(gridDim.y) * kR8Warps) {
    const int y0 = wy * kRows;
    Rows8<kRows + 2 * kHalo> w;
    load_rows8<CN>(src, value, bx, y0 - kHalo, aligned8, g, w);
    body(w, bx + 8 * tid_x_again(), y0);
  }
}

// The warps' rows of a rows8 grid (launch_3x3_cn): warp row wy = blockIdx.y * kR8Warps +
// threadIdx.y, then every gridDim.y * kR8Warps; body(w, x, y0): the lane's window rows
// (load_rows8: rows y0 - kHalo .. y0 + kR8Rows - 1 + kHalo) for its outputs at row bytes x .. x
// + 7 of rows y0 .. y0 + kR8Rows - 1 (every lane of the warp calls it; the body clips its
// stores).
template <int CN, int kHalo = 1, class Body>
__device__ __forceinline__ void for_each_rows8(const DevView<std::uint8_t>& src,
                                               const DevBorder<std::uint8_t>& border, int warp_rows,
                                               Body&& body) {
  namespace edge = u8_3x3_edge;
  const int l = edge::border_adjacent32(false, src.w, border.type);
  const int r = edge::border_adjacent32(true, src.w, border.type);
  const int t = edge::border_adjacent32(false, src.h, border.type);
  const int b = edge::border_adjacent32(true, src.h, border.type);
  const int stride = int(src.stride);
  const Rows8Edge<1> g{src.w * CN,
                       {l < 0 ? -1 : l * CN},
                       {r < 0 ? -1 : r * CN},
                       {t < 0 ? -1 : t * stride},
                       {b < 0 ? -1 : b * stride}};
  for_each_rows8_edge<CN, kHalo>(src, border.value, g, warp_rows, body);
}

// A rows8 body from a 4-byte body: out4(words, put) computes kR8Rows output words of one
// group (put(i, v)); both groups' words, then the stores (store_rows8: 8-byte stores on 8-byte
// aligned destination rows, else two word stores; clipped to the image).
template <class Out4>
__device__ __forceinline__ void rows8_store_u8(const DevView<std::uint8_t>& dst, const Rows8<>& w,
                                               int x, int y0, Out4&& out4) {
  unsigned lo[kR8Rows], hi[kR8Rows];
  out4(w.group(0), [&](int i, unsigned v) { lo[i] = v; });
  out4(w.group(1), [&](int i, unsigned v) { hi[i] = v; });
  const bool aligned8 = view_rows_aligned<8>(dst);
  store_rows8<kR8Rows, kPackedEvictFirst>(dst, x, y0, aligned8, [&](auto&& put) {
#pragma unroll
    for (int i = 0; i < kR8Rows; ++i) put(i, lo[i], hi[i]);
  });
}

// Resident short morph3 blocks a SM: CN = 1 8 (32 registers, no spills with the rows path and
// the 32-bit edge loader: one wave of 1020 blocks at 1920x1080, as deriv3 and linear3); CN = 3
// 6 (at 32 it spilled 8 bytes). 6 for both restores the old bound for an A/B run.
template <int CN>
constexpr int kMorph3ShortBlocks = CN == 1 ? kPackedShortFillBlocks : 6;

// dilate (kMax) / erode 3x3: the column max (min) of three rows, then of three columns.
// CN = 3: the rows' Cols3 words held three rows at a time (R + 2 rows of six words would be 60
// registers), the vertical op on each word, then the horizontal op of (l, c, r).
// words(r, a, b, c): the words of window row r (tile_words or the rows paths); put(i, v):
// output row i's 4 bytes.
template <bool kMax, int R, int CN, class Words, class Put>
__device__ __forceinline__ void morph3_rows(Words&& words, Put&& put) {
  auto op3 = [](unsigned a, unsigned b, unsigned c) {
    return kMax ? vmax3(a, b, c) : vmin3(a, b, c);
  };
  if constexpr (CN == 1) {
    unsigned p0[R + 2], p1[R + 2], p2[R + 2];
#pragma unroll
    for (int r = 0; r < R + 2; ++r) {
      unsigned wa, wb, wc;
      words(r, wa, wb, wc);
      u8_3x3_dup::columns(wa, wb, wc, p0[r], p1[r], p2[r]);
    }
#pragma unroll
    for (int i = 0; i < R; ++i)
      put(i, u8_3x3_dup::morph3_row<kMax>(op3(p0[i], p0[i + 1], p0[i + 2]),
                                          op3(p1[i], p1[i + 1], p1[i + 2]),
                                          op3(p2[i], p2[i + 1], p2[i + 2])));
  } else {
    static_assert(CN == 3, "morph3_u8_kernel: 1 or 3 channels");
    // The dup words of window row r (u8_3x3_dup.hpp: each lane's byte in both halves).
    auto dup3 = [&](int r) {
      unsigned wa, wb, wc;
      words(r, wa, wb, wc);
      return u8_3x3_dup::columns3(wa, wb, wc);
    };
    Cols3 k0 = dup3(0), k1 = dup3(1);
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const Cols3 k2 = dup3(i + 2);
      const unsigned o0 = op3(op3(k0.l0, k1.l0, k2.l0), op3(k0.c0, k1.c0, k2.c0),
                              op3(k0.r0, k1.r0, k2.r0));  // bytes x0, x0+1
      const unsigned o1 = op3(op3(k0.l1, k1.l1, k2.l1), op3(k0.c1, k1.c1, k2.c1),
                              op3(k0.r1, k1.r1, k2.r1));  // bytes x0+2, x0+3
      put(i, __byte_perm(o0, o1, 0x6420));
      k0 = k1;
      k1 = k2;
    }
  }
}

template <bool kMax, int R, int CN = 1>
__global__ void __launch_bounds__(kTX* kTY, kMinBlocks<R, 5, kMorph3ShortBlocks<CN>>)
    morph3_u8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                     DevBorder<std::uint8_t> border, bool src_aligned, int rows_of_blocks) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long bx0 = (long long)blockIdx.x * kBW;
  auto out = [&](auto&& words, long long by0) {
    store_rows4<R, kPackedEvictFirst>(dst, int(bx0) + tx * kPX, by0 + ty * R,
                                      [&](auto&& put) { morph3_rows<kMax, R, CN>(words, put); });
  };
  if constexpr (R == kRowsShort && kPackedRowsPath) {
    // The rows path (load_rows_words), as deriv3_u8_kernel's.
    if (u8_3x3_edge::rows_x_inside(ctaid_x_again() * kBW, src.w * CN, src_aligned)) {
      for_each_rows_tile<R>(src, border, int(bx0), rows_of_blocks, out);
      return;
    }
  }
  // The tall shape's batched word loads (9 words a thread in flight; the sources 4-byte but
  // not 16-byte aligned) for CN = 3; CN = 1 spilled 12 bytes with them at its 48-register bound
  // (5 blocks a SM).
  for_each_tile<R, CN, R == kRowsTall && CN == 3>(
      src, border, src_aligned, rows_of_blocks,
      [&](const auto& tile, long long by0) { out(tile_words<R>(tile), by0); });
}

// Resident rows8 blocks a SM (128 threads): 9, a 56-register bound (linear3 and deriv3; at
// 10 and 12 linear3 spilled 4 and 56 bytes); morph3 u8x1 12 (40 registers, no spills; u8x3
// spilled 40 bytes there): in the micro-benchmark a plain dilate at 8 blocks a SM took 10 %
// longer at 8192^2 than at 12.
constexpr int kR8MinBlocks = 9;
template <int CN>
constexpr int kR8MorphBlocks = CN == 1 ? 12 : kR8MinBlocks;

// dilate / erode 3x3 in the rows8 shape (morph3_rows for each 4-byte group).
template <bool kMax, int CN = 1>
__global__ void __launch_bounds__(kTX* kR8Warps, kR8MorphBlocks<CN>)
    morph3_rows8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                        DevBorder<std::uint8_t> border, bool, int warp_rows) {
  for_each_rows8<CN>(src, border, warp_rows, [&](const Rows8<>& w, int x, int y0) {
    rows8_store_u8(dst, w, x, y0,
                   [](auto&& words, auto&& put) { morph3_rows<kMax, kR8Rows, CN>(words, put); });
  });
}

// Linear 3x3 on u8 (box, Gaussian): horizontal sums packed in 16-bit lanes — Q8 taps that sum
// to 256 keep every lane below 65536 (255 * 256), so one 32-bit multiply-add serves two pixels
// — then the vertical pass: the box's packed too (a lane's 3x3 sum <= 2295), the Gaussian's per
// pixel in 32 bits; the outputs by linear3_u8_packed.hpp (host-tested). Integer results equal
// the reference's.
struct Linear3 {
  unsigned hx0, hx1;  // horizontal taps (outer, centre); box: 1, 1
  unsigned vy0, vy1;  // vertical taps
  int kind;           // 0: box mean (/9, half to even), 1: box sum (saturated), 2: Gaussian Q8
};

// The kind is a tile's one branch (the body is compiled once for each, with the box's taps of
// 1 folded): lane_out's per-lane switch on it was 2 branches and ~6 more instructions a lane
// in the SASS, and the box's multiplies by 1 were IMADs.
// words(r, a, b, c): the words of window row r (deriv3_out's; tile_words or the rows path).
template <int R, int CN, int kKind, class Words, class Put>
__device__ __forceinline__ void linear3_rows(Words&& words, const Linear3& k, Put&& put) {
  unsigned h0[R + 2], h1[R + 2];  // packed row sums: pixels (x0, x0+1), (x0+2, x0+3)
#pragma unroll
  for (int r = 0; r < R + 2; ++r) {
    unsigned l0, c0, r0, l1, c1, r1;  // the outer, centre, outer lanes of each output word
    unsigned wa, wb, wc;
    words(r, wa, wb, wc);
    if constexpr (CN == 1) {
      unsigned p0, p1, p2;
      columns(wa, wb, wc, p0, p1, p2);
      l0 = p0, c0 = between(p0, p1), r0 = p1;
      l1 = p1, c1 = between(p1, p2), r1 = p2;
    } else {
      static_assert(CN == 3, "linear3_u8_kernel: 1 or 3 channels");
      const Cols3 c = u8_3x3_cn::columns3(wa, wb, wc);
      l0 = c.l0, c0 = c.c0, r0 = c.r0, l1 = c.l1, c1 = c.c1, r1 = c.r1;
    }
    if constexpr (kKind == 2) {
      h0[r] = k.hx0 * l0 + k.hx1 * c0 + k.hx0 * r0;
      h1[r] = k.hx0 * l1 + k.hx1 * c1 + k.hx0 * r1;
    } else {
      h0[r] = l0 + c0 + r0;
      h1[r] = l1 + c1 + r1;
    }
  }
#pragma unroll
  for (int i = 0; i < R; ++i) {
    if constexpr (kKind == 2) {
      put(i, linear3_u8::gauss_row(h0[i], h0[i + 1], h0[i + 2], h1[i], h1[i + 1], h1[i + 2], k.vy0,
                                   k.vy1));
    } else {
      const unsigned s0 = h0[i] + h0[i + 1] + h0[i + 2], s1 = h1[i] + h1[i + 1] + h1[i + 2];
      put(i, kKind == 0 ? linear3_u8::box_mean_row(s0, s1) : linear3_u8::box_sum_row(s0, s1));
    }
  }
}

// CN = 3: the same with the row sums of columns3's words (bytes 3 apart, one channel each).
template <int R, int CN = 1>
__global__ void __launch_bounds__(kTX* kTY, kMinBlocks<R, 5, kPackedShortFillBlocks>)
    linear3_u8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                      DevBorder<std::uint8_t> border, bool src_aligned, int rows_of_blocks,
                      Linear3 k) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long bx0 = (long long)blockIdx.x * kBW;
  auto out = [&](auto&& words, long long by0) {
    store_rows4<R, kPackedEvictFirst>(dst, int(bx0) + tx * kPX, by0 + ty * R, [&](auto&& put) {
      if (k.kind == 2)
        linear3_rows<R, CN, 2>(words, k, put);
      else if (k.kind == 1)
        linear3_rows<R, CN, 1>(words, k, put);
      else
        linear3_rows<R, CN, 0>(words, k, put);
    });
  };
  if constexpr (R == kRowsShort && kPackedRowsPath) {
    // The rows path (load_rows_words), as deriv3_u8_kernel's.
    if (u8_3x3_edge::rows_x_inside(ctaid_x_again() * kBW, src.w * CN, src_aligned)) {
      for_each_rows_tile<R>(src, border, int(bx0), rows_of_blocks, out);
      return;
    }
  }
  // The tall shape keeps the unbatched word loads (sources 4-byte but not 16-byte aligned):
  // batched, both CN spilled 12 bytes at the 48-register bound (5 blocks a SM).
  for_each_tile<R, CN, false>(
      src, border, src_aligned, rows_of_blocks,
      [&](const auto& tile, long long by0) { out(tile_words<R>(tile), by0); });
}

// box / Gaussian 3x3 in the rows8 shape (linear3_rows for each 4-byte group).
template <int CN = 1>
__global__ void __launch_bounds__(kTX* kR8Warps, kR8MinBlocks)
    linear3_rows8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                         DevBorder<std::uint8_t> border, bool, int warp_rows, Linear3 k) {
  for_each_rows8<CN>(src, border, warp_rows, [&](const Rows8<>& w, int x, int y0) {
    rows8_store_u8(dst, w, x, y0, [&](auto&& words, auto&& put) {
      if (k.kind == 2)
        linear3_rows<kR8Rows, CN, 2>(words, k, put);
      else if (k.kind == 1)
        linear3_rows<kR8Rows, CN, 1>(words, k, put);
      else
        linear3_rows<kR8Rows, CN, 0>(words, k, put);
    });
  });
}

// Outputs are never read again by the kernel: evict-first stores (st.global.cs) keep L2 for
// the source rows that the next block row's tiles read again. false restores plain stores for
// an A/B run.
constexpr bool kD3StreamStores = true;
// Resident tall deriv3 blocks a SM: 5 (48 registers, 40 warps) since the 16-byte loads and
// 32-bit columns; it was 4 (64 registers, 32 warps: 81.7 us at 8K, DRAM latency-bound at 34 %
// of the issue rate by the SASS count). 6 (40 registers) spills 8-24 bytes. 4 restores the
// old occupancy for an A/B run.
constexpr int kD3TallBlocks = 5;

// One tile's outputs of deriv3_u8_kernel: the packed row sums of the thread's R + 2 tile rows
// (tile words tx + kOff .. tx + kOff + 2 = bytes x0 - 4 .. x0 + 7), the column sums, the
// stores (kEvictFirst: st.global.cs). The row pointer advances by the stride, and threads
// whose R rows and 4 samples all lie inside the image (all but the last block row and column)
// store without tests: with dst.row(y) and both tests in the loop the stores took ~17 of ~35
// instructions a row of 4 outputs in the SASS.
// words(r, a, b, c): the words of the thread's window row r = 0 .. R + 1 (bytes x0 - 4 ..
// x0 + 7; from the tile, deriv3_tile_out, or from registers, the rows path).
// deriv3_rows: the packed row sums of words' R + 2 rows, then put(i, o0, o1) for output row i
// (samples x0, x0 + 1 in o0 and x0 + 2, x0 + 3 in o1, s16 pairs).
template <int R, int CN, class X, class Y, class Words, class Put>
__device__ __forceinline__ void deriv3_rows(Words&& words, Put&& put) {
  unsigned h0[R + 2], h1[R + 2];  // packed row sums: samples (x0, x0+1), (x0+2, x0+3)
#pragma unroll
  for (int r = 0; r < R + 2; ++r) {
    unsigned a, b, c;
    words(r, a, b, c);
    deriv3_u8::row_sums<CN, X, Y>(a, b, c, h0[r], h1[r]);
  }
#pragma unroll
  for (int i = 0; i < R; ++i)
    put(i, deriv3_u8::column_out<X, Y>(h0[i], h0[i + 1], h0[i + 2]),
        deriv3_u8::column_out<X, Y>(h1[i], h1[i + 1], h1[i + 2]));
}

template <int R, int CN, class X, class Y, bool kEvictFirst, class Words>
__device__ __forceinline__ void deriv3_out(Words&& words, const DevView<std::int16_t>& dst, int bx0,
                                           long long by0) {
  const int ty = threadIdx.y;
  const int wc = dst.w;  // samples a row (launch_3x3_cn: the destination as row samples)
  // threadIdx.x read again here (volatile: not hoisted): at 48 registers ptxas kept x0 in
  // local memory across the tile load (4 bytes spilled, sobel dx=1) rather than re-read it.
  const int x0 = bx0 + tid_x_again() * kPX;
  const long long y0 = by0 + ty * R;
  const int rows = int(dst.h - y0);  // rows of this thread in the image (by0 < dst.h)
  unsigned char* d = dst.data + y0 * dst.stride + 2LL * x0;
  if (x0 + 3 < wc && rows >= R) {
    deriv3_rows<R, CN, X, Y>(words, [&](int, unsigned o0, unsigned o1) {
      if constexpr (kEvictFirst)
        __stcs(reinterpret_cast<uint2*>(d), make_uint2(o0, o1));
      else
        *reinterpret_cast<uint2*>(d) = make_uint2(o0, o1);
      d += dst.stride;
    });
  } else {
    deriv3_rows<R, CN, X, Y>(words, [&](int i, unsigned o0, unsigned o1) {
      if (i < rows) {
        // Registers, not an array indexed at run time (that would live in local memory).
        std::int16_t* o = reinterpret_cast<std::int16_t*>(d);
        for (int j = 0; j < 4 && x0 + j < wc; ++j)
          o[j] = std::int16_t(std::uint16_t((j < 2 ? o0 : o1) >> (16 * (j % 2))));
      }
      d += dst.stride;
    });
  }
}

template <int R, int CN, class X, class Y, bool kEvictFirst, class Rows>
__device__ __forceinline__ void deriv3_tile_out(const Rows& tile, const DevView<std::int16_t>& dst,
                                                int bx0, long long by0) {
  deriv3_out<R, CN, X, Y, kEvictFirst>(tile_words<R>(tile), dst, bx0, by0);
}

// 3x3 derivatives u8 -> s16 (sobel with 3x3 taps, scharr) with scale 1 and delta 0, on CN
// interleaved channels (the tile is of bytes, a horizontal neighbour CN <= 4 bytes away, within
// the tile's margins; separable.cu launches CN = 1 and 3). The taps are template arguments
// (X: along rows, Y: along columns), so each row sum and column sum is a few packed integer
// instructions (deriv3_u8_packed.hpp, which also argues the exactness); with the taps at run time
// the kernel spent ~25 IMAD and ~10 compares an output on them and was issue-bound (116.7 us at 8K
// for a 68 us copy). Outputs: 4 s16 of a row per 8-byte store (whole 32-byte sectors: a warp writes
// 256 contiguous bytes of a row). src_aligned16: source rows 16-byte aligned (load_tile_chunks).
// The tall and short shapes load deriv-fast's 40-word tile (load_tile_chunks: 16-byte chunks from
// bx0 - 16, kD3TallBlocks) and compute through deriv3_tile_out (the row sums with kRowBias<Y>,
// the column sums with kColumnBias<Y>: the code deriv3_u8_packed.hpp's host test checks).
template <int R, int CN, class X, class Y>
__global__ void __launch_bounds__(kTX* kTY, kMinBlocks<R, kD3TallBlocks, kPackedShortFillBlocks>)
    deriv3_u8_kernel(DevView<std::uint8_t> src, DevView<std::int16_t> dst,
                     DevBorder<std::uint8_t> border, bool src_aligned, int rows_of_blocks,
                     bool src_aligned16) {
  // Row samples in int (launch_3x3_cn: wc < 2^31): fewer registers than 64-bit positions.
  const int bx0 = int(blockIdx.x) * kBW;
  __shared__ __align__(16) unsigned tile[kTileH<R>][kCTileWords];
  if constexpr (R == kRowsShort && kPackedRowsPath) {
    // The rows path (load_rows_words), its own loop: block-uniform, no barrier.
    if (u8_3x3_edge::rows_x_inside(ctaid_x_again() * kBW, src.w * CN, src_aligned)) {
      for_each_rows_tile<R>(src, border, bx0, rows_of_blocks, [&](auto&& words, long long by0) {
        deriv3_out<R, CN, X, Y, kD3StreamStores>(words, dst, bx0, by0);
      });
      return;
    }
  }
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long by0 = (long long)by * kBH<R>;
    // The short shape's src_aligned from the view again (rows_aligned_again<4>, equal to the
    // launch's rows_aligned(s, 4)): with the rows path in front, ptxas kept the parameter's
    // predicate in local memory across it (4 bytes, CN = 3).
    const bool al = R == kRowsShort ? rows_aligned_again<4>(src) : src_aligned;
    load_tile_chunks<R, CN>(tile, src, border, bx0, by0, al, src_aligned16);
    deriv3_tile_out<R, CN, X, Y, kD3StreamStores>(TileRows<kCTileWords, kCOff>{&tile[0][0]}, dst,
                                                  bx0, by0);
    __syncthreads();
  }
}

// sobel / scharr 3x3 u8 -> s16 in the rows8 shape (deriv3_rows for each 4-byte group): a
// lane's 8 samples a row in one 16-byte store where the destination rows are 16-byte aligned,
// else two 8-byte stores (launch_3x3_cn: 8-byte aligned rows).
template <int CN, class X, class Y>
__global__ void __launch_bounds__(kTX* kR8Warps, kR8MinBlocks)
    deriv3_rows8_kernel(DevView<std::uint8_t> src, DevView<std::int16_t> dst,
                        DevBorder<std::uint8_t> border, bool, int warp_rows, bool) {
  const bool aligned16 = view_rows_aligned<16>(dst);
  for_each_rows8<CN>(src, border, warp_rows, [&](const Rows8<>& w, int x, int y0) {
    unsigned o[kR8Rows][4];
    deriv3_rows<kR8Rows, CN, X, Y>(
        w.group(0), [&](int i, unsigned o0, unsigned o1) { o[i][0] = o0, o[i][1] = o1; });
    deriv3_rows<kR8Rows, CN, X, Y>(
        w.group(1), [&](int i, unsigned o0, unsigned o1) { o[i][2] = o0, o[i][3] = o1; });
    const int rows = dst.h - y0;
    unsigned char* d = dst.data + (long long)y0 * dst.stride + 2LL * x;
    if (x + 7 < dst.w && rows >= kR8Rows) {
#pragma unroll
      for (int i = 0; i < kR8Rows; ++i) {
        if (aligned16) {
          __stcs(reinterpret_cast<uint4*>(d), make_uint4(o[i][0], o[i][1], o[i][2], o[i][3]));
        } else {
          __stcs(reinterpret_cast<uint2*>(d), make_uint2(o[i][0], o[i][1]));
          __stcs(reinterpret_cast<uint2*>(d) + 1, make_uint2(o[i][2], o[i][3]));
        }
        d += dst.stride;
      }
    } else {
      const int n = dst.w - x;  // samples of the 8 inside the row (<= 0: none)
#pragma unroll
      for (int i = 0; i < kR8Rows; ++i) {
        if (i < rows) {
          std::int16_t* p = reinterpret_cast<std::int16_t*>(d);
#pragma unroll
          for (int j = 0; j < 8; ++j)
            if (j < n) p[j] = std::int16_t(std::uint16_t(o[i][j / 2] >> (16 * (j % 2))));
        }
        d += dst.stride;
      }
    }
  });
}

// CN = 3 (u8 x 3, the destination as row bytes): columns3's six words a tile row, the middle
// pair of rows sorted once for two output rows, the per-lane arithmetic in u8_3x3_cn.hpp
// (median3_row, host-tested); rows roll through four Cols3 (24 registers) instead of CN = 1's
// arrays of all R + 2 rows (6 (R + 2) = 60 words in the tall shape, at a 64-register bound).
template <int R, int CN = 1>
__global__ void __launch_bounds__(kTX* kTY, kMinBlocks<R, 4>)
    median3_u8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                      DevBorder<std::uint8_t> border, bool src_aligned, int rows_of_blocks) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long bx0 = (long long)blockIdx.x * kBW;
  // The tall shape's batched word loads (sources 4-byte but not 16-byte aligned): 56 (CN = 1)
  // and 64 (CN = 3) registers of 64, no spills.
  for_each_tile<R, CN, R == kRowsTall>(
      src, border, src_aligned, rows_of_blocks, [&](const auto& tile, long long by0) {
        store_rows4<R, kPackedEvictFirst>(dst, int(bx0) + tx * kPX, by0 + ty * R, [&](auto&& put) {
          if constexpr (CN == 1) {
            // Packed column words of tile rows ty*R .. ty*R+R+1 for this thread's columns.
            unsigned p0[R + 2], p1[R + 2], p2[R + 2];
#pragma unroll
            for (int r = 0; r < R + 2; ++r) {
              const unsigned* row = tile[ty * R + r];
              u8_3x3_dup::columns(row[tx], row[tx + 1], row[tx + 2], p0[r], p1[r], p2[r]);
            }
#pragma unroll
            for (int i = 0; i < R; i += 2) {
              // Rows i+1, i+2 are shared by outputs i (with row i) and i+1 (with row i+3).
              const unsigned a0 = vmin(p0[i + 1], p0[i + 2]), b0 = vmax(p0[i + 1], p0[i + 2]);
              const unsigned a1 = vmin(p1[i + 1], p1[i + 2]), b1 = vmax(p1[i + 1], p1[i + 2]);
              const unsigned a2 = vmin(p2[i + 1], p2[i + 2]), b2 = vmax(p2[i + 1], p2[i + 2]);
#pragma unroll
              for (int k = 0; k < 2; ++k) {
                const int extra = k == 0 ? i : i + 3;
                put(i + k, u8_3x3_dup::median3_row(a0, b0, a1, b1, a2, b2, p0[extra], p1[extra],
                                                   p2[extra]));
              }
            }
          } else {
            static_assert(CN == 3, "median3_u8_kernel: 1 or 3 channels");
            Cols3 k0 = columns3_dup(tile[ty * R], tx), k1 = columns3_dup(tile[ty * R + 1], tx);
#pragma unroll
            for (int i = 0; i < R; i += 2) {
              // Output i: rows i .. i+2; output i+1: rows i+1 .. i+3; both contain rows i+1, i+2.
              const Cols3 k2 = columns3_dup(tile[ty * R + i + 2], tx);
              const Cols3 k3 = columns3_dup(tile[ty * R + i + 3], tx);
              Cols3 lo, hi;
              u8_3x3_cn::sort_pair(k1, k2, lo, hi);
              put(i, u8_3x3_cn::median3_row(lo, hi, k0));
              put(i + 1, u8_3x3_cn::median3_row(lo, hi, k3));
              k0 = k2;
              k1 = k3;
            }
          }
        });
      });
}

// Large images take the wide tall shape of the median instead (median3_wide_u8_kernel<kMedTallR,
// CN>, which median.cu passes launch_3x3_cn as its tall kernel with kMedTallR; u8 x 3 over the
// row's bytes): the 32 x 8 threads of a block run as 16 x 16 threads of 8 output bytes x
// kMedWideRows = 8 rows, a 128 x 128 output block (the tile engine's R = 16 rows: a 130-row
// chunk tile, 20.8 KB); a thread's rows roll through three rows of columns_wide's column words
// (6 for CN = 1, 10 for CN = 3), each output row sorts them per lane (sort3) and takes
// median8_row (u8_3x3_dup.hpp, host-tested). Where the narrow body spent ~54 instructions a row
// of 4 outputs (CN = 1; SASS: 15 VIMNMX, 12 VIMNMX3, ~11 PRMT, 10 IADD3, nearly all on the
// 16-lane integer pipe that bounded the kernel), the wide one shares the column words and
// the mids' sorted pairs across 8 outputs, needs no between PRMTs and adds on the FMA pipe
// (Adder); 128 rows a block halve the per-output share of the block's fixed costs (tile load,
// addresses, prologue: ~150 instructions a thread). kMedWideRows = 4 restores 128 x 64 blocks
// (the narrow tall grid and rule; 47 registers for CN = 1) for an A/B run.
constexpr int kMedWideRows = 8;              // rows a thread in the wide shape (16 x 16 threads)
constexpr int kMedTallR = 2 * kMedWideRows;  // the tile engine's R: 16 x 8 = 128 rows a block
static_assert(kMedWideRows * 2 * kTY == kBH<kMedTallR> && 16 * 8 == kBW,
              "the wide median covers the tile engine's block");
// Resident blocks a SM of the wide median: CN = 1 5 (<= 48 registers, as morph3; ptxas -v for
// sm_90: 48, no spills); CN = 3 (three rows of 10 column words) 4, as the narrow CN = 3.
template <int CN>
constexpr int kMedWideBlocks = CN == 1 ? 5 : 4;

// The wide rows of one tile: thread (lx, ly) of the 16 x 16 (lx = 0..15: output bytes
// bx0 + 8 lx .. + 7; rows by0 + H ly .. + H - 1 from tile rows H ly .. H ly + H + 1). The tile
// words a, b, c, d = bytes x0 - 4 .. x0 + 11 are words 3 + 2 lx .. 6 + 2 lx of the chunk tile's
// rows (kCOff = 3): three 8-byte loads (words 2 + 2 lx .. 7 + 2 lx, 8-byte aligned).
// median3_wide_body: H output rows from the column words of window rows 0 .. H + 1
// (cols(r, out): columns_wide's words of row r), put(i, lo, hi) for output row i.
template <int H, int CN, class Cols, class Put>
__device__ __forceinline__ void median3_wide_body(Cols&& cols, Put&& put) {
  constexpr int W = u8_3x3_dup::kWideCols<CN>;
  unsigned w[3][W];
  const u8_3x3_dup::Adder f = opaque_adder();
  cols(0, w[0]);
  cols(1, w[1]);
#pragma unroll
  for (int i = 0; i < H; ++i) {
    cols(i + 2, w[(i + 2) % 3]);
    u8_3x3_dup::Sorted3 s[W];
#pragma unroll
    for (int k = 0; k < W; ++k)
      s[k] = u8_3x3_dup::sort3(w[i % 3][k], w[(i + 1) % 3][k], w[(i + 2) % 3][k], f);
    const u8_3x3_dup::Out8 o = u8_3x3_dup::median8_row<CN>(s, f);
    put(i, o.lo, o.hi);
  }
}

template <int CN, class Rows, class Put>
__device__ __forceinline__ void median3_wide_rows(const Rows& tile, int lx, int r0, Put&& put) {
  constexpr int W = u8_3x3_dup::kWideCols<CN>;
  median3_wide_body<kMedWideRows, CN>(
      [&](int r, unsigned(&out)[W]) {
        const uint2* p = reinterpret_cast<const uint2*>(tile[r0 + r] + 2 * lx - 1);
        const uint2 v0 = p[0], v1 = p[1], v2 = p[2];
        u8_3x3_dup::columns_wide<CN>(v0.y, v1.x, v1.y, v2.x, out);
      },
      put);
}

// The 3x3 median in the rows8 shape: a lane's 8 outputs are the wide median's (its words a, b,
// c, d = columns_wide's tile words), kR8Rows rows. 6 blocks a SM (an 80-register bound): at
// kR8MinBlocks' 64, CN = 1 spilled 8 bytes.
constexpr int kMedR8Blocks = 8;
template <int CN = 1>
__global__ void __launch_bounds__(kTX* kR8Warps, kMedR8Blocks)
    median3_rows8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                         DevBorder<std::uint8_t> border, bool, int warp_rows) {
  constexpr int W = u8_3x3_dup::kWideCols<CN>;
  const bool aligned8 = view_rows_aligned<8>(dst);
  for_each_rows8<CN>(src, border, warp_rows, [&](const Rows8<>& w, int x, int y0) {
    unsigned lo[kR8Rows], hi[kR8Rows];
    median3_wide_body<kR8Rows, CN>(
        [&](int r, unsigned(&out)[W]) {
          u8_3x3_dup::columns_wide<CN>(w.left(r), w.b[r], w.c[r], w.right(r), out);
        },
        [&](int i, unsigned l, unsigned h) { lo[i] = l, hi[i] = h; });
    store_rows8<kR8Rows, kPackedEvictFirst>(dst, x, y0, aligned8, [&](auto&& put) {
#pragma unroll
      for (int i = 0; i < kR8Rows; ++i) put(i, lo[i], hi[i]);
    });
  });
}

// The wide tall median (R = kMedTallR in the tile engine's terms; see above), u8 x CN (CN = 3:
// over the row's bytes, the destination as row bytes, as median3_u8_kernel). Destination rows
// 8-byte aligned (a uniform test): one 8-byte store a row, else two 4-byte stores. The edge
// tiles and 4-byte aligned sources take the word loader unbatched (batched, its 130 rows of
// words in flight would not fit the register bound).
template <int R, int CN = 1>
__global__ void __launch_bounds__(kTX* kTY, kMedWideBlocks<CN>)
    median3_wide_u8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                           DevBorder<std::uint8_t> border, bool src_aligned, int rows_of_blocks) {
  static_assert(R == kMedTallR, "the wide median's block is 128 x 128");
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long bx0 = (long long)blockIdx.x * kBW;
  const bool aligned8 = view_rows_aligned<8>(dst);
  for_each_tile<R, CN, false>(
      src, border, src_aligned, rows_of_blocks, [&](const auto& tile, long long by0) {
        // Thread (lx, ly) of the 16 x 16: the warp's two halves are two rows of threads.
        const int lx = tx & 15, ly = 2 * ty + (tx >> 4);
        store_rows8<kMedWideRows, kPackedEvictFirst>(
            dst, int(bx0) + 8 * lx, by0 + kMedWideRows * ly, aligned8,
            [&](auto&& put) { median3_wide_rows<CN>(tile, lx, kMedWideRows * ly, put); });
      });
}

// Whether the rows8 shape takes a u8 x CN source s for destination d: source rows 4-byte
// aligned, and the 32-bit edge rule's bounds (u8_3x3_edge: coordinates below 2^30, byte offsets
// h * stride below 2^31, with a warp's 256 bytes and a row of margin past the last row).
inline bool rows8_fits(const ConstImageView& s, const ImageView& d, int cn) {
  const long long wc = d.width() * cn;
  return wc < u8_3x3_edge::kMaxEdgeCoord && d.height() < u8_3x3_edge::kMaxEdgeCoord &&
         s.stride() > 0 && (s.height() + 1) * s.stride() + kR8BW < 0x7fffffffLL &&
         rows_aligned(s, 4);
}

// The grid of a rows8 kernel over wc row bytes x h rows at `rows` output rows a warp (kR8Rows,
// or more for the kernels that take it): one block a kR8BW-byte column of kR8Warps warps, warp
// rows beyond 65535 block rows walked by the kernels' loop (for_each_rows8_edge).
struct Rows8Grid {
  dim3 grid;
  int warp_rows;  // the kernels' warp_rows argument
};
inline Rows8Grid rows8_grid(long long wc, long long h, int rows) {
  const int warp_rows = blocks_y(h, rows);
  return {dim3(unsigned((wc + kR8BW - 1) / kR8BW),
               unsigned(std::min<long long>((warp_rows + kR8Warps - 1) / kR8Warps, 65535))),
          warp_rows};
}

// Rows8Edge<kReach> of a u8 x CN source by the border rule (detail::border_index, the
// reference's), computed on the host (for_each_rows8_edge's kernels; rows8_fits must hold).
template <int kReach>
Rows8Edge<kReach> rows8_edge(const ConstImageView& s, const Border& border, int cn) {
  Rows8Edge<kReach> g;
  g.wc = int(s.width() * cn);
  const long long w = s.width(), h = s.height(), stride = s.stride();
  auto at = [&](long long p, long long len, long long scale) {
    const long long i = detail::border_index(p, len, border.type);
    return i < 0 ? -1 : int(i * scale);
  };
  for (int d = 0; d < kReach; ++d) {
    g.left[d] = at(-1 - d, w, cn);
    g.right[d] = at(w + d, w, cn);
    g.top[d] = at(-1 - d, h, stride);
    g.bottom[d] = at(h + d, h, stride);
  }
  return g;
}

// A kernel above for R rows a thread: (src, dst, border, src_aligned, rows_of_blocks, extra...).
template <class Out, class... Extra>
using Kernel = void (*)(DevView<std::uint8_t>, DevView<Out>, DevBorder<std::uint8_t>, bool, int,
                        Extra...);

// Launches one of the kernels above over a u8 x CN source (CN = 1 for every kernel, 3 for
// morph3, linear3, deriv3 and median3, which must then be their CN = 3 instances): `rows8` (the
// rows8 shape, every size; nullptr for the kernels that have none, the composites) where the source
// rows are 4-byte aligned and the image's byte offsets fit 32 bits; otherwise `tall` (kTallR rows a
// thread in the tile engine's terms: kRowsTall, or kMedTallR for the wide median, whose blocks are
// kBH<kTallR> rows high in the grid and in the rule) or `short_` (the same kernel for kRowsShort)
// by the rule of launch.cuh (tall_blocks_fill). Returns false when the packed path does not apply:
// another format, or destination rows not aligned for the kernels' stores of four outputs (4 bytes
// for u8, 8 for s16). The kernels see the destination as rows of bytes (width x CN, one channel):
// their outputs are row bytes.
template <int CN, int kTallR = kRowsTall, class Out, class... Extra>
bool launch_3x3_cn(Kernel<Out, Extra...> rows8, Kernel<Out, Extra...> tall,
                   Kernel<Out, Extra...> short_, const ConstImageView& s, const ImageView& d,
                   const Border& border, const char* op, cudaStream_t st, Extra... extra) {
  static_assert(CN == 1 || CN == 3);
  const long long wc = d.width() * CN;
  if (s.depth() != Depth::u8 || s.channels() != CN || !rows_aligned(d, 4 * sizeof(Out)) ||
      wc > 0x7fffffffLL)
    return false;
  DevView<Out> dv = dev_view<Out>(d);
  dv.w = int(wc);
  dv.cn = 1;
  if (rows8 != nullptr && rows8_fits(s, d, CN)) {
    const Rows8Grid g = rows8_grid(wc, d.height(), kR8Rows);
    rows8<<<g.grid, dim3(kTX, kR8Warps), 0, st>>>(dev_view<std::uint8_t>(s), dv,
                                                  dev_border<std::uint8_t>(border), true,
                                                  g.warp_rows, extra...);
    PIXFLOW_CUDA_CHECK_LAUNCH(op);
    (void)op;
    return true;
  }
  const long long bx = (wc + kBW - 1) / kBW;
  // The short shape's edge loader is 32-bit (u8_3x3_edge: coordinates below 2^30, byte
  // offsets h * stride below 2^31); the rule takes the short shape only below 1056 tall blocks
  // (row bytes < 135168, rows < 67584), so of the other tests only the last can select the
  // tall shape for a view whose rows are far apart.
  const bool use_tall = tall_blocks_fill(bx, d.height(), kBH<kTallR>) ||
                        wc >= u8_3x3_edge::kMaxEdgeCoord ||
                        d.height() >= u8_3x3_edge::kMaxEdgeCoord || s.stride() <= 0 ||
                        s.height() * s.stride() >= 0x7fffffffLL;
  const int bh = use_tall ? kBH<kTallR> : kBH<kRowsShort>;
  (use_tall ? tall : short_)<<<grid_2d(wc, d.height(), kBW, bh), dim3(kTX, kTY), 0, st>>>(
      dev_view<std::uint8_t>(s), dv, dev_border<std::uint8_t>(border), rows_aligned(s, 4),
      blocks_y(d.height(), bh), extra...);
  PIXFLOW_CUDA_CHECK_LAUNCH(op);
  (void)op;
  return true;
}

// The one-channel form (every kernel above).
template <int kTallR = kRowsTall, class Out, class... Extra>
bool launch_3x3(Kernel<Out, Extra...> rows8, Kernel<Out, Extra...> tall,
                Kernel<Out, Extra...> short_, const ConstImageView& s, const ImageView& d,
                const Border& border, const char* op, cudaStream_t st, Extra... extra) {
  return launch_3x3_cn<1, kTallR>(rows8, tall, short_, s, d, border, op, st, extra...);
}

}  // namespace
}  // namespace pixflow::cuda::u8_3x3
