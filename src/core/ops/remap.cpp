// SKELETON STUB: replaced by the op family's implementation.
#include "src/core/check.hpp"
#include "src/core/registry.hpp"

namespace pixflow {

void remap(ConstImageView, ConstImageView, ConstImageView, ImageView, const RemapParams&, const Context&) {
  detail::fail(Status::internal, "remap", "not implemented yet");
}

namespace detail {
void register_remap(std::vector<OpInfo>&) {}
}  // namespace detail

}  // namespace pixflow
