// SIMD transpose for the cpu backend: dst(x, y) = src(y, x), whole pixels (src/ref/transpose.cpp).
// Pixels of 1, 2, 4 or 8 bytes are moved as n x n blocks of 128-bit vectors (n = 16 / bytes)
// transposed in registers by the perfect shuffle: log2(n) rounds of "interleave vector i
// with vector i + n/2" (InterleaveLower / InterleaveUpper of the pixel-sized lanes) turn
// the n rows into the n columns. Pixels of 3 channels of 1, 2 or 4 bytes are split into
// three planes on the load (LoadInterleaved3), each plane's block is transposed the same
// way, and StoreInterleaved3 joins them again. 16-byte pixels are one vector each; other
// sizes go to the reference. Blocks are visited in tiles of kTile source rows so that the
// source lines a band of n destination rows reads stay in L1 for the next band. Bands are
// destination rows (= source columns).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/transpose.cpp"
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
namespace {

constexpr std::int64_t kTile = 128;  // source rows per tile

// The perfect shuffle on an n x n block of E lanes: rows in, columns out.
template <int kN, class V>
HWY_INLINE void transpose_block(V* v) {
  const hn::DFromV<V> d;
  V w[kN];
  for (int round = 1; round < kN; round *= 2) {
    for (int i = 0; i < kN / 2; ++i) {
      w[2 * i] = hn::InterleaveLower(d, v[i], v[i + kN / 2]);
      w[2 * i + 1] = hn::InterleaveUpper(d, v[i], v[i + kN / 2]);
    }
    for (int i = 0; i < kN; ++i) v[i] = w[i];
  }
}

// E: an unsigned integer of the channel's size (or of the pixel's for kC = 1: 1, 2, 4, 8 or
// 16 bytes as two u64); kC: 1, or 3 for three interleaved channels of E.
template <class E, int kN, int kC>
void transpose_t(const ConstImageView& src, const ImageView& dst, Rows rows) {
  const hn::Full128<E> d;
  static_assert(kN * sizeof(E) == 16 || (kN == 1 && sizeof(E) == 8 && kC == 1));
  static_assert(kC == 1 || kC == 3);
  constexpr std::size_t px = kN == 1 ? 16 : sizeof(E) * kC;
  const std::int64_t W = dst.width();  // = src.height()
  auto scalar = [&](std::int64_t y, std::int64_t x) {
    std::memcpy(dst.row_ptr(y) + std::size_t(x) * px, src.row_ptr(x) + std::size_t(y) * px, px);
  };
  auto in = [&](std::int64_t y, std::int64_t x) {
    return reinterpret_cast<const E*>(src.row_ptr(y) + std::size_t(x) * px);
  };
  auto out = [&](std::int64_t y, std::int64_t x) {
    return reinterpret_cast<E*>(dst.row_ptr(y) + std::size_t(x) * px);
  };
  for (std::int64_t t0 = 0; t0 < W; t0 += kTile) {
    const std::int64_t t1 = std::min(W, t0 + kTile);
    std::int64_t y0 = rows.begin;
    for (; y0 + kN <= rows.end; y0 += kN) {
      std::int64_t x0 = t0;
      for (; x0 + kN <= t1; x0 += kN) {
        if constexpr (kN == 1) {  // 16-byte pixels: one vector each
          hn::StoreU(hn::LoadU(d, in(x0, y0)), d, out(y0, x0));
        } else if constexpr (kC == 1) {
          hn::Vec<decltype(d)> v[kN];
          for (int i = 0; i < kN; ++i) v[i] = hn::LoadU(d, in(x0 + i, y0));
          transpose_block<kN>(v);
          for (int j = 0; j < kN; ++j) hn::StoreU(v[j], d, out(y0 + j, x0));
        } else {
          hn::Vec<decltype(d)> a[kN], b[kN], c[kN];
          for (int i = 0; i < kN; ++i) hn::LoadInterleaved3(d, in(x0 + i, y0), a[i], b[i], c[i]);
          transpose_block<kN>(a);
          transpose_block<kN>(b);
          transpose_block<kN>(c);
          for (int j = 0; j < kN; ++j) hn::StoreInterleaved3(a[j], b[j], c[j], d, out(y0 + j, x0));
        }
      }
      for (; x0 < t1; ++x0)
        for (int j = 0; j < kN; ++j) scalar(y0 + j, x0);
    }
    for (; y0 < rows.end; ++y0)
      for (std::int64_t x = t0; x < t1; ++x) scalar(y0, x);
  }
}

}  // namespace
#endif

void transpose_rows(const ConstImageView& src, const ImageView& dst, Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::transpose(src, dst, rows);
#else
  switch (src.format().pixel_bytes()) {
    case 1:
      return transpose_t<std::uint8_t, 16, 1>(src, dst, rows);
    case 2:
      return transpose_t<std::uint16_t, 8, 1>(src, dst, rows);
    case 4:
      return transpose_t<std::uint32_t, 4, 1>(src, dst, rows);
    case 8:
      return transpose_t<std::uint64_t, 2, 1>(src, dst, rows);
    case 16:
      return transpose_t<std::uint64_t, 1, 1>(src, dst, rows);
    case 3:
      return transpose_t<std::uint8_t, 16, 3>(src, dst, rows);
    case 6:
      return transpose_t<std::uint16_t, 8, 3>(src, dst, rows);
    case 12:
      return transpose_t<std::uint32_t, 4, 3>(src, dst, rows);
    default:
      return ref::transpose(src, dst, rows);
  }
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(transpose_rows);

void transpose(const ConstImageView& src, const ImageView& dst, Rows rows) {
  HWY_DYNAMIC_DISPATCH(transpose_rows)(src, dst, rows);
}
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_transpose) {
  using pixflow::Depth;
  pixflow::cpu::add_banded<&pixflow::cpu::transpose>(
      table, "transpose",
      pixflow::detail::Support::of({Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32}));
}
#endif
