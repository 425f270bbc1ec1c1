// The register arithmetic of the CUDA dilate/erode kernel for small centred windows on one u8
// channel (morphology.cu, morphk_u8_kernel: K x K, K = 5 or 7), as host + device code so that
// tests/morph_k_packed_test.cpp runs it on the CPU.
//
// A thread computes 8 adjacent outputs x0 .. x0 + 7 of a row from four tile words a, b, c, d =
// row bytes x0 - 4 .. x0 + 11 (K <= 9: the window reaches at most 4 bytes to each side), in
// 16-bit lanes that hold a byte v as v * 257 (u8_3x3_dup.hpp: v -> 257 v is increasing, so
// per-lane min / max commute with it, and any lane pair is one PRMT of two tile words). Two
// outputs a word, one VIMNMX(3).U16x2 per 2 or 3 words (Hopper: min/max of three words in one
// instruction; __vmaxu4 on bytes is emulated in ~6).
//
// Horizontal (hrow): P_o = the lane pair (byte x0 - h + o, byte x0 - h + o + 1), h = K / 2,
// o = 0 .. 2h + 6 (one PRMT each). Output word j (outputs x0 + 2j, x0 + 2j + 1) is the op of
// P_2j .. P_2j+2h: lane 0 then covers bytes x0 + 2j - h .. x0 + 2j + h, lane 1 the same one
// byte on. Words j and j + 1 share P_2j+2 .. P_2j+2h (2h - 1 words: h - 1 three-input ops),
// and each adds its two outer words with one more: h + 1 ops for two output words.
// Vertical (vpair): output rows i and i + 1 share window rows i + 1 .. i + K - 2 ((K - 3) / 2
// ops), then one three-input op each: (K + 1) / 2 ops for two rows of a word.
// K = 5: per input row 11 PRMT + 6 ops, per pair of output rows 3 ops a word.
#pragma once

#include <cstdint>

#include "src/backends/cuda/packed_u16x2.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::morph_k {

using u32 = std::uint32_t;

template <bool kMax>
PIXFLOW_HD u32 op2(u32 a, u32 b) {
  return kMax ? px::vmax(a, b) : px::vmin(a, b);
}
template <bool kMax>
PIXFLOW_HD u32 op3(u32 a, u32 b, u32 c) {
  return kMax ? px::vmax3(a, b, c) : px::vmin3(a, b, c);
}

/// The op of n words w[first .. first + n - 1] (n >= 1), three-input ops first.
template <bool kMax, int N>
PIXFLOW_HD u32 reduce(const u32 (&w)[N], int first, int n) {
  u32 acc = w[first];
  int i = 1;
  PIXFLOW_UNROLL
  for (; i + 1 < n; i += 2) acc = op3<kMax>(acc, w[first + i], w[first + i + 1]);
  if (i < n) acc = op2<kMax>(acc, w[first + i]);
  return acc;
}

/// The lane pair (byte q, byte q + 1) of the 16 bytes (a, b, c, d), each byte in both halves
/// of its lane: one PRMT (q a constant after unrolling; q <= 14).
PIXFLOW_HD u32 pair_at(const u32 (&w)[4], int q) {
  const int i = q & 3;
  const u32 x = w[q >> 2], y = i == 3 ? w[(q >> 2) + 1] : x;
  const u32 s = u32(i) | u32(i) << 4 | u32(i + 1) << 8 | u32(i + 1) << 12;
  return px::byte_perm(x, y, s);
}

/// Horizontal K-window op (kMax: max, else min) of the outputs x0 .. x0 + 7, from the row bytes
/// x0 - 4 .. x0 + 11 in a, b, c, d: o[j] = outputs x0 + 2j, x0 + 2j + 1 in v * 257 lanes.
template <int K, bool kMax>
PIXFLOW_HD void hrow(u32 a, u32 b, u32 c, u32 d, u32 (&o)[4]) {
  static_assert(K % 2 == 1 && K >= 3 && K <= 9, "hrow: odd K <= 9 (4 bytes a side)");
  constexpr int h = K / 2, n = 2 * h + 7;
  const u32 w[4] = {a, b, c, d};
  u32 p[n];
  PIXFLOW_UNROLL
  for (int i = 0; i < n; ++i) p[i] = pair_at(w, 4 - h + i);
  PIXFLOW_UNROLL
  for (int j = 0; j < 4; j += 2) {
    const u32 s = reduce<kMax>(p, 2 * j + 2, 2 * h - 1);  // shared by words j and j + 1
    o[j] = op3<kMax>(p[2 * j], p[2 * j + 1], s);
    o[j + 1] = op3<kMax>(s, p[2 * j + 2 * h + 1], p[2 * j + 2 * h + 2]);
  }
}

/// Vertical K-window op of two output rows of one word: r[0 .. K] = the word in window rows
/// i .. i + K; out0 = op of r[0 .. K - 1] (row i), out1 = op of r[1 .. K] (row i + 1).
template <int K, bool kMax>
PIXFLOW_HD void vpair(const u32 (&r)[K + 1], u32& out0, u32& out1) {
  static_assert(K % 2 == 1 && K >= 3, "vpair: odd K");
  const u32 s = reduce<kMax>(r, 1, K - 2);
  out0 = op3<kMax>(r[0], s, r[K - 1]);
  out1 = op3<kMax>(s, r[K - 1], r[K]);
}

/// The output bytes of two words of v * 257 lanes: the lanes' low bytes, in order.
PIXFLOW_HD u32 pack(u32 lo, u32 hi) {
  return px::byte_perm(lo, hi, 0x6420);
}

}  // namespace pixflow::cuda::morph_k
