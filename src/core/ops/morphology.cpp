// SKELETON STUB: replaced by the op family's implementation.
#include "src/core/check.hpp"
#include "src/core/registry.hpp"

namespace pixflow {

void morphology(ConstImageView, ImageView, MorphOp, const MorphParams&, const Context&) {
  detail::fail(Status::internal, "morphology", "not implemented yet");
}

namespace detail {
void register_morphology(std::vector<OpInfo>&) {}
}  // namespace detail

}  // namespace pixflow
