// Schema of the simple geometry ops: flip, rotate, crop, pad (docs/ops/flip.md, rotate.md,
// crop.md, pad.md). Every depth and channel count; none is tileable with a fixed halo (the
// output pixel comes from far away, or the output shape differs), so each says halo -1 like
// transpose and Dask tiling refuses them.
#include <cstdint>

#include "src/base/error.hpp"
#include "src/schema/ops.hpp"

namespace pixflow::schema {

using detail::require;

namespace {
const std::vector<Depth> kAllDepths{Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32};
constexpr long long kMaxCoord = (1LL << 31) - 1;  // kernels index in 32 bits
constexpr int kMaxPad = 65535;

Halo not_tileable(Format) {
  return Halo{-1, -1};
}
}  // namespace

const OpDef<FlipParams>& flip_op() {
  static const auto def =
      OpDef<FlipParams>("flip", "mirror: h left-right, v upside down, both (= cv::flip 1, 0, -1)")
          .depths(kAllDepths)
          .choice("mode", &FlipParams::mode,
                  {{"h", FlipMode::h}, {"v", FlipMode::v}, {"both", FlipMode::both}},
                  "h (left-right), v (upside down) or both")
          .halo([](const FlipParams&, Format f) { return not_tileable(f); })
          .examples({"mode=h", "mode=v", "mode=both"})
          .bench({{"mode=h", "50", "h"}, {"mode=v", "50", "v"}})
          .run(&flip);
  return def;
}

const OpDef<RotateParams>& rotate_op() {
  static const auto def =
      OpDef<RotateParams>("rotate", "rotate clockwise by 90, 180 or 270 degrees (= cv::rotate)")
          .depths(kAllDepths)
          .choice("angle", &RotateParams::angle, {{"90", 90}, {"180", 180}, {"270", 270}},
                  "clockwise angle: 90, 180 or 270")
          .check([](const RotateParams& p) {
            require(p.angle == 90 || p.angle == 180 || p.angle == 270, Status::invalid_argument,
                    "rotate", "angle must be 90, 180 or 270 (got ", p.angle, ")");
          })
          .output([](const ConstImageView& src, const RotateParams& p) {
            return p.angle == 180 ? Shape{src.width(), src.height(), src.format()}
                                  : Shape{src.height(), src.width(), src.format()};
          })
          .halo([](const RotateParams&, Format f) { return not_tileable(f); })
          .examples({"angle=90", "angle=180", "angle=270"})
          .bench({{"angle=90", "55", "90"}, {"angle=180", "50", "180"}})
          .run(&rotate);
  return def;
}

const OpDef<CropParams>& crop_op() {
  static const auto def =
      OpDef<CropParams>("crop", "copy of the w x h rectangle at (x, y), inside the image")
          .depths(kAllDepths)
          .integer("x", &CropParams::x, 0, kMaxCoord, "left column of the rectangle (>= 0)")
          .integer("y", &CropParams::y, 0, kMaxCoord, "top row of the rectangle (>= 0)")
          .integer("w", &CropParams::w, 1, kMaxCoord, "width of the rectangle (>= 1)")
          .integer("h", &CropParams::h, 1, kMaxCoord, "height of the rectangle (>= 1)")
          .required("w")
          .required("h")
          .check_keys([](const OpDef<CropParams>::Given& given) {
            for (const char* k : {"w", "h"})
              require(given.count(k) != 0, Status::invalid_argument, "crop", k,
                      "= is required (the rectangle's size)");
          })
          .output([](const ConstImageView& src, const CropParams& p) {
            // x and w are each in range (validated); their sum must stay inside the image.
            require(p.x + p.w <= src.width(), Status::invalid_argument, "crop", "x + w (", p.x,
                    " + ", p.w, " = ", p.x + p.w, ") must be <= the image width ", src.width(),
                    " (image ", src.width(), "x", src.height(), ")");
            require(p.y + p.h <= src.height(), Status::invalid_argument, "crop", "y + h (", p.y,
                    " + ", p.h, " = ", p.y + p.h, ") must be <= the image height ", src.height(),
                    " (image ", src.width(), "x", src.height(), ")");
            return Shape{p.w, p.h, src.format()};
          })
          .halo([](const CropParams&, Format f) { return not_tileable(f); })
          // Every example must fit the tests' 1x1 images; tests/geometry_test.cpp runs larger
          // crops on every backend.
          .examples({"x=0 y=0 w=1 h=1"})
          .bench({{"x=16 y=8 w=W-32 h=H-16", "", "interior"}})  // bench: W, H = the source's
          .run(&crop);
  return def;
}

const OpDef<PadParams>& pad_op() {
  static const auto def =
      OpDef<PadParams>("pad", "add rows and columns around the image by the border rule")
          .depths(kAllDepths)
          .integer("top", &PadParams::top, 0, kMaxPad, "rows added above, in [0, 65535]")
          .integer("bottom", &PadParams::bottom, 0, kMaxPad, "rows added below, in [0, 65535]")
          .integer("left", &PadParams::left, 0, kMaxPad, "columns added left, in [0, 65535]")
          .integer("right", &PadParams::right, 0, kMaxPad, "columns added right, in [0, 65535]")
          .border(&PadParams::border)
          .output([](const ConstImageView& src, const PadParams& p) {
            const std::int64_t w = src.width() + p.left + p.right;
            const std::int64_t h = src.height() + p.top + p.bottom;
            require(w <= kMaxCoord && h <= kMaxCoord, Status::invalid_argument, "pad",
                    "the output ", w, "x", h, " exceeds ", kMaxCoord, " per side (image ",
                    src.width(), "x", src.height(), ")");
            return Shape{w, h, src.format()};
          })
          .halo([](const PadParams&, Format f) { return not_tileable(f); })
          .examples({"top=1 bottom=2 left=3 right=0", "top=0 bottom=9 left=19 right=17"})
          .bench({{"top=8 bottom=8 left=8 right=8", "50", "8"}})
          .run(&pad);
  return def;
}

}  // namespace pixflow::schema
