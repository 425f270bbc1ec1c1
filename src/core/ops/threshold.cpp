// SKELETON STUB: replaced by the op family's implementation.
#include "src/core/check.hpp"
#include "src/core/registry.hpp"

namespace pixflow {

void threshold(ConstImageView, ImageView, const ThresholdParams&, const Context&) {
  detail::fail(Status::internal, "threshold", "not implemented yet");
}

namespace detail {
void register_threshold(std::vector<OpInfo>&) {}
}  // namespace detail

}  // namespace pixflow
