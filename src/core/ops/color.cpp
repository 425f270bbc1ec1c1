// SKELETON STUB: replaced by the op family's implementation.
#include "src/core/check.hpp"
#include "src/core/registry.hpp"

namespace pixflow {

void gray(ConstImageView, ImageView, const GrayParams&, const Context&) {
  detail::fail(Status::internal, "gray", "not implemented yet");
}

namespace detail {
void register_color(std::vector<OpInfo>&) {}
}  // namespace detail

}  // namespace pixflow
