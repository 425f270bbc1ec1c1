/* resize's rules (docs/ops/resize.md, src/ref/resize.cpp): the source taps and weights of
 * every destination row and column, and the per-sample arithmetic, for the three
 * interpolations. u8 is bit-exact to OpenCV 4.x cv::resize with an explicit dsize:
 *   nearest = INTER_NEAREST_EXACT, linear = INTER_LINEAR_EXACT, area = INTER_AREA.
 * Each axis is independent: a destination index d of an axis of n source and m destination
 * samples maps to taps of that axis only. Everything here is a pure function of (d, n, m),
 * so a kernel computes its own taps; the double operations go through px_dmul_rn /
 * px_dadd_rn (never contracted) and match the reference bit for bit. */
#ifndef PIXFLOW_RULES_RESIZE_H
#define PIXFLOW_RULES_RESIZE_H

#include "src/base/rules/base.h"
#include "src/base/rules/rounded.h"
#include "src/base/rules/saturate.h"

/* The largest destination side (and the largest source side the rules are written for:
 * every product below fits 64 bits). */
#define PX_RESIZE_MAX_SIDE 1048576

/* ---- nearest: OpenCV 4.x INTER_NEAREST_EXACT -------------------------------------------
 * step = ((n << 16) + m / 2) / m (16.16 fixed point), s = (step d + step / 2 - n % 2) >> 16,
 * clamped to [0, n - 1]. In 64 bits (OpenCV's int overflows from n = 32768 on). */
PX_FN px_s64 px_resize_nearest_step(px_s64 n, px_s64 m) {
  return ((n << 16) + m / 2) / m;
}
PX_FN px_s64 px_resize_nearest_index(px_s64 d, px_s64 n, px_s64 step) {
  const px_s64 v = step * d + step / 2 - n % 2;
  const px_s64 s = v < 0 ? 0 : (v >> 16);
  return s > n - 1 ? n - 1 : s;
}

#if PX_HAS_F64
PX_FN double px_resize_dsub(double a, double b) {
  return px_dadd_rn(a, -b);
}
/* round half to even of a double holding an integer plus a fraction (no rint: one text for
 * every compiler). */
PX_FN px_s64 px_resize_round_even(double t) {
  const double f = floor(t);
  const double r = px_resize_dsub(t, f);
  px_s64 q = (px_s64)f;
  if (r > 0.5 || (r == 0.5 && (q & 1))) q += 1;
  return q;
}

/* ---- linear: OpenCV INTER_LINEAR_EXACT ------------------------------------------------
 * scale = 1 / (m / n) (two correctly rounded double divisions), f = scale (d + 0.5) - 0.5,
 * i = floor(f). Inside (0 <= i < n - 1, n > 1): taps i and i + 1, the weight of i + 1
 * w1 = round_half_even((f - i) 2^bits) (Q8 for u8, Q16 for u16 / s16), of i one - w1.
 * Outside: one tap, 0 (f < 0 or n == 1) or n - 1, weight one. *i0 = first tap, *i1 = second
 * (== *i0 outside), returns w1. f32 takes the unrounded fraction (px_resize_linear_frac). */
PX_FN double px_resize_linear_scale(px_s64 n, px_s64 m) {
  return px_ddiv_rn(1.0, px_ddiv_rn((double)m, (double)n));
}
PX_FN double px_resize_linear_frac(px_s64 d, px_s64 n, double scale, px_s64* i0, px_s64* i1) {
  const double f = px_resize_dsub(px_dmul_rn(scale, px_dadd_rn((double)d, 0.5)), 0.5);
  const double fl = floor(f);
  const px_s64 i = (px_s64)fl;
  if (i >= 0 && n > 1 && i < n - 1) {
    *i0 = i;
    *i1 = i + 1;
    return px_resize_dsub(f, fl);
  }
  *i0 = *i1 = (i >= 0 && n > 1) ? n - 1 : 0;
  return 0.0;
}
PX_FN px_s64 px_resize_linear_tap(px_s64 d, px_s64 n, double scale, int bits, px_s64* i0,
                                  px_s64* i1) {
  const double frac = px_resize_linear_frac(d, n, scale, i0, i1);
  return px_resize_round_even(px_dmul_rn(frac, (double)((px_s64)1 << bits)));
}
/* u8: h = w0 a + w1 b per row (Q8), out = (wy0 h0 + wy1 h1 + 2^15) >> 16. */
PX_FN px_u8 px_resize_linear_u8(px_s32 a, px_s32 b, px_s32 c, px_s32 e, px_s32 wx1, px_s32 wy1) {
  const px_s32 h0 = (256 - wx1) * a + wx1 * b;
  const px_s32 h1 = (256 - wx1) * c + wx1 * e;
  return (px_u8)(((256 - wy1) * h0 + wy1 * h1 + 32768) >> 16);
}
/* u16 / s16: the same in Q16, 64-bit, (v + 2^31) >> 32 (floor shift), saturated. */
PX_FN px_s64 px_resize_linear_q16(px_s64 a, px_s64 b, px_s64 c, px_s64 e, px_s64 wx1, px_s64 wy1) {
  const px_s64 h0 = (65536 - wx1) * a + wx1 * b;
  const px_s64 h1 = (65536 - wx1) * c + wx1 * e;
  return px_round_shift_s64((65536 - wy1) * h0 + wy1 * h1, 32);
}
/* f32: ax = (float)frac, bx = 1 - ax (likewise y); by (bx a + ax b) + ay (bx c + ax e), each
 * operation rounded once in this order. */
PX_FN float px_resize_linear_f32(float a, float b, float c, float e, float ax, float ay) {
  const float bx = px_sub_rn(1.0f, ax), by = px_sub_rn(1.0f, ay);
  const float top = px_add_rn(px_mul_rn(bx, a), px_mul_rn(ax, b));
  const float bottom = px_add_rn(px_mul_rn(bx, c), px_mul_rn(ax, e));
  return px_add_rn(px_mul_rn(by, top), px_mul_rn(ay, bottom));
}

/* ---- area: OpenCV INTER_AREA -------------------------------------------------------------
 * The mode of a call (both axes together): same size: copy; scale = 1 / (m / n) >= 1 on both
 * axes: integer factors (|scale - round(scale)| < DBL_EPSILON on both) block means (FAST),
 * else the float-weighted cover (COVER); otherwise (an axis enlarges) the linear scheme with
 * area coordinates (LINEAR). */
#define PX_RESIZE_AREA_COPY 0
#define PX_RESIZE_AREA_FAST 1
#define PX_RESIZE_AREA_COVER 2
#define PX_RESIZE_AREA_LINEAR 3
PX_FN int px_resize_area_mode(px_s64 nx, px_s64 mx, px_s64 ny, px_s64 my) {
  if (nx == mx && ny == my) return PX_RESIZE_AREA_COPY;
  const double sx = px_resize_linear_scale(nx, mx), sy = px_resize_linear_scale(ny, my);
  if (sx >= 1.0 && sy >= 1.0) {
    const double ex = px_resize_dsub(sx, (double)px_resize_round_even(sx));
    const double ey = px_resize_dsub(sy, (double)px_resize_round_even(sy));
    const double eps = 2.220446049250313080847e-16;
    if (fabs(ex) < eps && fabs(ey) < eps) return PX_RESIZE_AREA_FAST;
    return PX_RESIZE_AREA_COVER;
  }
  return PX_RESIZE_AREA_LINEAR;
}
/* FAST: the integer factor of an axis. */
PX_FN px_s64 px_resize_area_factor(px_s64 n, px_s64 m) {
  return px_resize_round_even(px_resize_linear_scale(n, m));
}
/* FAST, integer depths: sum of the kx x ky block; 2 x 2: (sum + 2) >> 2 (floor shift);
 * otherwise round_half_even((float)sum * (1.f / (float)(kx ky))), saturated by the caller. */
PX_FN float px_resize_area_fast_scale(px_s64 kx, px_s64 ky) {
  return px_div_rn(1.0f, (float)(kx * ky));
}

/* COVER: destination d covers [d scale, d scale + scale) of the source. Its taps along the
 * axis: an optional partial first tap, full taps, an optional partial last tap, each with a
 * float weight (OpenCV's computeResizeAreaTab). */
typedef struct {
  px_s64 first; /* source index of the first tap */
  px_s32 count; /* number of taps */
  px_s32 has_first;
  float w_first, w_mid, w_last;
  px_s32 has_last;
} px_resize_span;
PX_FN px_resize_span px_resize_area_span(px_s64 d, px_s64 n, double scale) {
  px_resize_span s;
  const double f1 = px_dmul_rn((double)d, scale);
  const double f2 = px_dadd_rn(f1, scale);
  const double rest = px_resize_dsub((double)n, f1);
  const double cell = scale < rest ? scale : rest;
  px_s64 s1 = (px_s64)ceil(f1), s2 = (px_s64)floor(f2);
  if (s2 > n - 1) s2 = n - 1;
  if (s1 > s2) s1 = s2;
  const double head = px_resize_dsub((double)s1, f1);
  const double tail = px_resize_dsub(f2, (double)s2);
  s.has_first = head > 1e-3 ? 1 : 0;
  s.has_last = tail > 1e-3 ? 1 : 0;
  s.first = s.has_first ? s1 - 1 : s1;
  s.count = (px_s32)(s.has_first + (s2 - s1) + s.has_last);
  s.w_first = (float)px_ddiv_rn(head, cell);
  s.w_mid = (float)px_ddiv_rn(1.0, cell);
  {
    double t = tail < 1.0 ? tail : 1.0;
    t = t < cell ? t : cell;
    s.w_last = (float)px_ddiv_rn(t, cell);
  }
  return s;
}
/* The weight of tap k (0 <= k < count) of a span. */
PX_FN float px_resize_span_weight(px_resize_span s, px_s32 k) {
  if (k == 0 && s.has_first) return s.w_first;
  if (k == s.count - 1 && s.has_last) return s.w_last;
  return s.w_mid;
}
/* COVER arithmetic (float, this order): per tap row j, r_j = sum over k of (float)src * wx_k
 * from 0 in k order; acc = wy_0 r_0, then acc += wy_j r_j; integer depths round half to even
 * and saturate. */

/* LINEAR (area coordinates): s = floor(d scale); fx = (float)((d + 1) - (s + 1) (m / n));
 * fx <= 0: 0, else fx - floor(fx). x axis (clamp = 1): s >= n - 1 gives s = n - 1, fx = 0.
 * y axis (clamp = 0): rows s and min(s + 1, n - 1), fx kept. Returns fx; *i0, *i1 the taps. */
PX_FN float px_resize_area_linear_frac(px_s64 d, px_s64 n, px_s64 m, int clamp, px_s64* i0,
                                       px_s64* i1) {
  const double inv = px_ddiv_rn((double)m, (double)n);
  const double scale = px_ddiv_rn(1.0, inv);
  px_s64 s = (px_s64)floor(px_dmul_rn((double)d, scale));
  float fx = (float)px_resize_dsub((double)(d + 1), px_dmul_rn((double)(s + 1), inv));
  fx = fx <= 0.0f ? 0.0f : px_sub_rn(fx, floor(fx));
  if (clamp && s >= n - 1) {
    s = n - 1;
    fx = 0.0f;
  }
  if (s > n - 1) s = n - 1;
  *i0 = s;
  *i1 = s + 1 < n ? s + 1 : n - 1;
  return fx;
}
/* u8 weights: Q11, a0 = round_half_even((1 - fx) 2048), a1 = round_half_even(fx 2048), each
 * from its float (OpenCV's INTER_RESIZE_COEF_SCALE). */
PX_FN px_s32 px_resize_area_q11(float v) {
  return (px_s32)px_resize_round_even((double)px_mul_rn(v, 2048.0f));
}
/* u8: h = a0 a + a1 b per row; out = ((b0 (h0 >> 4)) >> 16) + ((b1 (h1 >> 4)) >> 16) + 2) >> 2
 * (OpenCV's u8 vertical linear step, every h >= 0). */
PX_FN px_u8 px_resize_area_linear_u8(px_s32 a, px_s32 b, px_s32 c, px_s32 e, px_s32 a0, px_s32 a1,
                                     px_s32 b0, px_s32 b1) {
  const px_s32 h0 = a0 * a + a1 * b, h1 = a0 * c + a1 * e;
  const px_s32 v = (((b0 * (h0 >> 4)) >> 16) + ((b1 * (h1 >> 4)) >> 16) + 2) >> 2;
  return (px_u8)(v > 255 ? 255 : v);
}
/* u16 / s16 / f32: float, h = a (1 - fx) + b fx per row, out = h0 (1 - fy) + h1 fy (products
 * rounded, then the sum); integers round half to even and saturate. */
PX_FN float px_resize_area_linear_f32(float a, float b, float c, float e, float fx, float fy) {
  const float ax0 = px_sub_rn(1.0f, fx), ay0 = px_sub_rn(1.0f, fy);
  const float h0 = px_add_rn(px_mul_rn(a, ax0), px_mul_rn(b, fx));
  const float h1 = px_add_rn(px_mul_rn(c, ax0), px_mul_rn(e, fx));
  return px_add_rn(px_mul_rn(h0, ay0), px_mul_rn(h1, fy));
}
#endif /* PX_HAS_F64 */

#endif /* PIXFLOW_RULES_RESIZE_H */
