// Gaussian tap computation shared by every backend (host compiler and nvcc), so that the
// fixed-point taps of the u8/u16 Gaussian are bit-identical everywhere. The rule is
// documented in docs/ops/gaussian.md.
#pragma once

#include <cmath>
#include <cstdint>

#include "src/common/numeric.hpp"

namespace pixflow::detail {

constexpr int kGaussianMaxK = 255;
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

/// n normalised taps (sum 1) in double, as cv::getGaussianKernel(n, sigma, CV_64F): for
/// sigma <= 0 and odd n <= 7 OpenCV's fixed binomial-like tables, else the sampled
/// Gaussian exp(-x^2 / (2 sigma^2)), x = i - (n - 1) / 2, divided by its sum.
PIXFLOW_HD void gaussian_taps(int n, double sigma, double* t) {
  if (sigma <= 0 && (n & 1) && n <= 7) {
    constexpr double k1[] = {1.0};
    constexpr double k3[] = {0.25, 0.5, 0.25};
    constexpr double k5[] = {0.0625, 0.25, 0.375, 0.25, 0.0625};
    constexpr double k7[] = {0.03125, 0.109375, 0.21875, 0.28125, 0.21875, 0.109375, 0.03125};
    const double* tab = n == 1 ? k1 : n == 3 ? k3 : n == 5 ? k5 : k7;
    for (int i = 0; i < n; ++i) t[i] = tab[i];
    return;
  }
  const double s = sigma > 0 ? sigma : gaussian_sigma_from_ksize(n);
  const double scale2 = -0.5 / (s * s);
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const double x = i - (n - 1) * 0.5;
    t[i] = exp(scale2 * x * x);
    sum += t[i];
  }
  const double inv = 1.0 / sum;
  for (int i = 0; i < n; ++i) t[i] *= inv;
}

/// Fixed-point taps with `bits` fraction bits: each double tap times 2^bits rounded half
/// to even, then the centre tap adjusted so that the taps sum to exactly 2^bits (a
/// constant image stays constant).
PIXFLOW_HD void gaussian_taps_fixed(int n, double sigma, int bits, std::int32_t* t) {
  double d[kGaussianMaxK];
  gaussian_taps(n, sigma, d);
  const std::int64_t one = std::int64_t(1) << bits;
  std::int64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    t[i] = std::int32_t(rint(d[i] * double(one)));
    sum += t[i];
  }
  t[n / 2] += std::int32_t(one - sum);
}

/// Float taps: the double taps cast to float.
PIXFLOW_HD void gaussian_taps_float(int n, double sigma, float* t) {
  double d[kGaussianMaxK];
  gaussian_taps(n, sigma, d);
  for (int i = 0; i < n; ++i) t[i] = float(d[i]);
}

}  // namespace pixflow::detail
