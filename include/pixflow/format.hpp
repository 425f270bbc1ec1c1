// Pixel formats: a depth times a channel count, chosen at run time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pixflow {

/// Sample type of one channel. s32 exists for matmul only.
enum class Depth : std::uint8_t { u8, u16, s16, s32, f32 };

constexpr std::size_t depth_bytes(Depth d) {
  switch (d) {
    case Depth::u8:
      return 1;
    case Depth::u16:
    case Depth::s16:
      return 2;
    case Depth::s32:
    case Depth::f32:
      return 4;
  }
  return 0;
}

const char* depth_name(Depth d) noexcept;
/// Parses "u8", "u16", "s16", "s32", "f32"; throws invalid_argument naming `what` otherwise.
Depth parse_depth(std::string_view s, std::string_view what);

/// Interleaved pixel format. Channels 1..4 (ops state which counts they take).
struct Format {
  Depth depth = Depth::u8;
  int channels = 1;

  constexpr std::size_t pixel_bytes() const { return depth_bytes(depth) * std::size_t(channels); }
  constexpr bool operator==(const Format&) const = default;
};

std::string to_string(Format f);  // e.g. "u8x3"

/// Maps a C++ sample type to its Depth.
template <class T>
struct DepthOf;
template <>
struct DepthOf<std::uint8_t> {
  static constexpr Depth value = Depth::u8;
};
template <>
struct DepthOf<std::uint16_t> {
  static constexpr Depth value = Depth::u16;
};
template <>
struct DepthOf<std::int16_t> {
  static constexpr Depth value = Depth::s16;
};
template <>
struct DepthOf<std::int32_t> {
  static constexpr Depth value = Depth::s32;
};
template <>
struct DepthOf<float> {
  static constexpr Depth value = Depth::f32;
};

}  // namespace pixflow
