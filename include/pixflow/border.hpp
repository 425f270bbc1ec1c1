// Border modes of every neighbourhood op (docs/contract.md §2).
#pragma once

#include <string>
#include <string_view>

namespace pixflow {

enum class BorderType { replicate, reflect, reflect101, wrap, constant };

/// replicate aaa|abcd|ddd, reflect cba|abcd|dcb, reflect101 dcb|abcd|cba, wrap bcd|abcd|abc,
/// constant(v) vvv|abcd|vvv. Windows larger than the image repeat the rule (as OpenCV's
/// borderInterpolate does).
struct Border {
  BorderType type = BorderType::reflect101;
  double value = 0;  ///< used by constant only; same value for every channel

  static constexpr Border replicate() { return {BorderType::replicate, 0}; }
  static constexpr Border reflect() { return {BorderType::reflect, 0}; }
  static constexpr Border reflect101() { return {BorderType::reflect101, 0}; }
  static constexpr Border wrap() { return {BorderType::wrap, 0}; }
  static constexpr Border constant(double v = 0) { return {BorderType::constant, v}; }
  constexpr bool operator==(const Border&) const = default;
};

const char* border_name(BorderType t) noexcept;
/// Parses "replicate", "reflect", "reflect101", "wrap", "constant"; throws invalid_argument.
BorderType parse_border(std::string_view s, std::string_view what);

}  // namespace pixflow
