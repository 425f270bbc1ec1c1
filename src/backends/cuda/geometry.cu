// Simple geometry on CUDA: flip, rotate, crop, pad. Copy-bound; pixels move as opaque groups of
// the format's pixel bytes, so one set of kernels serves every depth and channel count.
//   crop, flip v, pad's interior   geom_rows_kernel: rows (or a contiguous run of each row) in
//                                  the widest unit (16, 8, 4, 2, 1 bytes) that the row's bytes
//                                  and both views' starts and strides allow; one unit a thread
//   flip h / both, rotate 180      mirror_rows_kernel: 16-byte units whose pixels are reversed in
//                                  registers, stored at the mirrored unit (pixel sizes dividing
//                                  16, rows a multiple of 16 bytes, 16-byte aligned views);
//                                  3-, 6-, 12-byte pixels: mirror_groups_kernel, 16 pixels a
//                                  thread (rows a multiple of 16 pixels, aligned views);
//                                  otherwise geom_map_kernel with the column direction -1
//   rotate 90 / 270                rot90_kernel: transpose.cu's 32x32 tiles through padded
//                                  shared memory, the output mirrored on the way out (writes
//                                  stay along rows, in descending order for 90)
//   pad                            geom_rows_kernel into the interior, geom_map_kernel over the
//                                  top and bottom rows and the left and right strips
// Entry points enqueue on the call's stream and never synchronise. Coordinates are 32-bit (the
// schema bounds every side below 2^31).
#include <array>
#include <cstdint>
#include <cstring>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/backends/cuda/transpose_u8.cuh"
#include "src/base/backend.hpp"
#include "src/base/error.hpp"
#include "src/base/geometry.hpp"

namespace pixflow::cuda {
namespace {

// A pixel as PB opaque bytes, aligned to AL (the widest the views allow).
template <int PB, int AL>
struct alignas(AL) Px {
  unsigned char b[PB];
};

constexpr int kRowThreads = 256;  // geom_rows / mirror_rows: a block is 256 units of one row

const unsigned char* bytes(const ConstImageView& v) {
  return reinterpret_cast<const unsigned char*>(v.data());
}
unsigned char* bytes(const ImageView& v) {
  return reinterpret_cast<unsigned char*>(v.data());
}

// ---- rows --------------------------------------------------------------------------------
// dst row y = src row sy0 + sydir * y, nv units of V each.
template <class V>
__global__ void geom_rows_kernel(const unsigned char* src, long long sstride, unsigned char* dst,
                                 long long dstride, int nv, int rows, int sy0, int sydir) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= nv) return;
  for (int y = blockIdx.y; y < rows; y += gridDim.y)
    reinterpret_cast<V*>(dst + (long long)y * dstride)[x] =
        reinterpret_cast<const V*>(src + (long long)(sy0 + sydir * y) * sstride)[x];
}

template <class V>
void launch_rows(const ConstImageView& s, const ImageView& d, int nv, int sy0, int sydir,
                 cudaStream_t st, [[maybe_unused]] const char* op) {
  const dim3 grid = grid_2d(nv, d.height(), kRowThreads, 1);
  geom_rows_kernel<V><<<grid, kRowThreads, 0, st>>>(bytes(s), s.stride(), bytes(d), d.stride(), nv,
                                                    int(d.height()), sy0, sydir);
  PIXFLOW_CUDA_CHECK_LAUNCH(op);
}

// Rows of d (width and format of s) from rows sy0 + sydir * y of s, in the widest unit.
void copy_rows(const ConstImageView& s, const ImageView& d, int sy0, int sydir, cudaStream_t st,
               const char* op) {
  const std::int64_t row = d.width() * std::int64_t(d.format().pixel_bytes());
  auto fits = [&](std::int64_t u) {
    return row % u == 0 && rows_aligned(s, u) && rows_aligned(d, u);
  };
  if (fits(16)) return launch_rows<uint4>(s, d, int(row / 16), sy0, sydir, st, op);
  if (fits(8)) return launch_rows<uint2>(s, d, int(row / 8), sy0, sydir, st, op);
  if (fits(4)) return launch_rows<unsigned>(s, d, int(row / 4), sy0, sydir, st, op);
  if (fits(2)) return launch_rows<unsigned short>(s, d, int(row / 2), sy0, sydir, st, op);
  launch_rows<unsigned char>(s, d, int(row), sy0, sydir, st, op);
}

// ---- mirrored rows ----------------------------------------------------------------------------
// The PB-byte pixels of a 16-byte unit in reverse order.
template <int PB>
__device__ __forceinline__ uint4 reverse_pixels(uint4 v) {
  if constexpr (PB == 16) {
    return v;
  } else if constexpr (PB == 8) {
    return make_uint4(v.z, v.w, v.x, v.y);
  } else if constexpr (PB == 4) {
    return make_uint4(v.w, v.z, v.y, v.x);
  } else if constexpr (PB == 2) {
    return make_uint4(__byte_perm(v.w, 0, 0x1032), __byte_perm(v.z, 0, 0x1032),
                      __byte_perm(v.y, 0, 0x1032), __byte_perm(v.x, 0, 0x1032));
  } else {
    static_assert(PB == 1, "pixel sizes dividing 16");
    return make_uint4(__byte_perm(v.w, 0, 0x0123), __byte_perm(v.z, 0, 0x0123),
                      __byte_perm(v.y, 0, 0x0123), __byte_perm(v.x, 0, 0x0123));
  }
}

// dst row y = src row sy0 + sydir * y mirrored left-right; nv 16-byte units a row.
template <int PB>
__global__ void mirror_rows_kernel(const unsigned char* src, long long sstride, unsigned char* dst,
                                   long long dstride, int nv, int rows, int sy0, int sydir) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= nv) return;
  for (int y = blockIdx.y; y < rows; y += gridDim.y) {
    const uint4 v = reinterpret_cast<const uint4*>(src + (long long)(sy0 + sydir * y) * sstride)[x];
    reinterpret_cast<uint4*>(dst + (long long)y * dstride)[nv - 1 - x] = reverse_pixels<PB>(v);
  }
}

template <int PB>
void launch_mirror(const ConstImageView& s, const ImageView& d, bool flip_y, cudaStream_t st,
                   [[maybe_unused]] const char* op) {
  const int nv = int(d.width() * PB / 16), h = int(d.height());
  const dim3 grid = grid_2d(nv, h, kRowThreads, 1);
  mirror_rows_kernel<PB><<<grid, kRowThreads, 0, st>>>(bytes(s), s.stride(), bytes(d), d.stride(),
                                                       nv, h, flip_y ? h - 1 : 0, flip_y ? -1 : 1);
  PIXFLOW_CUDA_CHECK_LAUNCH(op);
}

// 3-, 6- and 12-byte pixels (u8x3, u16x3 / s16x3, f32x3 / s32x3): 16 pixels = PB 16-byte
// units a thread (rows a multiple of 16 pixels, 16-byte aligned views), the pixels reversed in
// registers (constant byte indices after unrolling: byte permutes, no local memory) and stored
// at the mirrored group.
template <int PB>
__global__ void mirror_groups_kernel(const unsigned char* src, long long sstride,
                                     unsigned char* dst, long long dstride, int ng, int rows,
                                     int sy0, int sydir) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= ng) return;
  union Group {
    uint4 v[PB];
    unsigned char b[16 * PB];
  };
  for (int y = blockIdx.y; y < rows; y += gridDim.y) {
    const uint4* s4 =
        reinterpret_cast<const uint4*>(src + (long long)(sy0 + sydir * y) * sstride) + x * PB;
    Group in, out;
#pragma unroll
    for (int k = 0; k < PB; ++k) in.v[k] = s4[k];
#pragma unroll
    for (int p = 0; p < 16; ++p)
#pragma unroll
      for (int c = 0; c < PB; ++c) out.b[p * PB + c] = in.b[(15 - p) * PB + c];
    uint4* d4 = reinterpret_cast<uint4*>(dst + (long long)y * dstride) + (ng - 1 - x) * PB;
#pragma unroll
    for (int k = 0; k < PB; ++k) d4[k] = out.v[k];
  }
}

template <int PB>
void launch_mirror_groups(const ConstImageView& s, const ImageView& d, bool flip_y,
                          cudaStream_t st) {
  const int ng = int(d.width() / 16), h = int(d.height());
  const dim3 grid = grid_2d(ng, h, kRowThreads, 1);
  mirror_groups_kernel<PB><<<grid, kRowThreads, 0, st>>>(
      bytes(s), s.stride(), bytes(d), d.stride(), ng, h, flip_y ? h - 1 : 0, flip_y ? -1 : 1);
  PIXFLOW_CUDA_CHECK_LAUNCH("mirror");
}

// ---- any pixel mapping ---------------------------------------------------------------------
// One axis: launched count n, output o = o0 + i + (i >= split ? gap : 0), source
// border_index(s0 + dir * o, len, type) (the shared rule: in-range coordinates come back
// unchanged, so flips use it with dir -1; -1 = constant outside).
struct Axis {
  int n = 0, o0 = 0, split = 0, gap = 0, s0 = 0, dir = 1, len = 1;
};

struct PixelBytes {
  unsigned char b[16];
};

constexpr int kMapX = 32, kMapY = 8;

template <int PB, int AL>
__global__ void geom_map_kernel(const unsigned char* src, long long sstride, unsigned char* dst,
                                long long dstride, Axis ax, Axis ay, int type, PixelBytes cval,
                                int rows_of_blocks) {
  using P = Px<PB, AL>;
  const int i = blockIdx.x * kMapX + threadIdx.x;
  if (i >= ax.n) return;
  const int ox = ax.o0 + i + (i >= ax.split ? ax.gap : 0);
  const long long sx =
      detail::border_index(ax.s0 + (long long)ax.dir * ox, ax.len, BorderType(type));
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const int j = by * kMapY + threadIdx.y;
    if (j >= ay.n) continue;
    const int oy = ay.o0 + j + (j >= ay.split ? ay.gap : 0);
    const long long sy =
        detail::border_index(ay.s0 + (long long)ay.dir * oy, ay.len, BorderType(type));
    P* o = reinterpret_cast<P*>(dst + (long long)oy * dstride) + ox;
    if (sx < 0 || sy < 0) {
      P c;
#pragma unroll
      for (int k = 0; k < PB; ++k) c.b[k] = cval.b[k];
      *o = c;
    } else {
      *o = reinterpret_cast<const P*>(src + sy * sstride)[sx];
    }
  }
}

template <int PB, int AL>
void launch_map(const ConstImageView& s, const ImageView& d, const Axis& ax, const Axis& ay,
                int type, const PixelBytes& cval, cudaStream_t st,
                [[maybe_unused]] const char* op) {
  const dim3 grid = grid_2d(ax.n, ay.n, kMapX, kMapY);
  geom_map_kernel<PB, AL><<<grid, dim3(kMapX, kMapY), 0, st>>>(
      bytes(s), s.stride(), bytes(d), d.stride(), ax, ay, type, cval, blocks_y(ay.n, kMapY));
  PIXFLOW_CUDA_CHECK_LAUNCH(op);
}

// ---- rotate 90 / 270 -------------------------------------------------------------------------
constexpr int kTile = kTransposeTile, kRows = kTransposeRows;  // launch.cuh (transpose's)

// transpose_kernel (transpose.cu) with the output mirrored: CW dst(h-1-y, x) = src(x, y),
// otherwise dst(y, w-1-x) = src(x, y); dst is h wide, w tall.
template <int PB, int AL, bool CW>
__global__ void rot90_kernel(const unsigned char* src, long long sstride, unsigned char* dst,
                             long long dstride, int w, int h, int rows_of_tiles) {
  __shared__ Px<PB, AL> tile[kTile][kTile + 1];  // +1: no bank conflicts on the column read
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x0 = blockIdx.x * kTile;
  for (int by = blockIdx.y; by < rows_of_tiles; by += gridDim.y) {
    const int y0 = by * kTile;
    for (int j = ty; j < kTile; j += kRows) {
      const int x = x0 + tx, y = y0 + j;
      if (x < w && y < h)
        tile[j][tx] = reinterpret_cast<const Px<PB, AL>*>(src + (long long)y * sstride)[x];
    }
    __syncthreads();
    for (int j = ty; j < kTile; j += kRows) {
      const int y = y0 + tx, x = x0 + j;  // the source pixel tile[tx][j]
      if (x < w && y < h) {
        const int ox = CW ? h - 1 - y : y, oy = CW ? x : w - 1 - x;
        reinterpret_cast<Px<PB, AL>*>(dst + (long long)oy * dstride)[ox] = tile[tx][j];
      }
    }
    __syncthreads();
  }
}

// u8 x 1 with 4-byte aligned rows: transpose_u8_kernel's 64 x 64-byte tiles (transpose_u8.cuh:
// a 4 x 4-byte block a thread, transposed in registers by byte permutes, whole words written
// back through shared memory) with the words stored mirrored (U8Tiles::rotate_cw / rotate_ccw),
// the last tile row by words too, as transpose's.

template <int PB, int AL>
void launch_rot90(const ConstImageView& s, const ImageView& d, bool cw, cudaStream_t st) {
  const dim3 block(kTile, kRows);
  const dim3 grid = grid_2d(s.width(), s.height(), kTile, kTile);
  const int w = int(s.width()), h = int(s.height()), rt = blocks_y(s.height(), kTile);
  if (cw)
    rot90_kernel<PB, AL, true>
        <<<grid, block, 0, st>>>(bytes(s), s.stride(), bytes(d), d.stride(), w, h, rt);
  else
    rot90_kernel<PB, AL, false>
        <<<grid, block, 0, st>>>(bytes(s), s.stride(), bytes(d), d.stride(), w, h, rt);
  PIXFLOW_CUDA_CHECK_LAUNCH("rotate");
}

// ---- pixel size dispatch ------------------------------------------------------------------------
// f.template operator()<PB, AL>() for the pixel size pb with the widest alignment (1, or the
// sample size es, up to 4) both views allow.
template <int PB, class F>
void with_alignment(int al, F&& f) {
  if constexpr (PB % 4 == 0)
    if (al == 4) return f.template operator()<PB, 4>();
  if constexpr (PB % 2 == 0)
    if (al >= 2) return f.template operator()<PB, 2>();
  f.template operator()<PB, 1>();
}

template <int... PBs, class F>
bool with_pixel(int pb, int al, F&& f) {
  return ((pb == PBs ? (with_alignment<PBs>(al, f), true) : false) || ...);
}

template <class F>
void dispatch_pixel(const ConstImageView& s, const ImageView& d, const char* op, F&& f) {
  const int pb = int(s.format().pixel_bytes());
  const int es = int(depth_bytes(s.depth()));
  const int al = rows_aligned(s, es) && rows_aligned(d, es) ? es : 1;
  if (!with_pixel<1, 2, 3, 4, 6, 8, 12, 16>(pb, al, f))
    detail::fail(Status::unsupported, op, "pixel size ", pb, " bytes on CUDA");
}

void map_pixels(const ConstImageView& s, const ImageView& d, const Axis& ax, const Axis& ay,
                BorderType type, const PixelBytes& cval, cudaStream_t st, const char* op) {
  if (ax.n == 0 || ay.n == 0) return;
  dispatch_pixel(s, d, op, [&]<int PB, int AL>() {
    launch_map<PB, AL>(s, d, ax, ay, int(type), cval, st, op);
  });
}

// A straight axis over [0, n): source o, or n - 1 - o when mirrored.
Axis whole(int n, bool mirrored) {
  return mirrored ? Axis{n, 0, n, 0, n - 1, -1, n} : Axis{n, 0, n, 0, 0, 1, n};
}

// Left-right mirror of every row (flip h, flip both, rotate 180 with flip_y).
void mirror(const ConstImageView& s, const ImageView& d, bool flip_y, cudaStream_t st,
            const char* op) {
  const int pb = int(s.format().pixel_bytes());
  const std::int64_t row = d.width() * pb;
  if (16 % pb == 0 && row % 16 == 0 && rows_aligned(s, 16) && rows_aligned(d, 16)) {
    switch (pb) {
      case 1:
        return launch_mirror<1>(s, d, flip_y, st, op);
      case 2:
        return launch_mirror<2>(s, d, flip_y, st, op);
      case 4:
        return launch_mirror<4>(s, d, flip_y, st, op);
      case 8:
        return launch_mirror<8>(s, d, flip_y, st, op);
      default:
        return launch_mirror<16>(s, d, flip_y, st, op);
    }
  }
  if ((pb == 3 || pb == 6 || pb == 12) && d.width() % 16 == 0 && rows_aligned(s, 16) &&
      rows_aligned(d, 16)) {
    if (pb == 3) return launch_mirror_groups<3>(s, d, flip_y, st);
    if (pb == 6) return launch_mirror_groups<6>(s, d, flip_y, st);
    return launch_mirror_groups<12>(s, d, flip_y, st);
  }
  const int w = int(s.width()), h = int(s.height());
  map_pixels(s, d, whole(w, true), whole(h, flip_y), BorderType::replicate, {}, st, op);
}

void flip(const ConstImageView& s, const ImageView& d, const FlipParams& p, cudaStream_t st) {
  if (p.mode == FlipMode::v) return copy_rows(s, d, int(s.height()) - 1, -1, st, "flip");
  mirror(s, d, p.mode == FlipMode::both, st, "flip");
}

void rotate(const ConstImageView& s, const ImageView& d, const RotateParams& p, cudaStream_t st) {
  if (p.angle == 180) return mirror(s, d, true, st, "rotate");
  const bool cw = p.angle == 90;
  if (s.format().pixel_bytes() == 1 && rows_aligned(s, 4) && rows_aligned(d, 4) &&
      (!cw || s.height() % 4 == 0)) {
    constexpr int T8 = kTransposeU8Tile, TH = kTransposeU8Threads;
    const dim3 grid = grid_2d(s.width(), s.height(), T8, T8);
    const int w = int(s.width()), h = int(s.height()), rt = blocks_y(s.height(), T8);
    if (cw)
      transpose_u8_kernel<U8Tiles::rotate_cw>
          <<<grid, dim3(TH, TH), 0, st>>>(bytes(s), s.stride(), bytes(d), d.stride(), w, h, rt);
    else
      transpose_u8_kernel<U8Tiles::rotate_ccw>
          <<<grid, dim3(TH, TH), 0, st>>>(bytes(s), s.stride(), bytes(d), d.stride(), w, h, rt);
    PIXFLOW_CUDA_CHECK_LAUNCH("rotate");
    return;
  }
  dispatch_pixel(s, d, "rotate",
                 [&]<int PB, int AL>() { launch_rot90<PB, AL>(s, d, p.angle == 90, st); });
}

void crop(const ConstImageView& s, const ImageView& d, const CropParams& p, cudaStream_t st) {
  copy_rows(s.roi(p.x, p.y, p.w, p.h), d, 0, 1, st, "crop");
}

void pad(const ConstImageView& s, const ImageView& d, const PadParams& p, cudaStream_t st) {
  const int w = int(s.width()), h = int(s.height()), ow = int(d.width());
  PixelBytes cval;
  const auto px = detail::constant_pixel(s.format(), p.border.value);
  std::memcpy(cval.b, px.data(), sizeof cval.b);
  copy_rows(s, d.roi(p.left, p.top, w, h), 0, 1, st, "pad");
  // Output columns and rows through the border rule: source o - left, o - top.
  const Axis all_x{ow, 0, ow, 0, -p.left, 1, w};
  const Axis sides_x{p.left + p.right, 0, p.left, w, -p.left, 1, w};
  const Axis ends_y{p.top + p.bottom, 0, p.top, h, -p.top, 1, h};
  const Axis middle_y{h, p.top, h, 0, -p.top, 1, h};
  map_pixels(s, d, all_x, ends_y, p.border.type, cval, st, "pad");
  map_pixels(s, d, sides_x, middle_y, p.border.type, cval, st, "pad");
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_geometry) {
  using namespace pixflow;
  // Pixels move as opaque groups of 1..16 bytes: every depth and channel count.
  const auto any = cuda::depths({Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32});
  cuda::add<&cuda::flip>(table, "flip", any);
  cuda::add<&cuda::rotate>(table, "rotate", any);
  cuda::add<&cuda::crop>(table, "crop", any);
  cuda::add<&cuda::pad>(table, "pad", any);
}
