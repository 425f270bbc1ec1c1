// Images and views. Row-major, interleaved channels, any stride, 64-bit sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "pixflow/error.hpp"
#include "pixflow/format.hpp"

namespace pixflow {

/// Where pixels live. Copies between locations are always explicit (device.hpp).
struct Location {
  enum class Kind : std::uint8_t { host, cuda, opencl };
  Kind kind = Kind::host;
  int device = 0;

  static constexpr Location host() { return {Kind::host, 0}; }
  static constexpr Location cuda(int n = 0) { return {Kind::cuda, n}; }
  static constexpr Location opencl(int n = 0) { return {Kind::opencl, n}; }
  constexpr bool is_host() const { return kind == Kind::host; }
  constexpr bool operator==(const Location&) const = default;
};

std::string to_string(Location l);  // "host", "cuda:0", "opencl:1"

/// Non-owning view of mutable pixels. `stride` is in bytes and may be any value
/// >= width * pixel_bytes (rows need not be aligned). A view never owns memory.
class ImageView {
 public:
  ImageView() = default;
  ImageView(void* data, std::int64_t width, std::int64_t height, std::int64_t stride, Format fmt,
            Location loc = Location::host())
      : data_(static_cast<std::byte*>(data)),
        width_(width),
        height_(height),
        stride_(stride),
        fmt_(fmt),
        loc_(loc) {}

  std::byte* data() const { return data_; }
  std::int64_t width() const { return width_; }
  std::int64_t height() const { return height_; }
  std::int64_t stride() const { return stride_; }
  Format format() const { return fmt_; }
  Depth depth() const { return fmt_.depth; }
  int channels() const { return fmt_.channels; }
  Location location() const { return loc_; }
  bool empty() const { return width_ <= 0 || height_ <= 0; }
  std::int64_t row_bytes() const { return width_ * std::int64_t(fmt_.pixel_bytes()); }

  std::byte* row_ptr(std::int64_t y) const { return data_ + y * stride_; }
  template <class T>
  T* row(std::int64_t y) const {
    return reinterpret_cast<T*>(row_ptr(y));
  }

  /// Sub-view of a rectangle; throws invalid_argument if it leaves the view.
  ImageView roi(std::int64_t x, std::int64_t y, std::int64_t w, std::int64_t h) const;

 private:
  std::byte* data_ = nullptr;
  std::int64_t width_ = 0, height_ = 0, stride_ = 0;
  Format fmt_{};
  Location loc_{};
};

/// Non-owning view of read-only pixels.
class ConstImageView {
 public:
  ConstImageView() = default;
  ConstImageView(const void* data, std::int64_t width, std::int64_t height, std::int64_t stride,
                 Format fmt, Location loc = Location::host())
      : data_(static_cast<const std::byte*>(data)),
        width_(width),
        height_(height),
        stride_(stride),
        fmt_(fmt),
        loc_(loc) {}
  ConstImageView(const ImageView& v)  // NOLINT: implicit on purpose, like T* -> const T*
      : ConstImageView(v.data(), v.width(), v.height(), v.stride(), v.format(), v.location()) {}

  const std::byte* data() const { return data_; }
  std::int64_t width() const { return width_; }
  std::int64_t height() const { return height_; }
  std::int64_t stride() const { return stride_; }
  Format format() const { return fmt_; }
  Depth depth() const { return fmt_.depth; }
  int channels() const { return fmt_.channels; }
  Location location() const { return loc_; }
  bool empty() const { return width_ <= 0 || height_ <= 0; }
  std::int64_t row_bytes() const { return width_ * std::int64_t(fmt_.pixel_bytes()); }

  const std::byte* row_ptr(std::int64_t y) const { return data_ + y * stride_; }
  template <class T>
  const T* row(std::int64_t y) const {
    return reinterpret_cast<const T*>(row_ptr(y));
  }
  ConstImageView roi(std::int64_t x, std::int64_t y, std::int64_t w, std::int64_t h) const;

 private:
  const std::byte* data_ = nullptr;
  std::int64_t width_ = 0, height_ = 0, stride_ = 0;
  Format fmt_{};
  Location loc_{};
};

/// Owning image. Host images are 64-byte aligned with rows padded to 64 bytes; device
/// images come from the backend's allocator (cudaMalloc for cuda:N). Move-only.
class Image {
 public:
  Image() = default;
  /// Allocates width x height pixels of `fmt` at `loc`. Throws limit_exceeded for absurd
  /// sizes, out_of_memory when the allocation fails, backend_unavailable for a device
  /// whose backend is compiled out. The contents are uninitialised.
  Image(std::int64_t width, std::int64_t height, Format fmt, Location loc = Location::host());
  /// An Image over memory that `owner` keeps alive (e.g. pinned or foreign buffers).
  static Image wrap(std::shared_ptr<std::byte> owner, ImageView view) {
    Image img;
    img.storage_ = std::move(owner);
    img.view_ = view;
    return img;
  }

  ImageView view() { return view_; }
  ConstImageView view() const { return view_; }
  operator ImageView() { return view_; }             // NOLINT
  operator ConstImageView() const { return view_; }  // NOLINT

  std::byte* data() { return view_.data(); }
  const std::byte* data() const { return view_.data(); }
  std::int64_t width() const { return view_.width(); }
  std::int64_t height() const { return view_.height(); }
  std::int64_t stride() const { return view_.stride(); }
  Format format() const { return view_.format(); }
  Depth depth() const { return view_.depth(); }
  int channels() const { return view_.channels(); }
  Location location() const { return view_.location(); }
  bool empty() const { return view_.empty(); }
  template <class T>
  T* row(std::int64_t y) {
    return view_.row<T>(y);
  }
  template <class T>
  const T* row(std::int64_t y) const {
    return ConstImageView(view_).row<T>(y);
  }

 private:
  std::shared_ptr<std::byte> storage_;
  ImageView view_;
};

/// Copies pixels between two views of equal size and format. Host<->device copies go
/// through the device's backend (synchronous; see device.hpp for the async form).
void copy(ConstImageView src, ImageView dst);

/// A host copy of `src` (deep copy), laid out as any host Image: rows padded to 64 bytes.
Image clone(ConstImageView src);

}  // namespace pixflow
