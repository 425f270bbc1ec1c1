// SIMD add, sub, absdiff, mul (image-image and image-scalar) for the cpu backend, the rules
// of src/base/pointwise.hpp (docs/ops/arith.md), bit for bit:
//  - image-image, u8/u16/s16: saturating integer vectors (SaturatedAdd/Sub; absdiff as
//    max - min, saturated for s16; mul widened to 32 bits, clamped, narrowed) — the exact
//    result saturated, as the reference's int64 arithmetic;
//  - image-image, f32: one float operation per sample (absdiff: |a - b|, Abs clears the sign
//    as fabsf does);
//  - image-scalar: the reference computes in double: double lanes here too (the sample
//    widened exactly, one double operation, then round half to even and saturate, or
//    round to float), see double_lanes-inl.hpp.
//  - image-image, s32: add and sub wrap in 32 bits and take the saturated value where the
//    operands' signs show an overflow (exactly where the int64 result leaves the range);
//    absdiff is max - min as an unsigned 32-bit value (< 2^32, exact), clamped to INT32_MAX;
//    mul multiplies in double lanes: the product of two int32 is exact in double when its
//    magnitude is below 2^53 and rounds to >= 2^53 otherwise, so clamping the double to the
//    s32 range saturates exactly as the int64 product does.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/arith.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/base/pointwise.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

#include "src/backends/cpu/simd/double_lanes-inl.hpp"
#include "src/backends/cpu/simd/store_out-inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
namespace {

// Integer image-image on full vectors of T (u8, u16, s16).
template <class T>
void ab_int(const T* a, const T* b, T* out, std::int64_t n, ArithOp op, bool stream) {
  const hn::ScalableTag<T> d;
  const std::int64_t N = std::int64_t(hn::Lanes(d));
  std::int64_t i = 0;
  switch (op) {
    case ArithOp::add:
      for (; i + N <= n; i += N)
        StoreOut(hn::SaturatedAdd(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i, stream);
      break;
    case ArithOp::sub:
      for (; i + N <= n; i += N)
        StoreOut(hn::SaturatedSub(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i, stream);
      break;
    case ArithOp::absdiff:
      for (; i + N <= n; i += N) {
        const auto x = hn::LoadU(d, a + i), y = hn::LoadU(d, b + i);
        StoreOut(hn::SaturatedSub(hn::Max(x, y), hn::Min(x, y)), d, out + i, stream);
      }
      break;
    case ArithOp::mul:
      if constexpr (std::is_same_v<T, std::uint8_t>) {
        // Products <= 255^2 in u16 lanes, clamped, narrowed by a signed 16-bit pack.
        const hn::ScalableTag<std::uint16_t> d16;
        const hn::ScalableTag<std::int16_t> di16;
        const hn::Rebind<std::uint8_t, decltype(d16)> d8;
        const std::int64_t M = std::int64_t(hn::Lanes(d16));
        for (; i + M <= n; i += M) {
          const auto p = hn::Min(hn::Mul(hn::PromoteTo(d16, hn::LoadU(d8, a + i)),
                                         hn::PromoteTo(d16, hn::LoadU(d8, b + i))),
                                 hn::Set(d16, std::uint16_t(255)));
          StoreOut(hn::DemoteTo(d8, hn::BitCast(di16, p)), d8, out + i, stream);
        }
      } else {
        // Products in 32-bit lanes: u16 as u32 (<= 65535^2 < 2^32) clamped unsigned, s16
        // as i32 (|p| <= 2^30) narrowed with signed saturation.
        const hn::ScalableTag<std::int32_t> d32;
        const hn::ScalableTag<std::uint32_t> du32;
        const hn::Rebind<T, decltype(d32)> dh;
        const std::int64_t H = std::int64_t(hn::Lanes(dh));
        for (; i + H <= n; i += H) {
          const auto x = hn::PromoteTo(d32, hn::LoadU(dh, a + i));
          const auto y = hn::PromoteTo(d32, hn::LoadU(dh, b + i));
          if constexpr (std::is_same_v<T, std::uint16_t>) {
            const auto p =
                hn::Min(hn::Mul(hn::BitCast(du32, x), hn::BitCast(du32, y)), hn::Set(du32, 65535u));
            StoreOut(hn::DemoteTo(dh, hn::BitCast(d32, p)), dh, out + i, stream);
          } else {
            StoreOut(hn::DemoteTo(dh, hn::Mul(x, y)), dh, out + i, stream);
          }
        }
      }
      break;
  }
  for (; i < n; ++i) out[i] = detail::arith_apply<T>(a[i], b[i], op);
}

void ab_s32(const std::int32_t* a, const std::int32_t* b, std::int32_t* out, std::int64_t n,
            ArithOp op, bool stream) {
  const hn::ScalableTag<std::int32_t> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const std::int64_t N = std::int64_t(hn::Lanes(d));
  const auto vmax = hn::Set(d, INT32_MAX);
  std::int64_t i = 0;
  switch (op) {
    case ArithOp::add:
    case ArithOp::sub: {
      const bool add = op == ArithOp::add;
      for (; i + N <= n; i += N) {
        const auto x = hn::LoadU(d, a + i), y = hn::LoadU(d, b + i);
        // Wrapping sum or difference; an overflow gives a result whose sign differs from
        // x's where y's sign equals x's (add) or differs from it (sub).
        const auto r = hn::BitCast(d, add ? hn::Add(hn::BitCast(du, x), hn::BitCast(du, y))
                                          : hn::Sub(hn::BitCast(du, x), hn::BitCast(du, y)));
        const auto ovf =
            add ? hn::And(hn::Xor(x, r), hn::Xor(y, r)) : hn::And(hn::Xor(x, y), hn::Xor(x, r));
        const auto sat = hn::Xor(hn::ShiftRight<31>(x), vmax);  // x < 0: INT32_MIN
        StoreOut(hn::IfThenElse(hn::Lt(ovf, hn::Zero(d)), sat, r), d, out + i, stream);
      }
      break;
    }
    case ArithOp::absdiff:
      for (; i + N <= n; i += N) {
        const auto x = hn::LoadU(d, a + i), y = hn::LoadU(d, b + i);
        const auto r = hn::Sub(hn::BitCast(du, hn::Max(x, y)), hn::BitCast(du, hn::Min(x, y)));
        StoreOut(hn::BitCast(d, hn::Min(r, hn::BitCast(du, vmax))), d, out + i, stream);
      }
      break;
    case ArithOp::mul: {
      const Dd dd;
      const std::int64_t M = std::int64_t(hn::Lanes(dd));
      for (; i + M <= n; i += M)
        store_double(hn::Mul(load_double(a + i), load_double(b + i)), out + i, stream);
      break;
    }
  }
  for (; i < n; ++i) out[i] = detail::arith_apply<std::int32_t>(a[i], b[i], op);
}

void ab_f32(const float* a, const float* b, float* out, std::int64_t n, ArithOp op, bool stream) {
  const hn::ScalableTag<float> d;
  const std::int64_t N = std::int64_t(hn::Lanes(d));
  std::int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto x = hn::LoadU(d, a + i), y = hn::LoadU(d, b + i);
    hn::Vec<decltype(d)> r;
    switch (op) {
      case ArithOp::add:
        r = hn::Add(x, y);
        break;
      case ArithOp::sub:
        r = hn::Sub(x, y);
        break;
      case ArithOp::absdiff:
        r = hn::Abs(hn::Sub(x, y));
        break;
      case ArithOp::mul:
      default:
        r = hn::Mul(x, y);
        break;
    }
    StoreOut(r, d, out + i, stream);
  }
  for (; i < n; ++i) out[i] = detail::arith_apply<float>(a[i], b[i], op);
}

template <class T>
void av_t(const T* a, double v, T* out, std::int64_t n, ArithOp op, bool stream) {
  const Dd d;
  const auto vv = hn::Set(d, v);
  auto f = [&](hn::Vec<Dd> x) {
    switch (op) {
      case ArithOp::add:
        return hn::Add(x, vv);
      case ArithOp::sub:
        return hn::Sub(x, vv);
      case ArithOp::absdiff:
        return hn::Abs(hn::Sub(x, vv));
      case ArithOp::mul:
      default:
        return hn::Mul(x, vv);
    }
  };
  const std::int64_t done = map_double_lanes<T, T>(a, out, n, f, stream);
  for (std::int64_t i = done; i < n; ++i) out[i] = detail::arith_apply_scalar<T>(a[i], v, op);
}

}  // namespace
#endif

void arith_ab_rows(const ConstImageView& a, const ConstImageView& b, const ImageView& dst,
                   ArithOp op, Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::arith(a, b, dst, op, rows);
#else
  const std::int64_t n = dst.width() * dst.channels();
  const bool stream = stream_output(dst);
  detail::visit_depth(a.depth(), [&](auto t) {
    using T = decltype(t);
    for (std::int64_t y = rows.begin; y < rows.end; ++y) {
      if constexpr (std::is_same_v<T, float>)
        ab_f32(a.row<T>(y), b.row<T>(y), dst.row<T>(y), n, op, stream);
      else if constexpr (std::is_same_v<T, std::int32_t>)
        ab_s32(a.row<T>(y), b.row<T>(y), dst.row<T>(y), n, op, stream);
      else
        ab_int<T>(a.row<T>(y), b.row<T>(y), dst.row<T>(y), n, op, stream);
    }
  });
#endif
}

void arith_av_rows(const ConstImageView& a, double v, const ImageView& dst, ArithOp op, Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::arith(a, v, dst, op, rows);
#else
  if (!std::isfinite(v)) return ref::arith(a, v, dst, op, rows);  // NaN rules stay scalar
  const std::int64_t n = dst.width() * dst.channels();
  const bool stream = stream_output(dst);
  detail::visit_depth(a.depth(), [&](auto t) {
    using T = decltype(t);
    for (std::int64_t y = rows.begin; y < rows.end; ++y)
      av_t<T>(a.row<T>(y), v, dst.row<T>(y), n, op, stream);
  });
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(arith_ab_rows);
HWY_EXPORT(arith_av_rows);

void arith_ab(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, ArithOp op,
              Rows rows) {
  HWY_DYNAMIC_DISPATCH(arith_ab_rows)(a, b, dst, op, rows);
}
void arith_av(const ConstImageView& a, double v, const ImageView& dst, ArithOp op, Rows rows) {
  HWY_DYNAMIC_DISPATCH(arith_av_rows)(a, v, dst, op, rows);
}
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_arith) {
  using pixflow::Depth;
  const auto s =
      pixflow::detail::Support::of({Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32});
  for (const char* op : {"add", "sub", "absdiff", "mul"}) {
    pixflow::cpu::add_banded<&pixflow::cpu::arith_ab>(table, op, s);
    pixflow::cpu::add_banded<&pixflow::cpu::arith_av>(table, op, s);
  }
}
#endif
