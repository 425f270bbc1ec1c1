// OpenCL point-wise ops: arith (image and scalar), convert, threshold, gray, transpose
// (kernels/pointwise.cl). Each program is built per sample type (and destination type for
// convert); the rules are src/base/pointwise.hpp's, the integer threshold constants come
// from the same int_threshold the reference uses.
#include "src/base/pointwise.hpp"
#include "pixflow/ops.hpp"
#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/base/error.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::opencl {
namespace {

constexpr std::size_t kLx = 64, kLy = 4;

void arith_image(const ConstImageView& a, const ConstImageView& b, const ImageView& d, ArithOp op,
                 const Launch& l) {
  const int n = int(d.width() * d.channels()), rows = int(d.height());
  Kernel(l, "pointwise", depth_options(a.depth()), "arith_image", arith_op_name(op))
      .image(a)
      .image(b)
      .image(d)
      .arg(cl_int(n))
      .arg(cl_int(rows))
      .arg(cl_int(op))
      .run(std::size_t(n), std::size_t(rows), kLx, kLy);
}

void arith_scalar(const ConstImageView& a, double v, const ImageView& d, ArithOp op,
                  const Launch& l) {
  require_fp64(l, arith_op_name(op));
  const int n = int(d.width() * d.channels()), rows = int(d.height());
  Kernel(l, "pointwise", depth_options(a.depth()) + "-DNEED_FP64=1", "arith_scalar",
         arith_op_name(op))
      .image(a)
      .arg(cl_double(v))
      .image(d)
      .arg(cl_int(n))
      .arg(cl_int(rows))
      .arg(cl_int(op))
      .run(std::size_t(n), std::size_t(rows), kLx, kLy);
}

void convert(const ConstImageView& s, const ImageView& d, const ConvertParams& p, const Launch& l) {
  require_fp64(l, "convert");
  const int n = int(d.width() * d.channels()), rows = int(d.height());
  Kernel(l, "pointwise", depth_options(s.depth()) + depth_options(d.depth(), "D") + "-DNEED_FP64=1",
         "convert", "convert")
      .image(s)
      .image(d)
      .arg(cl_int(n))
      .arg(cl_int(rows))
      .arg(cl_double(p.scale))
      .arg(cl_double(p.offset))
      .arg(cl_int(p.abs ? 1 : 0))
      .run(std::size_t(n), std::size_t(rows), kLx, kLy);
}

void threshold(const ConstImageView& s, const ImageView& d, const ThresholdParams& p,
               const Launch& l) {
  const int n = int(d.width() * d.channels()), rows = int(d.height());
  Kernel k(l, "pointwise", depth_options(s.depth()), "threshold", "threshold");
  k.image(s).image(d).arg(cl_int(n)).arg(cl_int(rows)).arg(cl_int(p.type));
  detail::visit_depth(s.depth(), [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, float>) {
      k.arg(cl_float(detail::to_float_clamped(p.t)))
          .arg(cl_float(detail::to_float_clamped(p.t)))
          .arg(cl_float(detail::to_float_clamped(p.maxval)));
    } else {
      const auto c = detail::int_threshold<T>(p.t, p.maxval);
      k.arg(cl_long(c.it)).arg(c.tv).arg(c.mv);
    }
  });
  k.run(std::size_t(n), std::size_t(rows), kLx, kLy);
}

void gray(const ConstImageView& s, const ImageView& d, const GrayParams& p, const Launch& l) {
  Kernel(l, "pointwise", depth_options(s.depth()), "gray", "gray")
      .image(s)
      .image(d)
      .arg(cl_int(d.width()))
      .arg(cl_int(d.height()))
      .arg(cl_int(s.channels()))
      .arg(cl_int(p.from_bgr ? 2 : 0))
      .arg(cl_int(p.from_bgr ? 0 : 2))
      .run(std::size_t(d.width()), std::size_t(d.height()), kLx, kLy);
}

void transpose(const ConstImageView& s, const ImageView& d, const Launch& l) {
  Kernel(l, "pointwise", depth_options(Depth::u8), "transpose", "transpose")
      .image(s)
      .image(d)
      .arg(cl_int(d.width()))
      .arg(cl_int(d.height()))
      .arg(cl_int(s.format().pixel_bytes()))
      .run(std::size_t(d.width()), std::size_t(d.height()), 16, 16);
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_pointwise) {
  using namespace pixflow;
  const auto any = opencl::depths({Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32});
  for (const char* op : {"add", "sub", "absdiff", "mul"}) {
    opencl::add<&opencl::arith_image>(table, op, any);
    opencl::add<&opencl::arith_scalar>(table, op, any);
  }
  opencl::add<&opencl::convert>(table, "convert", any);
  opencl::add<&opencl::threshold>(table, "threshold", any);
  opencl::add<&opencl::gray>(table, "gray",
                             detail::Support::of({Depth::u8, Depth::u16, Depth::f32}, {3, 4}));
  opencl::add<&opencl::transpose>(table, "transpose", any);
}
