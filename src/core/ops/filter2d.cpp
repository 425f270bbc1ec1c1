// SKELETON STUB: replaced by the op family's implementation.
#include "src/core/check.hpp"
#include "src/core/registry.hpp"

namespace pixflow {

void filter2d(ConstImageView, ImageView, const Filter2dParams&, const Context&) {
  detail::fail(Status::internal, "filter2d", "not implemented yet");
}

namespace detail {
void register_filter2d(std::vector<OpInfo>&) {}
}  // namespace detail

}  // namespace pixflow
