// Point-wise ops (docs/ops/arith.md, convert.md, threshold.md, color.md): one work-item per
// sample of a row (x over width * channels), one row of the range per image row. Built per
// depth: T is the sample type (-DT=uchar ...), T_U8 .. T_F32 tell which; convert also gets
// D / D_* for the destination. The rules are those of src/base/pointwise.hpp.
#ifdef NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#if defined(T_F32)
#define SAT_T(v) ((float)(v))
#elif defined(T_U8)
#define SAT_T(v) convert_uchar_sat_rte(v)
#elif defined(T_U16)
#define SAT_T(v) convert_ushort_sat_rte(v)
#elif defined(T_S16)
#define SAT_T(v) convert_short_sat_rte(v)
#else
#define SAT_T(v) convert_int_sat_rte(v)
#endif

// a (op) b: float arithmetic for f32; exact in 64 bits then saturated for integers.
// op: 0 add, 1 sub, 2 absdiff, 3 mul (ArithOp's order).
__kernel void arith_image(CIMG(a), CIMG(b), IMG(d), int n, int rows, int op) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= n || y >= rows) return;
  const T va = CROW(T, a, y)[x], vb = CROW(T, b, y)[x];
#ifdef T_F32
  float r = op == 0 ? va + vb : op == 1 ? va - vb : op == 2 ? fabs(va - vb) : va * vb;
#else
  const long p = va, q = vb;
  const long r = op == 0 ? p + q : op == 1 ? p - q : op == 2 ? (p > q ? p - q : q - p) : p * q;
#endif
  ROW(T, d, y)[x] = SAT_T(r);
}

#ifdef NEED_FP64
// a (op) v in double, rounded half to even and saturated (f32: rounded to float).
__kernel void arith_scalar(CIMG(a), double v, IMG(d), int n, int rows, int op) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= n || y >= rows) return;
  const double p = (double)CROW(T, a, y)[x];
  const double r = op == 0 ? p + v : op == 1 ? p - v : op == 2 ? fabs(p - v) : p * v;
  ROW(T, d, y)[x] = SAT_T(r);
}

#if defined(D_F32)
#define SAT_D(v) ((float)(v))
#elif defined(D_U8)
#define SAT_D(v) convert_uchar_sat_rte(v)
#elif defined(D_U16)
#define SAT_D(v) convert_ushort_sat_rte(v)
#elif defined(D_S16)
#define SAT_D(v) convert_short_sat_rte(v)
#elif defined(D_S32)
#define SAT_D(v) convert_int_sat_rte(v)
#endif

#ifdef D
// saturate(round_half_even(abs?(x * scale + offset))) in double.
__kernel void convert(CIMG(s), IMG(d), int n, int rows, double scale, double offset, int absval) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= n || y >= rows) return;
  double v = (double)CROW(T, s, y)[x] * scale + offset;
  if (absval) v = fabs(v);
  ROW(D, d, y)[x] = SAT_D(v);
}
#endif
#endif

// cv::threshold's choice once "above" is known. type: binary, binary_inv, trunc, tozero,
// tozero_inv (ThresholdType's order).
#define PICK(type, above, x, t, mv)                                            \
  ((type) == 0   ? ((above) ? (mv) : (T)0)                                     \
   : (type) == 1 ? ((above) ? (T)0 : (mv))                                     \
   : (type) == 2 ? ((above) ? (t) : (x))                                       \
   : (type) == 3 ? ((above) ? (x) : (T)0)                                      \
                 : ((above) ? (T)0 : (x)))

// Integer depths compare against it = floor(t) clamped (src/base/pointwise.hpp
// int_threshold, computed on the host); f32 compares in float.
__kernel void threshold(CIMG(s), IMG(d), int n, int rows, int type,
#ifdef T_F32
                        float t, float tv, float mv
#else
                        long t, T tv, T mv
#endif
) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= n || y >= rows) return;
  const T v = CROW(T, s, y)[x];
#ifdef T_F32
  const int above = v > t;
#else
  const int above = (long)v > t;
#endif
  ROW(T, d, y)[x] = PICK(type, above, v, tv, mv);
}

// RGB(A) -> luma: BT.601 in Q15 for integers, (0.299R + 0.587G) + 0.114B in float for f32
// (src/ref/color.cpp). ri / bi: the red and blue channel (RGB or BGR); cn: 3 or 4.
__kernel void gray(CIMG(s), IMG(d), int w, int rows, int cn, int ri, int bi) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= w || y >= rows) return;
  __global const T *p = CROW(T, s, y) + x * cn;
#ifdef T_F32
  ROW(T, d, y)[x] = 0.299f * p[ri] + 0.587f * p[1] + 0.114f * p[bi];
#else
  const uint v = 9798u * (uint)p[ri] + 19235u * (uint)p[1] + 3735u * (uint)p[bi] + 16384u;
  ROW(T, d, y)[x] = (T)(v >> 15);
#endif
}

// dst(x, y) = src(y, x) for pixels of `ps` bytes (plain loads: the local-memory tile comes
// with the tuning on the GPU).
__kernel void transpose(CIMG(s), IMG(d), int w, int h, int ps) {
  // w, h: the destination's size. Work-item (x, y) of the range writes dst(x, y).
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= w || y >= h) return;
  __global const uchar *from = s + s_off + (long)x * s_stride + (long)y * ps;
  __global uchar *to = d + d_off + (long)y * d_stride + (long)x * ps;
  for (int i = 0; i < ps; ++i) to[i] = from[i];
}
