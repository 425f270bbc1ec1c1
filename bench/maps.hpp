// The remap maps of both benchmarks (pixflow-bench, pixflow-bench-cpu) and of peers.py: a
// slight zoom plus sine displacements of a few pixels, so that most samples are interior
// (a warp as a lens or a registration gives) and some leave the image (the border).
#pragma once

#include <cmath>
#include <cstdint>

namespace pixflow::bench {

/// Row y of the w x h maps into mx[0, w) and my[0, w).
inline void smooth_map_row(std::int64_t y, std::int64_t w, std::int64_t h, float* mx, float* my) {
  for (std::int64_t x = 0; x < w; ++x) {
    const double cx = double(x) - 0.5 * double(w), cy = double(y) - 0.5 * double(h);
    mx[x] = float(0.5 * double(w) + 1.003 * cx + 4.7 * std::sin(0.0131 * double(y) + 0.4));
    my[x] = float(0.5 * double(h) + 0.998 * cy + 3.9 * std::cos(0.0173 * double(x) + 1.1));
  }
}

}  // namespace pixflow::bench
