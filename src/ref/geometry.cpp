// The simple geometry ops: flip, rotate, crop, pad. Pixels move as opaque groups of the
// format's pixel bytes (exact for every depth); only pad's constant needs the sample type.
#include <cstring>

#include "src/base/numeric.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

void copy_px(const ConstImageView& src, std::int64_t sx, std::int64_t sy, const ImageView& dst,
             std::int64_t x, std::int64_t y) {
  const std::size_t px = src.format().pixel_bytes();
  std::memcpy(dst.row_ptr(y) + std::size_t(x) * px, src.row_ptr(sy) + std::size_t(sx) * px, px);
}

}  // namespace

// h: dst(x, y) = src(w-1-x, y); v: src(x, h-1-y); both: src(w-1-x, h-1-y).
void flip(const ConstImageView& src, const ImageView& dst, const FlipParams& p, Rows rows) {
  const std::int64_t w = src.width(), h = src.height();
  const bool fx = p.mode != FlipMode::v, fy = p.mode != FlipMode::h;
  for (std::int64_t y = rows.begin; y < rows.end; ++y)
    for (std::int64_t x = 0; x < w; ++x)
      copy_px(src, fx ? w - 1 - x : x, fy ? h - 1 - y : y, dst, x, y);
}

// Clockwise. 90: dst(x, y) = src(y, h-1-x) (dst is h x w); 180: src(w-1-x, h-1-y);
// 270: src(w-1-y, x) (dst is h x w).
void rotate(const ConstImageView& src, const ImageView& dst, const RotateParams& p, Rows rows) {
  const std::int64_t w = src.width(), h = src.height();
  for (std::int64_t y = rows.begin; y < rows.end; ++y)
    for (std::int64_t x = 0; x < dst.width(); ++x) {
      if (p.angle == 90)
        copy_px(src, y, h - 1 - x, dst, x, y);
      else if (p.angle == 180)
        copy_px(src, w - 1 - x, h - 1 - y, dst, x, y);
      else
        copy_px(src, w - 1 - y, x, dst, x, y);
    }
}

// dst(x, y) = src(p.x + x, p.y + y).
void crop(const ConstImageView& src, const ImageView& dst, const CropParams& p, Rows rows) {
  const std::size_t bytes = std::size_t(dst.width()) * src.format().pixel_bytes();
  for (std::int64_t y = rows.begin; y < rows.end; ++y)
    std::memcpy(dst.row_ptr(y),
                src.row_ptr(p.y + y) + std::size_t(p.x) * src.format().pixel_bytes(), bytes);
}

// dst(x, y) = src(border_index(x - left, w), border_index(y - top, h)); constant outside:
// border.value saturated to the depth, in every channel.
void pad(const ConstImageView& src, const ImageView& dst, const PadParams& p, Rows rows) {
  detail::visit_depth(src.depth(), [&](auto t) {
    using T = decltype(t);
    const T cval = detail::saturate_cast<T>(p.border.value);
    const int ch = src.channels();
    for (std::int64_t y = rows.begin; y < rows.end; ++y) {
      const std::int64_t sy = detail::border_index(y - p.top, src.height(), p.border.type);
      for (std::int64_t x = 0; x < dst.width(); ++x) {
        const std::int64_t sx = detail::border_index(x - p.left, src.width(), p.border.type);
        if (sx < 0 || sy < 0) {
          for (int c = 0; c < ch; ++c) dst.row<T>(y)[x * ch + c] = cval;
        } else {
          copy_px(src, sx, sy, dst, x, y);
        }
      }
    }
  });
}

}  // namespace pixflow::ref
