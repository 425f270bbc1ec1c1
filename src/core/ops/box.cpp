// SKELETON STUB: replaced by the op family's implementation.
#include "src/core/check.hpp"
#include "src/core/registry.hpp"

namespace pixflow {

void box(ConstImageView, ImageView, const BoxParams&, const Context&) {
  detail::fail(Status::internal, "box", "not implemented yet");
}

namespace detail {
void register_box(std::vector<OpInfo>&) {}
}  // namespace detail

}  // namespace pixflow
