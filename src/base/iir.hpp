// The recursive Gaussian (Young–van Vliet 3rd order, Triggs–Sdika end conditions) as one
// line filter shared by the reference and the CUDA kernels, so both evaluate the same
// double expressions in the same order (host: -ffp-contract=off; device: -fmad=false).
// See docs/ops/gaussian.md for the method and its measured error.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "pixflow/ops.hpp"
#include "src/base/numeric.hpp"

namespace pixflow::detail {

struct IirCoeffs {
  double B, b1, b2, b3;
  double M[3][3];  // Triggs & Sdika (2006) end-of-line matrix for the anti-causal pass
};

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
  return k;
}

/// Samples added on each side of a line for borders other than replicate (replicate is
/// exact through the Triggs–Sdika conditions and needs none).
inline std::int64_t iir_extension(const GaussianIirParams& p) {
  return p.border.type == BorderType::replicate ? 0 : std::int64_t(std::ceil(4 * p.sigma)) + 8;
}

/// Filters one line of `len` samples: get(i) reads sample i, put(i, v) receives the result.
/// The line is extended by `e` samples on each side through the border rule (constant:
/// `cval`). `w` is scratch of len + 2e + 3 doubles: a double* or anything whose w[i] is a
/// double& (the CUDA kernels interleave the lines of their scratch).
template <class W, class Get, class Put>
PIXFLOW_HD void iir_filter_line(std::int64_t len, std::int64_t e, BorderType bt, double cval,
                                const IirCoeffs& k, W w, Get get, Put put) {
  const std::int64_t n = len + 2 * e;
  auto x = [&](std::int64_t i) {
    const std::int64_t s = border_index(i - e, len, bt);
    return s < 0 ? cval : get(s);
  };
  const double x0 = x(0);
  w[0] = w[1] = w[2] = x0;  // w[i + 3] is w at position i
  for (std::int64_t i = 0; i < n; ++i)
    w[i + 3] = k.B * x(i) + k.b1 * w[i + 2] + k.b2 * w[i + 1] + k.b3 * w[i];
  const double up = x(n - 1);
  const double u[3] = {w[n + 2] - up, w[n + 1] - up, w[n] - up};
  double v[3];
  for (int r = 0; r < 3; ++r) v[r] = k.M[r][0] * u[0] + k.M[r][1] * u[1] + k.M[r][2] * u[2] + up;
  double y1 = v[0], y2 = v[1], y3 = v[2];  // y[n], y[n+1], y[n+2]
  for (std::int64_t i = n; i-- > 0;) {
    const double y = k.B * w[i + 3] + k.b1 * y1 + k.b2 * y2 + k.b3 * y3;
    y3 = y2;
    y2 = y1;
    y1 = y;
    if (i >= e && i < e + len) put(i - e, y);
  }
}

}  // namespace pixflow::detail
