// Integer taps of the Sobel and Scharr derivative filters, shared by every backend (host
// compiler and nvcc). They are OpenCV's getSobelKernels / getScharrKernels with
// normalize=false, so that u8 results can be bit-exact with cv::Sobel / cv::Scharr.
#pragma once

#include "src/base/numeric.hpp"

namespace pixflow::detail {

/// Longest 1-D factor (k = 7).
constexpr int kMaxDerivTaps = 7;

/// Length of the 1-D factor for derivative `order` along one axis with aperture k: k,
/// except that k = 1 with order > 0 means the 3-tap [-1 0 1] / [1 -2 1] (as OpenCV).
PIXFLOW_HD int sobel_taps_len(int k, int order) {
  return (k == 1 && order > 0) ? 3 : k;
}

/// Writes the sobel_taps_len(k, order) integer taps of the order-th derivative factor.
/// Needs order < sobel_taps_len(k, order) (validated by the op). Smoothing part: binomial
/// coefficients; each derivative order replaces the row by its first difference.
PIXFLOW_HD void sobel_taps(int k, int order, int* taps) {
  const int n = sobel_taps_len(k, order);
  if (n == 1) {
    taps[0] = 1;
    return;
  }
  if (n == 3) {
    const int t[3][3] = {{1, 2, 1}, {-1, 0, 1}, {1, -2, 1}};
    for (int i = 0; i < 3; ++i) taps[i] = t[order][i];
    return;
  }
  // Same recurrence as OpenCV: start with [1, 0, ...], smooth (n - order - 1) times
  // (binomial), then difference `order` times.
  int ker[kMaxDerivTaps + 1] = {1};
  for (int i = 1; i <= n; ++i) ker[i] = 0;
  for (int i = 0; i < n - order - 1; ++i) {
    int oldval = ker[0];
    for (int j = 1; j <= n; ++j) {
      const int newval = ker[j] + ker[j - 1];
      ker[j - 1] = oldval;
      oldval = newval;
    }
  }
  for (int i = 0; i < order; ++i) {
    int oldval = -ker[0];
    for (int j = 1; j <= n; ++j) {
      const int newval = ker[j - 1] - ker[j];
      ker[j - 1] = oldval;
      oldval = newval;
    }
  }
  for (int i = 0; i < n; ++i) taps[i] = ker[i];
}

/// The 3 Scharr taps: order 0 -> [3 10 3], order 1 -> [-1 0 1].
PIXFLOW_HD void scharr_taps(int order, int* taps) {
  taps[0] = order == 0 ? 3 : -1;
  taps[1] = order == 0 ? 10 : 0;
  taps[2] = order == 0 ? 3 : 1;
}

}  // namespace pixflow::detail
