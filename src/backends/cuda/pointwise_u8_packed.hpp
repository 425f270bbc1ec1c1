// The u8 image-image arithmetic of arith.cu on four bytes at once (one 32-bit word, SWAR),
// written as host + device code so that tests/pointwise_packed_test.cpp checks it on the CPU
// against the element rule (src/base/pointwise.hpp) for every pair of bytes.
//
// Why: the generic kernel runs the rule in int64 per byte (widen, 64-bit add/compare/select,
// saturate, narrow: ~10-15 instructions a byte, 40 registers), which at 8192^2 put absdiff at
// 88.8 us against add's 69.1 (the copy of the traffic: 68.4) and, with 40 registers, fitted
// only 6 of the 256-thread blocks a SM (a second wave at 1920x1080). Here add/sub/absdiff take
// 8-11 integer instructions per word (2-3 a byte) and a few registers. sm_90 has no SIMD
// video instructions any more (__vaddus4 and friends are emulated), so plain SWAR is at least
// as short and runs on the host too.
//
// Every function is exact for every pair of bytes (exhaustive test): no carry or borrow
// crosses a byte boundary because the top bit of each byte is handled apart from the low 7.
#pragma once

#include <cstdint>

#include "pixflow/ops.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::pw_u8 {

using u32 = std::uint32_t;

constexpr u32 kLow7 = 0x7f7f7f7fu;  // the low 7 bits of every byte
constexpr u32 kTop = 0x80808080u;   // the top bit of every byte

/// 0xff in every byte whose top bit is set in `top` (top holds only bits of kTop).
PIXFLOW_HD u32 byte_mask(u32 top) {
  return (top >> 7) * 0xffu;  // 0x01 a byte times 255: no byte exceeds 0xff, no carry
}

/// min(a + b, 255) per byte.
PIXFLOW_HD u32 add_sat(u32 a, u32 b) {
  // Low 7 bits of each byte summed: at most 0xfe, so the carry stays in bit 7 of the byte.
  const u32 s = (a & kLow7) + (b & kLow7);
  const u32 sum = s ^ ((a ^ b) & kTop);  // the wrapped byte sums
  // Carry out of bit 7 = majority(a7, b7, carry into bit 7); sum7 = a7 ^ b7 ^ carry-in.
  const u32 carry = ((a & b) | ((a | b) & ~sum)) & kTop;
  return sum | byte_mask(carry);
}

/// a - b per byte, wrapped modulo 256, and the borrow out of each byte (a < b) in bit 7.
PIXFLOW_HD u32 sub_wrap(u32 a, u32 b, u32& borrow) {
  // (a | 0x80) - (b & 0x7f) >= 1 per byte: no borrow leaves a byte.
  const u32 d = (a | kTop) - (b & kLow7);
  const u32 diff = d ^ ((a ^ ~b) & kTop);  // bit 7: a7 ^ b7 ^ borrow-in (d7 = !borrow-in)
  // Borrow out of bit 7: (!a7 & b7) | (a7 == b7 & borrow-in), and borrow-in = diff7 ^ a7 ^ b7.
  borrow = ((~a & b) | (~(a ^ b) & diff)) & kTop;
  return diff;
}

/// max(a - b, 0) per byte.
PIXFLOW_HD u32 sub_sat(u32 a, u32 b) {
  u32 borrow;
  const u32 diff = sub_wrap(a, b, borrow);
  return diff & ~byte_mask(borrow);
}

/// |a - b| per byte.
PIXFLOW_HD u32 absdiff(u32 a, u32 b) {
  u32 borrow;
  const u32 diff = sub_wrap(a, b, borrow);
  // Where a < b, diff = a - b + 256 in [1, 255]: ~diff + 1 = b - a in [1, 255], so adding the
  // 1 cannot carry out of the byte. Elsewhere diff is already a - b.
  return (diff ^ byte_mask(borrow)) + (borrow >> 7);
}

/// min(a * b, 255) per byte: products do not pack (cross terms), so byte by byte in 32-bit
/// lanes (4 IMAD, 4 IMNMX and the byte extracts and inserts).
PIXFLOW_HD u32 mul_sat(u32 a, u32 b) {
  u32 r = 0;
  for (int k = 0; k < 32; k += 8) {
    const u32 p = ((a >> k) & 0xffu) * ((b >> k) & 0xffu);
    r |= (p < 0xffu ? p : 0xffu) << k;
  }
  return r;
}

/// The op as a compile-time choice (the kernels are instantiated per op).
template <ArithOp Op>
PIXFLOW_HD u32 apply(u32 a, u32 b) {
  if constexpr (Op == ArithOp::add) return add_sat(a, b);
  if constexpr (Op == ArithOp::sub) return sub_sat(a, b);
  if constexpr (Op == ArithOp::absdiff) return absdiff(a, b);
  if constexpr (Op == ArithOp::mul) return mul_sat(a, b);
  return 0;
}

}  // namespace pixflow::cuda::pw_u8
