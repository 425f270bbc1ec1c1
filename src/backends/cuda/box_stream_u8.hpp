// The per-thread body of the CUDA box filter's streaming kernel for u8 (separable.cu,
// box_stream_u8_kernel), written as host + device code so that the CPU test
// (tests/box_test.cpp, Box.StreamKernelEmulationMatchesRef) runs exactly this code.
//
// Shape: a block of kThreads threads owns a strip of output pixels (sp, a multiple of kRun)
// and a segment of output rows. Its input strip is kThreads 32-bit words wide (one word column
// a thread), starting at pixel xp = floor4(x0 - kw/2) so that word loads are aligned. The
// block walks its segment in batches of kRows rows:
// 1. vertical: each thread keeps the kh-row sums of its 4 byte columns in two words of 16-bit
//    lanes (ev: bytes 0, 2; od: bytes 1, 3; a sum is <= 255 * 255), adds the entering row,
//    writes the sums, subtracts the leaving row (re-read from global memory: L1/L2): the cost
//    does not depend on kh. Sums go to shared memory as the float bits of 2^23 + c, one plane
//    per channel, position p = tile pixel - u at p + p / 32 (one skipped slot every 32: the
//    threads of a warp read runs 32 positions apart, which then fall in different banks);
// 2. horizontal: each thread forms kRun outputs of one row and channel by a running sum
//    S += C(p + kw) - C(p): every value is an integer below 2^24 (S <= 255 * 255 * 255), so the
//    float additions are exact; the seed S(0) is an integer sum of the kw biased words;
// 3. the mean: RecipOddU8's one FMA onto the 2^23 grid (odd n < 32768; the result's low byte
//    is the mean), min(S, 255) + 2^23 for the saturated sum, else RecipU32 on the integer;
//    bytes staged in shared memory and stored 16 bytes a thread along rows.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "pixflow/border.hpp"
#include "src/backends/cuda/packed_u16x2.hpp"
#include "src/backends/cuda/rounded_f32.hpp"
#include "src/base/numeric.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::box_stream {

using u32 = std::uint32_t;

// Launch shape. kThreads threads = the strip's word columns (1024 input bytes); kRows rows
// a batch (the planes: kRows x 1024 floats = 32 KB + the 9 KB stage, under 48 KB, so ~5
// blocks a SM by shared memory); kRun outputs a thread (the seed's kw loads are spread over
// kRun outputs, and kRows * 1024 / kRun = 256 items: one a thread).
constexpr int kThreads = 256;
constexpr int kTileBytes = 4 * kThreads;
constexpr int kRows = 8;
constexpr int kRun = 32;
// Blocks a SM the registers must allow (64 a thread): 4 x 8 warps, and the segment rule below
// sizes the grid for that many.
constexpr int kMinBlocks = 4;
// The even-window finish (RecipU32: a 64-bit product) spilled 16 bytes at 64 registers (u8x1,
// ptxas sm_90): 3 blocks a SM for it (even windows are not the benchmark's cases).
constexpr int kMinBlocksExact = 3;
// Segments: about kBlocksPerSm blocks a SM in one wave (kSmCount in launch.cuh), each at least
// kMinSegRows rows (a segment first sums kh - 1 rows). Strips narrower than kMinStrip pixels
// (kw close to 1024 / cn) go to the byte-tile kernel.
constexpr int kBlocksPerSm = kMinBlocks;
constexpr int kMinSegRows = 16;
constexpr int kMinStrip = 64;

/// Floats per plane row for cn channels: the tile's pixels (and one partial), skewed, and two
/// spare words at the end.
PIXFLOW_HD constexpr int plane_pitch(int cn) {
  return (kTileBytes / cn + 1) + (kTileBytes / cn + 1) / 32 + 2;
}
PIXFLOW_HD constexpr int skew(int p) {
  return p + (p >> 5);
}
// Stage: kRows rows of kTileBytes bytes, a skipped word every 8 (a thread's 32 outputs are 8
// words; 32 threads at 9-word steps hit 32 banks).
constexpr int kStagePitch = kTileBytes / 4 + kTileBytes / 32 + 1;
PIXFLOW_HD constexpr int stage_word(int wd) {
  return wd + (wd >> 3);
}
PIXFLOW_HD constexpr int plane_words(int cn) {
  return kRows * cn * plane_pitch(cn);
}

enum Mode { kOdd = 0, kSum = 1, kExact = 2 };

/// The image as the body sees it (host and device).
struct Img {
  unsigned char* data;
  long long stride;
  int w, h, cn;
};

struct Params {
  int kw, kh, sp;          // window, output pixels a strip
  int seg_rows;            // output rows a segment (a multiple of kRows)
  int segs;                // segments
  float rcp;               // kOdd
  detail::RecipU32 recip;  // kExact
  BorderType border;
  u32 value4;  // the constant, saturated, in every byte
};

/// Where a block's strip lies: outputs x0 .. x0 + sp - 1; tile pixel t = input pixel xp + t
/// (xp a multiple of 4: byte xs = xp * cn is word aligned); output x0 + j's window starts at
/// tile pixel u + j (plane position j); nwords word columns hold every pixel it needs.
struct Strip {
  long long x0, xs;
  int u, nwords;
};
PIXFLOW_HD Strip strip_of(long long bx, int sp, int kw, int cn) {
  Strip s;
  s.x0 = bx * sp;
  const long long a = s.x0 - kw / 2;
  const long long xp = (a >> 2) * 4;  // floor to 4 (arithmetic shift)
  s.u = int(a - xp);
  s.xs = xp * cn;
  s.nwords = ((s.u + sp + kw - 1) * cn + 3) / 4;
  return s;
}

/// Source of a thread's word column: a word load at `off` of a row (`direct`: inside the row,
/// aligned), else 4 bytes at b[j] by the border rule (-1: the constant).
struct WordSrc {
  long long off;
  int b[4];
  bool direct;
};
PIXFLOW_HD WordSrc word_src(const Strip& s, int w, const Img& v, BorderType t, bool aligned) {
  WordSrc r;
  const long long wc = (long long)v.w * v.cn;
  r.off = s.xs + 4LL * w;
  r.direct = aligned && r.off >= 0 && r.off + 4 <= wc;
  for (int j = 0; j < 4; ++j) {
    const long long e = r.off + j;
    if (e >= 0 && e < wc) {
      r.b[j] = int(e);
      continue;
    }
    // Pixel and channel of sample e (floor division).
    const long long px = e >= 0 ? e / v.cn : -((-e + v.cn - 1) / v.cn);
    const int ch = int(e - px * v.cn);
    const long long sx = detail::border_index(px, v.w, t);
    r.b[j] = sx < 0 ? -1 : int(sx * v.cn + ch);
  }
  return r;
}

/// Shared-memory slots (u32 index into one row's planes) of a word column's 4 bytes; -1 for a
/// byte of no needed pixel (not stored: one shared dummy slot was a write-write race between
/// threads that racecheck reports, harmless as nothing read it, but not clean).
PIXFLOW_HD void word_slots(const Strip& s, int w, int cn, int (&slot)[4]) {
  const int pitch = plane_pitch(cn);
  for (int j = 0; j < 4; ++j) {
    const int byte = 4 * w + j, t = byte / cn, c = byte - t * cn, p = t - s.u;
    slot[j] = p < 0 || p + s.u >= kTileBytes / cn ? -1 : c * pitch + skew(p);
  }
}

/// Row y of the input by the border rule, nullptr for the constant.
PIXFLOW_HD const unsigned char* row_ptr(const Img& v, long long y, BorderType t, bool inside) {
  if (!inside) {
    y = detail::border_index(y, v.h, t);
    if (y < 0) return nullptr;
  }
  return v.data + y * v.stride;
}

PIXFLOW_HD u32 fetch_word(const unsigned char* row, const WordSrc& s, u32 value4) {
  if (row == nullptr) return value4;
  if (s.direct) return *reinterpret_cast<const u32*>(row + s.off);
  u32 w = 0;
  for (int j = 0; j < 4; ++j) w |= u32(s.b[j] < 0 ? (value4 & 0xffu) : row[s.b[j]]) << (8 * j);
  return w;
}

PIXFLOW_HD void enter(u32& ev, u32& od, u32 x) {
  ev += px::byte_perm(x, 0, 0x4240);
  od += px::byte_perm(x, 0, 0x4341);
}
// Lanes never borrow: each lane's sum includes the leaving byte.
PIXFLOW_HD void leave(u32& ev, u32& od, u32 x) {
  ev -= px::byte_perm(x, 0, 0x4240);
  od -= px::byte_perm(x, 0, 0x4341);
}

/// Column sums of rows ys - ay .. ys - ay + kh - 2 (the segment's first kh - 1 rows).
PIXFLOW_HD void seed_columns(const Img& v, const WordSrc& src, const Params& p, long long y0,
                             u32& ev, u32& od) {
  ev = od = 0;
  const bool inside = y0 >= 0 && y0 + p.kh - 1 <= v.h;
  int i = 0;
  for (; i + 4 <= p.kh - 1; i += 4) {
    u32 x[4];
    PIXFLOW_UNROLL
    for (int k = 0; k < 4; ++k)
      x[k] = fetch_word(row_ptr(v, y0 + i + k, p.border, inside), src, p.value4);
    PIXFLOW_UNROLL
    for (int k = 0; k < 4; ++k) enter(ev, od, x[k]);
  }
  for (; i < p.kh - 1; ++i)
    enter(ev, od, fetch_word(row_ptr(v, y0 + i, p.border, inside), src, p.value4));
}

/// The words of a batch: entering rows ye .. ye + kRows - 1, leaving rows yl .. (yl = ye - kh +
/// 1 + ... : the caller's y - ay + kh - 1 and y - ay).
PIXFLOW_HD void load_batch(const Img& v, const WordSrc& src, const Params& p, long long ye,
                           long long yl, u32 (&in)[kRows], u32 (&out)[kRows]) {
  const bool inside = yl >= 0 && ye + kRows <= v.h;
  PIXFLOW_UNROLL
  for (int r = 0; r < kRows; ++r) {
    in[r] = fetch_word(row_ptr(v, ye + r, p.border, inside), src, p.value4);
    out[r] = fetch_word(row_ptr(v, yl + r, p.border, inside), src, p.value4);
  }
}

/// Step 1 for one word column: kRows rows of column sums into the planes (`planes` + r * cn *
/// plane_pitch(cn) is row r's).
template <int CN>
PIXFLOW_HD void vertical_batch(u32& ev, u32& od, const u32 (&in)[kRows], const u32 (&out)[kRows],
                               const int (&slot)[4], u32* planes) {
  constexpr int kRowWords = CN * plane_pitch(CN);
  PIXFLOW_UNROLL
  for (int r = 0; r < kRows; ++r) {
    enter(ev, od, in[r]);
    u32* row = planes + r * kRowWords;
    // 0x4B00 supplies the bytes 0x00, 0x4B: the bits of 2^23 + lane.
    if (slot[0] >= 0) row[slot[0]] = px::byte_perm(ev, 0x4B00u, 0x5410);
    if (slot[1] >= 0) row[slot[1]] = px::byte_perm(od, 0x4B00u, 0x5410);
    if (slot[2] >= 0) row[slot[2]] = px::byte_perm(ev, 0x4B00u, 0x5432);
    if (slot[3] >= 0) row[slot[3]] = px::byte_perm(od, 0x4B00u, 0x5432);
    leave(ev, od, out[r]);
  }
}

/// The output of a window sum s (an integer < 2^24 as a float) in the low byte.
template <int M>
PIXFLOW_HD u32 finish(float s, const Params& p) {
  if constexpr (M == kOdd) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(__fmaf_rn(s, p.rcp, 8388608.0f));
#else
    return float_bits(std::fma(s, p.rcp, 8388608.0f));
#endif
  } else if constexpr (M == kSum) {
    return float_bits(add_rn(s < 255.0f ? s : 255.0f, 8388608.0f));
  } else {
    return p.recip(u32(s));
  }
}

/// Step 2 + 3 for one item (row r, channel c, run) of a batch: kRun outputs into the stage.
/// rows: valid rows of the batch; false when the item has nothing to do.
template <int CN, int M>
PIXFLOW_HD void horizontal_item(int it, const u32* planes, u32* stage, const Strip& s,
                                const Params& p, int rows, int w_px) {
  const int runs = p.sp / kRun;
  const int run = it % runs, pl = it / runs, r = pl / CN, c = pl - r * CN;
  if (r >= rows || s.x0 + (long long)run * kRun >= w_px) return;
  const u32* lv = planes + pl * plane_pitch(CN) + (kRun + 1) * run;  // position kRun*run + j
  u32 acc = 0;
  for (int b = 0; b < p.kw; b += 32) {
    const u32* pb = lv + b + (b >> 5);
    const int n = p.kw - b < 32 ? p.kw - b : 32;
    for (int i = 0; i < n; ++i) acc += pb[i];
  }
  acc -= u32(p.kw) * 0x4B000000u;  // sum of the kw sums (exact mod 2^32: < 2^24)
  float sum = float(acc);
  // Entering position kRun*run + j + kw sits at lv[j + kw + kw/32 + (j >= 32 - kw%32)].
  const u32* en = lv + p.kw + (p.kw >> 5);
  const int split = 32 - (p.kw & 31);
  // Outputs go to the stage as they are made (a word of 4 for one channel, bytes otherwise),
  // so no array of kRun results stays live.
  u32* st = stage + r * kStagePitch;
  unsigned char* sb = reinterpret_cast<unsigned char*>(st);
  u32 lo = 0, q0 = 0;
  PIXFLOW_UNROLL
  for (int j = 0; j < kRun; ++j) {
    const u32 q = finish<M>(sum, p);
    if constexpr (CN == 1) {
      if (j % 4 == 0) q0 = q;
      if (j % 4 == 1) lo = px::byte_perm(q0, q, 0x0040);
      if (j % 4 == 2) q0 = q;
      if (j % 4 == 3)
        st[stage_word(run * (kRun / 4) + j / 4)] =
            px::byte_perm(lo, px::byte_perm(q0, q, 0x0040), 0x5410);
    } else {
      const int byte = (run * kRun + j) * CN + c;
      sb[4 * stage_word(byte >> 2) + (byte & 3)] = static_cast<unsigned char>(q);
    }
    if (j + 1 < kRun) {
      const u32 e = (j >= split ? en + 1 : en)[j];
      sum = add_rn(sum, sub_rn(bits_float(e), bits_float(lv[j])));  // exact: integers < 2^24
    }
  }
  (void)sb;
  (void)lo;
  (void)q0;
}

/// Step 4 for one item (row r, 16-byte chunk k) of a batch: output row y0 + r.
PIXFLOW_HD void store_chunk(int it, const u32* stage, const Img& dst, const Strip& s,
                            const Params& p, long long y0, int rows, bool aligned) {
  const int chunks = p.sp * dst.cn / 16;
  const int r = it / chunks, k = it - r * chunks;
  if (r >= rows) return;
  const long long wc = (long long)dst.w * dst.cn, e = s.x0 * dst.cn + 16LL * k;
  if (e >= wc) return;
  const u32* sw = stage + r * kStagePitch + stage_word(4 * k);  // 4 consecutive words
  unsigned char* o = dst.data + (y0 + r) * dst.stride + e;
  if (aligned && e + 16 <= wc) {
#if defined(__CUDA_ARCH__)
    *reinterpret_cast<uint4*>(o) = make_uint4(sw[0], sw[1], sw[2], sw[3]);
#else
    std::memcpy(o, sw, 16);
#endif
    return;
  }
  for (int i = 0; i < 16 && e + i < wc; ++i)
    o[i] = static_cast<unsigned char>(sw[i / 4] >> (8 * (i % 4)));
}

/// The launch plan (host): pixels a strip, strips, rows a segment, segments; false when the
/// window leaves strips narrower than kMinStrip (the byte-tile kernel takes those).
struct Plan {
  int sp, seg_rows;
  long long strips, segs;
};
inline bool plan(long long w, long long h, int cn, int kw, long long sm_count, Plan& out) {
  const int sp_max = (kTileBytes / cn - kw - 2) / kRun * kRun;
  if (sp_max < kMinStrip) return false;
  out.strips = (w + sp_max - 1) / sp_max;
  const long long each = (w + out.strips - 1) / out.strips;
  out.sp = int((each + kRun - 1) / kRun * kRun);  // <= sp_max: sp_max is a multiple of kRun
  long long target = sm_count * kBlocksPerSm / out.strips;
  if (target < 1) target = 1;
  long long rows = (h + target - 1) / target;
  rows = (rows + kRows - 1) / kRows * kRows;
  if (rows < kMinSegRows) rows = kMinSegRows;
  if (rows > (1LL << 30)) return false;
  out.seg_rows = int(rows);
  out.segs = (h + rows - 1) / rows;
  return true;
}

/// The kernel's parameters for a kw x kh window under border b and plan pl (host; the
/// launcher and the CPU emulation test build them here, once).
inline Params params_of(int kw, int kh, const Border& b, const Plan& pl) {
  const u32 n = u32(kw) * u32(kh);
  const u32 v = detail::saturate_cast<std::uint8_t>(b.value);
  return Params{kw,
                kh,
                pl.sp,
                pl.seg_rows,
                int(pl.segs),
                detail::RecipOddU8(n).rcp,
                detail::RecipU32(n),
                b.type,
                v * 0x01010101u};
}
/// The finishing rule: the plain sum, one FMA for the odd counts RecipOddU8 covers, else
/// RecipU32.
inline Mode mode_of(int kw, int kh, bool normalize) {
  const u32 n = u32(kw) * u32(kh);
  return !normalize ? kSum : detail::RecipOddU8::applies(n) ? kOdd : kExact;
}

}  // namespace pixflow::cuda::box_stream
