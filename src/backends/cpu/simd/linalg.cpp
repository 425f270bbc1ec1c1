// SIMD dot and f32 matmul for the cpu backend, bit-identical to src/ref/linalg.cpp
// (docs/ops/linalg.md).
// - dot: four channels de-interleaved by LoadInterleaved4, ((a0*b0 + a1*b1) + a2*b2) + a3*b3
//   with separate multiplies and adds.
// - matmul f32: every c_ij is the reference's sum, 0 + a_i0*b_0j + a_i1*b_1j + ... in k order
//   with a rounded product and a rounded add per term; only which outputs are computed
//   together changes. A register tile of kMr rows x kNv vectors of columns keeps 12 or 24
//   accumulators (enough independent adds to cover the add latency on two pipes); B is
//   packed per block of kKc rows x kNc columns into panels of the tile's width, contiguous
//   in k; between k blocks the partial sums wait in C (a float stored and reloaded is the
//   same float, so the order of each sum is unchanged). Columns past the last whole vector
//   run the reference's loop.
// - matmul s32: the reference's exact (128-bit) sum of the int64 products, saturated to
//   int32. Products by MulEven (32 x 32 -> 64 bits per 64-bit lane, B packed sign-extended
//   into 64-bit lanes); each sum kept as two 64-bit lanes, the wrapping sum W of the
//   products and the exact sum H of their high halves (p >> 32), from which the exact sum
//   is 2^32 H + (W - 2^32 H mod 2^64) for K <= 2^32 (the proof above saturated_sum; larger K goes
//   to the reference). Panels of 2-3 vectors of columns (zero-padded past N) packed for the
//   whole K, register tiles of 2-4 rows, the sums in registers from k = 0 to K.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/linalg.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/ref/ref.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
namespace {

using Df = hn::ScalableTag<float>;

// The register tile: rows x vectors of columns. 32 vector registers (AVX-512): 6 x 4 = 24
// accumulators; 16 (AVX2, SSE4, NEON): 4 x 2 = 8 (Zen 4, 1024^3 at one thread, forced
// targets: AVX2 24.9 ms either way, SSE4 60 ms against 80 with 4 x 3, which spills).
constexpr int kMr = HWY_MAX_BYTES >= 64 ? 6 : 4;
constexpr int kNv = HWY_MAX_BYTES >= 64 ? 4 : 2;
constexpr std::int64_t kKc = 256;  // k rows of a packed block of B
// Columns of a packed block: 384 (16 tiles of 256-bit vectors), a 384 KB block of B in L2.
constexpr std::int64_t kNcFloats = 384;

// Vectors of the full width, or of 8 floats where the CPU splits 512-bit operations: on
// Zen 4 the kernel measured 25.9 ms at 1024^3 with 512-bit vectors, 22.5 ms with 256-bit
// ones; on Zen 5 (full-width units) 512-bit vectors took it from 16.7 to 9.8 ms (OpenBLAS
// 16.5 ms in the same run, bench/NOTES.md). AVX-512 keeps its 32 registers either way.
using Dfull = hn::ScalableTag<float>;
using Dhalf = hn::CappedTag<float, 8>;

// C[r][0, nv * L) of the tile += sum over k < kc of a[k * MR + r] * panel row k, one term at
// a time (a: the tile's rows of A packed k-major); `first`: the sums start at 0 (the first
// k block).
template <class Dm, int MR, int NV>
HWY_INLINE void tile(const float* HWY_RESTRICT a, const float* HWY_RESTRICT panel, std::int64_t kc,
                     float* const* c, bool first) {
  const Dm d;
  const std::size_t n = hn::Lanes(d);
  hn::Vec<Dm> acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = first ? hn::Zero(d) : hn::LoadU(d, c[r] + v * n);
  for (std::int64_t k = 0; k < kc; ++k) {
    hn::Vec<Dm> b[NV];
    for (int v = 0; v < NV; ++v) b[v] = hn::Load(d, panel + (k * NV + v) * n);
    for (int r = 0; r < MR; ++r) {
      const auto ar = hn::Set(d, a[k * MR + r]);
      for (int v = 0; v < NV; ++v) acc[r][v] = hn::Add(acc[r][v], hn::Mul(ar, b[v]));
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) hn::StoreU(acc[r][v], d, c[r] + v * n);
}

// tile<mr, nv> for the run-time mr <= kMr, nv <= kNv of the last rows and panel.
template <class Dm, int MR, int NV = kNv>
void tile_nv(int nv, const float* a, const float* panel, std::int64_t kc, float* const* c,
             bool first) {
  if constexpr (NV > 1)
    if (nv < NV) return tile_nv<Dm, MR, NV - 1>(nv, a, panel, kc, c, first);
  tile<Dm, MR, NV>(a, panel, kc, c, first);
}

template <class Dm, int MR = kMr>
void tile_any(int mr, int nv, const float* a, const float* panel, std::int64_t kc, float* const* c,
              bool first) {
  if constexpr (MR > 1)
    if (mr < MR) return tile_any<Dm, MR - 1>(mr, nv, a, panel, kc, c, first);
  tile_nv<Dm, MR>(nv, a, panel, kc, c, first);
}

template <class Dm>
void matmul_f32(const ConstImageView& a, const ConstImageView& b, const ImageView& c, Rows rows) {
  const Dm d;
  const std::int64_t L = std::int64_t(hn::Lanes(d));
  const std::int64_t K = a.width(), N = b.width();
  const std::int64_t nvec = N / L;  // whole vectors of columns
  if (nvec > 0 && K > 0) {
    const std::int64_t nc_max = std::min(nvec, std::max<std::int64_t>(1, kNcFloats / L)) * L;
    Scratch<float> packed(static_cast<std::size_t>(kKc * nc_max));
    Scratch<float> packed_a(static_cast<std::size_t>(kKc * kMr));
    float* pa = packed_a.data();
    for (std::int64_t j0 = 0; j0 < nvec * L; j0 += nc_max) {
      const std::int64_t nc = std::min(nc_max, nvec * L - j0);
      for (std::int64_t k0 = 0; k0 < K; k0 += kKc) {
        const std::int64_t kc = std::min(kKc, K - k0);
        // Panels of kNv vectors (the last one narrower), each kc rows of its columns.
        for (std::int64_t p = 0; p < nc; p += kNv * L) {
          const std::int64_t w = std::min(kNv * L, nc - p);
          float* out = packed.data() + p * kc;
          for (std::int64_t k = 0; k < kc; ++k) {
            const float* src = b.row<float>(k0 + k) + j0 + p;
            for (std::int64_t x = 0; x < w; x += L) hn::Store(hn::LoadU(d, src + x), d, out + x);
            out += w;
          }
        }
        for (std::int64_t i = rows.begin; i < rows.end; i += kMr) {
          const int mr = int(std::min<std::int64_t>(kMr, rows.end - i));
          float* cr[kMr];
          for (int r = 0; r < mr; ++r) {
            const float* ar = a.row<float>(i + r) + k0;
            for (std::int64_t k = 0; k < kc; ++k) pa[k * mr + r] = ar[k];
            cr[r] = c.row<float>(i + r) + j0;
          }
          for (std::int64_t p = 0; p < nc; p += kNv * L) {
            const int nv = int(std::min(kNv * L, nc - p) / L);
            float* cp[kMr];
            for (int r = 0; r < mr; ++r) cp[r] = cr[r] + p;
            tile_any<Dm>(mr, nv, pa, packed.data() + p * kc, kc, cp, k0 == 0);
          }
        }
      }
    }
  }
  if (nvec * L < N) {  // the last columns: the reference's loop
    const std::int64_t x = nvec * L;
    ref::matmul(a, b.roi(x, 0, N - x, b.height()), c.roi(x, 0, N - x, c.height()), rows);
  }
}

// ---- s32 matmul: the exact sum of 32 x 32 -> 64-bit products, saturated to int32 ----
//
// Each output keeps two 64-bit lanes: W, the wrapping (mod 2^64) sum of its products p_k, and
// H, the sum of their high halves h_k = p_k >> 32 (arithmetic). With l_k = p_k - 2^32 h_k in
// [0, 2^32): S = sum p_k = 2^32 H + L, L = sum l_k in [0, K 2^32) (below 2^64 for K <= 2^32);
// |h_k| <= 2^30, so |H| <= K 2^30 never overflows; L = (W - 2^32 H) mod 2^64, the one value
// of that residue in [0, 2^64). S is exact, then saturated as the reference does.
__extension__ typedef __int128 Acc128;

// 32 registers (AVX-512): 4 rows x 3 vectors = 24 accumulators; 16: 2 x 2 = 8 (each term
// needs a product and its high half besides the B vectors and the broadcast A). On Zen 4,
// 1024^3 at 1 thread: AVX-512 4x3 92 ms, 6x2 90, 3x4 92 (noise); AVX2 at 512^3: 2x2
// 17.2 ms, 3x2 20.9, 2x3 20.7 (spills).
constexpr int kMrS = HWY_MAX_BYTES >= 64 ? 4 : 2;
constexpr int kNvS = HWY_MAX_BYTES >= 64 ? 3 : 2;

using Di32full = hn::ScalableTag<std::int32_t>;

// p >> 32 on int64 lanes. AVX2/SSE4 have no 64-bit arithmetic shift (Highway's emulation
// takes four operations): the high 32-bit half moved down, its sign (a 32-bit shift) above.
template <class D64>
HWY_INLINE hn::Vec<D64> high_half(D64 d64, hn::Vec<D64> p) {
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4
  const hn::Repartition<std::int32_t, D64> d32;
  const hn::RebindToUnsigned<D64> du64;
  return hn::BitCast(d64, hn::OddEven(hn::ShiftRight<31>(hn::BitCast(d32, p)),
                                      hn::BitCast(d32, hn::ShiftRight<32>(hn::BitCast(du64, p)))));
#else
  (void)d64;
  return hn::ShiftRight<32>(p);
#endif
}

HWY_INLINE std::int32_t saturated_sum(std::int64_t w, std::int64_t h) {
  const std::uint64_t l = static_cast<std::uint64_t>(w) - (static_cast<std::uint64_t>(h) << 32);
  const Acc128 s = Acc128(h) * (Acc128(1) << 32) + Acc128(l);
  constexpr Acc128 kLo = INT32_MIN, kHi = INT32_MAX;
  return static_cast<std::int32_t>(s < kLo ? kLo : s > kHi ? kHi : s);
}

// c[r][0, ncols) = the saturated sums over k < K of a[r][k] * panel[k][.] for MR rows and
// NV vectors of 64-bit lanes (panel: K rows of NV vectors, each B value sign-extended in
// its 64-bit lane, zero past the last column).
template <class D32, int MR, int NV>
HWY_INLINE void tile_s32(const std::int32_t* const* a, const std::int64_t* HWY_RESTRICT panel,
                         std::int64_t K, std::int32_t* const* c, std::int64_t ncols) {
  const D32 d32;
  const hn::RepartitionToWide<D32> d64;
  const std::size_t n = hn::Lanes(d64);
  hn::Vec<decltype(d64)> w[MR][NV], h[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) w[r][v] = h[r][v] = hn::Zero(d64);
  for (std::int64_t k = 0; k < K; ++k) {
    hn::Vec<D32> b[NV];
    for (int v = 0; v < NV; ++v) b[v] = hn::BitCast(d32, hn::Load(d64, panel + (k * NV + v) * n));
    for (int r = 0; r < MR; ++r) {
      const auto ar = hn::Set(d32, a[r][k]);
      for (int v = 0; v < NV; ++v) {
        const auto p = hn::MulEven(ar, b[v]);
        w[r][v] = hn::Add(w[r][v], p);
        h[r][v] = hn::Add(h[r][v], high_half(d64, p));
      }
    }
  }
  HWY_ALIGN std::int64_t wl[HWY_MAX_BYTES / 8], hl[HWY_MAX_BYTES / 8];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) {
      hn::Store(w[r][v], d64, wl);
      hn::Store(h[r][v], d64, hl);
      const std::int64_t j0 = v * std::int64_t(n);
      const std::int64_t m = std::min<std::int64_t>(std::int64_t(n), ncols - j0);
      for (std::int64_t x = 0; x < m; ++x) c[r][j0 + x] = saturated_sum(wl[x], hl[x]);
    }
}

template <class D32, int MR, int NV = kNvS>
void tile_s32_nv(int nv, const std::int32_t* const* a, const std::int64_t* panel, std::int64_t K,
                 std::int32_t* const* c, std::int64_t ncols) {
  if constexpr (NV > 1)
    if (nv < NV) return tile_s32_nv<D32, MR, NV - 1>(nv, a, panel, K, c, ncols);
  tile_s32<D32, MR, NV>(a, panel, K, c, ncols);
}

template <class D32, int MR = kMrS>
void tile_s32_any(int mr, int nv, const std::int32_t* const* a, const std::int64_t* panel,
                  std::int64_t K, std::int32_t* const* c, std::int64_t ncols) {
  if constexpr (MR > 1)
    if (mr < MR) return tile_s32_any<D32, MR - 1>(mr, nv, a, panel, K, c, ncols);
  tile_s32_nv<D32, MR>(nv, a, panel, K, c, ncols);
}

// Panels of kNvS vectors of columns (the last one narrower, its last vector zero-padded),
// each packed for the whole K, then every kMrS rows of the band against it: the sums stay
// in registers from k = 0 to K.
template <class D32>
void matmul_s32(const ConstImageView& a, const ConstImageView& b, const ImageView& c, Rows rows) {
  const std::int64_t K = a.width(), N = b.width();
  if (K > (std::int64_t(1) << 32)) return ref::matmul(a, b, c, rows);  // L could reach 2^64
  const std::int64_t L = std::int64_t(hn::Lanes(hn::RepartitionToWide<D32>()));
  const std::int64_t pw = kNvS * L;
  Scratch<std::int64_t> packed(static_cast<std::size_t>(std::max<std::int64_t>(1, K * pw)));
  for (std::int64_t j0 = 0; j0 < N; j0 += pw) {
    const std::int64_t ncols = std::min(pw, N - j0);
    const int nv = int((ncols + L - 1) / L);
    const std::int64_t stride = nv * L;
    for (std::int64_t k = 0; k < K; ++k) {
      const std::int32_t* src = b.row<std::int32_t>(k) + j0;
      std::int64_t* out = packed.data() + k * stride;
      for (std::int64_t x = 0; x < ncols; ++x) out[x] = src[x];
      for (std::int64_t x = ncols; x < stride; ++x) out[x] = 0;
    }
    for (std::int64_t i = rows.begin; i < rows.end; i += kMrS) {
      const int mr = int(std::min<std::int64_t>(kMrS, rows.end - i));
      const std::int32_t* ar[kMrS];
      std::int32_t* cr[kMrS];
      for (int r = 0; r < mr; ++r) {
        ar[r] = a.row<std::int32_t>(i + r);
        cr[r] = c.row<std::int32_t>(i + r) + j0;
      }
      tile_s32_any<D32>(mr, nv, ar, packed.data(), K, cr, ncols);
    }
  }
}

}  // namespace
#endif

void dot_rows(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::dot(a, b, dst, rows);
#else
  const Df d;
  const std::int64_t n = std::int64_t(hn::Lanes(d)), w = dst.width();
  const std::int64_t done = w / n * n;
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const float* pa = a.row<float>(y);
    const float* pb = b.row<float>(y);
    float* o = dst.row<float>(y);
    for (std::int64_t x = 0; x < done; x += n) {
      hn::Vec<Df> a0, a1, a2, a3, b0, b1, b2, b3;
      hn::LoadInterleaved4(d, pa + 4 * x, a0, a1, a2, a3);
      hn::LoadInterleaved4(d, pb + 4 * x, b0, b1, b2, b3);
      const auto s = hn::Add(hn::Add(hn::Add(hn::Mul(a0, b0), hn::Mul(a1, b1)), hn::Mul(a2, b2)),
                             hn::Mul(a3, b3));
      hn::StoreU(s, d, o + x);
    }
  }
  if (done < w)
    ref::dot(a.roi(done, 0, w - done, a.height()), b.roi(done, 0, w - done, b.height()),
             dst.roi(done, 0, w - done, dst.height()), rows);
#endif
}

void matmul_rows(const ConstImageView& a, const ConstImageView& b, const ImageView& c, Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::matmul(a, b, c, rows);
#else
  if (a.depth() == Depth::f32 && HWY_MAX_BYTES > 32 && splits_512bit_ops())
    matmul_f32<Dhalf>(a, b, c, rows);
  else if (a.depth() == Depth::f32)
    matmul_f32<Dfull>(a, b, c, rows);
  else  // full width even where 512-bit operations split (Zen 4: 93 ms vs 166 at 1024^3)
    matmul_s32<Di32full>(a, b, c, rows);
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(dot_rows);
HWY_EXPORT(matmul_rows);

void dot(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, Rows rows) {
  HWY_DYNAMIC_DISPATCH(dot_rows)(a, b, dst, rows);
}
void matmul(const ConstImageView& a, const ConstImageView& b, const ImageView& c, Rows rows) {
  HWY_DYNAMIC_DISPATCH(matmul_rows)(a, b, c, rows);
}
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_linalg) {
  using pixflow::Depth;
  pixflow::cpu::add_banded<&pixflow::cpu::dot>(table, "dot",
                                               pixflow::detail::Support::of({Depth::f32}, {4}));
  pixflow::cpu::add_banded<&pixflow::cpu::matmul>(
      table, "matmul", pixflow::detail::Support::of({Depth::f32, Depth::s32}, {1}));
}
#endif
