/* The f32 bilateral's colour weight per tap (src/base/bilateral_f32.hpp has the rule, its
 * table and why; docs/ops/bilateral.md): alpha = delta * scale; beyond the table's span
 * (also inf and NaN) 0; else T[i] + f * D[i] with i = int(alpha), f = alpha - float(i), each
 * operation rounded once. `t` is the pair table (T[i] at 2i, D[i] at 2i + 1), n = N its bins.
 * One body for each address space the table is read from: px_bilateral_f32_weight (a plain
 * pointer: the reference, the CPU backend) and, in OpenCL C, px_bilateral_f32_weight_global
 * (a __global table). CUDA's kernels read it through their branch-free form
 * (src/backends/cuda/bilateral_f32_lookup.hpp, tested bit for bit against this rule). */
#ifndef PIXFLOW_RULES_BILATERAL_H
#define PIXFLOW_RULES_BILATERAL_H

#include "src/base/rules/base.h"
#include "src/base/rules/rounded.h"

#define PX_DEFINE_BILATERAL_F32_WEIGHT(name, PTR)            \
  PX_FN float name(PTR t, int n, float scale, float delta) { \
    const float alpha = px_mul_rn(delta, scale);             \
    if (!(alpha < (float)n)) return 0.0f;                    \
    const int i = (int)alpha;                                \
    const float f = px_sub_rn(alpha, (float)i);              \
    return px_add_rn(t[2 * i], px_mul_rn(f, t[2 * i + 1]));  \
  }
#if PX_OPENCL
PX_DEFINE_BILATERAL_F32_WEIGHT(px_bilateral_f32_weight_global, __global const float*)
#else
PX_DEFINE_BILATERAL_F32_WEIGHT(px_bilateral_f32_weight, const float*)
#endif

#endif /* PIXFLOW_RULES_BILATERAL_H */
