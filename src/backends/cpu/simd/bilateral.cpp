// SIMD bilateral filter (u8, 1 or 3 channels) for the cpu backend: the rule of
// src/ref/bilateral.cpp (OpenCV's circular window and tables) on N pixels at a time, two
// vectors of outputs per pass over the window. Source rows are padded in x by the border
// rule (pad_row), split into one plane per channel, into a ring of 2r+1 rows. Per window
// offset k, in the reference's row-major order: delta = sum of |v_c - centre_c| in 32-bit
// lanes, the colour weight gathered from the same float table (GatherIndex), w = space[k] *
// colour, sum_c += float(v_c) * w, wsum += w, in float without FMA; result sum_c / wsum
// rounded half to even and saturated. The last pixels of a row (fewer than a vector) run
// the same float arithmetic one at a time. f32 is left to the reference (its colour weight
// is a double exp per sample, not a table).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/bilateral.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/ref/ref.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// The reference's window (src/ref/bilateral.cpp make_window) and u8 colour table.
struct Window {
  int radius = 1;
  std::vector<int> dx, dy;
  std::vector<float> space;
  std::vector<float> lut;
};

Window make_window(const BilateralParams& p, int ch) {
  Window w;
  const double sc = p.sigma_color <= 0 ? 1.0 : p.sigma_color;
  const double ss = p.sigma_space <= 0 ? 1.0 : p.sigma_space;
  const double color_coeff = -0.5 / (sc * sc);
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
  w.lut.resize(std::size_t(256 * ch));
  for (int i = 0; i < 256 * ch; ++i)
    w.lut[std::size_t(i)] = float(std::exp(double(i) * i * color_coeff));
  return w;
}

template <int CH>
void run_u8(const ConstImageView& src, const ImageView& dst, const BilateralParams& p,
            Rows rows) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<std::int32_t, decltype(df)> di;
  const hn::Rebind<std::uint8_t, decltype(df)> d8;
  const std::int64_t N = std::int64_t(hn::Lanes(df));
  const Window win = make_window(p, CH);
  const int r = win.radius, side = 2 * r + 1;
  const std::int64_t w = src.width(), h = src.height();
  const std::int64_t pw = w + 2 * r;                  // padded pixels per row
  const std::int64_t plane = (pw + 63) / 64 * 64;     // bytes per channel plane
  const std::uint8_t cval = detail::saturate_cast<std::uint8_t>(p.border.value);
  const std::size_t K = win.space.size();
  const float* lut = win.lut.data();

  Scratch<std::uint8_t> ring(std::size_t(plane * CH * side));
  Scratch<std::uint8_t> raw(std::size_t(pw * CH));
  Scratch<std::uint8_t> planar(CH == 1 ? 0 : std::size_t(plane * CH));  // results, by channel
  auto slot = [&](std::int64_t yy) {
    return ring.data() + ((yy % side) + side) % side * plane * CH;
  };
  std::int64_t next = rows.begin - r;
  // Row offsets of each window offset k: slot row (dy + r) and column dx + r.
  std::vector<int> ky(K), kx(K);
  for (std::size_t k = 0; k < K; ++k) ky[k] = win.dy[k] + r, kx[k] = win.dx[k] + r;

  const std::uint8_t* rp[64];
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    for (; next <= y + r; ++next) {
      const std::int64_t sy = detail::border_index(next, h, p.border.type);
      std::uint8_t* o = slot(next);
      if (CH == 1) {
        pad_row<std::uint8_t>(src, sy, r, r, p.border, cval, o);
      } else {
        pad_row<std::uint8_t>(src, sy, r, r, p.border, cval, raw.data());
        for (std::int64_t x = 0; x < pw; ++x)
          for (int c = 0; c < CH; ++c) o[c * plane + x] = raw[std::size_t(x * CH + c)];
      }
    }
    for (int i = 0; i < side; ++i) rp[i] = slot(y - r + i);
    std::uint8_t* out = dst.row<std::uint8_t>(y);
    std::uint8_t* res = CH == 1 ? out : planar.data();
    std::int64_t x = 0;
    for (; x + 2 * N <= w; x += 2 * N) {
      hn::Vec<decltype(di)> c0[CH], c1[CH];
      hn::Vec<decltype(df)> s0[CH], s1[CH];
      for (int c = 0; c < CH; ++c) {
        const std::uint8_t* cen = rp[r] + c * plane + r + x;
        c0[c] = hn::PromoteTo(di, hn::LoadU(d8, cen));
        c1[c] = hn::PromoteTo(di, hn::LoadU(d8, cen + N));
        s0[c] = hn::Zero(df);
        s1[c] = hn::Zero(df);
      }
      auto ws0 = hn::Zero(df), ws1 = hn::Zero(df);
      for (std::size_t k = 0; k < K; ++k) {
        const std::uint8_t* base = rp[ky[k]] + kx[k] + x;
        hn::Vec<decltype(di)> v0[CH], v1[CH];
        auto dl0 = hn::Zero(di), dl1 = hn::Zero(di);
        for (int c = 0; c < CH; ++c) {
          v0[c] = hn::PromoteTo(di, hn::LoadU(d8, base + c * plane));
          v1[c] = hn::PromoteTo(di, hn::LoadU(d8, base + c * plane + N));
          dl0 = hn::Add(dl0, hn::Abs(hn::Sub(v0[c], c0[c])));
          dl1 = hn::Add(dl1, hn::Abs(hn::Sub(v1[c], c1[c])));
        }
        const auto sk = hn::Set(df, win.space[k]);
        const auto w0 = hn::Mul(sk, hn::GatherIndex(df, lut, dl0));
        const auto w1 = hn::Mul(sk, hn::GatherIndex(df, lut, dl1));
        for (int c = 0; c < CH; ++c) {
          s0[c] = hn::Add(s0[c], hn::Mul(hn::ConvertTo(df, v0[c]), w0));
          s1[c] = hn::Add(s1[c], hn::Mul(hn::ConvertTo(df, v1[c]), w1));
        }
        ws0 = hn::Add(ws0, w0);
        ws1 = hn::Add(ws1, w1);
      }
      // sum / wsum >= 0 and wsum >= 1 (the centre's weight): rint, saturate at 255.
      for (int c = 0; c < CH; ++c) {
        std::uint8_t* o = res + (CH == 1 ? 0 : c * plane) + x;
        hn::StoreU(hn::DemoteTo(d8, hn::NearestInt(hn::Div(s0[c], ws0))), d8, o);
        hn::StoreU(hn::DemoteTo(d8, hn::NearestInt(hn::Div(s1[c], ws1))), d8, o + N);
      }
    }
    if (CH != 1)
      for (std::int64_t i = 0; i < x; ++i)
        for (int c = 0; c < CH; ++c) out[i * CH + c] = planar[std::size_t(c * plane + i)];
    for (; x < w; ++x) {  // the reference's float arithmetic, one pixel at a time
      float sum[CH] = {}, wsum = 0;
      for (std::size_t k = 0; k < K; ++k) {
        int delta = 0, v[CH];
        for (int c = 0; c < CH; ++c) {
          v[c] = rp[ky[k]][c * plane + kx[k] + x];
          const int cc = rp[r][c * plane + r + x];
          delta += v[c] > cc ? v[c] - cc : cc - v[c];
        }
        const float wk = win.space[k] * lut[delta];
        for (int c = 0; c < CH; ++c) sum[c] += float(v[c]) * wk;
        wsum += wk;
      }
      for (int c = 0; c < CH; ++c)
        out[x * CH + c] = detail::saturate_cast<std::uint8_t>(double(sum[c] / wsum));
    }
  }
}
#endif

void bilateral_rows(const ConstImageView& src, const ImageView& dst, const BilateralParams& p,
                    Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::bilateral(src, dst, p, rows);
#else
  if (src.depth() != Depth::u8)
    ref::bilateral(src, dst, p, rows);
  else if (src.channels() == 1)
    run_u8<1>(src, dst, p, rows);
  else
    run_u8<3>(src, dst, p, rows);
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(bilateral_rows);

void bilateral(const ConstImageView& src, const ImageView& dst, const BilateralParams& p,
               Rows rows) {
  HWY_DYNAMIC_DISPATCH(bilateral_rows)(src, dst, p, rows);
}
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_bilateral) {
  using pixflow::Depth;
  pixflow::cpu::add_banded<&pixflow::cpu::bilateral>(
      table, "bilateral", pixflow::detail::Support::of({Depth::u8}, {1, 3}));
}
#endif
