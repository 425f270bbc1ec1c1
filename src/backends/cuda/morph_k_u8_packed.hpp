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

// ---- Windows of 15 and more (morphv_u8_kernel): van Herk over 16 outputs, vertical first ------
// A K x K window (K >= 15) is two K-runs, each by van Herk / Gil-Werman on items of 16 outputs
// from K + 15 inputs: suffixes of inputs 0 .. K - 1, prefixes of inputs K .. K + 14, output i the
// op of suffix i and prefix i - 1 (K - 1 ops each, K - 1 = 14 more: 42 two-input ops an item of
// 16 at K = 15, ~2.6 a word, with no boundary inside the item). Every input word carries
// independent streams in its two 16-bit lanes:
// - vertical (vquad): a thread takes one tile word (4 columns) down 16 output rows; the even
//   columns 0 and 2 are the stream w & 0x00ff00ff (lanes v: one LOP3 a row), the odd columns 1
//   and 3 the word itself: a 16-bit lane b1 * 256 + b0 orders by its high byte first, so the
//   high byte of the min / max of such lanes is the min / max of their high bytes, whatever
//   the low bytes (no instruction a row). The two results join into the 4 output bytes with one
//   LOP3 (the even result's high bytes are zero);
// - horizontal (hseg): a thread takes 16 outputs x0 .. x0 + 15 of a row in lane 0 and x0 + 128
//   .. x0 + 143 in lane 1 (so that a warp's stores are whole 64-byte runs): input k pairs the
//   bytes x0 - h + k and x0 + 128 - h + k (v * 257 lanes: one PRMT), and 4 PRMT gather 4
//   outputs of each lane into two words.

/// Van Herk over S streams: out(i, o) gets o[s] = the op of in(i .. i + K - 1)[s], i = 0 .. 15,
/// from in(j, v) filling v[s] with input j of stream s, j = 0 .. K + 14, each once (inputs
/// K - 1 down to 0 before the first output, then input K + i - 1 before output i).
template <int K, bool kMax, int S, class In, class Out>
PIXFLOW_HD void vh16(In&& in, Out&& out) {
  static_assert(K % 2 == 1 && K >= 15, "vh16: odd K >= 15 (one suffix block, one prefix block)");
  u32 suf[K][S];  // suf[i] = op of inputs i .. K - 1
  in(K - 1, suf[K - 1]);
  PIXFLOW_UNROLL
  for (int i = K - 2; i >= 0; --i) {
    in(i, suf[i]);
    PIXFLOW_UNROLL
    for (int s = 0; s < S; ++s) suf[i][s] = op2<kMax>(suf[i][s], suf[i + 1][s]);
  }
  out(0, suf[0]);
  u32 pre[S];  // op of inputs K .. K + i - 1
  in(K, pre);
  PIXFLOW_UNROLL
  for (int i = 1; i < 16; ++i) {
    u32 o[S];
    PIXFLOW_UNROLL
    for (int s = 0; s < S; ++s) o[s] = i < K ? op2<kMax>(suf[i][s], pre[s]) : pre[s];
    out(i, o);
    if (i < 15) {
      u32 x[S];
      in(K + i, x);
      PIXFLOW_UNROLL
      for (int s = 0; s < S; ++s) pre[s] = op2<kMax>(pre[s], x[s]);
    }
  }
}

/// The two lane streams of a word of 4 bytes (vquad): bytes 0 and 2 in the low bytes of the
/// lanes; bytes 1 and 3 are the high bytes of the word's own lanes. join_bytes: the 4 bytes
/// back from the two streams' results (even: high bytes zero; odd: the high bytes).
PIXFLOW_HD u32 even_bytes(u32 w) {
  return w & 0x00ff00ffu;
}
PIXFLOW_HD u32 join_bytes(u32 even, u32 odd) {
  return even | (odd & 0xff00ff00u);
}

/// Vertical K-run of one column quad: word(j) = the quad's tile word of row j, j = 0 .. K + 14;
/// put(i, w) gets the 4 output bytes of row i, i = 0 .. 15.
template <int K, bool kMax, class Word, class Put>
PIXFLOW_HD void vquad(Word&& word, Put&& put) {
  vh16<K, kMax, 2>(
      [&](int j, u32(&v)[2]) {
        const u32 w = word(j);
        v[0] = even_bytes(w);
        v[1] = w;  // the odd bytes: the lanes' high bytes
      },
      [&](int i, const u32(&o)[2]) { put(i, join_bytes(o[0], o[1])); });
}

/// Horizontal K-run (K <= 17) of a row segment pair: a = row bytes x0 - 8 .. x0 + 23, b = row
/// bytes x0 + 120 .. x0 + 151 (8 words each); oa = outputs x0 .. x0 + 15, ob = outputs x0 + 128
/// .. x0 + 143 (4 words of 4 bytes each, in order).
template <int K, bool kMax>
PIXFLOW_HD void hseg(const u32 (&a)[8], const u32 (&b)[8], u32 (&oa)[4], u32 (&ob)[4]) {
  static_assert(K / 2 <= 8, "hseg: the window reaches at most 8 bytes a side");
  constexpr int h = K / 2;
  u32 t = 0;  // outputs 4m, 4m + 1 of both lanes (bytes: a 4m, a 4m+1, b 4m, b 4m+1)
  vh16<K, kMax, 1>(
      [&](int k, u32(&v)[1]) {
        const int q = 8 - h + k, s = q & 3;  // constant after unrolling
        v[0] = px::byte_perm(a[q >> 2], b[q >> 2],
                             u32(s) | u32(s) << 4 | u32(s + 4) << 8 | u32(s + 4) << 12);
      },
      [&](int i, const u32(&o)[1]) {
        // Pairs of outputs to bytes (lane 0's low byte, lane 1's low byte), then pairs of pairs.
        if (i % 2 == 0) {
          t = o[0];
          return;
        }
        const u32 p = px::byte_perm(t, o[0], 0x6240);  // a i-1, a i, b i-1, b i
        const int m = i / 4;
        if (i % 4 == 1) {
          oa[m] = p;  // held until its upper half
        } else {
          ob[m] = px::byte_perm(oa[m], p, 0x7632);
          oa[m] = px::byte_perm(oa[m], p, 0x5410);
        }
      });
}

/// The block schedule of morphv_u8_kernel (256 x 64 outputs a block, 256 threads), shared with
/// the host test that emulates a whole block. Tile word w = row bytes bx0 - 16 + 4 w; the mid
/// buffer (the vertical result) has kVQuads words a row, word q = bytes bx0 - 8 + 4 q.
constexpr int kVBW = 256, kVBH = 64;
constexpr int kVQuads = kVBW / 4 + 4;           // 68: bytes bx0 - 8 .. bx0 + 263
constexpr int kVQuadWord = 2;                   // the tile word of quad 0
constexpr int kVItems = kVQuads * (kVBH / 16);  // 272 vertical items of 16 rows
constexpr int kHItems = kVBH * 8;               // 512 horizontal items
/// Vertical item it: quad q, output rows 16 g .. 16 g + 15 (consecutive items: consecutive quads,
/// a warp's loads and stores consecutive words of a row).
PIXFLOW_HD void v_item(int it, int& g, int& q) {
  g = it / kVQuads;
  q = it - g * kVQuads;
}
/// Horizontal item it: row r, segment pair s (outputs bx0 + 16 s .. + 15 and bx0 + 128 + 16 s ..
/// + 15, from mid words 4 s .. 4 s + 7 and 4 s + 32 .. 4 s + 39). Consecutive items: 8 rows of
/// one segment (a quarter-warp's 16-byte loads: rows 68 words apart, every bank once).
PIXFLOW_HD void h_item(int it, int& r, int& s) {
  r = (it & 7) | (it >> 6) << 3;
  s = (it >> 3) & 7;
}

/// The output bytes of two words of v * 257 lanes: the lanes' low bytes, in order.
PIXFLOW_HD u32 pack(u32 lo, u32 hi) {
  return px::byte_perm(lo, hi, 0x6420);
}

/// Output rows i and i + 1 of a thread's 8 outputs from its horizontal results hw[i .. i + K]
/// (hrow's 4 words a row): vpair on each word, packed into each row's two words of 4 bytes
/// (row0 / row1 [0]: outputs 0 .. 3, [1]: 4 .. 7). i is a constant in the kernels' unrolled
/// loops, so hw stays in registers.
template <int K, bool kMax, int N>
PIXFLOW_HD void vpair_rows(const u32 (&hw)[N][4], int i, u32 (&row0)[2], u32 (&row1)[2]) {
  u32 o0[4], o1[4];
  PIXFLOW_UNROLL
  for (int j = 0; j < 4; ++j) {
    u32 col[K + 1];
    PIXFLOW_UNROLL
    for (int t = 0; t <= K; ++t) col[t] = hw[i + t][j];
    vpair<K, kMax>(col, o0[j], o1[j]);
  }
  row0[0] = pack(o0[0], o0[1]), row0[1] = pack(o0[2], o0[3]);
  row1[0] = pack(o1[0], o1[1]), row1[1] = pack(o1[2], o1[3]);
}

}  // namespace pixflow::cuda::morph_k
