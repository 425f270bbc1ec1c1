// The per-thread body of the CUDA median for u8 x 1, 5x5 and 7x7 (median.cu's
// median_u8_packed_kernel), written as host + device code so that the CPU test
// (tests/median_packed_test.cpp) runs exactly this code on tiles it builds itself.
//
// Design (Adams, "Fast median filters using separable sorting networks", 2021, in the form
// of the CPU backend's pairs of output rows, src/backends/cpu/simd/median.cpp):
// - Pixels travel two per 32-bit word in 16-bit lanes (pixels x, x+1 of one row), so every
//   min/max is one VIMNMX(3).U16x2 for two pixels.
// - A thread computes 4 adjacent pixels (two output words) of kRows output rows. For each
//   output word and each source row it needs, the K horizontal samples around the word's
//   pixels (K words: the row's bytes shifted by -K/2 .. K/2, built by PRMT from three shared
//   words) are sorted once (the run; Net<K>::sort_run) and serve the K output rows whose
//   window contains that source row.
// - Output rows y, y+1 share K-1 runs: their merge is done once, pruned to the K+1 ranks that
//   can still be the median (pair_core), and each row finishes with its own extra run
//   (pair_final: the K-th smallest of two sorted lists).
// Min/max per output word (two pixels), H = kRows rows per thread:
//   (kCoreOps + 2 kFinalOps) / 2 + kSortOps (H + K - 1) / H
//   5x5: (88 + 16) / 2 + 18 * 12/8 = 52 + 27 = 79   (39.5 per pixel)
//   7x7: (308 + 22) / 2 + 32 * 14/8 = 165 + 56 = 221 (110.5 per pixel)
// plus per source row and word 3 shared loads and K PRMT (the shifted words), and per output
// row one PRMT and one store for 4 pixels.
#pragma once

#include <cstdint>

#include "src/backends/cuda/median_networks.hpp"
#include "src/backends/cuda/packed_u16x2.hpp"

namespace pixflow::cuda::median_u8 {

using px::u32;

// Block shape: 32 x kTY threads, each 4 pixels of kRows rows (kRows even: pairs of rows).
// Register budget (__launch_bounds__(threads, kMinBlocks), ptxas -v for sm_90): 5x5 takes 80
// registers: three blocks of 8 warps per SM. 7x7 takes 189 (its live set: K + 1 sorted runs of
// K words and the K - 1 run copies the merge consumes) and spills at 168 or below; blocks of
// 32 x 2 threads then fit 5 per SM (10 warps), where 256-thread blocks would run alone on an SM
// with nobody to hide their tile loads. kRows = 16 (less halo) made ptxas hoist run sorts and
// spill for both windows.
constexpr int kTX = 32, kPX = 4;
template <int K>
constexpr int kTY = K == 5 ? 8 : 2;
template <int K>
constexpr int kRows = 8;
template <int K>
constexpr int kMinBlocks = K == 5 ? 3 : 4;
constexpr int kBW = kTX * kPX;   // 128 output columns per block
constexpr int kTileW = kBW + 8;  // tile bytes per row: 4 left and 4 right of the block (K <= 9)
constexpr int kTileWords = kTileW / 4;  // 34
template <int K>
constexpr int kBH = kTY<K>* kRows<K>;
template <int K>
constexpr int kTileH = kBH<K> + K - 1;

// The tile: byte (r, i) (row pitch kTileW) is image pixel (bx0 - 4 + i, by0 - K/2 + r) for the
// block whose first output is (bx0, by0), by the border rule.

// The packed word of tile row `row` holding pixels x0 + e, x0 + e + 1 in its lanes, for
// e = -K/2 .. K/2 + 2 (x0 = the thread's first output pixel, tile byte 4 tx + 4), from the
// row's words tx, tx + 1, tx + 2 (bytes x0 - 4 .. x0 + 7).
template <int K>
PIXFLOW_HD void shifted_words(const u32* row, int tx, u32 (&s)[K + 2]) {
  constexpr int R = K / 2;
  const u32 a = row[tx], b = row[tx + 1], c = row[tx + 2];
  // Bytes (lo, hi) of a word, zero-extended into the lanes: selector 0x4h4l (byte 4 of
  // (0:x) is zero).
  u32 even[5];  // e = -4, -2, 0, 2, 4
  even[0] = px::byte_perm(a, 0, 0x4140);
  even[1] = px::byte_perm(a, 0, 0x4342);
  even[2] = px::byte_perm(b, 0, 0x4140);
  even[3] = px::byte_perm(b, 0, 0x4342);
  even[4] = px::byte_perm(c, 0, 0x4140);
  auto word = [&](int e) -> u32 {  // e in -4 .. 5
    if ((e & 1) == 0) return even[(e + 4) / 2];
    if (e == -3) return px::byte_perm(a, 0, 0x4241);
    if (e == 5) return px::byte_perm(c, 0, 0x4241);
    // (hi lane of word e - 1, lo lane of word e + 1)
    return px::byte_perm(even[(e + 3) / 2], even[(e + 5) / 2], 0x5432);
  };
  PIXFLOW_UNROLL
  for (int i = 0; i < K + 2; ++i) s[i] = word(i - R);
}

// Outputs of the thread (tx, rows r0 .. r0 + kRows - 1 of the block), from the tile (rows r0 ..
// r0 + kRows + K - 2): emit(i, o) with o = the 4 output bytes (pixels x0 .. x0 + 3) of block
// row r0 + i, called as soon as the row is done (no array of results stays live).
template <int K, class Emit>
PIXFLOW_HD void median_rows(const u32* tile, int tx, int r0, Emit&& emit) {
  using N = median_net::Net<K>;
  constexpr int H = kRows<K>;
  // The first word's results, two rows per register (bytes: row i's two pixels, then row
  // i + 1's), to keep the register count of 7x7 within its budget while the second word runs.
  u32 first[H / 2];
  PIXFLOW_UNROLL
  for (int wd = 0; wd < 2; ++wd) {  // output words: pixels (x0, x0+1), (x0+2, x0+3)
    u32 run[H + K - 1][K];          // sorted runs of tile rows r0 + j
    auto make_run = [&](int j) {
      u32 s[K + 2];
      shifted_words<K>(tile + (r0 + j) * kTileWords, tx, s);
      PIXFLOW_UNROLL
      for (int i = 0; i < K; ++i) run[j][i] = s[2 * wd + i];
      N::sort_run(run[j]);
    };
    PIXFLOW_UNROLL
    for (int j = 0; j < K; ++j) make_run(j);
    PIXFLOW_UNROLL
    for (int i = 0; i < H; i += 2) {
      // Rows i + 1 .. i + K - 1 are shared by outputs i and i + 1; row i + K is sorted only
      // after their merge (one run fewer live during it: 7x7 fits its registers).
      if (i > 0) make_run(i + K - 1);
      u32 v[(K - 1) * K], q[K + 1];
      PIXFLOW_UNROLL
      for (int r = 0; r < K - 1; ++r) PIXFLOW_UNROLL
      for (int t = 0; t < K; ++t) v[r * K + t] = run[i + 1 + r][t];
      N::pair_core(v, q);
      const u32 m0 = N::pair_final(q, run[i]);
      make_run(i + K);
      const u32 m1 = N::pair_final(q, run[i + K]);
      if (wd == 0) {
        first[i / 2] = px::byte_perm(m0, m1, 0x6420);
      } else {
        emit(i, px::byte_perm(first[i / 2], m0, 0x6410));
        emit(i + 1, px::byte_perm(first[i / 2], m1, 0x6432));
      }
    }
  }
}

}  // namespace pixflow::cuda::median_u8
