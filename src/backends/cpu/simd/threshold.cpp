// SIMD threshold for the cpu backend (cv::threshold semantics, docs/ops/threshold.md), the
// reference's rule lane by lane: f32 compares x > t in float (NaN is never above); integers
// compare against floor(t) clamped to [lo - 1, hi] (below the range every sample is above,
// at the top none is), so the compare runs in the depth's own lanes.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/threshold.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstdint>
#include <type_traits>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/backends/cpu/simd/store_out-inl.hpp"
#include "src/base/pointwise.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
namespace {

// One row: `above` gives the mask of a vector, `scalar` the reference's rule for the tail.
template <class T, class Above, class Scalar>
void rows_t(const ConstImageView& src, const ImageView& dst, ThresholdType type, T tv, T mv,
            Rows rows, Above above, Scalar scalar) {
  const hn::ScalableTag<T> d;
  const std::int64_t N = std::int64_t(hn::Lanes(d)), n = dst.width() * dst.channels();
  const auto vt = hn::Set(d, tv), vm = hn::Set(d, mv);
  const bool stream = stream_output(dst);
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const T* s = src.row<T>(y);
    T* o = dst.row<T>(y);
    std::int64_t i = 0;
    for (; i + N <= n; i += N) {
      const auto x = hn::LoadU(d, s + i);
      const auto m = above(x);
      hn::Vec<decltype(d)> r;
      switch (type) {
        case ThresholdType::binary:
          r = hn::IfThenElseZero(m, vm);
          break;
        case ThresholdType::binary_inv:
          r = hn::IfThenZeroElse(m, vm);
          break;
        case ThresholdType::trunc:
          r = hn::IfThenElse(m, vt, x);
          break;
        case ThresholdType::tozero:
          r = hn::IfThenElseZero(m, x);
          break;
        case ThresholdType::tozero_inv:
        default:
          r = hn::IfThenZeroElse(m, x);
          break;
      }
      StoreOut(r, d, o + i, stream);
    }
    for (; i < n; ++i) o[i] = scalar(s[i]);
  }
}

template <class T>
void threshold_t(const ConstImageView& src, const ImageView& dst, const ThresholdParams& p,
                 Rows rows) {
  const hn::ScalableTag<T> d;
  if constexpr (std::is_same_v<T, float>) {
    const float t = detail::to_float_clamped(p.t), mv = detail::to_float_clamped(p.maxval);
    const auto vt = hn::Set(d, t);
    rows_t<float>(
        src, dst, p.type, t, mv, rows, [&](auto x) { return hn::Gt(x, vt); },
        [&](float x) { return detail::threshold_pick<float>(p.type, x > t, x, t, mv); });
  } else {
    const auto k = detail::int_threshold<T>(p.t, p.maxval);
    const std::int64_t it = k.it;
    auto scalar = [&](T x) {
      return detail::threshold_pick<T>(p.type, std::int64_t(x) > it, x, k.tv, k.mv);
    };
    if (it < std::int64_t(detail::Limits<T>::lo)) {  // every sample is above
      rows_t<T>(
          src, dst, p.type, k.tv, k.mv, rows, [&](auto x) { return hn::Eq(x, x); }, scalar);
    } else if (it >= std::int64_t(detail::Limits<T>::hi)) {  // none is
      rows_t<T>(
          src, dst, p.type, k.tv, k.mv, rows, [&](auto x) { return hn::Ne(x, x); }, scalar);
    } else {
      const auto vi = hn::Set(d, T(it));
      rows_t<T>(
          src, dst, p.type, k.tv, k.mv, rows, [&](auto x) { return hn::Gt(x, vi); }, scalar);
    }
  }
}

}  // namespace
#endif

void threshold_rows(const ConstImageView& src, const ImageView& dst, const ThresholdParams& p,
                    Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::threshold(src, dst, p, rows);
#else
  detail::visit_depth(src.depth(), [&](auto t) { threshold_t<decltype(t)>(src, dst, p, rows); });
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(threshold_rows);

void threshold(const ConstImageView& src, const ImageView& dst, const ThresholdParams& p,
               Rows rows) {
  HWY_DYNAMIC_DISPATCH(threshold_rows)(src, dst, p, rows);
}
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_threshold) {
  using pixflow::Depth;
  pixflow::cpu::add_banded<&pixflow::cpu::threshold>(
      table, "threshold",
      pixflow::detail::Support::of({Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32}));
}
#endif
