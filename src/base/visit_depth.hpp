// Runtime depth -> compile-time sample type, written once. `visit_depth(d, f)` calls
// `f(T{})` with the sample type of `d` (std::uint8_t, std::uint16_t, std::int16_t,
// std::int32_t or float); `visit_depth<Depth::u8, Depth::f32>(d, f)` restricts the set and
// throws `internal` for any other depth (callers validate depths first, so that is a bug).
#pragma once

#include <cstdint>
#include <tuple>
#include <type_traits>

#include "pixflow/format.hpp"
#include "src/base/error.hpp"

namespace pixflow::detail {

/// The sample type of depth D: the inverse of format.hpp's DepthOf, in Depth's order.
template <Depth D>
using sample_t = std::tuple_element_t<
    std::size_t(D), std::tuple<std::uint8_t, std::uint16_t, std::int16_t, std::int32_t, float>>;
static_assert(DepthOf<sample_t<Depth::u8>>::value == Depth::u8 &&
              DepthOf<sample_t<Depth::u16>>::value == Depth::u16 &&
              DepthOf<sample_t<Depth::s16>>::value == Depth::s16 &&
              DepthOf<sample_t<Depth::s32>>::value == Depth::s32 &&
              DepthOf<sample_t<Depth::f32>>::value == Depth::f32);

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
