// SIMD bilateral filter (u8 and f32, 1 or 3 channels) for the cpu backend: the rule of
// src/ref/bilateral.cpp (OpenCV's circular window and tables) on N pixels at a time. Source
// rows are padded in x by the border rule (pad_row), split into one plane per channel, into a
// ring of 2r+1 rows. Per window offset k, in the reference's row-major order: delta = sum of
// |v_c - centre_c|, the colour weight, w = space[k] * colour, sum_c += float(v_c) * w, wsum +=
// w, in float without FMA; result sum_c / wsum (u8: rounded half to even and saturated). The
// last pixels of a row (fewer than a vector) run the same arithmetic one at a time.
//
// u8: the colour weight is gathered from the reference's float table (GatherIndex); up to
// radius 8 each weight is computed once per pair of pixels (run_sym), by scalar lookups in a
// table of space * colour, or for u8x1 on AVX-512 with VBMI by byte permutes of the colour
// table's four byte planes, then the product space * colour (weights_vbmi).
//
// f32: the colour weight is the interpolated table of src/base/bilateral_f32.hpp (the
// reference's table, shared): alpha = delta * scale, a gather of the pairs {T[i], D[i] = T[i +
// 1] - T[i]} and T[i] + f * D[i], 0 where !(alpha < bins) (see run_f32).
// NaN: which NaN an operation on two NaNs returns depends on the operand order the compiler
// picked (x86 returns the first source), so NaN payloads are only reproducible by running the
// reference's own compiled code. A row in which some pixel has a NaN delta (a NaN sample in
// its window, or an infinite centre: inf - inf) is recomputed by ref::bilateral itself. In a
// row without one, every centre is finite and no sample is NaN, so the only NaN the sums can
// make is the default NaN of inf * 0 (an infinite sample has weight 0), inf - inf (sums that
// overflow) or 0 / 0 (a NaN sigma_color: every weight 0), a single bit pattern: the bits do
// not depend on operand order. (Images with many NaN samples run at the reference's speed.)
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
#include "src/base/bilateral_f32.hpp"
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
  std::vector<float> lut;  // u8 only
  double sigma_color = 1;  // after "<= 0 means 1" (f32: the table's scale)
};

Window make_window(const BilateralParams& p, int ch, bool lut) {
  Window w;
  const double sc = p.sigma_color <= 0 ? 1.0 : p.sigma_color;
  const double ss = p.sigma_space <= 0 ? 1.0 : p.sigma_space;
  const double color_coeff = -0.5 / (sc * sc);
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
  if (!lut) return w;
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

#if HWY_TARGET == HWY_AVX3
// u8x1 forward weights by byte permutes (AVX-512 VBMI, checked at run time: Highway's AVX3
// target does not assume it): for each of the nb offsets f, o[f * o_step + j] = space[f] *
// lut[|a[j] - b[f][j]|] for j < n, rounded up to 64 (the caller's rows and weight arrays
// have the slack); the tables stay in registers for all offsets of a row. The 256 floats of lut are
// four byte planes of 256 entries, each in four registers (planes[4p + q]: byte p of lut[64q .. 64q
// + 63]); per 64 deltas (bytes: |a - b| <= 255) each plane is two two-table permutes (vpermi2b:
// entries 0..127 and 128..255) and a blend on bit 7, then two rounds of unpacks interleave the
// planes into four vectors of 16 floats. The unpacks work within 128-bit lanes, so the deltas are
// first permuted (position 16L + 4q + e takes delta 16q + 4L + e) and the floats come out in order.
// The product is the reference's float space * colour.
__attribute__((target(HWY_TARGET_STR ",avx512vbmi"))) void weights_vbmi(
    const std::uint8_t* a, const std::uint8_t* const* b, const float* space, std::size_t nb,
    std::int64_t n, const std::uint8_t* planes, float* o, std::int64_t o_step) {
  alignas(64) std::uint8_t order[64];
  for (int L = 0; L < 4; ++L)
    for (int q = 0; q < 4; ++q)
      for (int e = 0; e < 4; ++e) order[16 * L + 4 * q + e] = std::uint8_t(16 * q + 4 * L + e);
  const __m512i perm = _mm512_load_si512(order);
  __m512i t[16];
  for (int i = 0; i < 16; ++i) t[i] = _mm512_loadu_si512(planes + 64 * i);
  for (std::size_t f = 0; f < nb; ++f, o += o_step) {
    const __m512 s = _mm512_set1_ps(space[f]);
    const std::uint8_t* bf = b[f];
    for (std::int64_t j = 0; j < n; j += 64) {
      const __m512i va = _mm512_loadu_si512(a + j), vb = _mm512_loadu_si512(bf + j);
      __m512i d = _mm512_sub_epi8(_mm512_max_epu8(va, vb), _mm512_min_epu8(va, vb));
      d = _mm512_permutexvar_epi8(perm, d);
      const __mmask64 high = _mm512_movepi8_mask(d);  // delta >= 128
      __m512i pl[4];
      for (int q = 0; q < 4; ++q)
        pl[q] = _mm512_mask_blend_epi8(high, _mm512_permutex2var_epi8(t[4 * q], d, t[4 * q + 1]),
                                       _mm512_permutex2var_epi8(t[4 * q + 2], d, t[4 * q + 3]));
      const __m512i lo01 = _mm512_unpacklo_epi8(pl[0], pl[1]),
                    hi01 = _mm512_unpackhi_epi8(pl[0], pl[1]);
      const __m512i lo23 = _mm512_unpacklo_epi8(pl[2], pl[3]),
                    hi23 = _mm512_unpackhi_epi8(pl[2], pl[3]);
      const __m512i w[4] = {_mm512_unpacklo_epi16(lo01, lo23), _mm512_unpackhi_epi16(lo01, lo23),
                            _mm512_unpacklo_epi16(hi01, hi23), _mm512_unpackhi_epi16(hi01, hi23)};
      for (int q = 0; q < 4; ++q)
        _mm512_storeu_ps(o + j + 16 * q, _mm512_mul_ps(_mm512_castsi512_ps(w[q]), s));
    }
  }
}

bool has_vbmi() {
  static const bool yes = __builtin_cpu_supports("avx512vbmi");
  return yes;
}
#endif

// The same arithmetic with each colour weight looked up once per pair of pixels. The pair
// (p, p + k) has the same delta and the same space weight (the window is symmetric) for the
// output at p with offset k and the output at p + k with offset -k, so w = space[k] *
// colour is the same float for both. Per centre row, the weights of the forward offsets
// (after the centre in row-major order) are computed for every centre the band's outputs
// reach back to (deltas in 16-bit lanes, then a scalar lookup in a table of space[k] *
// colour[delta], the reference's product; u8x1 with VBMI: weights_vbmi), into a ring of r+1
// rows; each output then sums
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
#if HWY_TARGET == HWY_AVX3
  // u8x1 on a CPU with VBMI: the colour table as four byte planes (weights_vbmi).
  const bool vbmi = CH == 1 && has_vbmi();
  std::vector<std::uint8_t> planes(vbmi ? 1024 : 0);
  std::vector<const std::uint8_t*> fb(KF);  // the forward offsets' rows, per centre row
  for (std::size_t i = 0; i < planes.size(); ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &win.lut[i % 256], 4);
    planes[i] = std::uint8_t(bits >> (8 * (i / 256)));
  }
#endif

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
        const std::uint8_t* prows[64];  // the window's rows yc - r .. yc + r (no modulo per offset)
        for (int i = 0; i < side; ++i) prows[i] = prow(yc - r + i);
        const std::uint8_t* cr = prows[r] + r;
        float* wr = wrow(yc);
        bool done = false;  // weights_vbmi did them
#if HWY_TARGET == HWY_AVX3
        if (CH == 1 && vbmi) {
          for (std::size_t f = 0; f < KF; ++f) {
            const std::size_t k = centre + 1 + f;
            fb[f] = prows[kdy[k] + r] + r + kdx[k];
          }
          weights_vbmi(cr, fb.data(), win.space.data() + centre + 1, KF, lw, planes.data(), wr, LW);
          done = true;
        }
#endif
        for (std::size_t f = 0; !done && f < KF; ++f) {
          const std::size_t k = centre + 1 + f;
          const std::uint8_t* pr = prows[kdy[k] + r] + r + kdx[k];
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
      const float* frows[64];  // rows y - r .. y + r
      const float* wrows[64];  // weight rows y - r .. y
      for (int i = 0; i < side; ++i) frows[i] = frow(y - r + i);
      for (int i = 0; i <= r; ++i) wrows[i] = wrow(y - r + i);
      for (std::size_t k = 0; k < K; ++k) {
        if (k > centre) {
          wp[k] = wrows[r] + std::int64_t(k - centre - 1) * LW + r;
        } else if (k < centre) {
          const std::size_t m = K - 1 - k;  // the mirror offset (forward)
          wp[k] = wrows[kdy[k] + r] + std::int64_t(m - centre - 1) * LW + r + kdx[k];
        }
        pp[k] = frows[kdy[k] + r] + 2 * r + kdx[k];
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

// ---- f32 -------------------------------------------------------------------------------
// One output pixel of the f32 rule exactly as src/ref/bilateral.cpp writes it (the row
// tail): rp = the ring's rows of the window, planes `plane` floats apart, padded by r.
// Returns false, leaving the pixel to the caller, when a delta is NaN (file comment).
template <int CH>
bool pixel_f32(const float* const* rp, int r, std::int64_t plane, const int* ky, const int* kx,
               const Window& win, const float* table, int bins, float scale, std::int64_t x,
               float* out) {
  float centre[CH];
  for (int c = 0; c < CH; ++c) centre[c] = rp[r][c * plane + r + x];
  float sum[CH] = {}, wsum = 0;
  for (std::size_t k = 0; k < win.space.size(); ++k) {
    float v[CH];
    for (int c = 0; c < CH; ++c) v[c] = rp[ky[k]][c * plane + kx[k] + x];
    float delta = 0;
    for (int c = 0; c < CH; ++c) delta += std::fabs(v[c] - centre[c]);
    if (std::isnan(delta)) return false;
    const float cw = detail::bilateral_f32::weight(table, bins, scale, delta);
    const float wk = win.space[k] * cw;
    for (int c = 0; c < CH; ++c) sum[c] += float(v[c]) * wk;
    wsum += wk;
  }
  for (int c = 0; c < CH; ++c) {
    const float q = sum[c] / wsum;
    out[x * CH + c] = detail::saturate_cast<float>(double(q));
  }
  return true;
}

// f32, 1 or 3 channels: N outputs per pass over the window, in the reference's order per
// output; rows padded by the border rule into a ring of 2r+1 rows of CH float planes. The
// colour weight (src/base/bilateral_f32.hpp): alpha = delta * scale; lanes with !(alpha < bins)
// (NaN included) are 0, the others look up the pair {T[i], D[i] = T[i + 1] - T[i]} (8-byte
// gathers, i = the truncation of alpha) and take T[i] + f * D[i], f = alpha - i: the
// reference's operations in its order (T[i + 1] - T[i] is the same float whether made per tap
// or in the table).
template <int CH>
void run_f32(const ConstImageView& src, const ImageView& dst, const BilateralParams& p, Rows rows,
             const Window& win) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Half<decltype(di)> dih;
  const hn::Rebind<std::int64_t, decltype(dih)> di64;  // a full vector of 64-bit lanes
  const hn::RebindToUnsigned<decltype(di64)> d64;
  const std::int64_t N = std::int64_t(hn::Lanes(df));
  const int r = win.radius, side = 2 * r + 1;
  const std::int64_t w = src.width(), h = src.height();
  const std::int64_t pw = w + 2 * r;
  const std::int64_t plane = (pw + 15) / 16 * 16;  // floats per channel plane
  const float cval = detail::saturate_cast<float>(p.border.value);
  const std::size_t K = win.space.size();
  const int bins = detail::bilateral_f32::bins(CH);
  const float scale = detail::bilateral_f32::scale(win.sigma_color, CH);
  const float* table = detail::bilateral_f32::table(CH).data();
  const auto* pairs = reinterpret_cast<const std::uint64_t*>(table);  // {T[i], D[i]}, 8-aligned
  const auto vscale = hn::Set(df, scale);
  const auto vbins = hn::Set(df, float(bins));

  Scratch<float> ring(std::size_t(plane * CH * side));
  Scratch<float> raw(CH == 1 ? 0 : std::size_t(pw * CH));
  auto slot = [&](std::int64_t yy) {
    return ring.data() + ((yy % side) + side) % side * plane * CH;
  };
  std::int64_t next = rows.begin - r;
  std::vector<int> ky(K), kx(K);
  for (std::size_t k = 0; k < K; ++k) ky[k] = win.dy[k] + r, kx[k] = win.dx[k] + r;

  const float* rp[64];
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    for (; next <= y + r; ++next) {
      const std::int64_t sy = detail::border_index(next, h, p.border.type);
      float* o = slot(next);
      if (CH == 1) {
        pad_row<float>(src, sy, r, r, p.border, cval, o);
      } else {
        pad_row<float>(src, sy, r, r, p.border, cval, raw.data());
        for (std::int64_t x = 0; x < pw; ++x)
          for (int c = 0; c < CH; ++c) o[c * plane + x] = raw[std::size_t(x * CH + c)];
      }
    }
    for (int i = 0; i < side; ++i) rp[i] = slot(y - r + i);
    float* out = dst.row<float>(y);
    std::int64_t x = 0;
    for (; x + N <= w; x += N) {
      hn::Vec<decltype(df)> cen[CH], sum[CH];
      for (int c = 0; c < CH; ++c) {
        cen[c] = hn::LoadU(df, rp[r] + c * plane + r + x);
        sum[c] = hn::Zero(df);
      }
      auto wsum = hn::Zero(df);
      auto redo = hn::FirstN(df, 0);
      for (std::size_t k = 0; k < K; ++k) {
        const float* base = rp[ky[k]] + kx[k] + x;
        hn::Vec<decltype(df)> v[CH];
        auto delta = hn::Zero(df);
        for (int c = 0; c < CH; ++c) {
          v[c] = hn::LoadU(df, base + c * plane);
          delta = hn::Add(delta, hn::Abs(hn::Sub(v[c], cen[c])));
        }
        redo = hn::Or(redo, hn::IsNaN(delta));
        const auto alpha = hn::Mul(delta, vscale);
        const auto in = hn::Lt(alpha, vbins);
        const auto a = hn::IfThenElseZero(in, alpha);  // a safe index where the weight is 0
        const auto i = hn::ConvertTo(di, a);           // truncation: floor of a >= 0
        const auto f = hn::Sub(a, hn::ConvertTo(df, i));
        // One 8-byte gather a lane ({T[i], D[i]}: half the gathered elements of two 4-byte
        // gathers), split into T (even floats) and D (odd).
        const auto plo = hn::BitCast(
            df, hn::GatherIndex(d64, pairs, hn::PromoteTo(di64, hn::LowerHalf(dih, i))));
        const auto phi = hn::BitCast(
            df, hn::GatherIndex(d64, pairs, hn::PromoteTo(di64, hn::UpperHalf(dih, i))));
        const auto lerp =
            hn::Add(hn::ConcatEven(df, phi, plo), hn::Mul(f, hn::ConcatOdd(df, phi, plo)));
        const auto cw = hn::IfThenElseZero(in, lerp);
        const auto wk = hn::Mul(hn::Set(df, win.space[k]), cw);
        for (int c = 0; c < CH; ++c) sum[c] = hn::Add(sum[c], hn::Mul(v[c], wk));
        wsum = hn::Add(wsum, wk);
      }
      if (CH == 1) {
        hn::StoreU(hn::Div(sum[0], wsum), df, out + x);
      } else {
        hn::StoreInterleaved3(hn::Div(sum[0], wsum), hn::Div(sum[1], wsum), hn::Div(sum[2], wsum),
                              df, out + x * CH);
      }
      if (HWY_UNLIKELY(!hn::AllFalse(df, redo))) break;
    }
    bool nan_row = x + N <= w;  // left the loop at a NaN delta
    for (; !nan_row && x < w; ++x)
      nan_row = !pixel_f32<CH>(rp, r, plane, ky.data(), kx.data(), win, table, bins, scale, x, out);
    // NaN payloads depend on which operand of each float operation the compiled code
    // puts first: the row is the reference's own code's.
    if (HWY_UNLIKELY(nan_row)) ref::bilateral(src, dst, p, Rows{y, y + 1});
  }
}
#endif

void bilateral_rows(const ConstImageView& src, const ImageView& dst, const BilateralParams& p,
                    Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::bilateral(src, dst, p, rows);
#else
  const int ch = src.channels();
  if (src.depth() == Depth::f32) {
    const Window win = make_window(p, ch, false);
    ch == 1 ? run_f32<1>(src, dst, p, rows, win) : run_f32<3>(src, dst, p, rows, win);
  } else {
    const Window win = make_window(p, ch, true);
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
      table, "bilateral", pixflow::detail::Support::of({Depth::u8, Depth::f32}, {1, 3}));
}
#endif
