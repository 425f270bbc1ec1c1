// "morph_pass" (one dilate or erode) on CUDA: the fused separable kernel with max / min (any
// size and anchor); 3x3 centred on one u8 channel through the packed kernel. Iterations and
// the composites (open, close, ...) are built by core from this pass and "sub".
#include <cstdint>
#include <type_traits>

#include "src/backends/cuda/common/byte_tile.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/backends/cuda/common/separable.cuh"
#include "src/backends/cuda/u8_3x3.cuh"
#include "src/base/backend.hpp"
#include "src/base/numeric.hpp"
#include "src/base/passes.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

template <class T>
__device__ __forceinline__ T lowest();
template <>
__device__ __forceinline__ std::uint8_t lowest() {
  return 0;
}
template <>
__device__ __forceinline__ std::uint16_t lowest() {
  return 0;
}
template <class T>
__device__ __forceinline__ T highest();
template <>
__device__ __forceinline__ std::uint8_t highest() {
  return 255;
}
template <>
__device__ __forceinline__ std::uint16_t highest() {
  return 65535;
}

template <class T, bool kMax>
struct MorphPolicy {
  using Acc = T;
  static constexpr bool kVerticalFirst = false;
  __device__ T h_init() const { return kMax ? lowest<T>() : highest<T>(); }
  __device__ T h(T a, T v, int) const { return kMax ? (v > a ? v : a) : (v < a ? v : a); }
  __device__ T v_init() const { return h_init(); }
  __device__ T v(T a, T v, int k) const { return h(a, v, k); }
  __device__ T out(T a) const { return a; }
};

// f32 in totalOrder (detail::order_key, as the reference): each sample becomes its signed
// key once, in the horizontal pass; the extremes are integer max / min (one IMNMX), the
// vertical pass works on keys, and the output turns the key back into the float's bits.
template <bool kMax>
struct MorphPolicy<float, kMax> {
  using Acc = std::int32_t;
  static constexpr bool kVerticalFirst = false;
  __device__ Acc h_init() const { return kMax ? INT32_MIN : INT32_MAX; }
  __device__ Acc h(Acc a, float v, int) const {
    const Acc k = detail::order_key(v);
    return kMax ? max(a, k) : min(a, k);
  }
  __device__ Acc v_init() const { return h_init(); }
  __device__ Acc v(Acc a, Acc b, int) const { return kMax ? max(a, b) : min(a, b); }
  __device__ float out(Acc a) const { return detail::from_order_key(a); }
};

// u8, any window and anchor, 1-4 channels: byte tiles (common/byte_tile.cuh) and doubling.
// Vertical: X_1 = the tile, X_2m(r) = op(X_m(r), X_m(r + m)) up to the largest power of two
// `top` <= kh, then R(r) = op(X_top(r), X_top(r + kh - top)) (the two cover rows r .. r +
// kh - 1); horizontally the same along the bytes of a row with steps of m*cn bytes. Every
// level is one pass of all threads over 4-byte words (min/max of four bytes at once)
// between two shared buffers, so a window costs about 2 log2(k) + 2 word operations per
// four samples, whatever the channel count; the byte-shifted word of a horizontal step is a
// funnel shift of two neighbours.
__host__ __device__ inline std::size_t morph_u8_buffer(int kw, int kh, int cn, int bh) {
  return (std::size_t(byte_tile_width(kw, cn)) * (bh + kh - 1) + 16 + 15) / 16 * 16;
}
inline std::size_t morph_u8_smem(int kw, int kh, int cn, int bh) {
  return 2 * morph_u8_buffer(kw, kh, cn, bh);
}

template <bool kMax>
__device__ __forceinline__ unsigned op4(unsigned a, unsigned b) {
  return kMax ? __vmaxu4(a, b) : __vminu4(a, b);
}
// The 4 bytes of a word array starting at byte b.
__device__ __forceinline__ unsigned word_at(const unsigned* w, int b) {
  return __funnelshift_r(w[b >> 2], w[(b >> 2) + 1], (b & 3) * 8);
}

struct MorphU8 {
  int kw, kh, ax, ay;
};

template <int CN, bool kMax>
__global__ void __launch_bounds__(kByteTileThreads)
    morph_u8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                    DevBorder<std::uint8_t> border, MorphU8 p, int bh, int rows_of_blocks,
                    bool src_aligned, bool dst_aligned) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int tw = byte_tile_width(p.kw, CN), th = bh + p.kh - 1, nw = tw / 4;
  const std::size_t buf = morph_u8_buffer(p.kw, p.kh, CN, bh);
  unsigned* const A = reinterpret_cast<unsigned*>(smem_raw);
  unsigned* const B = reinterpret_cast<unsigned*>(smem_raw + buf);
  const long long wc = (long long)dst.w * CN;
  const long long e0 = (long long)blockIdx.x * kByteTileBW;
  int topy = 1, topx = 1;
  while (2 * topy <= p.kh) topy *= 2;
  while (2 * topx <= p.kw) topx *= 2;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long y0 = (long long)by * bh;
    const ByteTile t = byte_tile(e0, y0, p.kw, p.kh, p.ax, p.ay, CN, bh);
    load_byte_tile(reinterpret_cast<unsigned char*>(A), t, p.ay, src, border, src_aligned);
    const int rows = int(min((long long)bh, (long long)dst.h - y0));
    unsigned *cur = A, *oth = B;
    // Vertical levels: X_m has `valid` rows.
    int valid = th;
    for (int m = 1; m < topy; m *= 2) {
      const int nv = valid - m;
      const int d = m * nw;
#pragma unroll 4
      for (int it = threadIdx.x; it < nv * nw; it += blockDim.x)
        oth[it] = op4<kMax>(cur[it], cur[it + d]);
      __syncthreads();
      unsigned* x = cur;
      cur = oth;
      oth = x;
      valid = nv;
    }
    {
      const int d = (p.kh - topy) * nw;
      for (int it = threadIdx.x; it < rows * nw; it += blockDim.x)
        oth[it] = op4<kMax>(cur[it], cur[it + d]);
      __syncthreads();
      unsigned* x = cur;
      cur = oth;
      oth = x;
    }
    // Horizontal levels on the `rows` rows of R: X_m has `vb` valid bytes per row.
    int vb = tw;
    for (int m = 1; m < topx; m *= 2) {
      const int sh = m * CN, nvb = vb - sh, nwv = (nvb + 3) / 4;
      for (Walk2D i(nwv); i.r < rows; i.next()) {
        const unsigned* row = cur + i.r * nw;
        oth[i.r * nw + i.w] = op4<kMax>(row[i.w], word_at(row, 4 * i.w + sh));
      }
      __syncthreads();
      unsigned* x = cur;
      cur = oth;
      oth = x;
      vb = nvb;
    }
    // Outputs: 16 bytes per thread, op(X_top(off + e), X_top(off + e + (kw - topx) cn)).
    constexpr int kChunks = kByteTileBW / 16;
    const int d = (p.kw - topx) * CN;
    for (int it = threadIdx.x; it < rows * kChunks; it += blockDim.x) {
      const int r = it / kChunks, c = it - r * kChunks;
      const long long eb = e0 + 16LL * c;
      if (eb >= wc) continue;
      const unsigned* row = cur + r * nw;
      unsigned o[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int b = t.off + 16 * c + 4 * i;
        o[i] = op4<kMax>(word_at(row, b), word_at(row, b + d));
      }
      std::uint8_t* out = dst.row(y0 + r) + eb;
      if (dst_aligned && eb + 16 <= wc) {
        *reinterpret_cast<uint4*>(out) = make_uint4(o[0], o[1], o[2], o[3]);
      } else {
#pragma unroll
        for (int e = 0; e < 16; ++e)  // unrolled: o[] stays in registers
          if (eb + e < wc) out[e] = std::uint8_t(o[e / 4] >> (8 * (e % 4)));
      }
    }
    __syncthreads();  // the next tile overwrites A
  }
}

template <bool kMax>
bool try_morph_u8_tiles(const ConstImageView& s, const ImageView& d, const SepWindow& w,
                        const Border& border, cudaStream_t st) {
  const int cn = s.channels();
  const long long wc = (long long)s.width() * cn;
  const long long bx = (wc + kByteTileBW - 1) / kByteTileBW;
  int bh = 64;
  if (bx * ((s.height() + 63) / 64) < 2 * 132 || morph_u8_smem(w.kw, w.kh, cn, 64) > kMaxSmem)
    bh = 32;
  const std::size_t smem = morph_u8_smem(w.kw, w.kh, cn, bh);
  if (smem > kMaxSmem) return false;
  const dim3 grid = grid_2d(wc, s.height(), kByteTileBW, bh);
  const int rows = blocks_y(s.height(), bh);
  const bool sa = rows_aligned(s, 16), da = rows_aligned(d, 16);
  const MorphU8 k{w.kw, w.kh, w.ax, w.ay};
  auto launch = [&](auto kernel) {
    if (smem > 48 * 1024)
      PIXFLOW_CUDA_CHECK(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    kernel<<<grid, kByteTileThreads, smem, st>>>(dev_view<std::uint8_t>(s),
                                                 dev_view<std::uint8_t>(d),
                                                 dev_border<std::uint8_t>(border), k, bh, rows,
                                                 sa, da);
  };
  switch (cn) {
    case 1: launch(morph_u8_kernel<1, kMax>); break;
    case 2: launch(morph_u8_kernel<2, kMax>); break;
    case 3: launch(morph_u8_kernel<3, kMax>); break;
    default: launch(morph_u8_kernel<4, kMax>); break;
  }
  PIXFLOW_CUDA_CHECK_LAUNCH("morphology");
  return true;
}

template <class T, bool kMax>
void launch_morph(const ConstImageView& s, const ImageView& d, const SepWindow& w,
                  const Border& border, cudaStream_t st) {
  // 3x3 centred on one u8 channel: the packed kernel (16x2 lanes, Hopper 3-input min/max)
  // when the destination allows it.
  if (std::is_same_v<T, std::uint8_t> && w.kw == 3 && w.kh == 3 && w.ax == 1 && w.ay == 1 &&
      u8_3x3::launch_3x3(u8_3x3::morph3_u8_kernel<kMax>, s, d, border, "morphology", st))
    return;
  if constexpr (std::is_same_v<T, std::uint8_t>)
    if (try_morph_u8_tiles<kMax>(s, d, w, border, st)) return;
  launch_separable(dev_view<T>(s), dev_view<T>(d), dev_border<T>(border), w, MorphPolicy<T, kMax>{},
                   st);
}

void morph_pass(const ConstImageView& src, const ImageView& dst, const detail::MorphPass& m,
                cudaStream_t st) {
  const SepWindow w{m.kw, m.kh, m.ax, m.ay};
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(src.depth(), [&](auto t) -> void {
    using T = decltype(t);
    if (m.op == MorphOp::dilate)
      launch_morph<T, true>(src, dst, w, m.border, st);
    else
      launch_morph<T, false>(src, dst, w, m.border, st);
  });
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_morphology) {
  using namespace pixflow;
  cuda::add<&cuda::morph_pass>(table, "morph_pass",
                               cuda::depths({Depth::u8, Depth::u16, Depth::f32}));
}
