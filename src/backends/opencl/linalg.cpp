// OpenCL dot and matmul (kernels/linalg.cl), the API-only two-input ops (core calls
// dispatch(op, ctx, a, a, b, dst)). The reference's sums in its order: the results are
// bit-identical to it (f32 included, within the documented bound by being the reference's
// own float sum; s32 exact in 128 bits, saturated). dot: one work-item per output. matmul:
// local-memory tiles with a register block a work-item (matmul_tile), or one work-item per
// output (PIXFLOW_OCL_MATMUL=simple, the first kernel, kept for A/B timing); "auto" picks
// a tile by the size (fills_twice).
#include <string>

#include "pixflow/ops.hpp"
#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/backends/opencl/variant.hpp"

namespace pixflow::opencl {
namespace {

void dot(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, const Launch& l) {
  if (dst.width() == 0 || dst.height() == 0) return;
  Kernel(l, "linalg", depth_options(Depth::f32), "dot_f32x4", "dot")
      .image(a)
      .image(b)
      .image(dst)
      .arg(cl_int(dst.width()))
      .arg(cl_int(dst.height()))
      .run(std::size_t(dst.width()), std::size_t(dst.height()), 64, 4);
}

// matmul_tile's shape (kernels/linalg.cl): a work-group's tile of c (tm x tn), the K slice
// staged in local memory (tk) and each work-item's register block (rm x rn; multiples of 4,
// tm / rm x tn / rn work-items, whose count must divide tm x tk and tk x tn) and how far a
// slice's k loop is unrolled (ku: 4 or tk).
struct GemmTile {
  int tm, tn, tk, rm, rn, ku;
};
// "tile": the CUDA backend's gemm.cu shape (64 x 64, K slices of 16, 4 x 4 a thread: 173 us
// at 1024^3 and 8838 us at 4096^3 on the H100, bench/NOTES.md), k unrolled by 4 (about 72
// registers: 3 work-groups an SM); "tile-full": the same fully unrolled (about 126: 2 an SM,
// every local load hoisted). "tile128": 128 x 128, 8 x 8 a work-item (64 products per 4
// 16-byte local loads, twice "tile"'s 16 per 2; 17 KB of local memory, about 171 registers:
// 1 work-group an SM). "tile64x128": 64 x 128, 4 x 8 a work-item (32 products per 3 loads;
// about 124 registers: 2 work-groups an SM).
// Register counts: ptxas -arch=sm_90 on clang's PTX (kernels/linalg.cl's header); NVIDIA's
// driver compiles for itself. PIXFLOW_OCL_MATMUL picks one for the A/B. s32 always takes "tile"
// (its 128-bit accumulators, 4 registers an output, do not fit the larger blocks; about 159
// registers even at 4 x 4).
constexpr GemmTile kTile64{64, 64, 16, 4, 4, 4}, kTile64Full{64, 64, 16, 4, 4, 16},
    kTile64x128{64, 128, 16, 4, 8, 4}, kTile128{128, 128, 16, 8, 8, 4};

// "auto": tile128 where it has at least two work-groups a compute unit (it holds one an SM:
// two waves keep the tail small), else tile: at 1024^3 tile128 has 64 groups for the H100's
// 132 SMs (half of them idle), tile 256; at 4096^3 1024 and 4096. A guess until the A/B on
// the H100 (untimed).
bool fills_twice(int M, int N, const GemmTile& g, const Launch& l) {
  const long groups = long((M + g.tm - 1) / g.tm) * long((N + g.tn - 1) / g.tn);
  return groups >= 2L * long(devices()[std::size_t(l.device)].compute_units);
}

// a is M x K (height M, width K), b is K x N, c is M x N.
void matmul(const ConstImageView& a, const ConstImageView& b, const ImageView& c, const Launch& l) {
  const int M = int(a.height()), K = int(a.width()), N = int(b.width());
  if (M == 0 || N == 0) return;
  // Default tile128: on the H100 197.5 us at 1024^3 and 6006 at 4096^3 (CUDA's exact-order
  // kernel 173 / 8838; the one-a-work-item kernel 417 / 26587; bench/NOTES.md, session 22).
  enum { kTile128Sched, kTileSched, kSimple, kAuto, kTileFull, kTile64x128Sched };
  const int schedule =
      variant("PIXFLOW_OCL_MATMUL",
              {"tile128", "tile", "simple", "auto", "tile-full", "tile64x128"}, "matmul");
  if (schedule != kSimple) {
    // s32 takes kTile64 on every tiled schedule (see above).
    const bool f32 = a.depth() == Depth::f32;
    const GemmTile g = !f32                                                  ? kTile64
                       : schedule == kTile128Sched                           ? kTile128
                       : schedule == kTileFull                               ? kTile64Full
                       : schedule == kTile64x128Sched                        ? kTile64x128
                       : schedule == kAuto && fills_twice(M, N, kTile128, l) ? kTile128
                                                                             : kTile64;
    const std::string options =
        depth_options(a.depth()) + detail::cat("-DTM=", g.tm, " -DTN=", g.tn, " -DTK=", g.tk,
                                               " -DRM=", g.rm, " -DRN=", g.rn, " -DKU=", g.ku);
    const std::size_t wx = std::size_t(g.tn / g.rn), wy = std::size_t(g.tm / g.rm);
    Kernel(l, "linalg", options, "matmul_tile", "matmul")
        .image(a)
        .image(b)
        .image(c)
        .arg(cl_int(M))
        .arg(cl_int(K))
        .arg(cl_int(N))
        .run(std::size_t((N + g.tn - 1) / g.tn) * wx, std::size_t((M + g.tm - 1) / g.tm) * wy, wx,
             wy);
    return;
  }
  Kernel(l, "linalg", depth_options(a.depth()), "matmul", "matmul")
      .image(a)
      .image(b)
      .image(c)
      .arg(cl_int(M))
      .arg(cl_int(K))
      .arg(cl_int(N))
      .run(std::size_t(N), std::size_t(M), 16, 16);
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_linalg) {
  using namespace pixflow;
  // dot: f32 x 4 vectors per pixel -> f32 x 1.
  opencl::add<&opencl::dot>(table, "dot", detail::Support::of({Depth::f32}, {4}));
  // matmul: one-channel f32 or s32 matrices (a and b of the same depth, validated by core).
  opencl::add<&opencl::matmul>(table, "matmul", detail::Support::of({Depth::f32, Depth::s32}, {1}));
}
