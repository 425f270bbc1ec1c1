// Runtime depth -> compile-time sample type, written once. `visit_depth(d, f)` calls
// `f(T{})` with the sample type of `d` (std::uint8_t, std::uint16_t, std::int16_t,
// std::int32_t or float); `visit_depth<Depth::u8, Depth::f32>(d, f)` restricts the set and
// throws `internal` for any other depth (callers validate depths first, so that is a bug).
#pragma once

#include <cstdint>
#include <type_traits>

#include "pixflow/format.hpp"
#include "src/base/error.hpp"

namespace pixflow::detail {

template <Depth D>
struct SampleOf;
template <>
struct SampleOf<Depth::u8> {
  using type = std::uint8_t;
};
template <>
struct SampleOf<Depth::u16> {
  using type = std::uint16_t;
};
template <>
struct SampleOf<Depth::s16> {
  using type = std::int16_t;
};
template <>
struct SampleOf<Depth::s32> {
  using type = std::int32_t;
};
template <>
struct SampleOf<Depth::f32> {
  using type = float;
};
template <Depth D>
using sample_t = typename SampleOf<D>::type;

template <Depth... Ds, class F>
decltype(auto) visit_depth(Depth d, F&& f) {
  if constexpr (sizeof...(Ds) == 0) {
    return visit_depth<Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32>(
        d, static_cast<F&&>(f));
  } else {
    using R = decltype(f(sample_t<Depth::u8>{}));
    if constexpr (std::is_void_v<R>) {
      const bool hit = ((d == Ds ? (f(sample_t<Ds>{}), true) : false) || ...);
      if (!hit) fail(Status::internal, "visit_depth", "depth ", depth_name(d), " not handled");
    } else {
      R out{};
      const bool hit = ((d == Ds ? (out = f(sample_t<Ds>{}), true) : false) || ...);
      if (!hit) fail(Status::internal, "visit_depth", "depth ", depth_name(d), " not handled");
      return out;
    }
  }
}

}  // namespace pixflow::detail
