// remap: validation, dispatch, registry entry. Rules: docs/ops/remap.md.
#include <memory>

#include "src/core/check.hpp"
#include "src/core/registry.hpp"
#include "src/core/run.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_CUDA
#include "src/backends/cuda/cuda_ops.hpp"
#endif

namespace pixflow {
namespace {

// A map must be a 1-channel f32 image (a malformed parameter: invalid_argument).
void check_map(std::string_view name, const ConstImageView& m) {
  constexpr const char* op = "remap";
  detail::check_view(op, name, m);
  detail::require(m.depth() == Depth::f32 && m.channels() == 1, Status::invalid_argument, op, name,
                  " must be 1-channel f32 (got ", to_string(m.format()), ")");
}

void check_map_sizes(const ConstImageView& mx, const ConstImageView& my) {
  detail::require(mx.width() == my.width() && mx.height() == my.height(), Status::invalid_argument,
                  "remap", "map_y must have map_x's size ", mx.width(), "x", mx.height(), " (got ",
                  my.width(), "x", my.height(), ")");
}

}  // namespace

void remap(ConstImageView src, ConstImageView map_x, ConstImageView map_y, ImageView dst,
           const RemapParams& p, const Context& ctx) {
  constexpr const char* op = "remap";
  detail::require(p.interp == Interp::nearest || p.interp == Interp::linear,
                  Status::invalid_argument, op, "interp must be nearest or linear");
  detail::check_border(op, p.border);
  detail::check_view(op, "src", src);
  detail::check_depth(op, "src", src, {Depth::u8, Depth::u16, Depth::f32});
  detail::check_channels(op, "src", src, {1, 3, 4});
  check_map("map_x", map_x);
  check_map("map_y", map_y);
  check_map_sizes(map_x, map_y);
  detail::check_dst(op, dst, map_x.width(), map_x.height(), src.format());
  detail::check_same_location(op, src, dst);
  detail::check_same_location(op, src, map_x);
  detail::check_same_location(op, src, map_y);
  detail::check_no_overlap(op, src, dst);
  detail::check_no_overlap(op, map_x, dst);
  detail::check_no_overlap(op, map_y, dst);
  const Backend b = detail::select_backend(op, ctx, src);
  switch (b) {
    case Backend::ref:
    case Backend::cpu:
      detail::run_host(b, ctx, dst.height(),
                       [&](detail::Rows r) { ref::remap(src, map_x, map_y, dst, p, r); });
      return;
#if PIXFLOW_HAVE_CUDA
    case Backend::cuda:
      cuda::remap(src, map_x, map_y, dst, p, ctx.stream);
      return;
#endif
    default:
      detail::fail(Status::unsupported, op, "no ", backend_name(b), " implementation yet");
  }
}

namespace detail {
void register_remap(std::vector<OpInfo>& r) {
  std::vector<ParamInfo> params{
      {"map_x", "(required)", "1-channel f32 image file: source x of every destination pixel"},
      {"map_y", "(required)", "1-channel f32 image file of map_x's size: source y"},
      {"interp", "linear", "nearest or linear"}};
  auto b = border_params("constant");
  params.insert(params.end(), b.begin(), b.end());
  r.push_back({"remap", "dst(x,y) = src(map_x(x,y), map_y(x,y)) (u8, u16, f32; 1, 3, 4 channels)",
               params, [](const OpArgs& a) -> StageFn {
                 RemapParams p;
                 p.interp = a.get_choice("interp", "linear", {"nearest", "linear"}) == "nearest"
                                ? Interp::nearest
                                : Interp::linear;
                 p.border = a.get_border(Border::constant(0));
                 check_border("remap", p.border);
                 // Loaded and checked at bind time, so a bad map fails before any image.
                 auto mx = std::make_shared<Image>(a.get_image("map_x"));
                 auto my = std::make_shared<Image>(a.get_image("map_y"));
                 check_map("map_x", *mx);
                 check_map("map_y", *my);
                 check_map_sizes(*mx, *my);
                 return [p, mx, my](ConstImageView src, const Context& ctx) {
                   Image dst(mx->width(), mx->height(), src.format(), src.location());
                   if (src.location().is_host()) {
                     remap(src, *mx, *my, dst, p, ctx);
                   } else {
                     // The maps live on the host; the stage copies them explicitly.
                     Image dx(mx->width(), mx->height(), mx->format(), src.location());
                     Image dy(my->width(), my->height(), my->format(), src.location());
                     copy(*mx, dx);
                     copy(*my, dy);
                     remap(src, dx, dy, dst, p, ctx);
                   }
                   return dst;
                 };
               }});
}
}  // namespace detail

}  // namespace pixflow
