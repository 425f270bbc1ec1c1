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
#include "src/backends/cpu/simd/x86_madd-inl.hpp"
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
// Integers: 9798 R + 19235 G + 3735 B + 2^14 >> 15 in 32-bit lanes (< 2^31 for u16). A full
// vector of T is de-interleaved at once and widened by halves (u8 -> u16 -> i32), so the
// loads and the shuffles of LoadInterleaved run at full width.
template <class D32, class V32>
HWY_INLINE V32 luma(D32 d32, V32 r, V32 g, V32 b) {
  const auto kr = hn::Set(d32, 9798), kg = hn::Set(d32, 19235), kb = hn::Set(d32, 3735);
  const auto v = hn::Add(hn::Add(hn::Add(hn::Mul(kr, r), hn::Mul(kg, g)), hn::Mul(kb, b)),
                         hn::Set(d32, 1 << 14));
  return hn::ShiftRight<15>(v);
}

// One vector of u16 samples (d16) per channel -> luma of those lanes, stored at d.
template <class T, class D16, class V16>
HWY_INLINE void luma_u16_lanes(D16 /*d16*/, V16 r, V16 g, V16 b, T* d) {
  const hn::Repartition<std::int32_t, D16> d32;
  const hn::Half<D16> dh;
  const hn::Rebind<T, decltype(d32)> dt;
  const std::size_t n = hn::Lanes(d32);
  auto lo = [&](V16 v) {
    return hn::BitCast(
        d32, hn::PromoteTo(hn::Rebind<std::uint32_t, decltype(dh)>(), hn::LowerHalf(dh, v)));
  };
  auto hi = [&](V16 v) {
    return hn::BitCast(
        d32, hn::PromoteTo(hn::Rebind<std::uint32_t, decltype(dh)>(), hn::UpperHalf(dh, v)));
  };
  hn::StoreU(hn::DemoteTo(dt, luma(d32, lo(r), lo(g), lo(b))), dt, d);
  hn::StoreU(hn::DemoteTo(dt, luma(d32, hi(r), hi(g), hi(b))), dt, d + n);
}

#if PIXFLOW_X86_MADD
// u8 on x86: the same integer sum by pairwise 16-bit multiply-adds (pmaddwd): (R, G) and
// (B, 1) pairs interleaved within 128-bit blocks times (9798, 19235) and (3735, 2^14);
// ReorderDemote2To (packs) undoes the interleave. Exact: every term fits int16 x int16.
template <class D16, class V16>
HWY_INLINE void luma_u8_madd(D16 d16, V16 r, V16 g, V16 b, std::uint8_t* d) {
  const hn::Repartition<std::int32_t, D16> d32;
  const hn::Rebind<std::uint8_t, D16> d8;
  const auto krg = hn::BitCast(d16, hn::Set(d32, 9798 | (19235 << 16)));
  const auto kb1 = hn::BitCast(d16, hn::Set(d32, 3735 | (16384 << 16)));
  const auto one = hn::Set(d16, 1);
  auto sum = [&](V16 rg, V16 b1) {
    auto unused = hn::Zero(d32);  // x86 keeps every product in the first sum
    auto s = hn::ReorderWidenMulAccumulate(d32, rg, krg, hn::Zero(d32), unused);
    s = hn::ReorderWidenMulAccumulate(d32, b1, kb1, s, unused);
    return hn::ShiftRight<15>(s);
  };
  const auto lo = sum(hn::InterleaveLower(d16, r, g), hn::InterleaveLower(d16, b, one));
  const auto hi = sum(hn::InterleaveUpper(d16, r, g), hn::InterleaveUpper(d16, b, one));
  hn::StoreU(hn::DemoteTo(d8, hn::ReorderDemote2To(d16, lo, hi)), d8, d);
}
#endif

template <class T>
std::int64_t gray_int(const T* s, T* d, std::int64_t w, int cn, bool bgr) {
  const hn::ScalableTag<T> dt;
  const std::int64_t n = std::int64_t(hn::Lanes(dt));
  std::int64_t x = 0;
  for (; x + n <= w; x += n) {
    hn::Vec<decltype(dt)> c0, c1, c2, c3;
    if (cn == 3)
      hn::LoadInterleaved3(dt, s + x * 3, c0, c1, c2);
    else
      hn::LoadInterleaved4(dt, s + x * 4, c0, c1, c2, c3);
    const auto r = bgr ? c2 : c0, g = c1, b = bgr ? c0 : c2;
    if constexpr (sizeof(T) == 2) {
      luma_u16_lanes<T>(dt, r, g, b, d + x);
    } else {
      const hn::Half<decltype(dt)> dh8;
      const hn::Rebind<std::uint16_t, decltype(dh8)> d16;
      auto lo = [&](hn::Vec<decltype(dt)> v) { return hn::PromoteTo(d16, hn::LowerHalf(dh8, v)); };
      auto hi = [&](hn::Vec<decltype(dt)> v) { return hn::PromoteTo(d16, hn::UpperHalf(dh8, v)); };
#if PIXFLOW_X86_MADD
      const hn::RebindToSigned<decltype(d16)> di16;
      auto s16 = [&](hn::Vec<decltype(d16)> v) { return hn::BitCast(di16, v); };
      luma_u8_madd(di16, s16(lo(r)), s16(lo(g)), s16(lo(b)), d + x);
      luma_u8_madd(di16, s16(hi(r)), s16(hi(g)), s16(hi(b)), d + x + n / 2);
#else
      luma_u16_lanes<T>(d16, lo(r), lo(g), lo(b), d + x);
      luma_u16_lanes<T>(d16, hi(r), hi(g), hi(b), d + x + n / 2);
#endif
    }
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
