// remap's CUDA kernels (remap.cu has the rule they follow and the dispatch): the fast ring
// kernel (remap_ring_kernel) with its launch, and the general remap_kernel; run by remap.cu's
// "remap" and by bench/micro/remap_shapes.cu.
#pragma once

#include <cstdint>
#include <type_traits>

#include "pixflow/ops.hpp"
#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/remap_border.hpp"
#include "src/backends/cuda/remap_pack.hpp"
#include "src/backends/cuda/remap_ring.hpp"
#include "src/backends/cuda/remap_u8x3.hpp"
#include "src/base/numeric.hpp"
#include "src/base/rules/remap.h"

namespace pixflow::cuda {
namespace {

constexpr float kMaxCoord = 1073741824.0f;  // 2^30: finite map values are clamped to +-2^30
constexpr float kTwo23 = 8388608.0f;        // 2^23: floats in [2^23, 2^24) are the integers
constexpr int kTwo23Bits = 0x4B000000;      // the bits of 2^23

// ---- the general kernel (any size) ---------------------------------------------------------

template <class T>
__global__ void remap_kernel(DevView<T> src, DevView<float> mx, DevView<float> my, DevView<T> dst,
                             DevBorder<T> b, bool linear) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int cn = src.cn;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < dst.h;
       y += (long long)gridDim.y * blockDim.y) {
    if (x >= dst.w) continue;
    float fx = mx.row(y)[x], fy = my.row(y)[x];
    T* out = dst.row(y) + x * cn;
    if (!isfinite(fx) || !isfinite(fy)) {
      const T v = b.type == BorderType::constant ? b.value : T(0);
      for (int c = 0; c < cn; ++c) out[c] = v;
      continue;
    }
    fx = fminf(fmaxf(fx, -kMaxCoord), kMaxCoord);
    fy = fminf(fmaxf(fy, -kMaxCoord), kMaxCoord);
    if (!linear) {
      const long long ix =
          (long long)floor(double(fx) + 0.5);  // in double: 0.49999997f + 0.5f rounds up
      const long long iy = (long long)floor(double(fy) + 0.5);
      for (int c = 0; c < cn; ++c) out[c] = fetch(src, ix, iy, c, b);
      continue;
    }
    const float x0f = floorf(fx), y0f = floorf(fy);
    const long long x0 = (long long)x0f, y0 = (long long)y0f;
    const float ax = __fsub_rn(fx, x0f), ay = __fsub_rn(fy, y0f);
    const float bx = __fsub_rn(1.0f, ax), by = __fsub_rn(1.0f, ay);
    for (int c = 0; c < cn; ++c) {
      const float p00 = float(fetch(src, x0, y0, c, b));
      const float p10 = float(fetch(src, x0 + 1, y0, c, b));
      const float p01 = float(fetch(src, x0, y0 + 1, c, b));
      const float p11 = float(fetch(src, x0 + 1, y0 + 1, c, b));
      const float v = px_remap_linear(p00, p10, p01, p11, ax, bx, ay, by);
      if constexpr (std::is_same_v<T, float>) {
        out[c] = v;
      } else {
        out[c] = detail::saturate_cast<T>(double(v));
      }
    }
  }
}

// ---- the fast kernel (sources < 2^23 a side, < 2^31 bytes) ---------------------------------

/// Everything the fast kernel reads, converted on the host.
template <class T>
struct RemapArgs {
  const unsigned char* src;
  int src_stride;  // bytes; every source offset fits an int (checked on the host)
  int src_w, src_h;
  // A pixel is interior when its taps all lie inside: linear x0 in [0, w-2] <=> mx in
  // [0, w-1); nearest floor(mx + 0.5) in [0, w-1] <=> mx in [-0.5, w-0.5). Both bounds are
  // exact floats for w < 2^23. NaN and inf compare false, so they are never interior.
  float lo, hi_x, hi_y;
  DevView<float> mx, my;
  DevView<T> dst;
  BorderType border;
  T border_value;  // saturated to T
  T invalid;       // the output of a non-finite map entry: the constant's value or 0
  bool vec_maps;   // both maps' rows 16-byte aligned: float4 loads
  bool vec_dst;    // dst rows aligned to the packed store's width
};

template <class T>
__device__ __forceinline__ T load_ro(const unsigned char* p) {
  return __ldg(reinterpret_cast<const T*>(p));
}

/// A sample as float without a conversion instruction: 2^23 + s is the float with s in its
/// low mantissa bits (s < 2^16), minus 2^23 exactly.
template <class T>
__device__ __forceinline__ float sample_to_float(T s) {
  if constexpr (std::is_same_v<T, float>) {
    return s;
  } else {
    return __fsub_rn(__int_as_float(kTwo23Bits | int(s)), kTwo23);
  }
}

/// A result until the store: f32 as it is; u8/u16 a word whose low byte / half is the sample
/// (remap_pack.hpp: the bits of v + 2^23 for the linear expression, the zero-extended sample
/// otherwise), packed into the stored words by PRMT.
template <class T>
using Out = std::conditional_t<std::is_same_v<T, float>, float, unsigned>;

/// saturate_cast<T>(double(v)) for the v this file produces, as an Out<T>: f32 keeps v; u8/u16
/// v is a convex combination of samples in [0, hi] with rounded operations, which never
/// rounds past hi (remap_pack.hpp), so the round-half-even of v is the low byte / half of the
/// bits of v + 2^23 rounded to the nearest float (ulp 1 there, ties to even). double(v) is
/// exact, so this equals rint(double(v)).
template <class T>
__device__ __forceinline__ Out<T> to_sample(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    return remap_pack::round_bits(v);
  }
}

/// Where a pixel that needs the border rule reads: the byte offset of each tap's source pixel
/// ((x, y) after border_index32), or -1 where the constant border applies or no load is due.
/// Computed for all of a thread's pixels before any load (ALU only, its branches before the
/// loads), so that the loads form one straight block: every tap of every pixel in flight at
/// once. (The previous per-tap rule loaded inside each tap's branch and used the value at
/// once: 4 x CN serial round trips a pixel, ~25 us for a warp of 4 u8x3 pixels x 2 rows, and
/// every warp at the left and right edge of a lens map is such a warp: at 1080p 2 of 15 per
/// block row, which made u8x3 take 66 us against NPP's 14.)
template <bool kLinear>
struct BorderTaps {
  int o[kLinear ? 4 : 1];  // linear: (x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1)
  float ax, ay;
  bool valid;  // finite map entries; else the output is a.invalid
};

/// The reference's rule for one pixel, any map value, up to its loads.
template <class T, int CN, bool kLinear, BorderType kB>
__device__ __forceinline__ BorderTaps<kLinear> border_taps(const RemapArgs<T>& a, float mx,
                                                           float my) {
  constexpr int kPix = CN * int(sizeof(T));
  constexpr int kTaps = kLinear ? 4 : 1;
  BorderTaps<kLinear> t;
  t.ax = t.ay = 0.0f;
  t.valid = isfinite(mx) && isfinite(my);
  if (!t.valid) {
#pragma unroll
    for (int k = 0; k < kTaps; ++k) t.o[k] = -1;
    return t;
  }
  mx = fminf(fmaxf(mx, -kMaxCoord), kMaxCoord);
  my = fminf(fmaxf(my, -kMaxCoord), kMaxCoord);
  // border_index32 leaves an inside coordinate as it is (the reference's tap()). Each
  // coordinate through the rule once (x0 and x0 + 1, y0 and y0 + 1: 4 calls a linear pixel,
  // not one per tap and axis).
  const auto off = [&](int x, int y) { return x < 0 || y < 0 ? -1 : y * a.src_stride + x * kPix; };
  if constexpr (!kLinear) {
    // floor(double(m) + 0.5) exactly as the reference (the float sum could round up).
    t.o[0] = off(border_index32<kB>(int(floor(double(mx) + 0.5)), a.src_w),
                 border_index32<kB>(int(floor(double(my) + 0.5)), a.src_h));
  } else {
    const float x0f = floorf(mx), y0f = floorf(my);
    const int x0 = int(x0f), y0 = int(y0f);  // |x0| <= 2^30: x0 + 1 fits an int
    t.ax = __fsub_rn(mx, x0f);               // -0 - floor(-0) = +0, as the reference
    t.ay = __fsub_rn(my, y0f);
    const int ix0 = border_index32<kB>(x0, a.src_w), ix1 = border_index32<kB>(x0 + 1, a.src_w);
    const int iy0 = border_index32<kB>(y0, a.src_h), iy1 = border_index32<kB>(y0 + 1, a.src_h);
    t.o[0] = off(ix0, iy0);
    t.o[1] = off(ix1, iy0);
    t.o[2] = off(ix0, iy1);
    t.o[3] = off(ix1, iy1);
  }
  return t;
}

template <class T>
__device__ __forceinline__ bool interior(const RemapArgs<T>& a, float mx, float my) {
  return mx >= a.lo && mx < a.hi_x && my >= a.lo && my < a.hi_y;
}

/// The taps of one interior pixel (interior() holds) and its fractions: loaded first for all
/// of a thread's pixels, so that every load is in flight before the first is used.
template <class T, int CN, bool kLinear>
struct InteriorTaps {
  T p[kLinear ? 4 * CN : CN];  // linear: p00, p10, p01, p11 of channel c at 4c .. 4c + 3
  float ax, ay;
};

/// A border pixel's samples (the border value where o < 0): predicated loads without
/// branches, so that they stay in one block with the other pixels' loads.
template <class T, int CN, bool kLinear>
__device__ __forceinline__ InteriorTaps<T, CN, kLinear> load_border(const RemapArgs<T>& a,
                                                                    const BorderTaps<kLinear>& b) {
  constexpr int kTaps = kLinear ? 4 : 1;
  InteriorTaps<T, CN, kLinear> t;
  t.ax = b.ax;
  t.ay = b.ay;
#pragma unroll
  for (int k = 0; k < kTaps; ++k) {
#pragma unroll
    for (int c = 0; c < CN; ++c) {
      T v = a.border_value;
      if (b.o[k] >= 0) v = load_ro<T>(a.src + (b.o[k] + c * int(sizeof(T))));
      t.p[kTaps * c + k] = v;
    }
  }
  return t;
}

/// Loads an interior pixel's taps: no border code, 32-bit offsets.
template <class T, int CN, bool kLinear>
__device__ __forceinline__ InteriorTaps<T, CN, kLinear> load_interior(const RemapArgs<T>& a,
                                                                      float mx, float my) {
  constexpr int kPix = CN * int(sizeof(T));
  InteriorTaps<T, CN, kLinear> t;
  if constexpr (!kLinear) {
    // floor(m + 0.5) for m + 0.5 in [0, 2^23): the sum rounded toward zero keeps its floor
    // (floor(s) is a float <= s), and adding 2^23 toward zero leaves the floor in the
    // mantissa.
    const int xi = __float_as_int(__fadd_rz(__fadd_rz(mx, 0.5f), kTwo23)) - kTwo23Bits;
    const int yi = __float_as_int(__fadd_rz(__fadd_rz(my, 0.5f), kTwo23)) - kTwo23Bits;
    const unsigned char* p = a.src + (yi * a.src_stride + xi * kPix);
#pragma unroll
    for (int c = 0; c < CN; ++c) t.p[c] = load_ro<T>(p + c * int(sizeof(T)));
    t.ax = t.ay = 0.0f;
  } else {
    // floor(m) for m in [0, 2^23): m + 2^23 rounded toward zero is 2^23 + floor(m).
    const float tx = __fadd_rz(mx, kTwo23), ty = __fadd_rz(my, kTwo23);
    const int x0 = __float_as_int(tx) - kTwo23Bits, y0 = __float_as_int(ty) - kTwo23Bits;
    t.ax = __fsub_rn(mx, __fsub_rn(tx, kTwo23));
    t.ay = __fsub_rn(my, __fsub_rn(ty, kTwo23));
    if constexpr (std::is_same_v<T, float>) {
      // m = -0: the reference's fraction is -0 - floor(-0) = +0, ours -0 - +0 = -0, which
      // could change the sign of a zero f32 result; + 0 makes it +0 (integers: no effect).
      t.ax = __fadd_rn(t.ax, 0.0f);
      t.ay = __fadd_rn(t.ay, 0.0f);
    }
    const unsigned char* r0 = a.src + (y0 * a.src_stride + x0 * kPix);
    const unsigned char* r1 = r0 + a.src_stride;
#pragma unroll
    for (int c = 0; c < CN; ++c) {
      const int o = c * int(sizeof(T));
      t.p[4 * c] = load_ro<T>(r0 + o);
      t.p[4 * c + 1] = load_ro<T>(r0 + o + kPix);
      t.p[4 * c + 2] = load_ro<T>(r1 + o);
      t.p[4 * c + 3] = load_ro<T>(r1 + o + kPix);
    }
  }
  return t;
}

/// The reference's expression on loaded taps.
template <class T, int CN, bool kLinear>
__device__ __forceinline__ void finish_interior(const InteriorTaps<T, CN, kLinear>& t,
                                                Out<T>* out) {
  if constexpr (!kLinear) {
#pragma unroll
    for (int c = 0; c < CN; ++c) out[c] = Out<T>(t.p[c]);
  } else {
    const float bx = __fsub_rn(1.0f, t.ax), by = __fsub_rn(1.0f, t.ay);
#pragma unroll
    for (int c = 0; c < CN; ++c) {
      const float p00 = sample_to_float(t.p[4 * c]), p10 = sample_to_float(t.p[4 * c + 1]);
      const float p01 = sample_to_float(t.p[4 * c + 2]), p11 = sample_to_float(t.p[4 * c + 3]);
      out[c] = to_sample<T>(px_remap_linear(p00, p10, p01, p11, t.ax, bx, t.ay, by));
    }
  }
}

/// An interior u8x3 linear pixel's loads from aligned words (remap_u8x3.hpp; the host's
/// choice of kWordTaps: the source's start and stride are multiples of 4).
__device__ __forceinline__ remap_u8x3::Words load_words(const RemapArgs<std::uint8_t>& a, float mx,
                                                        float my) {
  const unsigned* base = reinterpret_cast<const unsigned*>(a.src);
  return remap_u8x3::load_words(mx, my, a.src_stride, [&](int q) { return __ldg(base + q); });
}

/// Outputs per thread: 4 for pixels of <= 4 bytes, else 2 (16 and 32 taps' worth of
/// registers for u16x3..f32x4 would cost occupancy).
template <class T, int CN>
constexpr int remap_px() {
  return CN * int(sizeof(T)) <= 4 ? kRemapPx : kRemapPxWide;
}

/// Pixels of a thread whose border-path loads are in flight together: all of them where their
/// samples take at most kMaxSamples registers, else half (remap_ring::kBorderSamples, 16: under the
/// 64-register bound of 4 blocks a SM; u8x3/u8x4 linear's 48/64 samples spill at once, and
/// u8x2/u16x2 linear's 32 spilled 76 bytes under the streaming kernel's 80).
template <class T, int CN, bool kLinear, int kMaxSamples>
constexpr int remap_border_group() {
  constexpr int P = remap_px<T, CN>();
  return P * (kLinear ? 4 : 1) * CN <= kMaxSamples ? P : P / 2;
}

/// Whether a thread's interior tap loads leave before the ring's next copies (remap_item): where
/// its samples take at most kMaxSamples registers (u8x3 linear's 24 words too). Above (u8x2,
/// u16x2, u8x4, f32x4 linear: 32-64 samples) the copies' address arithmetic beside the samples
/// in flight spills 2-8 bytes under the 64-register bound, so there they go first.
template <class T, int CN, bool kLinear, bool kWordTaps, int kMaxSamples>
constexpr bool remap_taps_first() {
  return kWordTaps || remap_px<T, CN>() * (kLinear ? 4 : 1) * CN <= kMaxSamples;
}

/// Width in bytes of one packed store of a thread's outputs: the largest of 16, 8, 4 that
/// divides them (a thread's first output sits at a multiple of its byte count).
template <class T, int CN>
constexpr int remap_store_bytes() {
  constexpr int b = remap_px<T, CN>() * CN * int(sizeof(T));
  return b % 16 == 0 ? 16 : b % 8 == 0 ? 8 : 4;
}

/// 32-bit words of samples, little-endian (sample i of a u8 row in byte i % 4 of word i / 4),
/// from the results (Out<T>: the low bytes / halves picked by PRMT).
template <class T, int N>
__device__ __forceinline__ unsigned word_of(const Out<T> (&v)[N], int w) {
  if constexpr (sizeof(T) == 1) {
    return remap_pack::pack_u8(v[4 * w], v[4 * w + 1], v[4 * w + 2], v[4 * w + 3]);
  } else if constexpr (sizeof(T) == 2) {
    return remap_pack::pack_u16(v[2 * w], v[2 * w + 1]);
  } else {
    return __float_as_uint(v[w]);
  }
}

/// cp.async of `kBytes` (4, 8 or 16) from global to shared without registers; `src_bytes` <
/// kBytes zero-fills the rest (0: no byte is read, the slot gets zeros). 16 bytes go .cg (L2
/// only: the maps are read once), 4 and 8 .ca (the only sizes .cg lacks).
template <int kBytes>
__device__ __forceinline__ void cp_async_maps(float* shared_dst, const float* global_src,
                                              int src_bytes = kBytes) {
  const unsigned d = unsigned(__cvta_generic_to_shared(shared_dst));
  if constexpr (kBytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(global_src),
                 "r"(src_bytes)
                 : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(d), "l"(global_src),
                 "n"(kBytes), "r"(src_bytes)
                 : "memory");
  }
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
/// Waits until at most N of the thread's committed groups are pending.
template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/// The ring of a block's map rows in shared memory: slot s of map m (0: x, 1: y) holds thread
/// t's P floats at [s][m][t * P] (a warp's 32 x 4P bytes contiguous: no bank conflicts in
/// either direction). Each thread reads only what it copied itself (no barrier; see
/// remap_ring_kernel for the order of a slot's reuse).
template <int P>
struct MapRing {
  float v[remap_ring::kRing][2][kRemapBX * kRemapBY * P];
};

/// Copies the maps of a thread's P outputs (x .. x + n - 1) of row y into its ring slot
/// (smx, smy): one 4P-byte copy per map where rows are aligned and the thread has all P,
/// 4-byte copies otherwise (zeros past the row's end, as the register loads gave).
template <class T, int P>
__device__ __forceinline__ void copy_maps(const RemapArgs<T>& a, int x, int n, int y, float* smx,
                                          float* smy) {
  const float* mxr = a.mx.row(y) + x;
  const float* myr = a.my.row(y) + x;
  if (n == P && a.vec_maps) {
    // x is a multiple of P, so the P floats sit at a multiple of 4 * P bytes.
    cp_async_maps<4 * P>(smx, mxr);
    cp_async_maps<4 * P>(smy, myr);
  } else {
#pragma unroll
    for (int i = 0; i < P; ++i) {
      // Past the row's end: nothing read (the address stays inside the row), zeros written.
      const int j = i < n ? i : 0;
      const int bytes = i < n ? 4 : 0;
      cp_async_maps<4>(smx + i, mxr + j, bytes);
      cp_async_maps<4>(smy + i, myr + j, bytes);
    }
  }
}

/// The border path of a thread's P outputs (n of them inside the row): offsets first, then
/// all loads, then the arithmetic. In groups of G pixels (remap_border_group): all
/// of a thread's u8x3/u8x4 linear taps at once (48-64 registers of samples besides the
/// offsets) spill under the 80-register bound.
template <class T, int CN, bool kLinear, int G, int P, int N>
__device__ __forceinline__ void border_pixels(const RemapArgs<T>& a, int n, const float (&mx)[P],
                                              const float (&my)[P], Out<T> (&out)[N]) {
#pragma unroll
  for (int g = 0; g < P; g += G) {
    BorderTaps<kLinear> b[G];
#pragma unroll
    for (int i = 0; i < G; ++i) {
      // One jump a pixel to its rule's straight code (ALU only; the loads and the
      // arithmetic below are one copy for every rule).
      switch (a.border) {
        case BorderType::replicate:
          b[i] = border_taps<T, CN, kLinear, BorderType::replicate>(a, mx[g + i], my[g + i]);
          break;
        case BorderType::reflect:
          b[i] = border_taps<T, CN, kLinear, BorderType::reflect>(a, mx[g + i], my[g + i]);
          break;
        case BorderType::reflect101:
          b[i] = border_taps<T, CN, kLinear, BorderType::reflect101>(a, mx[g + i], my[g + i]);
          break;
        case BorderType::wrap:
          b[i] = border_taps<T, CN, kLinear, BorderType::wrap>(a, mx[g + i], my[g + i]);
          break;
        default:
          b[i] = border_taps<T, CN, kLinear, BorderType::constant>(a, mx[g + i], my[g + i]);
          break;
      }
      if (g + i >= n) {
        // Past the row's end: nothing to read (the taps' offsets say so).
#pragma unroll
        for (int k = 0; k < (kLinear ? 4 : 1); ++k) b[i].o[k] = -1;
      }
    }
    InteriorTaps<T, CN, kLinear> t[G];
#pragma unroll
    for (int i = 0; i < G; ++i) t[i] = load_border<T, CN, kLinear>(a, b[i]);
#pragma unroll
    for (int i = 0; i < G; ++i) {
      Out<T>* o = out + (g + i) * CN;
      finish_interior(t[i], o);
      if (!b[i].valid) {
#pragma unroll
        for (int c = 0; c < CN; ++c) o[c] = Out<T>(a.invalid);
      }
    }
  }
}

/// A thread's P outputs (x .. x + n - 1) of row y from their loaded maps: the taps, the
/// reference's expression, the stores. ahead() (the ring's next copies into the slot mx / my
/// came from, remap_ring::walk) runs once, after every map value was consumed: on the interior
/// path right after the tap loads are issued (their addresses need every value), so that the
/// taps leave before the next rows' maps; on the border path after the arithmetic.
template <class T, int CN, bool kLinear, bool kWordTaps, int G, int P, class Ahead>
__device__ __forceinline__ void remap_item(const RemapArgs<T>& a, int x, int n, int y,
                                           const float (&mx)[P], const float (&my)[P],
                                           Ahead&& ahead) {
  constexpr int N = P * CN;  // samples a thread writes
  Out<T> out[N];
  bool all_interior = n == P;
#pragma unroll
  for (int i = 0; i < P; ++i) all_interior &= interior(a, mx[i], my[i]);
  // One path a warp: where any of its threads needs the border rule, all of them take it
  // (it gives interior pixels the same results). A warp at a lens map's edge (a thread or two
  // of 32 across the side) ran the interior path and then the border path, one after the
  // other: two round trips of tap loads and both paths' instructions; now one of each.
  all_interior = __all_sync(__activemask(), all_interior);
  if (all_interior) {
    // One straight block: every tap load of the P pixels can be in flight at once.
    if constexpr (kWordTaps) {
      remap_u8x3::Words t[P];
#pragma unroll
      for (int i = 0; i < P; ++i) t[i] = load_words(a, mx[i], my[i]);
      ahead();  // remap_taps_first: always
#pragma unroll
      for (int i = 0; i < P; ++i) remap_u8x3::finish_words(t[i], out + i * CN);
    } else {
      constexpr bool kFirst =
          remap_taps_first<T, CN, kLinear, false, remap_ring::kTapsFirstSamples>();
      if constexpr (!kFirst) ahead();
      InteriorTaps<T, CN, kLinear> t[P];
#pragma unroll
      for (int i = 0; i < P; ++i) t[i] = load_interior<T, CN, kLinear>(a, mx[i], my[i]);
      if constexpr (kFirst) ahead();
#pragma unroll
      for (int i = 0; i < P; ++i) finish_interior(t[i], out + i * CN);
    }
  } else {
    // Border rule for every pixel of the thread (the interior ones too: border_index32
    // keeps inside coordinates). ahead() after the arithmetic, which consumed every map value
    // (the vote may not have: the compiler may drop a tail thread's interior tests).
    border_pixels<T, CN, kLinear, G>(a, n, mx, my, out);
    ahead();
  }
  T* d = a.dst.row(y) + (long long)x * CN;
  if (n == P && a.vec_dst) {
    constexpr int kSB = remap_store_bytes<T, CN>();
    constexpr int kWords = N * int(sizeof(T)) / 4;
#pragma unroll
    for (int s = 0; s < kWords; s += kSB / 4) {
      if constexpr (kSB == 16) {
        reinterpret_cast<uint4*>(d)[s / 4] =
            make_uint4(word_of<T>(out, s), word_of<T>(out, s + 1), word_of<T>(out, s + 2),
                       word_of<T>(out, s + 3));
      } else if constexpr (kSB == 8) {
        reinterpret_cast<uint2*>(d)[s / 2] = make_uint2(word_of<T>(out, s), word_of<T>(out, s + 1));
      } else {
        reinterpret_cast<unsigned*>(d)[s] = word_of<T>(out, s);
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (i < n * CN) d[i] = T(out[i]);  // u8/u16: the low byte / half
  }
}

/// The one shape of the fast kernel at every size: each thread kRemapPx (or kRemapPxWide)
/// adjacent outputs of rows `step` apart (step = gridDim.y * kRemapBY; at most
/// remap_ring::kMaxRows rows a thread), the maps of its next kRing - 1 rows in flight (after
/// the first row's tap loads) by cp.async into its slots of a shared ring (remap_ring.hpp: the walk
/// and the order of a slot's reuse, emulated by tests/remap_ring_test.cpp): no registers are held
/// for them, so 4 blocks a SM fit the 64-register bound, where the streaming kernel's two register
/// sets of maps took 80 and 3. The maps (8 B of the ~10 B a u8x1 pixel moves) so stream
/// continuously instead of in bursts between tap phases (the tall kernel it replaced loaded 2 rows'
/// maps, then both rows' taps; ncu 8192^2 u8x1: 35 % occupancy, DRAM 62 %), and after its first row
/// a thread waits on its taps only.
template <class T, int CN, bool kLinear, bool kWordTaps>
__global__ void __launch_bounds__(kRemapBX* kRemapBY, remap_ring::kMinBlocks)
    remap_ring_kernel(RemapArgs<T> a) {
  constexpr int P = remap_px<T, CN>();
  constexpr int G = remap_border_group<T, CN, kLinear, remap_ring::kBorderSamples>();
  __shared__ __align__(16) MapRing<P> ring;
  const int x = (blockIdx.x * kRemapBX + threadIdx.x) * P;
  const int y = blockIdx.y * kRemapBY + threadIdx.y;
  if (x >= a.dst.w || y >= a.dst.h) return;
  const int n = min(P, a.dst.w - x);  // outputs of this thread (< P only in the row's tail)
  const int t = (threadIdx.y * kRemapBX + threadIdx.x) * P;
  remap_ring::walk(
      y, a.dst.h, (long long)gridDim.y * kRemapBY,
      [&](int s, int yc) { copy_maps<T, P>(a, x, n, yc, &ring.v[s][0][t], &ring.v[s][1][t]); },
      [] { cp_async_commit(); }, [] { cp_async_wait_group<0>(); },
      [] { cp_async_wait_group<remap_ring::kRing - 1>(); },
      [&](int s, int yc, auto&& ahead) {
        float mx[P], my[P];
#pragma unroll
        for (int i = 0; i < P; ++i) {
          mx[i] = ring.v[s][0][t + i];
          my[i] = ring.v[s][1][t + i];
        }
        remap_item<T, CN, kLinear, kWordTaps, G>(a, x, n, yc, mx, my, ahead);
      });
}

/// The fast kernel applies when every source offset and coordinate bound fits 32 bits and
/// the floor trick's range: sides < 2^23, the source's span < 2^31 bytes.
bool fast_applies(const ConstImageView& s, const ImageView& d) {
  constexpr std::int64_t kSide = std::int64_t(1) << 23, kBytes = std::int64_t(1) << 31;
  if (s.width() >= kSide || s.height() >= kSide || s.stride() <= 0) return false;
  const std::int64_t span = (s.height() - 1) * s.stride() + s.width() * s.format().pixel_bytes();
  return span < kBytes && s.stride() < kBytes && d.width() < kBytes - 8;
}

template <class T, int CN, bool kLinear, bool kWordTaps = false>
void launch_fast(const RemapArgs<T>& a, cudaStream_t st) {
  constexpr int P = remap_px<T, CN>();
  const long long bx = ((a.dst.w + P - 1) / P + kRemapBX - 1) / kRemapBX;
  const dim3 grid(unsigned(bx),
                  unsigned(remap_ring::blocks_y(bx, a.dst.h, kRemapBY, kSmCount, sizeof(T) == 1)));
  remap_ring_kernel<T, CN, kLinear, kWordTaps><<<grid, dim3(kRemapBX, kRemapBY), 0, st>>>(a);
  PIXFLOW_CUDA_CHECK_LAUNCH("remap");
}

/// The fast kernel's arguments for source s, maps mx / my and destination d (fast_applies).
template <class T, int CN>
RemapArgs<T> remap_args(const ConstImageView& s, const ConstImageView& mx, const ConstImageView& my,
                        const ImageView& d, const RemapParams& p) {
  const bool linear = p.interp == Interp::linear;
  RemapArgs<T> a;
  a.src = reinterpret_cast<const unsigned char*>(s.data());
  a.src_stride = int(s.stride());
  a.src_w = int(s.width());
  a.src_h = int(s.height());
  a.lo = linear ? 0.0f : -0.5f;
  a.hi_x = linear ? float(s.width() - 1) : float(s.width()) - 0.5f;
  a.hi_y = linear ? float(s.height() - 1) : float(s.height()) - 0.5f;
  a.mx = dev_view<float>(mx);
  a.my = dev_view<float>(my);
  a.dst = dev_view<T>(d);
  a.border = p.border.type;
  a.border_value = detail::saturate_cast<T>(p.border.value);
  a.invalid = p.border.type == BorderType::constant ? a.border_value : T(0);
  constexpr int P = remap_px<T, CN>();
  a.vec_maps = rows_aligned(mx, 4 * P) && rows_aligned(my, 4 * P);
  a.vec_dst = rows_aligned(d, remap_store_bytes<T, CN>());
  return a;
}

template <class T, int CN>
void launch_fast_cn(const ConstImageView& s, const ConstImageView& mx, const ConstImageView& my,
                    const ImageView& d, const RemapParams& p, cudaStream_t st) {
  const bool linear = p.interp == Interp::linear;
  const RemapArgs<T> a = remap_args<T, CN>(s, mx, my, d, p);
  if constexpr (std::is_same_v<T, std::uint8_t> && CN == 3) {
    // u8x3 linear: interior taps from aligned words (remap_u8x3.hpp), which stay inside
    // every row's stride when the source's start and stride are multiples of 4.
    if (linear && rows_aligned(s, 4)) return launch_fast<T, CN, true, true>(a, st);
  }
  if (linear)
    launch_fast<T, CN, true>(a, st);
  else
    launch_fast<T, CN, false>(a, st);
}

}  // namespace
}  // namespace pixflow::cuda
