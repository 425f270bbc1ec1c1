// SIMD convert for the cpu backend: dst = saturate(round_half_even(abs?(x * scale + offset)))
// computed in double, as src/base/pointwise.hpp's convert_apply (docs/ops/convert.md): every
// sample widened exactly to a double lane, the same double multiply and add (no FMA), Abs,
// then the reference's saturate_cast (double_lanes-inl.hpp). Every depth pair.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/convert.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstdint>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/base/pointwise.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

#include "src/backends/cpu/simd/double_lanes-inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
namespace {

template <class S, class D>
void convert_t(const ConstImageView& src, const ImageView& dst, const ConvertParams& p, Rows rows) {
  const std::int64_t n = dst.width() * dst.channels();
  const Dd d;
  const auto scale = hn::Set(d, p.scale), offset = hn::Set(d, p.offset);
  const bool abs = p.abs, stream = stream_output(dst);
  auto f = [&](hn::Vec<Dd> x) {
    const auto v = hn::Add(hn::Mul(x, scale), offset);
    return abs ? hn::Abs(v) : v;
  };
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const S* s = src.row<S>(y);
    D* o = dst.row<D>(y);
    // In place (same depth, identical views) is safe: each vector is loaded before stored.
    const std::int64_t done = map_double_lanes<S, D>(s, o, n, f, stream);
    for (std::int64_t i = done; i < n; ++i)
      o[i] = detail::convert_apply<S, D>(s[i], p.scale, p.offset, p.abs);
  }
}

}  // namespace
#endif

void convert_rows(const ConstImageView& src, const ImageView& dst, const ConvertParams& p,
                  Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::convert(src, dst, p, rows);
#else
  detail::visit_depth(src.depth(), [&](auto s) {
    detail::visit_depth(dst.depth(),
                        [&](auto t) { convert_t<decltype(s), decltype(t)>(src, dst, p, rows); });
  });
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(convert_rows);

void convert(const ConstImageView& src, const ImageView& dst, const ConvertParams& p, Rows rows) {
  HWY_DYNAMIC_DISPATCH(convert_rows)(src, dst, p, rows);
}
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_convert) {
  using pixflow::Depth;
  pixflow::cpu::add_banded<&pixflow::cpu::convert>(
      table, "convert",
      pixflow::detail::Support::of({Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32}));
}
#endif
