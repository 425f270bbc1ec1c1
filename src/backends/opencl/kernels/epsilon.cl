// epsilon (docs/ops/epsilon.md, src/ref/epsilon.cpp; r in 1..7, 1..4 channels: the tile
// kernels epsilon_u8_tile / epsilon_f32_tile below, the default schedule). `epsilon` (the
// rest, and every case with PIXFLOW_OCL_EPSILON=pixel): one work-item per destination pixel,
// every channel; the (2r+1)^2 window read through border_index (constant: the border value,
// saturated to T on the host, is a pixel like any other), rows dy outer, columns dx inner as
// the reference. Built per sample type: T_U8 or T_F32.
//   u8:  |v - centre| <= t with t = min(floor(t), 255) from the host (both sides are
//        integers, so this is the reference's double comparison); integer sum, result
//        (2 sum + n) / (2 n) (round half up).
//   f32: the comparison and the sum in double (cl_khr_fp64), float(sum / n).
#ifdef T_F32
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define PX_FP64 1
#endif
// The result rules: px_epsilon_mean_i32 / _f64 (src/base/rules/epsilon.h, as the reference).
#include "src/base/rules/epsilon.h"

__kernel void epsilon(CIMG(s), IMG(d), int w, int h, int cn, int r, int border,
#ifdef T_F32
                      double t, float cval
#else
                      int t, int cval
#endif
) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= w || y >= h) return;
  __global const uchar* base = s + s_off;
  __global T* out = ROW(T, d, y) + x * cn;
  for (int c = 0; c < cn; ++c) {
    const T centre = CROW(T, s, y)[x * cn + c];
#ifdef T_F32
    const double dc = (double)centre;
    double sum = 0.0;
#else
    const int ic = (int)centre;
    int sum = 0;
#endif
    int n = 0;
    for (int dy = -r; dy <= r; ++dy) {
      const int yy = border_index(y + dy, h, border);
      __global const T* row = (__global const T*)(base + (long)(yy < 0 ? 0 : yy) * s_stride);
      for (int dx = -r; dx <= r; ++dx) {
        const int xx = border_index(x + dx, w, border);
#ifdef T_F32
        const float v = (xx < 0 || yy < 0) ? cval : row[xx * cn + c];
        if (fabs((double)v - dc) <= t) {
          ++n;
          sum += (double)v;
        }
#else
        const int v = (xx < 0 || yy < 0) ? cval : (int)row[xx * cn + c];
        if ((int)abs(v - ic) <= t) {
          ++n;
          sum += v;
        }
#endif
      }
    }
    // n >= 1 unless the centre is NaN (f32: 0 / 0, NaN, as the reference).
#ifdef T_F32
    out[c] = px_epsilon_mean_f64(sum, n);
#else
    out[c] = (T)px_epsilon_mean_i32(sum, n);
#endif
  }
}

#if defined(EPS_R) && defined(EPS_CN)
// ---------------------------------------------------------------------------------------------
// The tile kernels: radius EPS_R = 1..7, EPS_CN = 1..4 interleaved channels. Why: the
// per-pixel kernel runs two border_index calls a tap and reads every tap from global memory
// (u8 x 3: 3 x 81 byte loads 3 bytes apart a pixel at r = 4). A work-group of 32 x 8 computes
// 32 x 64 outputs from a tile of the input with its halo in local memory (the border rule at
// load time). The tile's columns are the row's interleaved samples ("elements": element e is
// channel e % CN of pixel e / CN), so a work-item is one element column of EPS_ROWS outputs,
// all of one channel, and its taps are the elements k * CN apart; the 32 lanes of a row read
// and write 32 consecutive elements (no bank conflicts, coalesced stores) whatever CN is.
// Each source row's 2R + 1 taps are read once and serve every output row whose window holds
// that row. For CN = 1 this is the arithmetic of the earlier epsilon_u8c1_tile, unchanged.
#define EPS_TX 32
#define EPS_TY 8
#define EPS_ROWS 8
#define EPS_BH (EPS_TY * EPS_ROWS)  // 64 output rows a work-group
#define EPS_HX (EPS_R * EPS_CN)     // halo, in elements
#define EPS_TW (EPS_TX + 2 * EPS_HX)
#define EPS_TH (EPS_BH + 2 * EPS_R)

// Element e >= -EPS_HX of row y through the border rule (constant: cval). Pixel e / CN rounded
// down: e + EPS_HX >= 0 makes the division exact for the negative ones.
inline T eps_sample(CIMG(s), int e, int y, int w, int h, int border, T cval) {
  const int q = (e + EPS_HX) / EPS_CN, ch = e + EPS_HX - q * EPS_CN;
  const int xx = border_index(q - EPS_R, w, border), yy = border_index(y, h, border);
  return xx < 0 || yy < 0 ? cval : CROW(T, s, yy)[xx * EPS_CN + ch];
}

// The tile loop of both kernels: STORE(i, v) for every tile entry i and its sample v.
#define EPS_LOAD_TILE(STORE)                                                                    \
  do {                                                                                          \
    const int lid_ = get_local_id(1) * EPS_TX + get_local_id(0);                                \
    const int bx_ = get_group_id(0) * EPS_TX - EPS_HX, by_ = get_group_id(1) * EPS_BH - EPS_R; \
    const bool inside_ = bx_ >= 0 && bx_ + EPS_TW <= w * EPS_CN && by_ >= 0 && by_ + EPS_TH <= h; \
    for (int i = lid_; i < EPS_TH * EPS_TW; i += EPS_TX * EPS_TY) {                             \
      const int r_ = i / EPS_TW, e_ = bx_ + i - r_ * EPS_TW, y_ = by_ + r_;                     \
      const T v_ = inside_ ? CROW(T, s, y_)[e_] : eps_sample(s, s_off, s_stride, e_, y_, w, h,  \
                                                             border, cval);                     \
      STORE(i, v_);                                                                             \
    }                                                                                           \
    barrier(CLK_LOCAL_MEM_FENCE);                                                               \
  } while (0)

#if defined(T_U8) && !defined(EPS_QUAD)
// epsilon_u8_tile. Per tap and output, three operations:
//  - the tile holds v + 2^16, so one add accumulates the sum (low 16 bits) and the count (high
//    bits) together: (2R+1)^2 * 255 <= 225 * 255 < 2^16 for R <= 7;
//  - |v - c| <= t as one unsigned compare: (uint)(v - c + t) <= 2t (v - c + t is negative,
//    i.e. huge unsigned, when v - c < -t), with t - c made once an output.
// The result is the reference's (2 sum + n) / (2 n) on the same integers.
#define EPS_STORE_U8(i, v) (tile[i] = (uint)(v) + 0x10000u)
__kernel __attribute__((reqd_work_group_size(EPS_TX, EPS_TY, 1))) void epsilon_u8_tile(
    CIMG(s), IMG(d), int w, int h, int border, int t, int icval) {
  __local uint tile[EPS_TH * EPS_TW];
  const uchar cval = (uchar)icval;
  EPS_LOAD_TILE(EPS_STORE_U8);
  const int lx = get_local_id(0), row0 = get_local_id(1) * EPS_ROWS;
  const uint t2 = 2u * (uint)t;
  uint base[EPS_ROWS], acc[EPS_ROWS];
#pragma unroll
  for (int r = 0; r < EPS_ROWS; ++r) {
    base[r] = (uint)t - tile[(row0 + EPS_R + r) * EPS_TW + EPS_HX + lx];  // t - c (mod 2^32)
    acc[r] = 0;
  }
  // Source rows ascending; within each the columns: the reference's order (the sums are
  // integers, so the order does not change them anyway).
#pragma unroll
  for (int q = 0; q < EPS_ROWS + 2 * EPS_R; ++q) {
    uint v[2 * EPS_R + 1];
#pragma unroll
    for (int k = 0; k <= 2 * EPS_R; ++k) v[k] = tile[(row0 + q) * EPS_TW + lx + k * EPS_CN];
#pragma unroll
    for (int r = 0; r < EPS_ROWS; ++r) {
      const int dy = q - EPS_R - r;
      if (dy >= -EPS_R && dy <= EPS_R) {
#pragma unroll
        for (int k = 0; k <= 2 * EPS_R; ++k) acc[r] += v[k] + base[r] <= t2 ? v[k] : 0u;
      }
    }
  }
  const int x = get_group_id(0) * EPS_TX + lx;
  if (x >= w * EPS_CN) return;
  const int y0 = get_group_id(1) * EPS_BH + row0;
#pragma unroll
  for (int r = 0; r < EPS_ROWS; ++r) {
    const int y = y0 + r;
    if (y >= h) break;
    const int sum = (int)(acc[r] & 0xffffu), n = (int)(acc[r] >> 16);
    ROW(uchar, d, y)[x] = (uchar)px_epsilon_mean_i32(sum, n);
  }
}
#endif  // T_U8 && !EPS_QUAD

#if defined(T_U8) && defined(EPS_QUAD)
// ---------------------------------------------------------------------------------------------
// epsilon_u8_quad (PIXFLOW_OCL_EPSILON=quad): CUDA's packed arithmetic (src/backends/cuda/
// epsilon_u8_packed.hpp, where the compare is proved): a 32-bit word holds four taps of ONE
// output, window rows y .. y + 3 of one element column (the "quad" word of row y, byte j = row
// y + j), so one word is four taps in five instructions:
//   d = absdiff4(p, c * 0x01010101); e = absdiff4(d, M * 0x01010101)   bit 7 of each byte
//   f = (e ^ xm) & lanes: xm = 0 for T <= 127 (M = T + 128), ~0 for 128 <= T <= 254 (M = T - 127)
//   sum = dp4a(p, f, sum); cnt = dp4a(f, 0x01010101, cnt)   (128 x the sum and the count)
// where lanes (0x80 a byte) masks the rows past the window in its last quad (T = 255, where every
// tap counts, runs epsilon_u8_tile: no M makes this compare pass every byte). With
// -DPIXFLOW_PTX_VIDEO (NVIDIA, sm_90: native VABSDIFF4 and IDP.4A) absdiff4 / dp4a are PTX
// vabsdiff4 / dp4a; elsewhere OpenCL C that computes the same (slower than epsilon_u8_tile:
// only for the tests and oclgrind). Against the tile kernel's 4 operations a tap: 5 a word,
// ceil((2R+1) / 4) (2R+1) words an output (27 at r = 4: 135 operations against 324).
// The work-group, its outputs and its element columns are epsilon_u8_tile's; local memory holds
// the quad words of the tile (every row y whose window quads an output reads), built column
// by column from the source rows (a running word: one load and a shift a quad word).
#define EPS_W (2 * EPS_R + 1)
#define EPS_NQ ((EPS_W + 3) / 4)           // quads a window column
#define EPS_NL (EPS_W - 4 * (EPS_NQ - 1))  // window rows in the last quad (1..4)
#define EPS_QH (EPS_BH + 4 * (EPS_NQ - 1))  // quad rows of the tile
#define EPS_CHUNK 8                         // quad rows a fill item walks
#define EPS_NCH ((EPS_QH + EPS_CHUNK - 1) / EPS_CHUNK)

#if defined(PIXFLOW_PTX_VIDEO)
inline uint eps_absdiff4(uint a, uint b) {
  uint r;
  const uint z = 0;
  __asm__("vabsdiff4.u32.u32.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(z));
  return r;
}
inline uint eps_dp4a(uint a, uint b, uint c) {
  uint r;
  __asm__("dp4a.u32.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}
#else
// (scalar byte by byte: PoCL builds this much faster than the uchar4 forms)
inline uint eps_absdiff4(uint a, uint b) {
  uint r = 0;
  for (int i = 0; i < 32; i += 8) {
    const int x = (int)((a >> i) & 0xffu), y = (int)((b >> i) & 0xffu);
    r |= (uint)(x > y ? x - y : y - x) << i;
  }
  return r;
}
inline uint eps_dp4a(uint a, uint b, uint c) {
  for (int i = 0; i < 32; i += 8) c += ((a >> i) & 0xffu) * ((b >> i) & 0xffu);
  return c;
}
#endif

// Adds the taps of quad word p in `lanes` to 128 x sum and 128 x count (c4 = c * 0x01010101,
// m4 the compare constant M in every byte, xm the compare's sense).
inline void eps_tap4(uint p, uint c4, uint m4, uint xm, uint lanes, uint* sum, uint* cnt) {
  const uint f = (eps_absdiff4(eps_absdiff4(p, c4), m4) ^ xm) & lanes;
  *sum = eps_dp4a(p, f, *sum);
  *cnt = eps_dp4a(f, 0x01010101u, *cnt);
}

__kernel __attribute__((reqd_work_group_size(EPS_TX, EPS_TY, 1))) void epsilon_u8_quad(
    CIMG(s), IMG(d), int w, int h, int border, uint m4, uint xm, int icval) {
  __local uint quad[EPS_QH * EPS_TW];
  const uchar cval = (uchar)icval;
  const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * EPS_TX + lx;
  // Fill: item (chunk, column) walks EPS_CHUNK quad rows of one element column; tile row i is
  // image row by - R + i, and quad row y holds tile rows y .. y + 3 (the rows past the last
  // window, in masked lanes only, read through the border rule like the others).
  {
    const int bx = get_group_id(0) * EPS_TX - EPS_HX, by = get_group_id(1) * EPS_BH - EPS_R;
    const bool inside =
        bx >= 0 && bx + EPS_TW <= w * EPS_CN && by >= 0 && by + EPS_QH + 3 <= h;
    for (int i = lid; i < EPS_NCH * EPS_TW; i += EPS_TX * EPS_TY) {
      const int ck = i / EPS_TW, c = i - ck * EPS_TW, e = bx + c, y0 = ck * EPS_CHUNK;
      uint word = 0;
#pragma unroll
      for (int j = 0; j < EPS_CHUNK + 3; ++j) {
        const int y = y0 + j;
        if (y - 3 < EPS_QH) {  // (the last chunk ends at the last quad row)
          const uint v = inside ? (uint)CROW(uchar, s, by + y)[e]
                                : (uint)eps_sample(s, s_off, s_stride, e, by + y, w, h, border, cval);
#if defined(PIXFLOW_OCLGRIND)
          // (oclgrind 21.10 cannot interpret the llvm.fshl clang makes of the two shifts: the
          // same bytes by a shuffle there; its device is little-endian, as linear.cl's shl_ch)
          const uchar4 b = as_uchar4(word);
          word = as_uint((uchar4)(b.s1, b.s2, b.s3, (uchar)v));
#else
          word = (word >> 8) | (v << 24);
#endif
          if (j >= 3) quad[(y - 3) * EPS_TW + c] = word;
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const int row0 = ly * EPS_ROWS;
  uint c4[EPS_ROWS], sum[EPS_ROWS], cnt[EPS_ROWS];
#pragma unroll
  for (int r = 0; r < EPS_ROWS; ++r) {
    // The centre, tile row row0 + r + R: byte R % 4 of the window's quad R / 4.
    const uint q = quad[(row0 + r + 4 * (EPS_R / 4)) * EPS_TW + EPS_HX + lx];
    c4[r] = ((q >> (8 * (EPS_R % 4))) & 0xffu) * 0x01010101u;
    sum[r] = 0;
    cnt[r] = 0;
  }
  // Quad row row0 + q is quad j of output r's window when q = r + 4j (j < NQ): the rows of one
  // residue q % 4 serve the outputs of that residue only, so the loops run over the residue,
  // then its quad rows, then its outputs (every pair in the body is a used one: NVIDIA's
  // compiler and clang refuse to unroll a body of mostly dead pairs as "too large").
#if defined(PIXFLOW_PTX_VIDEO)
#pragma unroll
#else
#pragma unroll 1  // (the emulated words, for PoCL and oclgrind: builds in a fraction of the time)
#endif
  for (int rho = 0; rho < 4; ++rho) {
#if defined(PIXFLOW_PTX_VIDEO)
#pragma unroll
#else
#pragma unroll 1
#endif
    for (int m = 0; m < EPS_ROWS / 4 + EPS_NQ - 1; ++m) {
      const int q = rho + 4 * m;
      uint v[EPS_W];
#pragma unroll
      for (int k = 0; k < EPS_W; ++k) v[k] = quad[(row0 + q) * EPS_TW + lx + k * EPS_CN];
#pragma unroll
      for (int i = 0; i < EPS_ROWS / 4; ++i) {
        const int j = m - i, r = rho + 4 * i;
        if (j >= 0 && j < EPS_NQ) {
          const uint lanes = j == EPS_NQ - 1 ? 0x80808080u >> (8 * (4 - EPS_NL)) : 0x80808080u;
#pragma unroll
          for (int k = 0; k < EPS_W; ++k) eps_tap4(v[k], c4[r], m4, xm, lanes, &sum[r], &cnt[r]);
        }
      }
    }
  }
  const int x = get_group_id(0) * EPS_TX + lx;
  if (x >= w * EPS_CN) return;
  const int y0 = get_group_id(1) * EPS_BH + row0;
#pragma unroll
  for (int r = 0; r < EPS_ROWS; ++r) {
    const int y = y0 + r;
    if (y >= h) break;
    ROW(uchar, d, y)[x] = (uchar)px_epsilon_mean_i32((int)(sum[r] >> 7), (int)(cnt[r] >> 7));
  }
}
#endif  // T_U8 && EPS_QUAD

#if defined(T_F32)
// epsilon_f32_tile: the reference's own arithmetic on every tap, |double(v) - double(c)| <= t
// and the double sum in window row-major order (source rows ascending, columns ascending
// within each: every output's taps in the reference's order), float(sum / n). Each source row's
// 2R + 1 samples are widened to double once a work-item and serve up to EPS_ROWS outputs:
// (EPS_ROWS + 2R)(2R + 1) / EPS_ROWS conversions an output (18 at r = 4) instead of (2R + 1)^2.
// A tap out of range adds +0.0, which leaves the sum as it was: it starts at +0.0 and a
// round-to-nearest sum is -0.0 only from two -0.0 operands, so it is never -0.0 (x + 0.0 = x
// for every other x, NaN and infinities included).
#define EPS_STORE_F32(i, v) (tile[i] = (v))
__kernel __attribute__((reqd_work_group_size(EPS_TX, EPS_TY, 1))) void epsilon_f32_tile(
    CIMG(s), IMG(d), int w, int h, int border, double t, float cval) {
  __local float tile[EPS_TH * EPS_TW];
  EPS_LOAD_TILE(EPS_STORE_F32);
  const int lx = get_local_id(0), row0 = get_local_id(1) * EPS_ROWS;
  double cd[EPS_ROWS], sum[EPS_ROWS];
  int n[EPS_ROWS];
#pragma unroll
  for (int r = 0; r < EPS_ROWS; ++r) {
    cd[r] = (double)tile[(row0 + EPS_R + r) * EPS_TW + EPS_HX + lx];
    sum[r] = 0.0;
    n[r] = 0;
  }
#pragma unroll
  for (int q = 0; q < EPS_ROWS + 2 * EPS_R; ++q) {
    double v[2 * EPS_R + 1];
#pragma unroll
    for (int k = 0; k <= 2 * EPS_R; ++k)
      v[k] = (double)tile[(row0 + q) * EPS_TW + lx + k * EPS_CN];
#pragma unroll
    for (int r = 0; r < EPS_ROWS; ++r) {
      const int dy = q - EPS_R - r;
      if (dy >= -EPS_R && dy <= EPS_R) {
#pragma unroll
        for (int k = 0; k <= 2 * EPS_R; ++k) {
          const bool in = fabs(v[k] - cd[r]) <= t;
          sum[r] += in ? v[k] : 0.0;
          n[r] += in ? 1 : 0;
        }
      }
    }
  }
  const int x = get_group_id(0) * EPS_TX + lx;
  if (x >= w * EPS_CN) return;
  const int y0 = get_group_id(1) * EPS_BH + row0;
#pragma unroll
  for (int r = 0; r < EPS_ROWS; ++r) {
    const int y = y0 + r;
    if (y >= h) break;
    // n >= 1 unless the centre is NaN (0 / 0, NaN, as the reference).
    ROW(float, d, y)[x] = px_epsilon_mean_f64(sum[r], n[r]);
  }
}
#endif  // T_F32
#endif  // EPS_R && EPS_CN
