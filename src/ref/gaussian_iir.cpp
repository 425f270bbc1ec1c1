#include <algorithm>
#include <cmath>
#include <vector>

#include "src/base/iir.hpp"
#include "src/base/numeric.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

// Young & van Vliet (1995) 3rd-order recursive Gaussian: a causal pass
//   w[n] = B x[n] + b1 w[n-1] + b2 w[n-2] + b3 w[n-3]
// then an anti-causal pass
//   y[n] = B w[n] + b1 y[n+1] + b2 y[n+2] + b3 y[n+3]
// (coefficients already divided by b0, B = 1 - b1 - b2 - b3: unit DC gain), each pass in
// blocks of detail::kIirBlock positions corrected by carries (the block rule that lets a GPU
// filter a line's blocks in parallel; the same filter up to rounding).
// One line through the shared filter (src/base/iir.hpp); w is this call's scratch.
template <class Get, class Put>
void filter_line(std::int64_t len, const GaussianIirParams& p, const detail::IirCoeffs& k,
                 double cval, Get get, Put put) {
  const std::int64_t e = detail::iir_extension(p);
  std::vector<double> w(std::size_t(len + 2 * e + 6));
  detail::iir_filter_line(len, e, p.border.type, cval, k, w.data(), get, put);
}

template <class T>
void iir_h_t(const ConstImageView& src, const ImageView& tmp, const GaussianIirParams& p,
             Rows rows) {
  const detail::IirCoeffs k = detail::iir_coeffs(p.sigma);
  const int ch = src.channels();
  const double cval = double(detail::saturate_cast<T>(p.border.value));
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const T* in = src.row<T>(y);
    float* out = tmp.row<float>(y);
    for (int c = 0; c < ch; ++c)
      filter_line(
          src.width(), p, k, cval, [&](std::int64_t i) { return double(in[i * ch + c]); },
          [&](std::int64_t i, double v) { out[i * ch + c] = float(v); });
  }
}

template <class T>
void iir_v_t(const ConstImageView& tmp, const ImageView& dst, const GaussianIirParams& p,
             Rows cols) {
  const detail::IirCoeffs k = detail::iir_coeffs(p.sigma);
  const int ch = tmp.channels();
  const double cval = double(detail::saturate_cast<T>(p.border.value));
  for (std::int64_t x = cols.begin; x < cols.end; ++x)
    for (int c = 0; c < ch; ++c)
      filter_line(
          tmp.height(), p, k, cval,
          [&](std::int64_t i) { return double(tmp.row<float>(i)[x * ch + c]); },
          [&](std::int64_t i, double v) {
            // u8: the float result rounded half to even and saturated.
            dst.row<T>(i)[x * ch + c] = detail::saturate_cast<T>(double(float(v)));
          });
}

}  // namespace

void gaussian_iir_h(const ConstImageView& src, const ImageView& tmp, const GaussianIirParams& p,
                    Rows rows) {
  detail::visit_depth<Depth::u8, Depth::f32>(
      src.depth(), [&](auto t) { iir_h_t<decltype(t)>(src, tmp, p, rows); });
}

void gaussian_iir_v(const ConstImageView& tmp, const ImageView& dst, const GaussianIirParams& p,
                    Rows cols) {
  detail::visit_depth<Depth::u8, Depth::f32>(
      dst.depth(), [&](auto t) { iir_v_t<decltype(t)>(tmp, dst, p, cols); });
}

}  // namespace pixflow::ref
