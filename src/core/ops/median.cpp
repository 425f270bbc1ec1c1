// SKELETON STUB: replaced by the op family's implementation.
#include "src/core/check.hpp"
#include "src/core/registry.hpp"

namespace pixflow {

void median(ConstImageView, ImageView, const MedianParams&, const Context&) {
  detail::fail(Status::internal, "median", "not implemented yet");
}

namespace detail {
void register_median(std::vector<OpInfo>&) {}
}  // namespace detail

}  // namespace pixflow
