// flip, rotate, crop, pad (docs/ops/flip.md, rotate.md, crop.md, pad.md): the reference on
// known small arrays and against OpenCV, metamorphic properties, every backend against the
// reference where the schema harness cannot reach (crops larger than 1x1, tight views that
// take the vector paths), and the bad-input table. tests/schema_test.cpp runs every example
// on every backend, depth, channel count, border, awkward size and ROI.
#include <vector>

#include "pixflow/pipeline.hpp"
#include "tests/common.hpp"
#if PIXFLOW_HAVE_OPENCV
#include <opencv2/core.hpp>
#endif

namespace pixflow::test {
namespace {

const Depth kDepths[] = {Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32};

// A host u8x1 image of rows of values.
Image u8_image(const std::vector<std::vector<int>>& rows) {
  Image m(std::int64_t(rows[0].size()), std::int64_t(rows.size()), {Depth::u8, 1});
  for (std::size_t y = 0; y < rows.size(); ++y)
    for (std::size_t x = 0; x < rows[y].size(); ++x)
      m.view().row<std::uint8_t>(std::int64_t(y))[x] = std::uint8_t(rows[y][x]);
  return m;
}

template <class Run>
Image on_ref(const ConstImageView& src, std::int64_t w, std::int64_t h, Run run) {
  Image dst(w, h, src.format());
  run(src, dst.view(), Context{Backend::ref});
  return dst;
}

// 3 x 2:  1 2 3 / 4 5 6
TEST(Geometry, RefMatchesKnownSmallArrays) {
  const Image src = u8_image({{1, 2, 3}, {4, 5, 6}});
  const ConstImageView s = src.view();
  auto flip_to = [&](FlipMode m) {
    return on_ref(s, 3, 2, [&](auto a, auto b, auto c) { flip(a, b, {m}, c); });
  };
  auto rotate_to = [&](int angle, std::int64_t w, std::int64_t h) {
    return on_ref(s, w, h, [&](auto a, auto b, auto c) { rotate(a, b, {angle}, c); });
  };
  EXPECT_EQ(compare(flip_to(FlipMode::h).view(), u8_image({{3, 2, 1}, {6, 5, 4}}).view()), "");
  EXPECT_EQ(compare(flip_to(FlipMode::v).view(), u8_image({{4, 5, 6}, {1, 2, 3}}).view()), "");
  EXPECT_EQ(compare(flip_to(FlipMode::both).view(), u8_image({{6, 5, 4}, {3, 2, 1}}).view()), "");
  EXPECT_EQ(compare(rotate_to(90, 2, 3).view(), u8_image({{4, 1}, {5, 2}, {6, 3}}).view()), "");
  EXPECT_EQ(compare(rotate_to(180, 3, 2).view(), u8_image({{6, 5, 4}, {3, 2, 1}}).view()), "");
  EXPECT_EQ(compare(rotate_to(270, 2, 3).view(), u8_image({{3, 6}, {2, 5}, {1, 4}}).view()), "");
  const Image c = on_ref(s, 2, 2, [&](auto a, auto b, auto ctx) { crop(a, b, {1, 0, 2, 2}, ctx); });
  EXPECT_EQ(compare(c.view(), u8_image({{2, 3}, {5, 6}}).view()), "");
  auto pad_to = [&](Border b) {
    return on_ref(s, 5, 3, [&](auto a, auto d, auto ctx) { pad(a, d, {1, 0, 1, 1, b}, ctx); });
  };
  EXPECT_EQ(compare(pad_to(Border::constant(9)).view(),
                    u8_image({{9, 9, 9, 9, 9}, {9, 1, 2, 3, 9}, {9, 4, 5, 6, 9}}).view()),
            "");
  EXPECT_EQ(compare(pad_to(Border::replicate()).view(),
                    u8_image({{1, 1, 2, 3, 3}, {1, 1, 2, 3, 3}, {4, 4, 5, 6, 6}}).view()),
            "");
  EXPECT_EQ(compare(pad_to(Border::reflect101()).view(),
                    u8_image({{5, 4, 5, 6, 5}, {2, 1, 2, 3, 2}, {5, 4, 5, 6, 5}}).view()),
            "");
  EXPECT_EQ(compare(pad_to(Border::wrap()).view(),
                    u8_image({{6, 4, 5, 6, 4}, {3, 1, 2, 3, 1}, {6, 4, 5, 6, 4}}).view()),
            "");
  // constant saturates the value to the depth: 300 -> 255, -5 -> 0.
  EXPECT_EQ(
      compare(
          pad_to(Border::constant(300)).view(),
          u8_image({{255, 255, 255, 255, 255}, {255, 1, 2, 3, 255}, {255, 4, 5, 6, 255}}).view()),
      "");
}

// Metamorphic properties on the reference and on every backend.
TEST(Geometry, FlipTwiceRotateFourTimesAndCropOfPadAreIdentity) {
  auto rng = make_rng(0x6e01);
  for (Backend be : test_backends_for("flip"))
    for (Depth d : {Depth::u8, Depth::s16, Depth::f32})
      for (int ch : {1, 3, 4})
        for (Size s : std::vector<Size>{{1, 1}, {17, 13}, {64, 5}}) {
          PIXFLOW_TRACE(testing::Message() << backend_name(be) << " " << depth_name(d) << "x" << ch
                                           << " " << s.w << "x" << s.h);
          const Format f{d, ch};
          const TestImage host = random_image(s.w, s.h, f, rng);
          const TestImage src = to_backend(be, host.view, rng);
          Context ctx;
          ctx.backend = be;
          for (FlipMode m : {FlipMode::h, FlipMode::v, FlipMode::both}) {
            TestImage a = make_dst_on(be, s.w, s.h, f, rng), b = make_dst_on(be, s.w, s.h, f, rng);
            flip(src.view, a.view, {m}, ctx);
            flip(a.view, b.view, {m}, ctx);
            ASSERT_EQ(compare(to_host(b.view), host.view), "");
          }
          TestImage r[4] = {make_dst_on(be, s.h, s.w, f, rng), make_dst_on(be, s.w, s.h, f, rng),
                            make_dst_on(be, s.h, s.w, f, rng), make_dst_on(be, s.w, s.h, f, rng)};
          rotate(src.view, r[0].view, {90}, ctx);
          for (int i = 1; i < 4; ++i) rotate(r[i - 1].view, r[i].view, {90}, ctx);
          ASSERT_EQ(compare(to_host(r[3].view), host.view), "");
          for (const Border& border : all_borders()) {
            const PadParams p{2, 3, 4, 1, border};
            TestImage padded = make_dst_on(be, s.w + 5, s.h + 5, f, rng);
            TestImage back = make_dst_on(be, s.w, s.h, f, rng);
            pad(src.view, padded.view, p, ctx);
            crop(padded.view, back.view, {4, 2, s.w, s.h}, ctx);
            ASSERT_EQ(compare(to_host(back.view), host.view), "") << describe(border);
          }
        }
}

// rotate 90 = transpose then flip h; 270 = transpose then flip v; 180 = flip both.
TEST(Geometry, RotateIsTransposeAndFlip) {
  auto rng = make_rng(0x6e02);
  for (Depth d : kDepths)
    for (int ch : {1, 3})
      for (Size s : std::vector<Size>{{1, 7}, {17, 13}, {40, 3}}) {
        PIXFLOW_TRACE(testing::Message() << depth_name(d) << "x" << ch << " " << s.w << "x" << s.h);
        const Format f{d, ch};
        const TestImage src = random_image(s.w, s.h, f, rng);
        const Context ref{Backend::ref};
        TestImage t = make_dst(s.h, s.w, f, rng);
        transpose(src.view, t.view, ref);
        for (auto [angle, mode] : {std::pair{90, FlipMode::h}, std::pair{270, FlipMode::v}}) {
          TestImage want = make_dst(s.h, s.w, f, rng), got = make_dst(s.h, s.w, f, rng);
          flip(t.view, want.view, {mode}, ref);
          rotate(src.view, got.view, {angle}, ref);
          ASSERT_EQ(compare(got.view, want.view), "") << angle;
        }
        TestImage want = make_dst(s.w, s.h, f, rng), got = make_dst(s.w, s.h, f, rng);
        flip(src.view, want.view, {FlipMode::both}, ref);
        rotate(src.view, got.view, {180}, ref);
        ASSERT_EQ(compare(got.view, want.view), "");
      }
}

// Crops larger than the schema's 1x1 example (which must fit every awkward size): edges,
// the whole image, offsets at every alignment.
TEST(Geometry, CropEveryBackendMatchesRef) {
  auto rng = make_rng(0x6e03);
  for (Depth d : kDepths)
    for (int ch : {1, 3, 4})
      for (const char* params : {"x=0 y=0 w=31 h=7", "x=1 y=2 w=17 h=5", "x=30 y=6 w=1 h=1",
                                 "x=3 y=0 w=19 h=7", "x=16 y=1 w=15 h=6"}) {
        PIXFLOW_TRACE(testing::Message() << depth_name(d) << "x" << ch << " " << params);
        ASSERT_TRUE(backends_match_ref("crop", params, {d, ch}, {31, 7}, rng));
      }
}

// Tight views (16-byte aligned rows where the width allows): the vector row paths of the
// device kernels (flip v / crop / pad's interior in 16-byte units, flip h's mirrored units).
TEST(Geometry, EveryBackendMatchesRefOnTightViews) {
  auto rng = make_rng(0x6e04);
  struct Case {
    const char* op;
    const char* params;
    std::int64_t w, h;  // dst
  };
  for (Depth d : kDepths)
    for (int ch : {1, 2, 3, 4})
      for (Size s : std::vector<Size>{{64, 9}, {48, 2}, {33, 4}}) {
        const Format f{d, ch};
        const std::vector<Case> cases = {
            {"flip", "mode=h", s.w, s.h},
            {"flip", "mode=v", s.w, s.h},
            {"flip", "mode=both", s.w, s.h},
            {"rotate", "angle=90", s.h, s.w},
            {"rotate", "angle=180", s.w, s.h},
            {"rotate", "angle=270", s.h, s.w},
            {"crop", "x=16 y=1 w=16 h=1", 16, 1},
            {"pad", "top=1 bottom=2 left=16 right=5 border=reflect", s.w + 21, s.h + 3},
            {"pad", "top=0 bottom=0 left=0 right=0", s.w, s.h},
        };
        const TestImage src = random_image(s.w, s.h, f, rng, true);
        for (const Case& c : cases) {
          PIXFLOW_TRACE(testing::Message() << c.op << " " << c.params << " " << depth_name(d) << "x"
                                           << ch << " " << s.w << "x" << s.h);
          const auto bound = schema::find(c.op)->bind(split_params(c.params), nullptr);
          TestImage want = make_dst(c.w, c.h, f, rng, true);
          bound->run(src.view, want.view, Context{Backend::ref});
          for (Backend be : test_backends_for(c.op)) {
            const TestImage on = to_backend(be, src.view, rng, true);
            TestImage got = make_dst_on(be, c.w, c.h, f, rng, true);
            Context ctx;
            ctx.backend = be;
            bound->run(on.view, got.view, ctx);
            ASSERT_EQ(compare(to_host(got.view), want.view), "") << backend_name(be);
          }
        }
      }
}

// u8 x 1 rotate 90 / 270 on tight views with 4-byte aligned rows (CUDA's word tiles,
// rot90_u8_kernel: whole 64 x 64 tiles by words, edge tiles by bytes; 90 only where h % 4 == 0).
TEST(Geometry, RotateU8WordTilesEveryBackendMatchesRef) {
  auto rng = make_rng(0x6e06);
  const Format f{Depth::u8, 1};
  for (Size s : std::vector<Size>{{64, 64}, {128, 68}, {192, 130}, {68, 64}, {64, 1}})
    for (int angle : {90, 270}) {
      const TestImage src = random_image(s.w, s.h, f, rng, true);
      TestImage want = make_dst(s.h, s.w, f, rng, true);
      rotate(src.view, want.view, {angle}, {Backend::ref});
      for (Backend be : test_backends_for("rotate")) {
        PIXFLOW_TRACE(testing::Message()
                      << backend_name(be) << " " << angle << " " << s.w << "x" << s.h);
        const TestImage on = to_backend(be, src.view, rng, true);
        TestImage got = make_dst_on(be, s.h, s.w, f, rng, true);
        Context ctx;
        ctx.backend = be;
        rotate(on.view, got.view, {angle}, ctx);
        ASSERT_EQ(compare(to_host(got.view), want.view), "");
      }
    }
}

TEST(Geometry, BadInputsAreRefusedNamingOpParameterAndImageSize) {
  const Image src(10, 8, {Depth::u8, 3});
  Image d(4, 4, {Depth::u8, 3}), d10x8(10, 8, {Depth::u8, 3});
  const ConstImageView s = src.view();
  const BadCase cases[] = {
      {"crop outside right",
       [&] {
         crop(s, d.view(), {7, 0, 4, 4});
       },
       Status::invalid_argument,
       {"crop:", "x + w (7 + 4 = 11)", "image width 10", "image 10x8"}},
      {"crop outside bottom",
       [&] {
         crop(s, d.view(), {0, 5, 4, 4});
       },
       Status::invalid_argument,
       {"crop:", "y + h (5 + 4 = 9)", "image height 8", "image 10x8"}},
      {"crop zero width",
       [&] {
         crop(s, d.view(), {0, 0, 0, 4});
       },
       Status::invalid_argument,
       {"crop:", "w must be in [1, 2147483647] (got 0)"}},
      {"crop negative height",
       [&] {
         crop(s, d.view(), {0, 0, 4, -1});
       },
       Status::invalid_argument,
       {"crop:", "h must be in [1,", "got -1"}},
      {"crop negative x",
       [&] {
         crop(s, d.view(), {-1, 0, 4, 4});
       },
       Status::invalid_argument,
       {"crop:", "x must be in [0,", "got -1"}},
      {"crop wrong dst",
       [&] {
         crop(s, d10x8.view(), {0, 0, 4, 4});
       },
       Status::invalid_argument,
       {"crop:", "dst"}},
      {"pad too large",
       [&] {
         pad(s, d.view(), {65536, 0, 0, 0});
       },
       Status::invalid_argument,
       {"pad:", "top must be in [0, 65535]", "got 65536"}},
      {"pad negative",
       [&] {
         pad(s, d.view(), {0, 0, -1, 0});
       },
       Status::invalid_argument,
       {"pad:", "left must be in [0, 65535]"}},
      {"pad wrong dst",
       [&] {
         pad(s, d.view(), {1, 1, 1, 1});
       },
       Status::invalid_argument,
       {"pad:", "dst"}},
      {"rotate 45",
       [&] { rotate(s, d10x8.view(), {45}); },
       Status::invalid_argument,
       {"rotate:", "angle must be 90, 180 or 270", "got 45"}},
      {"rotate 90 keeps the shape",
       [&] { rotate(s, d10x8.view(), {90}); },
       Status::invalid_argument,
       {"rotate:", "dst"}},
      {"flip mode",
       [] { Pipeline::parse("flip mode=x"); },
       Status::invalid_argument,
       {"flip:", "mode", "h, v, both"}},
      {"rotate angle",
       [] { Pipeline::parse("rotate angle=45"); },
       Status::invalid_argument,
       {"rotate:", "angle", "90, 180, 270"}},
      {"crop without size",
       [] { Pipeline::parse("crop x=1 y=1"); },
       Status::invalid_argument,
       {"crop:", "w= is required"}},
      {"crop zero size",
       [] { Pipeline::parse("crop x=0 y=0 w=0 h=3"); },
       Status::invalid_argument,
       {"crop:", "w must be an integer in [1, 2147483647]", "got '0'"}},
      {"crop outside, pipeline",
       [&] { Pipeline::parse("crop x=8 y=0 w=3 h=3").run(s); },
       Status::invalid_argument,
       {"crop:", "x + w (8 + 3 = 11)", "image 10x8"}},
      {"pad size",
       [] { Pipeline::parse("pad top=70000"); },
       Status::invalid_argument,
       {"pad:", "top must be an integer in [0, 65535]", "got '70000'"}},
  };
  expect_errors(cases);
}

#if PIXFLOW_HAVE_OPENCV
TEST(Geometry, RefMatchesOpenCV) {
  auto rng = make_rng(0x6e05);
  for (Depth d : {Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32})
    for (int ch : {1, 3, 4})
      for (Size s : std::vector<Size>{{1, 1}, {1, 9}, {17, 13}, {64, 3}}) {
        PIXFLOW_TRACE(testing::Message() << depth_name(d) << "x" << ch << " " << s.w << "x" << s.h);
        const Format f{d, ch};
        const TestImage src = random_image(s.w, s.h, f, rng);
        const Context ref{Backend::ref};
        const cv::Mat m = to_mat(src.view);
        for (auto [mode, code] : {std::pair{FlipMode::h, 1}, std::pair{FlipMode::v, 0},
                                  std::pair{FlipMode::both, -1}}) {
          TestImage got = make_dst(s.w, s.h, f, rng);
          flip(src.view, got.view, {mode}, ref);
          cv::Mat want;
          cv::flip(m, want, code);
          ASSERT_EQ(compare(got.view, view_of(want)), "") << "flip " << code;
        }
        for (auto [angle, code] :
             {std::pair{90, cv::ROTATE_90_CLOCKWISE}, std::pair{180, cv::ROTATE_180},
              std::pair{270, cv::ROTATE_90_COUNTERCLOCKWISE}}) {
          TestImage got = angle == 180 ? make_dst(s.w, s.h, f, rng) : make_dst(s.h, s.w, f, rng);
          rotate(src.view, got.view, {angle}, ref);
          cv::Mat want;
          cv::rotate(m, want, code);
          ASSERT_EQ(compare(got.view, view_of(want)), "") << "rotate " << angle;
        }
        for (const Border& b : all_borders()) {
          // Pads up to the image's size (OpenCV's copyMakeBorder rule for larger ones differs
          // only where it asserts).
          const int t = int(std::min<std::int64_t>(2, s.h)),
                    l = int(std::min<std::int64_t>(3, s.w));
          const PadParams p{t, 1, l, 0, b};
          TestImage got = make_dst(s.w + l, s.h + t + 1, f, rng);
          pad(src.view, got.view, p, ref);
          cv::Mat want;
          cv::copyMakeBorder(m, want, t, 1, l, 0, cv_border(b), cv::Scalar::all(b.value));
          ASSERT_EQ(compare(got.view, view_of(want)), "") << "pad " << describe(b);
        }
      }
}
#else
TEST(Geometry, RefMatchesOpenCV) {
  GTEST_SKIP() << "built without OpenCV (C++)";
}
#endif

}  // namespace
}  // namespace pixflow::test
