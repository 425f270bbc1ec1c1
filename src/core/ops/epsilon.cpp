// SKELETON STUB: replaced by the op family's implementation.
#include "src/core/check.hpp"
#include "src/core/registry.hpp"

namespace pixflow {

void epsilon(ConstImageView, ImageView, const EpsilonParams&, const Context&) {
  detail::fail(Status::internal, "epsilon", "not implemented yet");
}

namespace detail {
void register_epsilon(std::vector<OpInfo>&) {}
}  // namespace detail

}  // namespace pixflow
