// Plain C++ shared by the SIMD kernels of the `cpu` backend (no Highway here; the per-target
// code is in each family's file). A window kernel never tests a border inside its vector
// loop: it reads padded rows, built once per source row by `pad_row` with the op's border
// rule applied in x (and the constant value for rows outside the image), so every output
// of a band runs the same interior code. Scratch is one aligned allocation per band, never
// one per row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "pixflow/image.hpp"
#include "src/base/numeric.hpp"
#include "src/base/rows.hpp"

namespace pixflow::cpu {

using detail::Rows;

/// Vector-aligned storage for n elements of T (uninitialised; T trivially copyable).
template <class T>
class Scratch {
 public:
  static constexpr std::size_t kAlign = 64;
  Scratch() = default;
  explicit Scratch(std::size_t n) { reset(n); }
  void reset(std::size_t n) {
    // One spare vector at the end: a kernel may load a full vector that starts at the
    // last element.
    p_.reset(static_cast<T*>(::operator new(n * sizeof(T) + kAlign, std::align_val_t(kAlign))));
    n_ = n;
  }
  T* data() const { return p_.get(); }
  std::size_t size() const { return n_; }
  T& operator[](std::size_t i) const { return p_.get()[i]; }

 private:
  struct Free {
    void operator()(T* p) const { ::operator delete(p, std::align_val_t(kAlign)); }
  };
  std::unique_ptr<T, Free> p_;
  std::size_t n_ = 0;
};

/// How far ahead of a row's streaming loads kernels prefetch. On Zen 4 the hardware
/// prefetcher alone leaves the loads of each new source row waiting on DRAM: box 9x9 u8x3 at
/// 4096^2, one thread, 17.4 -> 15.7 ms with 2 KB (1 KB: 16.7; 4-8 KB: as 2 KB).
inline constexpr std::int64_t kPrefetchAhead = 2048;
/// Prefetches the line kPrefetchAhead bytes after p (any address: a prefetch never faults).
inline void prefetch_ahead(const void* p) {
  __builtin_prefetch(static_cast<const char*>(p) + kPrefetchAhead);
}

/// Writes source row `sy` (already mapped by border_index; -1 = outside, constant border)
/// of `src` (samples of type T, ch channels) into out[0 .. (left + w + right) * ch): the
/// row's samples preceded by `left` and followed by `right` pixels taken by the border
/// rule in x, or `cval` where the rule is constant.
template <class T>
void pad_row(const ConstImageView& src, std::int64_t sy, int left, int right, const Border& border,
             T cval, T* out) {
  const int ch = src.channels();
  const std::int64_t w = src.width();
  const std::int64_t n = (left + w + right) * ch;
  if (sy < 0) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = cval;
    return;
  }
  const T* in = src.row<T>(sy);
  std::memcpy(out + std::int64_t(left) * ch, in, std::size_t(w * ch) * sizeof(T));
  auto edge = [&](std::int64_t x, T* o) {
    const std::int64_t sx = detail::border_index(x, w, border.type);
    for (int c = 0; c < ch; ++c) o[c] = sx < 0 ? cval : in[sx * ch + c];
  };
  for (int i = 0; i < left; ++i) edge(i - left, out + std::int64_t(i) * ch);
  for (int i = 0; i < right; ++i) edge(w + i, out + (left + w + i) * ch);
}

/// Bytes of the last-level cache (Linux: sysfs, read once; elsewhere or unreadable: 32 MiB).
std::int64_t last_level_cache_bytes() noexcept;
/// Whether kernels write dst with streaming stores (StoreOut, store_out-inl.hpp): dst's
/// samples take more than a quarter of the last-level cache, so that a source and
/// destination of that size fill half of it (the cache is shared with the other cores; on
/// the 2-core Zen 4 host, 4096^2 u8x1 at one thread: add 1.45 -> 0.93 ms, median 3x3 3.1 ->
/// 2.8, sobel 5.3 -> 3.7; dilate 3x3 at two threads, whose source stays in L3 across calls,
/// 0.70 -> 0.83). `PIXFLOW_STREAM_STORES=0` turns it off (for comparisons).
bool stream_output(const ImageView& dst) noexcept;
/// Tests: streaming stores from `bytes` of destination on (0: always; -1: back to a quarter
/// of the last-level cache).
void set_stream_threshold_for_test(std::int64_t bytes) noexcept;

/// Whether this CPU runs 512-bit vector operations as two 256-bit halves (AMD Zen 4: its
/// AVX-512 has 256-bit units; Zen 5 and Intel's AVX-512 cores have full-width ones). Kernels
/// that measured faster on 256-bit vectors there (matmul) pick their width by it.
bool splits_512bit_ops() noexcept;
/// Tests: 1 or 0 forces the answer, -1 goes back to the CPU's.
void set_splits_512bit_for_test(int split) noexcept;

/// The SIMD target Highway's dispatch uses on this machine ("AVX2", "AVX3", "NEON"...;
/// "SCALAR" runs the reference). src/backends/cpu/simd/target.cpp (built with Highway only).
const char* simd_target() noexcept;
/// Every compiled target this machine supports, best first.
std::vector<std::string> simd_targets();
/// Makes dispatch use target `name` (one of simd_targets()) from now on, process-wide, or
/// the best again for "". For tests and the benchmark; false for an unknown name.
bool force_simd_target(const std::string& name);

}  // namespace pixflow::cpu
