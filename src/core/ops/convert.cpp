// SKELETON STUB: replaced by the op family's implementation.
#include "src/core/check.hpp"
#include "src/core/registry.hpp"

namespace pixflow {

void convert(ConstImageView, ImageView, const ConvertParams&, const Context&) {
  detail::fail(Status::internal, "convert", "not implemented yet");
}

namespace detail {
void register_convert(std::vector<OpInfo>&) {}
}  // namespace detail

}  // namespace pixflow
