// resize (docs/ops/resize.md): the size rules and their errors, metamorphic properties of the
// reference, small hand-checked cases, the reference against OpenCV (u8, where the build has
// it; tests/python/test_resize_opencv.py does the same through the Python package), and every
// backend against the reference on the schedules' edges (tests/schema_test.cpp sweeps the
// schema's examples over the awkward sizes).
#include "tests/common.hpp"

#include "pixflow/pipeline.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_OPENCV
#include <opencv2/imgproc.hpp>
#endif

namespace pixflow::test {
namespace {

ResizeParams wh(std::int64_t w, std::int64_t h, ResizeInterp i = ResizeInterp::linear) {
  ResizeParams p;
  p.w = w;
  p.h = h;
  p.interp = i;
  return p;
}

TEST(Resize, SizeRules) {
  using P = std::pair<std::int64_t, std::int64_t>;
  EXPECT_EQ(resize_size(100, 50, wh(30, 20)), P(30, 20));
  EXPECT_EQ(resize_size(100, 50, wh(30, 0)), P(30, 15));
  EXPECT_EQ(resize_size(100, 50, wh(0, 7)), P(14, 7));
  EXPECT_EQ(resize_size(3, 2, wh(2, 0)), P(2, 1));       // 1.33 -> 1
  EXPECT_EQ(resize_size(4, 2, wh(3, 0)), P(3, 2));       // 1.5 -> 2 (half up)
  EXPECT_EQ(resize_size(1000, 1, wh(10, 0)), P(10, 1));  // 0.01 -> at least 1
  ResizeParams s;
  s.scale = 0.5;
  EXPECT_EQ(resize_size(101, 67, s), P(50, 34));  // 50.5 -> 50, 33.5 -> 34 (half to even)
  s.scale = 2;
  EXPECT_EQ(resize_size(7, 5, s), P(14, 10));
  ResizeParams xy;
  xy.sx = 2;
  EXPECT_EQ(resize_size(7, 5, xy), P(14, 5));
  xy.sy = 3;
  EXPECT_EQ(resize_size(7, 5, xy), P(14, 15));
  ResizeParams fit = wh(100, 100);
  fit.fit = true;
  EXPECT_EQ(resize_size(400, 200, fit), P(100, 50));
  EXPECT_EQ(resize_size(200, 400, fit), P(50, 100));
  EXPECT_EQ(resize_size(50, 50, fit), P(100, 100));
  fit.h = 30;
  EXPECT_EQ(resize_size(400, 200, fit), P(60, 30));
}

TEST(Resize, BadInput) {
  auto rng = make_rng(0x5201);
  const TestImage src = random_image(20, 10, {Depth::u8, 1}, rng);
  TestImage dst = make_dst(10, 5, {Depth::u8, 1}, rng);
  auto run = [&](ResizeParams p) { return [&, p] { resize(src.view, dst.view, p); }; };
  ResizeParams none;
  ResizeParams both = wh(10, 5);
  both.scale = 0.5;
  ResizeParams scale_sx;
  scale_sx.scale = 0.5;
  scale_sx.sx = 0.5;
  ResizeParams tiny;
  tiny.scale = 0.01;
  ResizeParams huge;
  huge.scale = 1e6;
  ResizeParams neg;
  neg.scale = -1;
  ResizeParams fit = wh(10, 0);
  fit.fit = true;
  const BadCase cases[] = {
      {"no size", run(none), Status::invalid_argument, {"resize", "give the size"}},
      {"size and scale", run(both), Status::invalid_argument, {"resize", "scale", "w or h"}},
      {"scale and sx", run(scale_sx), Status::invalid_argument, {"resize", "scale", "sx"}},
      {"zero side", run(tiny), Status::invalid_argument, {"resize", "scale", "side of 0"}},
      {"too large", run(huge), Status::invalid_argument, {"resize", "scale", "at most"}},
      {"negative", run(neg), Status::invalid_argument, {"resize", "scale"}},
      {"w over the limit", run(wh(2000000, 5)), Status::invalid_argument, {"resize", "w"}},
      {"fit without h", run(fit), Status::invalid_argument, {"resize", "fit", "w and h"}},
      {"dst of another size", run(wh(11, 5)), Status::invalid_argument, {"resize", "dst"}},
  };
  expect_errors(cases);
  // The pipeline: w=0 given explicitly is an error naming w (not "derive from h").
  expect_error([] { Pipeline::parse("resize w=0 h=5"); }, Status::invalid_argument,
               {"resize", "w", "> 0"});
  expect_error([] { Pipeline::parse("resize interp=cubic w=5"); }, Status::invalid_argument,
               {"resize", "interp"});
}

// Resizing to the same size is a copy, for every interpolation and depth.
TEST(Resize, SameSizeIsCopy) {
  auto rng = make_rng(0x5202);
  for (Depth d : {Depth::u8, Depth::u16, Depth::s16, Depth::f32})
    for (ResizeInterp i : {ResizeInterp::nearest, ResizeInterp::linear, ResizeInterp::area}) {
      const TestImage src = random_image(19, 11, {d, 3}, rng);
      TestImage dst = make_dst(19, 11, {d, 3}, rng);
      resize(src.view, dst.view, wh(19, 11, i), {Backend::ref});
      ASSERT_EQ(compare(dst.view, src.view), "") << depth_name(d) << " interp " << int(i);
    }
}

// Nearest 2x up, then area 2x down, gives the source back (u8: the 2x2 blocks are constant).
TEST(Resize, NearestUpAreaDownIsIdentity) {
  auto rng = make_rng(0x5203);
  for (Size s : std::vector<Size>{{1, 1}, {17, 13}, {64, 3}}) {
    const TestImage src = random_image(s.w, s.h, {Depth::u8, 4}, rng);
    TestImage up = make_dst(2 * s.w, 2 * s.h, {Depth::u8, 4}, rng);
    TestImage back = make_dst(s.w, s.h, {Depth::u8, 4}, rng);
    resize(src.view, up.view, wh(2 * s.w, 2 * s.h, ResizeInterp::nearest), {Backend::ref});
    resize(up.view, back.view, wh(s.w, s.h, ResizeInterp::area), {Backend::ref});
    ASSERT_EQ(compare(back.view, src.view), "") << s.w << "x" << s.h;
  }
}

// Hand-checked: a 2x1 row [0, 255] to 4x1. linear: f = 0.5 d - 0.25 -> d0: left of the
// source (0), d1: 0.25 -> 0.75*0 + 0.25*255 = 63.75 -> Q8 weights 64 -> (64*255*256 + 2^15)
// >> 16 = 63.75 + 0.5 -> 64; d2: 0.75 -> 191.25 -> 191; d3: right of the source (255).
// nearest: step = (2<<16 + 2) / 4 = 32768, s = (32768 d + 16384) >> 16 = 0, 0, 1, 1.
// area (enlarging: linear with area coordinates): sx = floor(d / 2) = 0, 0, 1, 1, fx = (d + 1)
// - 2 (sx + 1) = 0, 0.5 -> ... d0: fx <= 0 -> 0; d1: 2 - 1 = 1 -> 1 - floor(1) = 0; d2, d3:
// right edge (clamped) -> 0, 0, 255, 255.
TEST(Resize, HandChecked) {
  auto rng = make_rng(0x5204);
  TestImage src = make_dst(2, 1, {Depth::u8, 1}, rng);
  src.view.row<std::uint8_t>(0)[0] = 0;
  src.view.row<std::uint8_t>(0)[1] = 255;
  auto run = [&](ResizeInterp i) {
    TestImage dst = make_dst(4, 1, {Depth::u8, 1}, rng);
    resize(src.view, dst.view, wh(4, 1, i), {Backend::ref});
    const std::uint8_t* r = dst.view.row<std::uint8_t>(0);
    return std::vector<int>{r[0], r[1], r[2], r[3]};
  };
  EXPECT_EQ(run(ResizeInterp::linear), (std::vector<int>{0, 64, 191, 255}));
  EXPECT_EQ(run(ResizeInterp::nearest), (std::vector<int>{0, 0, 255, 255}));
  EXPECT_EQ(run(ResizeInterp::area), (std::vector<int>{0, 0, 255, 255}));
}

// Every backend against the reference: the kernels' paths (area's four modes, linear's
// clamped edges, one and many rows a work-item) at sizes beyond the schema's examples.
TEST(Resize, EveryBackendMatchesRef) {
  auto rng = make_rng(0x5205);
  const char* params[] = {"w=320 h=180", "w=213 h=120 interp=area", "scale=0.5 interp=area",
                          "w=700 h=3 interp=area", "w=160 h=500"};
  for (const char* p : params) {
    PIXFLOW_TRACE(testing::Message() << "u8x3 " << p);
    ASSERT_TRUE(backends_match_ref("resize", p, {Depth::u8, 3}, {320, 180}, rng));
  }
}

#if PIXFLOW_HAVE_OPENCV
TEST(Resize, RefMatchesOpenCV) {
  auto rng = make_rng(0x5206);
  const std::pair<Size, Size> pairs[] = {
      {{17, 13}, {8, 6}},    {{40, 30}, {27, 20}}, {{33, 65}, {40, 30}},
      {{64, 48}, {100, 37}}, {{7, 5}, {21, 16}},   {{1, 1}, {5, 3}},
      {{9, 1}, {3, 7}},      {{18, 12}, {6, 4}},   {{30, 20}, {61, 20}}};
  const std::pair<ResizeInterp, int> interps[] = {{ResizeInterp::nearest, cv::INTER_NEAREST_EXACT},
                                                  {ResizeInterp::linear, cv::INTER_LINEAR_EXACT},
                                                  {ResizeInterp::area, cv::INTER_AREA}};
  for (int ch : {1, 3, 4})
    for (auto [s, t] : pairs)
      for (auto [i, cvi] : interps) {
        PIXFLOW_TRACE(testing::Message() << "u8x" << ch << " " << s.w << "x" << s.h << " -> " << t.w
                                         << "x" << t.h << " interp " << int(i));
        const TestImage src = random_image(s.w, s.h, {Depth::u8, ch}, rng);
        TestImage got = make_dst(t.w, t.h, {Depth::u8, ch}, rng);
        resize(src.view, got.view, wh(t.w, t.h, i), {Backend::ref});
        cv::Mat want;
        cv::resize(to_mat(src.view), want, cv::Size(int(t.w), int(t.h)), 0, 0, cvi);
        ASSERT_EQ(compare(got.view, view_of(want)), "");
      }
}
#endif

}  // namespace
}  // namespace pixflow::test
