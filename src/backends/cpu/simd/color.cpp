// SIMD gray (RGB(A) -> luma) for the cpu backend: the rule of src/ref/color.cpp (Q15
// BT.601 for u8/u16, left-to-right float for f32) on N pixels at a time, de-interleaved
// by LoadInterleaved3/4. The last w % N pixels of a row go to the reference on an ROI.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/color.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstdint>
#include <type_traits>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
// Integers: 9798 R + 19235 G + 3735 B + 2^14 >> 15 in 32-bit lanes (< 2^31 for u16).
template <class T>
std::int64_t gray_int(const T* s, T* d, std::int64_t w, int cn, bool bgr) {
  const hn::ScalableTag<std::int32_t> d32;
  const hn::Rebind<T, decltype(d32)> dt;
  const std::int64_t n = std::int64_t(hn::Lanes(d32));
  const auto kr = hn::Set(d32, 9798), kg = hn::Set(d32, 19235), kb = hn::Set(d32, 3735);
  const auto half = hn::Set(d32, 1 << 14);
  std::int64_t x = 0;
  for (; x + n <= w; x += n) {
    hn::Vec<decltype(dt)> c0, c1, c2, c3;
    if (cn == 3)
      hn::LoadInterleaved3(dt, s + x * 3, c0, c1, c2);
    else
      hn::LoadInterleaved4(dt, s + x * 4, c0, c1, c2, c3);
    const auto r = hn::PromoteTo(d32, bgr ? c2 : c0), g = hn::PromoteTo(d32, c1),
               b = hn::PromoteTo(d32, bgr ? c0 : c2);
    const auto v = hn::Add(hn::Add(hn::Add(hn::Mul(kr, r), hn::Mul(kg, g)), hn::Mul(kb, b)), half);
    hn::StoreU(hn::DemoteTo(dt, hn::ShiftRight<15>(v)), dt, d + x);
  }
  return x;
}

// f32: (0.299 R + 0.587 G) + 0.114 B, each product and sum rounded to float, no FMA.
std::int64_t gray_f32(const float* s, float* d, std::int64_t w, int cn, bool bgr) {
  const hn::ScalableTag<float> df;
  const std::int64_t n = std::int64_t(hn::Lanes(df));
  const auto kr = hn::Set(df, 0.299f), kg = hn::Set(df, 0.587f), kb = hn::Set(df, 0.114f);
  std::int64_t x = 0;
  for (; x + n <= w; x += n) {
    hn::Vec<decltype(df)> c0, c1, c2, c3;
    if (cn == 3)
      hn::LoadInterleaved3(df, s + x * 3, c0, c1, c2);
    else
      hn::LoadInterleaved4(df, s + x * 4, c0, c1, c2, c3);
    const auto r = bgr ? c2 : c0, b = bgr ? c0 : c2;
    hn::StoreU(hn::Add(hn::Add(hn::Mul(kr, r), hn::Mul(kg, c1)), hn::Mul(kb, b)), df, d + x);
  }
  return x;
}
#endif

void gray_rows(const ConstImageView& src, const ImageView& dst, const GrayParams& p, Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::gray(src, dst, p, rows);
#else
  const std::int64_t w = dst.width();
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(src.depth(), [&](auto t) {
    using T = decltype(t);
    std::int64_t done = w;
    for (std::int64_t y = rows.begin; y < rows.end; ++y) {
      const T* s = src.row<T>(y);
      T* d = dst.row<T>(y);
      if constexpr (std::is_same_v<T, float>)
        done = gray_f32(s, d, w, src.channels(), p.from_bgr);
      else
        done = gray_int<T>(s, d, w, src.channels(), p.from_bgr);
    }
    if (done < w)  // the same tail on every row: one reference call over the band
      ref::gray(src.roi(done, 0, w - done, src.height()), dst.roi(done, 0, w - done, dst.height()),
                p, rows);
  });
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(gray_rows);

void gray(const ConstImageView& src, const ImageView& dst, const GrayParams& p, Rows rows) {
  HWY_DYNAMIC_DISPATCH(gray_rows)(src, dst, p, rows);
}
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_color) {
  using pixflow::Depth;
  pixflow::cpu::add_banded<&pixflow::cpu::gray>(
      table, "gray", pixflow::detail::Support::of({Depth::u8, Depth::u16, Depth::f32}, {3, 4}));
}
#endif
