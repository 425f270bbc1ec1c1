// Image, views, allocation and copies.
#include "pixflow/image.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include "src/base/error.hpp"
#include "src/core/memory.hpp"

namespace pixflow {

namespace {

void check_roi(std::int64_t vw, std::int64_t vh, std::int64_t x, std::int64_t y, std::int64_t w,
               std::int64_t h) {
  if (x < 0 || y < 0 || w < 0 || h < 0 || x > vw || y > vh || w > vw - x || h > vh - y)
    throw Error(Status::invalid_argument,
                detail::cat("roi: rectangle (", x, ", ", y, ", ", w, "x", h,
                            ") must lie inside the ", vw, "x", vh, " view"));
}

// Rows of owned images are padded to this many bytes, so that 16-byte vector access and
// coalesced device rows work on every owned image.
constexpr std::int64_t kRowAlign = 64;
// Anything above this is a caller's mistake, not a real image (1 TiB).
constexpr std::int64_t kMaxImageBytes = std::int64_t(1) << 40;

}  // namespace

ImageView ImageView::roi(std::int64_t x, std::int64_t y, std::int64_t w, std::int64_t h) const {
  check_roi(width_, height_, x, y, w, h);
  return ImageView(data_ + y * stride_ + x * std::int64_t(fmt_.pixel_bytes()), w, h, stride_, fmt_,
                   loc_);
}

ConstImageView ConstImageView::roi(std::int64_t x, std::int64_t y, std::int64_t w,
                                   std::int64_t h) const {
  check_roi(width_, height_, x, y, w, h);
  return ConstImageView(data_ + y * stride_ + x * std::int64_t(fmt_.pixel_bytes()), w, h, stride_,
                        fmt_, loc_);
}

Image::Image(std::int64_t width, std::int64_t height, Format fmt, Location loc) {
  if (fmt.channels < 1 || fmt.channels > 4)
    throw Error(Status::invalid_argument,
                detail::cat("image: channels must be 1..4 (got ", fmt.channels, ")"));
  if (width < 0 || height < 0)
    throw Error(Status::invalid_argument,
                detail::cat("image: size must be non-negative (got ", width, "x", height, ")"));
  const std::int64_t px = std::int64_t(fmt.pixel_bytes());
  if (width > kMaxImageBytes / px)
    throw Error(Status::limit_exceeded, detail::cat("image: width ", width, " is too large"));
  const std::int64_t stride = (width * px + kRowAlign - 1) / kRowAlign * kRowAlign;
  if (height > 0 && stride > kMaxImageBytes / height)
    throw Error(Status::limit_exceeded,
                detail::cat("image: ", width, "x", height, " ", to_string(fmt), " is too large"));
  const std::size_t bytes = std::size_t(stride * height);
  if (loc.is_host()) {
    if (bytes > 0) {
      void* p = std::aligned_alloc(kRowAlign, bytes);
      if (!p)
        throw Error(Status::out_of_memory,
                    detail::cat("image: cannot allocate ", bytes, " bytes of host memory"));
      storage_ = std::shared_ptr<std::byte>(static_cast<std::byte*>(p),
                                            [](std::byte* q) { std::free(q); });
    }
  } else if (bytes > 0) {
    storage_ = detail::device_alloc(loc, bytes);
  }
  view_ = ImageView(storage_.get(), width, height, stride, fmt, loc);
}

void copy(ConstImageView src, ImageView dst) {
  detail::require(
      src.width() == dst.width() && src.height() == dst.height() && src.format() == dst.format(),
      Status::invalid_argument, "copy", "dst must match src (", src.width(), "x", src.height(), " ",
      to_string(src.format()), "), got ", dst.width(), "x", dst.height(), " ",
      to_string(dst.format()));
  if (src.empty()) return;
  if (src.location().is_host() && dst.location().is_host()) {
    for (std::int64_t y = 0; y < src.height(); ++y)
      std::memmove(dst.row_ptr(y), src.row_ptr(y), std::size_t(src.row_bytes()));
    return;
  }
  detail::copy_2d(dst.data(), std::size_t(dst.stride()), dst.location(), src.data(),
                  std::size_t(src.stride()), src.location(), std::size_t(src.row_bytes()),
                  std::size_t(src.height()), Queue{}, true);
}

Image clone(ConstImageView src) {
  Image out(src.width(), src.height(), src.format(), Location::host());
  copy(src, out);
  return out;
}

}  // namespace pixflow
