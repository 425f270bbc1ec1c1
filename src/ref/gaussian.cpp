#include <vector>

#include "src/base/gaussian_taps.hpp"
#include "src/base/numeric.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

// Separable Gaussian (docs/ops/gaussian.md). p arrives resolved by src/core: kw, kh odd
// >= 1, sigma and sigma_y as passed to the tap functions (<= 0: OpenCV's rule from k).
// For each destination row: the horizontal pass over the kh source rows of the window
// (border rule in y, then in x), then the vertical pass over those row results.
//   u8:  Q8 taps; h = sum(x * tx) (int32); v = sum(h * ty); out = (v + 2^15) >> 16.
//   u16: Q16 taps; h = sum(x * tx) (int64, exact); v = sum(h * ty) (int64, exact);
//        out = (v + 2^31) >> 32. No intermediate rounding.
//   f32: float taps; h = sum in float in tap order; v likewise; no FMA.
template <class T, class Tap, class H>
void gaussian_t(const ConstImageView& src, const ImageView& dst, const GaussianParams& p, Rows rows,
                const Tap* tx, const Tap* ty, int shift) {
  const int ch = src.channels();
  const std::int64_t w = src.width(), h = src.height();
  const int rx = p.kw / 2, ry = p.kh / 2;
  const T cval = detail::saturate_cast<T>(p.border.value);
  std::vector<H> hrow(std::size_t(p.kh) * std::size_t(w) * std::size_t(ch));
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    for (int j = 0; j < p.kh; ++j) {
      const std::int64_t sy = detail::border_index(y - ry + j, h, p.border.type);
      H* hr = hrow.data() + std::size_t(j) * std::size_t(w * ch);
      for (std::int64_t x = 0; x < w; ++x)
        for (int c = 0; c < ch; ++c) {
          H s = 0;
          for (int i = 0; i < p.kw; ++i) {
            const std::int64_t sx = detail::border_index(x - rx + i, w, p.border.type);
            const T v = (sy < 0 || sx < 0) ? cval : src.row<T>(sy)[sx * ch + c];
            s += H(v) * H(tx[i]);
          }
          hr[x * ch + c] = s;
        }
    }
    T* out = dst.row<T>(y);
    for (std::int64_t i = 0; i < w * ch; ++i) {
      H s = 0;
      for (int j = 0; j < p.kh; ++j)
        s += hrow[std::size_t(j) * std::size_t(w * ch) + std::size_t(i)] * H(ty[j]);
      if constexpr (std::is_same_v<T, float>) {
        out[i] = s;
      } else {
        // (s + 2^(shift-1)) >> shift (src/base/rules/saturate.h, as CUDA and OpenCL).
        out[i] = detail::saturate_cast<T>(px_round_shift_s64(std::int64_t(s), shift));
      }
    }
  }
}

}  // namespace

void gaussian(const ConstImageView& src, const ImageView& dst, const GaussianParams& p, Rows rows) {
  switch (src.depth()) {
    case Depth::u8: {
      std::vector<std::int32_t> tx(std::size_t(p.kw)), ty(std::size_t(p.kh));
      detail::gaussian_taps_fixed(p.kw, p.sigma, detail::kGaussianBitsU8, tx.data());
      detail::gaussian_taps_fixed(p.kh, p.sigma_y, detail::kGaussianBitsU8, ty.data());
      return gaussian_t<std::uint8_t, std::int32_t, std::int32_t>(src, dst, p, rows, tx.data(),
                                                                  ty.data(), 16);
    }
    case Depth::u16: {
      std::vector<std::int32_t> tx(std::size_t(p.kw)), ty(std::size_t(p.kh));
      detail::gaussian_taps_fixed(p.kw, p.sigma, detail::kGaussianBitsU16, tx.data());
      detail::gaussian_taps_fixed(p.kh, p.sigma_y, detail::kGaussianBitsU16, ty.data());
      return gaussian_t<std::uint16_t, std::int32_t, std::int64_t>(src, dst, p, rows, tx.data(),
                                                                   ty.data(), 32);
    }
    case Depth::f32: {
      std::vector<float> tx(std::size_t(p.kw)), ty(std::size_t(p.kh));
      detail::gaussian_taps_float(p.kw, p.sigma, tx.data());
      detail::gaussian_taps_float(p.kh, p.sigma_y, ty.data());
      return gaussian_t<float, float, float>(src, dst, p, rows, tx.data(), ty.data(), 0);
    }
    default:
      return;  // validated by src/core
  }
}

}  // namespace pixflow::ref
