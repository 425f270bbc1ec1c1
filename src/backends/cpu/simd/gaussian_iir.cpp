// SIMD gaussian_iir for the cpu backend: the recursive Gaussian of src/base/iir.hpp
// (Young–van Vliet, Triggs–Sdika ends) with many lines in the lanes of the vectors.
//
// The recursion is sequential along a line, so the vectors run across lines: kL = kU
// vectors of doubles hold kL independent lines, kU chains interleaved to hide the latency
// of one step (a multiply and an add: iir_step adds the newest output last; each step's
// carry correction is off the chain). The arithmetic per line is the reference's, the same
// double operations in the same order (no MulAdd; the build has -ffp-contract=off), so
// every line is bit-identical to ref::gaussian_iir_h / _v.
//  - rows (into the f32 temporary): kL rows at a time, each row's border-extended channel
//    gathered into a [position][lane] buffer through a precomputed border map, filtered,
//    and the results scattered back to the kL rows;
//  - columns (into dst): kL consecutive samples of a row (interleaved channels are just
//    neighbouring columns) straight from the temporary's rows, the border in y by row map.
// Both passes run in the blocks of the block rule (src/base/iir.hpp), every line's blocks in
// order: each block from zero state, each step corrected by the carry as it is produced. The
// causal pass stores w per position ([n + 6][kL] doubles), the anti-causal pass runs
// backwards over it and overwrites it with y.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/gaussian_iir.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/base/iir.hpp"
#include "src/base/numeric.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR && HWY_HAVE_FLOAT64
namespace {

using Dd = hn::ScalableTag<double>;
// Interleaved chains: 4 on vectors up to 256 bits, 2 on 512-bit vectors (16 lines either way
// on AVX2 / AVX-512; 8 on 128-bit targets).
constexpr int kU = HWY_MAX_BYTES >= 64 ? 2 : 4;

constexpr std::int64_t kChunk = 64;  // positions per gather / scatter step
constexpr std::int64_t kMaxLanes = kU * std::int64_t(HWY_MAX_BYTES / sizeof(double));
std::int64_t lanes() {
  return std::int64_t(kU) * std::int64_t(hn::Lanes(Dd()));
}

// Filters kL lines held in x ([i * kL + l], i < n, the border-extended input) by the block
// rule of iir_filter_line, in w as it uses it: w[(i + 3) * kL + l] is position i of line l;
// on return it holds the line's output y for e <= i < n - e. w: (n + 6) * kL.
void filter_lanes(const double* HWY_RESTRICT x, double* HWY_RESTRICT w, std::int64_t n,
                  std::int64_t e, const detail::IirCoeffs& k) {
  const Dd d;
  const std::int64_t N = std::int64_t(hn::Lanes(d)), L = kU * N;
  constexpr std::int64_t kB = detail::kIirBlock;
  using V = hn::Vec<Dd>;
  const V B = hn::Set(d, k.B), b1 = hn::Set(d, k.b1), b2 = hn::Set(d, k.b2), b3 = hn::Set(d, k.b3);
  // detail::iir_step and iir_fix, the same operations in the same order.
  auto step = [&](V xv, V s1, V s2, V s3) {
    return hn::Add(hn::Add(hn::Add(hn::Mul(B, xv), hn::Mul(b3, s3)), hn::Mul(b2, s2)),
                   hn::Mul(b1, s1));
  };
  auto fix = [&](int t, V z, V s0, V s1, V s2) {
    return hn::Add(
        z, hn::Add(hn::Add(hn::Mul(hn::Set(d, k.H[t][0]), s0), hn::Mul(hn::Set(d, k.H[t][1]), s1)),
                   hn::Mul(hn::Set(d, k.H[t][2]), s2)));
  };
  for (int u = 0; u < kU; ++u) {  // w[0] = w[1] = w[2] = x(0)
    const V x0 = hn::LoadU(d, x + u * N);
    for (int r = 0; r < 3; ++r) hn::StoreU(x0, d, w + r * L + u * N);
  }
  V s0[kU], s1[kU], s2[kU], z1[kU], z2[kU], z3[kU];
  // Causal, blocks left to right, each from zero state corrected by w at a-1, a-2, a-3. The
  // corrections are off the dependent chain (z only).
  for (std::int64_t a = 0; a < n; a += kB) {
    const int m = int(std::min(kB, n - a));
    for (int u = 0; u < kU; ++u) {
      s0[u] = hn::LoadU(d, w + (a + 2) * L + u * N);
      s1[u] = hn::LoadU(d, w + (a + 1) * L + u * N);
      s2[u] = hn::LoadU(d, w + a * L + u * N);
      z1[u] = z2[u] = z3[u] = hn::Zero(d);
    }
    for (int t = 0; t < m; ++t) {
      const double* xi = x + (a + t) * L;
      double* wi = w + (a + t + 3) * L;
      for (int u = 0; u < kU; ++u) {
        const V z = step(hn::LoadU(d, xi + u * N), z1[u], z2[u], z3[u]);
        z3[u] = z2[u];
        z2[u] = z1[u];
        z1[u] = z;
        hn::StoreU(fix(t, z, s0[u], s1[u], s2[u]), d, wi + u * N);
      }
    }
  }
  // Triggs–Sdika: y at n, n+1, n+2 from w at n-1, n-2, n-3 and up = x(n - 1).
  for (int u = 0; u < kU; ++u) {
    const V up = hn::LoadU(d, x + (n - 1) * L + u * N);
    const V u0 = hn::Sub(hn::LoadU(d, w + (n + 2) * L + u * N), up);
    const V u1 = hn::Sub(hn::LoadU(d, w + (n + 1) * L + u * N), up);
    const V u2 = hn::Sub(hn::LoadU(d, w + n * L + u * N), up);
    for (int r = 0; r < 3; ++r)
      hn::StoreU(hn::Add(hn::Add(hn::Add(hn::Mul(hn::Set(d, k.M[r][0]), u0),
                                         hn::Mul(hn::Set(d, k.M[r][1]), u1)),
                                 hn::Mul(hn::Set(d, k.M[r][2]), u2)),
                         up),
                 d, w + (n + 3 + r) * L + u * N);
  }
  // Anti-causal, the same blocks right to left, each corrected by y at b, b+1, b+2; y
  // overwrites w. Blocks left of the line's first sample are skipped (as iir_filter_line).
  for (std::int64_t a = (n - 1) / kB * kB; a >= 0 && a + kB > e; a -= kB) {
    const std::int64_t bend = std::min(n, a + kB);
    for (int u = 0; u < kU; ++u) {
      s0[u] = hn::LoadU(d, w + (bend + 3) * L + u * N);
      s1[u] = hn::LoadU(d, w + (bend + 4) * L + u * N);
      s2[u] = hn::LoadU(d, w + (bend + 5) * L + u * N);
      z1[u] = z2[u] = z3[u] = hn::Zero(d);
    }
    for (int t = 0; t < int(bend - a); ++t) {
      double* wi = w + (bend - 1 - t + 3) * L;
      for (int u = 0; u < kU; ++u) {
        const V z = step(hn::LoadU(d, wi + u * N), z1[u], z2[u], z3[u]);
        z3[u] = z2[u];
        z2[u] = z1[u];
        z1[u] = z;
        hn::StoreU(fix(t, z, s0[u], s1[u], s2[u]), d, wi + u * N);
      }
    }
  }
}

// Border map of an extended line: m[i] = source index of position i (-1: the constant).
std::vector<std::int64_t> line_map(std::int64_t len, std::int64_t e, BorderType bt) {
  std::vector<std::int64_t> m(std::size_t(len + 2 * e));
  for (std::int64_t i = 0; i < len + 2 * e; ++i)
    m[std::size_t(i)] = detail::border_index(i - e, len, bt);
  return m;
}

template <class T>
void rows_t(const ConstImageView& src, const ImageView& tmp, const GaussianIirParams& p,
            Rows rows) {
  const detail::IirCoeffs k = detail::iir_coeffs(p.sigma);
  const int ch = src.channels();
  const std::int64_t len = src.width(), e = detail::iir_extension(p), n = len + 2 * e;
  const std::int64_t L = lanes();
  const double cval = double(detail::saturate_cast<T>(p.border.value));
  const std::vector<std::int64_t> map = line_map(len, e, p.border.type);
  Scratch<double> x(std::size_t(n * L)), w(std::size_t((n + 6) * L));
  for (std::int64_t r0 = rows.begin; r0 < rows.end; r0 += L) {
    const std::int64_t g = std::min(L, rows.end - r0);  // lanes past g repeat the last row
    const T* in[kMaxLanes];
    float* out[kMaxLanes];
    for (std::int64_t l = 0; l < L; ++l) {
      in[l] = src.row<T>(r0 + std::min(l, g - 1));
      out[l] = tmp.row<float>(r0 + std::min(l, g - 1));
    }
    for (int c = 0; c < ch; ++c) {
      // In chunks of positions, row by row: each row is read contiguously and the chunk
      // of x stays in L1 (position-major over all kL rows at once thrashes L1: the rows
      // are a power-of-two stride apart).
      for (std::int64_t i0 = 0; i0 < n; i0 += kChunk) {
        const std::int64_t i1 = std::min(n, i0 + kChunk);
        for (std::int64_t l = 0; l < L; ++l)
          for (std::int64_t i = i0; i < i1; ++i) {
            const std::int64_t s = map[std::size_t(i)];
            x[std::size_t(i * L + l)] = s < 0 ? cval : double(in[l][s * ch + c]);
          }
      }
      filter_lanes(x.data(), w.data(), n, e, k);
      for (std::int64_t i0 = 0; i0 < len; i0 += kChunk) {
        const std::int64_t i1 = std::min(len, i0 + kChunk);
        for (std::int64_t l = 0; l < g; ++l)
          for (std::int64_t i = i0; i < i1; ++i)
            out[l][i * ch + c] = float(w[std::size_t((i + e + 3) * L + l)]);
      }
    }
  }
}

template <class T>
void cols_t(const ConstImageView& tmp, const ImageView& dst, const GaussianIirParams& p,
            Rows cols) {
  const detail::IirCoeffs k = detail::iir_coeffs(p.sigma);
  const int ch = tmp.channels();
  const std::int64_t len = tmp.height(), e = detail::iir_extension(p), n = len + 2 * e;
  const std::int64_t L = lanes();
  const double cval = double(detail::saturate_cast<T>(p.border.value));
  const std::vector<std::int64_t> map = line_map(len, e, p.border.type);
  Scratch<double> x(std::size_t(n * L)), w(std::size_t((n + 6) * L));
  const hn::Rebind<float, Dd> df;
  const Dd d;
  const std::int64_t N = std::int64_t(hn::Lanes(d));
  const std::int64_t s_end = cols.end * ch;
  for (std::int64_t s0 = cols.begin * ch; s0 < s_end; s0 += L) {
    const std::int64_t g = std::min(L, s_end - s0);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t r = map[std::size_t(i)];
      double* xi = x.data() + i * L;
      if (r < 0) {
        for (std::int64_t l = 0; l < L; ++l) xi[l] = cval;
        continue;
      }
      const float* in = tmp.row<float>(r) + s0;
      if (g == L) {
        for (std::int64_t l = 0; l < L; l += N)
          hn::StoreU(hn::PromoteTo(d, hn::LoadU(df, in + l)), d, xi + l);
      } else {
        for (std::int64_t l = 0; l < L; ++l) xi[l] = double(in[std::min(l, g - 1)]);
      }
    }
    filter_lanes(x.data(), w.data(), n, e, k);
    for (std::int64_t i = 0; i < len; ++i) {
      const double* yi = w.data() + (i + e + 3) * L;
      T* out = dst.row<T>(i) + s0;
      if constexpr (std::is_same_v<T, float>) {
        if (g == L) {
          for (std::int64_t l = 0; l < L; l += N)
            hn::StoreU(hn::DemoteTo(df, hn::LoadU(d, yi + l)), df, out + l);
          continue;
        }
      }
      if constexpr (std::is_same_v<T, std::uint8_t>) {
        if (g == L) {
          // The float result rounded half to even (Round) and saturated, as saturate_cast
          // of double(float(y)); results here are finite (u8 input, unit-gain filter).
          const hn::Rebind<std::int32_t, Dd> di;
          const hn::Rebind<std::uint8_t, Dd> du8;
          const auto lo = hn::Zero(d), hi = hn::Set(d, 255.0);
          for (std::int64_t l = 0; l < L; l += N) {
            const auto f = hn::PromoteTo(d, hn::DemoteTo(df, hn::LoadU(d, yi + l)));
            const auto r = hn::Min(hn::Max(hn::Round(f), lo), hi);
            hn::StoreU(hn::DemoteTo(du8, hn::DemoteTo(di, r)), du8, out + l);
          }
          continue;
        }
      }
      // The float result rounded half to even and saturated (the reference's rule).
      for (std::int64_t l = 0; l < g; ++l) out[l] = detail::saturate_cast<T>(double(float(yi[l])));
    }
  }
}

}  // namespace
#endif

void iir_rows(const ConstImageView& src, const ImageView& tmp, const GaussianIirParams& p,
              Rows rows) {
#if HWY_TARGET == HWY_SCALAR || !HWY_HAVE_FLOAT64
  ref::gaussian_iir_h(src, tmp, p, rows);
#else
  detail::visit_depth<Depth::u8, Depth::f32>(
      src.depth(), [&](auto t) { rows_t<decltype(t)>(src, tmp, p, rows); });
#endif
}

void iir_cols(const ConstImageView& tmp, const ImageView& dst, const GaussianIirParams& p,
              Rows cols) {
#if HWY_TARGET == HWY_SCALAR || !HWY_HAVE_FLOAT64
  ref::gaussian_iir_v(tmp, dst, p, cols);
#else
  detail::visit_depth<Depth::u8, Depth::f32>(
      dst.depth(), [&](auto t) { cols_t<decltype(t)>(tmp, dst, p, cols); });
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(iir_rows);
HWY_EXPORT(iir_cols);

namespace {
// Rows into an f32 temporary, then bands of columns (as the threaded reference).
void gaussian_iir(const detail::Exec& e, const ConstImageView& src, const ImageView& dst,
                  const GaussianIirParams& p) {
  Image tmp(src.width(), src.height(), {Depth::f32, src.channels()}, src.location());
  const ImageView tv = tmp.view();
  Bands::run(e, src.height(), [&](Rows r) { HWY_DYNAMIC_DISPATCH(iir_rows)(src, tv, p, r); });
  Bands::run(e, src.width(), [&](Rows c) { HWY_DYNAMIC_DISPATCH(iir_cols)(tv, dst, p, c); });
}
}  // namespace
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_gaussian_iir) {
  table.add("gaussian_iir", pixflow::Backend::cpu, &pixflow::cpu::gaussian_iir,
            pixflow::detail::Support::of({pixflow::Depth::u8, pixflow::Depth::f32}));
}
#endif
