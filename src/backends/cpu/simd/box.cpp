// SIMD box filter (u8) for the cpu backend: running sums. Per band of rows, column sums over
// the kh window rows are kept in 32-bit lanes and updated by one entering and one leaving
// padded row per output row (cost independent of kh); the horizontal sum of kw column sums is
// a direct sum of shifted vector loads for small kw and a running sum along the row otherwise
// (cost independent of kw). The rule is the reference's (src/ref/box.cpp): the exact integer
// window sum S, then div_round_half_even(S, kw*kh) for normalize, else saturate(S).
// Division: S < 2^24 and n = kw*kh < 2^15, so float holds S exactly and the correctly rounded
// float S/n is within 2^-16 of the true quotient, while a quotient that is not a half-integer
// is at least 1/(2n) > 2^-16 away from one: rounding the float quotient half to even gives
// exactly the reference's result. Other depths and larger windows take the reference.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/box.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/ref/ref.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
// col[i] += row[i] (sign > 0) or -= row[i], for i in [0, n) rounded up to whole vectors.
void accumulate(std::uint32_t* col, const std::uint8_t* row, std::int64_t n, bool add) {
  const hn::ScalableTag<std::uint32_t> d32;
  const hn::Rebind<std::uint8_t, decltype(d32)> d8;
  const std::int64_t step = std::int64_t(hn::Lanes(d32));
  for (std::int64_t i = 0; i < n; i += step) {
    const auto v = hn::PromoteTo(d32, hn::LoadU(d8, row + i));
    const auto c = hn::Load(d32, col + i);
    hn::Store(add ? hn::Add(c, v) : hn::Sub(c, v), d32, col + i);
  }
}

// s[e] = c[e] + c[e + ch] + ... + c[e + (kw - 1) ch] for e in [0, n): one running sum per
// channel, kept in registers (a sum read back from memory would put a store-to-load
// round trip on every element's dependency chain). Unsigned wrap-around cancels exactly.
template <int CH>
void running_sum_ch(const std::uint32_t* c, std::uint32_t* s, std::int64_t n, int kw) {
  std::uint32_t acc[CH];
  for (int k = 0; k < CH; ++k) {
    acc[k] = 0;
    for (int i = 0; i < kw; ++i) acc[k] += c[k + i * CH];
    s[k] = acc[k];
  }
  const std::int64_t span = std::int64_t(kw) * CH;
  for (std::int64_t e = CH; e + CH <= n; e += CH)
    for (int k = 0; k < CH; ++k) {
      acc[k] += c[e + k - CH + span] - c[e + k - CH];
      s[e + k] = acc[k];
    }
}

void running_sum(const std::uint32_t* c, std::uint32_t* s, std::int64_t n, int kw, int ch) {
  switch (ch) {
    case 1:
      return running_sum_ch<1>(c, s, n, kw);
    case 2:
      return running_sum_ch<2>(c, s, n, kw);
    case 3:
      return running_sum_ch<3>(c, s, n, kw);
    case 4:
      return running_sum_ch<4>(c, s, n, kw);
    default:
      for (std::int64_t e = 0; e < n; ++e) {
        std::uint32_t acc = 0;
        for (int i = 0; i < kw; ++i) acc += c[e + i * ch];
        s[e] = acc;
      }
  }
}

void box_u8(const ConstImageView& src, const ImageView& dst, const BoxParams& p, Rows rows) {
  const hn::ScalableTag<std::uint32_t> d32;
  const hn::Rebind<float, decltype(d32)> df;
  const hn::Rebind<std::int32_t, decltype(d32)> di;
  const hn::Rebind<std::uint8_t, decltype(d32)> d8;
  const std::int64_t lanes = std::int64_t(hn::Lanes(d32));
  const int ch = src.channels();
  const std::int64_t w = src.width(), h = src.height();
  const int ax = p.kw / 2, ay = p.kh / 2;
  const std::int64_t row_n = w * ch;               // output samples per row
  const std::int64_t pad_n = (w + p.kw - 1) * ch;  // padded samples per row
  const std::int64_t round_pad = (pad_n + lanes - 1) / lanes * lanes;
  const std::int64_t round_row = (row_n + lanes - 1) / lanes * lanes;
  const std::uint8_t cval = detail::saturate_cast<std::uint8_t>(p.border.value);

  // Scratch: one padded source row, the column sums, the horizontal sums and one output
  // row, each rounded up to whole vectors (plus the loads that start near the end).
  Scratch<std::uint8_t> prow(std::size_t(round_pad + lanes));
  Scratch<std::uint32_t> col(std::size_t(round_pad + lanes));
  Scratch<std::uint32_t> sums(std::size_t(round_row + lanes));
  Scratch<std::uint8_t> out(std::size_t(round_row + lanes));
  std::memset(prow.data(), 0, prow.size());
  std::memset(col.data(), 0, col.size() * sizeof(std::uint32_t));
  std::memset(sums.data(), 0, sums.size() * sizeof(std::uint32_t));

  auto padded = [&](std::int64_t y) {
    pad_row<std::uint8_t>(src, detail::border_index(y, h, p.border.type), ax, p.kw - 1 - ax,
                          p.border, cval, prow.data());
    return prow.data();
  };
  for (int j = 0; j < p.kh; ++j) accumulate(col.data(), padded(rows.begin - ay + j), pad_n, true);

  const float n = float(p.kw * p.kh);
  const bool direct = p.kw <= 7;
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    if (y > rows.begin) {
      accumulate(col.data(), padded(y - ay + p.kh - 1), pad_n, true);
      accumulate(col.data(), padded(y - 1 - ay), pad_n, false);
    }
    // Horizontal: sums[e] = col[e] + col[e + ch] + ... + col[e + (kw - 1) ch].
    const std::uint32_t* c = col.data();
    std::uint32_t* s = sums.data();
    if (direct) {
      for (std::int64_t e = 0; e < row_n; e += lanes) {
        auto acc = hn::LoadU(d32, c + e);
        for (int i = 1; i < p.kw; ++i) acc = hn::Add(acc, hn::LoadU(d32, c + e + i * ch));
        hn::Store(acc, d32, s + e);
      }
    } else {
      running_sum(c, s, row_n, p.kw, ch);
    }
    // Normalise (or saturate) and narrow.
    std::uint8_t* o = out.data();
    const auto vn = hn::Set(df, n);
    const auto v255 = hn::Set(d32, 255u);
    for (std::int64_t e = 0; e < row_n; e += lanes) {
      const auto v = hn::Load(d32, s + e);
      hn::Vec<decltype(di)> q;
      if (p.normalize)
        q = hn::NearestInt(hn::Div(hn::ConvertTo(df, hn::BitCast(di, v)), vn));
      else
        q = hn::BitCast(di, hn::Min(v, v255));
      hn::StoreU(hn::DemoteTo(d8, q), d8, o + e);
    }
    std::memcpy(dst.row<std::uint8_t>(y), o, std::size_t(row_n));
  }
}
#endif

void box_rows(const ConstImageView& src, const ImageView& dst, const BoxParams& p, Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::box(src, dst, p, rows);
#else
  // The float division is exact for n < 2^15 (see the top of the file).
  if (src.depth() != Depth::u8 || std::int64_t(p.kw) * p.kh >= (1 << 15))
    return ref::box(src, dst, p, rows);
  box_u8(src, dst, p, rows);
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(box_rows);

void box(const ConstImageView& src, const ImageView& dst, const BoxParams& p, Rows rows) {
  HWY_DYNAMIC_DISPATCH(box_rows)(src, dst, p, rows);
}
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_box) {
  using pixflow::Depth;
  pixflow::cpu::add_banded<&pixflow::cpu::box>(table, "box",
                                               pixflow::detail::Support::of({Depth::u8}));
}
#endif
