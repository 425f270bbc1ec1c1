// The public simple geometry ops: flip, rotate, crop, pad. Each checks its images and
// parameters against its schema (src/schema/geometry.cpp: crop's rectangle and pad's output
// size are checked by the schema's output shape), then dispatches to the images' backend.
#include "src/core/check.hpp"
#include "src/core/dispatch.hpp"
#include "src/schema/ops.hpp"

namespace pixflow {

#define PIXFLOW_GEOMETRY_OP(name, Params)                                             \
  void name(ConstImageView src, ImageView dst, const Params& p, const Context& ctx) { \
    detail::check_op(schema::name##_op(), src, dst, p);                               \
    detail::dispatch(#name, ctx, src, src, dst, p);                                   \
  }

PIXFLOW_GEOMETRY_OP(flip, FlipParams)
PIXFLOW_GEOMETRY_OP(rotate, RotateParams)
PIXFLOW_GEOMETRY_OP(crop, CropParams)
PIXFLOW_GEOMETRY_OP(pad, PadParams)

#undef PIXFLOW_GEOMETRY_OP

}  // namespace pixflow
