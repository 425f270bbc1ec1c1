// gaussian on u8, 13 or 49 taps: the dot-product kernel (arithmetic in gaussian_u8_dp.hpp) and its
// launch, run by separable.cu's "gaussian" and by bench/micro/gaussian_dp_shapes.cu.
#pragma once

#include <cstdint>
#include <type_traits>

#include "pixflow/ops.hpp"
#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/byte_tile.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/gaussian_u8_dp.hpp"
#include "src/base/gaussian_taps.hpp"

namespace pixflow::cuda {
namespace {

// u8, 13 or 49 taps both ways, 1 or 3 channels, every tap in [0, 255]: the dot-product kernel
// (arithmetic and its bounds in gaussian_u8_dp.hpp, tested on the host there). A block:
// kByteTileBW samples x BH rows a tile, kGaussDpThreads threads; a block that takes several
// tiles of its column (by, by + gridDim.y, ..; gauss_dp_blocks_y gives one a block below 65535
// tile rows) has the next tile's loads in flight during this tile's vertical pass.
// - Tile (the byte tile of common/byte_tile.cuh: rows start on a 16-byte boundary of the
//   image row): gauss_dp_tile_issue. The chunks inside the image row go by cp.async (every
//   chunk of a thread in flight at once, no registers); the edge chunks byte by byte, one
//   byte a thread (the per-chunk loop of load_byte_tile ran a chunk's 16 bytes in one lane
//   while the warp's other 31 waited: on the edge columns' blocks that was a third of the
//   kernel's instructions, at 1-2 active lanes, the s13 ncu's 24 active threads a warp).
// - Horizontal pass over all BH + KH - 1 tile rows: a thread kGaussDpRun adjacent samples of
//   two rows (a pair row), its run's data words loaded once per row (8-byte loads: a warp
//   reads 256 contiguous bytes), 4 IDP.4A a sample at 13 taps, the two rows' h packed in
//   16-bit lanes (one PRMT) and stored as pair words (H2: pair row x kByteTileBW words, quads
//   placed by gauss_dp::h2_quad so the 16-byte stores are free of bank conflicts).
// - Vertical pass: a thread 4 adjacent samples (16-byte loads of H2) x BH / 4 output rows, in
//   groups of gauss_dp::v_group_pairs row pairs (gauss_dp_v_group; scatter form: each pair
//   word of a group is loaded once and added to the rows of the group whose window holds it;
//   8 sums a pair live), each output word (4 samples) stored straight to the image: a warp's
//   32 lanes write 128 contiguous bytes of a row (whole sectors; no stage, no barrier before
//   the stores).
constexpr int kGaussDpThreads = 256, kGaussDpRun = 8;

// Rows a block (tall grid / short grid, launch.cuh tall_blocks_fill) and the blocks a SM the
// tall shape's shared memory allows (__launch_bounds__: registers <= 64 at 4). Tall: 13 taps
// u8x1 56 rows = 19.1 KB tile + 34 KB H2 (53.1 KB: 4 blocks a SM, 32 warps; 64 rows, 60.8 KB,
// gave 3); u8x3 48 rows, 48.8 KB; 49 taps 64 rows, 91 KB (2; the 48-row halo makes fewer rows
// dearer).
template <int CN, int KW>
struct GaussDpShape;
template <>
struct GaussDpShape<1, 13> {
  static constexpr int kTall = 56, kShort = 32, kMinBlocks = 4;
};
template <>
struct GaussDpShape<3, 13> {
  static constexpr int kTall = 48, kShort = 32, kMinBlocks = 4;
};
template <>
struct GaussDpShape<1, 49> {
  static constexpr int kTall = 64, kShort = 32, kMinBlocks = 2;
};

template <int CN, int KW>
struct GaussDpKey {
  static constexpr int kCn = CN, kKw = KW;
};

template <int KW, int CN>
constexpr int gauss_dp_tile_width() {
  return (kByteTileBW + (KW - 1) * CN + 15 + 15) / 16 * 16;  // byte_tile_width
}
inline std::size_t gauss_dp_smem(int kw, int kh, int cn, int bh) {
  const int tw = byte_tile_width(kw, cn), th = bh + kh - 1;
  return (std::size_t(tw) * th + 15) / 16 * 16 + std::size_t(th / 2) * kByteTileBW * 4;
}

// Block rows of the grid: one tile a block (a block walks its column only past 65535 tile
// rows). Measured (bench/micro/gaussian_dp_shapes.cu, session 20, H100, 8192^2 u8x1): sigma=8
// (49 taps, 32 x 128 tiles) 233.8 us at one tile a block against 271.4 at the 8 tiles a block
// that the rule before picked (fewest waves x tiles, the largest t among ties: every tile after a
// block's first has its loads in flight, yet blocks that walk measured slower at every t: 2 / 3
// / 4 tiles 236.8 / 242.9 / 247.0); sigma=2 (32 x 147) 74.1 against 75.9 at 3 (2: 73.5).
inline long long gauss_dp_blocks_y(long long rows) {
  return rows < 65535 ? rows : 65535;
}

// detail::border_index in 32-bit arithmetic, for a coordinate p at most a tile (a few hundred
// samples) outside [0, len): one reflection or shift, checked, else the general rule with a
// 32-bit remainder (len is then below a tile, so 2 len does not overflow). The 64-bit rule
// of near_border_index is a called division: unrolled in the tile loader, its calls made
// ptxas spill the kernel's registers.
__device__ __forceinline__ int gauss_dp_border(int p, int len, BorderType t) {
  if (p >= 0 && p < len) return p;
  int q = -1;
  switch (t) {
    case BorderType::replicate:
      return p < 0 ? 0 : len - 1;
    case BorderType::reflect:
      q = p < 0 ? -p - 1 : len - 1 - (p - len);
      if (q >= 0 && q < len) return q;
      q = p % (2 * len);
      if (q < 0) q += 2 * len;
      return q < len ? q : 2 * len - 1 - q;
    case BorderType::reflect101:
      if (len == 1) return 0;
      q = p < 0 ? -p : len - 2 - (p - len);
      if (q >= 0 && q < len) return q;
      q = p % (2 * len - 2);
      if (q < 0) q += 2 * len - 2;
      return q < len ? q : 2 * len - 2 - q;
    case BorderType::wrap:
      q = p < 0 ? p + len : p - len;
      if (q >= 0 && q < len) return q;
      q = p % len;
      return q < 0 ? q + len : q;
    case BorderType::constant:
      return -1;
  }
  return -1;
}

// Byte e of source row sy (sy < 0: a constant-border row) by the border rule applied to the
// byte's pixel (its channel stays): border_row_byte in 32-bit border arithmetic.
template <int CN>
__device__ __forceinline__ unsigned char gauss_dp_edge_byte(const DevView<std::uint8_t>& v,
                                                            const DevBorder<std::uint8_t>& b,
                                                            int sy, long long e) {
  if (sy < 0) return b.value;
  long long px;
  int ch;
  u8_3x3_cn::pixel_of_byte(e, CN, px, ch);
  const int sx = gauss_dp_border(int(px), v.w, b.type);
  return sx < 0 ? b.value : v.row(sy)[(long long)sx * CN + ch];
}

// Issues the loads of the byte tile of block (e0, y0): BH + KH - 1 rows of the tile width,
// rows y0 - KH / 2 + r by the border rule, bytes xs + i (xs = floor16(e0 - (KW / 2) CN)).
// Chunks [lo, hi) lie inside the image row: cp.async from row sy (a constant-border row
// outside the image: the value); chunks [0, lo) and [hi, need) byte by byte by the border rule
// (all chunks when the source is not 16-byte aligned); chunks from `need` on hold no byte an
// output reads (past the last sample's window) and are left as they are (their h feed only
// outputs past the row, never stored). The caller waits (cp_async_wait_all) and syncs.
template <int CN, int KW, int KH, int BH>
__device__ __forceinline__ void gauss_dp_tile_issue(unsigned char* tile, long long e0, long long y0,
                                                    const DevView<std::uint8_t>& src,
                                                    const DevBorder<std::uint8_t>& border,
                                                    bool aligned) {
  constexpr int kTw = gauss_dp_tile_width<KW, CN>(), kTh = BH + KH - 1, kChunks = kTw / 16;
  constexpr int kAx = (KW / 2) * CN, kTotal = kTh * kChunks;
  const int tid = int(threadIdx.x);
  const long long wc = (long long)src.w * CN, xs = floor16(e0 - kAx);
  const int ys = int(y0) - KH / 2;  // rows are ints (DevView::h)
  const long long rel = wc - xs;    // > 0: xs <= e0 < wc
  int lo = xs >= 0 ? 0 : int(min((long long)kChunks, -xs / 16));
  int hi = int(min((long long)kChunks, rel / 16));
  int need = int(min((long long)kChunks, (rel + kAx + 15) / 16));
  if (!aligned) lo = hi = 0;
  hi = max(hi, lo);
  need = max(need, hi);
  if (CN == 1 && lo == 0 && hi == kChunks && ys >= 0 && ys + kTh <= src.h) {
    // Interior tile (every chunk of every row inside the image, rows unmapped: all but the
    // first and last block columns and tile rows): chunk i from tile row 0's pointer, no
    // border rule. The general loop below ran the border switch for every chunk, ~50
    // instructions a chunk (s16 SASS): ~4 an output at 13 taps u8x1. One channel only: u8x3
    // at 48 rows spilled 4 bytes with it.
    // Chunk i of the tile is shared byte 16 i (kTw = 16 kChunks): gauss_dp::chunk_walk.
    static_assert(kTw == 16 * kChunks);
    const unsigned char* g = src.row(ys) + xs;
    gauss_dp::ChunkWalk w = gauss_dp::chunk_walk_start(tid, kChunks, src.stride);
#pragma unroll 1
    for (; w.i < kTotal; gauss_dp::chunk_walk_next(w, kGaussDpThreads, kChunks, src.stride))
      cp_async16(tile + 16 * w.i, g + w.off);
    return;
  }
  const unsigned splat = 0x01010101u * border.value;
  // Not unrolled: a cp.async needs no register, so a rolled loop has every copy of the thread
  // in flight as well; unrolled, the compiler kept each step's indices across the tile loop
  // (loop-invariant in the walk) and spilled them.
#pragma unroll 1
  for (int i = tid; i < kTotal; i += kGaussDpThreads) {
    const int r = i / kChunks, c = i - r * kChunks;
    if (c >= lo && c < hi) {
      const int sy = gauss_dp_border(ys + r, src.h, border.type);
      unsigned char* out = tile + r * kTw + 16 * c;
      if (sy >= 0)
        cp_async16(out, src.row(sy) + xs + 16 * c);
      else
        *reinterpret_cast<uint4*>(out) = make_uint4(splat, splat, splat, splat);
    }
  }
  const int n_edge = lo + need - hi;
  if (n_edge == 0) return;
  // Edge bytes, 16 consecutive threads a chunk, 4 loads of a thread in flight together.
  const int total = kTh * n_edge * 16;
#pragma unroll 1
  for (int i0 = tid; i0 < total; i0 += 4 * kGaussDpThreads) {
    unsigned char val[4];
    int at[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int i = i0 + k * kGaussDpThreads;
      at[k] = -1;
      val[k] = 0;
      if (i < total) {
        const int b = i % 16, q = i / 16, r = q / n_edge, j = q - r * n_edge;
        const int c = j < lo ? j : hi + (j - lo);
        val[k] = gauss_dp_edge_byte<CN>(src, border, gauss_dp_border(ys + r, src.h, border.type),
                                        xs + 16 * c + b);
        at[k] = r * kTw + 16 * c + b;
      }
    }
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (at[k] >= 0) tile[at[k]] = val[k];
  }
}

// The vertical pass of one group of G output row pairs of a thread (pairs s0 .. s0 + G - 1 of
// its column, output rows 2 s0 .. 2 (s0 + G) - 1 from `o` on; pair word m of the group is word
// m - s of pair s's window), G and the store rule compile-time: the runtime group size of the
// s16 kernel put a branch around every pair word's load and dot products (~4 instructions an
// output). kFull: the tile's rows and 256 samples all exist and rows take 4-byte stores.
// Advances o by 2 G rows.
template <int G, int KVW, bool kFull>
__device__ __forceinline__ void gauss_dp_v_group(const uint4* col, const gauss_dp::Taps& p, int s0,
                                                 int r, int rows, bool full_x, long long e,
                                                 long long wc, long long stride, std::uint8_t*& o) {
  using gauss_dp::u32;
  constexpr int kQuads = kByteTileBW / 4;
  u32 ev[G][4], od[G][4];
#pragma unroll
  for (int s = 0; s < G; ++s)
#pragma unroll
    for (int q = 0; q < 4; ++q) ev[s][q] = od[s][q] = gauss_dp::kRound;
  // Pair word m + 1 is loaded while word m is summed, and no later load moves above the
  // empty asm (a compiler barrier, no instruction): with every load of a group hoisted to
  // its top (straight-line code: 9 words = 36 registers beside the 24 sums) ptxas spilled at
  // the 64 registers of 4 blocks a SM.
  uint4 cur = col[s0 * kQuads];
#pragma unroll
  for (int m = 0; m < G + KVW - 1; ++m) {
    uint4 next = cur;
    if (m + 1 < G + KVW - 1) next = col[(s0 + m + 1) * kQuads];
    asm volatile("" ::: "memory");
    const u32 pw[4] = {cur.x, cur.y, cur.z, cur.w};
#pragma unroll
    for (int s = 0; s < G; ++s)
      if (m - s >= 0 && m - s < KVW)
#pragma unroll
        for (int q = 0; q < 4; ++q) gauss_dp::v_add(pw[q], p.v[m - s], ev[s][q], od[s][q]);
    cur = next;
  }
#pragma unroll
  for (int s = 0; s < G; ++s)
#pragma unroll
    for (int odd = 0; odd < 2; ++odd) {
      const u32 word = odd ? gauss_dp::pack4(od[s][0], od[s][1], od[s][2], od[s][3])
                           : gauss_dp::pack4(ev[s][0], ev[s][1], ev[s][2], ev[s][3]);
      if (kFull) {
        *reinterpret_cast<u32*>(o) = word;
      } else if (r + 2 * (s0 + s) + odd < rows) {
        if (full_x) {
          *reinterpret_cast<u32*>(o) = word;
        } else {
#pragma unroll
          for (int b = 0; b < 4; ++b)
            if (e + b < wc) o[b] = std::uint8_t(word >> (8 * b));
        }
      }
      o += stride;
    }
}

template <int CN, int KW, int KH, int BH, int kMinBlocks>
__global__ void __launch_bounds__(kGaussDpThreads, kMinBlocks)
    gaussian_u8_dp_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                          DevBorder<std::uint8_t> border, gauss_dp::Taps p, int rows_of_blocks,
                          bool src_aligned, bool dst_aligned) {
  using gauss_dp::u32;
  constexpr int kTw = gauss_dp_tile_width<KW, CN>(), kTh = BH + KH - 1, kPairRows = kTh / 2;
  static_assert(kTh % 2 == 0, "odd KH and even BH: whole pair rows");
  // The first window byte of output e0 in the tile (e0 is a multiple of 16, see byte_tile):
  // a compile-time constant, so a run's word base and every byte alignment are too. A run
  // starts its words on an even word (8-byte loads), kA bytes before its first window.
  constexpr int kW0 = gauss_dp::run_w0(KW, CN), kA = gauss_dp::run_a(KW, CN);
  constexpr int kR = kGaussDpRun, kRuns = kByteTileBW / kR;
  constexpr int kRW = gauss_dp::run_words(KW, CN, kR, kA), kRW2 = (kRW + 1) / 2;
  static_assert(4 * (kW0 + (kRuns - 1) * (kR / 4) + 2 * kRW2) <= kTw, "run inside the tile row");
  static_assert(kR == 8 && kRuns == 32, "a warp's lanes are the runs of one pair row");
  constexpr int kQuads = kByteTileBW / 4, kRV = BH * kQuads / kGaussDpThreads;
  static_assert(kRV % 2 == 0 && kRV * kGaussDpThreads == BH * kQuads, "one item a thread");
  // Row pairs a vertical group and the tail group (gauss_dp::v_group_pairs).
  constexpr int kPairs = kRV / 2, kVW = gauss_dp::v_words(KH);
  constexpr int kVP = gauss_dp::v_group_pairs(kPairs, KH);
  constexpr int kVTail = kPairs % kVP;

  extern __shared__ __align__(16) unsigned char smem_raw[];
  unsigned char* tile = smem_raw;
  u32* h2 = reinterpret_cast<u32*>(smem_raw + (std::size_t(kTw) * kTh + 15) / 16 * 16);
  const long long e0 = (long long)blockIdx.x * kByteTileBW, wc = (long long)dst.w * CN;
  const bool full_x = dst_aligned && e0 + kByteTileBW <= wc;  // 4-byte stores, no clipping
  const int c = int(threadIdx.x) % kRuns;                     // horizontal: the thread's run
  const int cq = int(threadIdx.x) % kQuads, r0 = int(threadIdx.x) / kQuads * kRV;  // vertical
  const uint4* col = reinterpret_cast<const uint4*>(h2) + gauss_dp::h2_quad(cq) + r0 / 2 * kQuads;
  if (int(blockIdx.y) < rows_of_blocks)
    gauss_dp_tile_issue<CN, KW, KH, BH>(tile, e0, (long long)blockIdx.y * BH, src, border,
                                        src_aligned);
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long y0 = (long long)by * BH;
    cp_async_wait_all();
    __syncthreads();  // the tile is in; every thread is past the previous vertical pass (H2)

    // Horizontal: pair row pr (tile rows 2 pr, 2 pr + 1), samples c kR .. c kR + kR - 1.
    for (int pr = int(threadIdx.x) / kRuns; pr < kPairRows; pr += kGaussDpThreads / kRuns) {
      u32 h[2][kR];
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const uint2* src2 =
            reinterpret_cast<const uint2*>(tile + (2 * pr + half) * kTw) + kW0 / 2 + c * (kR / 8);
        u32 w[2 * kRW2];
#pragma unroll
        for (int k = 0; k < kRW2; ++k) {
          const uint2 v = src2[k];
          w[2 * k] = v.x;
          w[2 * k + 1] = v.y;
        }
        gauss_dp::h_run<KW, CN, kR, kA>(w, p, h[half]);
      }
      uint4* out = reinterpret_cast<uint4*>(h2 + pr * kByteTileBW);
#pragma unroll
      for (int q = 0; q < kR / 4; ++q)
        out[gauss_dp::h2_quad(c * (kR / 4) + q)] =
            make_uint4(gauss_dp::pair(h[0][4 * q], h[1][4 * q]),
                       gauss_dp::pair(h[0][4 * q + 1], h[1][4 * q + 1]),
                       gauss_dp::pair(h[0][4 * q + 2], h[1][4 * q + 2]),
                       gauss_dp::pair(h[0][4 * q + 3], h[1][4 * q + 3]));
    }
    __syncthreads();  // H2 complete; the tile is free for the next one
    if (by + int(gridDim.y) < rows_of_blocks)
      gauss_dp_tile_issue<CN, KW, KH, BH>(tile, e0, (long long)(by + gridDim.y) * BH, src, border,
                                          src_aligned);

    // Vertical: samples 4 cq .. 4 cq + 3 of output rows r0 .. r0 + kRV - 1, in groups of kVP
    // row pairs and a tail group (gauss_dp_v_group).
    const int rows = int(min((long long)BH, (long long)dst.h - y0));
    // The output pointer walks down a row at a time (offsets r * stride precomputed for every
    // row are invariant in the tile walk: the compiler kept them all and spilled).
    std::uint8_t* o = dst.row(y0 + r0) + e0 + 4 * cq;
    const long long e = e0 + 4 * cq;
    // Groups not unrolled: unrolled, the scheduler overlapped them and spilled (64 registers).
    // Whole tiles (every row and sample exists, 4-byte stores) store without checks.
    if (full_x && rows == BH) {
#pragma unroll 1
      for (int s0 = 0; s0 + kVP <= kPairs; s0 += kVP)
        gauss_dp_v_group<kVP, kVW, true>(col, p, s0, r0, rows, full_x, e, wc, dst.stride, o);
      if constexpr (kVTail > 0)
        gauss_dp_v_group<kVTail, kVW, true>(col, p, kPairs - kVTail, r0, rows, full_x, e, wc,
                                            dst.stride, o);
    } else {
#pragma unroll 1
      for (int s0 = 0; s0 + kVP <= kPairs; s0 += kVP)
        gauss_dp_v_group<kVP, kVW, false>(col, p, s0, r0, rows, full_x, e, wc, dst.stride, o);
      if constexpr (kVTail > 0)
        gauss_dp_v_group<kVTail, kVW, false>(col, p, kPairs - kVTail, r0, rows, full_x, e, wc,
                                             dst.stride, o);
    }
  }
}

// The dot-product kernel where it applies (see above); false otherwise.
bool try_gaussian_u8_dp(const ConstImageView& s, const ImageView& d, const GaussianParams& p,
                        cudaStream_t st) {
  const int cn = s.channels();
  // u8x3 at 49 taps (37 words a sample, 38 a run row) spilled 108 bytes at 80 registers.
  if (p.kw != p.kh || !((p.kw == 13 && (cn == 1 || cn == 3)) || (p.kw == 49 && cn == 1)))
    return false;
  std::int32_t tx[detail::kGaussianMaxK], ty[detail::kGaussianMaxK];
  detail::gaussian_taps_fixed(p.kw, p.sigma, detail::kGaussianBitsU8, tx);
  detail::gaussian_taps_fixed(p.kh, p.sigma_y, detail::kGaussianBitsU8, ty);
  gauss_dp::Taps k;
  if (!gauss_dp::make_taps(tx, p.kw, ty, p.kh, cn, k)) return false;
  const long long wc = (long long)s.width() * cn, bx = (wc + kByteTileBW - 1) / kByteTileBW;
  const bool sa = rows_aligned(s, 16), da = rows_aligned(d, 16);
  auto run = [&](auto shape_tag) {
    using Shape = typename decltype(shape_tag)::type;
    constexpr int C = Shape::kCn, KW = Shape::kKw;
    using S = GaussDpShape<C, KW>;
    // Rows a block by the tall-grid rule (launch.cuh).
    const bool tall = tall_blocks_fill(bx, s.height(), S::kTall);
    const int bh = tall ? S::kTall : S::kShort;
    const std::size_t smem = gauss_dp_smem(KW, KW, C, bh);
    const int rows = blocks_y(s.height(), bh);
    const dim3 grid(unsigned(bx), unsigned(gauss_dp_blocks_y(rows)));
    auto launch = [&](auto kernel) {
      if (smem > 48 * 1024)
        PIXFLOW_CUDA_CHECK(
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
      kernel<<<grid, kGaussDpThreads, smem, st>>>(
          dev_view<std::uint8_t>(s), dev_view<std::uint8_t>(d), dev_border<std::uint8_t>(p.border),
          k, rows, sa, da);
    };
    if (tall)
      launch(gaussian_u8_dp_kernel<C, KW, KW, S::kTall, S::kMinBlocks>);
    else
      launch(gaussian_u8_dp_kernel<C, KW, KW, S::kShort, S::kMinBlocks>);
  };
  if (cn == 1 && p.kw == 13)
    run(std::type_identity<GaussDpKey<1, 13>>{});
  else if (cn == 1)
    run(std::type_identity<GaussDpKey<1, 49>>{});
  else
    run(std::type_identity<GaussDpKey<3, 13>>{});
  PIXFLOW_CUDA_CHECK_LAUNCH("gaussian");
  return true;
}

}  // namespace
}  // namespace pixflow::cuda
