// SKELETON STUB: replaced by the op family's implementation.
#include "src/core/check.hpp"
#include "src/core/registry.hpp"

namespace pixflow {

void bilateral(ConstImageView, ImageView, const BilateralParams&, const Context&) {
  detail::fail(Status::internal, "bilateral", "not implemented yet");
}

namespace detail {
void register_bilateral(std::vector<OpInfo>&) {}
}  // namespace detail

}  // namespace pixflow
