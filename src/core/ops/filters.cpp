// The public neighbourhood filters: each checks its images and parameters against its
// schema (src/schema), then dispatches to the backend of the images (src/core/dispatch.hpp).
#include "src/core/check.hpp"
#include "src/core/dispatch.hpp"
#include "src/schema/ops.hpp"

namespace pixflow {

// The public function of a one-source op: the schema's checks, then the backend's
// implementation registered under the op's name.
#define PIXFLOW_ONE_SOURCE_OP(name, Params)                                           \
  void name(ConstImageView src, ImageView dst, const Params& p, const Context& ctx) { \
    detail::check_op(schema::name##_op(), src, dst, p);                               \
    detail::dispatch(#name, ctx, src, src, dst, p);                                   \
  }

PIXFLOW_ONE_SOURCE_OP(median, MedianParams)
PIXFLOW_ONE_SOURCE_OP(box, BoxParams)

void gaussian(ConstImageView src, ImageView dst, const GaussianParams& p, const Context& ctx) {
  detail::check_op(schema::gaussian_op(), src, dst, p);
  // Backends receive the resolved window (kw, kh, sigma, sigma_y all set).
  const GaussianParams r = schema::resolve_gaussian(p, src.depth());
  detail::dispatch("gaussian", ctx, src, src, dst, r);
}

PIXFLOW_ONE_SOURCE_OP(gaussian_iir, GaussianIirParams)

// The backend's scratch layout (registered as "gaussian_iir.workspace": the same function its
// implementation takes its scratch through); a backend without one needs none.
std::size_t gaussian_iir_workspace_bytes(ConstImageView src, const GaussianIirParams& p,
                                         const Context& ctx) {
  detail::check_source_shape(schema::gaussian_iir_op(), src, p);
  const std::string layout = detail::scratch_op("gaussian_iir");
  return detail::measure_scratch("gaussian_iir", ctx, src.location(), [&](const detail::Exec& e) {
    if (detail::has_impl<ConstImageView, GaussianIirParams>(layout, e, src.format()))
      detail::run_on(layout, e, src.format(), src, p);
  });
}
PIXFLOW_ONE_SOURCE_OP(sobel, SobelParams)
PIXFLOW_ONE_SOURCE_OP(scharr, ScharrParams)
PIXFLOW_ONE_SOURCE_OP(filter2d, Filter2dParams)
PIXFLOW_ONE_SOURCE_OP(epsilon, EpsilonParams)
PIXFLOW_ONE_SOURCE_OP(bilateral, BilateralParams)

#undef PIXFLOW_ONE_SOURCE_OP

}  // namespace pixflow
