// The CUDA f32 bilateral's colour weight lookup (bilateral.cu): detail::bilateral_f32::weight
// (src/base/bilateral_f32.hpp) from the block's pair table, without a branch or a float <->
// int conversion (F2I / I2F run at 16 lanes a SM and clock on sm_90, FADD at 128). Host +
// device: tests/bilateral_packed_test.cpp runs it on the CPU against the rule, bit for bit.
//   a = min(alpha, N), alpha = delta * scale: fminf returns N for a NaN alpha, and inf or
//       alpha >= N become N, whose pair {T[N], D[N]} = {0, 0} gives the rule's 0 (0 + 0 * 0);
//   t = 2^23 + a rounded toward zero = 2^23 + floor(a) exactly (a in [0, N] and N < 2^23:
//       floats in [2^23, 2^24) are spaced 1), so i = bits(t) - bits(2^23), and
//       float(i) = t - 2^23 and f = a - float(i) are exact;
//   weight = T[i] + f * D[i], each rounded once, as the rule.
#pragma once

#include <cmath>
#include <cstdint>

#include "src/backends/cuda/rounded_f32.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::bilateral_f32 {

/// 2^23 + floor(a) for a in [0, 2^23): FADD.RZ on the device; on the host the sum in double
/// (exact: a has at most 24 significant bits and a < 2^23) truncated.
PIXFLOW_HD float add_magic_rz(float a) {
#if defined(__CUDA_ARCH__)
  return __fadd_rz(a, 0x1p23f);
#else
  return float(std::trunc(double(a) + 0x1p23));
#endif
}

/// The colour weight from `pairs` (T[i] at 2i, D[i] at 2i + 1, i = 0..N; 8-byte aligned),
/// nbins = float(N).
PIXFLOW_HD float lookup(const float* pairs, float nbins, float scale, float delta) {
#if defined(__CUDA_ARCH__)
  const float a = fminf(mul_rn(delta, scale), nbins);
#else
  const float a = std::fmin(mul_rn(delta, scale), nbins);  // C's fmin: NaN -> the other
#endif
  const float t = add_magic_rz(a);
  const float f = sub_rn(a, sub_rn(t, 0x1p23f));
  const int i = int(float_bits(t) - 0x4b000000u);
#if defined(__CUDA_ARCH__)
  const float2 e = reinterpret_cast<const float2*>(pairs)[i];
  return add_rn(e.x, mul_rn(f, e.y));
#else
  return add_rn(pairs[2 * i], mul_rn(f, pairs[2 * i + 1]));
#endif
}

}  // namespace pixflow::cuda::bilateral_f32
