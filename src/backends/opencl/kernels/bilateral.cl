// bilateral (docs/ops/bilateral.md; the rule is src/ref/bilateral.cpp): one work-item per
// output pixel, walking the circular window in the reference's row-major order. Built per
// depth (-DT=uchar -DT_U8=1 or -DT=float -DT_F32=1) and channel count (-DCH=1..4).
// The host computes what the reference computes once per call (bilateral.cpp): the taps
// (dx, dy and the float space weight's bits, three ints a tap) and the colour table: u8 the
// 256 * CH floats of exp(delta^2 * coeff), f32 the interpolated table of
// src/base/bilateral_f32.hpp (T[i] at 2i, D[i] at 2i + 1).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#ifdef T_F32
// bilateral_f32::weight: alpha = delta * scale; beyond the span (also inf, NaN) 0; else
// T[i] + f * D[i], each operation rounded once (FP_CONTRACT OFF).
inline float f32_weight(__global const float *t, int n, float scale, float delta) {
  const float alpha = delta * scale;
  if (!(alpha < (float)n)) return 0.0f;
  const int i = (int)alpha;
  const float f = alpha - (float)i;
  return t[2 * i] + f * t[2 * i + 1];
}
#endif

// Per tap k: delta = the L1 distance of the tap's samples to the centre's (u8 in integers,
// f32 in float, channels in order), colour weight from the table, wk = space * colour,
// sum_c += v_c * wk, wsum += wk (float). Output sum_c / wsum, divided in double and rounded
// once to float: the correctly rounded float quotient (53 >= 2 * 24 + 2), which OpenCL's
// float division does not promise; u8 then rounded half to even and saturated (NaN -> 0).
__kernel void bilateral(CIMG(s), IMG(d), int width, int height, int border, T cval,
                        __global const int *taps, int ntaps, __global const float *table,
                        int bins, float scale) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  __global const T *centre = CROW(T, s, y) + x * CH;
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
      __global const T *p = CROW(T, s, yy) + xx * CH;
      for (int c = 0; c < CH; ++c) v[c] = p[c];
    }
#ifdef T_F32
    float delta = 0.0f;
    for (int c = 0; c < CH; ++c) delta += fabs(v[c] - c0[c]);
    const float cw = f32_weight(table, bins, scale, delta);
#else
    int delta = 0;
    for (int c = 0; c < CH; ++c) delta += (int)abs((int)v[c] - (int)c0[c]);
    const float cw = table[delta];
#endif
    const float wk = as_float(taps[3 * k + 2]) * cw;
    for (int c = 0; c < CH; ++c) sum[c] += (float)v[c] * wk;
    wsum += wk;
  }
  __global T *out = ROW(T, d, y) + x * CH;
  for (int c = 0; c < CH; ++c) {
    const float r = (float)((double)sum[c] / (double)wsum);
#ifdef T_F32
    out[c] = r;
#else
    out[c] = convert_uchar_sat_rte(r);
#endif
  }
}
