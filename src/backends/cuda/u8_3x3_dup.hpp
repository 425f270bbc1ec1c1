// Column words in "duplicated" 16-bit lanes for the order-only packed 3x3 kernels on u8
// (dilate/erode and median, u8_3x3.cuh), as host + device code so that
// tests/u8_3x3_dup_test.cpp runs it on the CPU.
//
// The kernels work on two pixels a 32-bit word, one per 16-bit lane, with per-lane min, max,
// min3/max3 (one VIMNMX(3).U16x2 each) and the median of three as a + b + c - max - min. A lane
// used to hold its byte v zero-extended (v), which takes two PRMT for a lane pair whose bytes
// come from two tile words and a zero (the third byte source): 5 PRMT a tile row of a thread
// (CN = 1), 8 (CN = 3). Here a lane holds v * 257 (the byte in both of its halves), which one
// PRMT of the two tile words builds for any lane pair: 3 PRMT a row (CN = 1), 6 (CN = 3).
//
// Why the results are unchanged: v -> 257 v is strictly increasing, so per lane min, max,
// min3, max3 and the median of three commute with it (each returns one of its inputs); the
// median as a + b + c - max - min is exact on the whole word for any lane values, since the
// word arithmetic is the lanes' arithmetic with carries, modulo 2^32, and the true result (the
// lanes' medians, each < 2^16) is below 2^32. The packed words stay in that form to the end;
// the output bytes are the lanes' low bytes (PRMT 0x6420, as before). The box/Gaussian and
// derivative kernels multiply their lanes and keep the zero-extended words.
#pragma once

#include <cstdint>

#include "src/backends/cuda/packed_u16x2.hpp"
#include "src/backends/cuda/u8_3x3_cn.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::u8_3x3_dup {

using u32 = std::uint32_t;
using u8_3x3_cn::Cols3;

/// CN = 1: the lane pairs (x0-1, x0), (x0+1, x0+2), (x0+3, x0+4) of a thread whose first
/// output byte is x0, from the tile words a, b, c = row bytes x0-4 .. x0-1, x0 .. x0+3,
/// x0+4 .. x0+7 (u8_3x3.cuh's columns, duplicated lanes).
PIXFLOW_HD void columns(u32 a, u32 b, u32 c, u32& p0, u32& p1, u32& p2) {
  p0 = px::byte_perm(a, b, 0x4433);  // a3 a3, b0 b0
  p1 = px::byte_perm(b, b, 0x2211);  // b1 b1, b2 b2
  p2 = px::byte_perm(b, c, 0x4433);  // b3 b3, c0 c0
}

/// CN = 3: u8_3x3_cn::columns3's six lane pairs (bytes 3 apart), duplicated lanes.
PIXFLOW_HD Cols3 columns3(u32 a, u32 b, u32 c) {
  Cols3 k;
  k.l0 = px::byte_perm(a, a, 0x2211);  // a1, a2
  k.c0 = px::byte_perm(b, b, 0x1100);  // b0, b1
  k.r0 = px::byte_perm(b, c, 0x4433);  // b3, c0
  k.l1 = px::byte_perm(a, b, 0x4433);  // a3, b0
  k.c1 = px::byte_perm(b, b, 0x3322);  // b2, b3
  k.r1 = px::byte_perm(c, c, 0x2211);  // c1, c2
  return k;
}

/// dilate (kMax) / erode of one output row, CN = 1: q0, q1, q2 = the vertical max (min) of the
/// three window rows' columns() words p0, p1, p2; then the horizontal op of the lane pairs
/// (x0-1, x0), (x0, x0+1), (x0+1, x0+2) and (x0+1, x0+2), (x0+2, x0+3), (x0+3, x0+4). Returns
/// the output bytes x0 .. x0+3.
template <bool kMax>
PIXFLOW_HD u32 morph3_row(u32 q0, u32 q1, u32 q2) {
  auto op3 = [](u32 a, u32 b, u32 c) { return kMax ? px::vmax3(a, b, c) : px::vmin3(a, b, c); };
  const u32 o0 = op3(q0, px::byte_perm(q0, q1, 0x5432), q1);  // pixels x0, x0+1
  const u32 o1 = op3(q1, px::byte_perm(q1, q2, 0x5432), q2);  // pixels x0+2, x0+3
  return px::byte_perm(o0, o1, 0x6420);                       // the lanes' low bytes
}

/// The 3x3 median of one output row, CN = 1 (median3_u8_kernel), per lane
///   med3(max3(column lows), med3(column mids), min3(column highs))
/// of the three window columns sorted vertically: (a_j, b_j) = the per-lane (min, max) of the
/// columns() word j (p0, p1, p2) of two of the window's rows (the middle pair, shared by two
/// output rows), x_j the third row's word j. The left/right columns of lanes (x0, x0+1) are
/// lanes of words 0 and 1 and the pair between them (between: lane 1 of one, lane 0 of the
/// next); likewise for (x0+2, x0+3) with words 1 and 2. Returns the output bytes x0 .. x0+3.
struct Sorted3 {
  u32 lo, mid, hi;
};
PIXFLOW_HD Sorted3 insert(u32 p, u32 q, u32 x) {  // x into the sorted pair p <= q, per lane
  return {px::vmin(p, x), px::vmax(p, px::vmin(x, q)), px::vmax(q, x)};
}
PIXFLOW_HD u32 between(u32 l, u32 r) {  // (lane 1 of l, lane 0 of r)
  return px::byte_perm(l, r, 0x5432);
}
PIXFLOW_HD u32 median_of(const Sorted3& l, const Sorted3& c, const Sorted3& r) {
  return u8_3x3_cn::vmed3(px::vmax3(l.lo, c.lo, r.lo), u8_3x3_cn::vmed3(l.mid, c.mid, r.mid),
                          px::vmin3(l.hi, c.hi, r.hi));
}
PIXFLOW_HD u32 median3_row(u32 a0, u32 b0, u32 a1, u32 b1, u32 a2, u32 b2, u32 x0, u32 x1, u32 x2) {
  const Sorted3 s0 = insert(a0, b0, x0), s1 = insert(a1, b1, x1), s2 = insert(a2, b2, x2);
  const Sorted3 c0{between(s0.lo, s1.lo), between(s0.mid, s1.mid), between(s0.hi, s1.hi)};
  const Sorted3 c1{between(s1.lo, s2.lo), between(s1.mid, s2.mid), between(s1.hi, s2.hi)};
  const u32 o0 = median_of(s0, c0, s1);  // pixels x0, x0+1
  const u32 o1 = median_of(s1, c1, s2);  // pixels x0+2, x0+3
  return px::byte_perm(o0, o1, 0x6420);
}

/// The wide 3x3 median of one output row (median3_wide_u8_kernel: 8 output bytes x0 .. x0+7 a
/// thread, CN interleaved channels, horizontal neighbours CN bytes apart). The lanes of a word
/// are 4 bytes apart, (x, x+4), so that the four output words A..D = (x0, x0+4) .. (x0+3,
/// x0+7) take their left, centre and right window columns from the column words
/// W(k) = (x0+k, x0+4+k), k = -CN .. 3+CN (kWideCols<CN>: 6 for CN = 1, 10 for CN = 3; output
/// word j: W(j-CN), W(j), W(j+CN)), each built by one PRMT of two tile words. The adjacent-lane
/// layout (columns, median3_row) needs the lane pairs between its words (6 PRMT a row on the
/// sorted columns) and sorts 3 column words a row for 4 outputs; this one sorts 6 for 8
/// (CN = 1; CN = 3: 10 for 8, where columns3 sorted 6 for 4) and needs no between.
template <int CN>
constexpr int kWideCols = 4 + 2 * CN;
/// columns_wide: the column words w[m] = W(m - CN) from the tile words t = a, b, c, d = row
/// bytes x0-4 .. x0+11: byte x0+k is byte (k+4) % 4 of t[(k+4) / 4], and x0+4+k the same byte of
/// the next word.
template <int CN>
PIXFLOW_HD void columns_wide(u32 a, u32 b, u32 c, u32 d, u32 (&w)[kWideCols<CN>]) {
  const u32 t[4] = {a, b, c, d};
  PIXFLOW_UNROLL
  for (int m = 0; m < kWideCols<CN>; ++m) {
    const int k = m - CN + 4, j = k % 4;  // k + 4 >= 1
    w[m] = px::byte_perm(t[k / 4], t[k / 4 + 1], 0x4400u + 0x1111u * u32(j));
  }
}

/// The wide median's additions: a * m + c on the word (mod 2^32) with m = 1 (one) or 2^32 - 1
/// (neg, a subtraction), as IMAD. The kernel passes one and neg in registers that ptxas cannot
/// prove constant (u8_3x3.cuh, median3_wide_rows), so the sums issue on the FMA pipe instead of
/// as IADD3 on the 16-lane integer pipe that every VIMNMX and PRMT of the kernel shares; the host
/// test passes 1 and ~0u: the same arithmetic.
struct Adder {
  u32 one = 1u, neg = ~0u;
  PIXFLOW_HD u32 add(u32 a, u32 c) const { return a * one + c; }
  PIXFLOW_HD u32 sub(u32 c, u32 a) const { return a * neg + c; }  // c - a
  /// a + b + c - mx - mn (the median of three when mx, mn are their max and min; exact on the
  /// word, u8_3x3_cn::vmed3's argument).
  PIXFLOW_HD u32 sum3_less2(u32 a, u32 b, u32 c, u32 mx, u32 mn) const {
    return sub(sub(add(add(a, b), c), mx), mn);
  }
};

/// A column word of three rows sorted per lane: min3, max3 (one VIMNMX3 each) and the middle
/// as the sum minus both.
PIXFLOW_HD Sorted3 sort3(u32 p, u32 q, u32 r, const Adder& f = {}) {
  const u32 lo = px::vmin3(p, q, r), hi = px::vmax3(p, q, r);
  return {lo, f.sum3_less2(p, q, r, hi, lo), hi};
}

/// The output bytes x0 .. x0+3 (.lo) and x0+4 .. x0+7 (.hi) of one row from the sorted column
/// words s[m] of W(m - CN) over its three window rows: per lane med3(max3 lows, med3 mids, min3
/// highs) of output word j's columns s[j], s[j+CN], s[j+2CN]. The mids' medians share sorted
/// pairs where two output words share two columns (med3(p <= q, x) = max(p, min(q, x))): CN = 1,
/// A and B the pair (s1, s2), C and D (s3, s4); CN = 3, A and D the pair (s3, s6), B and C none.
struct Out8 {
  u32 lo, hi;
};
PIXFLOW_HD u32 med3_pair(u32 p, u32 q, u32 x) {  // med3 of x and the sorted pair p <= q
  return px::vmax(p, px::vmin(q, x));
}
template <int CN>
PIXFLOW_HD Out8 median8_row(const Sorted3 (&s)[kWideCols<CN>], const Adder& f = {}) {
  static_assert(CN == 1 || CN == 3, "median8_row: 1 or 3 channels");
  u32 mid[4];
  if constexpr (CN == 1) {
    const u32 p12 = px::vmin(s[1].mid, s[2].mid), q12 = px::vmax(s[1].mid, s[2].mid);
    const u32 p34 = px::vmin(s[3].mid, s[4].mid), q34 = px::vmax(s[3].mid, s[4].mid);
    mid[0] = med3_pair(p12, q12, s[0].mid);
    mid[1] = med3_pair(p12, q12, s[3].mid);
    mid[2] = med3_pair(p34, q34, s[2].mid);
    mid[3] = med3_pair(p34, q34, s[5].mid);
  } else {
    const u32 p36 = px::vmin(s[3].mid, s[6].mid), q36 = px::vmax(s[3].mid, s[6].mid);
    mid[0] = med3_pair(p36, q36, s[0].mid);
    mid[3] = med3_pair(p36, q36, s[9].mid);
    mid[1] = med3_pair(px::vmin(s[1].mid, s[4].mid), px::vmax(s[1].mid, s[4].mid), s[7].mid);
    mid[2] = med3_pair(px::vmin(s[2].mid, s[5].mid), px::vmax(s[2].mid, s[5].mid), s[8].mid);
  }
  u32 o[4];
  PIXFLOW_UNROLL
  for (int j = 0; j < 4; ++j) {
    const u32 lo = px::vmax3(s[j].lo, s[j + CN].lo, s[j + 2 * CN].lo);
    const u32 hi = px::vmin3(s[j].hi, s[j + CN].hi, s[j + 2 * CN].hi);
    o[j] = f.sum3_less2(lo, mid[j], hi, px::vmax3(lo, mid[j], hi), px::vmin3(lo, mid[j], hi));
  }
  // A lane holds v * 257: byte 0 of a word is lane 0's v, byte 2 lane 1's.
  const u32 ab = px::byte_perm(o[0], o[1], 0x6240);  // x0, x0+1, x0+4, x0+5
  const u32 cd = px::byte_perm(o[2], o[3], 0x6240);  // x0+2, x0+3, x0+6, x0+7
  return {px::byte_perm(ab, cd, 0x5410), px::byte_perm(ab, cd, 0x7632)};
}

}  // namespace pixflow::cuda::u8_3x3_dup
