// The arithmetic of the CUDA u8 Gaussian's dot-product kernel (separable.cu,
// gaussian_u8_dp_kernel), written as host + device code so that the CPU test
// (tests/gaussian_test.cpp, GaussianDp.*) runs exactly this code against the plain rule.
//
// The rule (src/ref/gaussian.cpp): Q8 taps tx, ty; h = sum_i x_i tx_i, v = sum_j h_j ty_j,
// out = (v + 2^15) >> 16. Every sum is an exact integer, so any order of the terms and either
// pass first give the same bits. With every tap in [0, 255] (true for the windows from
// sigma >= ~0.6: the centre tap of k >= 3 is < 256) and the taps of a pass summing to 256:
//   h <= 255 * 256 = 65280 < 2^16  (a 16-bit lane),  v + 2^15 <= 65280 * 256 + 2^15 < 2^24.
// - Horizontal first, on the tile's bytes, by IDP.4A (four u8 x u8 products + an add in one
//   instruction): sample e's window is the bytes p, p + cn, ..., p + (kw - 1) cn of its tile
//   row (p = e's first window byte). For the 4 byte alignments s = p mod 4 the host builds a
//   set of tap words (byte b of word k = tx_i where 4k + b - s = i cn, else 0), so sample e
//   takes the aligned words from floor(p / 4) on, with no byte shifts: ceil((s + span) / 4)
//   dot products (span = (kw - 1) cn + 1; 13 taps on one channel: 4 instead of 13 products),
//   and adjacent samples share the data words.
// - Vertical on h, by IDP.2A: two vertically adjacent h (rows 2m, 2m + 1) share a word (lo,
//   hi 16-bit lanes); a dp2a multiplies both lanes by two byte taps and adds. Output row r
//   = 2s takes pair words s .. s + (kh - 1) / 2 with tap bytes (ty_2m, ty_2m+1) (dp2a_lo),
//   row 2s + 1 the same words with (ty_2m-1, ty_2m) (dp2a_hi): one tap word serves both,
//   (kh + 1) / 2 products per output (7 for 13 taps). The accumulator starts at 2^15 (the
//   rounding term), so the output byte is byte 2 of the sum.
// Per output at 13 taps, one channel: 4 IDP.4A x (rows + 12) / rows + 7 IDP.2A, against 13
// FFMA + 6.5 IMAD + 13 shared loads in gaussian_u8_kernel.
#pragma once

#include <cstdint>

#include "src/backends/cuda/packed_u16x2.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::gauss_dp {

using u32 = std::uint32_t;

/// Tap words a shift may need (u8 x 3 at 49 taps: span 145 bytes, (145 + 6) / 4 = 37).
constexpr int kMaxHWords = 40;
/// Vertical tap words ((kh + 1) / 2; 49 taps: 25).
constexpr int kMaxVWords = 32;

using px::dp4a;

/// a.lo16 * b.byte0 + a.hi16 * b.byte1 + c (unsigned).
PIXFLOW_HD u32 dp2a_lo(u32 a, u32 b, u32 c) {
#if defined(__CUDA_ARCH__)
  return __dp2a_lo(a, b, c);
#else
  return c + (a & 0xffffu) * (b & 0xffu) + (a >> 16) * ((b >> 8) & 0xffu);
#endif
}

/// a.lo16 * b.byte2 + a.hi16 * b.byte3 + c (unsigned).
PIXFLOW_HD u32 dp2a_hi(u32 a, u32 b, u32 c) {
#if defined(__CUDA_ARCH__)
  return __dp2a_hi(a, b, c);
#else
  return c + (a & 0xffffu) * ((b >> 16) & 0xffu) + (a >> 16) * (b >> 24);
#endif
}

using px::byte_perm;

/// Bytes a window of kw taps spans on cn interleaved channels.
constexpr int h_span(int kw, int cn) {
  return (kw - 1) * cn + 1;
}
/// Words a sample's dot products take: the most over the four alignments, ceil((3 + span) / 4).
constexpr int h_words(int kw, int cn) {
  return (h_span(kw, cn) + 6) / 4;
}
/// Vertical tap words (and dot products an output).
constexpr int v_words(int kh) {
  return (kh + 1) / 2;
}
/// Data words of a run of R samples whose first window starts at byte a (any a >= 0) of word 0.
constexpr int run_words(int kw, int cn, int R, int a) {
  return (a + R - 1) / 4 + h_words(kw, cn);
}

/// The first window byte of output sample e0 in its byte tile (common/byte_tile.cuh: tile
/// rows start at floor16(e0 - (kw / 2) cn); e0 a multiple of 16): ((-(kw / 2) cn) mod 16).
constexpr int tile_off(int kw, int cn) {
  return ((-(kw / 2) * cn) % 16 + 16) % 16;
}
/// A run's data words start on an even word (8-byte loads): word run_w0 of the tile row (plus
/// the run's own words), the run's first window run_a bytes in (0 .. 7).
constexpr int run_w0(int kw, int cn) {
  return (tile_off(kw, cn) / 4) & ~1;
}
constexpr int run_a(int kw, int cn) {
  return tile_off(kw, cn) - 4 * run_w0(kw, cn);
}

/// The kernel's tap words (passed by value: the unrolled loops read them as constant-bank
/// operands, no registers).
struct Taps {
  u32 h[4][kMaxHWords];  // h[s][k], byte b: tx_i where 4k + b - s == i * cn, else 0
  u32 v[kMaxVWords];     // bytes (ty_2m, ty_2m+1, ty_2m-1, ty_2m) (ty_-1 = ty_kh = 0)
};

/// Builds the tap words; false (the caller falls back) when a tap is outside [0, 255], the
/// windows are even or the words do not fit.
inline bool make_taps(const std::int32_t* tx, int kw, const std::int32_t* ty, int kh, int cn,
                      Taps& t) {
  if (kw < 1 || kh < 1 || kw % 2 == 0 || kh % 2 == 0 || h_words(kw, cn) > kMaxHWords ||
      v_words(kh) > kMaxVWords)
    return false;
  for (int i = 0; i < kw; ++i)
    if (tx[i] < 0 || tx[i] > 255) return false;
  for (int j = 0; j < kh; ++j)
    if (ty[j] < 0 || ty[j] > 255) return false;
  t = Taps{};
  for (int s = 0; s < 4; ++s)
    for (int i = 0; i < kw; ++i) {
      const int byte = s + i * cn;
      t.h[s][byte / 4] |= u32(tx[i]) << (8 * (byte % 4));
    }
  auto y = [&](int j) { return j >= 0 && j < kh ? u32(ty[j]) : 0u; };
  for (int m = 0; m < v_words(kh); ++m)
    t.v[m] = y(2 * m) | y(2 * m + 1) << 8 | y(2 * m - 1) << 16 | y(2 * m) << 24;
  return true;
}

/// h of R consecutive samples of one tile row: sample j's window starts at byte A + j of the
/// aligned words w[0 .. run_words(KW, CN, R, A) - 1].
template <int KW, int CN, int R, int A>
PIXFLOW_HD void h_run(const u32* w, const Taps& t, u32 (&h)[R]) {
  constexpr int kW = h_words(KW, CN);
  PIXFLOW_UNROLL
  for (int j = 0; j < R; ++j) {
    const int s = (A + j) & 3, base = (A + j) >> 2;
    u32 acc = 0;
    PIXFLOW_UNROLL
    for (int k = 0; k < kW; ++k) acc = dp4a(w[base + k], t.h[s][k], acc);
    h[j] = acc;
  }
}

/// Two h (rows 2m, 2m + 1 of one sample) as a pair word.
PIXFLOW_HD u32 pair(u32 h_even, u32 h_odd) {
  return byte_perm(h_even, h_odd, 0x5410);
}

/// Adds pair word m of an output row pair's window (pair words s + m, m < v_words) to the
/// sums of its rows 2s (even) and 2s + 1 (odd).
PIXFLOW_HD void v_add(u32 pw, u32 tap_word, u32& even, u32& odd) {
  even = dp2a_lo(pw, tap_word, even);
  odd = dp2a_hi(pw, tap_word, odd);
}

/// Where quad Q (samples 4Q .. 4Q + 3, one 16-byte pair-word group) of a pair row of H2 lies:
/// quad Q ^ bit 3 of Q. The horizontal pass's lane c writes quads 2c and 2c + 1 (16-byte
/// stores 32 bytes apart: unswizzled, lanes c and c + 4 of a quarter warp hit the same four
/// banks); swizzled, the 8 lanes of each quarter warp write 8 distinct bank quads, and the
/// vertical pass's lanes (consecutive Q) still read 8 distinct ones. A permutation of each
/// 16-quad group (its own inverse).
PIXFLOW_HD int h2_quad(int q) {
  return q ^ ((q >> 3) & 1);
}

/// The interior tile walk of the loader (separable.cu, gauss_dp_tile_issue): thread tid's
/// chunks i = tid, tid + T, ... of a tile of `chunks` 16-byte chunks a row; chunk i is shared
/// byte 16 i and source byte `off` from the tile's first byte (row i / chunks of the source,
/// byte 16 (i % chunks)), stepped by T chunks without a division.
struct ChunkWalk {
  int i, c16;
  long long off;
};
PIXFLOW_HD ChunkWalk chunk_walk_start(int tid, int chunks, long long stride) {
  const int r = tid / chunks, c16 = 16 * (tid - r * chunks);
  return {tid, c16, r * stride + c16};
}
PIXFLOW_HD void chunk_walk_next(ChunkWalk& w, int threads, int chunks, long long stride) {
  const int step_c = 16 * (threads % chunks);  // < a row: at most one wrap a step
  w.i += threads;
  w.off += (threads / chunks) * stride + step_c;
  w.c16 += step_c;
  if (w.c16 >= 16 * chunks) w.c16 -= 16 * chunks, w.off += stride - 16 * chunks;
}

/// Row pairs a vertical group of the kernel (gauss_dp_v_group) for `pairs` output row pairs a
/// thread and kh taps: groups of this size from pair 0, then a tail of pairs % size. 13 taps:
/// 3 (2 where a thread has 4 pairs: 3 + 1 spilled the short shapes at 64 registers); else 4.
constexpr int v_group_pairs(int pairs, int kh) {
  return kh > 13 ? 4 : pairs == 4 ? 2 : 3;
}

/// The vertical sums start at the rounding term: the output is then byte 2 of the sum.
constexpr u32 kRound = 1u << 15;

/// Four outputs (sums started at kRound) as one word, sample 0 in byte 0.
PIXFLOW_HD u32 pack4(u32 a0, u32 a1, u32 a2, u32 a3) {
  return byte_perm(byte_perm(a0, a1, 0x0062), byte_perm(a2, a3, 0x0062), 0x5410);
}

}  // namespace pixflow::cuda::gauss_dp
