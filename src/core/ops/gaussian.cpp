// SKELETON STUB: replaced by the op family's implementation.
#include "src/core/check.hpp"
#include "src/core/registry.hpp"

namespace pixflow {

void gaussian(ConstImageView, ImageView, const GaussianParams&, const Context&) {
  detail::fail(Status::internal, "gaussian", "not implemented yet");
}

void gaussian_iir(ConstImageView, ImageView, const GaussianIirParams&, const Context&) {
  detail::fail(Status::internal, "gaussian_iir", "not implemented yet");
}

namespace detail {
void register_gaussian(std::vector<OpInfo>&) {}
}  // namespace detail

}  // namespace pixflow
