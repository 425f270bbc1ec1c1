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
/// (box.cpp's Finalize<u8, u16>) as floor(S'/n), S' = S + floor(n/2) <= 255n + n/2, from
/// lo = S' mod 2^16 and the estimate e = sum (t_i >> sh) + (floor(n/2) >> sh), so
/// S'/2^sh - k < e <= S'/2^sh, k = terms + 1 (sh = 0: e = S', k = 0): the least sh for
/// which q0 = floor(e * m / 2^16), m = floor(2^(16+sh) / n), is floor(S'/n) or
/// floor(S'/n) - 1, or -1. With 1/n - 2^-(16+sh) < m/2^(16+sh) <= 1/n (S' > 0; S' = 0
/// gives 0):
///   e*m/2^16 <= S'*m/2^(16+sh) <= S'/n,
///   e*m/2^16 >= (S'/2^sh - k)*m/2^16 > S'/n - S'/2^(16+sh) - k*m/2^16 > S'/n - 1
/// when (255n + n/2) + k*m*2^sh < 2^(16+sh), which also keeps e < 2^16. Then
/// r = S' - q0*n is in [0, 2n) and equals lo - q0*n modulo 2^16; n <= 16384 keeps 2n - 1 a
/// positive i16. Exact sums (n <= 257) take terms = 1 (e = S' >> sh).
inline int box_wrap_shift(std::uint32_t n, int terms) {
  if (n < 2 || n > 16384) return -1;
  const std::uint64_t smax = 255 * std::uint64_t(n) + n / 2;
  for (int sh = 0; sh <= 8; ++sh) {
    const std::uint64_t m = (std::uint64_t(65536) << sh) / n;
    const std::uint64_t k = sh == 0 ? 0 : std::uint64_t(terms) + 1;
    if (m < 65536 && smax + k * m * (1u << sh) < (std::uint64_t(65536) << sh)) return sh;
  }
  return -1;
}

/// The u8 kernel's normalised windows of more than 257 samples with 16-bit sums of `top`
/// columns (box_u16_top): one pass sums W_top(j) = the top column sums from j; then
/// S(j) = sum over i < q of W_top(j + i top) + the `add` column sums after them, or minus
/// the `sub` column sums after the window (q top = kw + sub), whichever takes fewer loads.
/// The estimate's error: one per term (add: its sum is one more term; sub: e - (sub's sum
/// >> sh) - 1, at least 0, is one more), so `terms` feeds box_wrap_shift. sh < 0: the
/// window is not taken (nor are more than 4 sums of W_top, or top > 16).
struct BoxWrapPlan {
  int top = 0, q = 0, add = 0, sub = 0, terms = 0, sh = -1;
};
inline BoxWrapPlan box_wrap_plan(int kw, int kh) {
  BoxWrapPlan p;
  const std::uint32_t n = std::uint32_t(kw) * std::uint32_t(kh);
  if (n <= 257) return p;
  p.top = 1;
  while (2 * p.top <= kw) p.top *= 2;
  const int t16 = box_u16_top(kh);
  if (t16 < p.top) p.top = t16;
  p.q = kw / p.top;
  const int cur = kw % p.top;
  if (cur > 0 && cur <= p.top - cur) {
    p.add = cur;
  } else if (cur > 0) {
    p.sub = p.top - cur;
    ++p.q;
  }
  p.terms = p.q + (cur > 0);
  if (p.q > 5 || p.top > 16) return p;
  p.sh = box_wrap_shift(n, p.terms);
  return p;
}

}  // namespace pixflow::cpu
