// How many output rows a work-item of the row-strip kernels takes (median_net, morph_small):
// more rows share more loads and sorted runs between neighbouring outputs, but on a small
// image they leave the device idle (1920x1080 u8 at 4 samples x 8 rows a work-item is 65k
// work-items, under a quarter of the 270k an H100's 132 SMs hold). So the most rows that
// still give every compute unit kFill work-items, at least 2.
#pragma once

#include <cstddef>

#include "src/backends/opencl/runtime.hpp"

namespace pixflow::opencl {

inline int rows_per_item(std::size_t items_x, std::size_t rows, int device, int max_rows) {
  constexpr std::size_t kFill = 2048;  // resident work-items a compute unit (NVIDIA SM)
  const std::size_t cus = devices()[std::size_t(device)].compute_units;
  int ry = max_rows;
  while (ry > 2 && items_x * ((rows + std::size_t(ry) - 1) / std::size_t(ry)) < cus * kFill)
    ry /= 2;
  return ry;
}

}  // namespace pixflow::opencl
