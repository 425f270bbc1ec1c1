// Plain C++ shared by the SIMD box filter (src/backends/cpu/simd/box.cpp) and its tests: the
// choices of the u8 kernel's 16-bit sums and of its division of wrapped 16-bit window sums.
#pragma once

#include <cstdint>

namespace pixflow::cpu {

/// u8 with 16-bit partial sums of columns of kh samples (each <= 255 kh): the widest power
/// of two of columns whose sum fits 16 bits.
inline int box_u16_top(int kh) {
  int m = 1;
  while (2 * m * 255 * kh <= 65535) m *= 2;
  return m;
}

/// u8 window sums S <= 255 n given as `terms` terms t_i < 2^16, normalised in 16-bit lanes
/// from lo = (sum t_i) mod 2^16 and the estimate e = sum (t_i >> sh): the least sh for which
/// q0 = floor(e * m / 2^16), m = floor(2^(16+sh) / n), is floor(S/n) or floor(S/n) - 1 for
/// every such S and terms, or -1. Argument: S/2^sh - terms < e <= S/2^sh and
/// 1/n - 2^-(16+sh) < m/2^(16+sh) <= 1/n give
///   e*m/2^16 <= S*m/2^(16+sh) <= S/n,
///   e*m/2^16 > (S/2^sh - terms)*m/2^16 > S/n - S/2^(16+sh) - terms*m/2^16 >= S/n - 1
/// when 255n + terms*m*2^sh <= 2^(16+sh), which also keeps e < 2^16. Then r = S - q0*n is in
/// [0, 2n) and equals lo - q0*n modulo 2^16; n <= 16384 keeps 2n - 1 a positive i16.
inline int box_wrap_shift(std::uint32_t n, int terms) {
  if (n < 2 || n > 16384) return -1;
  for (int sh = 0; sh <= 8; ++sh) {
    const std::uint64_t m = (std::uint64_t(65536) << sh) / n;
    if (m < 65536 && 255 * std::uint64_t(n) + std::uint64_t(terms) * m * (1u << sh) <=
                         (std::uint64_t(65536) << sh))
      return sh;
  }
  return -1;
}

}  // namespace pixflow::cpu
