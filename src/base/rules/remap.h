/* remap's per-pixel rules (docs/ops/remap.md, src/ref/remap.cpp): the clamp of finite map
 * values and the bilinear interpolation. */
#ifndef PIXFLOW_RULES_REMAP_H
#define PIXFLOW_RULES_REMAP_H

#include "src/base/rules/base.h"
#include "src/base/rules/rounded.h"

/* Finite map values are clamped to +-2^30 (so x0 + 1 fits an int). */
#define PX_REMAP_MAX_COORD 1073741824.0f

/* Linear: ax = mx - floor(mx), ay likewise (exact), bx = 1 - ax, by = 1 - ay (px_sub_rn:
 * the caller makes them once a pixel); the four taps p00 (x0, y0), p10 (x0 + 1, y0), p01,
 * p11 as floats; by * (bx p00 + ax p10) + ay * (bx p01 + ax p11), each operation rounded once
 * in this order. */
PX_FN float px_remap_linear(float p00, float p10, float p01, float p11, float ax, float bx,
                            float ay, float by) {
  const float top = px_add_rn(px_mul_rn(bx, p00), px_mul_rn(ax, p10));
  const float bottom = px_add_rn(px_mul_rn(bx, p01), px_mul_rn(ax, p11));
  return px_add_rn(px_mul_rn(by, top), px_mul_rn(ay, bottom));
}

#endif /* PIXFLOW_RULES_REMAP_H */
