// What the geometry kernels (flip, rotate, crop, pad) take from the host: pad's constant
// pixel, the rule of the reference (border.value saturated to the depth, in every channel).
#pragma once

#include <array>
#include <cstring>

#include "pixflow/image.hpp"
#include "src/base/numeric.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::detail {

/// The constant border's pixel of format f as its bytes (pixels are at most 16 bytes).
inline std::array<unsigned char, 16> constant_pixel(Format f, double value) {
  std::array<unsigned char, 16> px{};
  visit_depth(f.depth, [&](auto t) {
    using T = decltype(t);
    const T v = saturate_cast<T>(value);
    for (int c = 0; c < f.channels && std::size_t(c + 1) * sizeof(T) <= px.size(); ++c)
      std::memcpy(px.data() + std::size_t(c) * sizeof(T), &v, sizeof(T));
  });
  return px;
}

}  // namespace pixflow::detail
