// StoreOut: a kernel's store of finished output samples. With `stream` (stream_output(dst),
// rows.hpp: a destination large enough that its lines would be evicted before anyone reads
// them) full aligned vectors go out as non-temporal stores, which skip
// the read-for-ownership of every destination line: a third less memory traffic for a
// streaming kernel. Otherwise, and for vectors narrower than 16 bytes (x86's streaming store
// writes 16), a plain unaligned store. The band runner fences after each band
// (src/backends/cpu/bands.hpp). Included once per target, after <hwy/highway.h>.
#if defined(PIXFLOW_SIMD_STORE_OUT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PIXFLOW_SIMD_STORE_OUT_INL_H_
#undef PIXFLOW_SIMD_STORE_OUT_INL_H_
#else
#define PIXFLOW_SIMD_STORE_OUT_INL_H_
#endif

#include <cstdint>
#include <cstring>

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
template <class D>
HWY_INLINE void StoreOut(hn::Vec<D> v, D d, hn::TFromD<D>* p, bool stream) {
  constexpr std::size_t kBytes = D::kPrivateN * sizeof(hn::TFromD<D>);
  if constexpr (kBytes >= 16) {
    const std::uintptr_t vb = hn::Lanes(d) * sizeof(hn::TFromD<D>);
    if (stream && reinterpret_cast<std::uintptr_t>(p) % vb == 0) return hn::Stream(v, d, p);
  }
  hn::StoreU(v, d, p);
}

// The first n lanes of v (all of them when n >= the lane count: StoreOut; else through a
// buffer, for a row's last vector).
template <class D>
HWY_INLINE void StoreOutN(hn::Vec<D> v, D d, hn::TFromD<D>* p, std::int64_t n, bool stream) {
  if (n >= std::int64_t(hn::Lanes(d))) return StoreOut(v, d, p, stream);
  HWY_ALIGN hn::TFromD<D> buf[hn::MaxLanes(d)];
  hn::Store(v, d, buf);
  std::memcpy(p, buf, std::size_t(n) * sizeof(hn::TFromD<D>));
}
#endif

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
