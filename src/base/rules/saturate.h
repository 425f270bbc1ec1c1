/* Conversions to the integer depths with the library's rule: round half to even (the IEEE
 * default, as cvRound), saturate to the depth's range, NaN -> 0; from an exact integer: the
 * clamp. Also the integer rounding rules of the filters (div_round_half_even, the fixed-point
 * shift of the linear filters).
 *
 * px_sat_<depth>_f64 / _f32 / _s64 for depth u8, u16, s16, s32. C++ and CUDA evaluate the
 * body of PX_DEFINE_SAT_F64 / PX_DEFINE_SAT_S64 (saturate_cast<T> in numeric.hpp is a thin
 * wrapper). OpenCL C uses its built-in saturating conversions instead, convert_<T>_sat_rte and
 * convert_<T>_sat: the OpenCL spec defines them as exactly this rule (round to nearest even,
 * clamp to the type's range, NaN -> 0), and NVIDIA's compiler makes one cvt.rni.sat of them,
 * where the portable body would be a NaN test, a rint and two compares. That is the one place
 * where the OpenCL kernels keep their own form of a shared rule (docs/architecture.md). The
 * _f32 forms are the _f64 rule on the exact float -> double conversion. */
#ifndef PIXFLOW_RULES_SATURATE_H
#define PIXFLOW_RULES_SATURATE_H

#include "src/base/rules/base.h"

#if PX_OPENCL
#define px_sat_u8_f32(v) convert_uchar_sat_rte((float)(v))
#define px_sat_u16_f32(v) convert_ushort_sat_rte((float)(v))
#define px_sat_s16_f32(v) convert_short_sat_rte((float)(v))
#define px_sat_s32_f32(v) convert_int_sat_rte((float)(v))
/* The _s64 forms take an exact integer of any width here (an int sum stays an int). */
#define px_sat_u8_s64(v) convert_uchar_sat(v)
#define px_sat_u16_s64(v) convert_ushort_sat(v)
#define px_sat_s16_s64(v) convert_short_sat(v)
#define px_sat_s32_s64(v) convert_int_sat(v)
#if PX_HAS_F64
#define px_sat_u8_f64(v) convert_uchar_sat_rte((double)(v))
#define px_sat_u16_f64(v) convert_ushort_sat_rte((double)(v))
#define px_sat_s16_f64(v) convert_short_sat_rte((double)(v))
#define px_sat_s32_f64(v) convert_int_sat_rte((double)(v))
#endif
#else
#define PX_DEFINE_SAT_F64(name, T, LO, HI) \
  PX_FN T name(double v) {                 \
    if (!(v == v)) return (T)0;            \
    const double r = rint(v);              \
    if (r < LO) return (T)(LO);            \
    if (r > HI) return (T)(HI);            \
    return (T)r;                           \
  }
#define PX_DEFINE_SAT_S64(name, T, LO, HI) \
  PX_FN T name(px_s64 v) {                 \
    if (v < (px_s64)(LO)) return (T)(LO);  \
    if (v > (px_s64)(HI)) return (T)(HI);  \
    return (T)v;                           \
  }
PX_DEFINE_SAT_F64(px_sat_u8_f64, px_u8, 0.0, 255.0)
PX_DEFINE_SAT_F64(px_sat_u16_f64, px_u16, 0.0, 65535.0)
PX_DEFINE_SAT_F64(px_sat_s16_f64, px_s16, -32768.0, 32767.0)
PX_DEFINE_SAT_F64(px_sat_s32_f64, px_s32, -2147483648.0, 2147483647.0)
PX_DEFINE_SAT_S64(px_sat_u8_s64, px_u8, 0.0, 255.0)
PX_DEFINE_SAT_S64(px_sat_u16_s64, px_u16, 0.0, 65535.0)
PX_DEFINE_SAT_S64(px_sat_s16_s64, px_s16, -32768.0, 32767.0)
PX_DEFINE_SAT_S64(px_sat_s32_s64, px_s32, -2147483648.0, 2147483647.0)
PX_FN px_u8 px_sat_u8_f32(float v) {
  return px_sat_u8_f64((double)v);
}
PX_FN px_u16 px_sat_u16_f32(float v) {
  return px_sat_u16_f64((double)v);
}
PX_FN px_s16 px_sat_s16_f32(float v) {
  return px_sat_s16_f64((double)v);
}
PX_FN px_s32 px_sat_s32_f32(float v) {
  return px_sat_s32_f64((double)v);
}
#endif

/* num / den rounded half to even; den > 0 (floor division, then the tie rule). */
PX_FN px_s64 px_div_round_half_even(px_s64 num, px_s64 den) {
  px_s64 q = num / den, r = num % den;
  if (r < 0) {
    q -= 1;
    r += den;
  }
  if (2 * r > den || (2 * r == den && (q & 1))) q += 1;
  return q;
}

/* The fixed-point result of the integer linear filters (Gaussian Q8 / Q16 taps): v / 2^shift
 * rounded half up, (v + 2^(shift-1)) >> shift (arithmetic shift: floor), shift >= 1. */
PX_FN px_s64 px_round_shift_s64(px_s64 v, int shift) {
  return (v + ((px_s64)1 << (shift - 1))) >> shift;
}

#endif /* PIXFLOW_RULES_SATURATE_H */
