/* epsilon's result (docs/ops/epsilon.md, src/ref/epsilon.cpp): u8, the mean of the n
 * selected samples rounded half up, (2 sum + n) / (2 n) in integers (n >= 1: the centre is
 * always selected); one body, two widths (the reference sums in 64 bits for any radius, the
 * kernels in 32 where the window bounds the sum). f32: float(sum / n) with the sum in double. */
#ifndef PIXFLOW_RULES_EPSILON_H
#define PIXFLOW_RULES_EPSILON_H

#include "src/base/rules/base.h"

#define PX_DEFINE_EPSILON_MEAN(name, I) \
  PX_FN I name(I sum, I n) {            \
    return (2 * sum + n) / (2 * n);     \
  }
PX_DEFINE_EPSILON_MEAN(px_epsilon_mean_i32, px_s32)
PX_DEFINE_EPSILON_MEAN(px_epsilon_mean_i64, px_s64)

#if PX_HAS_F64
PX_FN float px_epsilon_mean_f64(double sum, double n) {
  return (float)(sum / n);
}
#endif

#endif /* PIXFLOW_RULES_EPSILON_H */
