// resize (docs/ops/resize.md, src/ref/resize.cpp, src/backends/cuda/resize.cu): the rules of
// rules/resize.h, one work-item per destination column x and a stride of rows (the x taps
// computed once, the y taps once a row), every channel (cn, 1..4, an argument). Two programs
// per sample type (-DT, T_U8 / T_U16 / T_S16 / T_F32): resize_nearest alone (integer-only), and
// the linear and area kernels (-DRZ_FP64: the taps' double arithmetic of the rules,
// cl_khr_fp64; FP_CONTRACT OFF from common.cl). Few programs on purpose: each is a compile on
// PoCL, and the tests start with a cold program cache.
#ifdef RZ_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define PX_FP64 1
#endif
#include "src/base/rules/resize.h"
#include "src/base/rules/saturate.h"

#if defined(T_F32)
#define OUT_F(v) (v)
#define OUT_I(v) ((float)(v))
#elif defined(T_U8)
#define OUT_F(v) px_sat_u8_f32(v)
#define OUT_I(v) px_sat_u8_s64(v)
#elif defined(T_U16)
#define OUT_F(v) px_sat_u16_f32(v)
#define OUT_I(v) px_sat_u16_s64(v)
#else
#define OUT_F(v) px_sat_s16_f32(v)
#define OUT_I(v) px_sat_s16_s64(v)
#endif

#ifndef RZ_FP64
__kernel void resize_nearest(CIMG(s), IMG(d), int cn, long sw, long sh, long dw, long dh, long stx,
                             long sty) {
  const long x = get_global_id(0);
  if (x >= dw) return;
  const long xs = px_resize_nearest_index(x, sw, stx) * cn;
  for (long y = get_global_id(1); y < dh; y += get_global_size(1)) {
    __global const T* in = CROW(T, s, px_resize_nearest_index(y, sh, sty)) + xs;
    __global T* out = ROW(T, d, y) + x * cn;
    for (int c = 0; c < cn; ++c) out[c] = in[c];
  }
}
#endif

#ifdef RZ_FP64
#if defined(T_U8)
#define RZ_BITS 8
#else
#define RZ_BITS 16
#endif
__kernel void resize_linear(CIMG(s), IMG(d), int cn, long sw, long sh, long dw, long dh, double scx,
                            double scy) {
  const long x = get_global_id(0);
  if (x >= dw) return;
  long x0, x1;
  const long wx = px_resize_linear_tap(x, sw, scx, RZ_BITS, &x0, &x1);
  const float fx = (float)px_resize_linear_frac(x, sw, scx, &x0, &x1);
  x0 *= cn;
  x1 *= cn;
  for (long y = get_global_id(1); y < dh; y += get_global_size(1)) {
    long y0, y1;
    const long wy = px_resize_linear_tap(y, sh, scy, RZ_BITS, &y0, &y1);
    const float fy = (float)px_resize_linear_frac(y, sh, scy, &y0, &y1);
    __global const T* r0 = CROW(T, s, y0);
    __global const T* r1 = CROW(T, s, y1);
    __global T* out = ROW(T, d, y) + x * cn;
    for (int c = 0; c < cn; ++c) {
      const T a = r0[x0 + c], b = r0[x1 + c], e = r1[x0 + c], g = r1[x1 + c];
#if defined(T_U8)
      out[c] = px_resize_linear_u8(a, b, e, g, (int)wx, (int)wy);
#elif defined(T_F32)
      out[c] = px_resize_linear_f32(a, b, e, g, fx, fy);
#else
      out[c] = OUT_I(px_resize_linear_q16(a, b, e, g, wx, wy));
#endif
    }
  }
}
#endif

#ifdef RZ_FP64
__kernel void resize_area_fast(CIMG(s), IMG(d), int cn, long dw, long dh, long kx, long ky,
                               float inv) {
  const long x = get_global_id(0);
  if (x >= dw) return;
  for (long y = get_global_id(1); y < dh; y += get_global_size(1)) {
    __global T* out = ROW(T, d, y) + x * cn;
    for (int c = 0; c < cn; ++c) {
#if defined(T_F32)
      float sum = 0.0f;  // row-major, left to right (the reference's order)
      for (long j = 0; j < ky; ++j) {
        __global const float* in = CROW(float, s, y* ky + j) + x * kx * cn + c;
        for (long i = 0; i < kx; ++i) sum = px_add_rn(sum, in[i * cn]);
      }
      out[c] = px_mul_rn(sum, inv);
#else
      long sum = 0;
      for (long j = 0; j < ky; ++j) {
        __global const T* in = CROW(T, s, y * ky + j) + x * kx * cn + c;
        for (long i = 0; i < kx; ++i) sum += in[i * cn];
      }
      out[c] = kx == 2 && ky == 2 ? OUT_I((sum + 2) >> 2) : OUT_F(px_mul_rn((float)sum, inv));
#endif
    }
  }
}
#endif

#ifdef RZ_FP64
__kernel void resize_area_cover(CIMG(s), IMG(d), int cn, long sw, long sh, long dw, long dh,
                                double scx, double scy) {
  const long x = get_global_id(0);
  if (x >= dw) return;
  const px_resize_span sx = px_resize_area_span(x, sw, scx);
  for (long y = get_global_id(1); y < dh; y += get_global_size(1)) {
    const px_resize_span sy = px_resize_area_span(y, sh, scy);
    float acc[4];
    for (int j = 0; j < sy.count; ++j) {
      __global const T* in = CROW(T, s, sy.first + j) + sx.first * cn;
      float r[4];
      for (int c = 0; c < cn; ++c) r[c] = 0.0f;
      for (int k = 0; k < sx.count; ++k) {
        const float w = px_resize_span_weight(sx, k);
        for (int c = 0; c < cn; ++c) r[c] = px_add_rn(r[c], px_mul_rn((float)in[k * cn + c], w));
      }
      const float wy = px_resize_span_weight(sy, j);
      for (int c = 0; c < cn; ++c) {
        const float t = px_mul_rn(wy, r[c]);
        acc[c] = j == 0 ? t : px_add_rn(acc[c], t);
      }
    }
    __global T* out = ROW(T, d, y) + x * cn;
    for (int c = 0; c < cn; ++c) out[c] = OUT_F(acc[c]);
  }
}
#endif

#ifdef RZ_FP64
__kernel void resize_area_linear(CIMG(s), IMG(d), int cn, long sw, long sh, long dw, long dh) {
  const long x = get_global_id(0);
  if (x >= dw) return;
  long x0, x1;
  const float fx = px_resize_area_linear_frac(x, sw, dw, 1, &x0, &x1);
  const int a0 = px_resize_area_q11(px_sub_rn(1.0f, fx)), a1 = px_resize_area_q11(fx);
  x0 *= cn;
  x1 *= cn;
  for (long y = get_global_id(1); y < dh; y += get_global_size(1)) {
    long y0, y1;
    const float fy = px_resize_area_linear_frac(y, sh, dh, 0, &y0, &y1);
    const int b0 = px_resize_area_q11(px_sub_rn(1.0f, fy)), b1 = px_resize_area_q11(fy);
    __global const T* r0 = CROW(T, s, y0);
    __global const T* r1 = CROW(T, s, y1);
    __global T* out = ROW(T, d, y) + x * cn;
    for (int c = 0; c < cn; ++c) {
      const T a = r0[x0 + c], b = r0[x1 + c], e = r1[x0 + c], g = r1[x1 + c];
#if defined(T_U8)
      out[c] = px_resize_area_linear_u8(a, b, e, g, a0, a1, b0, b1);
#else
      out[c] = OUT_F(px_resize_area_linear_f32((float)a, (float)b, (float)e, (float)g, fx, fy));
#endif
    }
  }
}
#endif
