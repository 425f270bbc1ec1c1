// SIMD transpose for the cpu backend: dst(x, y) = src(y, x), whole pixels (src/ref/transpose.cpp).
// Pixels of 1, 2, 4 or 8 bytes are moved as n x n blocks of 128-bit vectors (n = 16 / bytes)
// transposed in registers by the perfect shuffle: log2(n) rounds of "interleave vector i
// with vector i + n/2" (InterleaveLower / InterleaveUpper of the pixel-sized lanes) turn
// the n rows into the n columns. 16-byte pixels are one vector each; 3, 6 and 12-byte pixels
// are fixed-size copies in 32 x 32 tiles. Blocks are visited in tiles of kTile
// source rows so that the source lines a band of n destination rows reads stay in L1 for
// the next band. Bands are destination rows (= source columns).
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

// E: an unsigned integer of the pixel's size (1, 2, 4, 8 or 16 bytes as two u64).
template <class E, int kN>
void transpose_t(const ConstImageView& src, const ImageView& dst, Rows rows) {
  const hn::Full128<E> d;
  static_assert(kN * sizeof(E) == 16 || (kN == 1 && sizeof(E) == 8));
  constexpr std::size_t px = kN == 1 ? 16 : sizeof(E);
  const std::int64_t W = dst.width();  // = src.height()
  auto scalar = [&](std::int64_t y, std::int64_t x) {
    std::memcpy(dst.row_ptr(y) + std::size_t(x) * px, src.row_ptr(x) + std::size_t(y) * px, px);
  };
  for (std::int64_t t0 = 0; t0 < W; t0 += kTile) {
    const std::int64_t t1 = std::min(W, t0 + kTile);
    std::int64_t y0 = rows.begin;
    for (; y0 + kN <= rows.end; y0 += kN) {
      std::int64_t x0 = t0;
      for (; x0 + kN <= t1; x0 += kN) {
        if constexpr (kN == 1) {  // 16-byte pixels: one vector each
          const auto* s = reinterpret_cast<const E*>(src.row_ptr(x0) + std::size_t(y0) * px);
          hn::StoreU(hn::LoadU(d, s), d,
                     reinterpret_cast<E*>(dst.row_ptr(y0) + std::size_t(x0) * px));
        } else {
          hn::Vec<decltype(d)> v[kN], w[kN];
          for (int i = 0; i < kN; ++i)
            v[i] = hn::LoadU(d, reinterpret_cast<const E*>(src.row_ptr(x0 + i)) + y0);
          for (int round = 1; round < kN; round *= 2) {
            for (int i = 0; i < kN / 2; ++i) {
              w[2 * i] = hn::InterleaveLower(d, v[i], v[i + kN / 2]);
              w[2 * i + 1] = hn::InterleaveUpper(d, v[i], v[i + kN / 2]);
            }
            for (int i = 0; i < kN; ++i) v[i] = w[i];
          }
          for (int j = 0; j < kN; ++j)
            hn::StoreU(v[j], d, reinterpret_cast<E*>(dst.row_ptr(y0 + j)) + x0);
        }
      }
      for (; x0 < t1; ++x0)
        for (int j = 0; j < kN; ++j) scalar(y0 + j, x0);
    }
    for (; y0 < rows.end; ++y0)
      for (std::int64_t x = t0; x < t1; ++x) scalar(y0, x);
  }
}

// 3, 6 and 12-byte pixels: fixed-size copies in kSmall x kSmall tiles, so that the source
// lines a tile reads (kSmall rows of kSmall pixels) stay in L1 while its rows are written.
template <std::size_t px>
void transpose_tiled(const ConstImageView& src, const ImageView& dst, Rows rows) {
  constexpr std::int64_t kSmall = 32;
  const std::int64_t W = dst.width();
  for (std::int64_t y0 = rows.begin; y0 < rows.end; y0 += kSmall) {
    const std::int64_t y1 = std::min(rows.end, y0 + kSmall);
    for (std::int64_t x0 = 0; x0 < W; x0 += kSmall) {
      const std::int64_t x1 = std::min(W, x0 + kSmall);
      for (std::int64_t y = y0; y < y1; ++y) {
        std::byte* out = dst.row_ptr(y);
        for (std::int64_t x = x0; x < x1; ++x)
          std::memcpy(out + std::size_t(x) * px, src.row_ptr(x) + std::size_t(y) * px, px);
      }
    }
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
      return transpose_t<std::uint8_t, 16>(src, dst, rows);
    case 2:
      return transpose_t<std::uint16_t, 8>(src, dst, rows);
    case 4:
      return transpose_t<std::uint32_t, 4>(src, dst, rows);
    case 8:
      return transpose_t<std::uint64_t, 2>(src, dst, rows);
    case 16:
      return transpose_t<std::uint64_t, 1>(src, dst, rows);
    case 3:
      return transpose_tiled<3>(src, dst, rows);
    case 6:
      return transpose_tiled<6>(src, dst, rows);
    case 12:
      return transpose_tiled<12>(src, dst, rows);
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
