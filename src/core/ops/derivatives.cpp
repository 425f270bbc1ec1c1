// SKELETON STUB: replaced by the op family's implementation.
#include "src/core/check.hpp"
#include "src/core/registry.hpp"

namespace pixflow {

void sobel(ConstImageView, ImageView, const SobelParams&, const Context&) {
  detail::fail(Status::internal, "sobel", "not implemented yet");
}

void scharr(ConstImageView, ImageView, const ScharrParams&, const Context&) {
  detail::fail(Status::internal, "scharr", "not implemented yet");
}

namespace detail {
void register_derivatives(std::vector<OpInfo>&) {}
}  // namespace detail

}  // namespace pixflow
