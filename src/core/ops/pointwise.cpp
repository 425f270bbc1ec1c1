// The public point-wise and geometry ops: remap, transpose, gray, arith, convert, threshold.
#include <cmath>

#include "src/core/check.hpp"
#include "src/core/dispatch.hpp"
#include "src/schema/ops.hpp"

namespace pixflow {

void remap(ConstImageView src, ConstImageView map_x, ConstImageView map_y, ImageView dst,
           const RemapParams& p, const Context& ctx) {
  constexpr const char* op = "remap";
  const auto& s = schema::remap_op();
  s.validate(schema::RemapStage{p, nullptr, nullptr});
  detail::check_view(op, "src", src);
  detail::check_depth(op, "src", src, s.depths());
  detail::check_channels(op, "src", src, s.channels());
  for (auto [name, m] : {std::pair{"map_x", map_x}, std::pair{"map_y", map_y}}) {
    detail::check_view(op, name, m);
    detail::require(m.depth() == Depth::f32 && m.channels() == 1, Status::invalid_argument, op,
                    name, " must be 1-channel f32 (got ", to_string(m.format()), ")");
  }
  detail::require(map_x.width() == map_y.width() && map_x.height() == map_y.height(),
                  Status::invalid_argument, op, "map_y must have map_x's size ", map_x.width(), "x",
                  map_x.height(), " (got ", map_y.width(), "x", map_y.height(), ")");
  detail::check_dst(op, dst, map_x.width(), map_x.height(), src.format());
  for (const ConstImageView& in : {src, map_x, map_y}) {
    detail::check_same_location(op, in, dst);
    detail::check_no_overlap(op, in, dst);
  }
  detail::dispatch(op, ctx, src, src, map_x, map_y, dst, p);
}

void transpose(ConstImageView src, ImageView dst, const Context& ctx) {
  detail::check_op(schema::transpose_op(), src, dst, schema::NoParams{});
  detail::dispatch("transpose", ctx, src, src, dst);
}

void resize(ConstImageView src, ImageView dst, const ResizeParams& p, const Context& ctx) {
  detail::check_op(schema::resize_op(), src, dst, p);
  detail::dispatch("resize", ctx, src, src, dst, p);
}

void gray(ConstImageView src, ImageView dst, const GrayParams& p, const Context& ctx) {
  detail::check_op(schema::gray_op(), src, dst, p);
  detail::dispatch("gray", ctx, src, src, dst, p);
}

void channels(ConstImageView src, ImageView dst, const ChannelsParams& p, const Context& ctx) {
  detail::check_op(schema::channels_op(), src, dst, p);
  detail::dispatch("channels", ctx, src, src, dst, p);
}

void arith(ConstImageView a, ConstImageView b, ImageView dst, ArithOp aop, const Context& ctx) {
  const auto& s = schema::arith_op(aop);
  const std::string& op = s.name();
  detail::check_op(s, a, dst, schema::ArithStage{}, /*in_place=*/true);
  detail::check_view(op, "b", b);
  detail::require(b.width() == a.width() && b.height() == a.height() && b.format() == a.format(),
                  Status::invalid_argument, op, "b must have a's size and format ", a.width(), "x",
                  a.height(), " ", to_string(a.format()), " (got ", b.width(), "x", b.height(), " ",
                  to_string(b.format()), ")");
  detail::check_same_location(op, b, dst);
  detail::check_no_overlap(op, b, dst, /*allow_identical=*/true);
  detail::dispatch(op, ctx, a, a, b, dst, aop);
}

void arith(ConstImageView a, double value, ImageView dst, ArithOp aop, const Context& ctx) {
  const auto& s = schema::arith_op(aop);
  detail::check_op(s, a, dst, schema::ArithStage{}, /*in_place=*/true);
  detail::require(std::isfinite(value), Status::invalid_argument, s.name(),
                  "value must be a finite number (got ", value, ")");
  detail::dispatch(s.name(), ctx, a, a, value, dst, aop);
}

double auto_scale(Depth from, Depth to) {
  // The top of each depth's range: the scale maps one top onto the other.
  auto top = [&](Depth d) {
    detail::require(d == Depth::u8 || d == Depth::u16 || d == Depth::f32, Status::invalid_argument,
                    "convert", "scale=auto is defined between u8, u16 and f32 (got ",
                    depth_name(from), " to ", depth_name(to), "); give scale a number");
    return d == Depth::u8 ? 255.0 : d == Depth::u16 ? 65535.0 : 1.0;
  };
  const double a = top(from), b = top(to);
  return a == b ? 1.0 : b / a;
}

void convert(ConstImageView src, ImageView dst, const ConvertParams& p, const Context& ctx) {
  // In place only on identical views of the same depth (element i is read before it is
  // written); a depth change moves the samples, so any overlap is refused.
  detail::check_op(schema::convert_op(), src, dst, p, /*in_place=*/p.to == src.depth());
  ConvertParams q = p;
  if (q.auto_scale) {
    q.scale = auto_scale(src.depth(), q.to);
    q.auto_scale = false;
  }
  detail::dispatch("convert", ctx, src, src, dst, q);
}

void threshold(ConstImageView src, ImageView dst, const ThresholdParams& p, const Context& ctx) {
  detail::check_op(schema::threshold_op(), src, dst, p, /*in_place=*/true);
  detail::dispatch("threshold", ctx, src, src, dst, p);
}

}  // namespace pixflow
