// The recursive Gaussian (Young–van Vliet 3rd order, Triggs–Sdika end conditions) as one
// line filter in block form, shared by the reference, the SIMD CPU backend and the CUDA
// kernels, so all evaluate the same double expressions in the same order (host:
// -ffp-contract=off; device: -fmad=false). (src/backends/cuda/iir.cu's block kernels are not
// yet verified on a GPU; see its header.) See docs/ops/gaussian.md
// for the method, the block rule and the measured error.
//
// Block rule (why: a GPU cannot afford one thread per line walking the whole line; blocks of
// a line are filtered in parallel). A pass over the extended line of n samples is cut into
// blocks of kIirBlock positions, [a, a + kIirBlock) for a = 0, kIirBlock, ... (the last one
// partial). Each block is filtered from zero state (iir_step, needs nothing from other
// blocks), then corrected by its carry, the three outputs just before it, times the block's
// responses to those three initial values (iir_fix, tables IirCoeffs::H). The carries are the
// corrected outputs of the neighbouring block, so they propagate block by block (on a GPU: a
// short sequential pass over the blocks' last three values, the same iir_fix expressions).
// In exact arithmetic this is the sequential recursion; only rounding differs from it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "pixflow/ops.hpp"
#include "src/base/numeric.hpp"
#include "src/base/rules/iir.h"

namespace pixflow::detail {

/// Positions per block of the block rule: a constant of the rule (changing it changes the
/// rounding of every result). 32: one warp's worth of independent blocks per 1024 samples of
/// a line, and 32 x 3 doubles of response tables.
inline constexpr int kIirBlock = 32;

struct IirCoeffs {
  double B, b1, b2, b3;
  double M[3][3];  // Triggs & Sdika (2006) end-of-line matrix for the anti-causal pass
  // H[t][c]: step t of a block run from zero input and the state (s0, s1, s2) = unit vector c,
  // s0 the output next to the block (iir_fix). The same for both passes (same recursion).
  double H[kIirBlock][3];
};

/// One recursion step: x the input, s1, s2, s3 the last three outputs (s1 the newest). The
/// newest output is added last, so the dependent chain per step is one multiply and one add.
/// (rules/iir.h px_iir_step, which the OpenCL kernels call too.)
PIXFLOW_HD double iir_step(const IirCoeffs& k, double x, double s1, double s2, double s3) {
  return px_iir_step(k.B, k.b1, k.b2, k.b3, x, s1, s2, s3);
}

/// Step t of a block: its zero-state value z corrected by the carry s0, s1, s2 (the outputs
/// just before the block in the pass's direction, s0 the nearest). (px_iir_fix.)
PIXFLOW_HD double iir_fix(const IirCoeffs& k, int t, double z, double s0, double s1, double s2) {
  return px_iir_fix(k.H[t][0], k.H[t][1], k.H[t][2], z, s0, s1, s2);
}

/// Triggs–Sdika: the anti-causal pass's initial output r (at n + r) from u, the causal
/// outputs at n-1, n-2, n-3 less up, and up = x(n - 1). (px_iir_end.)
PIXFLOW_HD double iir_end(const IirCoeffs& k, int r, double u0, double u1, double u2, double up) {
  return px_iir_end(k.M[r][0], k.M[r][1], k.M[r][2], u0, u1, u2, up);
}

/// Coefficients for sigma (host only). The end matrix is computed numerically by running
/// the causal and anti-causal recursions on unit impulses.
inline IirCoeffs iir_coeffs(double sigma) {
  const double q = sigma >= 2.5 ? 0.98711 * sigma - 0.96330
                                : 3.97156 - 4.14554 * std::sqrt(1.0 - 0.26891 * sigma);
  const double q2 = q * q, q3 = q2 * q;
  const double b0 = 1.57825 + 2.44413 * q + 1.4281 * q2 + 0.422205 * q3;
  IirCoeffs k{};
  k.b1 = (2.44413 * q + 2.85619 * q2 + 1.26661 * q3) / b0;
  k.b2 = -(1.4281 * q2 + 1.26661 * q3) / b0;
  k.b3 = (0.422205 * q3) / b0;
  k.B = 1.0 - (k.b1 + k.b2 + k.b3);
  const std::size_t L = std::size_t(40 * sigma) + 200;
  std::vector<double> e(L + 3), f(L + 3);
  for (int c = 0; c < 3; ++c) {
    std::fill(e.begin(), e.end(), 0.0);
    e[std::size_t(2 - c)] = 1.0;  // e[2] = w[n-1], e[1] = w[n-2], e[0] = w[n-3]
    for (std::size_t i = 3; i < L + 3; ++i)
      e[i] = k.b1 * e[i - 1] + k.b2 * e[i - 2] + k.b3 * e[i - 3];
    std::fill(f.begin(), f.end(), 0.0);
    for (std::size_t i = L; i-- > 3;)
      f[i] = k.B * e[i] + k.b1 * f[i + 1] + k.b2 * f[i + 2] + k.b3 * f[i + 3];
    for (int r = 0; r < 3; ++r) k.M[r][c] = f[std::size_t(3 + r)];
  }
  for (int c = 0; c < 3; ++c) {
    double s1 = c == 0 ? 1.0 : 0.0, s2 = c == 1 ? 1.0 : 0.0, s3 = c == 2 ? 1.0 : 0.0;
    for (int t = 0; t < kIirBlock; ++t) {
      k.H[t][c] = iir_step(k, 0.0, s1, s2, s3);
      s3 = s2;
      s2 = s1;
      s1 = k.H[t][c];
    }
  }
  return k;
}

/// Samples added on each side of a line for borders other than replicate (replicate is
/// exact through the Triggs–Sdika conditions and needs none).
inline std::int64_t iir_extension(const GaussianIirParams& p) {
  return p.border.type == BorderType::replicate ? 0 : std::int64_t(std::ceil(4 * p.sigma)) + 8;
}

/// Filters one line of `len` samples: get(i) reads sample i, put(i, v) receives the result.
/// The line is extended by `e` samples on each side through the border rule (constant:
/// `cval`). `w` is scratch of len + 2e + 6 doubles: a double* or anything whose w[i] is a
/// double&. w[i + 3] holds position i: w[0..2] the causal pass's initial state (x(0), the
/// steady state of a replicated start), w[n + 3..n + 5] the anti-causal initial state
/// (Triggs–Sdika); the anti-causal pass overwrites w with y. Blocks as in the header comment.
template <class W, class Get, class Put>
PIXFLOW_HD void iir_filter_line(std::int64_t len, std::int64_t e, BorderType bt, double cval,
                                const IirCoeffs& k, W w, Get get, Put put) {
  const std::int64_t n = len + 2 * e;
  auto x = [&](std::int64_t i) {
    const std::int64_t s = border_index(i - e, len, bt);
    return s < 0 ? cval : get(s);
  };
  w[0] = w[1] = w[2] = x(0);
  // Causal, blocks left to right; block a's carry is w at a-1, a-2, a-3.
  for (std::int64_t a = 0; a < n; a += kIirBlock) {
    const int m = int(std::min<std::int64_t>(kIirBlock, n - a));
    const double s0 = w[a + 2], s1 = w[a + 1], s2 = w[a];
    double z1 = 0, z2 = 0, z3 = 0;
    for (int t = 0; t < m; ++t) {
      const double z = iir_step(k, x(a + t), z1, z2, z3);
      z3 = z2;
      z2 = z1;
      z1 = z;
      w[a + t + 3] = iir_fix(k, t, z, s0, s1, s2);
    }
  }
  // Triggs–Sdika: y at n, n+1, n+2 from w at n-1, n-2, n-3 and up = x(n - 1).
  const double up = x(n - 1);
  const double u[3] = {w[n + 2] - up, w[n + 1] - up, w[n] - up};
  for (int r = 0; r < 3; ++r) w[n + 3 + r] = iir_end(k, r, u[0], u[1], u[2], up);
  // Anti-causal, blocks right to left (the same blocks); block [a, b)'s carry is y at b, b+1,
  // b+2. Blocks left of the line's first sample only feed blocks further left: skipped.
  for (std::int64_t a = (n - 1) / kIirBlock * kIirBlock; a >= 0 && a + kIirBlock > e;
       a -= kIirBlock) {
    const std::int64_t b = std::min<std::int64_t>(n, a + kIirBlock);
    const double s0 = w[b + 3], s1 = w[b + 4], s2 = w[b + 5];
    double z1 = 0, z2 = 0, z3 = 0;
    for (int t = 0; t < int(b - a); ++t) {
      const std::int64_t i = b - 1 - t;
      const double z = iir_step(k, w[i + 3], z1, z2, z3);
      z3 = z2;
      z2 = z1;
      z1 = z;
      w[i + 3] = iir_fix(k, t, z, s0, s1, s2);
    }
  }
  for (std::int64_t i = 0; i < len; ++i) put(i, w[i + e + 3]);
}

}  // namespace pixflow::detail
