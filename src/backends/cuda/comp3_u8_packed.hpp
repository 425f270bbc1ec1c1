// The 3x3 composites (open, close, tophat, blackhat, gradient) of one u8 channel in one pass
// (morphology.cu, morph3_comp_u8_kernel and morph3_grad_u8_kernel): a thread's rows as host +
// device code, so that tests/comp3_packed_test.cpp runs the very body the kernel runs on the CPU
// over whole images under every border and compares it with the reference.
//
// Layout (u8_3x3_dup.hpp): two pixels a 32-bit word, one a 16-bit lane, each byte v held as
// v * 257 (both halves of its lane), so that one PRMT builds a lane pair from tile words and
// every min/max is one VIMNMX(3).U16x2. A thread owns the output pixels x0 .. x0+3 of R rows.
// - First pass (erode for open/tophat, dilate for close/blackhat) for the intermediate pixels
//   x0-1 .. x0+4 the second pass reads, in the lane pairs (x0-1, x0), (x0+1, x0+2), (x0+3,
//   x0+4) (Mid3): the vertical op of the source pairs (x0-2, x0-1) .. (x0+4, x0+5) (Src4) over
//   three rows, then the horizontal op of a pair, the pair between it and the next, the next.
//   R + 2 intermediate rows from R + 4 source rows, rolled through three of each (registers).
// - Second pass on three intermediate rows as the single dilate/erode does on source rows.
// - tophat = src - min(src, open), blackhat = max(close, src) - src: per lane, the saturating
//   u8 difference (no lane borrows: each lane's difference is >= 0); gradient = dilate - erode
//   of the source (no intermediate; max >= min). The subtractions as IMAD (u8_3x3_dup::Adder:
//   the FMA pipe, not the integer pipe of the VIMNMX and PRMT).
// Border rule: each pass applies it to its own input, as core's passes do. The source tile is
// loaded through the rule, so intermediate pixels inside the image are right; the second pass
// also reads the intermediate at x = -1, x = w, y = -1, y = h, which must be the rule applied to
// the intermediate (not the first pass computed there from the source's border). Fix (edge
// tiles only) replaces them: the pixel the rule maps them to is within 2 of them, so inside
// the thread's own six intermediate pixels (x) or its three rolling rows (y), or the constant.
// wrap maps across the image: not taken (composite3_covers).
#pragma once

#include <cstdint>

#include "pixflow/border.hpp"
#include "src/backends/cuda/packed_u16x2.hpp"
#include "src/backends/cuda/u8_3x3_dup.hpp"
#include "src/base/numeric.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::comp3_u8 {

using u32 = std::uint32_t;
using u8_3x3_dup::Adder;

/// The composites with an intermediate (gradient has its own body, gradient_row).
enum Kind : int { kOpen, kClose, kTophat, kBlackhat };
/// The first pass is a dilate (max) for close and blackhat, an erode for open and tophat.
template <int K>
constexpr bool kFirstMax = K == kClose || K == kBlackhat;

template <bool kMax>
PIXFLOW_HD u32 op3(u32 a, u32 b, u32 c) {
  return kMax ? px::vmax3(a, b, c) : px::vmin3(a, b, c);
}
/// (lane 1 of l, lane 0 of r).
PIXFLOW_HD u32 between(u32 l, u32 r) {
  return px::byte_perm(l, r, 0x5432);
}

/// Source lane pairs of one tile row: w[0] = (x0-2, x0-1), w[1] = (x0, x0+1), w[2] = (x0+2,
/// x0+3), w[3] = (x0+4, x0+5), from the tile words a, b, c = row bytes x0-4 .. x0-1, x0 ..
/// x0+3, x0+4 .. x0+7.
struct Src4 {
  u32 w[4];
};
PIXFLOW_HD Src4 src_cols(u32 a, u32 b, u32 c) {
  return {{px::byte_perm(a, a, 0x3322), px::byte_perm(b, b, 0x1100), px::byte_perm(b, b, 0x3322),
           px::byte_perm(c, c, 0x1100)}};
}

/// Intermediate lane pairs of one row: m[0] = (x0-1, x0), m[1] = (x0+1, x0+2), m[2] = (x0+3,
/// x0+4) (u8_3x3_dup::columns' pairs, so the second pass is the single op's).
struct Mid3 {
  u32 m[3];
};
template <bool kMax>
PIXFLOW_HD Mid3 first_pass(const Src4& r0, const Src4& r1, const Src4& r2) {
  u32 v[4];
  PIXFLOW_UNROLL
  for (int k = 0; k < 4; ++k) v[k] = op3<kMax>(r0.w[k], r1.w[k], r2.w[k]);
  Mid3 m;
  PIXFLOW_UNROLL
  for (int j = 0; j < 3; ++j) m.m[j] = op3<kMax>(v[j], between(v[j], v[j + 1]), v[j + 1]);
  return m;
}

/// The second pass over three intermediate rows: o0 = pixels (x0, x0+1), o1 = (x0+2, x0+3).
template <bool kMax>
PIXFLOW_HD void second_pass(const Mid3& a, const Mid3& b, const Mid3& c, u32& o0, u32& o1) {
  u32 q[3];
  PIXFLOW_UNROLL
  for (int j = 0; j < 3; ++j) q[j] = op3<kMax>(a.m[j], b.m[j], c.m[j]);
  o0 = op3<kMax>(q[0], between(q[0], q[1]), q[1]);
  o1 = op3<kMax>(q[1], between(q[1], q[2]), q[2]);
}

/// The output bytes x0 .. x0+3 from the second pass's pairs and the source row's pairs s
/// (tophat, blackhat). A lane holds 257 d for its result d: byte 0 of the word is lane 0's d,
/// byte 2 lane 1's.
template <int K>
PIXFLOW_HD u32 finish(u32 o0, u32 o1, const Src4& s, const Adder& f) {
  if constexpr (K == kTophat) {
    o0 = f.sub(s.w[1], px::vmin(o0, s.w[1]));
    o1 = f.sub(s.w[2], px::vmin(o1, s.w[2]));
  } else if constexpr (K == kBlackhat) {
    o0 = f.sub(px::vmax(o0, s.w[1]), s.w[1]);
    o1 = f.sub(px::vmax(o1, s.w[2]), s.w[2]);
  }
  (void)s;
  (void)f;
  return px::byte_perm(o0, o1, 0x6420);
}

/// gradient of one output row from u8_3x3_dup::columns' words p[row][0..2] of its three rows.
PIXFLOW_HD u32 gradient_row(const u32 (&p0)[3], const u32 (&p1)[3], const u32 (&p2)[3],
                            const Adder& f) {
  u32 hi[3], lo[3];
  PIXFLOW_UNROLL
  for (int j = 0; j < 3; ++j) {
    hi[j] = px::vmax3(p0[j], p1[j], p2[j]);
    lo[j] = px::vmin3(p0[j], p1[j], p2[j]);
  }
  const u32 h0 = px::vmax3(hi[0], between(hi[0], hi[1]), hi[1]);
  const u32 h1 = px::vmax3(hi[1], between(hi[1], hi[2]), hi[2]);
  const u32 l0 = px::vmin3(lo[0], between(lo[0], lo[1]), lo[1]);
  const u32 l1 = px::vmin3(lo[1], between(lo[1], lo[2]), lo[2]);
  return px::byte_perm(f.sub(h0, l0), f.sub(h1, l1), 0x6420);
}

/// The edge fixes of one thread (x0: its first output column, y0: its first output row; an
/// image of w x h). Horizontal: up to two lane copies applied in turn to every intermediate row
/// (slot 0: x = -1, slot 1: x = w): word j of the row = byte_perm(word j, src, selector), the
/// selector of slot s in bits 16 s .. 16 s + 15 of sel[j] (PRMT reads bits 0 .. 15 only) and src
/// = word srcw(s) of the row (3: the constant word); identity where nothing is fixed.
/// Vertical, at output row i (rows a, b, c of the intermediate at y0+i-1 .. y0+i+1): top (i = 0
/// and y0 = 0: a is y = -1) and bottom (i = bottom_i: c is y = h) take 0: b, 1: the other of a,
/// c, 2: the constant, -1: nothing. Packed (the vertical fields in 4-bit fields of v, each + 1,
/// srcw's two words in bits 16 .. 19) so that the edge path of the short shape (a 40-register
/// bound) holds it in 5 registers: with separate fields tophat and blackhat spilled there.
struct Fix {
  u32 sel[3];
  int v;
  u32 cw;  // the constant border value in every byte
  PIXFLOW_HD int top() const { return (v & 15) - 1; }
  PIXFLOW_HD int bottom() const { return ((v >> 4) & 15) - 1; }
  PIXFLOW_HD int bottom_i() const { return ((v >> 8) & 15) - 1; }
  PIXFLOW_HD int srcw(int s) const { return (v >> (16 + 2 * s)) & 3; }
};

/// detail::border_index(p, len, type) for p = -1 (low) or p = len, one step outside, for every
/// rule but wrap and constant, without its 64-bit remainders (they spilled the short shape's edge
/// path): replicate and reflect repeat the edge pixel, reflect101 takes its neighbour (the edge
/// pixel itself when len = 1).
PIXFLOW_HD long long edge_index(bool low, long long len, BorderType type) {
  const long long in = type == BorderType::reflect101 && len > 1 ? 1 : 0;  // steps inward
  return low ? in : len - 1 - in;
}

/// Slot s's fix of make_fix: the 16-bit selector for word j (0x3210: unchanged) and the source
/// word, for the intermediate pixel x (outside the image, x0-1 <= x <= x0+4), which takes the
/// pixel the rule maps it to (inside, in the same range: within 2 of x for every rule but wrap)
/// or the constant.
struct LaneFix {
  int ld = -1;       // the lane fixed, 0 .. 5 (-1: none)
  u32 sel = 0x3210;  // its word's selector
  int word = 0;      // the source word: 0 .. 2, 3 = the constant
};
PIXFLOW_HD LaneFix lane_fix(long long x, long long x0, long long w, BorderType type) {
  LaneFix l;
  u32 nib = 4;  // the source word's byte 0 (any byte of a lane holds its value)
  l.word = 3;
  if (type != BorderType::constant) {
    const long long xs = edge_index(x < 0, w, type);
    const int ls = int(xs - (x0 - 1));
    if (ls < 0 || ls > 5) return LaneFix{};  // wrap: never launched (composite3_covers)
    l.word = ls / 2;
    nib = 4 + 2 * u32(ls % 2);
  }
  l.ld = int(x - (x0 - 1));
  l.sel = l.ld % 2 == 0 ? 0x3200u | nib << 4 | nib : nib << 12 | nib << 8 | 0x10u;
  return l;
}

// Straight-line code into f's fields (run-time indices into f put it in local memory).
PIXFLOW_HD Fix make_fix(long long x0, long long y0, long long w, long long h, BorderType type,
                        std::uint8_t value, int R) {
  Fix f;
  const LaneFix l0 = x0 == 0 ? lane_fix(-1, x0, w, type) : LaneFix{};
  const LaneFix l1 = x0 < w && w <= x0 + 4 ? lane_fix(w, x0, w, type) : LaneFix{};
  PIXFLOW_UNROLL
  for (int j = 0; j < 3; ++j)
    f.sel[j] = (l0.ld >= 0 && l0.ld / 2 == j ? l0.sel : 0x3210u) |
               (l1.ld >= 0 && l1.ld / 2 == j ? l1.sel : 0x3210u) << 16;
  f.cw = u32(value) * 0x01010101u;
  const bool cst = type == BorderType::constant;
  int top = -1, bottom = -1, bottom_i = -1;
  if (y0 == 0) top = cst ? 2 : edge_index(true, h, type) == 0 ? 0 : 1;
  const long long ib = h - 1 - y0;
  if (ib >= 0 && ib < R) {
    bottom_i = int(ib);
    bottom = cst ? 2 : edge_index(false, h, type) == h - 1 ? 0 : 1;
  }
  f.v = (top + 1) | (bottom + 1) << 4 | (bottom_i + 1) << 8 | l0.word << 16 | l1.word << 18;
  return f;
}

PIXFLOW_HD void fix_row(Mid3& m, const Fix& f) {
  PIXFLOW_UNROLL
  for (int s = 0; s < 2; ++s) {
    const int k = f.srcw(s);
    const u32 src = k == 0 ? m.m[0] : k == 1 ? m.m[1] : k == 2 ? m.m[2] : f.cw;
    PIXFLOW_UNROLL
    for (int j = 0; j < 3; ++j) m.m[j] = px::byte_perm(m.m[j], src, f.sel[j] >> (16 * s));
  }
}

/// One tile's R output rows of a thread, K with an intermediate. words(k, a, b, c) (k = 0 ..
/// R+3): the words of bytes x0-4 .. x0-1, x0 .. x0+3, x0+4 .. x0+7 of source row y0-2+k (a tile
/// loaded through the border rule, or the rows8 shape's registers: of the bytes outside the
/// image only the pixel and the row just outside matter, the others feed intermediate pixels
/// that f replaces); put(i, v) stores output row y0+i's bytes x0 .. x0+3, i = 0 .. R-1 in order.
/// kEdge: apply f (the tiles whose outputs read the intermediate outside the image).
template <int K, int R, bool kEdge, class Words, class Put>
PIXFLOW_HD void comp3_rows(const Words& words, const Fix& f, const Adder& ad, Put&& put) {
  constexpr bool kMax = kFirstMax<K>;
  Src4 s[3];
  Mid3 m[3];
  PIXFLOW_UNROLL
  for (int k = 0; k < R + 4; ++k) {
    u32 wa, wb, wc;
    words(k, wa, wb, wc);
    s[k % 3] = src_cols(wa, wb, wc);
    if (k < 2) continue;
    // Intermediate row k-2 (y0-3+k) from source rows k-2 .. k.
    Mid3 mm = first_pass<kMax>(s[(k + 1) % 3], s[(k + 2) % 3], s[k % 3]);
    if constexpr (kEdge) fix_row(mm, f);
    m[(k - 2) % 3] = mm;
    if (k < 4) continue;
    // Output row i = k-4 from intermediate rows i .. i+2; its source row is k-2.
    const int i = k - 4;
    Mid3 a = m[i % 3], b = m[(i + 1) % 3], c = m[(i + 2) % 3];
    if constexpr (kEdge) {
      // Word by word (a struct chosen by a run-time condition went to local memory).
      const int top = f.top(), bottom = f.bottom();
      if (i == 0 && top >= 0) {
        PIXFLOW_UNROLL
        for (int j = 0; j < 3; ++j) a.m[j] = top == 2 ? f.cw : top == 0 ? b.m[j] : c.m[j];
      }
      if (i == f.bottom_i()) {
        PIXFLOW_UNROLL
        for (int j = 0; j < 3; ++j) c.m[j] = bottom == 2 ? f.cw : bottom == 0 ? b.m[j] : a.m[j];
      }
    }
    u32 o0, o1;
    second_pass<!kMax>(a, b, c, o0, o1);
    put(i, finish<K>(o0, o1, s[(k + 1) % 3], ad));
  }
}

/// gradient's R output rows (the 3x3 window of the single ops: words(k, a, b, c), k = 0 ..
/// R+1, the words of bytes x0-4 .. x0+7 of source row y0-1+k).
template <int R, class Words, class Put>
PIXFLOW_HD void gradient_rows(const Words& words, const Adder& ad, Put&& put) {
  u32 p[3][3];
  PIXFLOW_UNROLL
  for (int k = 0; k < R + 2; ++k) {
    u32 wa, wb, wc;
    words(k, wa, wb, wc);
    u32(&c)[3] = p[k % 3];
    u8_3x3_dup::columns(wa, wb, wc, c[0], c[1], c[2]);
    if (k >= 2) put(k - 2, gradient_row(p[(k + 1) % 3], p[(k + 2) % 3], p[k % 3], ad));
  }
}

}  // namespace pixflow::cuda::comp3_u8
