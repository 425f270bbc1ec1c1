// The rounding and packing of the CUDA remap's integer results (remap.cu, remap_u8x3.hpp),
// written as host + device code so that the CPU test (tests/remap_pack_test.cpp) checks it
// against the reference's saturate_cast at the extremes of the bilinear expression.
//
// A u8/u16 result v of the linear expression is a convex combination of samples in [0, hi]
// (hi = 255 or 65535) evaluated with rounded operations, so v is in [0, hi (1 + 6u)] with
// u = 2^-24: bx = rn(1 - ax) <= (1 - ax)(1 + u), each product and sum adds a factor (1 + u),
// giving (bx p00 + ax p10)(1 + u)^2 <= hi (1 + u)^3 for top and bot and (1 + u)^6 for v.
// hi (1 + 6u) < hi + 1/2 (255 + 9.2e-5, 65535 + 0.024), so rint(v) <= hi and the reference's
// saturation never applies. v + 2^23 rounded to nearest-even is then the float 2^23 + rint(v)
// (ulp 1 in [2^23, 2^24)), whose bits are 0x4B000000 + rint(v): the result sits in the low
// byte (u8) or half (u16) of the bits as they are, with no subtraction and no clamp. The store
// picks those bytes with PRMT (3 a word of four u8 results, 1 a word of two u16), where the
// clamped integers took a VIADDMNMX each and the compiler's byte packing ~3 more a byte.
// Nearest samples and border values enter as the zero-extended sample: the same low bytes.
#pragma once

#include <cstdint>

#include "src/backends/cuda/packed_u16x2.hpp"
#include "src/backends/cuda/rounded_f32.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::remap_pack {

using u32 = std::uint32_t;

constexpr float kTwo23 = 8388608.0f;  // 2^23: floats in [2^23, 2^24) are the integers

/// The bits of v + 2^23 rounded to nearest-even: 0x4B000000 + rint(v) for v in [-0.5, 2^23)
/// (v >= +-0 here), so the low byte / half is saturate_cast<u8 / u16>(double(v)) for the v of
/// the bilinear expression (see above: rint(v) <= hi).
PIXFLOW_HD u32 round_bits(float v) {
  return float_bits(add_rn(v, kTwo23));
}

/// The word of the low bytes of four results (little-endian: a in byte 0).
PIXFLOW_HD u32 pack_u8(u32 a, u32 b, u32 c, u32 d) {
  return px::byte_perm(px::byte_perm(a, b, 0x0040u), px::byte_perm(c, d, 0x0040u), 0x5410u);
}

/// The word of the low halves of two results (a in the low half).
PIXFLOW_HD u32 pack_u16(u32 a, u32 b) {
  return px::byte_perm(a, b, 0x5410u);
}

}  // namespace pixflow::cuda::remap_pack
