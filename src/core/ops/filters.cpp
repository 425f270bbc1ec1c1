// The public neighbourhood filters: each checks its images and parameters against its
// schema (src/schema), then dispatches to the backend of the images (src/core/dispatch.hpp).
#include "src/core/check.hpp"
#include "src/core/dispatch.hpp"
#include "src/schema/ops.hpp"

namespace pixflow {

void median(ConstImageView src, ImageView dst, const MedianParams& p, const Context& ctx) {
  detail::check_op(schema::median_op(), src, dst, p);
  detail::dispatch("median", ctx, src, src, dst, p);
}

void box(ConstImageView src, ImageView dst, const BoxParams& p, const Context& ctx) {
  detail::check_op(schema::box_op(), src, dst, p);
  detail::dispatch("box", ctx, src, src, dst, p);
}

void gaussian(ConstImageView src, ImageView dst, const GaussianParams& p, const Context& ctx) {
  detail::check_op(schema::gaussian_op(), src, dst, p);
  // Backends receive the resolved window (kw, kh, sigma, sigma_y all set).
  const GaussianParams r = schema::resolve_gaussian(p, src.depth());
  detail::dispatch("gaussian", ctx, src, src, dst, r);
}

void gaussian_iir(ConstImageView src, ImageView dst, const GaussianIirParams& p,
                  const Context& ctx) {
  detail::check_op(schema::gaussian_iir_op(), src, dst, p);
  detail::dispatch("gaussian_iir", ctx, src, src, dst, p);
}

void sobel(ConstImageView src, ImageView dst, const SobelParams& p, const Context& ctx) {
  detail::check_op(schema::sobel_op(), src, dst, p);
  detail::dispatch("sobel", ctx, src, src, dst, p);
}

void scharr(ConstImageView src, ImageView dst, const ScharrParams& p, const Context& ctx) {
  detail::check_op(schema::scharr_op(), src, dst, p);
  detail::dispatch("scharr", ctx, src, src, dst, p);
}

void filter2d(ConstImageView src, ImageView dst, const Filter2dParams& p, const Context& ctx) {
  detail::check_op(schema::filter2d_op(), src, dst, p);
  detail::dispatch("filter2d", ctx, src, src, dst, p);
}

void epsilon(ConstImageView src, ImageView dst, const EpsilonParams& p, const Context& ctx) {
  detail::check_op(schema::epsilon_op(), src, dst, p);
  detail::dispatch("epsilon", ctx, src, src, dst, p);
}

void bilateral(ConstImageView src, ImageView dst, const BilateralParams& p, const Context& ctx) {
  detail::check_op(schema::bilateral_op(), src, dst, p);
  detail::dispatch("bilateral", ctx, src, src, dst, p);
}

}  // namespace pixflow
