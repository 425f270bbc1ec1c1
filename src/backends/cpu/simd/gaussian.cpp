// SIMD separable Gaussian for the cpu backend: the fixed-point / float rule of
// src/ref/gaussian.cpp, reorganised. Each band keeps a ring of kh horizontally filtered
// rows (one per source row of the window, each computed once from a pad_row'ed source
// row), and every destination row is the vertical pass over kh ring rows, vectors along x.
//   u8:  h = sum(x * tx) < 2^16: u16 lanes (exact mod 2^16; symmetric taps paired), stored
//        as h - 2^15 in int16; v = sum(h * ty) by pairwise i16 multiply-adds into int32
//        (madd), + 2^23 (the 2^15 offset times the taps' sum 2^8) + 2^15, >> 16.
//   u16: h < 2^32: u32 lanes (exact mod 2^32); v < 2^48: u64 even/odd products; (v + 2^31) >> 32.
//   f32: float sums in tap order from 0, no FMA (as the reference).
// Integer sums are exact, so their order is free; float sums keep the reference's order.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/gaussian.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/backends/cpu/simd/store_out-inl.hpp"
#include "src/base/gaussian_taps.hpp"
#include "src/ref/ref.hpp"

HWY_BEFORE_NAMESPACE();
#include "src/backends/cpu/simd/x86_madd-inl.hpp"
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

std::int64_t round_up(std::int64_t v, std::int64_t m) {
  return (v + m - 1) / m * m;
}

// Ring rows `pitch` elements apart: a whole number of 64-byte lines, odd, so that the
// same x of successive rows falls in different L1 sets (rows 4 KiB apart would all share
// one set and evict each other in the vertical pass).
template <class H>
std::int64_t ring_pitch(std::int64_t lp) {
  std::int64_t lines = (lp * std::int64_t(sizeof(H)) + 63) / 64;
  if (lines % 2 == 0) ++lines;
  return lines * 64 / std::int64_t(sizeof(H));
}

// The band driver: ring rows of `lp` H per source row (lp = w * ch rounded up to the
// kernel's step), hpass(padded source row, ring row). The vertical pass makes R rows at a
// time: vpass(kh + R - 1 window rows, destination rows, count <= R); the ring holds
// kh + R - 1 rows.
template <int R, class T, class H, class HPass, class VPass>
void ring_band(const ConstImageView& src, const ImageView& dst, const GaussianParams& p, Rows rows,
               std::int64_t step, HPass hpass, VPass vpass) {
  const int ch = src.channels();
  const std::int64_t w = src.width(), h = src.height(), len = w * ch;
  const int rx = p.kw / 2, ry = p.kh / 2, nr = p.kh + R - 1;
  const std::int64_t lp = round_up(len, step);
  const T cval = detail::saturate_cast<T>(p.border.value);
  // The horizontal pass reads up to `step` samples past the row: zeroed slack.
  const std::size_t prn = std::size_t(len + 2 * std::int64_t(rx) * ch + step);
  Scratch<T> pr(prn);
  std::memset(pr.data(), 0, prn * sizeof(T));
  const std::int64_t pitch = ring_pitch<H>(lp);
  Scratch<H> ring(std::size_t(nr) * std::size_t(pitch));
  std::vector<const H*> win(std::size_t(nr), nullptr);
  auto slot = [&](std::int64_t v) { return ring.data() + ((v % nr + nr) % nr) * pitch; };
  std::int64_t next = rows.begin - ry;  // next virtual source row to filter
  T* out[R];
  for (std::int64_t y = rows.begin; y < rows.end; y += R) {
    const int count = int(std::min<std::int64_t>(R, rows.end - y));
    for (; next <= y + count - 1 + ry; ++next) {
      pad_row(src, detail::border_index(next, h, p.border.type), rx, rx, p.border, cval, pr.data());
      hpass(pr.data(), slot(next));
    }
    // Window rows past the last needed one (count < R) are never read with a nonzero tap:
    // point them at a valid row.
    for (int j = 0; j < nr; ++j)
      win[std::size_t(j)] = slot(std::min<std::int64_t>(y - ry + j, next - 1));
    for (int m = 0; m < R; ++m) out[m] = dst.row<T>(y + std::min(m, count - 1));
    vpass(win.data(), out, count);
  }
}

// ---- u8 -------------------------------------------------------------------------------
// h for 2 vectors per step; every pointer a local (no spills into the tap loop).
HWY_NOINLINE void hpass_u8(const std::uint8_t* HWY_RESTRICT pr, std::int16_t* HWY_RESTRICT out,
                           std::int64_t len, int ch, int kw,
                           const std::uint16_t* HWY_RESTRICT t16) {
  const hn::ScalableTag<std::uint16_t> du16;
  const hn::ScalableTag<std::int16_t> di16;
  const hn::Rebind<std::uint8_t, decltype(du16)> du8;
  const std::int64_t n = std::int64_t(hn::Lanes(du16));
  const int r = kw / 2;
  const std::int64_t span = std::int64_t(kw - 1) * ch;
  const auto flip = hn::Set(du16, 0x8000);
  for (std::int64_t x = 0; x < len; x += 2 * n) {
    const std::uint8_t* s = pr + x;
    const auto tc = hn::Set(du16, t16[r]);
    auto acc0 = hn::Mul(hn::PromoteTo(du16, hn::LoadU(du8, s + r * ch)), tc);
    auto acc1 = hn::Mul(hn::PromoteTo(du16, hn::LoadU(du8, s + r * ch + n)), tc);
    for (int i = 0; i < r; ++i) {
      const std::uint8_t* p = s + std::int64_t(i) * ch;
      const std::uint8_t* q = s + span - std::int64_t(i) * ch;
      const auto t = hn::Set(du16, t16[i]);
      const auto a0 =
          hn::Add(hn::PromoteTo(du16, hn::LoadU(du8, p)), hn::PromoteTo(du16, hn::LoadU(du8, q)));
      const auto a1 = hn::Add(hn::PromoteTo(du16, hn::LoadU(du8, p + n)),
                              hn::PromoteTo(du16, hn::LoadU(du8, q + n)));
      acc0 = hn::Add(acc0, hn::Mul(a0, t));
      acc1 = hn::Add(acc1, hn::Mul(a1, t));
    }
    hn::Store(hn::BitCast(di16, hn::Xor(acc0, flip)), di16, out + x);
    hn::Store(hn::BitCast(di16, hn::Xor(acc1, flip)), di16, out + x + n);
  }
}

// kR destination rows at a time: each pair of ring rows (h - 2^15) is loaded and
// interleaved once and feeds every output row with its tap pair (zero outside the window).
// kR = 2 for short windows (fewer zero taps), 4 for long ones (fewer loads per output).
// kP > 0: the number of row pairs at compile time (short windows, fully unrolled).
template <int kR, int kP>
HWY_NOINLINE void vpass_u8(const std::int16_t* const* HWY_RESTRICT win,
                           std::uint8_t* const* HWY_RESTRICT out, int count, std::int64_t len,
                           int pairs, const std::int32_t* HWY_RESTRICT tpm, bool stream) {
  const hn::ScalableTag<std::int16_t> di16;
  const hn::Repartition<std::int32_t, decltype(di16)> di32;
  const hn::Rebind<std::uint8_t, decltype(di16)> du8;
  using V32 = hn::Vec<decltype(di32)>;
  const std::int64_t n = std::int64_t(hn::Lanes(di16));
  const auto bias = hn::Set(di32, (1 << 23) + (1 << 15));
  for (std::int64_t x = 0; x < len; x += n) {
#if PIXFLOW_X86_MADD
    // x86 keeps every product in sum0 (madd): one unused sum1 for all, so that the
    // accumulators stay in registers.
    V32 lo[kR], hi[kR], s0[1], s1[1];
    constexpr int kS = 0;
#else
    V32 lo[kR], hi[kR], s0[kR], s1[kR];
    constexpr int kS = 1;
#endif
    for (int m = 0; m < kR; ++m) lo[m] = hi[m] = s0[m * kS] = s1[m * kS] = hn::Zero(di32);
    const int np = kP > 0 ? kP : pairs;
    for (int k = 0; k < np; ++k) {
      const auto a = hn::Load(di16, win[2 * k] + x), b = hn::Load(di16, win[2 * k + 1] + x);
#if PIXFLOW_X86_MADD
      // Interleave within 128-bit blocks; ReorderDemote2To (packs) undoes it below.
      const auto il = hn::InterleaveLower(di16, a, b), ih = hn::InterleaveUpper(di16, a, b);
#else
      // Even pixels: (a, b) pairs of even lanes; odd pixels: of odd lanes.
      const auto il = hn::OddEven(hn::BitCast(di16, hn::ShiftLeft<16>(hn::BitCast(di32, b))), a);
      const auto ih = hn::OddEven(b, hn::BitCast(di16, hn::ShiftRight<16>(hn::BitCast(di32, a))));
#endif
      const std::int32_t* t = tpm + k * kR;
      for (int m = 0; m < kR; ++m) {
        const auto tv = hn::BitCast(di16, hn::Set(di32, t[m]));
        lo[m] = hn::ReorderWidenMulAccumulate(di32, il, tv, lo[m], s0[m * kS]);
        hi[m] = hn::ReorderWidenMulAccumulate(di32, ih, tv, hi[m], s1[m * kS]);
      }
    }
    for (int m = 0; m < count; ++m) {
      const auto l =
          hn::ShiftRight<16>(hn::Add(hn::RearrangeToOddPlusEven(lo[m], s0[m * kS]), bias));
      const auto h =
          hn::ShiftRight<16>(hn::Add(hn::RearrangeToOddPlusEven(hi[m], s1[m * kS]), bias));
#if PIXFLOW_X86_MADD
      const auto r16 = hn::ReorderDemote2To(di16, l, h);
#else
      const auto r16 = hn::OddEven(hn::BitCast(di16, hn::ShiftLeft<16>(h)), hn::BitCast(di16, l));
#endif
      StoreOutN(hn::DemoteTo(du8, r16), du8, out[m] + x, len - x, stream);
    }
  }
}

template <int kR>
void gaussian_u8_r(const ConstImageView& src, const ImageView& dst, const GaussianParams& p,
                   Rows rows, const std::int32_t* tx, const std::int32_t* ty) {
  const bool stream = stream_output(dst);
  const hn::ScalableTag<std::uint16_t> du16;
  const std::int64_t n = std::int64_t(hn::Lanes(du16));
  const int ch = src.channels(), kw = p.kw, kh = p.kh;
  const std::int64_t len = src.width() * ch;
  std::vector<std::uint16_t> t16(static_cast<std::size_t>(kw));
  for (int i = 0; i < kw; ++i) t16[std::size_t(i)] = std::uint16_t(tx[i]);
  // Ring-row pairs (2k, 2k + 1) of the kh + kR - 1 window rows; for output row m their
  // taps (ty[2k - m], ty[2k + 1 - m]) (0 outside [0, kh)) as one int32, low half first.
  const int nr = kh + kR - 1, pairs = (nr + 1) / 2;
  auto tap = [&](int i) { return i >= 0 && i < kh ? std::uint32_t(ty[i]) : 0u; };
  std::vector<std::int32_t> tpm(static_cast<std::size_t>(pairs * kR));
  for (int k = 0; k < pairs; ++k)
    for (int m = 0; m < kR; ++m)
      tpm[std::size_t(k * kR + m)] = std::int32_t((tap(2 * k + 1 - m) << 16) | tap(2 * k - m));
  auto hpass = [&](const std::uint8_t* pr, std::int16_t* out) {
    hpass_u8(pr, out, len, ch, kw, t16.data());
  };
  auto vpass = [&](const std::int16_t* const* win, std::uint8_t* const* out, int count) {
    // An odd window: the last pair's second row (tap 0 for every m) is the last row.
    const std::int16_t* w2[2 * 256 + 2 * kR];
    for (int j = 0; j < nr; ++j) w2[j] = win[j];
    w2[nr] = win[nr - 1];
    switch (kR == 2 ? pairs : 0) {
      case 2:
        return vpass_u8<kR, 2>(w2, out, count, len, pairs, tpm.data(), stream);
      case 3:
        return vpass_u8<kR, 3>(w2, out, count, len, pairs, tpm.data(), stream);
      case 4:
        return vpass_u8<kR, 4>(w2, out, count, len, pairs, tpm.data(), stream);
      default:
        return vpass_u8<kR, 0>(w2, out, count, len, pairs, tpm.data(), stream);
    }
  };
  ring_band<kR, std::uint8_t, std::int16_t>(src, dst, p, rows, 2 * n, hpass, vpass);
}

void gaussian_u8(const ConstImageView& src, const ImageView& dst, const GaussianParams& p,
                 Rows rows, const std::int32_t* tx, const std::int32_t* ty) {
  if (p.kh <= 7)
    gaussian_u8_r<2>(src, dst, p, rows, tx, ty);
  else
    gaussian_u8_r<4>(src, dst, p, rows, tx, ty);
}

// ---- u16 ------------------------------------------------------------------------------
void gaussian_u16(const ConstImageView& src, const ImageView& dst, const GaussianParams& p,
                  Rows rows, const std::int32_t* tx, const std::int32_t* ty) {
  const bool stream = stream_output(dst);
  const hn::ScalableTag<std::uint32_t> du32;
  const hn::RebindToSigned<decltype(du32)> di32;
  const hn::Repartition<std::uint64_t, decltype(du32)> du64;
  const hn::Rebind<std::uint16_t, decltype(du32)> du16;
  const std::int64_t n = std::int64_t(hn::Lanes(du32));
  const int ch = src.channels(), kw = p.kw, kh = p.kh, r = kw / 2;
  const std::int64_t len = src.width() * ch;
  auto hpass = [&](const std::uint16_t* pr, std::uint32_t* out) {
    for (std::int64_t x = 0; x < len; x += n) {
      const std::uint16_t* s = pr + x;
      auto acc = hn::Mul(hn::PromoteTo(du32, hn::LoadU(du16, s + r * ch)),
                         hn::Set(du32, std::uint32_t(tx[r])));
      for (int i = 0; i < r; ++i) {
        const auto a = hn::PromoteTo(du32, hn::LoadU(du16, s + i * ch));
        const auto b = hn::PromoteTo(du32, hn::LoadU(du16, s + (kw - 1 - i) * ch));
        acc = hn::Add(acc, hn::Mul(hn::Add(a, b), hn::Set(du32, std::uint32_t(tx[i]))));
      }
      hn::Store(acc, du32, out + x);
    }
  };
  auto vpass = [&](const std::uint32_t* const* win, std::uint16_t* const* outs, int) {
    std::uint16_t* out = outs[0];
    const auto half = hn::Set(du64, std::uint64_t(1) << 31);
    for (std::int64_t x = 0; x < len; x += n) {
      auto ev = hn::Zero(du64), od = hn::Zero(du64);
      for (int j = 0; j < kh; ++j) {
        const auto v = hn::Load(du32, win[j] + x);
        const auto t = hn::Set(du32, std::uint32_t(ty[j]));
        ev = hn::Add(ev, hn::MulEven(v, t));
        od = hn::Add(od,
                     hn::MulEven(hn::BitCast(du32, hn::ShiftRight<32>(hn::BitCast(du64, v))), t));
      }
      ev = hn::ShiftRight<32>(hn::Add(ev, half));  // result in the low half
      od = hn::Add(od, half);                      // result in the high half
      const auto res = hn::OddEven(hn::BitCast(du32, od), hn::BitCast(du32, ev));
      StoreOutN(hn::DemoteTo(du16, hn::BitCast(di32, res)), du16, out + x, len - x, stream);
    }
  };
  ring_band<1, std::uint16_t, std::uint32_t>(src, dst, p, rows, n, hpass, vpass);
}

// ---- f32 ------------------------------------------------------------------------------
// Four vectors per step (independent add chains hide the add latency).
void gaussian_f32(const ConstImageView& src, const ImageView& dst, const GaussianParams& p,
                  Rows rows, const float* tx, const float* ty) {
  const bool stream = stream_output(dst);
  const hn::ScalableTag<float> df;
  const std::int64_t n = std::int64_t(hn::Lanes(df));
  const int ch = src.channels(), kw = p.kw, kh = p.kh;
  const std::int64_t len = src.width() * ch;
  auto hpass = [&](const float* pr, float* out) {
    for (std::int64_t x = 0; x < len; x += 4 * n) {
      const float* s = pr + x;
      auto a0 = hn::Zero(df), a1 = hn::Zero(df), a2 = hn::Zero(df), a3 = hn::Zero(df);
      for (int i = 0; i < kw; ++i) {
        const float* q = s + i * ch;
        const auto t = hn::Set(df, tx[i]);
        a0 = hn::Add(a0, hn::Mul(hn::LoadU(df, q), t));
        a1 = hn::Add(a1, hn::Mul(hn::LoadU(df, q + n), t));
        a2 = hn::Add(a2, hn::Mul(hn::LoadU(df, q + 2 * n), t));
        a3 = hn::Add(a3, hn::Mul(hn::LoadU(df, q + 3 * n), t));
      }
      hn::Store(a0, df, out + x);
      hn::Store(a1, df, out + x + n);
      hn::Store(a2, df, out + x + 2 * n);
      hn::Store(a3, df, out + x + 3 * n);
    }
  };
  auto vpass = [&](const float* const* win, float* const* outs, int) {
    float* out = outs[0];
    for (std::int64_t x = 0; x < len; x += 4 * n) {
      auto a0 = hn::Zero(df), a1 = hn::Zero(df), a2 = hn::Zero(df), a3 = hn::Zero(df);
      for (int j = 0; j < kh; ++j) {
        const float* q = win[j] + x;
        const auto t = hn::Set(df, ty[j]);
        a0 = hn::Add(a0, hn::Mul(hn::Load(df, q), t));
        a1 = hn::Add(a1, hn::Mul(hn::Load(df, q + n), t));
        a2 = hn::Add(a2, hn::Mul(hn::Load(df, q + 2 * n), t));
        a3 = hn::Add(a3, hn::Mul(hn::Load(df, q + 3 * n), t));
      }
      StoreOutN(a0, df, out + x, len - x, stream);
      if (x + n < len) StoreOutN(a1, df, out + x + n, len - x - n, stream);
      if (x + 2 * n < len) StoreOutN(a2, df, out + x + 2 * n, len - x - 2 * n, stream);
      if (x + 3 * n < len) StoreOutN(a3, df, out + x + 3 * n, len - x - 3 * n, stream);
    }
  };
  ring_band<1, float, float>(src, dst, p, rows, 4 * n, hpass, vpass);
}

#endif

void gaussian_rows(const ConstImageView& src, const ImageView& dst, const GaussianParams& p,
                   Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::gaussian(src, dst, p, rows);
#else
  switch (src.depth()) {
    case Depth::u8: {
      std::vector<std::int32_t> tx(std::size_t(p.kw)), ty(std::size_t(p.kh));
      detail::gaussian_taps_fixed(p.kw, p.sigma, detail::kGaussianBitsU8, tx.data());
      detail::gaussian_taps_fixed(p.kh, p.sigma_y, detail::kGaussianBitsU8, ty.data());
      return gaussian_u8(src, dst, p, rows, tx.data(), ty.data());
    }
    case Depth::u16: {
      std::vector<std::int32_t> tx(std::size_t(p.kw)), ty(std::size_t(p.kh));
      detail::gaussian_taps_fixed(p.kw, p.sigma, detail::kGaussianBitsU16, tx.data());
      detail::gaussian_taps_fixed(p.kh, p.sigma_y, detail::kGaussianBitsU16, ty.data());
      return gaussian_u16(src, dst, p, rows, tx.data(), ty.data());
    }
    case Depth::f32: {
      std::vector<float> tx(std::size_t(p.kw)), ty(std::size_t(p.kh));
      detail::gaussian_taps_float(p.kw, p.sigma, tx.data());
      detail::gaussian_taps_float(p.kh, p.sigma_y, ty.data());
      return gaussian_f32(src, dst, p, rows, tx.data(), ty.data());
    }
    default:
      return ref::gaussian(src, dst, p, rows);
  }
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(gaussian_rows);

void gaussian(const ConstImageView& src, const ImageView& dst, const GaussianParams& p, Rows rows) {
  HWY_DYNAMIC_DISPATCH(gaussian_rows)(src, dst, p, rows);
}
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_gaussian) {
  using pixflow::Depth;
  pixflow::cpu::add_banded<&pixflow::cpu::gaussian>(
      table, "gaussian",
      pixflow::detail::Support::of({Depth::u8, Depth::u16, Depth::f32}, {1, 2, 3, 4}));
}
#endif
