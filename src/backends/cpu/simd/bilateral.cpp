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
#include <cstring>
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
void run_u8(const ConstImageView& src, const ImageView& dst, const BilateralParams& p, Rows rows,
            const Window& win) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<std::int32_t, decltype(df)> di;
  const hn::Rebind<std::uint8_t, decltype(df)> d8;
  const std::int64_t N = std::int64_t(hn::Lanes(df));
  const int r = win.radius, side = 2 * r + 1;
  const std::int64_t w = src.width(), h = src.height();
  const std::int64_t pw = w + 2 * r;               // padded pixels per row
  const std::int64_t plane = (pw + 63) / 64 * 64;  // bytes per channel plane
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

// Source columns [x0, x1) of row sy (border-mapped in y; -1 = constant row), any x0 < 0 or
// x1 > w taken by the border rule in x, into CH planes `plane` bytes apart.
template <int CH>
void pad_cols(const ConstImageView& src, std::int64_t sy, std::int64_t x0, std::int64_t x1,
              const Border& border, std::uint8_t cval, std::int64_t plane, std::uint8_t* out) {
  const std::int64_t w = src.width();
  if (sy < 0) {
    for (int c = 0; c < CH; ++c) std::memset(out + c * plane, cval, std::size_t(x1 - x0));
    return;
  }
  const std::uint8_t* in = src.row<std::uint8_t>(sy);
  std::int64_t x = x0;
  if (CH == 1 && x0 < w && x1 > 0) {  // border on the left, the row's samples, border right
    for (; x < 0; ++x) {
      const std::int64_t sx = detail::border_index(x, w, border.type);
      out[x - x0] = sx < 0 ? cval : in[sx];
    }
    const std::int64_t e = x1 < w ? x1 : w;
    std::memcpy(out + (x - x0), in + x, std::size_t(e - x));
    x = e;
  }
  for (; x < x1; ++x) {
    const std::int64_t sx = (x >= 0 && x < w) ? x : detail::border_index(x, w, border.type);
    for (int c = 0; c < CH; ++c) out[c * plane + (x - x0)] = sx < 0 ? cval : in[sx * CH + c];
  }
}

// The same arithmetic with each colour weight looked up once per pair of pixels. The pair
// (p, p + k) has the same delta and the same space weight (the window is symmetric) for the
// output at p with offset k and the output at p + k with offset -k, so w = space[k] *
// colour is the same float for both. Per centre row, the weights of the forward offsets
// (after the centre in row-major order) are computed for every centre the band's outputs
// reach back to (deltas in 16-bit lanes, then a scalar lookup in a table of space[k] *
// colour[delta], the reference's product), into a ring of r+1 rows; each output then sums
// all K offsets in the reference's order, forward weights from its own row, backward ones
// from the row and column of its partner. Strips of columns keep the ring in L2.
template <int CH>
void run_sym(const ConstImageView& src, const ImageView& dst, const BilateralParams& p, Rows rows,
             const Window& win) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<std::int32_t, decltype(df)> di;
  const hn::Rebind<std::uint8_t, decltype(df)> d8;
  const hn::ScalableTag<std::uint16_t> du16;
  const hn::Rebind<std::uint8_t, decltype(du16)> d8w;
  const std::int64_t N = std::int64_t(hn::Lanes(df)), N16 = std::int64_t(hn::Lanes(du16));
  const int r = win.radius, side = 2 * r + 1;
  const std::int64_t w = src.width(), h = src.height();
  const std::uint8_t cval = detail::saturate_cast<std::uint8_t>(p.border.value);
  const std::size_t K = win.space.size(), centre = (K - 1) / 2, KF = K - 1 - centre;
  const int nlut = 255 * CH + 1;

  // Tables space[k] * colour[delta] for the forward offsets k = centre + 1 + f.
  std::vector<float> flut(KF * std::size_t(nlut));
  for (std::size_t f = 0; f < KF; ++f)
    for (int d = 0; d < nlut; ++d)
      flut[f * std::size_t(nlut) + std::size_t(d)] =
          win.space[centre + 1 + f] * win.lut[std::size_t(d)];
  const float wcentre = win.space[centre] * win.lut[0];

  // Strip width: the weight ring (r+1 rows of KF arrays of S+2r floats) within ~384 KiB.
  std::int64_t S = std::int64_t(384 * 1024 / (4 * (r + 1) * std::int64_t(KF))) - 2 * r;
  S = S < 64 ? 64 : S / 64 * 64;
  if (S > w) S = w;
  const std::int64_t LW = (S + 2 * r + 63) / 64 * 64 + 64;  // weights per array (+ slack)
  const std::int64_t LP = (S + 4 * r + 63) / 64 * 64 + 64;  // bytes per padded plane
  Scratch<float> wring(std::size_t((r + 1) * std::int64_t(KF) * LW));
  Scratch<std::uint8_t> pring(std::size_t(side * CH * LP));
  std::memset(pring.data(), 0, pring.size());         // lanes past a strip's columns: defined
  Scratch<float> fring(std::size_t(side * CH * LP));  // the same rows as float
  Scratch<std::uint16_t> dbuf{std::size_t(LW)};
  Scratch<std::uint8_t> planar(std::size_t(CH * LW));
  auto prow = [&](std::int64_t yy) { return pring.data() + ((yy % side) + side) % side * CH * LP; };
  auto frow = [&](std::int64_t yy) { return fring.data() + ((yy % side) + side) % side * CH * LP; };
  auto wrow = [&](std::int64_t yy) {
    return wring.data() + ((yy % (r + 1)) + (r + 1)) % (r + 1) * std::int64_t(KF) * LW;
  };
  std::vector<int> kdy(K), kdx(K);
  for (std::size_t k = 0; k < K; ++k) kdy[k] = win.dy[k], kdx[k] = win.dx[k];
  std::vector<const float*> wp(K, nullptr);
  std::vector<const float*> pp(K, nullptr);

  for (std::int64_t x0 = 0; x0 < w; x0 += S) {
    const std::int64_t x1 = x0 + S < w ? x0 + S : w, sw = x1 - x0;
    const std::int64_t lw = sw + 2 * r;         // weights per array in this strip
    const std::int64_t lw4 = (lw + 3) / 4 * 4;  // deltas for the lookups, 4 at a time
    std::int64_t pnext = rows.begin - r;
    for (std::int64_t yc = rows.begin - r; yc < rows.end; ++yc) {
      for (; pnext <= yc + r; ++pnext) {
        std::uint8_t* pr = prow(pnext);
        pad_cols<CH>(src, detail::border_index(pnext, h, p.border.type), x0 - 2 * r, x1 + 2 * r,
                     p.border, cval, LP, pr);
        float* fr = frow(pnext);  // float(v) once per row, for the sums
        for (std::int64_t j = 0; j < CH * LP; j += N)
          hn::Store(hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(d8, pr + j))), df, fr + j);
      }
      // Forward weights of centre row yc, centres x0 - r .. x1 + r (column j = x - x0 + r).
      {
        const std::uint8_t* cr = prow(yc) + r;
        float* wr = wrow(yc);
        for (std::size_t f = 0; f < KF; ++f) {
          const std::size_t k = centre + 1 + f;
          const std::uint8_t* pr = prow(yc + kdy[k]) + r + kdx[k];
          for (std::int64_t j = 0; j < lw4; j += N16) {
            auto dsum = hn::Zero(du16);
            for (int c = 0; c < CH; ++c) {
              const auto a = hn::PromoteTo(du16, hn::LoadU(d8w, cr + c * LP + j));
              const auto b = hn::PromoteTo(du16, hn::LoadU(d8w, pr + c * LP + j));
              dsum = hn::Add(dsum, hn::Sub(hn::Max(a, b), hn::Min(a, b)));
            }
            hn::Store(dsum, du16, dbuf.data() + j);
          }
          const float* t = flut.data() + f * std::size_t(nlut);
          float* o = wr + std::int64_t(f) * LW;
          const std::uint16_t* dd = dbuf.data();
          // Four indices per 64-bit load, two weights per 64-bit store (the loop is
          // bound by memory operations; dbuf holds lw4 rounded up to a vector).
          const std::uint32_t* tb = reinterpret_cast<const std::uint32_t*>(t);
          for (std::int64_t j = 0; j < lw4; j += 4) {
            std::uint64_t q;
            std::memcpy(&q, dd + j, 8);
            const std::uint64_t a = tb[q & 0xffff], b = tb[(q >> 16) & 0xffff],
                                c = tb[(q >> 32) & 0xffff], e = tb[q >> 48];
            const std::uint64_t lo = a | b << 32, hi = c | e << 32;
            std::memcpy(o + j, &lo, 8);
            std::memcpy(o + j + 2, &hi, 8);
          }
        }
      }
      if (yc < rows.begin) continue;
      // Outputs of row y = yc, columns x0 .. x1.
      const std::int64_t y = yc;
      std::uint8_t* out = dst.row<std::uint8_t>(y) + x0 * CH;
      std::uint8_t* res = CH == 1 ? out : planar.data();
      // Per offset, this row's weight column (column x - x0; none for the centre) and
      // padded source column.
      for (std::size_t k = 0; k < K; ++k) {
        if (k > centre) {
          wp[k] = wrow(y) + std::int64_t(k - centre - 1) * LW + r;
        } else if (k < centre) {
          const std::size_t m = K - 1 - k;  // the mirror offset (forward)
          wp[k] = wrow(y + kdy[k]) + std::int64_t(m - centre - 1) * LW + r + kdx[k];
        }
        pp[k] = frow(y + kdy[k]) + 2 * r + kdx[k];
      }
      std::int64_t x = 0;
      for (; x + 2 * N <= sw; x += 2 * N) {
        hn::Vec<decltype(df)> s0[CH], s1[CH];
        for (int c = 0; c < CH; ++c) s0[c] = hn::Zero(df), s1[c] = hn::Zero(df);
        auto ws0 = hn::Zero(df), ws1 = hn::Zero(df);
        for (std::size_t k = 0; k < K; ++k) {
          hn::Vec<decltype(df)> w0, w1;
          if (k == centre) {
            w0 = w1 = hn::Set(df, wcentre);
          } else {
            w0 = hn::LoadU(df, wp[k] + x);
            w1 = hn::LoadU(df, wp[k] + x + N);
          }
          const float* base = pp[k] + x;
          for (int c = 0; c < CH; ++c) {
            const auto v0 = hn::LoadU(df, base + c * LP);
            const auto v1 = hn::LoadU(df, base + c * LP + N);
            s0[c] = hn::Add(s0[c], hn::Mul(v0, w0));
            s1[c] = hn::Add(s1[c], hn::Mul(v1, w1));
          }
          ws0 = hn::Add(ws0, w0);
          ws1 = hn::Add(ws1, w1);
        }
        for (int c = 0; c < CH; ++c) {
          std::uint8_t* o = res + (CH == 1 ? 0 : c * LW) + x;
          hn::StoreU(hn::DemoteTo(d8, hn::NearestInt(hn::Div(s0[c], ws0))), d8, o);
          hn::StoreU(hn::DemoteTo(d8, hn::NearestInt(hn::Div(s1[c], ws1))), d8, o + N);
        }
      }
      if (CH != 1)
        for (std::int64_t i = 0; i < x; ++i)
          for (int c = 0; c < CH; ++c) out[i * CH + c] = planar[std::size_t(c * LW + i)];
      for (; x < sw; ++x) {  // the same float arithmetic, one pixel at a time
        float sum[CH] = {}, wsum = 0;
        for (std::size_t k = 0; k < K; ++k) {
          const float wk = k == centre ? wcentre : wp[k][x];
          const float* base = pp[k] + x;
          for (int c = 0; c < CH; ++c) sum[c] += base[c * LP] * wk;
          wsum += wk;
        }
        for (int c = 0; c < CH; ++c)
          out[x * CH + c] = detail::saturate_cast<std::uint8_t>(double(sum[c] / wsum));
      }
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
  else {
    const int ch = src.channels();
    const Window win = make_window(p, ch);
    // Pairs share their weight up to radius 8 (beyond, the weight ring outgrows L2).
    if (win.radius <= 8)
      ch == 1 ? run_sym<1>(src, dst, p, rows, win) : run_sym<3>(src, dst, p, rows, win);
    else
      ch == 1 ? run_u8<1>(src, dst, p, rows, win) : run_u8<3>(src, dst, p, rows, win);
  }
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
