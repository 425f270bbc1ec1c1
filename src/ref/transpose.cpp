#include <cstring>

#include "src/ref/ref.hpp"

namespace pixflow::ref {

// dst(x, y) = src(y, x), whole pixels at a time (any depth, any channels).
void transpose(const ConstImageView& src, const ImageView& dst, Rows rows) {
  const std::size_t px = src.format().pixel_bytes();
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    std::byte* out = dst.row_ptr(y);
    for (std::int64_t x = 0; x < dst.width(); ++x)
      std::memcpy(out + std::size_t(x) * px, src.row_ptr(x) + std::size_t(y) * px, px);
  }
}

}  // namespace pixflow::ref
