// The arithmetic of the CUDA u8 epsilon kernel (epsilon.cu), in functions that compile for
// the device and for the host, so that tests/epsilon_packed_test.cpp runs the very same code
// on the CPU against the plain rule (no GPU needed).
//
// One 32-bit word holds four taps of ONE output (four bytes), so one instruction handles four
// taps (the op is compute-bound: (2r+1)^2 taps a pixel). Per word, five instructions, all
// native on sm_90:
//   d = VABSDIFF4(p, c·0x01010101)                 |p - c| per byte
//   e = VABSDIFF4(d, M·0x01010101)                 bit 7 of each byte: the compare (below)
//   f = LOP3(e, lanes)                             0x80 in the byte where |p - c| <= T
//   sum = IDP.4A(p, f, sum); cnt = IDP.4A(f, 0x01010101, cnt)   (128 x the sum and the count)
// with T the integer threshold (d <= t in double iff d <= min(floor(t), 255) for an integer d
// in [0, 255]). The compare d <= T of a byte d in one more absolute difference:
//   T <= 127, M = T + 128: d <= T gives e = M - d in [128, 255] (bit 7 set); T < d <= M gives
//     e = M - d in [0, 127]; d > M gives e = d - M in [1, 127 - T]: bit 7 of e is d <= T.
//   128 <= T <= 254, M = T - 127 (in [1, 127]): d >= T + 1 = M + 128 gives e = d - M in
//     [128, 254]; M <= d <= T gives e in [0, 127]; d < M gives e = M - d in [1, 127]: bit 7
//     of e is d > T, so f = ~e & lanes.
//   T = 255: every tap counts, f = lanes.
// (Measured on the H100 in a loop of independent words: 6.6 clocks a word a warp against 8.0
// for the three-instruction compare (d & 0x7f7f7f7f) + K with a majority LOP3.)
// `lanes` (0x80 per lane that holds a tap of the window) masks the lanes of a partly used word.
//
// Where the words come from (the kernel's tiles, one channel at a time):
//   plane:  the channel's bytes, row-major, plane column 0 = pixel (block x0 - r);
//   quad:   word (row y, column v) = plane bytes (y, v), (y+1, v), (y+2, v), (y+3, v): four
//           window rows of one column, so the (2r+1) columns of a window row block of four
//           rows are 2r+1 whole words with no shifting;
// the window's rows that do not fill a block of four (2r+1 mod 4 of them) are read along the
// row from the plane, four taps a word (byte-shifted from aligned words).
// Per output at r = 4: 18 quad words + 3 row words (4 + 4 + 1 taps) = 21 words for 81 taps,
// 105 instructions.
// The mean (2 sum + n) / (2 n) is a multiply-high by a per-block table of 2^32 / (2n)
// rounded up (exact: see mean_u8).
#pragma once

#include <cmath>
#include <cstdint>

#include "src/backends/cuda/packed_u16x2.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::eps_u8 {

using u32 = std::uint32_t;

// Outputs of one thread item: kJ consecutive pixels of one channel in one row (so that the
// quad words of a window row block serve kJ outputs: kJ + 2r words for kJ (2r+1) word uses).
constexpr int kJ = 4;
// Largest radius of the packed kernel: the count and the sum fit the accumulators with room
// (128 * 255 * 225 < 2^32) and the tiles fit 48 KB; larger radii run the generic kernel.
constexpr int kMaxR = 7;

/// The integer threshold of the rule: for an integer d in [0, 255], double(d) <= t iff
/// d <= u8_threshold(t). Requires t >= 0 (the schema's range; NaN is refused there).
inline int u8_threshold(double t) {
  return t >= 255.0 ? 255 : int(std::floor(t));
}

/// The compare's form: 0 for T <= 127, 1 for 128 <= T <= 254, 2 for T = 255 (see above).
inline int u8_compare_mode(int T) {
  return T <= 127 ? 0 : T <= 254 ? 1 : 2;
}

/// The compare's constant M (in every byte) for threshold T in [0, 255].
inline u32 u8_compare_k(int T) {
  return u32(T <= 127 ? T + 128 : T <= 254 ? T - 127 : 0) * 0x01010101u;
}

PIXFLOW_HD u32 vabsdiff4(u32 a, u32 b) {
#if defined(__CUDA_ARCH__)
  return __vabsdiffu4(a, b);
#else
  u32 r = 0;
  for (int i = 0; i < 32; i += 8) {
    const int x = int((a >> i) & 0xffu), y = int((b >> i) & 0xffu);
    r |= u32(x > y ? x - y : y - x) << i;
  }
  return r;
#endif
}

using px::dp4a;

PIXFLOW_HD u32 mulhi(u32 a, u32 b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return u32((std::uint64_t(a) * b) >> 32);
#endif
}

/// 0x80 in the lanes of `lanes` whose byte of p is within T of c (c4 = c * 0x01010101,
/// k = u8_compare_k(T), kMode = u8_compare_mode(T)).
template <int kMode>
PIXFLOW_HD u32 in_flags(u32 p, u32 c4, u32 k, u32 lanes) {
  if constexpr (kMode == 2) {
    (void)p, (void)c4, (void)k;
    return lanes;
  } else {
    const u32 e = vabsdiff4(vabsdiff4(p, c4), k);
    return kMode == 0 ? e & lanes : ~e & lanes;
  }
}

/// Adds the taps of word p (the lanes of `lanes`) to 128 x sum and 128 x count.
template <int kMode>
PIXFLOW_HD void tap4(u32 p, u32 c4, u32 k, u32 lanes, u32& sum, u32& cnt) {
  const u32 f = in_flags<kMode>(p, c4, k, lanes);
  sum = dp4a(p, f, sum);
  cnt = dp4a(f, 0x01010101u, cnt);
}

/// 0x80 in the lowest n lanes (n in 1..4).
PIXFLOW_HD constexpr u32 low_lanes(int n) {
  return n >= 4 ? 0x80808080u : 0x80808080u >> (8 * (4 - n));
}

/// The table entry for n taps: ceil(2^32 / (2n)) (2^31 for n = 1).
PIXFLOW_HD u32 mean_recip(u32 n) {
  return 0xffffffffu / (2 * n) + 1;
}

/// (2 sum + n) / (2 n) for sum <= 255 n, n <= 1024, m = mean_recip(n): with m = 2^32/(2n) + e,
/// 0 <= e < 1, the product N m / 2^32 = N/(2n) + N e / 2^32 exceeds the quotient N/(2n) by less
/// than 1/(2n) (N = 2 sum + n <= 511 n < 2^32 / (2n)), and the fraction of N/(2n) is at most
/// 1 - 1/(2n): the floor is the integer quotient.
PIXFLOW_HD u32 mean_u8(u32 sum, u32 n, u32 m) {
  return mulhi(2 * sum + n, m);
}

/// Bytes s .. s + 3 of the 8 bytes (hi:lo), s in 0..3 (a constant in the kernel: one PRMT).
PIXFLOW_HD u32 bytes_at(u32 lo, u32 hi, int s) {
  return px::byte_perm(lo, hi, u32(s) | u32(s + 1) << 4 | u32(s + 2) << 8 | u32(s + 3) << 12);
}

/// 4 x 4 byte transpose: q[i] = byte i of r0, r1, r2, r3 (in that lane order).
PIXFLOW_HD void transpose4(u32 r0, u32 r1, u32 r2, u32 r3, u32 q[4]) {
  const u32 a = px::byte_perm(r0, r1, 0x5140), b = px::byte_perm(r0, r1, 0x7362);
  const u32 c = px::byte_perm(r2, r3, 0x5140), d = px::byte_perm(r2, r3, 0x7362);
  q[0] = px::byte_perm(a, c, 0x5410);
  q[1] = px::byte_perm(a, c, 0x7632);
  q[2] = px::byte_perm(b, d, 0x5410);
  q[3] = px::byte_perm(b, d, 0x7632);
}

/// Four words, 16-byte aligned in the tiles (one LDS.128 on the device).
struct alignas(16) Word4 {
  u32 w[4];
};

/// Padded widths of a block's tiles for kPx pixels a block row and radius R: plane row pitch
/// in bytes (= quad row pitch in words), a multiple of 16 that holds every word an item reads
/// (the row words reach byte kPx - kJ + 4 * (ceil((2R+1)/4) + 1) - 1 < kPx + 2R + 4).
PIXFLOW_HD constexpr int plane_pitch(int px, int r) {
  return (px + 2 * r + 4 + 15) / 16 * 16;
}

/// The kJ outputs of one item: pixels g*kJ + j (j < kJ) of block row h, one channel.
/// `quad` points at quad row h (word column 0), `plane` at plane row h (byte column 0), both
/// with row pitch `pitch` (words for quad, bytes for plane); `recip` is the mean table. The
/// window of output (h, g*kJ + j) is plane rows h .. h + 2R, columns g*kJ + j .. + 2R.
template <int R, int kMode, class Out>
PIXFLOW_HD void item_u8(const u32* quad, const unsigned char* plane, int pitch, int g, u32 k,
                        const u32* recip, Out&& out) {
  constexpr int W = 2 * R + 1;              // window side
  constexpr int NQ = W / 4;                 // blocks of four window rows (quad words)
  constexpr int NL = W - 4 * NQ;            // window rows read along the row
  constexpr int NC = (kJ + 2 * R + 3) / 4;  // Word4 of quad words per block of rows
  constexpr int NW = (W + 3) / 4;           // row words per window row
  const int x0 = g * kJ;
  u32 sum[kJ], cnt[kJ], c4[kJ];
  PIXFLOW_UNROLL
  for (int j = 0; j < kJ; ++j) {
    c4[j] = u32(plane[(R)*pitch + x0 + j + R]) * 0x01010101u;
    sum[j] = 0;
    cnt[j] = 0;
  }
  PIXFLOW_UNROLL
  for (int q = 0; q < NQ; ++q) {
    u32 w[4 * NC];
    const Word4* src = reinterpret_cast<const Word4*>(quad + 4 * q * pitch + x0);
    PIXFLOW_UNROLL
    for (int i = 0; i < NC; ++i) {
      const Word4 v = src[i];
      PIXFLOW_UNROLL
      for (int e = 0; e < 4; ++e) w[4 * i + e] = v.w[e];
    }
    PIXFLOW_UNROLL
    for (int j = 0; j < kJ; ++j) {
      PIXFLOW_UNROLL
      for (int t = 0; t < W; ++t) tap4<kMode>(w[j + t], c4[j], k, 0x80808080u, sum[j], cnt[j]);
    }
  }
  PIXFLOW_UNROLL
  for (int l = 0; l < NL; ++l) {
    const u32* row = reinterpret_cast<const u32*>(plane + (4 * NQ + l) * pitch + x0);
    u32 a[NW + 1];
    PIXFLOW_UNROLL
    for (int i = 0; i <= NW; ++i) a[i] = row[i];
    PIXFLOW_UNROLL
    for (int j = 0; j < kJ; ++j) {
      PIXFLOW_UNROLL
      for (int v = 0; v < NW; ++v) {
        // Taps 4v .. 4v + 3 of output j: plane bytes x0 + j + 4v ...
        const int b = j + 4 * v;
        const u32 p = (b % 4 == 0) ? a[b / 4] : bytes_at(a[b / 4], a[b / 4 + 1], b % 4);
        const int taps = W - 4 * v < 4 ? W - 4 * v : 4;
        tap4<kMode>(p, c4[j], k, low_lanes(taps), sum[j], cnt[j]);
      }
    }
  }
  PIXFLOW_UNROLL
  for (int j = 0; j < kJ; ++j) {
    const u32 n = cnt[j] >> 7;
    out(j, mean_u8(sum[j] >> 7, n, recip[n]));
  }
}

}  // namespace pixflow::cuda::eps_u8
