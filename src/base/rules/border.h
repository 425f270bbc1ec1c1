/* Border indexing and the ordering ops' f32 order: rules of every filter. */
#ifndef PIXFLOW_RULES_BORDER_H
#define PIXFLOW_RULES_BORDER_H

#include "src/base/rules/base.h"
#include "src/base/rules/rounded.h"

/* pixflow::BorderType's order (include/pixflow/border.hpp; numeric.hpp checks it). */
#define PX_BORDER_REPLICATE 0
#define PX_BORDER_REFLECT 1
#define PX_BORDER_REFLECT101 2
#define PX_BORDER_WRAP 3
#define PX_BORDER_CONSTANT 4

/* Maps a coordinate outside [0, len) into it by the border rule `type`, for any distance (the
 * rule repeats, as OpenCV's borderInterpolate); -1 for constant outside. len >= 1. One body,
 * two widths: px_border_index_i64 (the reference and CUDA: 64-bit coordinates) and
 * px_border_index_i32 (OpenCL: coordinates below 2^31, a 32-bit remainder). */
#define PX_DEFINE_BORDER_INDEX(name, I)      \
  PX_FN I name(I p, I len, int type) {       \
    if (p >= 0 && p < len) return p;         \
    switch (type) {                          \
      case PX_BORDER_REPLICATE:              \
        return p < 0 ? 0 : len - 1;          \
      case PX_BORDER_REFLECT: {              \
        const I period = 2 * len;            \
        I q = p % period;                    \
        if (q < 0) q += period;              \
        return q < len ? q : period - 1 - q; \
      }                                      \
      case PX_BORDER_REFLECT101: {           \
        if (len == 1) return 0;              \
        const I period = 2 * len - 2;        \
        I q = p % period;                    \
        if (q < 0) q += period;              \
        return q < len ? q : period - q;     \
      }                                      \
      case PX_BORDER_WRAP: {                 \
        const I q = p % len;                 \
        return q < 0 ? q + len : q;          \
      }                                      \
      default: /* PX_BORDER_CONSTANT */      \
        return -1;                           \
    }                                        \
  }
PX_DEFINE_BORDER_INDEX(px_border_index_i32, px_s32)
PX_DEFINE_BORDER_INDEX(px_border_index_i64, px_s64)

/* The order of the ordering ops (median, dilate, erode) on f32: IEEE 754 totalOrder as signed
 * 32-bit keys (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN), equal only for identical
 * bits; the map is its own inverse on the bits. */
PX_FN px_s32 px_order_key(float v) {
  const px_s32 i = (px_s32)px_float_bits(v);
  return i ^ ((i >> 31) & 0x7fffffff);
}
PX_FN float px_from_order_key(px_s32 k) {
  return px_bits_float((px_u32)(k ^ ((k >> 31) & 0x7fffffff)));
}

#endif /* PIXFLOW_RULES_BORDER_H */
