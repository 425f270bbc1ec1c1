// The register arithmetic of the CUDA van Herk dilate/erode kernel for large centred windows on
// one u8 channel (morphology.cu, vh2_u8c1_kernel), as host + device code so that
// tests/morph_vh2_packed_test.cpp runs it on the CPU.
//
// Both passes run van Herk / Gil-Werman on a thread's registers over 16 outputs (N = 16) of a
// window of K samples: out(i) = op(in(i) .. in(i + K - 1)), i < 16, from in(0 .. 16 + K - 2).
// With blocks of K inputs from in(0): h(i) = op over in(i) .. the end of i's block (a suffix,
// built backwards), g(j) = op over the start of j's block .. in(j) (a prefix, forwards); a
// window that starts inside a block ends in the next, so out(i) = op(h(i), g(i + K - 1)), and
// a window that starts on a block's first sample is that block, h(i). About 3 ops for an
// output word whatever K (K = 15, 16 outputs: 14 + 14 + 15), each op one VIMNMX.U16x2 on two
// independent streams.
//
// The lanes of a word are two independent streams, so that the prefixes and suffixes run on
// both at once:
// - vertical (vcol): two neighbouring columns of one row, each byte v as v * 257 (one PRMT a
//   word from a tile word of 4 columns, u8_3x3_dup.hpp's lanes); the thread walks down its
//   column quad's 16 + K - 1 tile rows; its results then turn into row-pair words (vpair: the
//   lanes (column x of row i, column x of row i + 1)), one PRMT each, 16 bytes a store into
//   shared memory;
// - horizontal (hrow): the row-pair words of 16 + K - 1 neighbouring columns (16-byte shared
//   loads, no PRMT), 16 outputs of two rows; hpack gathers each row's output bytes, four
//   PRMT for 4 columns of 2 rows.
#pragma once

#include <cstdint>

#include "src/backends/cuda/packed_u16x2.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::morph_vh2 {

using u32 = std::uint32_t;

constexpr int kN = 16;  // outputs of a thread's item, in each pass

constexpr int kBW = 256;  // output columns a block (kByteTileBW, common/byte_tile.cuh)

/// The block geometry of vh2_u8c1_kernel for a centred K x K window: a tile of kTW-byte rows
/// whose column 0 is image column floor16(e0 - K / 2) (common/byte_tile.cuh's byte_tile), the
/// vertical pass over column quads kQ0 .. kQ0 + kQuads - 1, row-pair words at vt[pair][4c + i]
/// for tile column 4 (kQ0 + c) + i; a horizontal item q of a pair reads vt words 16q .. 16q +
/// 4 kLoads - 1, its in(j) = word 16q + kShift + j.
template <int K>
struct Geom {
  static constexpr int kA = K / 2;  // centred anchor
  // Tile column of output e0's first window sample (e0 a multiple of 256: byte_tile's t.off).
  static constexpr int kOff = (16 - kA % 16) % 16;
  static constexpr int kTW = (kBW + K - 1 + 15 + 15) / 16 * 16;  // byte_tile_width
  static constexpr int kTWords = kTW / 4;
  static constexpr int kQ0 = kOff / 4;     // first tile quad (4 columns) the passes read
  static constexpr int kShift = kOff % 4;  // in(0) of a horizontal item: word kShift of its loads
  static constexpr int kLoads = (kShift + kN + K - 1 + 3) / 4;  // 16-byte loads an item
  // Column quads of the vertical pass: those the 16 horizontal items of a row pair read.
  static constexpr int kQuads = (kBW - kN) / 4 + kLoads;
  // Row-pair words a pair, an odd number of 16-byte units: a quarter warp's 16-byte loads (8
  // pairs of one column range) fall in 8 distinct bank quads.
  static constexpr int kPitch = 4 * kQuads + ((kQuads % 2 == 0) ? 4 : 0);
  static_assert(kQ0 + kQuads <= kTWords, "morph_vh2: the quads the passes read lie in the tile");
};

template <bool kMax>
PIXFLOW_HD u32 op2(u32 a, u32 b) {
  return kMax ? px::vmax(a, b) : px::vmin(a, b);
}

/// out[i] = op over in[i .. i + K - 1], i < N (van Herk, see above; every index a constant
/// after unrolling, the prefixes and suffixes no output reads are dead code).
template <bool kMax, int K, int N>
PIXFLOW_HD void window(const u32 (&in)[N + K - 1], u32 (&out)[N]) {
  static_assert(K >= 2, "morph_vh2::window: K >= 2");
  // Suffixes of the blocks holding outputs: h[i] for i < kH (the end of the last such block).
  constexpr int kH = ((N - 1) / K + 1) * K;
  static_assert(kH <= N + K - 1, "the last block's end is an input");
  u32 h[kH];
  PIXFLOW_UNROLL
  for (int i = kH - 1; i >= 0; --i) h[i] = (i % K == K - 1) ? in[i] : op2<kMax>(in[i], h[i + 1]);
  // Prefixes from the second block on (block 0's are never read).
  u32 g[N + K - 1];
  PIXFLOW_UNROLL
  for (int j = K; j < N + K - 1; ++j) g[j] = (j % K == 0) ? in[j] : op2<kMax>(g[j - 1], in[j]);
  PIXFLOW_UNROLL
  for (int i = 0; i < N; ++i) out[i] = (i % K == 0) ? h[i] : op2<kMax>(h[i], g[i + K - 1]);
}

/// The two v * 257 words of a tile word's 4 bytes (columns x .. x + 3): (x, x + 1), (x + 2,
/// x + 3).
PIXFLOW_HD u32 lanes_lo(u32 w) {
  return px::byte_perm(w, 0, 0x1100);
}
PIXFLOW_HD u32 lanes_hi(u32 w) {
  return px::byte_perm(w, 0, 0x3322);
}

/// Vertical pass of a column quad: t[r] = the tile word (4 columns) of row r, r < N + K - 1;
/// lo[i], hi[i] = the K-row window of output row i, columns (x, x + 1) and (x + 2, x + 3).
template <bool kMax, int K>
PIXFLOW_HD void vcol(const u32 (&t)[kN + K - 1], u32 (&lo)[kN], u32 (&hi)[kN]) {
  u32 a[kN + K - 1], b[kN + K - 1];
  PIXFLOW_UNROLL
  for (int r = 0; r < kN + K - 1; ++r) {
    a[r] = lanes_lo(t[r]);
    b[r] = lanes_hi(t[r]);
  }
  window<kMax, K, kN>(a, lo);
  window<kMax, K, kN>(b, hi);
}

/// Rows i, i + 1 of a column quad (lo, hi words of each) -> the row-pair words of columns x ..
/// x + 3: w[c] = (column x + c of row i, of row i + 1), lanes as the inputs'.
PIXFLOW_HD void vpair(u32 lo0, u32 hi0, u32 lo1, u32 hi1, u32 (&w)[4]) {
  w[0] = px::byte_perm(lo0, lo1, 0x5410);
  w[1] = px::byte_perm(lo0, lo1, 0x7632);
  w[2] = px::byte_perm(hi0, hi1, 0x5410);
  w[3] = px::byte_perm(hi0, hi1, 0x7632);
}

/// Row-pair words of 4 adjacent columns (low byte of each lane = the sample) -> the 4 output
/// bytes of the first row (r0) and of the second (r1), in column order.
PIXFLOW_HD void hpack(u32 c0, u32 c1, u32 c2, u32 c3, u32& r0, u32& r1) {
  const u32 a = px::byte_perm(c0, c1, 0x6420);  // (c0 r0, c0 r1, c1 r0, c1 r1)
  const u32 b = px::byte_perm(c2, c3, 0x6420);
  r0 = px::byte_perm(a, b, 0x6420);
  r1 = px::byte_perm(a, b, 0x7531);
}

}  // namespace pixflow::cuda::morph_vh2
