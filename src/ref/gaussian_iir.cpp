#include <cmath>
#include <vector>

#include "src/common/numeric.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

// Young & van Vliet (1995) 3rd-order recursive Gaussian: a causal pass
//   w[n] = B x[n] + b1 w[n-1] + b2 w[n-2] + b3 w[n-3]
// then an anti-causal pass
//   y[n] = B w[n] + b1 y[n+1] + b2 y[n+2] + b3 y[n+3]
// (coefficients already divided by b0, B = 1 - b1 - b2 - b3: unit DC gain).
struct Coeffs {
  double B, b1, b2, b3;
  double M[3][3];  // Triggs & Sdika (2006) end-of-line matrix for the anti-causal pass
};

Coeffs make_coeffs(double sigma) {
  const double q = sigma >= 2.5 ? 0.98711 * sigma - 0.96330
                                : 3.97156 - 4.14554 * std::sqrt(1.0 - 0.26891 * sigma);
  const double q2 = q * q, q3 = q2 * q;
  const double b0 = 1.57825 + 2.44413 * q + 1.4281 * q2 + 0.422205 * q3;
  Coeffs k{};
  k.b1 = (2.44413 * q + 2.85619 * q2 + 1.26661 * q3) / b0;
  k.b2 = -(1.4281 * q2 + 1.26661 * q3) / b0;
  k.b3 = (0.422205 * q3) / b0;
  k.B = 1.0 - (k.b1 + k.b2 + k.b3);
  const double a1 = k.b1, a2 = k.b2, a3 = k.b3;
  const double s =
      1.0 / ((1.0 + a1 - a2 + a3) * (1.0 - a1 - a2 - a3) * (1.0 + a2 + (a1 - a3) * a3));
  k.M[0][0] = s * (-a3 * a1 + 1.0 - a3 * a3 - a2);
  k.M[0][1] = s * (a3 + a1) * (a2 + a3 * a1);
  k.M[0][2] = s * a3 * (a1 + a3 * a2);
  k.M[1][0] = s * (a1 + a3 * a2);
  k.M[1][1] = -s * (a2 - 1.0) * (a2 + a3 * a1);
  k.M[1][2] = -s * a3 * (a3 * a1 + a3 * a3 + a2 - 1.0);
  k.M[2][0] = s * (a3 * a1 + a2 + a1 * a1 - a2 * a2);
  k.M[2][1] = s * (a1 * a2 + a3 * a2 * a2 - a1 * a3 * a3 - a3 * a3 * a3 - a3 * a2 + a3);
  k.M[2][2] = s * a3 * (a1 + a3 * a2);
  return k;
}

// Filters one line in place (double), as if it continued with its first sample to the
// left and its last sample to the right (replicate): the causal pass starts in the steady
// state x[0]; the anti-causal pass starts from Triggs & Sdika's exact state for a constant
// continuation x[n-1].
void iir_line(std::vector<double>& x, const Coeffs& k) {
  const std::size_t n = x.size();
  std::vector<double> w(n + 3);
  w[0] = w[1] = w[2] = x[0];  // w[i + 3] is w at position i
  for (std::size_t i = 0; i < n; ++i)
    w[i + 3] = k.B * x[i] + k.b1 * w[i + 2] + k.b2 * w[i + 1] + k.b3 * w[i];
  const double up = x[n - 1];
  const double u[3] = {w[n + 2] - up, w[n + 1] - up, w[n] - up};
  double v[3];
  for (int r = 0; r < 3; ++r) v[r] = k.M[r][0] * u[0] + k.M[r][1] * u[1] + k.M[r][2] * u[2] + up;
  double y1 = v[0], y2 = v[1], y3 = v[2];  // y[n], y[n+1], y[n+2]
  for (std::size_t i = n; i-- > 0;) {
    const double y = k.B * w[i + 3] + k.b1 * y1 + k.b2 * y2 + k.b3 * y3;
    y3 = y2;
    y2 = y1;
    y1 = y;
    x[i] = y;
  }
}

// Filters the line of `len` samples read by get(i), writing put(i, value). Replicate
// borders filter the line as is; other borders filter the line extended by E = ceil(4
// sigma) + 8 samples on each side through border_index (constant: the border value), whose
// own ends then continue by replicate.
template <class Get, class Put>
void filter_line(std::int64_t len, const GaussianIirParams& p, const Coeffs& k, double cval,
                 Get get, Put put) {
  const std::int64_t e =
      p.border.type == BorderType::replicate ? 0 : std::int64_t(std::ceil(4 * p.sigma)) + 8;
  std::vector<double> line(std::size_t(len + 2 * e));
  for (std::int64_t i = 0; i < len + 2 * e; ++i) {
    const std::int64_t s = detail::border_index(i - e, len, p.border.type);
    line[std::size_t(i)] = s < 0 ? cval : get(s);
  }
  iir_line(line, k);
  for (std::int64_t i = 0; i < len; ++i) put(i, line[std::size_t(i + e)]);
}

template <class T>
void iir_h_t(const ConstImageView& src, const ImageView& tmp, const GaussianIirParams& p,
             Rows rows) {
  const Coeffs k = make_coeffs(p.sigma);
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
  const Coeffs k = make_coeffs(p.sigma);
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
  switch (src.depth()) {
    case Depth::u8:
      return iir_h_t<std::uint8_t>(src, tmp, p, rows);
    case Depth::f32:
      return iir_h_t<float>(src, tmp, p, rows);
    default:
      return;  // validated by src/core
  }
}

void gaussian_iir_v(const ConstImageView& tmp, const ImageView& dst, const GaussianIirParams& p,
                    Rows cols) {
  switch (dst.depth()) {
    case Depth::u8:
      return iir_v_t<std::uint8_t>(tmp, dst, p, cols);
    case Depth::f32:
      return iir_v_t<float>(tmp, dst, p, cols);
    default:
      return;  // validated by src/core
  }
}

}  // namespace pixflow::ref
