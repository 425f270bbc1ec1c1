// The border rule of the CUDA remap's border path (remap.cu) in 32-bit arithmetic, written as
// host + device code so that the CPU test (tests/remap_border_test.cpp) checks it against
// detail::border_index, the reference's rule, for every rule, near and far coordinates and
// source lengths up to the fast kernel's 2^23 - 1.
#pragma once

#include "pixflow/border.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda {

/// detail::border_index for |p| <= 2^30 + 1 and 1 <= len < 2^23 in 32-bit arithmetic; one
/// reflection or wrap without a remainder when p is at most one period outside. (Exact for
/// 1 <= len < 2^30 and |p| < 2^30 as well: the packed 3x3 edge rule, u8_3x3_edge.hpp, calls it
/// there, tested up to len 2^30 - 1 by tests/u8_3x3_edge_test.cpp.) The rule is a
/// template parameter: remap.cu's border path jumps once a pixel to its rule's straight code
/// (a switch inside every call made 8 jump tables a pixel, ~4,500 instructions of border code
/// per row of a u8x1 thread: a warp at a lens map's edge ran code spread over ~70 KB).
template <BorderType kT>
PIXFLOW_HD int border_index32(int p, int len) {
  if (unsigned(p) < unsigned(len)) return p;
  if constexpr (kT == BorderType::replicate) {
    return p < 0 ? 0 : len - 1;
  } else if constexpr (kT == BorderType::reflect) {
    const int period = 2 * len;
    int q = p;
    if (q < -period || q >= period) q %= period;
    if (q < 0) q += period;
    return q < len ? q : period - 1 - q;
  } else if constexpr (kT == BorderType::reflect101) {
    if (len == 1) return 0;
    const int period = 2 * len - 2;
    int q = p;
    if (q < -period || q >= period) q %= period;
    if (q < 0) q += period;
    return q < len ? q : period - q;
  } else if constexpr (kT == BorderType::wrap) {
    int q = p;
    if (q < -len || q >= len) q %= len;
    return q < 0 ? q + len : q;
  } else {
    return -1;  // constant
  }
}

}  // namespace pixflow::cuda
