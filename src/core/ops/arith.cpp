// SKELETON STUB: replaced by the op family's implementation.
#include "src/core/check.hpp"
#include "src/core/registry.hpp"

namespace pixflow {

void arith(ConstImageView, ConstImageView, ImageView, ArithOp, const Context&) {
  detail::fail(Status::internal, "arith", "not implemented yet");
}

void arith(ConstImageView, double, ImageView, ArithOp, const Context&) {
  detail::fail(Status::internal, "arith", "not implemented yet");
}

namespace detail {
void register_arith(std::vector<OpInfo>&) {}
}  // namespace detail

}  // namespace pixflow
