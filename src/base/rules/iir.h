/* The recursive Gaussian's per-step expressions (src/base/iir.hpp has the method, the block
 * rule and the line filter; docs/ops/gaussian.md). Coefficients arrive as scalars, so the
 * reference and CUDA pass the fields of IirCoeffs and OpenCL the entries of its coefficient
 * buffer; the same double operations in the same order everywhere (no FMA: host
 * -ffp-contract=off, CUDA -fmad=false, OpenCL FP_CONTRACT OFF). Double only. */
#ifndef PIXFLOW_RULES_IIR_H
#define PIXFLOW_RULES_IIR_H

#include "src/base/rules/base.h"

#if PX_HAS_F64
/* One recursion step: x the input, s1, s2, s3 the last three outputs (s1 the newest). The
 * newest output is added last, so the dependent chain per step is one multiply and one add. */
PX_FN double px_iir_step(double B, double b1, double b2, double b3, double x, double s1, double s2,
                         double s3) {
  return ((B * x + b3 * s3) + b2 * s2) + b1 * s1;
}

/* Step t of a block: its zero-state value z corrected by the carry s0, s1, s2 (s0 the output
 * nearest the block) times the block's response row H[t] = (h0, h1, h2). */
PX_FN double px_iir_fix(double h0, double h1, double h2, double z, double s0, double s1,
                        double s2) {
  return z + ((h0 * s0 + h1 * s1) + h2 * s2);
}

/* Triggs-Sdika: the anti-causal pass's initial output r from row M[r] = (m0, m1, m2), the
 * causal outputs' offsets u0..u2 from the last input up, and up. */
PX_FN double px_iir_end(double m0, double m1, double m2, double u0, double u1, double u2,
                        double up) {
  return m0 * u0 + m1 * u1 + m2 * u2 + up;
}
#endif

#endif /* PIXFLOW_RULES_IIR_H */
