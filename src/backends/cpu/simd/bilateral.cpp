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
// f32: the reference's colour weight is float(std::exp(x)), x = double(delta)^2 * color_coeff
// (glibc's double exp, then rounded to float), per sample. Here x is computed exactly as the
// reference does (float delta in the same channel order, widened; two double products), and
// exp in double lanes (ExpNonPositive: Cody-Waite reduction by ln2 with a 33-bit ln2_hi, so
// k*ln2_hi and x - k*ln2_hi are exact; Taylor polynomial of degree 13 on |r| <= ln2/2, whose
// truncation is < 2^-56 relative; ~30 roundings of 2^-53 in the reduction and Horner; 2^k
// exact): relative error well below 2^-48. Why its float is the reference's float: let e =
// exp(x) (true), g = glibc's double (error < 1 ulp, relative < 2^-52), y = ours. Then e and g
// both lie in [y(1 - 2^-40), y(1 + 2^-40)] (the bounds' own rounding, 2^-53, is inside the
// margin); rounding to float is monotone, so if both bounds round to the same float, so
// does g: that float is float(g), bit for bit. Otherwise (a float rounding boundary within
// 2^-40 of y: about 2^-15 of the samples) the lane takes float(std::exp(x)) itself. The
// argument is about double values and holds where the float is denormal too (its spacing is
// only coarser). Cutoff: for x < -104, e < exp(-104) < 0.973 * 2^-150 and g <= e(1 + 2^-52)
// < 2^-150, which rounds to +0 (half the least denormal ties to even, 0): those lanes are +0
// without an exp (x = -inf included; the test checks the range around the cutoff).
// NaN: which NaN an operation on two NaNs returns depends on the operand order the compiler
// picked (x86 returns the first source), so NaN payloads are only reproducible by running the
// reference's own compiled code. A row in which some pixel has a NaN x (a NaN or inf sample,
// or a zero or infinite color_coeff) is recomputed by ref::bilateral itself. In a row without
// one, every centre is finite and x is never NaN, so wsum is never NaN and the only NaN the
// sums can make is the default NaN of inf * 0 or inf - inf (a single bit pattern): the bits
// do not depend on operand order. (Images with many NaN or inf samples run at the
// reference's speed.)
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/bilateral.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/bilateral.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::cpu {
void add_bilateral_exp_fallbacks(std::uint64_t n) noexcept;  // defined once, below
}  // namespace pixflow::cpu

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
  double color_coeff = 0;
};

Window make_window(const BilateralParams& p, int ch, bool lut) {
  Window w;
  const double sc = p.sigma_color <= 0 ? 1.0 : p.sigma_color;
  const double ss = p.sigma_space <= 0 ? 1.0 : p.sigma_space;
  const double color_coeff = -0.5 / (sc * sc);
  w.color_coeff = color_coeff;
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
// exp(x) in double lanes for x in [-110, 0] (see the file comment): x = k ln2 + r, k =
// round(x / ln2), r = (x - k ln2_hi) - k ln2_lo (ln2_hi has 33 significant bits: k ln2_hi and
// x - k ln2_hi are exact), exp(r) by its Taylor polynomial of degree 13 (Horner, mul then add),
// times 2^k built in the exponent bits (k >= -159: a normal double).
template <class DD>
HWY_INLINE hn::Vec<DD> ExpNonPositive(DD dd, hn::Vec<DD> x) {
  const hn::RebindToUnsigned<DD> du;
  constexpr double kInvLn2 = 1.4426950408889634;    // 1/ln2 (only picks k)
  constexpr double kLn2Hi = 0x1.62e42fefp-1;        // ln2 to 33 bits
  constexpr double kLn2Lo = 0x1.473de6af278edp-34;  // ln2 - kLn2Hi, rounded
  const auto kd = hn::Round(hn::Mul(x, hn::Set(dd, kInvLn2)));
  const auto rh = hn::Sub(x, hn::Mul(kd, hn::Set(dd, kLn2Hi)));
  const auto r = hn::Sub(rh, hn::Mul(kd, hn::Set(dd, kLn2Lo)));
  // 1/n! rounded once (n! is exact in double up to 22!).
  constexpr double kFact[14] = {1.0,       1.0,        2.0,         6.0,         24.0,
                                120.0,     720.0,      5040.0,      40320.0,     362880.0,
                                3628800.0, 39916800.0, 479001600.0, 6227020800.0};
  auto poly = hn::Set(dd, 1.0 / kFact[13]);
  for (int n = 12; n >= 0; --n) poly = hn::Add(hn::Mul(poly, r), hn::Set(dd, 1.0 / kFact[n]));
  // 2^52 + 1023 + k holds 1023 + k in its low mantissa bits; shifted up by 52, the bits of 2^k.
  const auto biased = hn::BitCast(du, hn::Add(kd, hn::Set(dd, 0x1p52 + 1023.0)));
  const auto scale = hn::BitCast(dd, hn::ShiftLeft<52>(biased));
  return hn::Mul(poly, scale);
}

// The reference's colour weight float(std::exp(x)) of every lane, x = the two halves (lower
// lanes first) of a float vector's worth of delta^2 * color_coeff. Lanes whose float the
// vector exp cannot decide get the scalar std::exp (counted in *fallbacks). NaN lanes (x
// NaN) come out 0 and are set in *nan: the caller recomputes those pixels by the scalar
// rule (file comment).
template <class DF, class DD>
HWY_INLINE hn::Vec<DF> ColourWeight(DF df, DD dd, hn::Vec<DD> xlo, hn::Vec<DD> xhi,
                                    hn::Mask<DF>* nan, std::uint64_t* fallbacks) {
  const hn::Half<DF> dh;
  // Lanes below -110 are float 0 (cutoff below); clamped so that k stays a normal exponent.
  const auto lowest = hn::Set(dd, -110.0);
  const auto ylo = ExpNonPositive(dd, hn::Max(xlo, lowest));
  const auto yhi = ExpNonPositive(dd, hn::Max(xhi, lowest));
  const auto below = hn::Set(dd, 1.0 - 0x1p-40), above = hn::Set(dd, 1.0 + 0x1p-40);
  const auto lo =
      hn::Combine(df, hn::DemoteTo(dh, hn::Mul(yhi, below)), hn::DemoteTo(dh, hn::Mul(ylo, below)));
  const auto hi =
      hn::Combine(df, hn::DemoteTo(dh, hn::Mul(yhi, above)), hn::DemoteTo(dh, hn::Mul(ylo, above)));
  const auto xf = hn::Combine(df, hn::DemoteTo(dh, xhi), hn::DemoteTo(dh, xlo));
  // float(x) >= -104 keeps every x >= -104 (and a few just below, which the exp handles);
  // float(x) < -104 means x < -104, whose weight is +0 (file comment). NaN: neither.
  const auto in_range = hn::Ge(xf, hn::Set(df, -104.0f));
  *nan = hn::IsNaN(xf);
  auto cw = hn::IfThenElseZero(in_range, lo);
  const auto undecided = hn::And(in_range, hn::Ne(lo, hi));
  if (HWY_UNLIKELY(!hn::AllFalse(df, undecided))) {
    constexpr std::size_t kMax = HWY_MAX_BYTES / sizeof(float);
    HWY_ALIGN float w[kMax];
    HWY_ALIGN float m[kMax];
    HWY_ALIGN double xs[kMax];
    const std::size_t nd = hn::Lanes(dd);
    hn::Store(cw, df, w);
    hn::Store(hn::VecFromMask(df, undecided), df, m);
    hn::Store(xlo, dd, xs);
    hn::Store(xhi, dd, xs + nd);
    for (std::size_t i = 0; i < hn::Lanes(df); ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, &m[i], 4);
      if (bits != 0) {
        w[i] = float(std::exp(xs[i]));
        ++*fallbacks;
      }
    }
    cw = hn::Load(df, w);
  }
  return cw;
}

// One output pixel of the f32 rule exactly as src/ref/bilateral.cpp writes it (the row
// tail): rp = the ring's rows of the window, planes `plane` floats apart, padded by r.
// Returns false, leaving the pixel to the caller, when an exponent is NaN (file comment).
template <int CH>
bool pixel_f32(const float* const* rp, int r, std::int64_t plane, const int* ky, const int* kx,
               const Window& win, std::int64_t x, float* out) {
  float centre[CH];
  for (int c = 0; c < CH; ++c) centre[c] = rp[r][c * plane + r + x];
  float sum[CH] = {}, wsum = 0;
  for (std::size_t k = 0; k < win.space.size(); ++k) {
    float v[CH];
    for (int c = 0; c < CH; ++c) v[c] = rp[ky[k]][c * plane + kx[k] + x];
    float delta = 0;
    for (int c = 0; c < CH; ++c) delta += std::fabs(v[c] - centre[c]);
    const double e = double(delta) * double(delta) * win.color_coeff;
    if (std::isnan(e)) return false;
    const float cw = float(std::exp(e));
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
// output; rows padded by the border rule into a ring of 2r+1 rows of CH float planes.
template <int CH>
void run_f32(const ConstImageView& src, const ImageView& dst, const BilateralParams& p, Rows rows,
             const Window& win) {
  const hn::ScalableTag<float> df;
  const hn::Half<decltype(df)> dh;
  const hn::Rebind<double, decltype(dh)> dd;
  const std::int64_t N = std::int64_t(hn::Lanes(df));
  const int r = win.radius, side = 2 * r + 1;
  const std::int64_t w = src.width(), h = src.height();
  const std::int64_t pw = w + 2 * r;
  const std::int64_t plane = (pw + 15) / 16 * 16;  // floats per channel plane
  const float cval = detail::saturate_cast<float>(p.border.value);
  const std::size_t K = win.space.size();
  const auto coeff = hn::Set(dd, win.color_coeff);

  Scratch<float> ring(std::size_t(plane * CH * side));
  Scratch<float> raw(CH == 1 ? 0 : std::size_t(pw * CH));
  auto slot = [&](std::int64_t yy) {
    return ring.data() + ((yy % side) + side) % side * plane * CH;
  };
  std::int64_t next = rows.begin - r;
  std::vector<int> ky(K), kx(K);
  for (std::size_t k = 0; k < K; ++k) ky[k] = win.dy[k] + r, kx[k] = win.dx[k] + r;
  std::uint64_t fallbacks = 0;

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
        const auto dlo = hn::PromoteTo(dd, hn::LowerHalf(dh, delta));
        const auto dhi = hn::PromoteTo(dd, hn::UpperHalf(dh, delta));
        const auto xlo = hn::Mul(hn::Mul(dlo, dlo), coeff);
        const auto xhi = hn::Mul(hn::Mul(dhi, dhi), coeff);
        hn::Mask<decltype(df)> nan;
        const auto cw = ColourWeight(df, dd, xlo, xhi, &nan, &fallbacks);
        redo = hn::Or(redo, nan);
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
    bool nan_row = x + N <= w;  // left the loop at a NaN exponent
    for (; !nan_row && x < w; ++x)
      nan_row = !pixel_f32<CH>(rp, r, plane, ky.data(), kx.data(), win, x, out);
    // NaN payloads depend on which operand of each float operation the compiled code
    // puts first: the row is the reference's own code's.
    if (HWY_UNLIKELY(nan_row)) ref::bilateral(src, dst, p, Rows{y, y + 1});
  }
  if (fallbacks != 0) add_bilateral_exp_fallbacks(fallbacks);
}
#endif

// Test hook (bilateral.hpp): ColourWeight over an array. NaN lanes, whose pixels the kernel
// hands to the reference, get the scalar exp here.
std::size_t colour_weights(const double* x, float* out, std::size_t n) {
#if HWY_TARGET == HWY_SCALAR
  for (std::size_t i = 0; i < n; ++i) out[i] = float(std::exp(x[i]));
  return 0;
#else
  const hn::ScalableTag<float> df;
  const hn::Half<decltype(df)> dh;
  const hn::Rebind<double, decltype(dh)> dd;
  const std::size_t N = hn::Lanes(df), nd = hn::Lanes(dd);
  std::uint64_t fallbacks = 0;
  HWY_ALIGN double xs[HWY_MAX_BYTES / sizeof(float)];
  for (std::size_t i = 0; i < n; i += N) {
    const std::size_t m = n - i < N ? n - i : N;
    for (std::size_t j = 0; j < N; ++j) xs[j] = j < m ? x[i + j] : 0.0;
    hn::Mask<decltype(df)> nan;
    const auto cw = ColourWeight(df, dd, hn::Load(dd, xs), hn::Load(dd, xs + nd), &nan, &fallbacks);
    HWY_ALIGN float o[HWY_MAX_BYTES / sizeof(float)];
    hn::Store(cw, df, o);
    for (std::size_t j = 0; j < m; ++j)
      out[i + j] = std::isnan(xs[j]) ? float(std::exp(xs[j])) : o[j];
  }
  return std::size_t(fallbacks);
#endif
}

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
HWY_EXPORT(colour_weights);

namespace {
std::atomic<std::uint64_t> g_exp_fallbacks{0};
}  // namespace

void add_bilateral_exp_fallbacks(std::uint64_t n) noexcept {
  g_exp_fallbacks.fetch_add(n, std::memory_order_relaxed);
}

std::uint64_t bilateral_exp_fallbacks() noexcept {
  return g_exp_fallbacks.load(std::memory_order_relaxed);
}

std::size_t bilateral_colour_weights(const double* x, float* out, std::size_t n) {
  return HWY_DYNAMIC_DISPATCH(colour_weights)(x, out, n);
}

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
