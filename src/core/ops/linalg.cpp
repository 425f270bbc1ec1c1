// dot and matmul (API only, not in the CLI registry): validation and dispatch. Not in the schema's
// catalogue: two images in, no pipeline stage. Rules: docs/ops/linalg.md.
#include "src/core/check.hpp"
#include "src/core/dispatch.hpp"

namespace pixflow {

void dot(ConstImageView a, ConstImageView b, ImageView dst, const Context& ctx) {
  constexpr const char* op = "dot";
  detail::check_view(op, "a", a);
  detail::check_view(op, "b", b);
  detail::check_depth(op, "a", a, {Depth::f32});
  detail::check_depth(op, "b", b, {Depth::f32});
  detail::check_channels(op, "a", a, {4});
  detail::check_channels(op, "b", b, {4});
  detail::require(b.width() == a.width() && b.height() == a.height(), Status::invalid_argument, op,
                  "b must have a's size ", a.width(), "x", a.height(), " (got ", b.width(), "x",
                  b.height(), ")");
  detail::check_dst(op, dst, a.width(), a.height(), {Depth::f32, 1});
  detail::check_same_location(op, a, b);
  detail::check_same_location(op, a, dst);
  detail::check_no_overlap(op, a, dst);
  detail::check_no_overlap(op, b, dst);
  detail::dispatch(op, ctx, a, a, b, dst);
}

void matmul(ConstImageView a, ConstImageView b, ImageView c, const Context& ctx) {
  constexpr const char* op = "matmul";
  detail::check_view(op, "a", a);
  detail::check_view(op, "b", b);
  detail::check_depth(op, "a", a, {Depth::f32, Depth::s32});
  detail::check_depth(op, "b", b, {Depth::f32, Depth::s32});
  detail::check_channels(op, "a", a, {1});
  detail::check_channels(op, "b", b, {1});
  detail::require(a.depth() == b.depth(), Status::unsupported, op,
                  "a and b must have the same depth (got a ", depth_name(a.depth()), ", b ",
                  depth_name(b.depth()), ")");
  // Image width = columns: A is M x K (height M, width K), B is K x N.
  detail::require(a.width() == b.height(), Status::invalid_argument, op,
                  "a's columns (K = width) must equal b's rows (height): a is ", a.height(), "x",
                  a.width(), " (rows x cols), b is ", b.height(), "x", b.width());
  detail::check_dst(op, c, b.width(), a.height(), {a.depth(), 1});
  detail::check_same_location(op, a, b);
  detail::check_same_location(op, a, c);
  detail::check_no_overlap(op, a, c);
  detail::check_no_overlap(op, b, c);
  detail::dispatch(op, ctx, a, a, b, c);
}

}  // namespace pixflow
