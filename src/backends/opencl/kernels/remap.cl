// remap (docs/ops/remap.md, src/ref/remap.cpp): `remap`, one work-item per destination pixel,
// every channel (remap_px below, 4 pixels a work-item, is the default schedule). Built per sample
// type (-DT=uchar / ushort / float, T_U8 / T_U16 / T_F32) and channel count (-DCN=1..4). Each tap goes through border_index on
// its own (constant outside: the border value, saturated to T on the host). The arithmetic is the
// reference's: map values clamped to +-2^30, linear in float in the reference's order (FP_CONTRACT
// OFF: no FMA), integers rounded half to even and saturated.

// The clamp bound and the bilinear interpolation (rules/remap.h px_remap_linear, which the
// reference and CUDA call) and the integer outputs' saturation (rules/saturate.h). The nearest
// tap is x0 + (fx >= 0.5f) (below): the reference's floor(double(m) + 0.5) without a double,
// the same integer (a form of its own, kept: no fp64 needed).
#include "src/base/rules/remap.h"
#include "src/base/rules/saturate.h"

#if defined(T_F32)
#define OUT_T(v) (v)
#elif defined(T_U8)
#define OUT_T(v) px_sat_u8_f32(v)
#else
#define OUT_T(v) px_sat_u16_f32(v)
#endif

#define REMAP_MAX_COORD PX_REMAP_MAX_COORD

// Sample c of source pixel (x, y) through the border, as float (exact for u8 / u16).
inline float remap_tap(__global const uchar* base, long stride, int w, int h, int cn, int x, int y,
                       int c, int border, float cval) {
  const int xx = border_index(x, w, border), yy = border_index(y, h, border);
  if (xx < 0 || yy < 0) return cval;
  return (float)((__global const T*)(base + (long)yy * stride))[xx * cn + c];
}

// sw, sh: the source's size; dw, dh: the destination's (= the maps'). cval: the constant
// border's value as T (as float); invalid: what a non-finite map entry gives (cval for the
// constant border, 0 otherwise).
__kernel void remap(CIMG(s), CIMG(mx), CIMG(my), IMG(d), int sw, int sh, int dw, int dh,
                    int linear, int border, float cval, float invalid) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= dw || y >= dh) return;
  __global const uchar* base = s + s_off;
  float fmx = CROW(float, mx, y)[x], fmy = CROW(float, my, y)[x];
  __global T* out = ROW(T, d, y) + x * CN;
  if (!isfinite(fmx) || !isfinite(fmy)) {
    for (int c = 0; c < CN; ++c) out[c] = (T)invalid;
    return;
  }
  fmx = fmin(fmax(fmx, -REMAP_MAX_COORD), REMAP_MAX_COORD);
  fmy = fmin(fmax(fmy, -REMAP_MAX_COORD), REMAP_MAX_COORD);
  // m = floor(m) + f exactly (f = m - floor(m) in [0, 1) is exact in float), so the
  // reference's floor(double(m) + 0.5) (an exact sum) is floor(m) + (f >= 0.5): no double.
  const float x0f = floor(fmx), y0f = floor(fmy);
  const float fx = fmx - x0f, fy = fmy - y0f;  // -0 - floor(-0) = +0, as the reference
  const int x0 = (int)x0f, y0 = (int)y0f;      // |x0| <= 2^30: x0 + 1 fits an int
  if (!linear) {
    const int xi = x0 + (fx >= 0.5f ? 1 : 0), yi = y0 + (fy >= 0.5f ? 1 : 0);
    for (int c = 0; c < CN; ++c)
      out[c] = (T)remap_tap(base, s_stride, sw, sh, CN, xi, yi, c, border, cval);
    return;
  }
  const float bx = 1.0f - fx, by = 1.0f - fy;
  for (int c = 0; c < CN; ++c) {
    const float p00 = remap_tap(base, s_stride, sw, sh, CN, x0, y0, c, border, cval);
    const float p10 = remap_tap(base, s_stride, sw, sh, CN, x0 + 1, y0, c, border, cval);
    const float p01 = remap_tap(base, s_stride, sw, sh, CN, x0, y0 + 1, c, border, cval);
    const float p11 = remap_tap(base, s_stride, sw, sh, CN, x0 + 1, y0 + 1, c, border, cval);
    out[c] = OUT_T(px_remap_linear(p00, p10, p01, p11, fx, bx, fy, by));
  }
}

// ---------------------------------------------------------------------------------------------
// remap_px: RPX adjacent destination pixels a work-item, the channel count CN a constant, and
// the interior formula of CUDA's fast kernel (src/backends/cuda/remap.cu): a pixel whose taps
// all lie inside the source (the interior of any smooth map) reads them directly, no
// border_index (two calls a tap, each a chain of compares; the per-pixel kernel's ALU bulk).
// Taps at an edge, non-finite or far-away map values take remap's rule as above. The
// arithmetic is the same expressions in the same order, so remap's bits. Why RPX pixels: a
// work-item's map loads and taps are independent, so they are all in flight together; a
// work-group of 32 x 8 reads 32 * RPX consecutive map floats a row.
inline void remap_one(__global const uchar* base, long stride, int sw, int sh, int border,
                      float cval, float invalid, int linear, float fmx, float fmy,
                      __global T* out) {
  if (!isfinite(fmx) || !isfinite(fmy)) {
    for (int c = 0; c < CN; ++c) out[c] = (T)invalid;
    return;
  }
  fmx = fmin(fmax(fmx, -REMAP_MAX_COORD), REMAP_MAX_COORD);
  fmy = fmin(fmax(fmy, -REMAP_MAX_COORD), REMAP_MAX_COORD);
  const float x0f = floor(fmx), y0f = floor(fmy);
  const float fx = fmx - x0f, fy = fmy - y0f;
  const int x0 = (int)x0f, y0 = (int)y0f;
  if (!linear) {
    const int xi = x0 + (fx >= 0.5f ? 1 : 0), yi = y0 + (fy >= 0.5f ? 1 : 0);
    if ((uint)xi < (uint)sw && (uint)yi < (uint)sh) {
      __global const T* p = (__global const T*)(base + (long)yi * stride) + xi * CN;
      for (int c = 0; c < CN; ++c) out[c] = p[c];
    } else {
      for (int c = 0; c < CN; ++c)
        out[c] = (T)remap_tap(base, stride, sw, sh, CN, xi, yi, c, border, cval);
    }
    return;
  }
  float p00[CN], p10[CN], p01[CN], p11[CN];
  if ((uint)x0 < (uint)(sw - 1) && (uint)y0 < (uint)(sh - 1)) {
    __global const T* r0 = (__global const T*)(base + (long)y0 * stride) + x0 * CN;
    __global const T* r1 = (__global const T*)((__global const uchar*)r0 + stride);
    for (int c = 0; c < CN; ++c) {
      p00[c] = (float)r0[c];
      p10[c] = (float)r0[CN + c];
      p01[c] = (float)r1[c];
      p11[c] = (float)r1[CN + c];
    }
  } else {
    for (int c = 0; c < CN; ++c) {
      p00[c] = remap_tap(base, stride, sw, sh, CN, x0, y0, c, border, cval);
      p10[c] = remap_tap(base, stride, sw, sh, CN, x0 + 1, y0, c, border, cval);
      p01[c] = remap_tap(base, stride, sw, sh, CN, x0, y0 + 1, c, border, cval);
      p11[c] = remap_tap(base, stride, sw, sh, CN, x0 + 1, y0 + 1, c, border, cval);
    }
  }
  const float bx = 1.0f - fx, by = 1.0f - fy;
  for (int c = 0; c < CN; ++c)
    out[c] = OUT_T(px_remap_linear(p00[c], p10[c], p01[c], p11[c], fx, bx, fy, by));
}

__kernel void remap_px(CIMG(s), CIMG(mx), CIMG(my), IMG(d), int sw, int sh, int dw, int dh,
                       int linear, int border, float cval, float invalid) {
  const int x0 = get_global_id(0) * RPX, y = get_global_id(1);
  if (x0 >= dw || y >= dh) return;
  __global const uchar* base = s + s_off;
  __global const float* mxr = CROW(float, mx, y) + x0;
  __global const float* myr = CROW(float, my, y) + x0;
  __global T* out = ROW(T, d, y) + x0 * CN;
  if (x0 + RPX <= dw) {
    float fx[RPX], fy[RPX];
#pragma unroll
    for (int i = 0; i < RPX; ++i) {
      fx[i] = mxr[i];
      fy[i] = myr[i];
    }
#pragma unroll
    for (int i = 0; i < RPX; ++i)
      remap_one(base, s_stride, sw, sh, border, cval, invalid, linear, fx[i], fy[i], out + i * CN);
  } else {
    for (int i = 0; i < dw - x0; ++i)
      remap_one(base, s_stride, sw, sh, border, cval, invalid, linear, mxr[i], myr[i],
                out + i * CN);
  }
}
