// epsilon (docs/ops/epsilon.md, src/ref/epsilon.cpp; u8 x 1 with r in 1..7: epsilon_u8c1_tile
// below, the default schedule). `epsilon`: one work-item per destination pixel,
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

#if defined(T_U8) && defined(EPS_R)
// ---------------------------------------------------------------------------------------------
// epsilon_u8c1_tile: u8 x 1, radius EPS_R = 1..7. Why: the per-pixel kernel runs two
// border_index calls a tap and reads every tap from global memory. A work-group of 32 x 8
// computes 32 x 64 outputs (a work-item one column of EPS_ROWS rows) from a tile of the input
// with its halo in local memory (the border rule at load time). Each source row's 2R + 1
// samples are read once and serve every output row whose window holds that row; lanes read
// consecutive words (no bank conflicts). Per tap and output, three operations:
//  - the tile holds v + 2^16, so one add accumulates the sum (low 16 bits) and the count (high
//    bits) together: (2R+1)^2 * 255 <= 225 * 255 < 2^16 for R <= 7;
//  - |v - c| <= t as one unsigned compare: (uint)(v - c + t) <= 2t (v - c + t is negative,
//    i.e. huge unsigned, when v - c < -t), with t - c made once an output.
// The result is the reference's (2 sum + n) / (2 n) on the same integers.
#define EPS_TX 32
#define EPS_TY 8
#define EPS_ROWS 8
#define EPS_BH (EPS_TY * EPS_ROWS)  // 64 output rows a work-group
#define EPS_TW (EPS_TX + 2 * EPS_R)
#define EPS_TH (EPS_BH + 2 * EPS_R)

__kernel __attribute__((reqd_work_group_size(EPS_TX, EPS_TY, 1))) void epsilon_u8c1_tile(
    CIMG(s), IMG(d), int w, int h, int border, int t, int cval) {
  __local uint tile[EPS_TH * EPS_TW];
  const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * EPS_TX + lx;
  const int bx0 = get_group_id(0) * EPS_TX, by0 = get_group_id(1) * EPS_BH;
  const bool inside = bx0 - EPS_R >= 0 && bx0 - EPS_R + EPS_TW <= w && by0 - EPS_R >= 0 &&
                      by0 - EPS_R + EPS_TH <= h;
  for (int i = lid; i < EPS_TH * EPS_TW; i += EPS_TX * EPS_TY) {
    const int r = i / EPS_TW, c = i - r * EPS_TW;
    const int x = bx0 - EPS_R + c, y = by0 - EPS_R + r;
    uint v;
    if (inside) {
      v = CROW(uchar, s, y)[x];
    } else {
      const int xx = border_index(x, w, border), yy = border_index(y, h, border);
      v = xx < 0 || yy < 0 ? (uint)cval : (uint)CROW(uchar, s, yy)[xx];
    }
    tile[i] = v + 0x10000u;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int row0 = ly * EPS_ROWS;
  const uint t2 = 2u * (uint)t;
  uint base[EPS_ROWS], acc[EPS_ROWS];
#pragma unroll
  for (int r = 0; r < EPS_ROWS; ++r) {
    base[r] = (uint)t - tile[(row0 + EPS_R + r) * EPS_TW + EPS_R + lx];  // t - c (mod 2^32)
    acc[r] = 0;
  }
  // Source rows ascending; within each the columns: the reference's order (the sums are
  // integers, so the order does not change them anyway).
#pragma unroll
  for (int q = 0; q < EPS_ROWS + 2 * EPS_R; ++q) {
    uint v[2 * EPS_R + 1];
#pragma unroll
    for (int k = 0; k <= 2 * EPS_R; ++k) v[k] = tile[(row0 + q) * EPS_TW + lx + k];
#pragma unroll
    for (int r = 0; r < EPS_ROWS; ++r) {
      const int dy = q - EPS_R - r;
      if (dy >= -EPS_R && dy <= EPS_R) {
#pragma unroll
        for (int k = 0; k <= 2 * EPS_R; ++k) acc[r] += v[k] + base[r] <= t2 ? v[k] : 0u;
      }
    }
  }
  const int x = bx0 + lx;
  if (x >= w) return;
#pragma unroll
  for (int r = 0; r < EPS_ROWS; ++r) {
    const int y = by0 + row0 + r;
    if (y >= h) break;
    const int sum = (int)(acc[r] & 0xffffu), n = (int)(acc[r] >> 16);
    ROW(uchar, d, y)[x] = (uchar)px_epsilon_mean_i32(sum, n);
  }
}
#endif
