// Linear filters (docs/ops/box.md, gaussian.md, sobel.md, filter2d.md): box, gaussian,
// sobel / scharr, filter2d. One work-item per output sample (x over width * channels), the
// window read through border_index; the separable ones (box, gaussian) in two passes through
// a buffer of row or column sums so that a 255-wide window costs O(kw + kh) a sample.
// Arithmetic as src/ref/*.cpp: the same integer formulas, float and double sums in the
// reference's order (FP_CONTRACT OFF in the prelude, no mad/fma). Taps, tables and the
// constant-border values come from the host (src/base/gaussian_taps.hpp, deriv_taps.hpp).
// Built per depth: T is the sample type (-DT=uchar ...), T_U8 .. T_F32 tell which.
#ifdef NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define PX_FP64 1
#endif
// The shared integer rules (src/base/rules/saturate.h, as the reference and CUDA):
// saturation of an exact integer sum and of a float / double (round half to even, NaN -> 0),
// div_round_half_even, and the fixed-point shift of the integer Gaussian (px_round_shift_s64).
#include "src/base/rules/saturate.h"

#if defined(T_U8)
#define SAT_T_LONG(v) px_sat_u8_s64(v)
#define SAT_T_RTE(v) px_sat_u8_f32(v)
#elif defined(T_U16)
#define SAT_T_LONG(v) px_sat_u16_s64(v)
#define SAT_T_RTE(v) px_sat_u16_f32(v)
#endif
#define div_round_half_even(num, den) px_div_round_half_even(num, den)

// ---- box ----------------------------------------------------------------------------------
// src/ref/box.cpp: per output row the column sums over the kh window rows (in row order),
// then per output sample the sum of kw column sums (in column order); constant outside:
// cval per row, cval * kh per column. ACC: long for integers (exact), double for f32.
#ifdef BOX
#ifdef T_F32
#define ACC double
#else
#define ACC long
#endif

// Pass 1: col[y][i] = sum_j src(border(y - ay + j), i), i < n = width * channels.
__kernel void box_cols(CIMG(s), __global ACC *col, int n, int h, int kh, int ay, int btype,
                       ACC cval) {
  const int i = get_global_id(0), y = get_global_id(1);
  if (i >= n || y >= h) return;
  ACC acc = 0;
  for (int j = 0; j < kh; ++j) {
    const int sy = border_index(y - ay + j, h, btype);
    acc += sy < 0 ? cval : (ACC)CROW(T, s, sy)[i];
  }
  col[(long)y * n + i] = acc;
}

// Pass 2: out(x, c) = sum_i col[border(x - ax + i)] (mean: divided by kw * kh).
__kernel void box_rows(__global const ACC *col, IMG(d), int n, int w, int h, int ch, int kw, int kh,
                       int ax, int btype, ACC cval, int normalize) {
  const int i = get_global_id(0), y = get_global_id(1);
  if (i >= n || y >= h) return;
  const int x = i / ch, c = i - x * ch;
  __global const ACC *cr = col + (long)y * n;
  const ACC cvk = cval * (ACC)kh;
  ACC s = 0;
  for (int k = 0; k < kw; ++k) {
    const int sx = border_index(x - ax + k, w, btype);
    s += sx < 0 ? cvk : cr[sx * ch + c];
  }
  const long area = (long)kw * kh;
#ifdef T_F32
  ROW(float, d, y)[i] = normalize ? (float)(s / (double)area) : (float)s;
#else
  ROW(T, d, y)[i] = SAT_T_LONG(normalize ? div_round_half_even(s, area) : s);
#endif
}
#endif

// ---- gaussian -----------------------------------------------------------------------------
// src/ref/gaussian.cpp: the horizontal pass of each source row (border in x; H: int for u8
// with Q8 taps, long for u16 with Q16 taps, float for f32), then the vertical pass over the
// kh row results of the window; a row outside (constant border) is hconst, the horizontal
// pass of a row of cval (computed on the host in the same order).
#ifdef GAUSS
#if defined(T_U8)
#define TAP int
#define H int
#elif defined(T_U16)
#define TAP int
#define H long
#else
#define TAP float
#define H float
#endif

// Pass 1: hb[sy][i] = sum_k src(sy, border(x - rx + k), c) * tx[k], for every source row.
__kernel void gauss_rows(CIMG(s), __global H *hb, __global const TAP *tx, int n, int w, int h,
                         int ch, int kw, int rx, int btype, T cval) {
  const int i = get_global_id(0), y = get_global_id(1);
  if (i >= n || y >= h) return;
  const int x = i / ch, c = i - x * ch;
  __global const T *sr = CROW(T, s, y);
  H acc = 0;
  for (int k = 0; k < kw; ++k) {
    const int sx = border_index(x - rx + k, w, btype);
    const T v = sx < 0 ? cval : sr[sx * ch + c];
    acc += (H)v * (H)tx[k];
  }
  hb[(long)y * n + i] = acc;
}

// Pass 2: out = sum_j hb[border(y - ry + j)][i] * ty[j], then (integers) rounded by `shift`.
__kernel void gauss_cols(__global const H *hb, __global const TAP *ty, IMG(d), int n, int h,
                         int kh, int ry, int btype, H hconst, int shift) {
  const int i = get_global_id(0), y = get_global_id(1);
  if (i >= n || y >= h) return;
  H acc = 0;
  for (int j = 0; j < kh; ++j) {
    const int sy = border_index(y - ry + j, h, btype);
    const H v = sy < 0 ? hconst : hb[(long)sy * n + i];
    acc += v * (H)ty[j];
  }
#ifdef T_F32
  ROW(float, d, y)[i] = acc;
#else
  ROW(T, d, y)[i] = SAT_T_LONG(px_round_shift_s64((long)acc, shift));
#endif
}
#endif

// ---- sobel / scharr -----------------------------------------------------------------------
// src/ref/sobel.cpp: the 2-D sum of the separable integer taps tx (nx) and ty (ny), both at
// most 7 (int8 arguments). u8 source: exact integer sum, then s16 saturated (plain) or
// saturate(rint(sum * scale + delta)) in double, or f32 float(sum * scale + delta) in double.
// f32 source: per window row a float sum from 0 in tap order, then the float sum of the rows
// times their taps, then v * scale + delta in float.
#ifdef DERIV
inline int tap8(int8 t, int k) {
  switch (k) {
    case 0: return t.s0;
    case 1: return t.s1;
    case 2: return t.s2;
    case 3: return t.s3;
    case 4: return t.s4;
    case 5: return t.s5;
    case 6: return t.s6;
    default: return t.s7;
  }
}

__kernel void deriv(CIMG(s), IMG(d), int n, int w, int h, int ch, int8 tx, int8 ty, int nx,
                    int ny, int btype, T cval, int plain,
#ifdef NEED_FP64
                    double scale, double delta
#else
                    float scale, float delta
#endif
) {
  const int i = get_global_id(0), y = get_global_id(1);
  if (i >= n || y >= h) return;
  const int x = i / ch, c = i - x * ch;
  const int rx = nx / 2, ry = ny / 2;
#ifdef T_F32
  float v = 0.0f;
  for (int j = 0; j < ny; ++j) {
    const int yy = border_index(y + j - ry, h, btype);
    float hs = 0.0f;
    for (int k = 0; k < nx; ++k) {
      const int xx = border_index(x + k - rx, w, btype);
      const float p = (xx < 0 || yy < 0) ? cval : CROW(float, s, yy)[xx * ch + c];
      hs += (float)tap8(tx, k) * p;
    }
    v += (float)tap8(ty, j) * hs;
  }
  ROW(float, d, y)[i] = v * scale + delta;
#else
  long sum = 0;
  for (int j = 0; j < ny; ++j) {
    const int yy = border_index(y + j - ry, h, btype);
    long hs = 0;
    for (int k = 0; k < nx; ++k) {
      const int xx = border_index(x + k - rx, w, btype);
      const T p = (xx < 0 || yy < 0) ? cval : CROW(T, s, yy)[xx * ch + c];
      hs += tap8(tx, k) * (long)p;
    }
    sum += tap8(ty, j) * hs;
  }
#if defined(OUT_F32)
  ROW(float, d, y)[i] = (float)((double)sum * scale + delta);
#elif defined(NEED_FP64)
  ROW(short, d, y)[i] = plain ? px_sat_s16_s64(sum) : px_sat_s16_f64((double)sum * scale + delta);
#else
  ROW(short, d, y)[i] = px_sat_s16_s64(sum);
#endif
#endif
}
#endif

// ---- filter2d -----------------------------------------------------------------------------
// src/ref/filter2d.cpp: correlation, the float sum from 0.0f in kernel row-major order of
// k[r][q] * float(src), then + delta (float); u8 rounds half to even and saturates.
#ifdef F2D
__kernel void filter2d(CIMG(s), IMG(d), __global const float *kern, int n, int w, int h, int ch,
                       int kw, int kh, int btype, T cval, float delta) {
  const int i = get_global_id(0), y = get_global_id(1);
  if (i >= n || y >= h) return;
  const int x = i / ch, c = i - x * ch;
  const int ax = kw / 2, ay = kh / 2;
  float sum = 0.0f;
  for (int r = 0; r < kh; ++r) {
    const int yy = border_index(y + r - ay, h, btype);
    for (int q = 0; q < kw; ++q) {
      const int xx = border_index(x + q - ax, w, btype);
      const T v = (xx < 0 || yy < 0) ? cval : CROW(T, s, yy)[xx * ch + c];
      sum += kern[r * kw + q] * (float)v;
    }
  }
  sum += delta;
#ifdef T_F32
  ROW(float, d, y)[i] = sum;
#else
  ROW(T, d, y)[i] = SAT_T_RTE(sum);
#endif
}
#endif

// ---- tiled kernels --------------------------------------------------------------------------
// One launch per filter (bench/NOTES.md: at 1080p the launch count matters; the two passes
// above also write and read a full-size buffer of sums): a work-group of LX x LY work-items
// loads its output tile plus the window's halo once into local memory (the border rule applied
// at the load, so the arithmetic below reads no index twice and tests no edge), then each
// work-item makes CX x CY outputs (columns lx + LX * cx, rows ly + LY * cy: a warp's lanes
// read consecutive local words). KW, KH, AX, AY (window and anchor), CH (channels) and CY are
// defines, so the tap loops unroll for the small windows. The arithmetic is the reference's,
// in its order: box sums columns then rows, gaussian rows then columns, deriv and filter2d the
// 2-D window row by row.
#ifdef TILE
#define LX 32
#define LY 8
#define CX 2
#define OW (LX * CX)             // output samples a tile row
#define OH (LY * CY)             // output rows a tile
#define TW (OW + (KW - 1) * CH)  // source samples a tile row
#define TH (OH + KH - 1)         // source rows a tile

// tile[r][q] = src(border(y0 - AY + r), border(pixel of x0 - AX * CH + q)), cval outside.
inline void load_tile(__local T *tile, CIMG(s), int x0, int y0, int w, int h, int btype, T cval) {
  // A tile wholly inside the image (every tile but the image's outer ring of tiles) needs no
  // border arithmetic: one address computation a sample instead of two border_index calls.
  if (x0 >= AX * CH && x0 - AX * CH + TW <= w * CH && y0 >= AY && y0 - AY + TH <= h) {
    for (int t = get_local_id(1) * LX + get_local_id(0); t < TH * TW; t += LX * LY) {
      const int r = t / TW, q = t - r * TW;
      tile[t] = CROW(T, s, y0 - AY + r)[x0 - AX * CH + q];
    }
    return;
  }
  for (int t = get_local_id(1) * LX + get_local_id(0); t < TH * TW; t += LX * LY) {
    const int r = t / TW, q = t - r * TW;
    const int gi = x0 - AX * CH + q;
    const int c = ((gi % CH) + CH) % CH;
    const int bx = border_index((gi - c) / CH, w, btype), by = border_index(y0 - AY + r, h, btype);
    tile[t] = (bx < 0 || by < 0) ? cval : CROW(T, s, by)[bx * CH + c];
  }
}

#define TILE_HEAD                                                 \
  const int lx = get_local_id(0), ly = get_local_id(1);           \
  const int x0 = get_group_id(0) * OW, y0 = get_group_id(1) * OH; \
  load_tile(tile, s, s_off, s_stride, x0, y0, w, h, btype, cval); \
  barrier(CLK_LOCAL_MEM_FENCE);

#define FOR_OUTPUTS                 \
  for (int cy = 0; cy < CY; ++cy)   \
    for (int cx = 0; cx < CX; ++cx) \
      if (x0 + lx + LX * cx < n && y0 + ly + LY * cy < h)

#ifdef BOX
// Column sums over the KH window rows (CS: int for integers, exact up to 65535 * 32767;
// double for f32 as the reference), then each output the sum of KW column sums.
#ifdef T_F32
#define CS double
#else
#define CS int
#endif
__kernel __attribute__((reqd_work_group_size(LX, LY, 1))) void box_tile(CIMG(s), IMG(d), int n,
                                                                        int w, int h, int btype,
                                                                        T cval, int normalize) {
  __local T tile[TH * TW];
  __local CS cs[OH * TW];
  TILE_HEAD
#ifdef BOX_RUNNING
  // Integers (exact in int, so any order): a work-item walks one column down the OH rows with
  // a running sum, 2 reads a row instead of KH (the CUDA round's running-sum box); only TW
  // work-items are busy, so the host asks for it where KH + 2 * OH < OH * TW * KH / 256.
  for (int q = ly * LX + lx; q < TW; q += LX * LY) {
    int acc = 0;
    for (int j = 0; j < KH; ++j) acc += (int)tile[j * TW + q];
    cs[q] = acc;
    for (int r = 1; r < OH; ++r) {
      acc += (int)tile[(r + KH - 1) * TW + q] - (int)tile[(r - 1) * TW + q];
      cs[r * TW + q] = acc;
    }
  }
#else
  for (int t = ly * LX + lx; t < OH * TW; t += LX * LY) {
    const int r = t / TW, q = t - r * TW;
    CS acc = 0;
    for (int j = 0; j < KH; ++j) acc += (CS)tile[(r + j) * TW + q];
    cs[t] = acc;
  }
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
  const long area = (long)KW * KH;
#ifdef BOX_HRUN
  // Integers: running sums along the rows too (the CUDA round's running-sum box), so a large
  // KW costs KW + 2 (SEG - 1) reads for SEG outputs instead of SEG * KW. A work-item walks SEG
  // outputs of one channel of one row (i, i + CH, ...); consecutive work-items take consecutive
  // rows (TW words apart: few local bank conflicts). The results go to local memory (the
  // source tile is done with, and holds OH rows of OW + 1 samples where KW >= 2), so that the
  // global stores below stay one coalesced sample a work-item.
  // SEG: outputs a walk (from the host, which weighs the cost with it).
#define NS ((OW + CH * SEG - 1) / (CH * SEG))  // walks a row per channel
#define OWP (OW + 1)                           // out's row stride: rows apart on banks
  __local T *out = tile;
  for (int t = ly * LX + lx; t < OH * CH * NS; t += LX * LY) {
    const int r = t % OH, rest = t / OH, c = rest % CH, sg = rest / CH;
    int i = c + CH * SEG * sg;
    if (i >= OW) continue;
    __local const CS *row = cs + r * TW;
    ACC sum = 0;
    for (int k = 0; k < KW; ++k) sum += (ACC)row[i + k * CH];
    for (int m = 0;;) {
      out[r * OWP + i] = SAT_T_LONG(normalize ? div_round_half_even(sum, area) : sum);
      if (++m == SEG || i + CH >= OW) break;
      sum += (ACC)row[i + KW * CH] - (ACC)row[i];
      i += CH;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  FOR_OUTPUTS {
    const int r = ly + LY * cy, i = lx + LX * cx;
    ROW(T, d, y0 + r)[x0 + i] = out[r * OWP + i];
  }
#else
  FOR_OUTPUTS {
    const int r = ly + LY * cy, i = lx + LX * cx;
    ACC sum = 0;
    for (int k = 0; k < KW; ++k) sum += (ACC)cs[r * TW + i + k * CH];
#ifdef T_F32
    ROW(float, d, y0 + r)[x0 + i] = normalize ? (float)(sum / (double)area) : (float)sum;
#else
    ROW(T, d, y0 + r)[x0 + i] = SAT_T_LONG(normalize ? div_round_half_even(sum, area) : sum);
#endif
  }
#endif
}
#endif

#ifdef GAUSS
// Row sums of every tile row (hs, H as the reference), then each output the column sum.
// GAUSS_CONST: the taps in constant memory (one broadcast read a tap for the whole warp).
// SYMX / SYMY (integers, where the host found that axis' taps symmetric): the two samples
// of a tap pair are added first and multiplied once (t_k (x_k + x_{K-1-k})): integer sums are
// exact, so the order is free, and a 49-tap pass takes 25 multiplies instead of 49.
#ifdef GAUSS_CONST
#define TAPMEM __constant
#else
#define TAPMEM __global
#endif
__kernel __attribute__((reqd_work_group_size(LX, LY, 1))) void gauss_tile(
    CIMG(s), IMG(d), TAPMEM const TAP *tx, TAPMEM const TAP *ty, int n, int w, int h, int btype,
    T cval, int shift) {
  __local T tile[TH * TW];
  __local H hs[TH * OW];
  TILE_HEAD
  for (int t = ly * LX + lx; t < TH * OW; t += LX * LY) {
    const int r = t / OW, i = t - r * OW;
    H acc = 0;
#ifdef SYMX
    __local const T *p = tile + r * TW + i;
    for (int k = 0; k < KW / 2; ++k) acc += ((H)p[k * CH] + (H)p[(KW - 1 - k) * CH]) * (H)tx[k];
    if (KW & 1) acc += (H)p[(KW / 2) * CH] * (H)tx[KW / 2];
#else
    for (int k = 0; k < KW; ++k) acc += (H)tile[r * TW + i + k * CH] * (H)tx[k];
#endif
    hs[t] = acc;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  FOR_OUTPUTS {
    const int r = ly + LY * cy, i = lx + LX * cx;
    H acc = 0;
#ifdef SYMY
    __local const H *q = hs + r * OW + i;
    for (int j = 0; j < KH / 2; ++j) acc += (q[j * OW] + q[(KH - 1 - j) * OW]) * (H)ty[j];
    if (KH & 1) acc += q[(KH / 2) * OW] * (H)ty[KH / 2];
#else
    for (int j = 0; j < KH; ++j) acc += hs[(r + j) * OW + i] * (H)ty[j];
#endif
#ifdef T_F32
    ROW(float, d, y0 + r)[x0 + i] = acc;
#else
    ROW(T, d, y0 + r)[x0 + i] = SAT_T_LONG(px_round_shift_s64((long)acc, shift));
#endif
  }
}
#endif

#ifdef DERIV
__kernel __attribute__((reqd_work_group_size(LX, LY, 1))) void deriv_tile(CIMG(s), IMG(d), int n,
                                                                          int w, int h, int8 tx,
                                                                          int8 ty, int btype,
                                                                          T cval, int plain,
#ifdef NEED_FP64
                                                                          double scale, double delta
#else
                                                                           float scale, float delta
#endif
) {
  __local T tile[TH * TW];
  TILE_HEAD
  FOR_OUTPUTS {
    const int r = ly + LY * cy, i = lx + LX * cx;
#ifdef T_F32
    float v = 0.0f;
    for (int j = 0; j < KH; ++j) {
      float hsum = 0.0f;
      for (int k = 0; k < KW; ++k) hsum += (float)tap8(tx, k) * tile[(r + j) * TW + i + k * CH];
      v += (float)tap8(ty, j) * hsum;
    }
    ROW(float, d, y0 + r)[x0 + i] = v * scale + delta;
#else
    // |sum| <= 255 * (sum |tx|) * (sum |ty|) <= 255 * 64 * 64 for 7 taps: int is exact.
    int sum = 0;
    for (int j = 0; j < KH; ++j) {
      int hsum = 0;
      for (int k = 0; k < KW; ++k) hsum += tap8(tx, k) * (int)tile[(r + j) * TW + i + k * CH];
      sum += tap8(ty, j) * hsum;
    }
#if defined(OUT_F32)
    ROW(float, d, y0 + r)[x0 + i] = (float)((double)sum * scale + delta);
#elif defined(NEED_FP64)
    ROW(short, d, y0 + r)
    [x0 + i] = plain ? px_sat_s16_s64(sum) : px_sat_s16_f64((double)sum * scale + delta);
#else
    ROW(short, d, y0 + r)[x0 + i] = px_sat_s16_s64(sum);
#endif
#endif
  }
}
#endif

#ifdef F2D
__kernel __attribute__((reqd_work_group_size(LX, LY, 1))) void filter2d_tile(
    CIMG(s), IMG(d), __global const float *kern, int n, int w, int h, int btype, T cval,
    float delta) {
  __local T tile[TH * TW];
  TILE_HEAD
  FOR_OUTPUTS {
    const int r = ly + LY * cy, i = lx + LX * cx;
    float sum = 0.0f;
    for (int j = 0; j < KH; ++j)
      for (int k = 0; k < KW; ++k) sum += kern[j * KW + k] * (float)tile[(r + j) * TW + i + k * CH];
    sum += delta;
#ifdef T_F32
    ROW(float, d, y0 + r)[x0 + i] = sum;
#else
    ROW(T, d, y0 + r)[x0 + i] = SAT_T_RTE(sum);
#endif
  }
}
#endif
#endif

// ---- packed 3x3 on u8 ---------------------------------------------------------------------
// The CUDA round's packed scheme (src/backends/cuda/u8_3x3.cuh, linear3_u8_packed.hpp) in
// OpenCL C 1.2: a work-group of LX x LY work-items loads a tile of 32-bit words (4 samples
// each, the window's halo one word either side) into local memory, then each work-item makes
// one word of outputs (4 samples) on RY consecutive rows. A word's samples split into two
// words of 16-bit lanes (even bytes, odd bytes: v & 0x00ff00ff, (v >> 8) & 0x00ff00ff), so one
// 32-bit multiply-add works on two samples; no lane can carry into the next because the host
// takes this path only where every lane's total stays below 2^16 (taps >= 0 summing to <= 256
// a pass: 255 * 256 < 2^16; the box's 9 * 255). The neighbours at +-CH samples (CH <= 4) are
// byte shifts of the word and its two neighbour words. Integer sums are exact, so the order
// the lanes add in is free; the rounding is the reference's, per sample.
// KIND 0: box mean (s / 9 half to even), 1: box sum saturated, 2: gaussian (Q8 taps tx, ty;
// (sum + 2^15) >> 16), 3: sobel / scharr u8 -> s16 with scale 1, delta 0 (signed taps as
// uint). For 3 the lanes may go negative and borrow from each other: the 3x3 sum is a linear
// form of the packed words, exact modulo 2^32, so the final word is v_hi * 2^16 + v_lo
// (mod 2^32) whatever happened between (src/backends/cuda/deriv3_u8_packed.hpp); adding
// 0x8000 puts the low lane in [0, 65535] (the host checks 255 * sum|tx| * sum|ty| <= 32767,
// so the reference's s16 saturation is the identity), leaving the high lane v_hi mod 2^16,
// and XOR 0x8000 gives the low lane back as v_lo mod 2^16: both are the s16 results' bits.
#ifdef LIN3P
#define LX 32
#define LY 8
#define TWW (LX + 2)        // words a tile row
#define TH3 (LY * RY + 2)   // rows a tile
#define LANES 0x00ff00ffu

// Bytes x - CH .. x + 3 - CH (left) and x + CH .. x + 3 + CH (right) of the words l, c, r
// holding samples x - 4 .. x + 7. On oclgrind (PIXFLOW_OCLGRIND, runtime.cpp) the two-word
// shifts are byte shuffles of the same bytes (little-endian words, as every path here
// assumes): clang makes llvm.fshl of the shifts, which oclgrind 21.10 cannot interpret.
inline uint shl_ch(uint l, uint c) {
#if CH == 4
  return l;
#elif defined(PIXFLOW_OCLGRIND)
  return as_uint(shuffle2(as_uchar4(l), as_uchar4(c),
                          (uchar4)(4 - CH, 5 - CH, 6 - CH, 7 - CH)));
#else
  return (c << (8 * CH)) | (l >> (32 - 8 * CH));
#endif
}
inline uint shr_ch(uint c, uint r) {
#if CH == 4
  return r;
#elif defined(PIXFLOW_OCLGRIND)
  return as_uint(shuffle2(as_uchar4(c), as_uchar4(r), (uchar4)(CH, CH + 1, CH + 2, CH + 3)));
#else
  return (c >> (8 * CH)) | (r << (32 - 8 * CH));
#endif
}

// One word of samples x .. x + 3 (x may be outside [0, n), the row outside [0, h)): the four
// bytes through the border rule, cval where it says so.
inline uint load_word_border(CIMG(s), int x, int y, int n, int w, int h, int btype, uchar cval) {
  const int by = border_index(y, h, btype);
  if (by < 0) return (uint)cval * 0x01010101u;
  __global const uchar *row = CROW(uchar, s, by);
  uint v = 0;
  for (int b = 0; b < 4; ++b) {
    const int gi = x + b;
    uchar p;
    if (gi >= 0 && gi < n) {
      p = row[gi];
    } else {
      const int c = ((gi % CH) + CH) % CH;
      const int bx = border_index((gi - c) / CH, w, btype);
      p = bx < 0 ? cval : row[bx * CH + c];
    }
    v |= (uint)p << (8 * b);
  }
  return v;
}

// The two lane words (even, odd bytes) of the horizontal pass of tile row r at word q.
inline void hpass(__local const uint *tile, int r, int q, uint t0, uint t1, uint t2, uint *ev,
                  uint *od) {
  const uint l = tile[r * TWW + q], c = tile[r * TWW + q + 1], rr = tile[r * TWW + q + 2];
  const uint a = shl_ch(l, c), b = shr_ch(c, rr);
#if KIND >= 2
  *ev = (a & LANES) * t0 + (c & LANES) * t1 + (b & LANES) * t2;
  *od = ((a >> 8) & LANES) * t0 + ((c >> 8) & LANES) * t1 + ((b >> 8) & LANES) * t2;
#else
  *ev = (a & LANES) + (c & LANES) + (b & LANES);
  *od = ((a >> 8) & LANES) + ((c >> 8) & LANES) + ((b >> 8) & LANES);
#endif
}

#if KIND == 2
// px_sat_u8_s64(px_round_shift_s64(sum, 16)) in the packed form: the lane sums are >= 0 and
// below 2^32 here, so the 32-bit add, shift and min give the same bytes (a special fast form
// of the shared rule, kept for the packed lanes).
inline uint gauss_lane(uint a, uint b, uint c, uint v0, uint v1, uint v2) {
  return min((a * v0 + b * v1 + c * v2 + 32768u) >> 16, 255u);
}
#endif

// The output byte of lane sums: one sample.
#if KIND == 0
// px_div_round_half_even(s, 9) for s >= 0 (9 is odd: no exact halves, so half up is half to
// even); a special fast form of the shared rule for the packed lanes.
#define BOX_OUT(s) (((s) + 4u) / 9u)
#else
#define BOX_OUT(s) min((s), 255u)
#endif

__kernel __attribute__((reqd_work_group_size(LX, LY, 1))) void linear3_packed(
    CIMG(s), IMG(d), int n, int w, int h, int btype, uchar cval, uint t0, uint t1, uint t2,
    uint v0, uint v1, uint v2) {
  __local uint tile[TH3 * TWW];
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int x0 = get_group_id(0) * (4 * LX), y0 = get_group_id(1) * (LY * RY);
  // Word loads straight from the image where the source is 4-byte aligned (offset and stride),
  // vload4 (any alignment) otherwise; the border rule only on words that reach outside.
  const bool aligned = ((s_off | (ulong)s_stride) & 3) == 0;
  for (int t = ly * LX + lx; t < TH3 * TWW; t += LX * LY) {
    const int r = t / TWW, qw = t - r * TWW;
    const int gx = x0 - 4 + 4 * qw, gy = y0 - 1 + r;
    uint v;
    if (gx >= 0 && gx + 4 <= n && gy >= 0 && gy < h) {
      __global const uchar *p = CROW(uchar, s, gy) + gx;
      v = aligned ? *(__global const uint *)p : as_uint(vload4(0, p));
    } else {
      v = load_word_border(s, s_off, s_stride, gx, gy, n, w, h, btype, cval);
    }
    tile[t] = v;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int i = x0 + 4 * lx;
  if (i >= n) return;
  const int r0 = ly * RY;  // tile row of the first output row's upper neighbour
  uint e0, o0, e1, o1, e2, o2;
  hpass(tile, r0, lx, t0, t1, t2, &e0, &o0);
  hpass(tile, r0 + 1, lx, t0, t1, t2, &e1, &o1);
  const bool dal = ((d_off | (ulong)d_stride) & 3) == 0 && i + 4 <= n;
  for (int k = 0; k < RY; ++k) {
    const int y = y0 + r0 + k;
    if (y >= h) break;
    hpass(tile, r0 + k + 2, lx, t0, t1, t2, &e2, &o2);
#if KIND == 3
    const uint se = (e0 * v0 + e1 * v1 + e2 * v2 + 0x8000u) ^ 0x8000u;  // samples 0, 2
    const uint so = (o0 * v0 + o1 * v1 + o2 * v2 + 0x8000u) ^ 0x8000u;  // samples 1, 3
    const uint out01 = (se & 0xffffu) | (so << 16), out23 = (se >> 16) | (so & 0xffff0000u);
    __global short *dr = ROW(short, d, y) + i;
    if (dal) {
      ((__global uint *)dr)[0] = out01;
      ((__global uint *)dr)[1] = out23;
    } else {
      const uint o4[4] = {out01, out01 >> 16, out23, out23 >> 16};
      for (int b = 0; b < 4 && i + b < n; ++b) dr[b] = as_short((ushort)o4[b]);
    }
#else
#if KIND == 2
    const uint out = gauss_lane(e0 & 0xffffu, e1 & 0xffffu, e2 & 0xffffu, v0, v1, v2) |
                     (gauss_lane(o0 & 0xffffu, o1 & 0xffffu, o2 & 0xffffu, v0, v1, v2) << 8) |
                     (gauss_lane(e0 >> 16, e1 >> 16, e2 >> 16, v0, v1, v2) << 16) |
                     (gauss_lane(o0 >> 16, o1 >> 16, o2 >> 16, v0, v1, v2) << 24);
#else
    const uint se = e0 + e1 + e2, so = o0 + o1 + o2;  // 9 * 255 a lane at most
    const uint out = BOX_OUT(se & 0xffffu) | (BOX_OUT(so & 0xffffu) << 8) |
                     (BOX_OUT(se >> 16) << 16) | (BOX_OUT(so >> 16) << 24);
#endif
    __global uchar *dr = ROW(uchar, d, y) + i;
    if (dal) {
      *(__global uint *)dr = out;
    } else {
      for (int b = 0; b < 4 && i + b < n; ++b) dr[b] = (uchar)(out >> (8 * b));
    }
#endif
    e0 = e1;
    o0 = o1;
    e1 = e2;
    o1 = o2;
  }
}
#endif

#if defined(SEPP) || defined(F2DR)
// The source samples of the word at samples x .. x + 3 where it reaches outside the row: each
// byte's sample index in the row through the border rule, -1 for the constant. Found once for
// every row the work-item reads (the columns do not change down a column).
inline int4 sepp_cols(int x, int n, int w, int btype) {
  int v[4];
  for (int b = 0; b < 4; ++b) {
    const int gi = x + b;
    if (gi >= 0 && gi < n) {
      v[b] = gi;
    } else {
      const int c = ((gi % CH) + CH) % CH;
      const int bx = border_index((gi - c) / CH, w, btype);
      v[b] = bx < 0 ? -1 : bx * CH + c;
    }
  }
  return (int4)(v[0], v[1], v[2], v[3]);
}

// The word of samples x .. x + 3 of row y (the row through the border rule, cval outside);
// inx: the word lies inside the row (one word load), else its bytes from cx (sepp_cols).
inline uint sepp_word(CIMG(s), int x, int4 cx, int y, int h, int btype, uchar cval, bool inx,
                      bool aligned) {
  const int by = (y >= 0 && y < h) ? y : border_index(y, h, btype);
  if (by < 0) return (uint)cval * 0x01010101u;
  __global const uchar *row = CROW(uchar, s, by);
  if (inx) return aligned ? *(__global const uint *)(row + x) : as_uint(vload4(0, row + x));
  return (uint)(cx.x < 0 ? cval : row[cx.x]) | ((uint)(cx.y < 0 ? cval : row[cx.y]) << 8) |
         ((uint)(cx.z < 0 ? cval : row[cx.z]) << 16) | ((uint)(cx.w < 0 ? cval : row[cx.w]) << 24);
}

// A value below 2^23 (a 16-bit lane, a byte) as float, exactly: 2^23 + v has v in its mantissa.
inline float lane_f(uint v) {
  return as_float(v | 0x4B000000u) - 8388608.0f;
}
#endif

// ---- separable u8, vertical pass on packed lanes ------------------------------------------
// Box (KIND 0 mean, 1 saturated sum) and gaussian (KIND 2, Q8 taps) on u8, any odd or even
// window up to the register bound the host checks, CH 1..4. Integer window sums are exact, so
// the order is free (docs/ops/gaussian.md: the horizontal-then-vertical rule gives the same
// integer sum taken vertically first); the rounding is the reference's, per sample.
// A work-group of 256 work-items makes a tile of OW = 4 * OWW samples by OH = NB * RY rows:
//  B. vertical pass, straight from global memory (no source tile, no barrier before it): a
//     task is one source word (4 samples) of the tile's width with its horizontal halo (TWW
//     words) and RY output rows. The word's even and odd bytes are two words of 16-bit lanes
//     (v & 0x00ff00ff, (v >> 8) & 0x00ff00ff), so one 32-bit multiply-add (gaussian) or add
//     (box: running sums down the RY rows) serves two samples; the host takes this path only
//     where a lane's total stays below 2^16 (255 * sum(ty) <= 65280; 255 * KH <= 65535).
//     The column sums go to local memory, unpacked: uint (box), or float (gaussian: < 2^16,
//     made exact by the 2^23 mantissa trick instead of a conversion).
//  C. horizontal pass: a task is one output word (4 samples) of one row; its window's column
//     sums (NWIN float4 / uint4 words) are loaded into registers once. Gaussian: fma in float,
//     exact because every product and partial sum is an integer below 2^24 (taps >= 0, sum
//     256: 65280 * 256 + 2^15 < 2^24), started at 2^15 so that the rule's (s + 2^15) >> 16 is
//     a scale by 2^-16 and a truncation. Box: the first min(CH, 4) sums whole, the others
//     running (+ entering - leaving), then the reference's rounding.
// The border rule is applied where the words are loaded (constant: cval samples), so a
// column or row outside contributes what the reference's column sums / hconst give.
#ifdef SEPP
#define SLANES 0x00ff00ffu
#define OW (4 * OWW)                              // output samples a tile row
#define TWW (OWW + HLW + HRW)                     // column-sum words a tile row
#define OH (NB * RY)                              // output rows a tile
#define FIRST (4 * HLW - AX * CH)                 // window start within the first word
#define NWIN ((FIRST + (KW - 1) * CH + 4 + 3) / 4)  // words of column sums a window
#if KIND == 2
#define VT float
#define VT4 float4
#else
#define VT uint
#define VT4 uint4
#endif

// The gaussian's taps: arguments in constant memory, or (SEPP_TAPS_IMM: PIXFLOW_OCL_GAUSS=
// packed-imm) written into the program by the host (-DSEPP_TY=..., -DSEPP_TX=...), so that
// after unrolling they are immediates of the multiply-adds (one program per sigma).
#if KIND == 2
#ifdef SEPP_TAPS_IMM
__constant uint sepp_ty[KH] = {SEPP_TY};
__constant float sepp_tx[KW] = {SEPP_TX};
#define TY(j) sepp_ty[j]
#define TX(k) sepp_tx[k]
#else
#define TY(j) ty[j]
#define TX(k) tx[k]
#endif
#endif

__kernel __attribute__((reqd_work_group_size(32, 8, 1))) void sep_packed(CIMG(s), IMG(d),
#if KIND == 2
                                                                        __constant uint *ty,
                                                                        __constant float *tx,
#endif
                                                                        int n, int w, int h,
                                                                        int btype, uchar cval) {
  __local VT4 vb[OH * TWW];
  const int lid = get_local_id(1) * 32 + get_local_id(0);
  const int x0 = get_group_id(0) * OW, y0 = get_group_id(1) * OH;
  const bool aligned = ((s_off | (ulong)s_stride) & 3) == 0;
  // B: vertical pass.
  for (int tb = lid; tb < TWW * NB; tb += 256) {
    const int q = tb % TWW, b = tb / TWW;
    const int gx = x0 - 4 * HLW + 4 * q, gy0 = y0 + b * RY - AY;
    const bool inx = gx >= 0 && gx + 4 <= n;
    const int4 cx = inx ? (int4)(0) : sepp_cols(gx, n, w, btype);
#define SEPP_WORD(j) sepp_word(s, s_off, s_stride, gx, cx, gy0 + (j), h, btype, cval, inx, aligned)
    __local VT4 *out = vb + b * RY * TWW + q;
#if KIND == 2
    uint ev[RY], od[RY];
#pragma unroll
    for (int r = 0; r < RY; ++r) ev[r] = od[r] = 0;
#pragma unroll
    for (int jj = 0; jj < RY + KH - 1; ++jj) {
      const uint v = SEPP_WORD(jj);
      const uint e = v & SLANES, o = (v >> 8) & SLANES;
#pragma unroll
      for (int r = 0; r < RY; ++r) {
        const int j = jj - r;
        if (j >= 0 && j < KH) {
          ev[r] += e * TY(j);
          od[r] += o * TY(j);
        }
      }
    }
#pragma unroll
    for (int r = 0; r < RY; ++r)
      out[r * TWW] = (float4)(lane_f(ev[r] & 0xffffu), lane_f(od[r] & 0xffffu),
                              lane_f(ev[r] >> 16), lane_f(od[r] >> 16));
#else
    uint se = 0, so = 0;
    for (int j = 0; j < KH; ++j) {
      const uint v = SEPP_WORD(j);
      se += v & SLANES;
      so += (v >> 8) & SLANES;
    }
    out[0] = (uint4)(se & 0xffffu, so & 0xffffu, se >> 16, so >> 16);
#pragma unroll
    for (int r = 1; r < RY; ++r) {
      const uint a = SEPP_WORD(r + KH - 1), z = SEPP_WORD(r - 1);
      // Lane sums stay in [0, 255 * KH]; the packed words are exact modulo 2^32 in any order.
      se += (a & SLANES) - (z & SLANES);
      so += ((a >> 8) & SLANES) - ((z >> 8) & SLANES);
      out[r * TWW] = (uint4)(se & 0xffffu, so & 0xffffu, se >> 16, so >> 16);
    }
#endif
#undef SEPP_WORD
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // C: horizontal pass, one output word a task; consecutive work-items write consecutive words.
  const bool dal = ((d_off | (ulong)d_stride) & 3) == 0;
  for (int tc = lid; tc < OWW * OH; tc += 256) {
    const int qo = tc % OWW, r = tc / OWW;
    const int i = x0 + 4 * qo, y = y0 + r;
    if (i >= n || y >= h) continue;
    VT win[4 * NWIN];
    __local const VT4 *src = vb + r * TWW + qo;
#pragma unroll
    for (int k = 0; k < NWIN; ++k) {
      const VT4 t = src[k];
      win[4 * k] = t.x;
      win[4 * k + 1] = t.y;
      win[4 * k + 2] = t.z;
      win[4 * k + 3] = t.w;
    }
    uint o[4];
#if KIND == 2
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      float acc = 32768.0f;
#pragma unroll
      for (int k = 0; k < KW; ++k) acc = fma(TX(k), win[FIRST + k * CH + b], acc);
      o[b] = convert_uint(acc * (1.0f / 65536.0f));  // exact; truncation = the >> 16
    }
#else
    uint u[4];
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      if (b < CH) {
        u[b] = 0;
#pragma unroll
        for (int k = 0; k < KW; ++k) u[b] += win[FIRST + k * CH + b];
      } else {
        u[b] = u[b - CH] + win[FIRST + (KW - 1) * CH + b] - win[FIRST + b - CH];
      }
#if KIND == 1
      o[b] = min(u[b], 255u);
#elif (KW * KH) & 1
      // div_round_half_even by an odd area: no exact halves, so (u + (A - 1) / 2) / A.
      o[b] = (u[b] + (KW * KH) / 2) / (KW * KH);
#else
      {
        const uint qq = u[b] / (KW * KH), rr = u[b] - qq * (KW * KH);
        o[b] = qq + ((2 * rr > (KW * KH) || (2 * rr == (KW * KH) && (qq & 1))) ? 1 : 0);
      }
#endif
    }
#endif
    const uint word = o[0] | (o[1] << 8) | (o[2] << 16) | (o[3] << 24);
    __global uchar *dr = ROW(uchar, d, y) + i;
    if (dal && i + 4 <= n) {
      *(__global uint *)dr = word;
    } else {
      for (int b = 0; b < 4 && i + b < n; ++b) dr[b] = (uchar)(word >> (8 * b));
    }
  }
}
#endif

// ---- filter2d u8 -> u8 by rows, no local memory ---------------------------------------------
// src/ref/filter2d.cpp's float sum from 0.0f in kernel row-major order, then + delta, rounded
// half to even and saturated (FP_CONTRACT OFF: each product and sum rounded, as the
// reference). A work-item makes one word of outputs (4 samples) on RY rows: it streams the
// KH + RY - 1 source rows of its column words straight from global memory (whole words, the
// border rule only where a word reaches outside), converts each sample once (2^23 mantissa
// trick: exact for bytes), and adds row jj's products to every output row r whose window row
// j = jj - r it is: for each output the rows come in order j = 0, 1, ... and each row's taps
// in order q = 0, 1, ..., so every output's sum is the reference's, in its order.
#ifdef F2DR
#define FIRST (4 * HLW - AX * CH)
#define NXS (FIRST + (KW - 1) * CH + 4)  // converted samples a source row
__kernel void filter2d_rows(CIMG(s), IMG(d), __constant float *kern, int n, int w, int h,
                            int btype, uchar cval, float delta) {
  const int i = 4 * get_global_id(0), y0 = RY * get_global_id(1);
  if (i >= n || y0 >= h) return;
  const bool aligned = ((s_off | (ulong)s_stride) & 3) == 0;
  const int gx = i - 4 * HLW;
#define NW ((NXS + 3) / 4)  // source words a row
  bool inx[NW];
  int4 cx[NW];
#pragma unroll
  for (int q = 0; q < NW; ++q) {
    const int x = gx + 4 * q;
    inx[q] = x >= 0 && x + 4 <= n;
    cx[q] = inx[q] ? (int4)(0) : sepp_cols(x, n, w, btype);
  }
  float acc[4 * RY];
#pragma unroll
  for (int k = 0; k < 4 * RY; ++k) acc[k] = 0.0f;
#pragma unroll
  for (int jj = 0; jj < RY + KH - 1; ++jj) {
    const int sy = y0 - AY + jj;
    float xs[NXS];
#pragma unroll
    for (int q = 0; q < NW; ++q) {
      const uint v =
          sepp_word(s, s_off, s_stride, gx + 4 * q, cx[q], sy, h, btype, cval, inx[q], aligned);
#pragma unroll
      for (int b = 0; b < 4; ++b)
        if (4 * q + b < NXS) xs[4 * q + b] = lane_f((v >> (8 * b)) & 0xffu);
    }
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      const int j = jj - r;
      if (j >= 0 && j < KH) {
#pragma unroll
        for (int q = 0; q < KW; ++q) {
          const float t = kern[j * KW + q];
#pragma unroll
          for (int b = 0; b < 4; ++b) acc[4 * r + b] = acc[4 * r + b] + t * xs[FIRST + q * CH + b];
        }
      }
    }
  }
  const bool dal = ((d_off | (ulong)d_stride) & 3) == 0 && i + 4 <= n;
#pragma unroll
  for (int r = 0; r < RY; ++r) {
    if (y0 + r >= h) break;
    uint word = 0;
#pragma unroll
    for (int b = 0; b < 4; ++b)
      word |= (uint)convert_uchar_sat_rte(acc[4 * r + b] + delta) << (8 * b);
    __global uchar *dr = ROW(uchar, d, y0 + r) + i;
    if (dal) {
      *(__global uint *)dr = word;
    } else {
      for (int b = 0; b < 4 && i + b < n; ++b) dr[b] = (uchar)(word >> (8 * b));
    }
  }
}
#endif
