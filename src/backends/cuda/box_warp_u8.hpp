// The per-lane arithmetic of the CUDA box filter's warp-strip kernel for u8 x 1 (separable.cu,
// box_warp_u8_kernel), written as host + device code so that the CPU test
// (tests/box_test.cpp, Box.WarpKernelEmulationMatchesRef) runs exactly this code, lane by lane,
// with the warp's shuffles and scan replaced by reads of the other lanes' values.
//
// Why this shape: the previous streaming kernel (shared planes, two barriers a batch of 8 rows)
// was latency-bound at its barriers (bench/NOTES.md, "Box column-strip stream"). Here every warp
// is independent: no shared memory on the interior path and no block barrier in the row loop.
//
// Shape: a warp owns a strip of kWarpCols = 256 input columns (lane L: columns xb = xs + 8L ..
// xb + 7, one 8-byte load a row) and a segment of output rows. It outputs the outs_of(KW)
// columns whose whole window lies in the strip (240 at 9 wide, 224 at 31: the other 16 / 32
// columns are the horizontal halo, loaded and summed by both neighbouring warps); lane L writes
// the outputs of its own 8 columns. Per output row:
// 1. vertical: the lane keeps the kh-row sums of its 8 columns in 4 words of 16-bit lanes (ev0:
//    columns 0, 2; od0: 1, 3; ev1: 4, 6; od1: 5, 7; a sum is <= kMaxKh * 255 < 2^16); one
//    IADD3 a word adds the entering row and takes off the leaving one (exact mod 2^32: each
//    lane's true value ends in [0, 2^16), so no lane borrows in the result);
// 2. horizontal: P(c) = the sum of the column sums of strip columns 0 .. c; the window sum
//    of output column c is P(c + ra) - P(c - ax - 1) (ax = KW / 2, ra = KW - 1 - ax). No warp
//    scan: the lane's 8 local prefixes (its own columns only) and the totals of the lanes
//    between a window's two ends give the same difference (window_sums), read from lanes at
//    compile-time offsets (KW is a template parameter): 17 shuffles at 31 wide, 9 at 9 wide,
//    all independent (one shuffle deep, where the scan was 5 dependent shuffles deep + 1);
// 3. the finish: s = P(c + ra) - P(c - ax - 1) < 2^23, so 0x4B000000 + s (one IADD3 with the
//    subtraction) are the bits of the float 2^23 + s; minus 2^23 is s exactly, then
//    detail::RecipOddU8's FMA onto the 2^23 grid (odd n) leaves the mean in the low byte; or
//    min(s, 255) for the plain sum. Three PRMT pack 4 bytes, one 8-byte store a lane.
// Rows go in pairs (the kernel's row loop): both rows' vertical steps, then both horizontal
// chains in one basic block, then both stores, so that each scheduler has two independent
// chains from every warp (session 14's single-row loop issued 0.48 a scheduler a clock).
// Border columns: a lane whose 8 columns are not all inside the row gathers bytes through a
// table of source columns (lane_sources, made once; kConstCol: the constant; offsets relative to
// xb, so a gathering lane indexes from the same row pointer + xb as a loading one); border rows
// through row_ptr (the reference's border rule, nullptr for the constant).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "pixflow/border.hpp"
#include "src/backends/cuda/packed_u16x2.hpp"
#include "src/backends/cuda/remap_border.hpp"
#include "src/backends/cuda/rounded_f32.hpp"
#include "src/base/numeric.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::box_warp {

using u32 = std::uint32_t;

constexpr int kLanes = 32, kLaneCols = 8, kWarpCols = kLanes * kLaneCols;

// Launch shape (the kernel's; launch.cuh points here). kWarps warps a block, on kWarps adjacent
// strips of the same segment (their halo columns are the same sectors, so one warp's load is
// the other's L1 hit). kMinBlocks blocks a SM: a 72-register bound (65536 / (7 * 128) = 73),
// 28 warps a SM. Why 7 and not session 14's 8 (64 registers): the row loop holds two rows'
// horizontal chains at once (two independent chains a warp: 56 a SM, where 8 blocks of the
// single-row loop had 32), which at 64 registers spilled 8-32 bytes in 21 of the 28 instances
// beside the 16-register load ring.
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * kLanes;
constexpr int kMinBlocks = 7;
/// Blocks a SM of one instance: kMinBlocks, but 6 (an 80-register bound) for the 5-wide
/// unnormalised sum, which spilled 8 bytes at 72 (ptxas, session 15; the other 27: none).
constexpr int min_blocks(int kw, bool sum) {
  return kw == 5 && sum ? 6 : kMinBlocks;
}
// Segments: the fewest rows that still fill every SM's kMinBlocks blocks in one wave (plan),
// at least kMinSegRows. A segment first sums kh rows, so short segments load rows more than
// once, but only where the image is too small to fill the GPU otherwise, and those reloads hit
// L2. Each warp runs its segment as one dependent chain of kh - 1 + rows rows, so at small
// sizes the segment length is the kernel's time: at 16 (sessions 14-15) 1920x1080 9x9 ran 2 x
// 68 = 136 blocks, 4 warps a SM (ncu, session 16: achieved occupancy 5 %, 0.10 issued per
// scheduler, 18.7 us); at 4, 2 x 270 = 540 blocks and chains of 12 rows instead of 24. Fewer
// warps with longer segments measured slower (session 14, H100: 16 warps a SM, 9x9 113 -> 171
// us).
// At most kMaxSegRows, in several waves where one wave would take longer segments: measured
// (bench/micro/box_warp_shapes.cu, session 20, H100, 8192^2) 9x9 89.4 us at one wave's 81 rows,
// 78.9 / 80.0 / 83.1 / 106.3 at 48 / 32 / 16 / 8; 31x31 114.6 at 90, 99.5 / 98.0 / 104.5 / 134.7
// (the kh rows a segment sums first are loaded again, from L2). At 2100 x 8200 one wave's 27
// rows stay (38.4 / 48.2 us against 40.5 / 49.9 at 32).
constexpr int kMinSegRows = 4, kMaxSegRows = 32;
// Rows whose loads are in flight ahead of the row being summed (a register ring): the row loop
// takes rows in pairs and a warp's pair costs ~170 instructions, ~1400 clocks with 32 warps
// sharing a SM's 4 schedulers, while a DRAM load under full load takes ~1500-2000 clocks; 4
// rows (2 pairs) ahead cover it (16 registers). Measured (session 14, H100, single rows): 2 or
// 3 ahead with more warps a SM were slower.
constexpr int kAhead = 4;

// Windows the kernel takes: KW odd in [kMinKw, kMaxKw] (one instance each); kh up to kMaxKh
// (the schema's limit; 255 * 255 < 2^16 for the 16-bit column sums).
constexpr int kMinKw = 5, kMaxKw = 31, kMaxKh = 255;

/// Left halo of a strip in columns: the lowest output lane's window reaches back ax + 1
/// columns (P(c - ax - 1)), rounded up to whole lanes.
PIXFLOW_HD constexpr int pad_of(int kw) {
  return (kw / 2 + 1 + kLaneCols - 1) / kLaneCols * kLaneCols;
}
/// Outputs a strip: whole lanes whose windows end inside the strip.
PIXFLOW_HD constexpr int outs_of(int kw) {
  return (kWarpCols - pad_of(kw) - (kw - 1 - kw / 2)) / kLaneCols * kLaneCols;
}
PIXFLOW_HD constexpr int first_out_lane(int kw) {
  return pad_of(kw) / kLaneCols;
}
PIXFLOW_HD constexpr int end_out_lane(int kw) {
  return (pad_of(kw) + outs_of(kw)) / kLaneCols;
}

/// The image as the body sees it (host and device); on the GPU rows are 8-byte aligned (the
/// dispatch's condition).
struct Img {
  unsigned char* data;
  long long stride;
  int w, h;
};

struct Params {
  int kh;
  int seg_rows;    // output rows a segment
  long long segs;  // segments
  long long strips;
  float rcp;  // detail::RecipOddU8(kw * kh).rcp (normalised, odd n)
  BorderType border;
  u32 value;  // the constant, saturated to u8
};

/// First input column of lane `lane` of strip `strip` (a multiple of 8; may be negative; the
/// dispatch keeps widths under 2^30, so it fits an int).
PIXFLOW_HD int lane_col(int strip, int lane, int kw) {
  return strip * outs_of(kw) - pad_of(kw) + kLaneCols * lane;
}
/// The lane's 8 columns lie inside the row (one aligned 8-byte load).
PIXFLOW_HD bool lane_direct(int xb, int w) {
  return xb >= 0 && xb + kLaneCols <= w;
}
/// Marks a column of the constant in lane_sources' table.
constexpr int kConstCol = -2147483647 - 1;
/// Source columns of a gathering lane's 8 columns by the border rule, relative to xb
/// (kConstCol: the constant).
PIXFLOW_HD void lane_sources(int xb, int w, BorderType t, int* src) {
  for (int j = 0; j < kLaneCols; ++j) {
    const long long sx = detail::border_index(xb + j, w, t);
    src[j] = sx < 0 ? kConstCol : int(sx - xb);
  }
}

/// Row y by the border rule; nullptr for the constant. In 32 bits (remap_border.hpp's
/// border_index32, the reference's rule): detail::border_index's 64-bit remainder is a call
/// whose registers made the kernel spill at its 64-register bound.
PIXFLOW_HD const unsigned char* row_ptr(const Img& v, int y, BorderType t) {
  if (unsigned(y) >= unsigned(v.h)) {
    switch (t) {
      case BorderType::replicate:
        y = border_index32<BorderType::replicate>(y, v.h);
        break;
      case BorderType::reflect:
        y = border_index32<BorderType::reflect>(y, v.h);
        break;
      case BorderType::reflect101:
        y = border_index32<BorderType::reflect101>(y, v.h);
        break;
      case BorderType::wrap:
        y = border_index32<BorderType::wrap>(y, v.h);
        break;
      case BorderType::constant:
        return nullptr;
    }
  }
  return v.data + (long long)y * v.stride;
}

/// 8 bytes of a row: columns xb .. xb + 7, byte j in byte j % 4 of word j / 4.
struct Row8 {
  u32 lo, hi;
};
/// A row inside the image (no constant row); `rowx` points at the lane's column xb.
PIXFLOW_HD Row8 load8(const unsigned char* rowx, bool direct, const int* src, u32 value) {
  if (direct) {
#if defined(__CUDA_ARCH__)
    const uint2 v = *reinterpret_cast<const uint2*>(rowx);
    return {v.x, v.y};
#else
    Row8 r;
    std::memcpy(&r.lo, rowx, 4);
    std::memcpy(&r.hi, rowx + 4, 4);
    return r;
#endif
  }
  u32 b[kLaneCols];
  PIXFLOW_UNROLL
  for (int j = 0; j < kLaneCols; ++j) b[j] = src[j] == kConstCol ? value : u32(rowx[src[j]]);
  return {b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24, b[4] | b[5] << 8 | b[6] << 16 | b[7] << 24};
}
/// Any row: `row` from row_ptr (nullptr: the constant).
PIXFLOW_HD Row8 fetch8(const unsigned char* row, int xb, bool direct, const int* src, u32 value) {
  if (row == nullptr) return {value * 0x01010101u, value * 0x01010101u};
  return load8(row + xb, direct, src, value);
}
/// Row cursors (the kernel reads a segment's rows in order from three of them: the seed's,
/// the entering and the leaving rows'). Inside: a pointer at the lane's column xb, one add a
/// row. Border: the row index through row_ptr.
/// kDirect: every lane of the warp loads directly (interior strips), so no lane branches to
/// the gather path (its branch and reconvergence cost ~5 instructions a load in SASS).
template <bool kDirect>
struct InsideRows {
  static constexpr bool kPick = false;
  const unsigned char* p;
  long long stride;
  PIXFLOW_HD Row8 load(int, bool direct, const int* src, u32 value) const {
    return load8(p, kDirect || direct, src, value);
  }
  PIXFLOW_HD void next() { p += stride; }
};
struct BorderRows {
  static constexpr bool kPick = false;
  const Img* v;
  long long y;
  BorderType t;
  PIXFLOW_HD Row8 load(int xb, bool direct, const int* src, u32 value) const {
    return fetch8(row_ptr(*v, int(y), t), xb, direct, src, value);
  }
  PIXFLOW_HD void next() { ++y; }
};

/// Column p (|p| <= 2^30 + 16, w < 2^30) by the border rule, -1 for the constant: the
/// reference's rule in 32 bits (border_index32; detail::border_index's 64-bit remainder is a
/// call, and with it in plan_pick the 17..31-wide sum instances spilled 42 bytes).
PIXFLOW_HD int col_index32(int p, int w, BorderType t) {
  switch (t) {
    case BorderType::replicate:
      return border_index32<BorderType::replicate>(p, w);
    case BorderType::reflect:
      return border_index32<BorderType::reflect>(p, w);
    case BorderType::reflect101:
      return border_index32<BorderType::reflect101>(p, w);
    case BorderType::wrap:
      return border_index32<BorderType::wrap>(p, w);
    case BorderType::constant:
      break;
  }
  return unsigned(p) < unsigned(w) ? p : -1;
}

/// Edge lanes by words (the pick path). A lane whose 8 columns are not all inside the row
/// loads one aligned 8-byte word that lies inside the row (`off`, its own) and takes a second
/// one from a partner lane's load of the same row (2 shuffles); 6 PRMT pick its 8 bytes out of
/// those 16 (select8). Why: the gathering lanes' 8 dependent byte loads through the shared
/// table of sources (load8's slow path) made an edge warp's row 2.6x an interior row's
/// instructions with two exposed load round trips (SASS, session 15); in one wave each SM's
/// time is its slowest warp's, and every SM holds an edge strip. Now an edge warp's load is a
/// ring slot like any other (its latency hidden the same way) and its row costs 4 SHFL + 12
/// PRMT more.
/// Only columns an output reads need their border value: [-(ax + 1), w - 1 + ra] (the window
/// of output column c spans c - ax - 1 .. c + ra; the columns of lane L + db left of c - ax - 1
/// enter both q[7] and q[kb] and cancel). Bytes of other columns are any value that is the
/// same for every load of a row (the 16-bit column sums then never borrow).
/// A direct lane: its own word, the identity selectors. Planned once a thread.
struct Pick {
  int off;      // column of the own word (a multiple of 8, the whole word inside the row)
  int partner;  // lane whose own word (a direct lane's) is the second source
  bool ld;      // false: no load, the constant's word (the constant border, or unread bytes)
  u32 t_lo, t_hi, u_lo, u_hi, m_lo, m_hi;  // select8's selectors
};
/// The pick plan of lane `lane` (first column xb) of a strip; false when the lane's bytes are
/// not in at most two whole words of the row, one of them a direct lane's of the same warp, or
/// mix the constant and the row (the row's partial last word when w % 8 != 0, images narrower
/// than a few words): the warp then gathers (BorderRows, load8).
PIXFLOW_HD bool plan_pick(int xb, int lane, int w, BorderType t, int kw, Pick& pk) {
  pk = Pick{xb, lane, true, 0x3210u, 0x7654u, 0u, 0u, 0x3210u, 0x3210u};
  if (lane_direct(xb, w)) return true;
  const long long lo = -(kw / 2 + 1), hi = (long long)w - 1 + (kw - 1 - kw / 2);
  int wd[kLaneCols], by[kLaneCols];  // source word and byte; wd -1: unread, -2: the constant
  int words[2] = {0, 0}, nw = 0;
  bool cst = false;
  for (int j = 0; j < kLaneCols; ++j) {
    const long long col = (long long)xb + j;
    wd[j] = -1;
    by[j] = 0;
    if (col < lo || col > hi) continue;
    const int sx = col_index32(int(col), w, t);
    if (sx < 0) {
      wd[j] = -2;
      cst = true;
      continue;
    }
    wd[j] = sx / kLaneCols;
    by[j] = sx % kLaneCols;
    if (kLaneCols * (long long)wd[j] + kLaneCols > w) return false;  // the partial last word
    if (nw > 0 && words[0] == wd[j]) continue;
    if (nw > 1 && words[1] == wd[j]) continue;
    if (nw == 2) return false;
    words[nw++] = wd[j];
  }
  if (cst && nw > 0) return false;
  if (nw == 0) {  // the constant or unread: the constant's word, no load
    pk.ld = false;
    return true;
  }
  int own = words[0], other = words[nw - 1];
  if (nw == 2) {
    const int base = xb / kLaneCols - lane;  // word of lane 0 (xb is a multiple of 8)
    if (unsigned(other - base) < unsigned(kLanes)) {
      pk.partner = other - base;
    } else if (unsigned(own - base) < unsigned(kLanes)) {
      pk.partner = own - base;
      own = other;
      other = words[0];
    } else {
      return false;
    }
  }
  pk.off = kLaneCols * own;
  u32 st[2] = {0, 0}, su[2] = {0, 0}, sm[2] = {0, 0};
  for (int j = 0; j < kLaneCols; ++j) {
    const int h = j / 4, sh = 4 * (j % 4);
    if (nw == 2 && wd[j] == other) {
      su[h] |= u32(by[j]) << sh;
      sm[h] |= u32(4 + j % 4) << sh;
    } else {  // own word (unread bytes: its byte 0)
      st[h] |= u32(wd[j] == own ? by[j] : 0) << sh;
      sm[h] |= u32(j % 4) << sh;
    }
  }
  pk.t_lo = st[0];
  pk.t_hi = st[1];
  pk.u_lo = su[0];
  pk.u_hi = su[1];
  pk.m_lo = sm[0];
  pk.m_hi = sm[1];
  return true;
}
/// The lane's 8 bytes from its own word and its partner's (the same row's loads).
PIXFLOW_HD Row8 select8(Row8 own, Row8 par, const Pick& k) {
  const u32 tl = px::byte_perm(own.lo, own.hi, k.t_lo), th = px::byte_perm(own.lo, own.hi, k.t_hi);
  const u32 ul = px::byte_perm(par.lo, par.hi, k.u_lo), uh = px::byte_perm(par.lo, par.hi, k.u_hi);
  return {px::byte_perm(tl, ul, k.m_lo), px::byte_perm(th, uh, k.m_hi)};
}
/// The pick path's rows: the lane's own word of each row (kInside: every row of the segment
/// inside the image, a pointer at the own word moved a row at a time; else the row by
/// row_ptr, nullptr: the constant's row). The kernel then picks (kPick: its shuffles and
/// select8) where the row is used.
PIXFLOW_HD Row8 word8(const unsigned char* p) {
#if defined(__CUDA_ARCH__)
  const uint2 v = *reinterpret_cast<const uint2*>(p);
  return {v.x, v.y};
#else
  Row8 r;
  std::memcpy(&r.lo, p, 4);
  std::memcpy(&r.hi, p + 4, 4);
  return r;
#endif
}
template <bool kInside>
struct PickRows;
template <>
struct PickRows<true> {
  static constexpr bool kPick = true;
  const unsigned char* p;  // row y's column off
  long long stride;
  bool ld;
  u32 cw;  // the constant's word
  PIXFLOW_HD Row8 load(int, bool, const int*, u32) const { return ld ? word8(p) : Row8{cw, cw}; }
  PIXFLOW_HD void next() { p += stride; }
};
template <>
struct PickRows<false> {  // the rows as BorderRows'
  static constexpr bool kPick = true;
  const Img* v;
  long long y;
  BorderType t;
  int off;
  bool ld;
  u32 cw;
  PIXFLOW_HD Row8 load(int, bool, const int*, u32) const {
    const unsigned char* row = row_ptr(*v, int(y), t);
    return ld && row != nullptr ? word8(row + off) : Row8{cw, cw};
  }
  PIXFLOW_HD void next() { ++y; }
};

/// True when every row segment [ys, ys + n) reads (ys - ay - 1 .. ys + n - 1 - ay + kh - 1)
/// lies inside the image: the kernel then loads rows by load8, without the border rule.
PIXFLOW_HD bool segment_inside(long long ys, int n, int kh, int h) {
  const int ay = kh / 2;
  return ys - ay - 1 >= 0 && ys + n - 1 - ay + kh - 1 < h;
}

/// The lane's 8 column sums, two a word (16-bit lanes).
struct Cols {
  u32 ev0, od0, ev1, od1;
};
PIXFLOW_HD void enter(Cols& c, Row8 r) {
  c.ev0 += px::byte_perm(r.lo, 0, 0x4240);
  c.od0 += px::byte_perm(r.lo, 0, 0x4341);
  c.ev1 += px::byte_perm(r.hi, 0, 0x4240);
  c.od1 += px::byte_perm(r.hi, 0, 0x4341);
}
/// Next row: `in` enters, `out` leaves (one IADD3 a word).
PIXFLOW_HD void step(Cols& c, Row8 in, Row8 out) {
  c.ev0 = c.ev0 + px::byte_perm(in.lo, 0, 0x4240) - px::byte_perm(out.lo, 0, 0x4240);
  c.od0 = c.od0 + px::byte_perm(in.lo, 0, 0x4341) - px::byte_perm(out.lo, 0, 0x4341);
  c.ev1 = c.ev1 + px::byte_perm(in.hi, 0, 0x4240) - px::byte_perm(out.hi, 0, 0x4240);
  c.od1 = c.od1 + px::byte_perm(in.hi, 0, 0x4341) - px::byte_perm(out.hi, 0, 0x4341);
}

/// In place of a warp scan: the lane's 8 column sums unpacked (column order) and summed into
/// the lane-local inclusive prefixes q[k] = columns 0 .. k of this lane only (q[7]: the lane's
/// total). Why local: a window's sum needs the prefixes of at most 5 lanes, so the lanes'
/// totals in between (window_sums) replace the 5-step shuffle scan, whose dependent chain
/// (~150 clocks a row) the warp waited on (ncu, session 14: 0.48 issued a scheduler a clock).
/// The sums pair up (q[k] = q[k - 2] + c[k - 1] + c[k]): a chain of 4 adds, not 7.
/// q <= 8 * kMaxKh * 255 < 2^20.
PIXFLOW_HD void local_prefix(const Cols& c, u32 (&q)[kLaneCols]) {
  const u32 c1 = c.od0 & 0xffffu, c2 = c.ev0 >> 16, c3 = c.od0 >> 16;
  const u32 c4 = c.ev1 & 0xffffu, c5 = c.od1 & 0xffffu, c6 = c.ev1 >> 16, c7 = c.od1 >> 16;
  q[0] = c.ev0 & 0xffffu;
  q[1] = q[0] + c1;
  q[2] = q[0] + c1 + c2;
  q[3] = q[1] + c2 + c3;
  q[4] = q[2] + c3 + c4;
  q[5] = q[3] + c4 + c5;
  q[6] = q[4] + c5 + c6;
  q[7] = q[5] + c6 + c7;
}

/// Lane offsets a window of width KW reaches from the lane's 8 columns: output column j of lane
/// L sums strip columns (8 L + j - ax) .. (8 L + j + ra), i.e. P(8 L + a) - P(8 L + b) with
/// a = j + ra, b = j - ax - 1, P the strip's inclusive prefix. floor(a / 8) = da, floor(b / 8) =
/// db (b may be negative: shifted by 64 to keep the division a floor).
template <int KW>
struct Reach {
  static constexpr int ax = KW / 2, ra = KW - 1 - ax;
  static constexpr int da(int j) { return (j + ra) / kLaneCols; }
  static constexpr int ka(int j) { return (j + ra) % kLaneCols; }
  static constexpr int db(int j) { return (j - ax - 1 + 8 * kLaneCols) / kLaneCols - 8; }
  static constexpr int kb(int j) { return (j - ax - 1 + 8 * kLaneCols) % kLaneCols; }
  static constexpr int lo = (-ax - 1 + 8 * kLaneCols) / kLaneCols - 8;  // db(0), the least
  static constexpr int hi = (kLaneCols - 1 + ra) / kLaneCols;           // da(7), the most
  /// The value k of lane L + dl is read: a window end, or (k = 7) a lane's total between a
  /// window's two ends.
  static constexpr bool needed(int dl, int k) {
    for (int j = 0; j < kLaneCols; ++j)
      if ((da(j) == dl && ka(j) == k) || (db(j) == dl && kb(j) == k) ||
          (k == kLaneCols - 1 && db(j) <= dl && dl < da(j)))
        return true;
    return false;
  }
};

/// Window sums of the lane's 8 columns from lane-local prefixes: get(dl, k) is q[k] of lane
/// lane + dl (dl = 0: the lane's own; a shuffle otherwise, called once for each value needed).
/// With E(L) the sum of the totals of lanes left of L, P(8 L + k) = E(L) + q_L[k], so
///   s_j = q_{L+da}[ka] - q_{L+db}[kb] + (the totals q_{L+m}[7] of lanes m = db .. da - 1):
/// exact mod 2^32 (s < 2^23), hence equal to the scan's P(a) - P(b). Only output lanes'
/// results are meaningful (their sources lie inside the warp: pad_of / outs_of).
template <int KW, class Get>
PIXFLOW_HD void window_sums(Get&& get, u32 (&s)[kLaneCols]) {
  using R = Reach<KW>;
  constexpr int span = R::hi - R::lo + 1;
  u32 nb[span][kLaneCols] = {};  // unread entries stay 0 (dead after unrolling)
  PIXFLOW_UNROLL
  for (int d = 0; d < span; ++d) {
    PIXFLOW_UNROLL
    for (int k = 0; k < kLaneCols; ++k)
      if (R::needed(d + R::lo, k)) nb[d][k] = get(d + R::lo, k);
  }
  PIXFLOW_UNROLL
  for (int j = 0; j < kLaneCols; ++j) {
    u32 between = 0;
    PIXFLOW_UNROLL
    for (int m = R::db(j); m < R::da(j); ++m) between += nb[m - R::lo][kLaneCols - 1];
    s[j] = nb[R::da(j) - R::lo][R::ka(j)] + between - nb[R::db(j) - R::lo][R::kb(j)];
  }
}

/// The mean of an odd count n of a window sum s < 2^23 (RecipOddU8's rule, whose FMA result's
/// low byte it returns): 0x4B000000 + s are the bits of 2^23 + s.
PIXFLOW_HD u32 mean_odd(u32 s, float rcp) {
  const float f = sub_rn(bits_float(s + 0x4B000000u), 8388608.0f);
#if defined(__CUDA_ARCH__)
  return __float_as_uint(__fmaf_rn(f, rcp, 8388608.0f));
#else
  return float_bits(std::fma(f, rcp, 8388608.0f));
#endif
}
PIXFLOW_HD u32 saturated(u32 s) {
  return s < 255u ? s : 255u;
}
/// Low bytes of q0..q3 in one word.
PIXFLOW_HD u32 pack4(u32 q0, u32 q1, u32 q2, u32 q3) {
  return px::byte_perm(px::byte_perm(q0, q1, 0x0040), px::byte_perm(q2, q3, 0x0040), 0x5410);
}
template <bool kSum>
PIXFLOW_HD Row8 finish(const u32 (&s)[kLaneCols], float rcp) {
  u32 q[kLaneCols];
  PIXFLOW_UNROLL
  for (int j = 0; j < kLaneCols; ++j) q[j] = kSum ? saturated(s[j]) : mean_odd(s[j], rcp);
  return {pack4(q[0], q[1], q[2], q[3]), pack4(q[4], q[5], q[6], q[7])};
}

/// Stores an output lane's 8 bytes at columns xb .. (clipped to the row); `rowx` points at
/// column xb.
PIXFLOW_HD void store8(unsigned char* rowx, int xb, int w, Row8 r) {
  if (xb + kLaneCols <= w) {
#if defined(__CUDA_ARCH__)
    *reinterpret_cast<uint2*>(rowx) = make_uint2(r.lo, r.hi);
#else
    std::memcpy(rowx, &r.lo, 4);
    std::memcpy(rowx + 4, &r.hi, 4);
#endif
    return;
  }
  for (int j = 0; j < kLaneCols && xb + j < w; ++j)
    rowx[j] = static_cast<unsigned char>((j < 4 ? r.lo : r.hi) >> (8 * (j % 4)));
}

/// The launch plan (host): strips, rows a segment, segments.
struct Plan {
  long long strips, segs;
  int seg_rows;
};
/// One wave of whole blocks (segments of at most kMaxSegRows rows: then several waves): the
/// grid is ceil(strips / kWarps) x segs blocks, per_sm a SM (min_blocks of the instance).
/// Why blocks and not warps: session 14's plan filled 32 warps a SM counting warps (4165 at 9x9)
/// but launched 9 x 119 = 1071 blocks for 1056 slots (31x31: 10 x 114 = 1140), a second wave
/// of 15 / 84 blocks that each ran a whole segment alone (ncu: "1 full wave and a partial
/// wave"; achieved occupancy 27 % of 50 %). Now 8192^2: 9x9 9 x 116 = 1044 blocks of 71-row
/// segments, 31x31 10 x 104 = 1040 of 79.
inline Plan plan(long long w, long long h, int kw, long long sm_count, int per_sm = kMinBlocks) {
  Plan pl;
  pl.strips = (w + outs_of(kw) - 1) / outs_of(kw);
  const long long bx = (pl.strips + kWarps - 1) / kWarps;
  long long target = sm_count * per_sm / bx;
  if (target < 1) target = 1;
  long long rows = (h + target - 1) / target;
  if (rows > kMaxSegRows) rows = kMaxSegRows;
  if (rows < kMinSegRows) rows = kMinSegRows;
  pl.seg_rows = int(rows < h ? rows : h);
  pl.segs = (h + pl.seg_rows - 1) / pl.seg_rows;
  return pl;
}

/// True when the kernel takes the window (rows 8-byte aligned are the dispatch's other
/// condition; any size): KW odd in range, the column sums in 16 bits, and the mean by
/// RecipOddU8 (n odd: kh odd) or the saturated sum.
inline bool takes(int kw, int kh, bool normalize) {
  return kw >= kMinKw && kw <= kMaxKw && (kw & 1) && kh >= 1 && kh <= kMaxKh &&
         (!normalize || (kh & 1));
}

inline Params params_of(int kw, int kh, const Border& b, const Plan& pl) {
  return Params{kh,
                pl.seg_rows,
                pl.segs,
                pl.strips,
                detail::RecipOddU8(std::uint32_t(kw) * std::uint32_t(kh)).rcp,
                b.type,
                detail::saturate_cast<std::uint8_t>(b.value)};
}

}  // namespace pixflow::cuda::box_warp
