// Schema of the point-wise and geometry ops: remap, transpose, gray, add, sub, absdiff, mul,
// convert, threshold.
#include <algorithm>
#include <cmath>

#include "src/base/error.hpp"
#include "src/schema/ops.hpp"

namespace pixflow::schema {

using detail::require;

namespace {
const std::vector<Depth> kAllDepths{Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32};

// An image parameter: resolved through the stage's ImageSource (a file on the CLI), required.
template <class P>
std::function<void(P&, const std::string&, const ImageSource&)> image_param(
    const char* op, std::shared_ptr<const Image> P::*m, Param info) {
  return [op, m, info](P& p, const std::string& text, const ImageSource& images) {
    require(!text.empty() || !info.required, Status::invalid_argument, op, info.name,
            "=FILE is required");
    if (text.empty()) return;  // optional (arith's with): the op's key rule says which
    require(bool(images), Status::invalid_argument, op, info.name, "=FILE cannot be loaded here");
    p.*m = images(info, text);
  };
}
}  // namespace

const OpDef<RemapStage>& remap_op() {
  Param mx{"map_x", Kind::image, "",
           "1-channel f32 image file: source x of every destination pixel"};
  mx.role = ImageRole::map_x;
  Param my{"map_y", Kind::image, "", "1-channel f32 image file of map_x's size: source y"};
  my.role = ImageRole::map_y;
  mx.required = my.required = true;
  auto check_map = [](const char* name, const std::shared_ptr<const Image>& m) {
    require(m != nullptr, Status::invalid_argument, "remap", name, "=FILE is required");
    require(m->depth() == Depth::f32 && m->channels() == 1, Status::invalid_argument, "remap", name,
            " must be 1-channel f32 (got ", to_string(m->format()), ")");
  };
  static const auto def =
      OpDef<RemapStage>("remap",
                        "dst(x,y) = src(map_x(x,y), map_y(x,y)) (u8, u16, f32; 1, 3, 4 channels)")
          .depths({Depth::u8, Depth::u16, Depth::f32})
          .channels({1, 3, 4})
          .custom(mx, image_param("remap", &RemapStage::map_x, mx))
          .custom(my, image_param("remap", &RemapStage::map_y, my))
          .choice("interp", &RemapStage::interp,
                  {{"nearest", Interp::nearest}, {"linear", Interp::linear}}, "nearest or linear")
          .border(&RemapStage::border)
          .check_given([check_map](const RemapStage& p, const std::set<std::string>&) {
            check_map("map_x", p.map_x);
            check_map("map_y", p.map_y);
            require(p.map_x->width() == p.map_y->width() && p.map_x->height() == p.map_y->height(),
                    Status::invalid_argument, "remap", "map_y must have map_x's size ",
                    p.map_x->width(), "x", p.map_x->height(), " (got ", p.map_y->width(), "x",
                    p.map_y->height(), ")");
          })
          .output([](const ConstImageView& src, const RemapStage& p) {
            return Shape{p.map_x ? p.map_x->width() : src.width(),
                         p.map_x ? p.map_x->height() : src.height(), src.format()};
          })
          .halo([](const RemapStage&, Format) {
            return Halo{-1, -1};
          })
          .examples({"interp=linear", "interp=nearest", "interp=linear border=replicate",
                     "interp=linear border=constant value=77"})
          .bench({{"interp=linear", "280", "linear"}})
          .bench_tolerance([](Depth d) {
            return d == Depth::f32 ? Tolerance{1e-5, 1e-5} : Tolerance{1, 0};
          })
          .run([](const ConstImageView& src, const ImageView& dst, const RemapStage& p,
                  const Context& ctx) {
            if (p.map_x->location() == src.location()) {
              remap(src, *p.map_x, *p.map_y, dst, p, ctx);
              return;
            }
            // The maps come from files (host); the stage copies them explicitly to the images.
            Image dx(p.map_x->width(), p.map_x->height(), p.map_x->format(), src.location());
            Image dy(p.map_y->width(), p.map_y->height(), p.map_y->format(), src.location());
            copy(*p.map_x, dx);
            copy(*p.map_y, dy);
            remap(src, dx, dy, dst, p, ctx);
          });
  return def;
}

const OpDef<NoParams>& transpose_op() {
  static const auto def =
      OpDef<NoParams>("transpose", "swap rows and columns (any depth and channels)")
          .depths(kAllDepths)
          .output([](const ConstImageView& src, const NoParams&) {
            return Shape{src.height(), src.width(), src.format()};
          })
          .halo([](const NoParams&, Format) {
            return Halo{-1, -1};
          })
          .examples({""})
          .bench({{"", "55", ""}})
          .run([](const ConstImageView& s, const ImageView& d, const NoParams&, const Context& c) {
            transpose(s, d, c);
          });
  return def;
}

const OpDef<GrayParams>& gray_op() {
  static const auto def =
      OpDef<GrayParams>(
          "gray",
          "RGB(A) to 1-channel luma, 0.299R + 0.587G + 0.114B (u8, u16, f32; = cv::cvtColor)")
          .depths({Depth::u8, Depth::u16, Depth::f32})
          .channels({3, 4})
          .choice("from", &GrayParams::from_bgr, {{"rgb", false}, {"bgr", true}},
                  "channel order of the input: rgb or bgr (alpha is ignored)")
          .output([](const ConstImageView& src, const GrayParams&) {
            return Shape{src.width(), src.height(), {src.depth(), 1}};
          })
          .examples({"from=rgb", "from=bgr"})
          .bench({{"from=rgb", "95", "from=rgb"}})
          .bench_tolerance([](Depth d) {
            return d == Depth::f32 ? Tolerance{1e-6, 1e-6} : Tolerance{};
          })
          .run(&gray);
  return def;
}

const OpDef<ChannelsParams>& channels_op() {
  constexpr const char* op = "channels";
  Param pick{"pick", Kind::text, "",
             "the source channel of each output channel, 0-based, comma-separated (1 to 4): "
             "2,1,0 swaps RGB and BGR, 0,1,2 drops alpha, 3 takes alpha, 0,0,0 makes RGB of gray"};
  pick.required = true;
  static const auto def =
      OpDef<ChannelsParams>(op,
                            "pick, reorder, repeat or drop channels: dst channel i = src channel "
                            "pick[i] (any depth)")
          .depths(kAllDepths)
          .custom(pick,
                  [pick](ChannelsParams& p, const std::string& text, const ImageSource&) {
                    p.pick.clear();
                    std::size_t at = 0;
                    while (at <= text.size() && !text.empty()) {
                      const std::size_t end = std::min(text.find(',', at), text.size());
                      const std::string item = text.substr(at, end - at);
                      require(item.size() == 1 && item[0] >= '0' && item[0] <= '3',
                              Status::invalid_argument, op,
                              "pick must be a comma-separated list of 1 to 4 channel indices "
                              "0..3 (got '",
                              text, "')");
                      p.pick.push_back(item[0] - '0');
                      at = end + 1;
                    }
                  })
          .check([](const ChannelsParams& p) {
            require(!p.pick.empty() && p.pick.size() <= 4, Status::invalid_argument, op,
                    "pick must name 1 to 4 channels (got ", p.pick.size(), ")");
            for (int c : p.pick)
              require(c >= 0 && c <= 3, Status::invalid_argument, op,
                      "pick indices must be in [0, 3] (got ", c, ")");
          })
          .output([](const ConstImageView& src, const ChannelsParams& p) {
            for (int c : p.pick)
              require(c < src.channels(), Status::invalid_argument, op, "pick index ", c,
                      " is not a channel of the ", src.channels(), "-channel source (indices 0..",
                      src.channels() - 1, ")");
            return Shape{src.width(), src.height(), {src.depth(), int(p.pick.size())}};
          })
          .examples({"pick=0", "pick=0,0,0"})
          .bench({{"pick=2,1,0", "", "rgb to bgr"}})
          .bench_formats({{Depth::u8, 3}, {Depth::u8, 4}})
          .run(&channels);
  return def;
}

namespace {
OpDef<ArithStage> make_arith(ArithOp aop, const char* doc) {
  const char* op = arith_op_name(aop);
  Param with{"with", Kind::image, "", "a second image file of the input's size and format"};
  with.role = ImageRole::like_src;
  Param value{"value", Kind::number, "", "a scalar (exactly one of with and value)"};
  value.lo = -kUnbounded;
  value.hi = kUnbounded;
  return OpDef<ArithStage>(op, doc)
      .depths(kAllDepths)
      .custom(with, image_param(op, &ArithStage::with, with))
      .custom(value,
              [op, value](ArithStage& p, const std::string& text, const ImageSource&) {
                if (text.empty()) return;
                p.value = parse_number(op, value, text);
                p.has_value = true;
              })
      .check_keys([op](const std::set<std::string>& given) {
        const bool has_with = given.count("with"), has_value = given.count("value");
        require(has_with != has_value, Status::invalid_argument, op,
                "exactly one of with=FILE and value=V is required (got ",
                has_with ? "both" : "neither", ")");
      })
      .check_given([op](const ArithStage& p, const std::set<std::string>& given) {
        // The parsers above take an empty text for an absent key: an empty with= or value=
        // would bind with neither operand (and run dereferencing a null `with`).
        require(p.has_value || p.with != nullptr, Status::invalid_argument, op,
                given.count("with") ? "with=FILE" : "value=V", " must not be empty");
      })
      .examples({"value=7", "value=-3.5", "with=like_src"})
      .bench({{"with=like_src", "", ""}})
      .run([aop, op](const ConstImageView& src, const ImageView& dst, const ArithStage& p,
                     const Context& ctx) {
        if (p.has_value) return arith(src, p.value, dst, aop, ctx);
        const Image& w = *p.with;
        require(
            w.width() == src.width() && w.height() == src.height() && w.format() == src.format(),
            Status::invalid_argument, op, "with image is ", w.width(), "x", w.height(), " ",
            to_string(w.format()), " but the input is ", src.width(), "x", src.height(), " ",
            to_string(src.format()));
        if (src.location() == w.location()) return arith(src, w.view(), dst, aop, ctx);
        // The operand comes from a file (host); the stage uploads it explicitly to where the
        // pipeline's image lives.
        Image moved(w.width(), w.height(), w.format(), src.location());
        copy(w.view(), moved);
        arith(src, moved.view(), dst, aop, ctx);
      });
}
}  // namespace

const OpDef<ArithStage>& arith_op(ArithOp op) {
  static const OpDef<ArithStage> defs[] = {
      make_arith(ArithOp::add, "a + b (or a + value), saturating; any depth"),
      make_arith(ArithOp::sub, "a - b (or a - value), saturating; any depth"),
      make_arith(ArithOp::absdiff, "|a - b| (or |a - value|), saturating; any depth"),
      make_arith(ArithOp::mul, "a * b (or a * value, rounded half to even), saturating; any depth"),
  };
  const auto i = std::size_t(op);
  require(i < std::size(defs), Status::invalid_argument, "arith",
          "op must be add, sub, absdiff or mul (got ", int(op), ")");
  return defs[i];
}

namespace {
const Param& convert_scale_param() {
  static const Param p = [] {
    Param s{"scale", Kind::number, "1",
            "multiplier, or auto: from the depths' ranges (u8 255, u16 65535, f32 1)"};
    s.lo = -kUnbounded;
    s.hi = kUnbounded;
    s.choices = {"auto"};
    return s;
  }();
  return p;
}
}  // namespace

const OpDef<ConvertParams>& convert_op() {
  static const auto def =
      OpDef<ConvertParams>(
          "convert",
          "depth conversion: saturate(round_half_even(abs?(x*scale + offset))), in double")
          .depths(kAllDepths)
          .choice("to", &ConvertParams::to,
                  {{"u8", Depth::u8},
                   {"u16", Depth::u16},
                   {"s16", Depth::s16},
                   {"s32", Depth::s32},
                   {"f32", Depth::f32}},
                  "destination depth: u8, u16, s16, s32 or f32")
          .custom(convert_scale_param(),
                  [](ConvertParams& p, const std::string& text, const ImageSource&) {
                    if (text.empty()) return;
                    p.auto_scale = text == "auto";
                    if (!p.auto_scale)
                      p.scale = parse_number("convert", convert_scale_param(), text);
                  })
          .number("offset", &ConvertParams::offset, -kUnbounded, kUnbounded, "added after scaling")
          .boolean("abs", &ConvertParams::abs,
                   "1: take the absolute value before rounding (cv::convertScaleAbs)")
          .check([](const ConvertParams& p) {
            require(std::size_t(p.to) < kAllDepths.size(), Status::invalid_argument, "convert",
                    "to must be u8, u16, s16, s32 or f32 (got ", int(p.to), ")");
          })
          .output([](const ConstImageView& src, const ConvertParams& p) {
            if (p.auto_scale) auto_scale(src.depth(), p.to);  // a pair it defines, at plan time
            return Shape{src.width(), src.height(), {p.to, src.channels()}};
          })
          .examples({"to=u8", "to=f32 scale=0.00392156862745098", "to=s16 scale=-3 offset=7",
                     "to=u16 abs=1 scale=100 offset=-50"})
          .bench({{"to=f32 scale=0.00392156862745098", "", "scale=1/255"}})
          .bench_formats({{Depth::u8, 1}, {Depth::u8, 3}})
          .bench_tolerance([](Depth) {
            return Tolerance{0, 1.2e-7};
          })
          .run(&convert);
  return def;
}

const OpDef<ThresholdParams>& threshold_op() {
  static const auto def =
      OpDef<ThresholdParams>(
          "threshold", "cv::threshold: compare each sample with t (integers: floor(t)); any depth")
          .depths(kAllDepths)
          .number("t", &ThresholdParams::t, -kUnbounded, kUnbounded, "threshold")
          .number("maxval", &ThresholdParams::maxval, -kUnbounded, kUnbounded,
                  "value written by binary and binary_inv")
          .choice("type", &ThresholdParams::type,
                  {{"binary", ThresholdType::binary},
                   {"binary_inv", ThresholdType::binary_inv},
                   {"trunc", ThresholdType::trunc},
                   {"tozero", ThresholdType::tozero},
                   {"tozero_inv", ThresholdType::tozero_inv}},
                  "binary, binary_inv, trunc, tozero or tozero_inv")
          .check([](const ThresholdParams& p) {
            require(int(p.type) >= 0 && int(p.type) <= int(ThresholdType::tozero_inv),
                    Status::invalid_argument, "threshold",
                    "type must be binary, binary_inv, trunc, tozero or tozero_inv (got ",
                    int(p.type), ")");
          })
          .examples({"t=100 maxval=200", "t=50.5 type=binary_inv", "type=trunc t=10",
                     "type=tozero t=-3", "type=tozero_inv t=1000"})
          .bench({{"t=127 maxval=255", "", "binary"}})
          .bench_f32_params("t=0.5 maxval=1")
          .run(&threshold);
  return def;
}

}  // namespace pixflow::schema
