// Double-lane helpers for the point-wise SIMD kernels whose reference computes in double
// (arith with a scalar, convert): a sample widened exactly to double, one expression in
// double lanes, then the reference's saturate_cast<D>: round half to even (Round) and
// saturate for integers (NaN -> 0), round to nearest for f32. Highway's per-target include
// idiom: include after <hwy/highway.h>, outside any namespace.
#if defined(PIXFLOW_DOUBLE_LANES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PIXFLOW_DOUBLE_LANES_INL_H_
#undef PIXFLOW_DOUBLE_LANES_INL_H_
#else
#define PIXFLOW_DOUBLE_LANES_INL_H_
#endif

#include <cstdint>
#include <type_traits>

#include "src/base/numeric.hpp"

#include "src/backends/cpu/simd/store_out-inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
using Dd = hn::ScalableTag<double>;

/// Lanes(Dd) samples of S at p, exactly as doubles.
template <class S>
HWY_INLINE hn::Vec<Dd> load_double(const S* HWY_RESTRICT p) {
  const Dd d;
  const hn::Rebind<S, Dd> ds;
  if constexpr (std::is_same_v<S, float> || std::is_same_v<S, std::int32_t>) {
    return hn::PromoteTo(d, hn::LoadU(ds, p));
  } else {
    const hn::Rebind<std::int32_t, Dd> di;
    return hn::PromoteTo(d, hn::PromoteTo(di, hn::LoadU(ds, p)));
  }
}

/// Stores v as Lanes(Dd) samples of D with the reference's saturate_cast<D>(double);
/// `stream`: StoreOut's streaming stores (for D of 4 bytes; narrower stores are plain).
template <class D>
HWY_INLINE void store_double(hn::Vec<Dd> v, D* HWY_RESTRICT p, bool stream = false) {
  const Dd d;
  const hn::Rebind<D, Dd> dd;
  if constexpr (std::is_same_v<D, float>) {
    StoreOut(hn::DemoteTo(dd, v), dd, p, stream);
  } else {
    const hn::Rebind<std::int32_t, Dd> di;
    auto r = hn::IfThenZeroElse(hn::IsNaN(v), hn::Round(v));
    r = hn::Min(hn::Max(r, hn::Set(d, detail::Limits<D>::lo)), hn::Set(d, detail::Limits<D>::hi));
    const auto i = hn::DemoteTo(di, r);  // exact: r is an integer within D's range
    if constexpr (std::is_same_v<D, std::int32_t>)
      StoreOut(i, di, p, stream);
    else
      hn::StoreU(hn::DemoteTo(dd, i), dd, p);
  }
}

/// out[i] = saturate_cast<D>(f(double(in[i]))) over whole vectors (out may be in: each vector
/// is loaded before it is stored); returns how many samples
/// were done (the caller finishes the tail with the scalar rule).
template <class S, class D, class F>
HWY_INLINE std::int64_t map_double_lanes(const S* in, D* out, std::int64_t n, F&& f,
                                         bool stream = false) {
  const std::int64_t N = std::int64_t(hn::Lanes(Dd()));
  std::int64_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    const auto a = f(load_double(in + i)), b = f(load_double(in + i + N));
    store_double(a, out + i, stream);
    store_double(b, out + i + N, stream);
  }
  for (; i + N <= n; i += N) store_double(f(load_double(in + i)), out + i, stream);
  return i;
}
#endif

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
