// Public device API over the memory hooks.
#include "pixflow/device.hpp"

#include <cstring>

#include "src/core/check.hpp"
#include "src/core/memory.hpp"

namespace pixflow {

int cuda_device_count() noexcept { return detail::device_count(); }

void copy_async(ConstImageView src, ImageView dst, void* stream) {
  detail::require(src.width() == dst.width() && src.height() == dst.height() &&
                      src.format() == dst.format(),
                  Status::invalid_argument, "copy", "dst must match src in size and format");
  if (src.empty()) return;
  if (src.location().is_host() && dst.location().is_host()) {
    copy(src, dst);
    return;
  }
  detail::copy_2d(dst.data(), std::size_t(dst.stride()), dst.location(), src.data(),
                  std::size_t(src.stride()), src.location(), std::size_t(src.row_bytes()),
                  std::size_t(src.height()), stream, false);
}

void synchronize(void* stream) { detail::device_synchronize(stream); }

}  // namespace pixflow

namespace pixflow {

Image pinned_image(std::int64_t width, std::int64_t height, Format fmt) {
  detail::require(width >= 0 && height >= 0 && fmt.channels >= 1 && fmt.channels <= 4,
                  Status::invalid_argument, "pinned_image", "size must be non-negative and ",
                  "channels 1..4");
  const std::int64_t stride = (width * std::int64_t(fmt.pixel_bytes()) + 63) / 64 * 64;
  auto mem = detail::pinned_alloc(std::size_t(stride * height));
  ImageView v(mem.get(), width, height, stride, fmt, Location::host());
  return Image::wrap(std::move(mem), v);
}

}  // namespace pixflow
