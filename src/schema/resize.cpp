// Schema of resize (docs/ops/resize.md): the size rules, the parameter checks, the output.
#include <cmath>

#include "src/base/error.hpp"
#include "src/base/rules/resize.h"
#include "src/schema/ops.hpp"

namespace pixflow {

using detail::require;

namespace {
constexpr const char* kOp = "resize";
constexpr std::int64_t kMaxSide = PX_RESIZE_MAX_SIDE;

// round(num / den) half up, at least 1: the side derived from the aspect ratio.
std::int64_t aspect_side(std::int64_t num, std::int64_t den) {
  const std::int64_t v = (2 * num + den) / (2 * den);
  return v < 1 ? 1 : v;
}

// One side from a factor: round half to even of n * f (cv::resize's saturate_cast<int>).
std::int64_t scaled_side(std::int64_t n, double f, const char* name) {
  const double v = std::nearbyint(double(n) * f);
  require(v >= 1, Status::invalid_argument, kOp, name, "=", f, " gives a side of 0 for ", n,
          " source pixels");
  require(v <= double(kMaxSide), Status::invalid_argument, kOp, name, "=", f, " gives a side of ",
          v, " (at most ", kMaxSide, ")");
  return std::int64_t(v);
}
}  // namespace

std::pair<std::int64_t, std::int64_t> resize_size(std::int64_t sw, std::int64_t sh,
                                                  const ResizeParams& p) {
  const bool by_size = p.w != 0 || p.h != 0;
  const bool by_factor = p.scale != 0 || p.sx != 0 || p.sy != 0;
  require(by_size || by_factor, Status::invalid_argument, kOp,
          "give the size: w and/or h, scale, or sx/sy");
  require(!(by_size && by_factor), Status::invalid_argument, kOp,
          p.scale != 0 ? "scale" : (p.sx != 0 ? "sx" : "sy"),
          " cannot be combined with w or h (give a size or a factor)");
  require(p.w >= 0 && p.w <= kMaxSide, Status::invalid_argument, kOp, "w must be in [1, ", kMaxSide,
          "] (got ", p.w, ")");
  require(p.h >= 0 && p.h <= kMaxSide, Status::invalid_argument, kOp, "h must be in [1, ", kMaxSide,
          "] (got ", p.h, ")");
  require(!p.fit || (p.w != 0 && p.h != 0), Status::invalid_argument, kOp,
          "fit=1 needs both w and h (the box)");
  if (by_factor) {
    require(p.scale == 0 || (p.sx == 0 && p.sy == 0), Status::invalid_argument, kOp,
            "scale cannot be combined with sx or sy");
    for (auto [name, f] :
         {std::pair{"scale", p.scale}, std::pair{"sx", p.sx}, std::pair{"sy", p.sy}})
      require(std::isfinite(f) && f >= 0, Status::invalid_argument, kOp, name,
              " must be a finite factor > 0 (got ", f, ")");
    const double fx = p.scale != 0 ? p.scale : (p.sx != 0 ? p.sx : 1.0);
    const double fy = p.scale != 0 ? p.scale : (p.sy != 0 ? p.sy : 1.0);
    return {scaled_side(sw, fx, p.scale != 0 ? "scale" : "sx"),
            scaled_side(sh, fy, p.scale != 0 ? "scale" : "sy")};
  }
  std::int64_t w = p.w, h = p.h;
  if (p.fit) {
    // The box's limiting side is kept; the other follows the aspect ratio (<= the box).
    if (p.w * sh <= p.h * sw)
      h = std::min(p.h, aspect_side(sh * p.w, sw));
    else
      w = std::min(p.w, aspect_side(sw * p.h, sh));
  } else if (h == 0) {
    h = aspect_side(sh * w, sw);
  } else if (w == 0) {
    w = aspect_side(sw * h, sh);
  }
  require(w <= kMaxSide && h <= kMaxSide, Status::invalid_argument, kOp, "the derived size ", w,
          "x", h, " exceeds ", kMaxSide, " a side");
  return {w, h};
}

namespace schema {

const OpDef<ResizeParams>& resize_op() {
  static const auto def =
      OpDef<ResizeParams>("resize",
                          "resize to w x h, by scale, or fit=1 within w x h (nearest, linear, "
                          "area; u8 = OpenCV's INTER_NEAREST_EXACT / LINEAR_EXACT / AREA)")
          .depths({Depth::u8, Depth::u16, Depth::s16, Depth::f32})
          .choice("interp", &ResizeParams::interp,
                  {{"nearest", ResizeInterp::nearest},
                   {"linear", ResizeInterp::linear},
                   {"area", ResizeInterp::area}},
                  "nearest, linear or area")
          .integer("w", &ResizeParams::w, 0, kMaxSide,
                   "destination width (0: from h and the aspect ratio)")
          .integer("h", &ResizeParams::h, 0, kMaxSide,
                   "destination height (0: from w and the aspect ratio)")
          .number("scale", &ResizeParams::scale, 0, kMaxSide,
                  "factor of both sides (0: not given; not with w, h)")
          .number("sx", &ResizeParams::sx, 0, kMaxSide, "factor of the width (0: not given)")
          .number("sy", &ResizeParams::sy, 0, kMaxSide, "factor of the height (0: not given)")
          .boolean("fit", &ResizeParams::fit,
                   "1: the largest size within w x h keeping the aspect ratio")
          .check([](const ResizeParams& p) {
            // The rules that need no source: the size rules run with a 1x1 stand-in, so
            // a stage fails before it reads an image.
            const bool by_factor = p.scale != 0 || p.sx != 0 || p.sy != 0;
            if (by_factor && p.w == 0 && p.h == 0) {
              ResizeParams q = p;
              q.scale = q.sx = q.sy = 0;
              q.w = 1;
              (void)resize_size(1, 1, q);  // w, h, fit ranges
              for (auto [name, f] :
                   {std::pair{"scale", p.scale}, std::pair{"sx", p.sx}, std::pair{"sy", p.sy}})
                require(std::isfinite(f) && f >= 0, Status::invalid_argument, kOp, name,
                        " must be a finite factor > 0 (got ", f, ")");
              require(p.scale == 0 || (p.sx == 0 && p.sy == 0), Status::invalid_argument, kOp,
                      "scale cannot be combined with sx or sy");
              require(!p.fit, Status::invalid_argument, kOp,
                      "fit=1 needs both w and h (the box), not a factor");
            } else {
              (void)resize_size(1, 1, p);
            }
          })
          .check_given([](const ResizeParams& p, const std::set<std::string>& given) {
            const std::pair<const char*, bool> zero[] = {{"w", p.w == 0},
                                                         {"h", p.h == 0},
                                                         {"scale", p.scale == 0},
                                                         {"sx", p.sx == 0},
                                                         {"sy", p.sy == 0}};
            for (auto [name, is_zero] : zero)
              require(!given.count(name) || !is_zero, Status::invalid_argument, kOp, name,
                      " must be > 0 (got 0)");
          })
          .output([](const ConstImageView& src, const ResizeParams& p) {
            const auto [w, h] = resize_size(src.width(), src.height(), p);
            return Shape{w, h, src.format()};
          })
          .halo([](const ResizeParams&, Format) {
            return Halo{-1, -1};
          })
          .examples({"w=7 h=5", "w=23 h=41 interp=nearest", "w=9 interp=area",
                     "w=37 h=19 interp=area", "scale=2 interp=area", "w=1 h=1 interp=area"})
          .bench({{"scale=0.5", "", "8K->4K"},
                  {"w=1280 h=720", "", "->720p"},
                  {"scale=2", "", "up2x"},
                  {"scale=0.5 interp=area", "", "area/2"},
                  {"scale=0.5 interp=nearest", "", "nearest/2"}})
          .run([](const ConstImageView& s, const ImageView& d, const ResizeParams& p,
                  const Context& c) { resize(s, d, p, c); });
  return def;
}

}  // namespace schema
}  // namespace pixflow
