// SKELETON STUB: replaced by the op family's implementation.
#include "src/core/check.hpp"
#include "src/core/registry.hpp"

namespace pixflow {

void dot(ConstImageView, ConstImageView, ImageView, const Context&) {
  detail::fail(Status::internal, "dot", "not implemented yet");
}

void matmul(ConstImageView, ConstImageView, ImageView, const Context&) {
  detail::fail(Status::internal, "matmul", "not implemented yet");
}

}  // namespace pixflow
