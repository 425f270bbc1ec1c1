// Gaussian tap computation shared by every backend (host compiler and nvcc), so that the
// fixed-point taps of the u8/u16 Gaussian are bit-identical everywhere. The rule is
// documented in docs/ops/gaussian.md.
#pragma once

#include <cmath>
#include <cstdint>

#include "src/base/numeric.hpp"

namespace pixflow::detail {

constexpr int kGaussianMaxK = 255;
/// The largest sigma whose window from sigma fits kGaussianMaxK on every depth: the window
/// is rint(8 sigma + 1) | 1 for u16 and f32 (6 sigma + 1 for u8), so 8 sigma + 1 <= 255.
/// Larger blurs: gaussian_iir (any sigma, O(1) per pixel).
constexpr double kGaussianMaxSigma = (kGaussianMaxK - 1) / 8.0;  // 31.75
/// Fraction bits of the fixed-point taps: Q8 for u8 (as OpenCV's bit-exact u8 path),
/// Q16 for u16.
constexpr int kGaussianBitsU8 = 8;
constexpr int kGaussianBitsU16 = 16;

/// Window size from sigma as cv::GaussianBlur: cvRound(sigma * (u8 ? 3 : 4) * 2 + 1) | 1.
PIXFLOW_HD int gaussian_ksize_from_sigma(double sigma, bool u8) {
  return int(rint(sigma * (u8 ? 3 : 4) * 2 + 1)) | 1;
}
/// Sigma from the window size as cv::getGaussianKernel: 0.3 * ((k - 1) * 0.5 - 1) + 0.8.
PIXFLOW_HD double gaussian_sigma_from_ksize(int k) {
  return 0.3 * ((k - 1) * 0.5 - 1) + 0.8;
}

/// n normalised taps (sum 1) in double, as cv::getGaussianKernel(n, sigma, CV_64F) in
/// OpenCV 4.x: for sigma <= 0 and n in {1, 3, 5, 7, 9} OpenCV's fixed tables; else the
/// sampled Gaussian exp(-x^2 / (2 s^2)), x = i - (n - 1) / 2, s = sigma (or
/// 0.15 n + 0.35 when sigma <= 0), computed on the left half and mirrored, divided by
/// its sum 2 * sum(left) + 1.
PIXFLOW_HD void gaussian_taps(int n, double sigma, double* t) {
  if (sigma <= 0 && (n & 1) && n <= 9) {
    constexpr double k1[] = {1.0};
    constexpr double k3[] = {0.25, 0.5, 0.25};
    constexpr double k5[] = {0.0625, 0.25, 0.375, 0.25, 0.0625};
    constexpr double k7[] = {0.03125, 0.109375, 0.21875, 0.28125, 0.21875, 0.109375, 0.03125};
    constexpr double k9[] = {4 / 256.0,  13 / 256.0, 30 / 256.0, 51 / 256.0, 60 / 256.0,
                             51 / 256.0, 30 / 256.0, 13 / 256.0, 4 / 256.0};
    const double* tab = n == 1 ? k1 : n == 3 ? k3 : n == 5 ? k5 : n == 7 ? k7 : k9;
    for (int i = 0; i < n; ++i) t[i] = tab[i];
    return;
  }
  const double s = sigma > 0 ? sigma : gaussian_sigma_from_ksize(n);
  const double scale2 = -0.125 / (s * s);  // x is doubled below: x2 = 2 i - (n - 1)
  const int half = (n - 1) / 2;
  double sum = 0;
  for (int i = 0, x2 = 1 - n; i < half; ++i, x2 += 2) {
    t[i] = exp(double(x2 * x2) * scale2);
    sum += t[i];
  }
  sum = sum * 2 + 1;  // the centre tap is exp(0) = 1
  if ((n & 1) == 0) sum += 1;
  const double inv = 1.0 / sum;
  for (int i = 0; i < half; ++i) {
    t[i] *= inv;
    t[n - 1 - i] = t[i];
  }
  t[half] = inv;
  if ((n & 1) == 0) t[half + 1] = inv;
}

/// Fixed-point taps with `bits` fraction bits (odd n), as OpenCV's bit-exact Gaussian:
/// the left half quantised from the outside in with error diffusion (v = round_half_even(
/// tap * 2^bits + carried error); the error carried to the next tap), mirrored, and the
/// centre tap = 2^bits - the others, so the taps sum to exactly 2^bits.
PIXFLOW_HD void gaussian_taps_fixed(int n, double sigma, int bits, std::int32_t* t) {
  double d[kGaussianMaxK];
  gaussian_taps(n, sigma, d);
  const double one = double(std::int64_t(1) << bits);
  double err = 0;
  std::int64_t sum = 0;
  for (int i = 0; i < n / 2; ++i) {
    const double adj = d[i] * one + err;
    const double v = rint(adj);
    err = adj - v;
    t[i] = t[n - 1 - i] = std::int32_t(v);
    sum += 2 * std::int64_t(v);
  }
  t[n / 2] = std::int32_t((std::int64_t(1) << bits) - sum);
}

/// Float taps: the double taps cast to float.
PIXFLOW_HD void gaussian_taps_float(int n, double sigma, float* t) {
  double d[kGaussianMaxK];
  gaussian_taps(n, sigma, d);
  for (int i = 0; i < n; ++i) t[i] = float(d[i]);
}

}  // namespace pixflow::detail
