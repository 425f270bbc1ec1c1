// The channel arithmetic of the packed 3x3 kernels on u8 x 3 (u8_3x3.cuh with CN = 3), as
// host + device code so that tests/u8_3x3_cn_test.cpp runs it on the CPU: which pixel and
// channel a row byte belongs to (the tile loader's edge bytes), and the six packed words a
// thread's four output bytes need (columns3). The kernels treat a u8 x 3 row as bytes: output
// byte e takes bytes e - 3, e, e + 3 of three rows (one channel, three pixels). The 3x3 median
// on those words (median3_u8_kernel, CN = 3) is here too: its column sorts and its median of
// sorted columns run on the CPU in the same test.
#pragma once

#include <cstdint>

#include "src/backends/cuda/packed_u16x2.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::u8_3x3_cn {

using u32 = std::uint32_t;

/// Pixel (floor(e / cn)) and channel of row byte e, e of any sign.
PIXFLOW_HD void pixel_of_byte(long long e, int cn, long long& px, int& ch) {
  const long long in = e < 0 ? -1 - e : e;  // e < 0: mirror onto 0.. so the division floors
  const long long q = in / cn;
  const int r = int(in - q * cn);
  px = e < 0 ? -1 - q : q;
  ch = e < 0 ? cn - 1 - r : r;
}

/// The packed 16-bit-lane words of one tile row for a thread whose first output byte is x0,
/// from the tile words a, b, c = row bytes x0-4 .. x0-1, x0 .. x0+3, x0+4 .. x0+7: output
/// lanes (x0, x0+1) take l0, c0, r0 = lanes (x0-3, x0-2), (x0, x0+1), (x0+3, x0+4); lanes
/// (x0+2, x0+3) take l1, c1, r1 = (x0-1, x0), (x0+2, x0+3), (x0+5, x0+6). 8 PRMT (selector
/// nibble 4 of the zero word gives each lane's zero high byte).
struct Cols3 {
  u32 l0, c0, r0, l1, c1, r1;
};
PIXFLOW_HD Cols3 columns3(u32 a, u32 b, u32 c) {
  Cols3 k;
  k.l0 = px::byte_perm(a, 0, 0x4241);                            // a1, a2
  k.c0 = px::byte_perm(b, 0, 0x4140);                            // b0, b1
  k.r0 = px::byte_perm(px::byte_perm(b, c, 0x0043), 0, 0x5140);  // b3, c0
  k.l1 = px::byte_perm(px::byte_perm(a, b, 0x0043), 0, 0x5140);  // a3, b0
  k.c1 = px::byte_perm(b, 0, 0x4342);                            // b2, b3
  k.r1 = px::byte_perm(c, 0, 0x4241);                            // c1, c2
  return k;
}

// ---- 3x3 median on columns3's words (median3_u8_kernel, CN = 3) ----------------------------
// Per lane: med3(max3(column lows), med3(column mids), min3(column highs)) of the three window
// columns sorted vertically (the CN = 1 kernel's rule, u8_3x3.cuh). At CN = 3 a thread's two
// output words have no column word in common (l1 = (x0-1, x0) is no lane pair of l0, c0, r0),
// so each row's six words are sorted on their own; what is shared is the sorted pair of the
// middle rows between the two output rows that both contain it (rows i+1, i+2 serve outputs i
// and i+1), as at CN = 1: per output row 6 x 4 + 6 / 2 x 2 = 30 min/max for the column sorts
// and 2 x 10 for the medians, 50 for 4 output bytes (CN = 1: 12 + 3 + 20 = 35 and 6 PRMT).

/// Per lane min and max of two rows' six words (the sorted middle pair of two output rows).
PIXFLOW_HD void sort_pair(const Cols3& a, const Cols3& b, Cols3& lo, Cols3& hi) {
  lo = {px::vmin(a.l0, b.l0), px::vmin(a.c0, b.c0), px::vmin(a.r0, b.r0),
        px::vmin(a.l1, b.l1), px::vmin(a.c1, b.c1), px::vmin(a.r1, b.r1)};
  hi = {px::vmax(a.l0, b.l0), px::vmax(a.c0, b.c0), px::vmax(a.r0, b.r0),
        px::vmax(a.l1, b.l1), px::vmax(a.c1, b.c1), px::vmax(a.r1, b.r1)};
}

/// Median of three per lane: the sum minus the largest and the smallest. Exact for any lane
/// values (the kernels' lanes hold v * 257, u8_3x3_dup.hpp): the word arithmetic is the lanes'
/// with carries, modulo 2^32, and the lanes' medians (each < 2^16) fit the word.
PIXFLOW_HD u32 vmed3(u32 a, u32 b, u32 c) {
  return a + b + c - px::vmax3(a, b, c) - px::vmin3(a, b, c);
}

/// The 3x3 median per lane of one output word: p <= q (per lane) the sorted middle pair of its
/// three columns' words (left, centre, right), x the third row's words.
PIXFLOW_HD u32 median3_word(u32 pl, u32 ql, u32 xl, u32 pc, u32 qc, u32 xc, u32 pr, u32 qr,
                            u32 xr) {
  // x inserted into p <= q: (min(p, x), max(p, min(x, q)), max(q, x)); the lows' max, the
  // mids' median and the highs' min of the three columns.
  const u32 lo = px::vmax3(px::vmin(pl, xl), px::vmin(pc, xc), px::vmin(pr, xr));
  const u32 mid = vmed3(px::vmax(pl, px::vmin(xl, ql)), px::vmax(pc, px::vmin(xc, qc)),
                        px::vmax(pr, px::vmin(xr, qr)));
  const u32 hi = px::vmin3(px::vmax(ql, xl), px::vmax(qc, xc), px::vmax(qr, xr));
  return vmed3(lo, mid, hi);
}

/// The 4 output bytes (x0 .. x0+3, byte j = output byte x0 + j) of one output row: lo <= hi
/// the sorted pair of two of its window rows (sort_pair), x its third row's words.
PIXFLOW_HD u32 median3_row(const Cols3& lo, const Cols3& hi, const Cols3& x) {
  const u32 o0 = median3_word(lo.l0, hi.l0, x.l0, lo.c0, hi.c0, x.c0, lo.r0, hi.r0, x.r0);
  const u32 o1 = median3_word(lo.l1, hi.l1, x.l1, lo.c1, hi.c1, x.c1, lo.r1, hi.r1, x.r1);
  return px::byte_perm(o0, o1, 0x6420);  // the lanes' low bytes: x0, x0+1, x0+2, x0+3
}

}  // namespace pixflow::cuda::u8_3x3_cn
