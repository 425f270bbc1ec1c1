// OpenCL remap (kernels/remap.cl), built per sample type (u8, u16, f32; any channel count
// 1..4, as CUDA registers), two schedules (the same bits; PIXFLOW_OCL_REMAP picks, for A/B
// timing): px4 (default) remap_px, 4 adjacent pixels a work-item with the channel count a
// constant and the interior formula (no border rule where every tap is inside); pixel, the
// first kernel, one work-item per destination pixel, every tap through the border rule. The
// constant border's value is saturated to T here with the reference's saturate_cast
// (src/base/numeric.hpp) and passed as float (exact for u8 / u16).
#include <cstdint>

#include "pixflow/ops.hpp"
#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/backends/opencl/variant.hpp"
#include "src/base/error.hpp"
#include "src/base/numeric.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::opencl {
namespace {

// remap_px's pixels a work-item (kernels/remap.cl RPX).
constexpr std::int64_t kPx = 4;

void remap(const ConstImageView& src, const ConstImageView& map_x, const ConstImageView& map_y,
           const ImageView& dst, const RemapParams& p, const Launch& l) {
  if (dst.width() == 0 || dst.height() == 0) return;
  const float cval = detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(
      src.depth(),
      [&](auto t) { return float(detail::saturate_cast<decltype(t)>(p.border.value)); });
  const float invalid = p.border.type == BorderType::constant ? cval : 0.0f;
  // The default kernel takes kPx pixels a work-item; the per-pixel one (A/B) one.
  const bool px4 = variant("PIXFLOW_OCL_REMAP", {"px4", "pixel"}, "remap") == 0;
  const std::int64_t px = px4 ? kPx : 1;
  Kernel(l, "remap",
         depth_options(src.depth()) + detail::cat(" -DCN=", src.channels(), " -DRPX=", kPx),
         px4 ? "remap_px" : "remap", "remap")
      .image(src)
      .image(map_x)
      .image(map_y)
      .image(dst)
      .arg(cl_int(src.width()))
      .arg(cl_int(src.height()))
      .arg(cl_int(dst.width()))
      .arg(cl_int(dst.height()))
      .arg(cl_int(p.interp == Interp::linear ? 1 : 0))
      .arg(cl_int(p.border.type))
      .arg(cl_float(cval))
      .arg(cl_float(invalid))
      .run(std::size_t((dst.width() + px - 1) / px), std::size_t(dst.height()), px4 ? 32 : 16,
           px4 ? 8 : 16);
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_remap) {
  using namespace pixflow;
  // Any channel count 1..4 (core validates 1, 3 or 4); maps are f32 x 1.
  opencl::add<&opencl::remap>(table, "remap", opencl::depths({Depth::u8, Depth::u16, Depth::f32}));
}
