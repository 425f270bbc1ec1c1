// totalOrder keys (detail::order_key, src/base/numeric.hpp) in vectors, for the f32 paths of
// the ordering ops (median, morphology), which run on int32 keys: k = b ^ ((b >> 31) &
// 0x7fffffff) on the float's bits b, its own inverse. Highway's per-target include idiom:
// include after <hwy/highway.h>, outside any namespace.
#if defined(PIXFLOW_ORDER_KEYS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PIXFLOW_ORDER_KEYS_INL_H_
#undef PIXFLOW_ORDER_KEYS_INL_H_
#else
#define PIXFLOW_ORDER_KEYS_INL_H_
#endif

#include <cstdint>
#include <cstring>

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
/// The key of each lane's bits (or the bits of each lane's key).
template <class D>
HWY_INLINE hn::Vec<D> order_key_lanes(D d, hn::Vec<D> v) {
  return hn::Xor(v, hn::And(hn::BroadcastSignBit(v), hn::Set(d, 0x7fffffff)));
}

/// out[i] = the key of the 32-bit pattern in[i] (f32 samples or keys); out may be in.
inline void order_keys(const void* in, std::int32_t* out, std::int64_t n) {
  const hn::ScalableTag<std::int32_t> d;
  const std::int64_t N = std::int64_t(hn::Lanes(d));
  const auto* p = static_cast<const std::int32_t*>(in);
  std::int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(order_key_lanes(d, hn::LoadU(d, p + i)), d, out + i);
  for (; i < n; ++i) {
    std::int32_t b;
    std::memcpy(&b, p + i, sizeof b);
    out[i] = b ^ ((b >> 31) & 0x7fffffff);
  }
}
#endif

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
