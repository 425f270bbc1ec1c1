// OpenCL epsilon filter (kernels/epsilon.cl), schedules that give the same bits
// (PIXFLOW_OCL_EPSILON picks, for A/B timing):
//   auto (default): quad for u8 on NVIDIA sm_90 and later (its PTX video instructions), tile
//     elsewhere; on the H100 (session 24, r=4) quad against tile: u8x1 8192^2 582 / 1113 us,
//     u8x3 1833 / 3389, 1080p u8x1 28.9 / 40.3, u8x3 69.5 / 114.4;
//   tile: r in 1..7 with 1..4 channels on the tile kernels (epsilon_u8_tile,
//     epsilon_f32_tile: a work-group per 32 interleaved samples x 64 rows from a local tile, a
//     work-item a column of 8 outputs of one channel; u8 sum and count in one add, the
//     threshold test one compare; f32 the reference's double compare and sum, each source row
//     widened once), the rest (r = 0, r > 7) on the per-pixel kernel;
//   quad: as tile, but u8 on epsilon_u8_quad (CUDA's packed arithmetic, four taps of one output
//     a 32-bit word: PTX vabsdiff4 / dp4a on NVIDIA sm_90, plain OpenCL C elsewhere, which is
//     slower than tile);
//   pixel: the per-pixel kernel everywhere: one work-item per pixel, the window through
//     border_index.
// u8 compares and sums in integers (the threshold floor(t), capped at 255, is made here: the
// sample distances are integers, so it is the reference's double comparison); f32 compares and
// sums in double as the reference does, so it needs cl_khr_fp64. The constant border's value is
// saturated to T here with the reference's saturate_cast.
#include <cmath>
#include <cstdint>
#include <string>

#include "pixflow/ops.hpp"
#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/backends/opencl/variant.hpp"
#include "src/base/error.hpp"
#include "src/base/numeric.hpp"

namespace pixflow::opencl {
namespace {

// The tile kernels' shape (kernels/epsilon.cl EPS_*): 32 x 8 work-items, a column of 8 outputs
// each; radius <= 7 (u8: the packed sum and count, 225 x 255 < 2^16; the local tile at r = 7
// and 4 channels is 88 x 78 words, 27 KiB, under OpenCL's 32 KiB minimum).
constexpr std::size_t kTileLx = 32, kTileLy = 8;
constexpr std::int64_t kTileW = 32, kTileH = 64;
constexpr int kTileMaxRadius = 7;

void epsilon(const ConstImageView& src, const ImageView& dst, const EpsilonParams& p,
             const Launch& l) {
  if (dst.width() == 0 || dst.height() == 0) return;
  const bool f32 = src.depth() == Depth::f32;
  if (f32) require_fp64(l, "epsilon");
  enum Schedule { automatic, tile, pixel, quad_u8 };
  auto schedule =
      Schedule(variant("PIXFLOW_OCL_EPSILON", {"auto", "tile", "pixel", "quad"}, "epsilon"));
  const bool nv_video = devices()[std::size_t(l.device)].nv_cc_major >= 9;
  if (schedule == automatic) schedule = nv_video ? quad_u8 : tile;
  const int cn = src.channels();
  // t >= 0 (the schema); |v - centre| is an integer in [0, 255].
  const int t = p.t >= 255.0 ? 255 : int(std::floor(p.t));
  const cl_int u8_cval = detail::saturate_cast<std::uint8_t>(p.border.value);
  // The tile kernels index a row's samples in int: w * cn + the halo must fit.
  const std::int64_t row_samples = dst.width() * cn;
  if (schedule != pixel && p.r >= 1 && p.r <= kTileMaxRadius && cn >= 1 && cn <= 4 &&
      row_samples + 2 * kTileW * kTileMaxRadius < std::int64_t(INT32_MAX)) {
    // The quad kernel's compare (kernels/epsilon.cl, CUDA's eps_u8::u8_compare_mode / _k): M
    // = t + 128 and the flags as they come for t <= 127, M = t - 127 and the flags inverted for
    // 128..254; t = 255 (every tap counts) stays on epsilon_u8_tile.
    const bool quad = schedule == quad_u8 && !f32 && t < 255;
    std::string options =
        depth_options(src.depth()) + detail::cat(" -DEPS_R=", p.r, " -DEPS_CN=", cn);
    if (quad) {
      options += " -DEPS_QUAD=1";
      if (nv_video) options += " -DPIXFLOW_PTX_VIDEO=1";
    }
    Kernel k(l, "epsilon", options,
             f32    ? "epsilon_f32_tile"
             : quad ? "epsilon_u8_quad"
                    : "epsilon_u8_tile",
             "epsilon");
    k.image(src)
        .image(dst)
        .arg(cl_int(dst.width()))
        .arg(cl_int(dst.height()))
        .arg(cl_int(p.border.type));
    if (f32)
      k.arg(cl_double(p.t)).arg(cl_float(detail::saturate_cast<float>(p.border.value)));
    else if (quad)
      k.arg(cl_uint(std::uint32_t(t <= 127 ? t + 128 : t - 127) * 0x01010101u))
          .arg(cl_uint(t <= 127 ? 0u : ~0u))
          .arg(u8_cval);
    else
      k.arg(cl_int(t)).arg(u8_cval);
    k.run(std::size_t((row_samples + kTileW - 1) / kTileW) * kTileLx,
          std::size_t((dst.height() + kTileH - 1) / kTileH) * kTileLy, kTileLx, kTileLy);
    return;
  }
  Kernel k(l, "epsilon", depth_options(src.depth()), "epsilon", "epsilon");
  k.image(src)
      .image(dst)
      .arg(cl_int(dst.width()))
      .arg(cl_int(dst.height()))
      .arg(cl_int(src.channels()))
      .arg(cl_int(p.r))
      .arg(cl_int(p.border.type));
  if (f32) {
    k.arg(cl_double(p.t)).arg(cl_float(detail::saturate_cast<float>(p.border.value)));
  } else {
    k.arg(cl_int(t)).arg(u8_cval);
  }
  k.run(std::size_t(dst.width()), std::size_t(dst.height()), 16, 16);
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_epsilon) {
  using namespace pixflow;
  opencl::add<&opencl::epsilon>(table, "epsilon", opencl::depths({Depth::u8, Depth::f32}));
}
