// Reference for bilateral: cv::bilateralFilter's weights, a fixed row-major summation order.
#include <cmath>
#include <cstdint>
#include <vector>

#include "src/base/bilateral_f32.hpp"
#include "src/base/numeric.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

struct Window {
  int radius = 1;
  std::vector<int> dx, dy;   // offsets of the circular window, row-major
  std::vector<float> space;  // exp(-(i^2 + j^2) / (2 sigma_s^2)) as float
  double color_coeff = 0;    // -1 / (2 sigma_c^2)
  double sigma_color = 1;    // after "<= 0 means 1"
};

// Window as OpenCV builds it: radius = d > 0 ? d/2 : cvRound(1.5 sigma_s), at least 1;
// offsets with sqrt(i^2 + j^2) <= radius, rows (i) outer, columns (j) inner; weight
// float(exp(r*r * (-0.5 / sigma_s^2))) with r the double sqrt, exactly as OpenCV's table.
Window make_window(const BilateralParams& p) {
  Window w;
  const double sc = p.sigma_color <= 0 ? 1.0 : p.sigma_color;
  const double ss = p.sigma_space <= 0 ? 1.0 : p.sigma_space;
  w.color_coeff = -0.5 / (sc * sc);
  w.sigma_color = sc;
  const double space_coeff = -0.5 / (ss * ss);
  w.radius = p.d > 0 ? p.d / 2 : int(detail::round_half_even(ss * 1.5));
  if (w.radius < 1) w.radius = 1;
  for (int i = -w.radius; i <= w.radius; ++i)
    for (int j = -w.radius; j <= w.radius; ++j) {
      const double r = std::sqrt(double(i) * i + double(j) * j);
      if (r > w.radius) continue;
      w.dy.push_back(i);
      w.dx.push_back(j);
      w.space.push_back(float(std::exp(r * r * space_coeff)));
    }
  return w;
}

// Per pixel: for each window offset k in order, delta = sum over channels of |v_c - c_c|
// (L1; u8 in integers, f32 in float), colour weight: u8 the table's float(exp(delta^2 *
// color_coeff)) for the integer delta; f32 the interpolated table of src/base/bilateral_f32.hpp
// (0 for a NaN or infinite delta); w = space[k] * colour (float); sum_c += v_c * w, wsum += w
// (float, no FMA); result sum_c / wsum (u8: rounded half to even, saturated). f32, with
// finite space weights: wsum is finite, and 0 only when the centre tap's own weight is (its
// delta is 0 unless a centre sample is NaN or infinite; or sigma_color is NaN): then every
// channel of the output is NaN (0/0 or NaN/0).
template <class T>
void run(const ConstImageView& src, const ImageView& dst, const BilateralParams& p, Rows rows) {
  const Window w = make_window(p);
  const int ch = src.channels();
  const T cval = detail::saturate_cast<T>(p.border.value);
  std::vector<float> color_lut;
  const float* table = nullptr;  // f32
  const int bins = detail::bilateral_f32::bins(ch);
  float scale = 0;
  if constexpr (std::is_same_v<T, float>) {
    table = detail::bilateral_f32::table(ch).data();
    scale = detail::bilateral_f32::scale(w.sigma_color, ch);
  } else {
    color_lut.resize(std::size_t(256 * ch));
    for (int i = 0; i < 256 * ch; ++i)
      color_lut[std::size_t(i)] = float(std::exp(double(i) * i * w.color_coeff));
  }
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    T* out = dst.row<T>(y);
    for (std::int64_t x = 0; x < dst.width(); ++x) {
      const T* centre = src.row<T>(y) + x * ch;
      float sum[4] = {0, 0, 0, 0};
      float wsum = 0;
      for (std::size_t k = 0; k < w.space.size(); ++k) {
        const std::int64_t yy = detail::border_index(y + w.dy[k], src.height(), p.border.type);
        const std::int64_t xx = detail::border_index(x + w.dx[k], src.width(), p.border.type);
        T v[4];
        for (int c = 0; c < ch; ++c) v[c] = (xx < 0 || yy < 0) ? cval : src.row<T>(yy)[xx * ch + c];
        float cw;
        if constexpr (std::is_same_v<T, float>) {
          float delta = 0;
          for (int c = 0; c < ch; ++c) delta += std::fabs(v[c] - centre[c]);
          cw = detail::bilateral_f32::weight(table, bins, scale, delta);
        } else {
          int delta = 0;
          for (int c = 0; c < ch; ++c) delta += std::abs(int(v[c]) - int(centre[c]));
          cw = color_lut[std::size_t(delta)];
        }
        const float wk = w.space[k] * cw;
        for (int c = 0; c < ch; ++c) sum[c] += float(v[c]) * wk;
        wsum += wk;
      }
      for (int c = 0; c < ch; ++c) {
        const float r = sum[c] / wsum;
        out[x * ch + c] = detail::saturate_cast<T>(double(r));
      }
    }
  }
}

}  // namespace

void bilateral(const ConstImageView& src, const ImageView& dst, const BilateralParams& p,
               Rows rows) {
  if (src.depth() == Depth::u8)
    run<std::uint8_t>(src, dst, p, rows);
  else
    run<float>(src, dst, p, rows);
}

}  // namespace pixflow::ref
