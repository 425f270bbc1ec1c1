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
// - Output rows y, y+1 share K-1 runs (rows y-K/2+1 .. y+K/2). Their merge is a balanced tree
//   whose first level merges runs two by two (merge_runs, the full merge of two runs); those
//   level-1 lists are shared with the next pair of rows (y+2, y+3), whose shared runs are the
//   same shifted by two, so each pair computes one new level-1 merge and the rest of the tree
//   (pair_rest), pruned to the K+1 ranks that can still be the median. Each output row then
//   finishes with its own extra run (pair_final: the K-th smallest of two sorted lists).
// - 7x7 goes one level further (median7_rows_shared): four output rows share K-3 = 4 runs, two
//   level-1 lists, merged once per quad (quad_core, pruned to the 22 ranks that can still be
//   the median once three more runs join); each pair merges that with its own level-1 list
//   (quad_pair, 67 instead of pair_rest's 167).
// - u8 x 1 at 5x5 and 7x7 pair the thread's two output words differently, (x0, x0+2) and
//   (x0+1, x0+3), so that their windows share K-1 columns: the shared columns of a row are
//   sorted once and each word inserts its own column (median5_rows_shared,
//   median7_rows_shared below). median_rows_pairs (one word after the other, each row's run
//   sorted whole) remains for u8 x 3.
// Min/max per output word (two pixels; a 3-input VIMNMX3 counted as one: pair_final's
// maxima and pair_rest's folded chains, which PTX writes as two and ptxas is expected to
// fuse; without that, 65.1 / 192.5): the first pair of a thread sorts K runs and makes
// (K-1)/2 merges; every pair: pair_rest + the sort of row i+K + 2 pair_final; every later
// pair: one more sort and merge_runs (rows i+K-2, i+K-1).
//   5x5, kRows = 16: (5*18 + 2*26 + 8*(34 + 18 + 2*8) + 7*(18 + 26)) / 16 = 994 / 16 = 62.1
//        (31.1 per pixel; 56 per word without the first pair's halo; kRows = 8: 68.3)
//   7x7, kRows = 8, by quads: 14 sorts, 6 merge_runs, 2 quad_core, 4 quad_pair, 8 pair_final:
//        (14*32 + 6*42 + 2*100 + 4*67 + 8*11) / 8 = 1256 / 8 = 157 (78.5 per pixel; 122.5
//        without the halo; by pairs of rows as 5x5 it was 182); with the shared columns
//        (median7_rows_shared) 14 runs of 24 instead of 32: 1144 / 8 = 143 (SASS: 143.0, was
//        153.5 with ptxas's own 3-input folds)
// (the CPU's pairs of rows, which redo the whole shared merge per pair, take 79 / 221 here.)
// Besides: per source row and word 3 shared loads (shared between the two words) and up to
// K PRMT for the shifted words; per output row one PRMT and one 4-byte store.
#pragma once

#include <cstdint>

#include "src/backends/cuda/median_networks.hpp"
#include "src/backends/cuda/packed_u16x2.hpp"

namespace pixflow::cuda::median_u8 {

using px::u32;

// Block shape: 32 x kTY threads, each 4 pixels of kRows rows (kRows even: pairs of rows).
// Register budget (__launch_bounds__(threads, kMinBlocks), ptxas -v for sm_90):
// - 5x5, kRows = 8: 80 registers (median5_rows_shared; 74 before it), three blocks of 8 warps
//   per SM, 60.75 min/max per word in SASS (67.75 before: bench/NOTES.md, branch med5c). kRows = 16
//   (95 registers, two blocks, 62.1 per word) was slower: A/B on one H100 (session 13), 8192^2 u8x1
//   212.3 against 220.0 us (ncu of kRows 16: 25 % occupancy, 0.45 issued a scheduler: latency, not
//   the min/max count, bounds it).
// - 7x7 (quads, shared columns), kRows = 8: 108 registers, 8 blocks of 32 x 2 threads per SM (16
//   warps; 128 is the bound: 14 warps need 4 a scheduler as 16 do), 25.5 KB of shared memory a
//   block (the tile and the cores, median7_rows_shared). Before the shared columns: 168
//   registers (unbounded 163), 6 blocks (12 warps). kRows = 12 spilled at 168; kRows = 16 (208
//   registers, 8 warps per SM, 139.75 min/max per word instead of 157) measured slower in an
//   A/B (session 13): 8192^2 530.3 against 485.9 us, 1080p 33.0 against 27.0. (By pairs of rows
//   7x7 took 187.)
constexpr int kTX = 32, kPX = 4;
template <int K>
constexpr int kTY = K == 5 ? 8 : 2;
template <int K>
constexpr int kRows = 8;
template <int K>
constexpr int kMinBlocks = K == 5 ? 3 : 8;
// The short shape of 5x5 (launch.cuh, tall_blocks_fill: images whose 128 x 128 blocks would
// not fill the GPU; 1920x1080 had 15 x 9 = 135 of them, ~1 a SM): 4 rows a thread, 128 x 32
// outputs a block (510 at 1080p), 4 blocks a SM (<= 64 registers). 7x7 has one shape (its
// 128 x 16 blocks already number 1020 at 1080p).
template <int K>
constexpr int kRowsShort = K == 5 ? 4 : kRows<K>;
template <int K, int H>
constexpr int kMinBlocksFor = H == kRows<K> ? kMinBlocks<K> : 4;
constexpr int kBW = kTX * kPX;   // 128 output columns per block
constexpr int kTileW = kBW + 8;  // tile bytes per row: 4 left and 4 right of the block (K <= 9)
constexpr int kTileWords = kTileW / 4;  // 34
// Output rows and tile rows of a block of H rows a thread (H = kRows<K> by default).
template <int K, int H = kRows<K>>
constexpr int kBH = kTY<K>* H;
template <int K, int H = kRows<K>>
constexpr int kTileH = kBH<K, H> + K - 1;

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

// ---- u8 x 3 (CN = 3), 5x5 only --------------------------------------------------------------
// The same body over the row's bytes, channels interleaved (as u8_3x3.cuh's CN = 3 kernels): a
// thread's 4 outputs are row bytes x0 .. x0+3, and output byte e's window row is bytes e - 6,
// e - 3, e, e + 3, e + 6 (one channel). A word's K samples are then pairs of bytes 3 apart per
// step, bytes x0 - 6 .. x0 + 9 over both words: the tile keeps 8 bytes each side (kMargin<3>),
// and a thread reads 5 words of a row (bytes x0 - 8 .. x0 + 11). 7x7 would need bytes x0 - 9 ..
// x0 + 12 (a wider margin): not done, u8 x 3 at 7x7 stays on the generic kernel.
// Tile bytes left of the block's first output byte (and right of its last): 4, or 8 for CN = 3.
template <int CN>
constexpr int kMargin = CN == 1 ? 4 : 8;
template <int CN>
constexpr int kTileWCn = kBW + 2 * kMargin<CN>;  // 136 or 144 bytes a tile row
template <int CN>
constexpr int kTileWordsCn = kTileWCn<CN> / 4;  // 34 or 36

// The K packed words of tile row `row` for output word wd (lanes: output bytes x0 + 2 wd,
// x0 + 2 wd + 1) of the thread whose first output byte is x0 (tile byte 4 tx + 8), CN = 3:
// word k holds row bytes x0 + 2 wd + 3 (k - K/2) and the byte after it, zero-extended into the
// lanes. A pair within one tile word is one PRMT; a pair across two words (tile byte 4i + 3
// and the next) two (K = 5: one of the five pairs of each word).
template <int K>
PIXFLOW_HD void run_words_cn3(const u32* row, int tx, int wd, u32 (&c)[K]) {
  static_assert(K == 5, "CN = 3 runs only 5x5 (the tile's 8-byte margins)");
  constexpr int R = K / 2;
  u32 w[5];  // tile bytes 4 tx .. 4 tx + 19 = row bytes x0 - 8 .. x0 + 11
  PIXFLOW_UNROLL
  for (int i = 0; i < 5; ++i) w[i] = row[tx + i];
  PIXFLOW_UNROLL
  for (int k = 0; k < K; ++k) {
    const int t = 8 + 2 * wd + 3 * (k - R);  // 2 .. 16: the pair's first byte, from 4 tx
    const int wi = t / 4, b = t % 4;
    c[k] = b < 3 ? px::byte_perm(w[wi], 0, 0x4040u | u32(b + 1) << 8 | u32(b))
                 : px::byte_perm(px::byte_perm(w[wi], w[wi + 1], 0x0043), 0, 0x5140);
  }
}

// Outputs of the thread (tx, rows r0 .. r0 + kRows - 1 of the block), from the tile (rows r0 ..
// r0 + kRows + K - 2): emit(i, o) with o = the 4 output bytes (pixels x0 .. x0 + 3; CN = 3: row
// bytes) of block row r0 + i, called as soon as the row is done (no array of results stays live).
template <int K, int H, int CN = 1, class Emit>
PIXFLOW_HD void median_rows_pairs(const u32* tile, int tx, int r0, Emit&& emit) {
  using N = median_net::Net<K>;
  constexpr int NL = (K - 1) / 2;
  static_assert(H % 2 == 0, "pairs of rows");
  // The first word's results, two rows per register (bytes: row i's two pixels, then row
  // i + 1's), to keep the register count of 7x7 within its budget while the second word runs.
  u32 first[H / 2];
  PIXFLOW_UNROLL
  for (int wd = 0; wd < 2; ++wd) {  // output words: pixels (x0, x0+1), (x0+2, x0+3)
    // The sorted run of tile row r0 + j for this word.
    auto make_run = [&](int j, u32(&c)[K]) {
      if constexpr (CN == 1) {
        u32 s[K + 2];
        shifted_words<K>(tile + (r0 + j) * kTileWords, tx, s);
        PIXFLOW_UNROLL
        for (int i = 0; i < K; ++i) c[i] = s[2 * wd + i];
      } else {
        static_assert(CN == 3, "median_rows_pairs: 1 or 3 channels");
        run_words_cn3<K>(tile + (r0 + j) * kTileWordsCn<CN>, tx, wd, c);
      }
      N::sort_run(c);
    };
    u32 keep[H + K - 1][K];  // every row's run, until it serves as a lower extra run
    u32 L[NL][2 * K];        // level-1 merges of rows (i+1, i+2), (i+3, i+4), .. of pair i
    u32 ext[K];              // the run of row i + K: extra of output i + 1, merged at pair i + 2
    PIXFLOW_UNROLL
    for (int t = 0; t < NL; ++t) {
      u32 a[K], b[K];
      make_run(1 + 2 * t, a);
      make_run(2 + 2 * t, b);
      N::merge_runs(a, b, L[t]);
      PIXFLOW_UNROLL
      for (int i = 0; i < K; ++i) {
        keep[1 + 2 * t][i] = a[i];
        keep[2 + 2 * t][i] = b[i];
      }
    }
    make_run(0, keep[0]);
    PIXFLOW_UNROLL
    for (int i = 0; i < H; i += 2) {
      if (i > 0) {
        // Pair i shares rows i+1 .. i+K-1; pair i-2's merges of rows i+1 .. i+K-3 carry over.
        PIXFLOW_UNROLL
        for (int t = 0; t + 1 < NL; ++t) {
          PIXFLOW_UNROLL
          for (int r = 0; r < 2 * K; ++r) L[t][r] = L[t + 1][r];
        }
        u32 b[K];
        make_run(i + K - 1, b);
        N::merge_runs(ext, b, L[NL - 1]);
        PIXFLOW_UNROLL
        for (int r = 0; r < K; ++r) keep[i + K - 1][r] = b[r];
      }
      u32 v[NL * 2 * K], q[K + 1];
      PIXFLOW_UNROLL
      for (int t = 0; t < NL; ++t) {
        PIXFLOW_UNROLL
        for (int r = 0; r < 2 * K; ++r) v[t * 2 * K + r] = L[t][r];
      }
      N::pair_rest(v, q);
      const u32 m0 = N::pair_final(q, keep[i]);
      make_run(i + K, ext);
      PIXFLOW_UNROLL
      for (int r = 0; r < K; ++r) keep[i + K][r] = ext[r];
      const u32 m1 = N::pair_final(q, ext);
      if (wd == 0) {
        first[i / 2] = px::byte_perm(m0, m1, 0x6420);
      } else {
        emit(i, px::byte_perm(first[i / 2], m0, 0x6410));
        emit(i + 1, px::byte_perm(first[i / 2], m1, 0x6432));
      }
    }
  }
}

// ---- 5x5, u8 x 1: two words that share four of their five window columns ---------------------
// The thread's 4 outputs x0 .. x0+3 as word 0 = pixels (x0, x0+2) and word 1 = (x0+1, x0+3):
// horizontally adjacent outputs then sit in the same lane of the two words, and their windows
// share columns x0-1 .. x0+2 (per lane). Keys, not zero-extended pixels: a lane holds its pixel
// in the high byte and the byte before it in the low one; a comparator network selects a rank
// by the 16-bit order, which refines the pixel order, so the rank-12 lane's high byte is the
// median pixel whatever the low bytes hold. The key word of pixels (x, x+2) is then just the
// 4 row bytes from x - 1: tile word tx + 1 itself for x = x0 + 1, one PRMT (a funnel of two
// words) for the five others a row.
// Per tile row the 4 shared columns are sorted once (sort4, 5 compare-exchanges) and each word
// inserts its own fifth column (insert_run, 8 min/max): 26 min/max a row for both words where
// two 5-sorts took 36. The vertical part is median_rows_pairs' (merge_runs, pair_rest,
// pair_final), on both words in step.

// The key words of tile row `row` for e = -2 .. 3: k[e + 2] holds pixels (x0 + e, x0 + e + 2)
// in the high bytes of its lanes (the 4 row bytes from x0 + e - 1, x0 = tile byte 4 tx + 4).
PIXFLOW_HD void key_words5(const u32* row, int tx, u32 (&k)[6]) {
  const u32 a = row[tx], b = row[tx + 1], c = row[tx + 2];  // bytes x0-4 .., x0 .., x0+4 ..
  k[0] = px::byte_perm(a, b, 0x4321);                       // bytes x0-3 .. x0
  k[1] = px::byte_perm(a, b, 0x5432);
  k[2] = px::byte_perm(a, b, 0x6543);
  k[3] = b;  // bytes x0 .. x0+3
  k[4] = px::byte_perm(b, c, 0x4321);
  k[5] = px::byte_perm(b, c, 0x5432);  // bytes x0+2 .. x0+5
}

// One compare-exchange per lane: lo = min, hi = max (sort4 and sort6's networks).
PIXFLOW_HD void cx(u32& lo, u32& hi) {
  const u32 a = lo;
  lo = px::vmin(a, hi);
  hi = px::vmax(a, hi);
}

// Sorts c[0..3] per lane (5 compare-exchanges, the optimal 4-sorter).
PIXFLOW_HD void sort4(u32 (&c)[4]) {
  cx(c[0], c[1]);
  cx(c[2], c[3]);
  cx(c[0], c[2]);
  cx(c[1], c[3]);
  cx(c[1], c[2]);
}

// r = the sorted run of x and the sorted c[0..3] (per lane): rank i of the five is the median
// of c[i-1], x, c[i], i.e. max(c[i-1], min(x, c[i])) as c[i-1] <= c[i]; 8 min/max.
PIXFLOW_HD void insert_run(u32 x, const u32 (&c)[4], u32 (&r)[5]) {
  r[0] = px::vmin(x, c[0]);
  r[1] = px::vmax(c[0], px::vmin(x, c[1]));
  r[2] = px::vmax(c[1], px::vmin(x, c[2]));
  r[3] = px::vmax(c[2], px::vmin(x, c[3]));
  r[4] = px::vmax(x, c[3]);
}

// The sorted runs of tile row `row` for both words: run[0] of pixels x0-2 .. x0+2 (lane 0;
// lane 1: x0 .. x0+4), run[1] of x0-1 .. x0+3 (lane 1: x0+1 .. x0+5).
PIXFLOW_HD void runs5_shared(const u32* row, int tx, u32 (&run)[2][5]) {
  u32 k[6];
  key_words5(row, tx, k);
  u32 core[4] = {k[1], k[2], k[3], k[4]};
  sort4(core);
  insert_run(k[0], core, run[0]);
  insert_run(k[5], core, run[1]);
}

// Outputs of the thread (5x5, u8 x 1), as median_rows_pairs: pairs of rows, level-1 merges
// carried to the next pair; both words in step (their runs share the sorted core).
// kPitch: words a tile row (kTileWords, or kTile5Pitch for median5_u8_kernel's 16-byte rows,
// `tile` then pointing at word kTile5Off of the first row).
template <int H, int kPitch = kTileWords, class Emit>
PIXFLOW_HD void median5_rows_shared(const u32* tile, int tx, int r0, Emit&& emit) {
  using N = median_net::Net<5>;
  static_assert(H % 2 == 0, "pairs of rows");
  auto make_runs = [&](int j, u32(&run)[2][5]) { runs5_shared(tile + (r0 + j) * kPitch, tx, run); };
  u32 keep[H + 4][2][5];  // every row's runs, until they serve as a lower extra run
  u32 L[2][2][10];        // [t][word]: level-1 merges of rows (i+1, i+2), (i+3, i+4) of pair i
  u32 ext[2][5];          // the runs of row i + 5: extra of output i + 1, merged at pair i + 2
  PIXFLOW_UNROLL
  for (int t = 0; t < 2; ++t) {
    make_runs(1 + 2 * t, keep[1 + 2 * t]);
    make_runs(2 + 2 * t, keep[2 + 2 * t]);
    PIXFLOW_UNROLL
    for (int w = 0; w < 2; ++w) N::merge_runs(keep[1 + 2 * t][w], keep[2 + 2 * t][w], L[t][w]);
  }
  make_runs(0, keep[0]);
  PIXFLOW_UNROLL
  for (int i = 0; i < H; i += 2) {
    if (i > 0) {
      PIXFLOW_UNROLL
      for (int w = 0; w < 2; ++w) {
        PIXFLOW_UNROLL
        for (int r = 0; r < 10; ++r) L[0][w][r] = L[1][w][r];
      }
      make_runs(i + 4, keep[i + 4]);
      PIXFLOW_UNROLL
      for (int w = 0; w < 2; ++w) N::merge_runs(ext[w], keep[i + 4][w], L[1][w]);
    }
    make_runs(i + 5, ext);
    PIXFLOW_UNROLL
    for (int w = 0; w < 2; ++w) {
      PIXFLOW_UNROLL
      for (int r = 0; r < 5; ++r) keep[i + 5][w][r] = ext[w][r];
    }
    u32 m0[2], m1[2];
    PIXFLOW_UNROLL
    for (int w = 0; w < 2; ++w) {
      u32 v[20], q[6];
      PIXFLOW_UNROLL
      for (int r = 0; r < 10; ++r) {
        v[r] = L[0][w][r];
        v[10 + r] = L[1][w][r];
      }
      N::pair_rest(v, q);
      m0[w] = N::pair_final(q, keep[i][w]);
      m1[w] = N::pair_final(q, ext[w]);
    }
    // Medians in bytes 1 and 3 of each word: pixels x0, x0+2 (word 0), x0+1, x0+3 (word 1).
    emit(i, px::byte_perm(m0[0], m0[1], 0x7351));
    emit(i + 1, px::byte_perm(m1[0], m1[1], 0x7351));
  }
}

// ---- 5x5, u8 x 1: the tile schedule of median5_u8_kernel (median.cu) ------------------------
// Tile rows of 16-byte chunks: a tile row holds image bytes bx0 - 16 .. bx0 + 143 (kTile5Pitch
// words; bx0 is a multiple of 128, so on a 16-byte aligned image each row is kTile5Chunks
// aligned chunks, copied global -> shared by cp.async without registers); the body's tile
// (bytes bx0 - 4 .., median5_rows_shared) starts at word kTile5Off of each row.
constexpr int kTile5Pitch = 40, kTile5Off = 3, kTile5Chunks = kTile5Pitch / 4;
static_assert(4 * kTile5Off == 16 - 4 && kTile5Off + kTileWords <= kTile5Pitch,
              "the body's 34 words (bytes bx0 - 4 .. bx0 + 131) inside the 16-byte row");
// Chunks of a tile of H rows a thread and the chunks each of kThreads threads copies (thread
// tid: chunks tid + k * kThreads, k < kTile5ChunksPerThread, those below kTile5ChunksAll).
template <int H>
constexpr int kTile5ChunksAll = kTileH<5, H>* kTile5Chunks;
template <int H>
constexpr int kTile5ChunksPerThread = (kTile5ChunksAll<H> + kTX * kTY<5> - 1) / (kTX * kTY<5>);

// Chunk k of thread tid (k < kTile5ChunksPerThread<H>): i = tid + k * kThreads, where it exists
// (i < kTile5ChunksAll<H>; always for all but the last k).
template <int H>
PIXFLOW_HD bool tile5_thread_chunk(int tid, int k, int& i) {
  i = tid + k * (kTX * kTY<5>);
  return k + 1 < kTile5ChunksPerThread<H> || i < kTile5ChunksAll<H>;
}

// Chunk i of the tile: row r, chunk c of the row (tile word r * kTile5Pitch + 4 c, image bytes
// bx0 - 16 + 16 c .. + 15 of row by0 - 2 + r).
PIXFLOW_HD void tile5_chunk(int i, int& r, int& c) {
  r = i / kTile5Chunks;
  c = i - r * kTile5Chunks;
}

// True when the block's 16-byte tile rows (bytes xs .. xs + 16 kTile5Chunks - 1 of rows ys ..
// ys + rows - 1) lie inside a w x h image whose rows are 16-byte aligned: then the tile is
// copied by chunks (cp.async); else by load_word_tile_u8 through the border rule.
PIXFLOW_HD bool tile5_inside(bool aligned16, long long xs, long long ys, long long w, long long h,
                             int rows) {
  return aligned16 && xs >= 0 && xs + 16 * kTile5Chunks <= w && ys >= 0 && ys + rows <= h;
}

// The blocks walk the tiles: a grid of g blocks, block b takes tiles b, b + g, b + 2g, ... (tile
// t = block column t % bx, block row t / bx), so that each block copies its next tile while it
// sorts this one (the library launches g = the tiles: measured faster, median5_u8.cuh).
PIXFLOW_HD void tile5_origin(int t, int blocks_x, int bh, long long& bx0, long long& by0) {
  const int by = int(unsigned(t) / unsigned(blocks_x));  // t >= 0, blocks_x > 0
  bx0 = (long long)(t - by * blocks_x) * kBW;
  by0 = (long long)by * bh;
}

// ---- 7x7, u8 x 1: two words that share six of their seven window columns --------------------
// As 5x5 above: word 0 = pixels (x0, x0+2), word 1 = (x0+1, x0+3), keys in the lanes' high bytes
// (k[e + 3] = the 4 row bytes from x0 + e - 1, e = -3 .. 4: pixels (x0 + e, x0 + e + 2) in bytes 1
// and 3). Word 0's window columns are e = -3 .. 3, word 1's -2 .. 4: per tile row the shared six
// (e = -2 .. 3) are sorted once (sort6, 12 compare-exchanges) and each word inserts its own
// seventh (insert7, 12 min/max): 48 min/max a row for both words where two 7-sorts took 64.
// The vertical part is by quads of output rows (tile rows: output i uses rows i .. i+6). Outputs
// i .. i+3 share rows i+3 .. i+6, the level-1 lists C0 = (i+3, i+4) and C1 = (i+5, i+6): merged
// once per quad (quad_core, pruned to the 22 ranks that can still be the median), then per pair
// with its own list (quad_pair: A = (i+1, i+2) for outputs i, i+1; B = (i+7, i+8) for i+2, i+3)
// and per row its extra run (rows i, i+7, i+2, i+9). The next quad's A and C0 are this one's C1
// and B.
// The words run one after the other (both in step would not fit the register budget): word 0
// sorts each row's six shared columns and leaves them in `core` (the thread's slots in shared
// memory: core[(6 j + k) * cs] for tile row r0 + j, j < H + 6; no barrier, each thread reads
// back only what it wrote), word 1 reads them back and inserts its seventh.
// Min/max per output word (VIMNMX3 as one), H = 8: 14 rows of (24 + 2 * 12) / 2 = 24 (was one
// 7-sort, 32), 6 merge_runs (42), 2 quad_core (100), 4 quad_pair (67), 8 pair_final (11):
// (14 * 24 + 6 * 42 + 2 * 100 + 4 * 67 + 8 * 11) / 8 = 1144 / 8 = 143 (157 before).
// Registers: the word loop is not unrolled, word 0's medians wait in `core` too, and each run
// and list is made where first needed (B after the first pair's outputs): 108 registers, no
// spills (unrolled words, or B before quad_core, spilled 32-600 bytes at the 128 bound).

// Per-thread words of `core`: the sorted shared columns of the H + 6 tile rows a thread reads,
// then H / 2 words of word 0's medians.
template <int H>
constexpr int kCoreWords7 = (H + 6) * 6 + H / 2;

// The key words of tile row `row` for e = -3 .. 4 (x0 = tile byte 4 tx + 4).
PIXFLOW_HD void key_words7(const u32* row, int tx, u32 (&k)[8]) {
  const u32 a = row[tx], b = row[tx + 1], c = row[tx + 2];  // bytes x0-4 .., x0 .., x0+4 ..
  k[0] = a;                                                 // bytes x0-4 .. x0-1
  k[1] = px::byte_perm(a, b, 0x4321);
  k[2] = px::byte_perm(a, b, 0x5432);
  k[3] = px::byte_perm(a, b, 0x6543);
  k[4] = b;  // bytes x0 .. x0+3
  k[5] = px::byte_perm(b, c, 0x4321);
  k[6] = px::byte_perm(b, c, 0x5432);
  k[7] = px::byte_perm(b, c, 0x6543);  // bytes x0+3 .. x0+6
}

// Sorts c[0..5] per lane (12 compare-exchanges in 5 layers, the optimal 6-sorter).
PIXFLOW_HD void sort6(u32 (&c)[6]) {
  cx(c[0], c[5]);
  cx(c[1], c[3]);
  cx(c[2], c[4]);
  cx(c[1], c[2]);
  cx(c[3], c[4]);
  cx(c[0], c[3]);
  cx(c[2], c[5]);
  cx(c[0], c[1]);
  cx(c[2], c[3]);
  cx(c[4], c[5]);
  cx(c[1], c[2]);
  cx(c[3], c[4]);
}

// r = the sorted run of x and the sorted c[0..5] (per lane), as insert_run: rank i of the seven
// is max(c[i-1], min(x, c[i])); 12 min/max.
PIXFLOW_HD void insert7(u32 x, const u32 (&c)[6], u32 (&r)[7]) {
  r[0] = px::vmin(x, c[0]);
  PIXFLOW_UNROLL
  for (int i = 1; i < 6; ++i) r[i] = px::vmax(c[i - 1], px::vmin(x, c[i]));
  r[6] = px::vmax(x, c[5]);
}

// Outputs of the thread (7x7, u8 x 1), H = kRows<7> rows; `core`: kCoreWords7<H> words of
// scratch at stride cs (above; the last H / 2 hold word 0's medians for word 1's stores).
template <int H, class Emit>
PIXFLOW_HD void median7_rows_shared(const u32* tile, int tx, int r0, u32* core, int cs,
                                    Emit&& emit) {
  using N = median_net::Net<7>;
  constexpr int K = 7, K2 = 2 * K;
  static_assert(H % 4 == 0, "quads of rows");
  // Word 0's medians, two rows a word (bytes 1, 3 of row i's key word, then row i + 1's), kept
  // in `core` after the rows' columns (in registers, ptxas spilled them).
  u32* first = core + 6 * (H + 6) * cs;
  // A loop, not unrolled: unrolled, ptxas interleaved the two words and spilled at 128.
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
  for (int wd = 0; wd < 2; ++wd) {
    // The sorted run of tile row r0 + j for this word.
    auto make_run = [&](int j, u32(&c)[K]) {
      const u32* row = tile + (r0 + j) * kTileWords;
      u32* cj = core + 6 * j * cs;
      u32 s[6], x;
      if (wd == 0) {
        u32 k[8];
        key_words7(row, tx, k);
        PIXFLOW_UNROLL
        for (int i = 0; i < 6; ++i) s[i] = k[1 + i];
        sort6(s);
        PIXFLOW_UNROLL
        for (int i = 0; i < 6; ++i) cj[i * cs] = s[i];
        x = k[0];
      } else {
        PIXFLOW_UNROLL
        for (int i = 0; i < 6; ++i) s[i] = cj[i * cs];
        x = px::byte_perm(row[tx + 1], row[tx + 2], 0x6543);  // e = 4
      }
      insert7(x, s, c);
    };
    // Each run is made where it is first needed and each list merged as soon as its runs
    // exist, so that few runs stay live (the register budget): carried to the next quad are
    // A, C0 (this quad's C1, B), row i + 9's run and the extra runs of rows i + 4, i + 6.
    u32 run[H + K - 1][K];
    u32 A[K2], C0[K2], C1[K2], B[K2];
    PIXFLOW_UNROLL
    for (int i = 0; i < H; i += 4) {
      if (i == 0) {
        make_run(1, run[1]);
        make_run(2, run[2]);
        N::merge_runs(run[1], run[2], A);
        make_run(3, run[3]);
        make_run(4, run[4]);
        N::merge_runs(run[3], run[4], C0);
        make_run(5, run[5]);
      } else {
        PIXFLOW_UNROLL
        for (int r = 0; r < K2; ++r) {
          A[r] = C1[r];
          C0[r] = B[r];
        }
      }
      make_run(i + 6, run[i + 6]);
      N::merge_runs(run[i + 5], run[i + 6], C1);
      u32 v[2 * K2], c[N::kQuadRanks], q[K + 1];
      PIXFLOW_UNROLL
      for (int r = 0; r < K2; ++r) {
        v[r] = C0[r];
        v[K2 + r] = C1[r];
      }
      N::quad_core(v, c);
      if (i == 0) make_run(0, run[0]);
      N::quad_pair(c, A, q);
      const u32 m0 = N::pair_final(q, run[i]);
      // B after the first pair: its runs and list are not live across quad_core.
      make_run(i + 7, run[i + 7]);
      const u32 m1 = N::pair_final(q, run[i + 7]);
      make_run(i + 8, run[i + 8]);
      N::merge_runs(run[i + 7], run[i + 8], B);
      make_run(i + 9, run[i + 9]);
      N::quad_pair(c, B, q);
      const u32 m2 = N::pair_final(q, run[i + 2]), m3 = N::pair_final(q, run[i + 9]);
      // Medians in bytes 1 and 3: pixels x0, x0+2 (word 0), x0+1, x0+3 (word 1).
      if (wd == 0) {
        first[i / 2 * cs] = px::byte_perm(m0, m1, 0x7531);
        first[(i / 2 + 1) * cs] = px::byte_perm(m2, m3, 0x7531);
      } else {
        const u32 f0 = first[i / 2 * cs], f1 = first[(i / 2 + 1) * cs];
        emit(i, px::byte_perm(f0, m0, 0x7150));
        emit(i + 1, px::byte_perm(f0, m1, 0x7352));
        emit(i + 2, px::byte_perm(f1, m2, 0x7150));
        emit(i + 3, px::byte_perm(f1, m3, 0x7352));
      }
    }
  }
}

// The thread's outputs (H rows): 5x5 by pairs of rows, 7x7 by quads (H = kRows<7> only). CN = 3
// (5x5 only): the tile's rows have kTileWordsCn<3> words. `core`, `cs`: 7x7's per-thread scratch
// (kCoreWords7<H> words at stride cs, median7_rows_shared); 5x5 ignores them.
template <int K, int H = kRows<K>, int CN = 1, class Emit>
PIXFLOW_HD void median_rows(const u32* tile, int tx, int r0, u32* core, int cs, Emit&& emit) {
  if constexpr (K == 7) {
    static_assert(H == kRows<K> && CN == 1, "7x7: one block shape, one channel");
    median7_rows_shared<H>(tile, tx, r0, core, cs, emit);
  } else if constexpr (CN == 1) {
    median5_rows_shared<H>(tile, tx, r0, emit);
  } else {
    median_rows_pairs<K, H, CN>(tile, tx, r0, emit);
  }
}

}  // namespace pixflow::cuda::median_u8
