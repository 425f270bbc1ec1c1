// SIMD box filter for the cpu backend: the rule of src/ref/box.cpp (window columns
// x - kw/2 .., rows y - kh/2 .., border rule outside; constant: the value saturated to the
// depth), vectors along x over interleaved samples (horizontal neighbour: `ch` samples).
//
// Integers (u8, u16): the exact window sum S. S <= 255*255 * 65535 < 2^32 for every window
// the schema takes (kw, kh <= 255), so sums and differences taken modulo 2^32 (or 2^16 where
// the true values fit 16 bits) are exact wherever the true value is a window or column sum.
// Lanes: column sums u16 for u8 (<= 255 * 255), u32 for u16; window sums u16 for u8 when
// kw*kh <= 257 (255 * n < 2^16) or, normalised, modulo 2^16 with an estimate (below), else
// u32.
// - Vertical: running column sums, per row one add of the entering row and one subtract of
//   the leaving row (the band's first row sums its kh rows).
// - Horizontal, on the padded column-sum row: binary decomposition of kw. W_1 = the row,
//   W_2m(j) = W_m(j) + W_m(j + m) in place; kw = sum of its set bits b_0 < b_1 < ..., so
//   S(j) = W_b0(j) + W_b1(j + b0) + W_b2(j + b0 + b1) + ...: floor(log2 kw) doubling passes
//   and popcount(kw) accumulations, whatever kw. Windows up to kDirectBoxCols wide whose sums
//   need no widening add their kw column sums directly instead (no pass stores).
// - u8 windows of more than 257 samples, normalised, whose 16-bit sums of top columns
//   (box_wrap_plan, box_div.hpp: top <= 16, at most 5 of them) reach across the window: one
//   pass W_top(j) = the top column sums from j (top loads, one store), then
//   S(j) = sum over i < q of W_top(j + i top) plus (or minus) the few column sums at the
//   window's end, in 16-bit lanes modulo 2^16 (below). 31x31: W_8, 4 terms minus 1 column.
// - AVX-512 (wrap_row_avx3): that W_top pass and its terms, and the direct windows up to
//   kDirectBoxCols (W_8/4/2 plus the rest), in registers: two-register lane shifts of
//   aligned loads instead of shifted loads and a W row.
// - normalize: round-half-even(S / n), n = kw*kh, bit-exact (struct Finalize):
//   * u8, u16 lanes (n <= 16384): round-half-even(S/n) = floor(S'/n), S' = S + floor(n/2),
//     one less at the ties of even n (S' a multiple of n, quotient odd). From lo = S' mod
//     2^16 and an estimate e of S'/2^sh (e = S', sh = 0, for exact sums S < 2^16; else
//     the terms shifted right by sh, summed): q0 = (e * floor(2^(16+sh)/n)) >> 16 (MulHigh)
//     is floor(S'/n) or floor(S'/n) - 1 (box_wrap_shift in box_div.hpp: the argument and
//     the choice of sh; a test checks it for every window the kernel takes), so
//     r = lo - q0*n modulo 2^16 is the true r in [0, 2n): q = q0 + (r >= n). n = 1: S.
//   * u8, u32 lanes (S < 2^24, n <= 65025 < 2^16): S and n are exact floats and the
//     correctly rounded S/n (<= 255) is within 2^-17 of S/n, less than 1/(2n), the least
//     distance of a non-tie S/n from a half-integer; a tie k + 1/2 is exact. So rounding the
//     float quotient to nearest-even (NearestInt) is round-half-even(S/n).
//   * u16 (S < 2^32): q0 = trunc(float(S) * float(1/n)), float(S) = float(S >> 16) * 2^16 +
//     float(S & 0xffff) (one rounding); with float(1/n) and the product the relative error
//     is < 3 * 2^-24 and S/n <= 65535, so q0 is floor(S/n) - 1, floor(S/n) or floor(S/n) + 1;
//     r = S - q0*n modulo 2^32 is exact as an i32 (the true r is in [-n, 2n)); one
//     correction brings r into [0, n), then q += (2r > n || (2r == n && q odd)).
//   !normalize: min(S, max of the depth) (the reference's saturate_cast of a sum >= 0).
// f32: the reference's double sums in its order (column sums over the kh rows in row order
// from 0.0, then the kw column sums in column order from 0.0, / double(n) by a division),
// vectorised over x in double lanes: O(kw + kh) adds per sample. A running sum would change
// the order of the double additions and is not bit-exact in general.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/box.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/box_div.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/backends/cpu/simd/store_out-inl.hpp"
#include "src/base/numeric.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
namespace {

// Border maps in x for the pads of a padded row: ax pixels left, kw - 1 - ax right
// (-1: the constant value).
struct PadMap {
  std::vector<std::int64_t> left, right;
  PadMap(std::int64_t w, int kw, int ax, BorderType bt)
      : left(std::size_t(ax)), right(std::size_t(kw - 1 - ax)) {
    for (int i = 0; i < ax; ++i) left[std::size_t(i)] = detail::border_index(i - ax, w, bt);
    for (std::size_t i = 0; i < right.size(); ++i)
      right[i] = detail::border_index(w + std::int64_t(i), w, bt);
  }
  // pad = [left pads | row (already at pad + ax*ch) | right pads].
  template <class A>
  void fill(A* pad, std::int64_t w, int ch, A cval) const {
    const A* row = pad + left.size() * std::size_t(ch);
    for (std::size_t i = 0; i < left.size(); ++i)
      for (int c = 0; c < ch; ++c)
        pad[std::int64_t(i) * ch + c] = left[i] < 0 ? cval : row[left[i] * ch + c];
    A* r = const_cast<A*>(row) + w * ch;
    for (std::size_t i = 0; i < right.size(); ++i)
      for (int c = 0; c < ch; ++c)
        r[std::int64_t(i) * ch + c] = right[i] < 0 ? cval : row[right[i] * ch + c];
  }
};

// ---- integers ---------------------------------------------------------------------------

// round-half-even(S / n) (or min(S, max of T) when !normalize), S exact in H lanes; the
// argument is in the comment at the top of the file.
template <class T, class H>
struct Finalize;

template <>
struct Finalize<std::uint8_t, std::uint16_t> {  // S <= 255 n, n <= 16384 (see below)
  using DH = hn::ScalableTag<std::uint16_t>;
  DH dh;
  hn::RebindToSigned<DH> di;
  hn::Rebind<std::uint8_t, DH> dt;
  bool divide, even;
  int sh;
  hn::Vec<DH> m16, vn, vmax, vhs, one;
  hn::Vec<hn::RebindToSigned<DH>> vn1_i, zero_i;  // n - 1 and 0, less floor(n/2)
  // sh: the estimate's shift (box_wrap_shift, box_div.hpp); m16 = floor(2^(16 + sh) / n).
  Finalize(std::uint32_t n, bool normalize, int shift)
      : divide(normalize && n > 1),
        even(n % 2 == 0),
        sh(shift),
        m16(hn::Set(dh, std::uint16_t(n > 1 ? (65536u << shift) / n : 0))),
        vn(hn::Set(dh, std::uint16_t(n))),
        vmax(hn::Set(dh, std::uint16_t(255))),
        vhs(hn::Set(dh, std::uint16_t((n / 2) >> shift))),
        one(hn::Set(dh, std::uint16_t(1))),
        vn1_i(hn::Set(di, std::int16_t(n - 1 - n / 2))),
        zero_i(hn::Set(di, std::int16_t(-std::int32_t(n / 2)))) {}
  // Exact sums S < 2^16.
  HWY_INLINE hn::Vec<decltype(dt)> operator()(hn::Vec<DH> s) const {
    return hn::DemoteTo(dt, hn::BitCast(di, q16(s)));
  }
  HWY_INLINE hn::Vec<decltype(dt)> operator()(hn::Vec<DH> lo, hn::Vec<DH> e) const {
    return hn::DemoteTo(dt, hn::BitCast(di, q16(lo, e)));
  }
  // The same results in 16-bit lanes (<= 255).
  HWY_INLINE hn::Vec<DH> q16(hn::Vec<DH> s) const {
    if (!divide) return hn::Min(s, vmax);
    return q16(s, sh > 0 ? hn::ShiftRightSame(s, sh) : s);
  }
  // Normalised, from lo = S mod 2^16 and an estimate S/2^sh - terms < e <= S/2^sh:
  // round-half-even(S/n) = floor(S'/n), S' = S + floor(n/2), except at the ties of even n
  // (S' a multiple of n and the quotient odd: one less). e' = e + (floor(n/2) >> sh)
  // estimates S'/2^sh within terms + 1, so q0 = floor(e' * m16 / 2^16) is floor(S'/n) or
  // floor(S'/n) - 1 (box_wrap_shift), and r = S' - q0*n in [0, 2n) is lo + floor(n/2) -
  // q0*n modulo 2^16.
  HWY_INLINE hn::Vec<DH> q16(hn::Vec<DH> lo, hn::Vec<DH> e) const {
    auto q = hn::MulHigh(hn::Add(e, vhs), m16);
    // r - floor(n/2) = lo - q0*n, in [-floor(n/2), 2n - floor(n/2)): an exact i16; compared
    // with n - 1 - floor(n/2) (and 0 with -floor(n/2)) instead of adding floor(n/2).
    auto r = hn::BitCast(di, hn::Sub(lo, hn::Mul(q, vn)));
    const auto big = hn::RebindMask(dh, hn::Gt(r, vn1_i));
    q = hn::IfThenElse(big, hn::Add(q, one), q);
    if (even) {
      r = hn::IfThenElse(hn::RebindMask(di, big), hn::Sub(r, hn::BitCast(di, vn)), r);
      const auto tie = hn::And(hn::RebindMask(dh, hn::Eq(r, zero_i)), hn::Eq(hn::And(q, one), one));
      q = hn::IfThenElse(tie, hn::Sub(q, one), q);
    }
    return q;
  }
};

template <class T>
struct Finalize<T, std::uint32_t> {  // S < 2^32, n <= 65025
  using DH = hn::ScalableTag<std::uint32_t>;
  DH dh;
  hn::RebindToSigned<DH> di;
  hn::Rebind<float, DH> df;
  hn::Rebind<T, DH> dt;
  bool divide;
  hn::Vec<DH> vn, vmax, lo16;
  hn::Vec<hn::RebindToSigned<DH>> vn_i, vn1_i, one_i, zero_i;
  hn::Vec<hn::Rebind<float, DH>> rcp, k65536, vnf;
  Finalize(std::uint32_t n, bool normalize, int /*sh*/ = 0)
      : divide(normalize),
        vn(hn::Set(dh, n)),
        vmax(hn::Set(dh, std::uint32_t(detail::Limits<T>::hi))),
        lo16(hn::Set(dh, 0xffffu)),
        vn_i(hn::Set(di, std::int32_t(n))),
        vn1_i(hn::Set(di, std::int32_t(n) - 1)),
        one_i(hn::Set(di, 1)),
        zero_i(hn::Zero(di)),
        rcp(hn::Set(df, float(1.0 / double(n)))),
        k65536(hn::Set(df, 65536.0f)),
        vnf(hn::Set(df, float(n))) {}
  HWY_INLINE hn::Vec<decltype(dt)> operator()(hn::Vec<DH> s) const {
    if (!divide) return hn::DemoteTo(dt, hn::BitCast(di, hn::Min(s, vmax)));
    if constexpr (sizeof(T) == 1) {
      // S < 2^24 and n < 2^16 are exact floats; S/n <= 255 is correctly rounded to within
      // 2^-17 < 1/(2n), the least distance of a non-tie S/n from a half-integer, and a tie
      // (k + 1/2, k <= 255) is exact: rounding it to nearest-even is round-half-even(S/n).
      return hn::DemoteTo(dt, hn::NearestInt(hn::Div(hn::ConvertTo(df, hn::BitCast(di, s)), vnf)));
    } else {
      // u16: float(S >> 16) * 2^16 (exact) + float(S & 0xffff) (exact): one rounding.
      const auto f =
          hn::Add(hn::Mul(hn::ConvertTo(df, hn::BitCast(di, hn::ShiftRight<16>(s))), k65536),
                  hn::ConvertTo(df, hn::BitCast(di, hn::And(s, lo16))));
      auto q = hn::ConvertTo(di, hn::Mul(f, rcp));
      auto r = hn::BitCast(di, hn::Sub(s, hn::Mul(hn::BitCast(dh, q), vn)));
      const auto neg = hn::Lt(r, zero_i);  // q0 = floor + 1
      q = hn::IfThenElse(neg, hn::Sub(q, one_i), q);
      r = hn::IfThenElse(neg, hn::Add(r, vn_i), r);
      const auto big = hn::Gt(r, vn1_i);  // q0 = floor - 1
      q = hn::IfThenElse(big, hn::Add(q, one_i), q);
      r = hn::IfThenElse(big, hn::Sub(r, vn_i), r);
      const auto r2 = hn::Add(r, r);
      const auto up =
          hn::Or(hn::Gt(r2, vn_i), hn::And(hn::Eq(r2, vn_i), hn::Eq(hn::And(q, one_i), one_i)));
      return hn::DemoteTo(dt, hn::IfThenElse(up, hn::Add(q, one_i), q));
    }
  }
};

#if HWY_TARGET <= HWY_AVX3
// A u8 row's window sums from the padded column sums P in registers, AVX-512 (32 u16 lanes):
// per 32 outputs one aligned load of P, NL two-register lane shifts (lane_shift) and adds
// building W_top = W_(2^NL) (level l runs l vectors behind the loads), the Q terms of W_top
// at t top CH lanes from the last D + 1 W_top vectors by shifts (no W row, no shifted loads
// of it), then the plan's add/sub column sums by shifted loads of P as the memory paths.
// kExact: n <= 257, S = W_top(j) + the add column sums, exact in 16 bits (Q = 1; was kw
// shifted loads and kw - 1 adds); else the fused plan of box_wrap_plan (S modulo 2^16 and
// its estimate). The same terms, sums and estimate as the memory paths. Reads P up to
// 32 (NL + D + 1) samples past the row's last vector (the caller's zeroed spare). Zen 4,
// 4096^2 u8x3, one thread: see bench/NOTES.md (session 9b).
// Lanes [S, S + 32) of the 64 u16 lanes hi:lo (S <= 32): valignd for even S (one dword
// shift with an immediate), else vpermt2w with idx = {S, S + 1, ...}.
template <int S>
HWY_INLINE __m512i lane_shift(__m512i lo, __m512i hi, __m512i idx) {
  static_assert(S >= 0 && S <= 32);
  if constexpr (S == 0) {
    (void)hi, (void)idx;
    return lo;
  } else if constexpr (S == 32) {
    (void)lo, (void)idx;
    return hi;
  } else if constexpr (S % 2 == 0) {
    (void)idx;
    return _mm512_alignr_epi32(hi, lo, S / 2);
  } else {
    return _mm512_permutex2var_epi16(lo, idx, hi);
  }
}

template <int CH, int NL, int Q, bool kExact>
void wrap_row_avx3(const std::uint16_t* P, std::uint8_t* out, std::int64_t wc,
                   const BoxWrapPlan& plan, const Finalize<std::uint8_t, std::uint16_t>& fin_ref,
                   bool stream) {
  constexpr int kTop = 1 << NL;
  static_assert(kTop / 2 * CH <= 32);
  constexpr int kD = ((Q - 1) * kTop * CH + 31) / 32;  // W_top vectors ahead of the output's
  const hn::ScalableTag<std::uint16_t> dh;
  const hn::Rebind<std::uint8_t, decltype(dh)> dt;
  auto shift_idx = [](int s) {
    alignas(64) std::uint16_t b[32];
    for (int i = 0; i < 32; ++i) b[i] = std::uint16_t(i + s);
    return _mm512_load_si512(b);
  };
  __m512i lidx[NL], tidx[Q];
  for (int l = 0; l < NL; ++l) lidx[l] = shift_idx((1 << l) * CH);
  for (int t = 0; t < Q; ++t) tidx[t] = shift_idx(t * kTop * CH % 32);
  __m512i prev[NL], hist[kD + 1];
  for (int l = 0; l < NL; ++l) prev[l] = _mm512_setzero_si512();
  for (int i = 0; i <= kD; ++i) hist[i] = _mm512_setzero_si512();
  // Locals: the u8 stores may alias anything reached through a pointer or reference.
  const Finalize<std::uint8_t, std::uint16_t> fin = fin_ref;
  const int sh = plan.sh, add = plan.add;
  const std::uint16_t* X = P + std::int64_t(Q) * kTop * CH - std::int64_t(plan.sub) * CH;
  const int nx = plan.add + plan.sub;
  const auto one = hn::Set(dh, std::uint16_t(1));
  const std::int64_t nv = (wc + 31) / 32;
  // Outputs in pairs of vectors: one pack and one 64-byte store for two
  // (a row's last odd vector alone).
  const hn::ScalableTag<std::uint8_t> d8;
  const hn::RebindToSigned<decltype(dh)> di;
  hn::Vec<decltype(dh)> pend = hn::Zero(dh);
  auto emit = [&](hn::Vec<decltype(dh)> q, std::int64_t u) {
    if (u % 2 == 0) {
      pend = q;
      if (u + 1 == nv)
        StoreOutN(hn::DemoteTo(dt, hn::BitCast(di, q)), dt, out + 32 * u, wc - 32 * u, stream);
      return;
    }
    const __m512i packed = _mm512_permutexvar_epi64(  // vpackuswb works per 128 bits
        _mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0), _mm512_packus_epi16(pend.raw, q.raw));
    StoreOutN(hn::Vec<decltype(d8)>{packed}, d8, out + 32 * (u - 1), wc - 32 * (u - 1), stream);
  };
  for (std::int64_t v = 0; v < nv + NL + kD; ++v) {
    __m512i cur = _mm512_load_si512(P + 32 * v);  // W_1 of vector v
    [&]<int... L>(std::integer_sequence<int, L...>) {
      // W_(2^(l+1)) of vector v - l - 1
      ((cur =
            [&](__m512i c) {
              __m512i sh;
              if constexpr (L == 0 && CH % 2 == 1)  // an odd shift: a load (no vpermt2w)
                sh = v > 0 ? _mm512_loadu_si512(P + 32 * v - 32 + CH) : _mm512_setzero_si512();
              else
                sh = lane_shift<(1 << L) * CH>(prev[L], c, lidx[L]);
              const __m512i next = _mm512_add_epi16(prev[L], sh);
              prev[L] = c;
              return next;
            }(cur)),
       ...);
    }
    (std::make_integer_sequence<int, NL>{});
    [&]<int... I>(std::integer_sequence<int, I...>) {
      ((hist[I] = hist[I + 1]), ...);
    }
    (std::make_integer_sequence<int, kD>{});
    hist[kD] = cur;  // W_top of vector v - NL
    const std::int64_t u = v - NL - kD;
    if (u < 0) continue;
    // Term t: W_top at lane offset t top CH from the output's vector.
    auto term = [&]<int t>() {
      constexpr int kA = t * kTop * CH / 32, kS = t * kTop * CH % 32;
      if constexpr (kS == 0)
        return hn::Vec<decltype(dh)>{hist[kA]};
      else
        return hn::Vec<decltype(dh)>{lane_shift<kS>(hist[kA], hist[kA + 1], tidx[t])};
    };
    auto lo = term.template operator()<0>();
    if constexpr (kExact) {
      const std::uint16_t* x0 = X + 32 * u;
      for (int c = 0; c < nx; ++c) lo = hn::Add(lo, hn::LoadU(dh, x0 + c * CH));
      emit(fin.q16(lo), u);
      continue;
    }
    auto e = hn::ShiftRightSame(lo, sh);
    [&]<int... T>(std::integer_sequence<int, T...>) {
      (
          [&] {
            if constexpr (T > 0) {
              const auto tv = term.template operator()<T>();
              lo = hn::Add(lo, tv);
              e = hn::Add(e, hn::ShiftRightSame(tv, sh));
            }
          }(),
          ...);
    }
    (std::make_integer_sequence<int, Q>{});
    if (nx > 0) {
      const std::uint16_t* x0 = X + 32 * u;
      auto x = hn::LoadU(dh, x0);
      for (int c = 1; c < nx; ++c) x = hn::Add(x, hn::LoadU(dh, x0 + c * CH));
      if (add > 0) {
        lo = hn::Add(lo, x);
        e = hn::Add(e, hn::ShiftRightSame(x, sh));
      } else {
        lo = hn::Sub(lo, x);
        e = hn::SaturatedSub(e, hn::Add(hn::ShiftRightSame(x, sh), one));
      }
    }
    emit(fin.q16(lo, e), u);
  }
}

// wrap_row_avx3 for this plan and channel count, or null.
using WrapRowFn = void (*)(const std::uint16_t*, std::uint8_t*, std::int64_t, const BoxWrapPlan&,
                           const Finalize<std::uint8_t, std::uint16_t>&, bool);
template <int CH, int NL>
WrapRowFn wrap_row_for_q(int q) {
  switch (q) {
    case 2:
      return &wrap_row_avx3<CH, NL, 2, false>;
    case 3:
      return &wrap_row_avx3<CH, NL, 3, false>;
    case 4:
      return &wrap_row_avx3<CH, NL, 4, false>;
    case 5:
      return &wrap_row_avx3<CH, NL, 5, false>;
    default:
      return nullptr;
  }
}
template <int CH>
WrapRowFn wrap_row_for_ch(int top, int q) {
  switch (top) {
    case 2:
      return wrap_row_for_q<CH, 1>(q);
    case 4:
      return wrap_row_for_q<CH, 2>(q);
    case 8:
      return wrap_row_for_q<CH, 3>(q);
    case 16:
      return wrap_row_for_q<CH, 4>(q);
    default:
      return nullptr;
  }
}
template <int CH>
WrapRowFn exact_row_for_ch(int top) {
  switch (top) {
    case 2:
      return &wrap_row_avx3<CH, 1, 1, true>;
    case 4:
      return &wrap_row_avx3<CH, 2, 1, true>;
    case 8:
      return &wrap_row_avx3<CH, 3, 1, true>;
    default:
      return nullptr;
  }
}
// plan.sh >= 0: the fused plan; else the exact form (n <= 257; plan.top, plan.add, q = 1).
WrapRowFn wrap_row_fn(int ch, const BoxWrapPlan& plan) {
  const bool exact = plan.sh < 0;
  switch (ch) {
    case 1:
      return exact ? exact_row_for_ch<1>(plan.top) : wrap_row_for_ch<1>(plan.top, plan.q);
    case 2:
      return exact ? exact_row_for_ch<2>(plan.top) : wrap_row_for_ch<2>(plan.top, plan.q);
    case 3:
      return exact ? exact_row_for_ch<3>(plan.top) : wrap_row_for_ch<3>(plan.top, plan.q);
    case 4:
      return exact ? exact_row_for_ch<4>(plan.top) : wrap_row_for_ch<4>(plan.top, plan.q);
    default:
      return nullptr;
  }
}
#endif

// Windows up to this wide sum their kw column sums directly (kw shifted loads per vector, no
// pass stores) when the sums need no widening. Zen 4, 4096^2 u8x3, one thread, against the
// doubling passes: 3x3 12.9 -> 9.8 ms, 7x7 15.3 -> 11.8, 9x9 15.5 -> 13.2, 11x11 17.3 ->
// 14.8, 15x15 19.9 -> 18.4.
constexpr int kDirectBoxCols = 15;

// T: the samples; V: the column sums (u16 for u8: <= 255 * 255); H: the partial window sums
// of the doubling passes (u16 for u8 when n <= 257 or when they stop at a width whose sums
// fit 16 bits, else u32); F: the window sums (H, or u32 when the doubling stops early).
template <class T, class V, class H, class F>
void box_int(const ConstImageView& src, const ImageView& dst, const BoxParams& p, Rows rows) {
  const hn::ScalableTag<H> dh;
  const hn::Rebind<V, decltype(dh)> dv;
  const hn::Rebind<T, decltype(dh)> dt;
  const std::int64_t N = std::int64_t(hn::Lanes(dh));
  const int ch = src.channels(), kw = p.kw, kh = p.kh, ax = kw / 2, ay = kh / 2;
  const std::int64_t w = src.width(), h = src.height(), wc = w * ch;
  const BorderType bt = p.border.type;
  const T cval = detail::saturate_cast<T>(p.border.value);
  const std::uint32_t n = std::uint32_t(kw) * std::uint32_t(kh);

  Scratch<T> crow;  // rows outside the image (constant border)
  if (bt == BorderType::constant) {
    crow.reset(std::size_t(wc));
    std::fill(crow.data(), crow.data() + wc, cval);
  }
  auto row = [&](std::int64_t a) -> const T* {
    const std::int64_t sy = detail::border_index(a, h, bt);
    return sy < 0 ? crow.data() : src.row<T>(sy);
  };

  // P: the padded row of running column sums (pads by the border rule in x, per row);
  // W: the doubling passes (the first reads P, the rest work in place); A: accumulated
  // windows. With 32-bit doubling over 16-bit column sums (V narrower than H), P is first
  // widened into W.
  const std::int64_t valid = (w + kw - 1) * ch;
  // Spare: 16 vectors past the row (wrap_row_avx3 reads ahead), zeros.
  Scratch<V> pbuf(static_cast<std::size_t>(valid + 16 * N + 16 * ch));
  Scratch<H> wbuf(static_cast<std::size_t>(valid + 3 * N)),
      abuf(static_cast<std::size_t>(valid + 3 * N));
  V* P = pbuf.data();
  H *W = wbuf.data(), *A = abuf.data();
  std::fill(P, P + valid + 16 * N + 16 * ch, V(0));
  std::fill(W, W + valid + 3 * N, H(0));
  std::fill(A, A + valid + 3 * N, H(0));
  V* col = P + std::int64_t(ax) * ch;
  const PadMap map(w, kw, ax, bt);
  const V cpad = V(std::uint32_t(cval) * std::uint32_t(kh));

  // The band's first row: the sum of its kh rows.
  std::fill(col, col + wc, V(0));
  for (int j = 0; j < kh; ++j) {
    const T* s = row(rows.begin - ay + j);
    std::int64_t i = 0;
    for (; i + N <= wc; i += N)
      hn::StoreU(hn::Add(hn::LoadU(dv, col + i), hn::PromoteTo(dv, hn::LoadU(dt, s + i))), dv,
                 col + i);
    for (; i < wc; ++i) col[i] = V(col[i] + s[i]);
  }

  const Finalize<T, F> finalize(n, p.normalize, std::max(box_wrap_shift(n, 1), 0));
  auto finalize1 = [&](std::uint32_t s) -> T {
    return detail::saturate_cast<T>(p.normalize ? detail::div_round_half_even(std::int64_t(s), n)
                                                : std::int64_t(s));
  };

  // The doubling stops at W_top: the highest set bit of kw, or, with 16-bit partial sums of
  // a window too large for 16 bits (F wider than H), the widest power of two whose sums
  // still fit. Then S(j) = A(j) + W_top(j + cur) + W_top(j + cur + top) + ... (q terms,
  // q * top + cur = kw) in F lanes, fused with finalize into dst.
  int top = 1;
  while (2 * top <= kw) top *= 2;
  if constexpr (!std::is_same_v<H, F>) top = std::min(top, box_u16_top(kh));
  // Narrow windows: the kw terms summed directly from P (no pass stores, no widening).
  if constexpr (std::is_same_v<V, H> && std::is_same_v<H, F>)
    if (kw <= kDirectBoxCols) top = 1;
  const int q = kw / top;
  // 16-bit doubling with wider sums, normalised: the final sums stay in 16-bit lanes, taken
  // modulo 2^16 with an estimate from the terms shifted right (Finalize's second form).
  constexpr bool kWrapable = std::is_same_v<H, std::uint16_t> && !std::is_same_v<H, F>;
  const int wsh = kWrapable && p.normalize ? box_wrap_shift(n, q + (kw % top != 0)) : -1;
  // One pass of W_top straight from P instead of the doubling passes (box_wrap_plan).
  BoxWrapPlan plan;
  if constexpr (kWrapable)
    if (p.normalize) plan = box_wrap_plan(kw, kh);
  const bool fused = plan.sh >= 0;
#if HWY_TARGET <= HWY_AVX3
  // The fused plan, or the direct windows (top = 1 above: exact 16-bit sums), in registers.
  WrapRowFn wrap_row = nullptr, exact_row = nullptr;
  BoxWrapPlan eplan;
  if constexpr (kWrapable)
    if (fused) wrap_row = wrap_row_fn(ch, plan);
  if constexpr (std::is_same_v<T, std::uint8_t> && std::is_same_v<V, H> && std::is_same_v<H, F>) {
    if (top == 1 && kw >= 2) {
      eplan.q = 1;
      eplan.top = kw >= 8 ? 8 : kw >= 4 ? 4 : 2;
      eplan.add = kw - eplan.top;
      exact_row = wrap_row_fn(ch, eplan);
    }
  }
#endif
  const Finalize<T, H> wfinal(n, true, fused ? plan.sh : std::max(wsh, 0));
  const bool stream = stream_output(dst);
  const hn::ScalableTag<F> df;
  const hn::Rebind<H, decltype(df)> dhf;
  const hn::Rebind<T, decltype(df)> dtf;
  const std::int64_t NF = std::int64_t(hn::Lanes(df));
  auto widenf = [&](hn::Vec<decltype(dhf)> v) {
    if constexpr (std::is_same_v<H, F>)
      return v;
    else
      return hn::PromoteTo(df, v);
  };

  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    // Column sums: + the entering row, - the leaving row (after the band's first). The
    // entering row comes from DRAM on large images: prefetched ahead of the loads.
    if (y > rows.begin) {
      const T* in = row(y - ay + kh - 1);
      const T* out = row(y - ay - 1);
      std::int64_t i = 0;
      for (; i + N <= wc; i += N) {
        prefetch_ahead(in + i);
        const auto v = hn::Add(hn::LoadU(dv, col + i), hn::PromoteTo(dv, hn::LoadU(dt, in + i)));
        hn::StoreU(hn::Sub(v, hn::PromoteTo(dv, hn::LoadU(dt, out + i))), dv, col + i);
      }
      for (; i < wc; ++i) col[i] = V(col[i] + in[i] - out[i]);
    }
    map.fill(P, w, ch, cpad);
    if constexpr (kWrapable) {
      if (fused) {
#if HWY_TARGET <= HWY_AVX3
        if (wrap_row) {
          wrap_row(P, dst.row<T>(y), wc, plan, wfinal, stream);
          continue;
        }
#endif
        // W(j) = W_top(j), exact in 16 bits, as far as the last window's q-th term reaches
        // (with sub, past the row: P is 0 there, and the same zeros are subtracted).
        const std::int64_t top_ch = std::int64_t(plan.top) * ch;
        const std::int64_t wlen = wc + std::int64_t(plan.q - 1) * top_ch;
        for (std::int64_t j = 0; plan.top > 1 && j < wlen; j += N) {
          auto a = hn::LoadU(dh, P + j), b = hn::LoadU(dh, P + j + ch);
          for (int c = 2; c + 1 < plan.top; c += 2) {
            a = hn::Add(a, hn::LoadU(dh, P + j + c * ch));
            b = hn::Add(b, hn::LoadU(dh, P + j + (c + 1) * ch));
          }
          hn::StoreU(hn::Add(a, b), dh, W + j);
        }
        const H* Wt = plan.top > 1 ? W : P;
        T* d = dst.row<T>(y);
        const H* X = P + std::int64_t(plan.q) * top_ch - std::int64_t(plan.sub) * ch;
        const auto one = hn::Set(dh, H(1));
        std::int64_t j = 0;
        for (; j + N <= wc; j += N) {
          auto t = hn::LoadU(dh, Wt + j);
          auto lo = t, e = hn::ShiftRightSame(t, plan.sh);
          for (int u = 1; u < plan.q; ++u) {
            t = hn::LoadU(dh, Wt + j + u * top_ch);
            lo = hn::Add(lo, t);
            e = hn::Add(e, hn::ShiftRightSame(t, plan.sh));
          }
          if (plan.add > 0 || plan.sub > 0) {
            auto x = hn::LoadU(dh, X + j);
            for (int c = 1; c < plan.add + plan.sub; ++c)
              x = hn::Add(x, hn::LoadU(dh, X + j + c * ch));
            if (plan.add > 0) {
              lo = hn::Add(lo, x);
              e = hn::Add(e, hn::ShiftRightSame(x, plan.sh));
            } else {
              lo = hn::Sub(lo, x);
              e = hn::SaturatedSub(e, hn::Add(hn::ShiftRightSame(x, plan.sh), one));
            }
          }
          StoreOut(wfinal(lo, e), dt, d + j, stream);
        }
        for (; j < wc; ++j) {
          std::uint32_t sum = 0;
          for (int c = 0; c < kw; ++c) sum += P[j + std::int64_t(c) * ch];
          d[j] = finalize1(sum);
        }
        continue;
      }
    }
#if HWY_TARGET <= HWY_AVX3
    if constexpr (std::is_same_v<T, std::uint8_t> && std::is_same_v<F, std::uint16_t>) {
      if (exact_row) {
        exact_row(P, dst.row<T>(y), wc, eplan, finalize, stream);
        continue;
      }
    }
#endif
    const H* S;  // W_m: P for m = 1 (or its widened copy), then W
    if constexpr (std::is_same_v<V, H>) {
      S = P;
    } else {
      for (std::int64_t i = 0; i < valid; i += N)
        hn::StoreU(hn::PromoteTo(dh, hn::LoadU(dv, P + i)), dh, W + i);
      S = W;
    }
    std::int64_t len = valid;  // valid samples of W_m
    std::int64_t cur = 0;      // pixels of kw accumulated in A so far (its lower set bits)
    bool have = false;
    for (int m = 1;; m *= 2) {
      const std::int64_t aoff = cur * ch;
      if (m == top) {  // S(j) = A(j) + sum over t < q of W_top(j + cur + t top), into dst
        T* d = dst.row<T>(y);
        const std::int64_t step = std::int64_t(top) * ch;
        std::int64_t j = 0;
        if constexpr (kWrapable) {
          if (wsh >= 0) {
            for (; j + N <= wc; j += N) {
              auto t = hn::LoadU(dh, S + j + aoff);
              auto lo = t, e = hn::ShiftRightSame(t, wsh);
              for (int u = 1; u < q; ++u) {
                t = hn::LoadU(dh, S + j + aoff + u * step);
                lo = hn::Add(lo, t);
                e = hn::Add(e, hn::ShiftRightSame(t, wsh));
              }
              if (have) {
                t = hn::LoadU(dh, A + j);
                lo = hn::Add(lo, t);
                e = hn::Add(e, hn::ShiftRightSame(t, wsh));
              }
              StoreOut(wfinal(lo, e), dt, d + j, stream);
            }
          }
        }
        for (; j + NF <= wc; j += NF) {
          auto s = widenf(hn::LoadU(dhf, S + j + aoff));
          for (int t = 1; t < q; ++t)
            s = hn::Add(s, widenf(hn::LoadU(dhf, S + j + aoff + t * step)));
          if (have) s = hn::Add(s, widenf(hn::LoadU(dhf, A + j)));
          StoreOut(finalize(s), dtf, d + j, stream);
        }
        for (; j < wc; ++j) {
          F s = F(have ? A[j] : H(0));
          for (int t = 0; t < q; ++t) s = F(s + S[j + aoff + t * step]);
          d[j] = finalize1(std::uint32_t(s));
        }
        break;
      }
      // W_2m(j) = W_m(j) + W_m(j + m) (in place from m = 2 on, forwards: loads precede the
      // store, and only positions below j were overwritten); with bit m of kw,
      // A(j) += W_m(j + cur).
      const std::int64_t off = std::int64_t(m) * ch, nlen = len - off;
      if (kw & m) {
        for (std::int64_t j = 0; j < nlen; j += N) {
          const auto wj = hn::LoadU(dh, S + j);
          auto a = hn::LoadU(dh, S + j + aoff);
          if (have) a = hn::Add(a, hn::LoadU(dh, A + j));
          hn::StoreU(a, dh, A + j);
          hn::StoreU(hn::Add(wj, hn::LoadU(dh, S + j + off)), dh, W + j);
        }
        cur += m;
        have = true;
      } else {
        for (std::int64_t j = 0; j < nlen; j += N)
          hn::StoreU(hn::Add(hn::LoadU(dh, S + j), hn::LoadU(dh, S + j + off)), dh, W + j);
      }
      S = W;
      len = nlen;
    }
  }
}

// ---- f32 --------------------------------------------------------------------------------

void box_f32(const ConstImageView& src, const ImageView& dst, const BoxParams& p, Rows rows) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const std::int64_t N = std::int64_t(hn::Lanes(dd));
  const int ch = src.channels(), kw = p.kw, kh = p.kh, ax = kw / 2, ay = kh / 2;
  const std::int64_t w = src.width(), h = src.height(), wc = w * ch;
  const BorderType bt = p.border.type;
  const double cval = double(detail::saturate_cast<float>(p.border.value));
  const double nd = double(std::int64_t(kw) * kh);
  const PadMap map(w, kw, ax, bt);
  const std::int64_t valid = (w + kw - 1) * ch;
  Scratch<double> pad(static_cast<std::size_t>(valid));
  double* col = pad.data() + std::int64_t(ax) * ch;
  std::vector<const float*> srows(static_cast<std::size_t>(kh));
  const auto vn = hn::Set(dd, nd);
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    for (int j = 0; j < kh; ++j) {
      const std::int64_t sy = detail::border_index(y - ay + j, h, bt);
      srows[std::size_t(j)] = sy < 0 ? nullptr : src.row<float>(sy);
    }
    // Column sums from 0.0 over the kh rows in row order (outside: the value).
    std::int64_t i = 0;
    for (; i + N <= wc; i += N) {
      auto s = hn::Zero(dd);
      for (int j = 0; j < kh; ++j) {
        const float* r = srows[std::size_t(j)];
        s = hn::Add(s, r ? hn::PromoteTo(dd, hn::LoadU(df, r + i)) : hn::Set(dd, cval));
      }
      hn::StoreU(s, dd, col + i);
    }
    for (; i < wc; ++i) {
      double s = 0;
      for (int j = 0; j < kh; ++j) {
        const float* r = srows[std::size_t(j)];
        s += r ? double(r[i]) : cval;
      }
      col[i] = s;
    }
    map.fill(pad.data(), w, ch, cval * double(kh));
    // Window sums from 0.0 over the kw column sums in column order.
    float* d = dst.row<float>(y);
    const double* q = pad.data();
    std::int64_t j = 0;
    for (; j + N <= wc; j += N) {
      auto s = hn::Zero(dd);
      for (int k = 0; k < kw; ++k) s = hn::Add(s, hn::LoadU(dd, q + j + std::int64_t(k) * ch));
      if (p.normalize) s = hn::Div(s, vn);
      hn::StoreU(hn::DemoteTo(df, s), df, d + j);
    }
    for (; j < wc; ++j) {
      double s = 0;
      for (int k = 0; k < kw; ++k) s += q[j + std::int64_t(k) * ch];
      d[j] = p.normalize ? float(s / nd) : float(s);
    }
  }
}

}  // namespace
#endif

void box_rows(const ConstImageView& src, const ImageView& dst, const BoxParams& p, Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::box(src, dst, p, rows);
#else
  switch (src.depth()) {
    case Depth::u8:
      if (p.kw * p.kh <= 257)  // 255 * n < 2^16
        return box_int<std::uint8_t, std::uint16_t, std::uint16_t, std::uint16_t>(src, dst, p,
                                                                                  rows);
      // 16-bit doubling up to u16_top columns, then at most 4 widened terms (kw 31, kh 31:
      // 8 columns, 3 terms + the low bits); wider windows double in 32 bits.
      if (p.kw / box_u16_top(p.kh) <= 4)
        return box_int<std::uint8_t, std::uint16_t, std::uint16_t, std::uint32_t>(src, dst, p,
                                                                                  rows);
      return box_int<std::uint8_t, std::uint16_t, std::uint32_t, std::uint32_t>(src, dst, p, rows);
    case Depth::u16:
      return box_int<std::uint16_t, std::uint32_t, std::uint32_t, std::uint32_t>(src, dst, p, rows);
    default:
      return box_f32(src, dst, p, rows);
  }
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
  pixflow::cpu::add_banded<&pixflow::cpu::box>(
      table, "box",
      pixflow::detail::Support::of({Depth::u8, Depth::u16, Depth::f32}, {1, 2, 3, 4}));
}
#endif
