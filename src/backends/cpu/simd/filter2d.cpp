// SIMD filter2d for the cpu backend: the rule of src/ref/filter2d.cpp (float sum from 0.0f
// over the taps in row-major order, no FMA, + float(delta); u8 rounds half to even and
// saturates) on N outputs at a time. Channels are interleaved and filtered independently,
// so a row is one line of w*ch samples whose taps are ch samples apart: the kernel runs
// over samples, whatever the channel count. Source rows are padded in x by the border rule
// (pad_row) and converted to float once, into a ring of kh rows; each pass over the taps
// feeds 4 vectors of outputs (register blocking), the tap order per output being the
// reference's. The last samples of a row (fewer than a vector) run the same float
// arithmetic one at a time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/filter2d.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstdint>
#include <type_traits>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
using DF = hn::ScalableTag<float>;

// u8: saturate_cast<u8>(double(v)) = NaN -> 0, else rint and clamp to [0, 255].
HWY_INLINE void store_out(DF df, hn::Vec<DF> v, std::uint8_t* d) {
  const hn::Rebind<std::uint8_t, DF> d8;
  v = hn::IfThenElseZero(hn::Eq(v, v), v);
  v = hn::Min(hn::Max(v, hn::Zero(df)), hn::Set(df, 255.0f));
  hn::StoreU(hn::DemoteTo(d8, hn::NearestInt(v)), d8, d);
}
HWY_INLINE void store_out(DF df, hn::Vec<DF> v, float* d) {
  hn::StoreU(v, df, d);
}

template <class T>
void run(const ConstImageView& src, const ImageView& dst, const Filter2dParams& p, Rows rows) {
  const DF df;
  const std::int64_t N = std::int64_t(hn::Lanes(df));
  const int ch = src.channels(), kw = p.kw, kh = p.kh, ax = kw / 2, ay = kh / 2;
  const std::int64_t w = src.width(), h = src.height(), n_out = w * ch;
  const std::int64_t pw = (w + kw - 1) * ch;        // padded samples per row
  const std::int64_t stride = (pw + 15) / 16 * 16;  // floats per ring slot (64-byte aligned)
  const T cval = detail::saturate_cast<T>(p.border.value);
  const float delta = float(p.delta);
  const float* k = p.kernel.data();

  Scratch<float> ring(std::size_t(stride * kh));
  Scratch<T> raw(std::is_same_v<T, float> ? 0 : std::size_t(pw));
  std::int64_t next = rows.begin - ay;  // next padded source row to fill
  auto slot = [&](std::int64_t yy) { return ring.data() + ((yy % kh) + kh) % kh * stride; };
  auto fill = [&](std::int64_t yy) {
    const std::int64_t sy = detail::border_index(yy, h, p.border.type);
    float* o = slot(yy);
    if constexpr (std::is_same_v<T, float>) {
      pad_row<float>(src, sy, ax, kw - 1 - ax, p.border, cval, o);
    } else {
      pad_row<T>(src, sy, ax, kw - 1 - ax, p.border, cval, raw.data());
      const hn::Rebind<T, DF> dt;
      const hn::Rebind<std::int32_t, DF> di;
      std::int64_t i = 0;
      for (; i + N <= pw; i += N)
        hn::Store(hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(dt, raw.data() + i))), df, o + i);
      for (; i < pw; ++i) o[i] = float(raw[std::size_t(i)]);
    }
  };

  const float* rp[15];
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    for (; next < y - ay + kh; ++next) fill(next);
    for (int r = 0; r < kh; ++r) rp[r] = slot(y - ay + r);
    T* out = dst.row<T>(y);
    std::int64_t i = 0;
    for (; i + 4 * N <= n_out; i += 4 * N) {
      auto a0 = hn::Zero(df), a1 = hn::Zero(df), a2 = hn::Zero(df), a3 = hn::Zero(df);
      for (int r = 0, t = 0; r < kh; ++r) {
        const float* s = rp[r] + i;
        for (int q = 0; q < kw; ++q, ++t, s += ch) {
          const auto kv = hn::Set(df, k[t]);
          a0 = hn::Add(a0, hn::Mul(kv, hn::LoadU(df, s)));
          a1 = hn::Add(a1, hn::Mul(kv, hn::LoadU(df, s + N)));
          a2 = hn::Add(a2, hn::Mul(kv, hn::LoadU(df, s + 2 * N)));
          a3 = hn::Add(a3, hn::Mul(kv, hn::LoadU(df, s + 3 * N)));
        }
      }
      const auto dv = hn::Set(df, delta);
      store_out(df, hn::Add(a0, dv), out + i);
      store_out(df, hn::Add(a1, dv), out + i + N);
      store_out(df, hn::Add(a2, dv), out + i + 2 * N);
      store_out(df, hn::Add(a3, dv), out + i + 3 * N);
    }
    for (; i + N <= n_out; i += N) {
      auto a0 = hn::Zero(df);
      for (int r = 0, t = 0; r < kh; ++r) {
        const float* s = rp[r] + i;
        for (int q = 0; q < kw; ++q, ++t, s += ch)
          a0 = hn::Add(a0, hn::Mul(hn::Set(df, k[t]), hn::LoadU(df, s)));
      }
      store_out(df, hn::Add(a0, hn::Set(df, delta)), out + i);
    }
    for (; i < n_out; ++i) {  // the reference's arithmetic, one sample at a time
      float sum = 0.0f;
      for (int r = 0, t = 0; r < kh; ++r)
        for (int q = 0; q < kw; ++q, ++t) sum += k[t] * rp[r][i + q * ch];
      sum += delta;
      out[i] = detail::saturate_cast<T>(double(sum));
    }
  }
}
#endif

void filter2d_rows(const ConstImageView& src, const ImageView& dst, const Filter2dParams& p,
                   Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::filter2d(src, dst, p, rows);
#else
  if (src.depth() == Depth::u8)
    run<std::uint8_t>(src, dst, p, rows);
  else
    run<float>(src, dst, p, rows);
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(filter2d_rows);

void filter2d(const ConstImageView& src, const ImageView& dst, const Filter2dParams& p, Rows rows) {
  HWY_DYNAMIC_DISPATCH(filter2d_rows)(src, dst, p, rows);
}
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_filter2d) {
  using pixflow::Depth;
  pixflow::cpu::add_banded<&pixflow::cpu::filter2d>(
      table, "filter2d", pixflow::detail::Support::of({Depth::u8, Depth::f32}, {1, 2, 3, 4}));
}
#endif
