// OpenCL resize (docs/ops/resize.md): kernels/resize.cl, the rules of src/base/rules/resize.h
// evaluated per work-item as the reference and CUDA do (no tables: a work-item's x taps once,
// its rows' y taps once a row). The linear and area kernels compute the taps in double
// (cl_khr_fp64); nearest is integer-only. Same-size area is the identity, run by the nearest
// kernel (its taps are then the identity).
#include <algorithm>
#include <cstdint>

#include "pixflow/ops.hpp"
#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/base/error.hpp"
#include "src/base/rules/resize.h"

namespace pixflow::opencl {
namespace {

// A work-group of 32 x 8; rows in a stride of at most 1024 work-items (each walks
// dh / 1024 rows at 8K, reusing its x taps).
constexpr std::size_t kLX = 32, kLY = 8, kMaxRows = 1024;

void resize(const ConstImageView& src, const ImageView& dst, const ResizeParams& p,
            const Launch& l) {
  if (dst.width() == 0 || dst.height() == 0) return;
  const cl_long sw = src.width(), sh = src.height(), dw = dst.width(), dh = dst.height();
  int mode = -1;  // area's mode; -1: not area
  if (p.interp == ResizeInterp::area) mode = px_resize_area_mode(sw, dw, sh, dh);
  const bool nearest = p.interp == ResizeInterp::nearest || mode == PX_RESIZE_AREA_COPY;
  if (!nearest) require_fp64(l, "resize");
  std::string opts = depth_options(src.depth());
  if (!nearest) opts += "-DRZ_FP64=1 ";
  const std::size_t gx = std::size_t(dw), gy = std::size_t(std::min<cl_long>(dh, kMaxRows));
  // The arguments every kernel but area_fast starts with: the views, channels, both sizes.
  auto sized = [&](Kernel& k) -> Kernel& {
    return k.image(src).image(dst).arg(cl_int(src.channels())).arg(sw).arg(sh).arg(dw).arg(dh);
  };
  if (nearest) {
    Kernel k(l, "resize", opts, "resize_nearest", "resize");
    sized(k)
        .arg(cl_long(px_resize_nearest_step(sw, dw)))
        .arg(cl_long(px_resize_nearest_step(sh, dh)))
        .run(gx, gy, kLX, kLY);
    return;
  }
  if (p.interp == ResizeInterp::linear || mode == PX_RESIZE_AREA_COVER) {
    const bool lin = p.interp == ResizeInterp::linear;
    Kernel k(l, "resize", opts, lin ? "resize_linear" : "resize_area_cover", "resize");
    sized(k)
        .arg(cl_double(px_resize_linear_scale(sw, dw)))
        .arg(cl_double(px_resize_linear_scale(sh, dh)))
        .run(gx, gy, kLX, kLY);
    return;
  }
  if (mode == PX_RESIZE_AREA_FAST) {
    const cl_long kx = px_resize_area_factor(sw, dw), ky = px_resize_area_factor(sh, dh);
    Kernel(l, "resize", opts, "resize_area_fast", "resize")
        .image(src)
        .image(dst)
        .arg(cl_int(src.channels()))
        .arg(dw)
        .arg(dh)
        .arg(kx)
        .arg(ky)
        .arg(cl_float(px_resize_area_fast_scale(kx, ky)))
        .run(gx, gy, kLX, kLY);
    return;
  }
  Kernel k(l, "resize", opts, "resize_area_linear", "resize");
  sized(k).run(gx, gy, kLX, kLY);
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_resize) {
  using namespace pixflow;
  opencl::add<&opencl::resize>(table, "resize",
                               opencl::depths({Depth::u8, Depth::u16, Depth::s16, Depth::f32}));
}
