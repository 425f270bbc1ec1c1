// SIMD remap for the cpu backend: the rule of src/ref/remap.cpp (docs/ops/remap.md) on N
// destination pixels at a time. The maps are loaded as float lanes; x0 = Floor(mx) and
// fx = mx - x0 (exact), nearest adds 1 where fx >= 0.5 (the same as floor(mx + 0.5) taken
// exactly). When every lane's taps lie inside the source, they are gathered by 32-bit reads
// at byte offsets (u8/u16: one read holds p00 and p10 where both fit in 4 bytes, then masks
// and shifts; f32: one read per tap) and interpolated in float with the reference's
// multiplies and adds in its order (no FMA: -ffp-contract=off). A vector with any lane whose
// taps need the border, or a non-finite map value, goes to the reference over those N
// pixels, as does the row's tail. Sources whose byte offsets do not fit in int32 run the
// reference.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/remap.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
namespace {

using Df = hn::ScalableTag<float>;
using Di = hn::RebindToSigned<Df>;

// How a vector's taps are read (32-bit reads at byte offsets unless said):
//  - words: u8 with 3 or 4 channels: one read at a pixel holds its channels (p00 and p10
//    of every channel: two reads per source row);
//  - pair: u8x1, u16x1: one read at p00 holds p00 and p10;
//  - taps: u16 with 3 or 4 channels, f32: one read per tap and channel.
enum class Reads { words, pair, taps };

// Where a vector can be gathered without the border: x0 <= xmax and y0 <= ymax (and both
// >= 0), chosen so that every read ends inside its source row.
struct Geometry {
  const std::uint8_t* base = nullptr;
  std::int32_t stride = 0;  // bytes
  int ch = 1, sz = 1;
  Reads reads = Reads::taps;
  float xmax = -1, ymax = -1;
};

Geometry geometry(const ConstImageView& src, bool linear) {
  Geometry g;
  const std::int64_t sz = std::int64_t(depth_bytes(src.depth())), ch = src.channels();
  const std::int64_t pixel = ch * sz, row_bytes = src.width() * pixel;
  g.ch = int(ch);
  g.sz = int(sz);
  g.reads = sz == 1 && ch >= 3 ? Reads::words : pixel + sz <= 4 ? Reads::pair : Reads::taps;
  // Offsets are int32 lanes: the last row's last read must be addressable.
  if (src.stride() <= 0 || (src.height() - 1) * src.stride() + row_bytes + 8 > INT32_MAX) return g;
  g.base = reinterpret_cast<const std::uint8_t*>(src.data());
  g.stride = std::int32_t(src.stride());
  // The furthest byte a vector reads past its p00 pixel's first byte, and so the largest x0
  // whose reads end inside the row: x0 * pixel + reach <= row_bytes.
  std::int64_t reach = (ch - 1) * sz + 4;
  if (linear && g.reads == Reads::words)
    reach = 8;  // one 8-byte read per source row
  else if (linear && g.reads == Reads::taps)
    reach += pixel;  // p10 read on its own
  else if (g.reads == Reads::words)
    reach = 4;
  const std::int64_t room = row_bytes - reach;
  const std::int64_t xr = room < 0 ? -1 : room / pixel;
  const std::int64_t xmax = std::min(src.width() - (linear ? 2 : 1), xr);
  const std::int64_t ymax = src.height() - (linear ? 2 : 1);
  if (xmax < 0 || ymax < 0) return g;
  g.xmax = float(xmax);
  g.ymax = float(ymax);
  return g;
}

HWY_INLINE hn::Vec<Di> read32(const Geometry& g, hn::Vec<Di> off) {
  return hn::GatherOffset(Di(), reinterpret_cast<const std::int32_t*>(g.base), off);
}

// Two 32-bit reads per lane, 8 bytes at each offset, loaded one lane at a time (measured
// faster than two gathers on Zen 4): lo = bytes [0, 4), hi = bytes [4, 8).
HWY_INLINE void read64(const Geometry& g, hn::Vec<Di> off, hn::Vec<Di>& lo, hn::Vec<Di>& hi) {
  const Di di;
  const std::size_t n = hn::Lanes(di);
  HWY_ALIGN std::int32_t o[hn::MaxLanes(di)], v[2 * hn::MaxLanes(di)];
  hn::Store(off, di, o);
  for (std::size_t i = 0; i < n; ++i) std::memcpy(&v[2 * i], g.base + o[i], 8);
  const auto a = hn::Load(di, v), b = hn::Load(di, v + n);
  lo = hn::ConcatEven(di, b, a);
  hi = hn::ConcatOdd(di, b, a);
}

// Bits [shift, shift + 8 * sizeof(T)) of each lane of w, as float lanes.
template <class T>
HWY_INLINE hn::Vec<Df> field(hn::Vec<Di> w, int shift) {
  const Di di;
  const auto mask = hn::Set(di, std::int32_t(T(~T(0))));
  return hn::ConvertTo(Df(), hn::And(shift ? hn::ShiftRightSame(w, shift) : w, mask));
}

// The reference's bilinear expression, in its order.
HWY_INLINE hn::Vec<Df> lerp2(hn::Vec<Df> fx, hn::Vec<Df> fy, hn::Vec<Df> p00, hn::Vec<Df> p10,
                             hn::Vec<Df> p01, hn::Vec<Df> p11) {
  const auto one = hn::Set(Df(), 1.0f), gx = hn::Sub(one, fx);
  const auto top = hn::Add(hn::Mul(gx, p00), hn::Mul(fx, p10));
  const auto bottom = hn::Add(hn::Mul(gx, p01), hn::Mul(fx, p11));
  return hn::Add(hn::Mul(hn::Sub(one, fy), top), hn::Mul(fy, bottom));
}

// saturate_cast<T> of a linear result: round half to even. No clamp is needed: the weights
// are in [0, 1] and sum to 1, so with samples in [0, M] each rounded product and sum stays
// within M * (1 + 3 * 2^-24) < M + 0.5 (M <= 65535), which rounds to at most M.
template <class T>
HWY_INLINE hn::Vec<Di> to_int(hn::Vec<Df> v) {
  return hn::NearestInt(v);
}

// Channel c of the vector at `off` (p00's first byte) as float lanes: the sample, or the
// bilinear result.
template <class T>
HWY_INLINE hn::Vec<Df> channel(const Geometry& g, hn::Vec<Di> off, int c, bool linear,
                               hn::Vec<Df> fx, hn::Vec<Df> fy) {
  const Di di;
  const auto o = hn::Add(off, hn::Set(di, c * g.sz));
  const auto below = hn::Add(o, hn::Set(di, g.stride));
  const auto right = hn::Set(di, g.ch * g.sz);
  auto sample = [&](hn::Vec<Di> at) {
    if constexpr (std::is_same_v<T, float>)
      return hn::GatherOffset(Df(), reinterpret_cast<const float*>(g.base), at);
    else
      return field<T>(read32(g, at), 0);
  };
  if (!linear) return sample(o);
  if constexpr (!std::is_same_v<T, float>) {
    if (g.reads == Reads::pair) {
      const int s = g.ch * g.sz * 8;
      const auto top = read32(g, o), bottom = read32(g, below);
      return lerp2(fx, fy, field<T>(top, 0), field<T>(top, s), field<T>(bottom, 0),
                   field<T>(bottom, s));
    }
  }
  return lerp2(fx, fy, sample(o), sample(hn::Add(o, right)), sample(below),
               sample(hn::Add(below, right)));
}

// One destination row: x in [0, w). `slow(x, n)` runs the reference on n pixels at x.
template <class T, class Slow>
void remap_row(const Geometry& g, const float* mxr, const float* myr, T* out, std::int64_t w,
               bool linear, Slow&& slow) {
  const Df df;
  const Di di;
  const std::int64_t n = std::int64_t(hn::Lanes(df));
  const int ch = g.ch;
  HWY_ALIGN std::int32_t res[4][hn::MaxLanes(di)];
  const auto zero = hn::Zero(df), one = hn::Set(df, 1.0f), half = hn::Set(df, 0.5f);
  const auto xmax = hn::Set(df, g.xmax), ymax = hn::Set(df, g.ymax);
  const auto stride = hn::Set(di, g.stride), pixel = hn::Set(di, ch * g.sz);
  std::int64_t x = 0;
  for (; x + n <= w; x += n) {
    const auto mx = hn::LoadU(df, mxr + x), my = hn::LoadU(df, myr + x);
    auto x0 = hn::Floor(mx), y0 = hn::Floor(my);
    const auto fx = hn::Sub(mx, x0), fy = hn::Sub(my, y0);
    if (!linear) {  // floor(m + 0.5) = floor(m) + (m - floor(m) >= 0.5), exactly
      x0 = hn::Add(x0, hn::IfThenElseZero(hn::Ge(fx, half), one));
      y0 = hn::Add(y0, hn::IfThenElseZero(hn::Ge(fy, half), one));
    }
    // NaN and infinities fail these comparisons too.
    const auto inside = hn::And(hn::And(hn::Ge(x0, zero), hn::Le(x0, xmax)),
                                hn::And(hn::Ge(y0, zero), hn::Le(y0, ymax)));
    if (!hn::AllTrue(df, inside)) {
      slow(x, n);
      continue;
    }
    const auto off =
        hn::Add(hn::Mul(hn::ConvertTo(di, y0), stride), hn::Mul(hn::ConvertTo(di, x0), pixel));
    T* o = out + x * ch;
    if constexpr (std::is_same_v<T, std::uint8_t>) {
      if (g.reads == Reads::words) {  // u8x3, u8x4: whole pixels per read, packed results
        auto packed = hn::Zero(di);
        if (!linear) {
          packed = read32(g, off);
        } else {
          hn::Vec<Di> t[2], b[2];  // bytes [0, 8) of p00's pixel in rows y0, y0 + 1
          read64(g, off, t[0], t[1]);
          read64(g, hn::Add(off, stride), b[0], b[1]);
          for (int c = 0; c < ch; ++c) {  // p10's sample c is byte ch + c
            const int s0 = 8 * c, w1 = (ch + c) / 4, s1 = 8 * ((ch + c) % 4);
            const auto v = lerp2(fx, fy, field<T>(t[0], s0), field<T>(t[w1], s1),
                                 field<T>(b[0], s0), field<T>(b[w1], s1));
            packed = hn::Or(packed, hn::ShiftLeftSame(to_int<T>(v), s0));
          }
        }
        hn::Store(packed, di, res[0]);
        if (ch == 4) {
          std::memcpy(o, res[0], std::size_t(n) * 4);
        } else {  // 4-byte copies 3 bytes apart; the last pixel's fourth byte is not ours
          for (std::int64_t i = 0; i + 1 < n; ++i) std::memcpy(o + 3 * i, &res[0][i], 4);
          std::memcpy(o + 3 * (n - 1), &res[0][n - 1], 3);
        }
        continue;
      }
    }
    for (int c = 0; c < ch; ++c) {
      auto v = channel<T>(g, off, c, linear, fx, fy);
      if constexpr (std::is_same_v<T, float>) {
        // nearest: the reference passes a sample through double, which quiets a signalling
        // NaN; 1 * v does the same and keeps every other value's bits.
        if (!linear) v = hn::Mul(v, one);
        if (ch == 1) {
          hn::StoreU(v, df, o);
          continue;
        }
        hn::Store(hn::BitCast(di, v), di, res[c]);
      } else {
        const auto iv = linear ? to_int<T>(v) : hn::ConvertTo(di, v);
        if (ch == 1) {
          const hn::Rebind<T, Di> dt;
          hn::StoreU(hn::DemoteTo(dt, iv), dt, o);  // in T's range: no saturation
          continue;
        }
        hn::Store(iv, di, res[c]);
      }
    }
    if (ch > 1)
      for (std::int64_t i = 0; i < n; ++i)
        for (int c = 0; c < ch; ++c) {
          if constexpr (std::is_same_v<T, float>)
            std::memcpy(o + i * ch + c, &res[c][i], 4);
          else
            o[i * ch + c] = T(res[c][i]);
        }
  }
  if (x < w) slow(x, w - x);
}

template <class T>
void remap_t(const ConstImageView& src, const ConstImageView& map_x, const ConstImageView& map_y,
             const ImageView& dst, const RemapParams& p, Rows rows) {
  const bool linear = p.interp == Interp::linear;
  const Geometry g = geometry(src, linear);
  if (g.base == nullptr || g.xmax < 0) {  // no vector can take the fast path
    ref::remap(src, map_x, map_y, dst, p, rows);
    return;
  }
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    remap_row<T>(g, map_x.row<float>(y), map_y.row<float>(y), dst.row<T>(y), dst.width(), linear,
                 [&](std::int64_t x, std::int64_t n) {
                   ref::remap(src, map_x.roi(x, y, n, 1), map_y.roi(x, y, n, 1),
                              dst.roi(x, y, n, 1), p, Rows{0, 1});
                 });
  }
}

}  // namespace
#endif

void remap_rows(const ConstImageView& src, const ConstImageView& map_x, const ConstImageView& map_y,
                const ImageView& dst, const RemapParams& p, Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::remap(src, map_x, map_y, dst, p, rows);
#else
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(
      src.depth(), [&](auto t) { remap_t<decltype(t)>(src, map_x, map_y, dst, p, rows); });
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(remap_rows);

void remap(const ConstImageView& src, const ConstImageView& map_x, const ConstImageView& map_y,
           const ImageView& dst, const RemapParams& p, Rows rows) {
  HWY_DYNAMIC_DISPATCH(remap_rows)(src, map_x, map_y, dst, p, rows);
}
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_remap) {
  using pixflow::Depth;
  pixflow::cpu::add_banded<&pixflow::cpu::remap>(
      table, "remap", pixflow::detail::Support::of({Depth::u8, Depth::u16, Depth::f32}, {1, 3, 4}));
}
#endif
