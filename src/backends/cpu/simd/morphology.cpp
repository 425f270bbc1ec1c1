// SIMD dilate/erode pass (morph_pass) for the cpu backend, u8/u16/f32, any channel count.
// The reference (src/ref/morphology.cpp) takes the extreme over the kw x kh window, samples
// outside by the border rule, the constant border contributing its value: exactly the
// extreme over padded rows (pad_row), which is what this computes, separably:
//   vertical: output rows are taken in pairs; the kh - 1 window rows the two share are
//     reduced once, then each output adds its own first or last row: (kh + 1) / 2 Max per
//     sample per output row instead of kh - 1;
//   horizontal: kw - 1 Max of shifted unaligned loads per vector of outputs.
// Both on full vectors (32 u8 lanes on AVX2, 64 on AVX-512). Max/Min are exact; for f32
// the reference's std::max/std::min and Highway's Max/Min agree on every non-NaN input.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/morphology.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
template <class T>
void morph_t(const ConstImageView& src, const ImageView& dst, const detail::MorphPass& m,
             Rows rows) {
  const hn::ScalableTag<T> d;
  const std::int64_t lanes = std::int64_t(hn::Lanes(d));
  const bool is_max = m.op == MorphOp::dilate;
  auto pick = [is_max](auto a, auto b) { return is_max ? hn::Max(a, b) : hn::Min(a, b); };
  const int ch = src.channels();
  const std::int64_t w = src.width(), h = src.height();
  const std::int64_t row_n = w * ch, pad_n = (w + m.kw - 1) * ch;
  const std::int64_t stride = (pad_n + lanes - 1) / lanes * lanes + lanes;
  const T cval = detail::saturate_cast<T>(m.border.value);

  // A ring of kh + 1 padded rows (window rows of two consecutive outputs), the shared
  // vertical extreme, the vertical extreme of one output row, and one output row.
  const int ring_n = m.kh + 1;
  Scratch<T> ring{std::size_t(ring_n * stride)};
  Scratch<T> shared{std::size_t(stride)}, col{std::size_t(stride)}, out{std::size_t(stride)};
  std::memset(ring.data(), 0, ring.size() * sizeof(T));
  std::memset(shared.data(), 0, shared.size() * sizeof(T));
  std::memset(col.data(), 0, col.size() * sizeof(T));
  std::int64_t next_row = rows.begin - m.ay;  // first window row not in the ring yet
  auto slot = [&](std::int64_t v) {
    const std::int64_t r = ((v % ring_n) + ring_n) % ring_n;
    return ring.data() + r * stride;
  };
  auto need = [&](std::int64_t last) {
    for (; next_row <= last; ++next_row)
      pad_row<T>(src, detail::border_index(next_row, h, m.border.type), m.ax, m.kw - 1 - m.ax,
                 m.border, cval, slot(next_row));
  };
  // out = extreme of rows [first, first + count) of the ring, or with `base` as well.
  std::vector<const T*> rp(std::size_t(ring_n) + 1);
  auto reduce = [&](T* o, std::int64_t first, int count, const T* base) {
    int n = 0;
    if (base) rp[std::size_t(n++)] = base;
    for (int j = 0; j < count; ++j) rp[std::size_t(n++)] = slot(first + j);
    const T* const* r = rp.data();
    for (std::int64_t e = 0; e < pad_n; e += lanes) {
      auto acc = hn::Load(d, r[0] + e);
      for (int j = 1; j < n; ++j) acc = pick(acc, hn::Load(d, r[j] + e));
      hn::Store(acc, d, o + e);
    }
  };
  // Full vectors straight into the destination row; the last partial one through `out`.
  auto horizontal = [&](const T* c, std::int64_t y) {
    T* row = dst.row<T>(y);
    std::int64_t e = 0;
    for (; e + lanes <= row_n; e += lanes) {
      auto acc = hn::LoadU(d, c + e);
      for (int i = 1; i < m.kw; ++i) acc = pick(acc, hn::LoadU(d, c + e + i * ch));
      hn::StoreU(acc, d, row + e);
    }
    if (e < row_n) {
      auto acc = hn::LoadU(d, c + e);
      for (int i = 1; i < m.kw; ++i) acc = pick(acc, hn::LoadU(d, c + e + i * ch));
      hn::Store(acc, d, out.data());
      std::memcpy(row + e, out.data(), std::size_t(row_n - e) * sizeof(T));
    }
  };

  for (std::int64_t y = rows.begin; y < rows.end; y += 2) {
    const std::int64_t top = y - m.ay;  // first window row of output y
    if (y + 1 < rows.end && m.kh > 1) {
      need(top + m.kh);
      reduce(shared.data(), top + 1, m.kh - 1, nullptr);  // rows both outputs share
      reduce(col.data(), top, 1, shared.data());
      horizontal(col.data(), y);
      reduce(col.data(), top + m.kh, 1, shared.data());
      horizontal(col.data(), y + 1);
    } else {
      need(top + m.kh - 1);
      reduce(col.data(), top, m.kh, nullptr);
      horizontal(col.data(), y);
      if (y + 1 < rows.end) {  // kh == 1: the next row alone
        need(top + 1);
        reduce(col.data(), top + 1, 1, nullptr);
        horizontal(col.data(), y + 1);
      }
    }
  }
}
#endif

void morph_rows(const ConstImageView& src, const ImageView& dst, const detail::MorphPass& m,
                Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::morph_pass(src, dst, m, rows);
#else
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(
      src.depth(), [&](auto t) { morph_t<decltype(t)>(src, dst, m, rows); });
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(morph_rows);

void morph_pass(const ConstImageView& src, const ImageView& dst, const detail::MorphPass& m,
                Rows rows) {
  HWY_DYNAMIC_DISPATCH(morph_rows)(src, dst, m, rows);
}
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_morphology) {
  using pixflow::Depth;
  pixflow::cpu::add_banded<&pixflow::cpu::morph_pass>(
      table, "morph_pass", pixflow::detail::Support::of({Depth::u8, Depth::u16, Depth::f32}));
}
#endif
