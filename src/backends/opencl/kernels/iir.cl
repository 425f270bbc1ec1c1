// gaussian_iir (docs/ops/gaussian.md): the block-rule line filter of src/base/iir.hpp
// (iir_filter_line) in double, one work-item per line (a line is one channel of a row or of
// a column), the same expressions in the same order. A pass reads S samples and writes D
// samples (-DS=... -DS_U8=1 / -DS_F32=1, the same for D): rows T -> float, then columns
// float -> T. The coefficients come from the host's iir_coeffs (see IIR_* below).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define IIR_BLOCK 32  // detail::kIirBlock: a constant of the rule
// The coefficient buffer: B, b1, b2, b3, M[3][3] row-major, H[IIR_BLOCK][3] row-major.
#define IIR_B 0
#define IIR_B1 1
#define IIR_B2 2
#define IIR_B3 3
#define IIR_M(r, c) (4 + 3 * (r) + (c))
#define IIR_H(t, c) (13 + 3 * (t) + (c))

// iir_step: the newest output added last.
inline double iir_step(__global const double *k, double x, double s1, double s2, double s3) {
  return ((k[IIR_B] * x + k[IIR_B3] * s3) + k[IIR_B2] * s2) + k[IIR_B1] * s1;
}

// iir_fix: step t's zero-state value corrected by the carry (s0 the nearest output).
inline double iir_fix(__global const double *k, int t, double z, double s0, double s1,
                      double s2) {
  return z + ((k[IIR_H(t, 0)] * s0 + k[IIR_H(t, 1)] * s1) + k[IIR_H(t, 2)] * s2);
}

#if defined(D_F32)
#define PUT_D(v) ((float)(v))
#else
// saturate_cast<uchar>(double(float(v))): the float result rounded half to even, saturated.
#define PUT_D(v) convert_uchar_sat_rte((float)(v))
#endif

// One pass over `nlines` lines of `len` samples each. rows = 1: line L is channel L % ch of
// row L / ch (sample i at x = i); rows = 0: channel L % ch of column L / ch (sample i at
// y = i). e: the border extension (iir_extension), cval: the constant border's value (the
// op's depth, as a double). w: scratch of (len + 2e + 6) doubles a line, interleaved
// (position j of line L at j * nlines + L): iir_filter_line's w.
__kernel void iir_pass(CIMG(s), IMG(d), int nlines, int len, int ch, int rows, int e, int border,
                       double cval, __global const double *k, __global double *w) {
  const int L = get_global_id(0);
  if (L >= nlines) return;
  const int line = L / ch, c = L % ch;
  const int n = len + 2 * e;
#define W(j) w[(long)(j) * nlines + L]
// x(i): position i of the extended line through the border rule.
#define X(i, out)                                                                     \
  do {                                                                                \
    const int src_i = border_index((i) - e, len, border);                            \
    if (src_i < 0)                                                                    \
      out = cval;                                                                     \
    else if (rows)                                                                    \
      out = (double)CROW(S, s, line)[(long)src_i * ch + c];                           \
    else                                                                              \
      out = (double)CROW(S, s, src_i)[(long)line * ch + c];                           \
  } while (0)
  double x0;
  X(0, x0);
  W(0) = x0;
  W(1) = x0;
  W(2) = x0;
  // Causal, blocks left to right; block a's carry is w at a-1, a-2, a-3.
  for (int a = 0; a < n; a += IIR_BLOCK) {
    const int m = min(IIR_BLOCK, n - a);
    const double s0 = W(a + 2), s1 = W(a + 1), s2 = W(a);
    double z1 = 0, z2 = 0, z3 = 0;
    for (int t = 0; t < m; ++t) {
      double xv;
      X(a + t, xv);
      const double z = iir_step(k, xv, z1, z2, z3);
      z3 = z2;
      z2 = z1;
      z1 = z;
      W(a + t + 3) = iir_fix(k, t, z, s0, s1, s2);
    }
  }
  // Triggs-Sdika: y at n, n+1, n+2 from w at n-1, n-2, n-3 and up = x(n - 1).
  double up;
  X(n - 1, up);
  const double u0 = W(n + 2) - up, u1 = W(n + 1) - up, u2 = W(n) - up;
  for (int r = 0; r < 3; ++r)
    W(n + 3 + r) = k[IIR_M(r, 0)] * u0 + k[IIR_M(r, 1)] * u1 + k[IIR_M(r, 2)] * u2 + up;
  // Anti-causal, blocks right to left; block [a, b)'s carry is y at b, b+1, b+2. Blocks left
  // of the line's first sample are skipped (they only feed blocks further left).
  for (int a = (n - 1) / IIR_BLOCK * IIR_BLOCK; a >= 0 && a + IIR_BLOCK > e; a -= IIR_BLOCK) {
    const int b = min(n, a + IIR_BLOCK);
    const double s0 = W(b + 3), s1 = W(b + 4), s2 = W(b + 5);
    double z1 = 0, z2 = 0, z3 = 0;
    for (int t = 0; t < b - a; ++t) {
      const int i = b - 1 - t;
      const double z = iir_step(k, W(i + 3), z1, z2, z3);
      z3 = z2;
      z2 = z1;
      z1 = z;
      W(i + 3) = iir_fix(k, t, z, s0, s1, s2);
    }
  }
  for (int i = 0; i < len; ++i) {
    const double v = W(i + e + 3);
    if (rows)
      ROW(D, d, line)[(long)i * ch + c] = PUT_D(v);
    else
      ROW(D, d, i)[(long)line * ch + c] = PUT_D(v);
  }
#undef X
#undef W
}
