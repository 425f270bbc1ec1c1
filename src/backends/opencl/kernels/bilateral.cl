// bilateral (docs/ops/bilateral.md; the rule is src/ref/bilateral.cpp): `bilateral`, one
// work-item per output pixel, walking the circular window in the reference's row-major order
// (u8 x 1 with radius <= 4: bilateral_u8c1_tile below, the default schedule). Built per
// depth (-DT=uchar -DT_U8=1 or -DT=float -DT_F32=1) and channel count (-DCH=1..4).
// The host computes what the reference computes once per call (bilateral.cpp): the taps
// (dx, dy and the float space weight's bits, three ints a tap) and the colour table: u8 the
// 256 * CH floats of exp(delta^2 * coeff), f32 the interpolated table of
// src/base/bilateral_f32.hpp (T[i] at 2i, D[i] at 2i + 1).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define PX_FP64 1
// The f32 colour weight per tap (px_bilateral_f32_weight_global: rules/bilateral.h, the
// reference's bilateral_f32::weight) and the u8 output's saturation (rules/saturate.h).
#include "src/base/rules/bilateral.h"
#include "src/base/rules/saturate.h"

// The output sum / wsum, rounded once to float: the reference's float division, taken here
// in double and rounded once (the same bits, 53 >= 2 * 24 + 2), because OpenCL's float
// division need not be correctly rounded (rules/rounded.h px_div_rn says why).
inline float bil_div(float sum, float wsum) {
  return (float)((double)sum / (double)wsum);
}

// Per tap k: delta = the L1 distance of the tap's samples to the centre's (u8 in integers,
// f32 in float, channels in order), colour weight from the table, wk = space * colour,
// sum_c += v_c * wk, wsum += wk (float). Output sum_c / wsum, divided in double and rounded
// once to float: the correctly rounded float quotient (53 >= 2 * 24 + 2), which OpenCL's
// float division does not promise; u8 then rounded half to even and saturated (NaN -> 0).
__kernel void bilateral(CIMG(s), IMG(d), int width, int height, int border, T cval,
                        __global const int* taps, int ntaps, __global const float* table, int bins,
                        float scale) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  __global const T* centre = CROW(T, s, y) + x * CH;
  T c0[CH];
  for (int c = 0; c < CH; ++c) c0[c] = centre[c];
  float sum[CH];
  for (int c = 0; c < CH; ++c) sum[c] = 0.0f;
  float wsum = 0.0f;
  for (int k = 0; k < ntaps; ++k) {
    const int yy = border_index(y + taps[3 * k + 1], height, border);
    const int xx = border_index(x + taps[3 * k], width, border);
    T v[CH];
    if (xx < 0 || yy < 0) {
      for (int c = 0; c < CH; ++c) v[c] = cval;
    } else {
      __global const T* p = CROW(T, s, yy) + xx * CH;
      for (int c = 0; c < CH; ++c) v[c] = p[c];
    }
#ifdef T_F32
    float delta = 0.0f;
    for (int c = 0; c < CH; ++c) delta += fabs(v[c] - c0[c]);
    const float cw = px_bilateral_f32_weight_global(table, bins, scale, delta);
#else
    int delta = 0;
    for (int c = 0; c < CH; ++c) delta += (int)abs((int)v[c] - (int)c0[c]);
    const float cw = table[delta];
#endif
    const float wk = as_float(taps[3 * k + 2]) * cw;
    for (int c = 0; c < CH; ++c) sum[c] += (float)v[c] * wk;
    wsum += wk;
  }
  __global T* out = ROW(T, d, y) + x * CH;
  for (int c = 0; c < CH; ++c) {
    const float r = bil_div(sum[c], wsum);
#ifdef T_F32
    out[c] = r;
#else
    out[c] = px_sat_u8_f32(r);
#endif
  }
}

#if defined(T_U8) && CH == 1 && defined(BIL_R)
// ---------------------------------------------------------------------------------------------
// bilateral_u8c1_tile: u8 x 1, window radius BIL_R = 1..4 (d = 3..9), CUDA's
// bilateral_u8c1_kernel (src/backends/cuda/bilateral.cu, bilateral_u8_packed.hpp) in OpenCL C.
// Why: the per-pixel kernel runs two border_index calls, a global tap and a global table
// read per tap. A work-group of 32 x 8 computes 128 x 32 outputs, a work-item 4 adjacent
// pixels of BIL_ROWS rows, from a tile of the input with its halo in local memory (the
// border rule at load time). Each source row's 4 + 2R samples are read once (three words) and
// serve every output row whose window holds that row. The colour table is replicated per lane
// (entry d of lane l at d * 32 + l, 32 KB): a sub-group's 32 data-dependent lookups hit 32
// distinct banks whatever the image (one copy: ~3.5 wavefronts a lookup on random input,
// CUDA's measurement). The sums are the reference's: taps in row-major order (source rows
// ascending, dx ascending), w = space * colour, sum += v * w, wsum += w, each rounded once.
#define BIL_TX 32
#define BIL_TY 8
#define BIL_ROWS 4
#define BIL_M 4                      // the tile's left margin (any R <= 4)
#define BIL_BW (BIL_TX * 4)          // 128 output columns a work-group
#define BIL_BH (BIL_TY * BIL_ROWS)   // 32 output rows
#define BIL_TW (BIL_BW + 2 * BIL_M)  // 136 tile bytes a row
#define BIL_TWORDS (BIL_TW / 4)      // 34
#define BIL_TH (BIL_BH + 2 * BIL_R)  // tile rows
#define BIL_K (2 * BIL_R + 1)

// space: the (2R+1)^2 square of space weights, (dy + R) * (2R+1) + (dx + R) (the window's
// taps only are read). color: the 256 colour weights.
__kernel __attribute__((reqd_work_group_size(BIL_TX, BIL_TY, 1))) void bilateral_u8c1_tile(
    CIMG(s), IMG(d), int width, int height, int border, uchar cval, __constant float* space,
    __global const float* color) {
  __local float lut[256 * BIL_TX];
  __local uint tile[BIL_TH * BIL_TWORDS];
  const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * BIL_TX + lx;
  for (int i = lid; i < 256 * BIL_TX; i += BIL_TX * BIL_TY) lut[i] = color[i / BIL_TX];
  const int bx0 = get_group_id(0) * BIL_BW, by0 = get_group_id(1) * BIL_BH;
  // The tile: byte (r, c) is pixel (bx0 - M + c, by0 - R + r) by the border rule.
  __local uchar* bytes = (__local uchar*)tile;
  const bool inside = bx0 - BIL_M >= 0 && bx0 - BIL_M + BIL_TW <= width && by0 - BIL_R >= 0 &&
                      by0 - BIL_R + BIL_TH <= height;
  for (int i = lid; i < BIL_TH * BIL_TW; i += BIL_TX * BIL_TY) {
    const int r = i / BIL_TW, c = i - r * BIL_TW;
    const int x = bx0 - BIL_M + c, y = by0 - BIL_R + r;
    uchar v;
    if (inside) {
      v = CROW(uchar, s, y)[x];
    } else {
      const int xx = border_index(x, width, border), yy = border_index(y, height, border);
      v = xx < 0 || yy < 0 ? cval : CROW(uchar, s, yy)[xx];
    }
    bytes[i] = v;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int row0 = ly * BIL_ROWS;
  int centre[BIL_ROWS][4];
  float sum[BIL_ROWS][4], wsum[BIL_ROWS][4];
#pragma unroll
  for (int r = 0; r < BIL_ROWS; ++r) {
    const uint w = tile[(row0 + BIL_R + r) * BIL_TWORDS + lx + 1];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      centre[r][j] = (int)((w >> (8 * j)) & 0xffu);
      sum[r][j] = 0.0f;
      wsum[r][j] = 0.0f;
    }
  }
  __local const float* lane_lut = lut + lx;
#pragma unroll
  for (int t = 0; t < BIL_ROWS + 2 * BIL_R; ++t) {
    // Pixels x0 - 4 .. x0 + 7 of tile row row0 + t (x0 = 4 lx + M in the tile).
    const uint w0 = tile[(row0 + t) * BIL_TWORDS + lx];
    const uint w1 = tile[(row0 + t) * BIL_TWORDS + lx + 1];
    const uint w2 = tile[(row0 + t) * BIL_TWORDS + lx + 2];
    // The samples as ints (the deltas) and as floats (the sums), each converted once a row
    // (why: a conversion issues at a fraction of the float rate; a tap would need one a
    // pixel). -DBIL_TAPCONV=1 converts at each tap instead (PIXFLOW_OCL_BILATERAL=tile-tapconv,
    // kept to time the two on the H100: measured 1680 against 1871 us in session 22, once).
    int v[12];
    float fv[12];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      v[j] = (int)((w0 >> (8 * j)) & 0xffu);
      v[4 + j] = (int)((w1 >> (8 * j)) & 0xffu);
      v[8 + j] = (int)((w2 >> (8 * j)) & 0xffu);
    }
#pragma unroll
    for (int i = 0; i < 12; ++i) fv[i] = (float)v[i];
#pragma unroll
    for (int r = 0; r < BIL_ROWS; ++r) {
      const int dy = t - BIL_R - r;
      if (dy >= -BIL_R && dy <= BIL_R) {
#pragma unroll
        for (int dx = -BIL_R; dx <= BIL_R; ++dx) {
          if (dx * dx + dy * dy <= BIL_R * BIL_R) {
            const float sw = space[(dy + BIL_R) * BIL_K + dx + BIL_R];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const float wk = sw * lane_lut[abs(v[4 + j + dx] - centre[r][j]) * BIL_TX];
#if BIL_TAPCONV
              sum[r][j] += (float)v[4 + j + dx] * wk;
#else
              sum[r][j] += fv[4 + j + dx] * wk;
#endif
              wsum[r][j] += wk;
            }
          }
        }
      }
    }
  }
  const int x0 = bx0 + 4 * lx;
#pragma unroll
  for (int r = 0; r < BIL_ROWS; ++r) {
    const int y = by0 + row0 + r;
    if (y >= height) break;
    __global uchar* out = ROW(uchar, d, y);
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (x0 + j < width)
        out[x0 + j] = px_sat_u8_f32(bil_div(sum[r][j], wsum[r][j]));
  }
}
#endif
