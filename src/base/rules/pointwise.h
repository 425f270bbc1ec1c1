/* Element rules of the point-wise ops (arith, convert, threshold, gray): docs/ops/arith.md,
 * convert.md, threshold.md, color.md. src/base/pointwise.hpp (the reference's and CUDA's
 * templates) and kernels/pointwise.cl call these. The op and the threshold type are ints in
 * the public enums' order; where a kernel knows them at compile time the inlined switch folds
 * to the one case. */
#ifndef PIXFLOW_RULES_POINTWISE_H
#define PIXFLOW_RULES_POINTWISE_H

#include "src/base/rules/base.h"
#include "src/base/rules/rounded.h"
#include "src/base/rules/saturate.h"

/* pixflow::ArithOp's order (pointwise.hpp checks it). */
#define PX_ARITH_ADD 0
#define PX_ARITH_SUB 1
#define PX_ARITH_ABSDIFF 2
#define PX_ARITH_MUL 3

/* pixflow::ThresholdType's order. */
#define PX_THRESH_BINARY 0
#define PX_THRESH_BINARY_INV 1
#define PX_THRESH_TRUNC 2
#define PX_THRESH_TOZERO 3
#define PX_THRESH_TOZERO_INV 4

/* a (op) b for integer samples: exact in 64 bits (then saturated to the depth by the caller,
 * px_arith_<depth> below). */
PX_FN px_s64 px_arith_s64(px_s64 x, px_s64 y, int op) {
  switch (op) {
    case PX_ARITH_ADD:
      return x + y;
    case PX_ARITH_SUB:
      return x - y;
    case PX_ARITH_ABSDIFF:
      return x > y ? x - y : y - x;
    case PX_ARITH_MUL:
      return x * y;
  }
  return 0;
}
#define PX_DEFINE_ARITH(name, T, SAT)                   \
  PX_FN T name(T a, T b, int op) {                      \
    return SAT(px_arith_s64((px_s64)a, (px_s64)b, op)); \
  }
PX_DEFINE_ARITH(px_arith_u8, px_u8, px_sat_u8_s64)
PX_DEFINE_ARITH(px_arith_u16, px_u16, px_sat_u16_s64)
PX_DEFINE_ARITH(px_arith_s16, px_s16, px_sat_s16_s64)
PX_DEFINE_ARITH(px_arith_s32, px_s32, px_sat_s32_s64)

/* a (op) b for f32: float arithmetic. */
PX_FN float px_arith_f32(float a, float b, int op) {
  switch (op) {
    case PX_ARITH_ADD:
      return a + b;
    case PX_ARITH_SUB:
      return a - b;
    case PX_ARITH_ABSDIFF:
      return PX_FABSF(a - b);
    case PX_ARITH_MUL:
      return a * b;
  }
  return 0;
}

#if PX_HAS_F64
/* a (op) v with a scalar: in double, then rounded half to even and saturated to the depth
 * (f32: rounded to float) by the caller. */
PX_FN double px_arith_f64(double x, double v, int op) {
  switch (op) {
    case PX_ARITH_ADD:
      return x + v;
    case PX_ARITH_SUB:
      return x - v;
    case PX_ARITH_ABSDIFF:
      return fabs(x - v);
    case PX_ARITH_MUL:
      return x * v;
  }
  return 0;
}

/* convert: abs?(x * scale + offset) in double (each operation rounded once), before the
 * destination's saturation. */
PX_FN double px_convert_value(double x, double scale, double offset, int absval) {
  double v = x * scale + offset;
  if (absval) v = fabs(v);
  return v;
}
#endif

/* cv::threshold's choice once "above" (x > t, in the depth's comparison) is known. */
#define PX_DEFINE_THRESHOLD_PICK(name, T)                 \
  PX_FN T name(int type, int above, T x, T t, T maxval) { \
    switch (type) {                                       \
      case PX_THRESH_BINARY:                              \
        return above ? maxval : (T)0;                     \
      case PX_THRESH_BINARY_INV:                          \
        return above ? (T)0 : maxval;                     \
      case PX_THRESH_TRUNC:                               \
        return above ? t : x;                             \
      case PX_THRESH_TOZERO:                              \
        return above ? x : (T)0;                          \
      case PX_THRESH_TOZERO_INV:                          \
        return above ? (T)0 : x;                          \
    }                                                     \
    return x;                                             \
  }
PX_DEFINE_THRESHOLD_PICK(px_threshold_pick_u8, px_u8)
PX_DEFINE_THRESHOLD_PICK(px_threshold_pick_u16, px_u16)
PX_DEFINE_THRESHOLD_PICK(px_threshold_pick_s16, px_s16)
PX_DEFINE_THRESHOLD_PICK(px_threshold_pick_s32, px_s32)
PX_DEFINE_THRESHOLD_PICK(px_threshold_pick_f32, float)

/* gray, u8 / u16: BT.601 luma in Q15, OpenCV's coefficients (R2Y 9798, G2Y 19235, B2Y 3735,
 * summing to 2^15; src/ref/color.cpp says why these), rounded half up. At most
 * 65535 * 32768 + 16384 < 2^31: exact in 32-bit unsigned. */
PX_FN px_u32 px_gray_q15(px_u32 r, px_u32 g, px_u32 b) {
  return (9798u * r + 19235u * g + 3735u * b + 16384u) >> 15;
}
/* gray, f32: (0.299 R + 0.587 G) + 0.114 B, each operation rounded once. */
PX_FN float px_gray_f32(float r, float g, float b) {
  return px_add_rn(px_add_rn(px_mul_rn(0.299f, r), px_mul_rn(0.587f, g)), px_mul_rn(0.114f, b));
}

#endif /* PIXFLOW_RULES_POINTWISE_H */
