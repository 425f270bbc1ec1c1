// Reference for threshold (cv::threshold semantics). The rule is docs/ops/threshold.md.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "src/base/pointwise.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

// double -> float with IEEE round-to-nearest, overflowing to +-inf (as a plain cast does
// on IEEE hardware) without relying on an out-of-range conversion. 0x1.ffffffp127 is
// FLT_MAX plus half an ulp: from there on, round to nearest even gives infinity.
template <class T>
void threshold_rows(const ConstImageView& src, const ImageView& dst, const ThresholdParams& p,
                    Rows rows) {
  const std::int64_t n = dst.width() * dst.channels();
  if constexpr (std::is_same_v<T, float>) {
    // As cv::threshold: t and maxval are converted to float, the comparison is in float.
    const float t = detail::to_float_clamped(p.t), mv = detail::to_float_clamped(p.maxval);
    for (std::int64_t y = rows.begin; y < rows.end; ++y) {
      const float* s = src.row<float>(y);
      float* d = dst.row<float>(y);
      for (std::int64_t i = 0; i < n; ++i)
        d[i] = detail::threshold_pick<float>(p.type, s[i] > t, s[i], t, mv);
    }
  } else {
    // Integers compare against floor(t). A floor below the depth's range behaves as
    // lo - 1 (every sample is above), one at or above hi as hi (none is): clamping keeps
    // the arithmetic in int64 for any finite t. maxval is rounded half to even and
    // saturated; trunc writes floor(t) saturated to the depth.
    const auto k = detail::int_threshold<T>(p.t, p.maxval);
    const std::int64_t it = k.it;
    const T tv = k.tv, mv = k.mv;
    for (std::int64_t y = rows.begin; y < rows.end; ++y) {
      const T* s = src.row<T>(y);
      T* d = dst.row<T>(y);
      for (std::int64_t i = 0; i < n; ++i)
        d[i] = detail::threshold_pick<T>(p.type, std::int64_t(s[i]) > it, s[i], tv, mv);
    }
  }
}

}  // namespace

void threshold(const ConstImageView& src, const ImageView& dst, const ThresholdParams& p,
               Rows rows) {
  detail::visit_depth(src.depth(), [&](auto t) { threshold_rows<decltype(t)>(src, dst, p, rows); });
}

}  // namespace pixflow::ref
