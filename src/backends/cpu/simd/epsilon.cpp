// SIMD epsilon filter for the cpu backend: the rule of src/ref/epsilon.cpp on N outputs at
// a time. Channels are interleaved and independent, so a row is one line of w*ch samples
// whose window taps are ch samples apart. Source rows are padded in x by the border rule
// (pad_row) into a ring of 2r+1 rows.
// u8: |v - c| <= t in double is |v - c| <= min(floor(t), 255) in integers; the samples run
// in 16-bit lanes (difference, compare, masked add of the value, count), the sum is exact
// in any order: it is flushed to 32-bit lanes after each window row when (2r+1)^2 * 255 does
// not fit 16 bits. The division (2 sum + n) / (2 n) is the float quotient truncated: both
// operands are below 2^24 and 2n * 256 < 2^24 (n <= 65^2), so the rounded quotient never
// reaches the next integer and truncation gives the integer quotient exactly.
// f32: double lanes, the reference's row-major order of the sum, comparison in double.
// The last samples of a row (fewer than a vector) run the reference's arithmetic one by one.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/epsilon.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/ref/ref.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// Ring of 2r+1 padded rows of T (r pixels each side), filled on demand.
template <class T>
struct Ring {
  const ConstImageView& src;
  const EpsilonParams& p;
  int rows, left;
  std::int64_t stride;
  T cval;
  Scratch<T> buf;
  std::int64_t next;
  Ring(const ConstImageView& s, const EpsilonParams& pp, std::int64_t first)
      : src(s),
        p(pp),
        rows(2 * pp.r + 1),
        left(pp.r),
        stride(((s.width() + 2 * pp.r) * s.channels() + 63) / 64 * 64),
        cval(detail::saturate_cast<T>(pp.border.value)),
        buf(std::size_t(stride * rows)),
        next(first) {}
  T* slot(std::int64_t yy) { return buf.data() + ((yy % rows) + rows) % rows * stride; }
  void fill_to(std::int64_t last) {
    for (; next <= last; ++next)
      pad_row<T>(src, detail::border_index(next, src.height(), p.border.type), left, left, p.border,
                 cval, slot(next));
  }
};

void run_u8(const ConstImageView& src, const ImageView& dst, const EpsilonParams& p, Rows rows) {
  const hn::ScalableTag<std::int16_t> d16;
  const hn::Rebind<std::uint8_t, decltype(d16)> d8;
  const hn::Half<decltype(d16)> dh16;
  const hn::Rebind<std::int32_t, decltype(dh16)> d32;
  const hn::Rebind<float, decltype(d32)> df;
  const hn::Rebind<std::uint8_t, decltype(d32)> d8h;
  const std::int64_t N = std::int64_t(hn::Lanes(d16)), H = std::int64_t(hn::Lanes(d32));
  const int r = p.r, ch = src.channels(), side = 2 * r + 1;
  const std::int64_t n_out = src.width() * ch;
  const int T = p.t >= 255.0 ? 255 : int(std::floor(p.t));
  // 16-bit lanes hold the whole sum when (2r+1)^2 * 255 < 2^16 (read as unsigned).
  const bool flush = std::int64_t(side) * side * 255 > 65535;
  const auto t1 = hn::Set(d16, std::int16_t(T + 1));

  Ring<std::uint8_t> ring(src, p, rows.begin - r);
  const std::uint8_t* rp[65];
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    ring.fill_to(y + r);
    for (int i = 0; i < side; ++i) rp[i] = ring.slot(y - r + i);
    const std::uint8_t* cen = rp[r] + std::int64_t(r) * ch;
    std::uint8_t* out = dst.row<std::uint8_t>(y);
    std::int64_t i = 0;
    for (; i + N <= n_out; i += N) {
      const auto c = hn::PromoteTo(d16, hn::LoadU(d8, cen + i));
      auto s = hn::Zero(d16), n = hn::Zero(d16);
      auto s_lo = hn::Zero(d32), s_hi = hn::Zero(d32);
      for (int wy = 0; wy < side; ++wy) {
        const std::uint8_t* row = rp[wy] + i;
        for (int wx = 0; wx < side; ++wx) {
          const auto v = hn::PromoteTo(d16, hn::LoadU(d8, row + std::int64_t(wx) * ch));
          const auto m = hn::Lt(hn::Abs(hn::Sub(v, c)), t1);
          s = hn::Add(s, hn::IfThenElseZero(m, v));
          n = hn::Sub(n, hn::VecFromMask(d16, m));
        }
        if (flush) {  // row partial <= 65 * 255: positive in 16 bits
          s_lo = hn::Add(s_lo, hn::PromoteTo(d32, hn::LowerHalf(dh16, s)));
          s_hi = hn::Add(s_hi, hn::PromoteTo(d32, hn::UpperHalf(dh16, s)));
          s = hn::Zero(d16);
        }
      }
      if (!flush) {  // the sum as unsigned 16 bits
        const hn::Rebind<std::uint16_t, decltype(dh16)> du16h;
        const hn::Rebind<std::uint32_t, decltype(dh16)> du32;
        const auto us = hn::BitCast(hn::ScalableTag<std::uint16_t>(), s);
        s_lo = hn::BitCast(d32, hn::PromoteTo(du32, hn::LowerHalf(du16h, us)));
        s_hi = hn::BitCast(d32, hn::PromoteTo(du32, hn::UpperHalf(du16h, us)));
      }
      const auto n_lo = hn::PromoteTo(d32, hn::LowerHalf(dh16, n));
      const auto n_hi = hn::PromoteTo(d32, hn::UpperHalf(dh16, n));
      auto quot = [&](hn::Vec<decltype(d32)> sv, hn::Vec<decltype(d32)> nv) {
        const auto num = hn::Add(hn::Add(sv, sv), nv), den = hn::Add(nv, nv);
        return hn::ConvertTo(d32, hn::Div(hn::ConvertTo(df, num), hn::ConvertTo(df, den)));
      };
      hn::StoreU(hn::DemoteTo(d8h, quot(s_lo, n_lo)), d8h, out + i);
      hn::StoreU(hn::DemoteTo(d8h, quot(s_hi, n_hi)), d8h, out + i + H);
    }
    for (; i < n_out; ++i) {  // the reference's integers, one sample at a time
      const int c = cen[i];
      std::int64_t isum = 0, n = 0;
      for (int wy = 0; wy < side; ++wy)
        for (int wx = 0; wx < side; ++wx) {
          const int v = rp[wy][i + std::int64_t(wx) * ch];
          if ((v > c ? v - c : c - v) <= T) ++n, isum += v;
        }
      out[i] = std::uint8_t((2 * isum + n) / (2 * n));
    }
  }
}

void run_f32(const ConstImageView& src, const ImageView& dst, const EpsilonParams& p, Rows rows) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const std::int64_t N = std::int64_t(hn::Lanes(dd));
  const int r = p.r, ch = src.channels(), side = 2 * r + 1;
  const std::int64_t n_out = src.width() * ch;
  const auto tv = hn::Set(dd, p.t), one = hn::Set(dd, 1.0);

  Ring<float> ring(src, p, rows.begin - r);
  const float* rp[65];
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    ring.fill_to(y + r);
    for (int i = 0; i < side; ++i) rp[i] = ring.slot(y - r + i);
    const float* cen = rp[r] + std::int64_t(r) * ch;
    float* out = dst.row<float>(y);
    std::int64_t i = 0;
    for (; i + 2 * N <= n_out; i += 2 * N) {
      const auto c0 = hn::PromoteTo(dd, hn::LoadU(df, cen + i));
      const auto c1 = hn::PromoteTo(dd, hn::LoadU(df, cen + i + N));
      auto s0 = hn::Zero(dd), n0 = hn::Zero(dd), s1 = hn::Zero(dd), n1 = hn::Zero(dd);
      for (int wy = 0; wy < side; ++wy) {
        const float* row = rp[wy] + i;
        for (int wx = 0; wx < side; ++wx, row += ch) {
          const auto v0 = hn::PromoteTo(dd, hn::LoadU(df, row));
          const auto v1 = hn::PromoteTo(dd, hn::LoadU(df, row + N));
          const auto m0 = hn::Le(hn::Abs(hn::Sub(v0, c0)), tv);
          const auto m1 = hn::Le(hn::Abs(hn::Sub(v1, c1)), tv);
          s0 = hn::Add(s0, hn::IfThenElseZero(m0, v0));
          n0 = hn::Add(n0, hn::IfThenElseZero(m0, one));
          s1 = hn::Add(s1, hn::IfThenElseZero(m1, v1));
          n1 = hn::Add(n1, hn::IfThenElseZero(m1, one));
        }
      }
      hn::StoreU(hn::DemoteTo(df, hn::Div(s0, n0)), df, out + i);
      hn::StoreU(hn::DemoteTo(df, hn::Div(s1, n1)), df, out + i + N);
    }
    for (; i < n_out; ++i) {  // the reference's double arithmetic, one sample at a time
      const double c = double(cen[i]);
      double sum = 0;
      std::int64_t n = 0;
      for (int wy = 0; wy < side; ++wy)
        for (int wx = 0; wx < side; ++wx) {
          const double v = double(rp[wy][i + std::int64_t(wx) * ch]);
          if (std::fabs(v - c) <= p.t) ++n, sum += v;
        }
      out[i] = float(sum / double(n));
    }
  }
}
#endif

void epsilon_rows(const ConstImageView& src, const ImageView& dst, const EpsilonParams& p,
                  Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::epsilon(src, dst, p, rows);
#else
  if (src.depth() == Depth::u8)
    run_u8(src, dst, p, rows);
  else
    run_f32(src, dst, p, rows);
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(epsilon_rows);

void epsilon(const ConstImageView& src, const ImageView& dst, const EpsilonParams& p, Rows rows) {
  HWY_DYNAMIC_DISPATCH(epsilon_rows)(src, dst, p, rows);
}
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_epsilon) {
  using pixflow::Depth;
  pixflow::cpu::add_banded<&pixflow::cpu::epsilon>(
      table, "epsilon", pixflow::detail::Support::of({Depth::u8, Depth::f32}, {1, 2, 3, 4}));
}
#endif
