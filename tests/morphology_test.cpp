#include "tests/common.hpp"

#include <cstring>

#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace pixflow::test {
namespace {

const Depth kDepths[] = {Depth::u8, Depth::u16, Depth::f32};
const MorphOp kOps[] = {MorphOp::dilate,   MorphOp::erode,  MorphOp::open,    MorphOp::close,
                        MorphOp::gradient, MorphOp::tophat, MorphOp::blackhat};
struct Win {
  int kw, kh;
};
// Odd, even, 1-wide and larger-than-the-image rectangles.
const Win kWindows[] = {{1, 1}, {3, 3}, {4, 2}, {5, 3}, {1, 7}, {2, 5}, {21, 21}};

std::string case_name(const char* what, Depth d, int ch, Size s, Win k, int it, const Border& b) {
  return std::string(what) + " " + depth_name(d) + "x" + std::to_string(ch) + " " +
         std::to_string(s.w) + "x" + std::to_string(s.h) + " k=" + std::to_string(k.kw) + "x" +
         std::to_string(k.kh) + " it=" + std::to_string(it) + " " + describe(b);
}

#if PIXFLOW_HAVE_OPENCV
int cv_op(MorphOp op) {
  switch (op) {
    case MorphOp::dilate:
      return cv::MORPH_DILATE;
    case MorphOp::erode:
      return cv::MORPH_ERODE;
    case MorphOp::open:
      return cv::MORPH_OPEN;
    case MorphOp::close:
      return cv::MORPH_CLOSE;
    case MorphOp::gradient:
      return cv::MORPH_GRADIENT;
    case MorphOp::tophat:
      return cv::MORPH_TOPHAT;
    case MorphOp::blackhat:
      return cv::MORPH_BLACKHAT;
  }
  return -1;
}

// cv::morphologyEx with the same border type and an explicit border value.
cv::Mat cv_morph(const cv::Mat& src, MorphOp op, Win k, int it, const Border& b) {
  cv::Mat out;
  cv::morphologyEx(src, out, cv_op(op), cv::Mat::ones(k.kh, k.kw, CV_8U), cv::Point(-1, -1), it,
                   cv_border(b), cv::Scalar::all(b.value));
  return out;
}

// One dilate/erode through copyMakeBorder + filter (any border, the pad is inside) + crop,
// for border types that OpenCV's morphology refuses.
cv::Mat cv_pass_padded(const cv::Mat& src, MorphOp op, Win k, int it, const Border& b) {
  const int kw = k.kw + (it - 1) * (k.kw - 1), kh = k.kh + (it - 1) * (k.kh - 1);
  const int ax = (k.kw / 2) * it, ay = (k.kh / 2) * it;
  cv::Mat padded, out;
  cv::copyMakeBorder(src, padded, ay, kh - 1 - ay, ax, kw - 1 - ax, cv_border(b),
                     cv::Scalar::all(b.value));
  cv::morphologyEx(padded, out, cv_op(op), cv::Mat::ones(k.kh, k.kw, CV_8U), cv::Point(-1, -1), it,
                   cv::BORDER_REPLICATE);
  return out(cv::Rect(ax, ay, src.cols, src.rows)).clone();
}

bool opencv_takes(const Border& b) {
  static const int taken = [] {
    int mask = 0;
    for (const Border& bb : all_borders()) {
      cv::Mat m(5, 5, CV_8U, cv::Scalar(1)), out;
      try {
        cv::dilate(m, out, cv::Mat::ones(3, 3, CV_8U), cv::Point(-1, -1), 1, cv_border(bb));
        mask |= 1 << int(bb.type);
      } catch (const cv::Exception&) {
      }
    }
    return mask;
  }();
  return (taken >> int(b.type)) & 1;
}

TEST(Morphology, RefMatchesOpenCVMorphologyExEveryOpBorderDepthChannel) {
  // Where OpenCV refuses a border type (reported below), dilate/erode are checked through
  // copyMakeBorder + filter + crop, and the composites through
  // RefCompositesEqualPassSequences on top of those verified passes.
  auto rng = make_rng(0x40e1);
  for (const Border& b : all_borders())
    if (!opencv_takes(b))
      std::printf("[pixflow] OpenCV morphology refuses border %s: padded check for it\n",
                  describe(b).c_str());
  for (Depth d : kDepths)
    for (int ch : {1, 3, 4})
      for (Size s : awkward_sizes())
        for (Win k : kWindows)
          for (int it : {1, 3})
            for (const Border& b : all_borders())
              for (MorphOp op : kOps) {
                const bool direct = opencv_takes(b);
                if (!direct && op != MorphOp::dilate && op != MorphOp::erode) continue;
                PIXFLOW_TRACE(case_name(morph_op_name(op), d, ch, s, k, it, b));
                auto src = random_image(s.w, s.h, {d, ch}, rng);
                auto got = make_dst(s.w, s.h, {d, ch}, rng);
                morphology(src, got, op, {k.kw, k.kh, it, b}, {Backend::ref});
                cv::Mat want = direct ? cv_morph(to_mat(src), op, k, it, b)
                                      : cv_pass_padded(to_mat(src), op, k, it, b);
                ASSERT_EQ(compare(got, view_of(want)), "");
              }
}

TEST(Morphology, RefMatchesOpenCVOnFullHd) {
  auto rng = make_rng(0x40e2);
  for (Depth d : kDepths)
    for (MorphOp op : {MorphOp::dilate, MorphOp::gradient}) {
      PIXFLOW_TRACE(std::string(depth_name(d)) + " " + morph_op_name(op));
      auto src = random_image(1920, 1080, {d, 1}, rng);
      auto got = make_dst(1920, 1080, {d, 1}, rng);
      morphology(src, got, op, {5, 3, 1, Border::reflect101()}, {Backend::ref});
      cv::Mat want = cv_morph(to_mat(src), op, {5, 3}, 1, Border::reflect101());
      ASSERT_EQ(compare(got, view_of(want)), "");
    }
}
#else
TEST(Morphology, RefMatchesOpenCVMorphologyExEveryOpBorderDepthChannel) {
  GTEST_SKIP() << "built without OpenCV (C++)";
}
TEST(Morphology, RefMatchesOpenCVOnFullHd) {
  GTEST_SKIP() << "built without OpenCV (C++)";
}
#endif

// The composites as sequences of single verified passes (ref::morph_pass) and a
// saturating (integers) or plain (f32) difference computed here.
Image run_pass(const ConstImageView& src, MorphOp op, Win k, int it, const Border& b) {
  Image out(src.width(), src.height(), src.format());
  morphology(src, out, op, {k.kw, k.kh, it, b}, {Backend::ref});
  return out;
}
Image difference(const ConstImageView& a, const ConstImageView& c) {
  Image out(a.width(), a.height(), a.format());
  for (std::int64_t y = 0; y < a.height(); ++y)
    for (std::int64_t i = 0; i < a.width() * a.channels(); ++i) {
      const double v = sample(a, i / a.channels(), y, int(i % a.channels())) -
                       sample(c, i / a.channels(), y, int(i % a.channels()));
      switch (a.depth()) {
        case Depth::u8:
          out.row<std::uint8_t>(y)[i] = std::uint8_t(std::max(0.0, v));
          break;
        case Depth::u16:
          out.row<std::uint16_t>(y)[i] = std::uint16_t(std::max(0.0, v));
          break;
        default:
          out.row<float>(y)[i] = float(v);
          break;
      }
    }
  return out;
}

TEST(Morphology, RefCompositesEqualPassSequences) {
  auto rng = make_rng(0x40e3);
  for (Depth d : kDepths)
    for (const Border& b : all_borders())
      for (Win k : {Win{3, 3}, Win{4, 2}, Win{7, 1}})
        for (int it : {1, 2}) {
          PIXFLOW_TRACE(case_name("composites", d, 3, {19, 14}, k, it, b));
          auto src = random_image(19, 14, {d, 3}, rng);
          Image er = run_pass(src, MorphOp::erode, k, it, b);
          Image di = run_pass(src, MorphOp::dilate, k, it, b);
          Image op = run_pass(er, MorphOp::dilate, k, it, b);
          Image cl = run_pass(di, MorphOp::erode, k, it, b);
          const std::pair<MorphOp, Image> expect[] = {
              {MorphOp::open, run_pass(er, MorphOp::dilate, k, it, b)},
              {MorphOp::close, run_pass(di, MorphOp::erode, k, it, b)},
              {MorphOp::gradient, difference(di, er)},
              {MorphOp::tophat, difference(src, op)},
              {MorphOp::blackhat, difference(cl, src)}};
          for (const auto& [mop, want] : expect) {
            SCOPED_TRACE(morph_op_name(mop));
            auto got = make_dst(19, 14, {d, 3}, rng);
            morphology(src, got, mop, {k.kw, k.kh, it, b}, {Backend::ref});
            ASSERT_EQ(compare(got, want), "");
          }
        }
}

TEST(Morphology, IterationsEqualRepeatedPassesForReplicateAndConstant) {
  // n iterations are one pass of the enlarged rect (anchor n*(k/2)); for replicate and
  // constant borders that equals n single passes, which checks the even-size anchor.
  auto rng = make_rng(0x40e4);
  for (Depth d : kDepths)
    for (const Border& b : {Border::replicate(), Border::constant(77)})
      for (Win k : {Win{3, 3}, Win{4, 2}, Win{2, 5}, Win{6, 6}})
        for (MorphOp op : {MorphOp::dilate, MorphOp::erode}) {
          PIXFLOW_TRACE(case_name(morph_op_name(op), d, 1, {23, 17}, k, 3, b));
          auto src = random_image(23, 17, {d, 1}, rng);
          Image want = run_pass(src, op, k, 1, b);
          want = run_pass(want, op, k, 1, b);
          want = run_pass(want, op, k, 1, b);
          auto got = make_dst(23, 17, {d, 1}, rng);
          morphology(src, got, op, {k.kw, k.kh, 3, b}, {Backend::ref});
          ASSERT_EQ(compare(got, want), "");
        }
}

TEST(Morphology, WindowOneIsCopyAndConstantImageStaysConstant) {
  auto rng = make_rng(0x40e5);
  for (Depth d : kDepths)
    for (const Border& b : all_borders())
      for (MorphOp op : {MorphOp::dilate, MorphOp::erode, MorphOp::open, MorphOp::close}) {
        PIXFLOW_TRACE(std::string(depth_name(d)) + " " + morph_op_name(op) + " " + describe(b));
        auto src = random_image(13, 9, {d, 3}, rng);
        auto got = make_dst(13, 9, {d, 3}, rng);
        morphology(src, got, op, {1, 1, 4, b}, {Backend::ref});
        ASSERT_EQ(compare(got, src), "");
        fill_constant(src, 77);  // the constant border's value too
        morphology(src, got, op, {5, 4, 2, b}, {Backend::ref});
        ASSERT_EQ(compare(got, src), "");
      }
}

// Windows (two iterations) and sizes beyond the schema's examples (tests/schema_test.cpp
// sweeps those) and the CPU backend's row bands at 1920x1080.
TEST(Morphology, EveryBackendMatchesRef) {
  auto rng = make_rng(0x40e6);
  for (Depth d : kDepths)
    for (int ch : {1, 2, 3, 4})
      for (Size s : std::vector<Size>{{1, 1}, {1, 9}, {9, 1}, {17, 13}, {64, 3}})
        for (Win k : {Win{3, 3}, Win{4, 2}, Win{1, 7}, Win{21, 21}})
          for (const Border& b : all_borders())
            for (MorphOp op : kOps)
              ASSERT_TRUE(backends_match_ref(morph_op_name(op),
                                             "kw=" + std::to_string(k.kw) +
                                                 " kh=" + std::to_string(k.kh) + " iterations=2 " +
                                                 border_params(b),
                                             {d, ch}, s, rng));
  ASSERT_TRUE(
      backends_match_ref("tophat", "k=5 border=reflect101", {Depth::u8, 3}, {1920, 1080}, rng));
}

// Mostly a narrow band of values with rare impulses across the whole range (one sample in
// 64): a large window's extreme then depends on which impulses it covers. On uniform noise
// nearly every large window holds the depth's extreme, which hides a dropped row or column
// (a kernel that skipped one output's prefix rows passed the uniform-noise cases).
TestImage impulse_image(Size s, Format fmt, MorphOp op, std::mt19937_64& rng) {
  const double lo = fmt.depth == Depth::f32 ? -1000 : 0;
  const double hi = fmt.depth == Depth::u8 ? 255 : fmt.depth == Depth::u16 ? 65535 : 1000;
  const double band = (hi - lo) / 16;
  const bool up = op == MorphOp::dilate;
  TestImage img = random_image(s.w, s.h, fmt, rng, false, up ? lo : hi - band, up ? lo + band : hi);
  const TestImage full = random_image(s.w, s.h, fmt, rng);
  const std::size_t es = depth_bytes(fmt.depth);
  for (std::int64_t y = 0; y < s.h; ++y)
    for (std::int64_t i = 0; i < s.w * fmt.channels; ++i)
      if (rng() % 64 == 0)
        std::memcpy(img.view.row<std::uint8_t>(y) + std::size_t(i) * es,
                    full.view.row<std::uint8_t>(y) + std::size_t(i) * es, es);
  return img;
}

// The SIMD kernel's paths (src/backends/cpu/simd/morphology.cpp): blocks of 1, 2, 4, 8 and
// 16 output rows (kh 1, 2-3, 4-7, 8-15, 16+; bands that start anywhere in a block, the last
// block partial), kw <= 6 direct and kw >= 7 doubling (powers of two and not), large and
// unequal windows (u8 doubling in registers on AVX-512 VBMI: 2, 3 and 4 levels, 1, 3 and 4
// channels), iterations, every border (constant with values inside and outside the
// depth's range), rows around the vector widths and a tall image for many blocks per band;
// uniform noise and impulse images.
TEST(Morphology, EveryBackendMatchesRefLargeWindows) {
  auto rng = make_rng(0x40e8);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(0));
  borders.push_back(Border::constant(-3));
  borders.push_back(Border::constant(300));
  const std::vector<Size> sizes = {{263, 37}, {1000, 5}, {31, 97}, {70, 3}};
  const Win wins[] = {{15, 15}, {31, 31}, {5, 9}, {9, 5}, {16, 4}, {2, 6}, {8, 31}, {3, 3}, {7, 5}};
  for (Depth d : kDepths)
    for (int ch : {1, 3, 4})
      for (Size s : sizes)
        for (Win k : wins)
          for (const Border& b : borders)
            for (MorphOp op : {MorphOp::dilate, MorphOp::erode}) {
              const int it = (k.kw + k.kh) % 3 == 0 ? 2 : 1;
              const std::string params =
                  "kw=" + std::to_string(k.kw) + " kh=" + std::to_string(k.kh) +
                  " iterations=" + std::to_string(it) + " " + border_params(b);
              ASSERT_TRUE(backends_match_ref(morph_op_name(op), params, {d, ch}, s, rng));
              const TestImage sparse = impulse_image(s, {d, ch}, op, rng);
              ASSERT_TRUE(backends_match_ref(morph_op_name(op), params, sparse.view, rng));
            }
  for (MorphOp op : {MorphOp::open, MorphOp::gradient})
    for (int it : {1, 3})
      ASSERT_TRUE(backends_match_ref(
          morph_op_name(op),
          "kw=7 kh=5 iterations=" + std::to_string(it) + " border=constant value=9", {Depth::u8, 4},
          {130, 140}, rng));
}

// Images of many tiles for the CUDA u8 kernel (src/backends/cuda/morphology.cu,
// morph_u8_kernel: 256-sample tiles of 32 or 64 rows, doubling levels along y and along the
// bytes of a row with steps of m*cn bytes), 1-4 channels, windows with anchors off centre
// (even sizes), powers of two and not, wider than the tile's halo; impulse images, so that
// a dropped row or column of a window shows; the borders taken in turn. The last image has
// enough tiles for 64-row tiles.
TEST(Morphology, EveryBackendMatchesRefOnManyTiles) {
  auto rng = make_rng(0x40e9);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(-3));
  const std::vector<std::pair<Size, int>> images = {
      {{600, 150}, 1}, {{517, 70}, 3}, {{300, 97}, 4}, {{389, 40}, 2}};
  const Win wins[] = {{5, 5}, {15, 15}, {31, 31}, {4, 16}, {16, 3}, {1, 7}, {7, 1}, {3, 3}};
  std::size_t turn = 0;
  for (const auto& [s, ch] : images)
    for (Win k : wins)
      for (MorphOp op : {MorphOp::dilate, MorphOp::erode}) {
        const std::string params = "kw=" + std::to_string(k.kw) + " kh=" + std::to_string(k.kh) +
                                   " " + border_params(borders[turn++ % borders.size()]);
        const TestImage sparse = impulse_image(s, {Depth::u8, ch}, op, rng);
        ASSERT_TRUE(backends_match_ref(morph_op_name(op), params, sparse.view, rng));
      }
  for (MorphOp op : {MorphOp::dilate, MorphOp::erode}) {
    const TestImage sparse = impulse_image({4100, 1100}, {Depth::u8, 1}, op, rng);
    ASSERT_TRUE(
        backends_match_ref(morph_op_name(op), "kw=15 kh=15 border=reflect101", sparse.view, rng));
  }
  // The van Herk kernel (u8 x 1, windows other than 3x3) in its tall shape (256 x 64 blocks:
  // 8200x2100 = 33 x 33 >= 1056, launch.cuh tall_blocks_fill); the images above take its
  // short shape (256 x 32).
  for (MorphOp op : {MorphOp::dilate, MorphOp::erode}) {
    const TestImage sparse = impulse_image({8200, 2100}, {Depth::u8, 1}, op, rng);
    ASSERT_TRUE(
        backends_match_ref(morph_op_name(op), "kw=5 kh=5 border=reflect101", sparse.view, rng));
    ASSERT_TRUE(backends_match_ref(morph_op_name(op), "kw=4 kh=16 border=constant value=300",
                                   sparse.view, rng));
  }
  // The packed 3x3 kernel in both block shapes (launch.cuh, tall_blocks_fill): 4100x1100 and
  // the images above take the streaming one (128 x 16 tiles, 1..4 a block at 4100x1100),
  // 4100x2200 (33 x 35 blocks of 128 x 64) the tall one.
  for (Size s : std::vector<Size>{{4100, 1100}, {4100, 2200}})
    for (MorphOp op : {MorphOp::dilate, MorphOp::erode})
      for (const char* b : {"border=reflect101", "border=constant value=300"}) {
        const TestImage sparse = impulse_image(s, {Depth::u8, 1}, op, rng);
        ASSERT_TRUE(
            backends_match_ref(morph_op_name(op), std::string("k=3 ") + b, sparse.view, rng));
      }
}

// The CUDA u8 x 1 kernel for small centred square windows (src/backends/cuda/morphology.cu,
// morphk_u8_kernel: 5x5 and 7x7, blocks of 256 x 16 outputs in its short shape and 256 x 128 in
// its tall one, the arithmetic of morph_k_u8_packed.hpp, host-tested in
// tests/morph_k_packed_test.cpp; k=3 iterations=2 is one centred 5x5 pass) and the windows
// beside it that go elsewhere (kw=4 kh=6 off centre, 9x9, 5x3 and 15x15: the van Herk kernel;
// 15x15 at more shapes in EveryBackendMatchesRefVanHerk15x15). Impulse
// images of several blocks in x and y with partial last blocks (517x70, 600x150, 300x97, 4100x1100:
// short shape; 8200x4000 = 33 x 32 blocks of 128 rows >= 1056: tall shape), every border in turn
// with constants 300 and -7. Part 1 through backends_match_ref (padded, odd-offset views: the
// tile's word or byte path and the clipped byte stores); part 2 with sources at samples 0 and 16 of
// 16-byte aligned rows (the 16-byte chunk path; at 16 the image bytes left of the ROI must not be
// read), 4 (words) and 1 (bytes), and tight destinations (8-byte stores), for 5x5 and 7x7 and for
// the van Herk kernel's windows (15x15, 9x9, 4x6: its cp.async tiles and 16-byte staged stores
// of interior blocks; tall shape at 8200x4000); 8200x4000 at 5x5 and 15x15 only. Sources at
// samples 0, 16 and 4 with tight destinations take the rows8 kernel at 5x5 and 7x7
// (morphk_rows8_kernel: 4 rows a warp, 8 where its grid fills the GPU: the 8200-wide images;
// 8200x4003 leaves a last warp of 3 rows).
TEST(Morphology, EveryBackendMatchesRefOnManyTilesSmallWindows) {
  auto rng = make_rng(0x40ec);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  const Size sizes[] = {{517, 70}, {600, 150}, {300, 97}, {4100, 1100}};
  const char* wins[] = {"k=5", "k=7", "kw=4 kh=6", "k=3 iterations=2", "k=9", "k=15", "kw=5 kh=3"};
  std::size_t turn = 0;
  for (Size s : sizes)
    for (const char* k : wins)
      for (MorphOp op : {MorphOp::dilate, MorphOp::erode}) {
        const std::string params =
            std::string(k) + " " + border_params(borders[turn++ % borders.size()]);
        const TestImage sparse = impulse_image(s, {Depth::u8, 1}, op, rng);
        ASSERT_TRUE(backends_match_ref(morph_op_name(op), params, sparse.view, rng));
      }
  for (MorphOp op : {MorphOp::dilate, MorphOp::erode})
    for (const char* k : {"k=5", "k=7"}) {
      const TestImage sparse = impulse_image({8200, 4000}, {Depth::u8, 1}, op, rng);
      const std::string params =
          std::string(k) + " " + border_params(borders[turn++ % borders.size()]);
      ASSERT_TRUE(backends_match_ref(morph_op_name(op), params, sparse.view, rng));
    }
  struct Case {
    int off;
    Size s;
    bool large;  // the windows of the large images only (the reference's time)
  };
  const Case cases[] = {{0, {600, 150}, false},   {16, {600, 150}, false}, {4, {600, 150}, false},
                        {1, {600, 150}, false},   {16, {300, 97}, false},  {0, {8200, 4000}, true},
                        {16, {8200, 4000}, true}, {4, {8200, 4003}, true}};
  const std::vector<Win> all_wins = {{5, 5}, {7, 7}, {15, 15}, {9, 9}, {4, 6}};
  const std::vector<Win> large_wins = {{5, 5}, {15, 15}};
  for (const Case& c : cases) {
    TestImage wide = random_image(c.s.w + c.off, c.s.h, {Depth::u8, 1}, rng, true);
    const ConstImageView src = ConstImageView(wide.view).roi(c.off, 0, c.s.w, c.s.h);
    std::vector<TestImage> on_backend;
    for (Backend be : test_backends_for("dilate"))
      on_backend.push_back(to_backend(be, wide.view, rng, true));
    for (Win k : c.large ? large_wins : all_wins)
      for (MorphOp op : {MorphOp::dilate, MorphOp::erode}) {
        const Border b = borders[turn++ % borders.size()];
        const MorphParams p{k.kw, k.kh, 1, b};
        TestImage want = make_dst(c.s.w, c.s.h, {Depth::u8, 1}, rng, true);
        Context on_ref;
        on_ref.backend = Backend::ref;
        morphology(src, want.view, op, p, on_ref);
        std::size_t bi = 0;
        for (Backend be : test_backends_for("dilate")) {
          PIXFLOW_TRACE(testing::Message() << backend_name(be) << " " << morph_op_name(op) << " "
                                           << k.kw << "x" << k.kh << " " << c.s.w << "x" << c.s.h
                                           << " " << describe(b) << " source at sample " << c.off);
          TestImage got = make_dst_on(be, c.s.w, c.s.h, {Depth::u8, 1}, rng, true);
          Context ctx;
          ctx.backend = be;
          morphology(ConstImageView(on_backend[bi++].view).roi(c.off, 0, c.s.w, c.s.h), got.view,
                     op, p, ctx);
          ASSERT_EQ(compare(to_host(got.view), want.view), "");
        }
      }
  }
}

// 15x15 dilate or erode of the u8 x 1 source at sample `off` of every row of `wide` (an s.w + off
// wide image; `on_backend` holds its copy on each of test_backends_for("dilate"), which erode,
// the same morph_pass, shares), every backend against the reference, into destinations tight
// and/or padded (`tights`).
void expect_15x15_roi_matches_ref(const TestImage& wide, const std::vector<TestImage>& on_backend,
                                  int off, Size s, MorphOp op, const Border& b,
                                  std::initializer_list<bool> tights, std::mt19937_64& rng) {
  const MorphParams p{15, 15, 1, b};
  TestImage want = make_dst(s.w, s.h, {Depth::u8, 1}, rng, true);
  Context on_ref;
  on_ref.backend = Backend::ref;
  morphology(ConstImageView(wide.view).roi(off, 0, s.w, s.h), want.view, op, p, on_ref);
  std::size_t bi = 0;
  for (Backend be : test_backends_for("dilate")) {
    PIXFLOW_TRACE(testing::Message()
                  << backend_name(be) << " " << morph_op_name(op) << " 15x15 " << s.w << "x" << s.h
                  << " " << describe(b) << " source at sample " << off);
    const ConstImageView in = ConstImageView(on_backend[bi++].view).roi(off, 0, s.w, s.h);
    for (bool tight : tights) {
      TestImage got = make_dst_on(be, s.w, s.h, {Depth::u8, 1}, rng, tight);
      Context ctx;
      ctx.backend = be;
      morphology(in, got.view, op, p, ctx);
      ASSERT_EQ(compare(to_host(got.view), want.view), "") << "tight " << tight;
    }
  }
}

// The CUDA u8 x 1 van Herk kernel (src/backends/cuda/morphology.cu, morph_u8c1_kernel) at its
// compiled 15x15 centred instance and 16x15 beside it (off centre: the run-time window). Written
// for session 14's vh2 kernel (measured slower, not merged) and kept: the shapes it walks (sizes
// around the block edges, tall grids, cp.async sources at every alignment) cover this kernel too.
// Part 1: every border (constants 300 and -7 too) on sizes from 1x1 to several blocks in x and y
// with partial last blocks, images narrower and shorter than the window, one block row, one
// block column; random and impulse images through backends_match_ref (padded, odd-offset views:
// the byte tile path and the clipped byte stores). Part 2: the tall shape (2100x8200 = 9 x 129
// blocks, partial last block column; 8200x4000) and a short one
// (1000x300) with sources at samples 0, 16 (cp.async chunks; the bytes left of the ROI must not
// be read), 4 and 1 of 16-byte aligned rows and destinations both tight (16-byte stores) and
// padded, every border in turn.
TEST(Morphology, EveryBackendMatchesRefVanHerk15x15) {
  auto rng = make_rng(0x40ed);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  const Size sizes[] = {{1, 1},    {1, 40},     {40, 1},    {15, 15},  {16, 17},
                        {7, 300},  {255, 31},   {257, 33},  {256, 64}, {513, 65},
                        {300, 97}, {1000, 129}, {31, 1000}, {600, 150}};
  std::size_t turn = 0;
  for (Size s : sizes)
    for (const Border& b : borders)
      for (MorphOp op : {MorphOp::dilate, MorphOp::erode}) {
        const bool impulse = turn++ % 2 == 0;
        const TestImage img = impulse ? impulse_image(s, {Depth::u8, 1}, op, rng)
                                      : random_image(s.w, s.h, {Depth::u8, 1}, rng, true);
        for (const char* k : {"k=15", "kw=16 kh=15"})
          ASSERT_TRUE(backends_match_ref(morph_op_name(op), std::string(k) + " " + border_params(b),
                                         img.view, rng))
              << s.w << "x" << s.h;
      }
  struct Case {
    int off;
    Size s;
  };
  const Case cases[] = {{0, {2100, 8200}}, {16, {2100, 8200}}, {4, {2100, 8200}}, {1, {2100, 8200}},
                        {0, {8200, 4000}}, {0, {1000, 300}},   {16, {1000, 300}}, {1, {1000, 300}}};
  for (const Case& c : cases) {
    TestImage wide = random_image(c.s.w + c.off, c.s.h, {Depth::u8, 1}, rng, true);
    std::vector<TestImage> on_backend;
    for (Backend be : test_backends_for("dilate"))
      on_backend.push_back(to_backend(be, wide.view, rng, true));
    for (MorphOp op : {MorphOp::dilate, MorphOp::erode})
      ASSERT_NO_FATAL_FAILURE(expect_15x15_roi_matches_ref(
          wide, on_backend, c.off, c.s, op, borders[turn++ % borders.size()], {true, false}, rng));
  }
}

// The CUDA u8 x 1 15x15 kernel of the tall grid (src/backends/cuda/morphology.cu,
// morphv_u8_kernel: blocks of 256 x 64 outputs where launch.cuh's tall_blocks_fill holds) on
// images narrower than a block and than the window's tile (40 x 70000: 1 x 1094 blocks, every
// block an edge block on both sides, so every tile goes through the border rule per byte) and a
// few blocks wide with a partial last block (300 x 40000 at source samples 1 and 0), and on
// 4096 x 4261 (16 x 67 blocks, a partial last block row) with tight sources and destinations:
// 16-byte aligned rows, so the interior blocks take the chunk tile and the 16-byte stores (the
// tight 2100- and 8200-wide destinations of EveryBackendMatchesRefVanHerk15x15 are not 16-byte
// aligned: byte stores). Every border (constants 300 and -7 too), dilate and erode in turn.
TEST(Morphology, EveryBackendMatchesRef15x15OnNarrowTallGrids) {
  auto rng = make_rng(0x40ee);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  struct Case {
    int off;
    Size s;
    bool tight;  // destinations (the sources are tight)
  };
  const Case cases[] = {{0, {40, 70000}, false},
                        {1, {300, 40000}, false},
                        {0, {300, 40000}, false},
                        {0, {4096, 4261}, true}};
  std::size_t turn = 0;
  for (const Case& c : cases) {
    TestImage wide = random_image(c.s.w + c.off, c.s.h, {Depth::u8, 1}, rng, true);
    std::vector<TestImage> on_backend;
    for (Backend be : test_backends_for("dilate"))
      on_backend.push_back(to_backend(be, wide.view, rng, true));
    for (const Border& b : borders)
      ASSERT_NO_FATAL_FAILURE(expect_15x15_roi_matches_ref(
          wide, on_backend, c.off, c.s, turn++ % 2 == 0 ? MorphOp::dilate : MorphOp::erode, b,
          {c.tight}, rng));
  }
}

// The CUDA f32 x 1 3x3 kernel (src/backends/cuda/f32_3x3.cuh, dilate/erode on totalOrder keys)
// at 517x70, 600x150, 300x97 and 4100x1100 its short shape (128 x 16 outputs a block), at
// 4100x2200 (33 x 35 blocks of 128 x 64 >= 1056, launch.cuh tall_blocks_fill) its tall one;
// every border in turn (constant 300 and -7 too). The sources sit at random offsets and
// strides (mostly the tile loader's per-chunk path; F32Kernel3x3.CudaMatchesRefOnAlignedImages
// in tests/f32_3x3_test.cpp takes the 16-byte path for sure).
// Special values (NaN of both signs, -0, inf) compared bit for bit in both shapes; the
// generic path's cases beside it (5x5, 3 channels, 2 iterations, open).
TEST(Morphology, EveryBackendMatchesRefOnManyTilesF32x1) {
  auto rng = make_rng(0x40eb);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  std::size_t turn = 0;
  for (Size s : std::vector<Size>{{517, 70}, {600, 150}, {300, 97}, {4100, 1100}, {4100, 2200}})
    for (const char* op : {"dilate", "erode"}) {
      const std::string b = border_params(borders[turn++ % borders.size()]);
      ASSERT_TRUE(backends_match_ref(op, "k=3 " + b, {Depth::f32, 1}, s, rng));
    }
  for (Size s : std::vector<Size>{{517, 70}, {4100, 2200}, {1, 1}, {3, 130}, {130, 2}})
    for (const char* op : {"dilate", "erode"})
      for (const char* b : {"border=reflect101", "border=constant value=-0.5", "border=wrap"})
        ASSERT_TRUE(backends_match_ref_bits(op, std::string("k=3 ") + b, 1, s, rng));
  for (const char* params : {"kw=5 kh=5 border=reflect101", "k=3 iterations=2 border=replicate"})
    ASSERT_TRUE(backends_match_ref("dilate", params, {Depth::f32, 1}, {517, 70}, rng));
  ASSERT_TRUE(backends_match_ref("erode", "k=3 border=constant value=300", {Depth::f32, 3},
                                 {517, 70}, rng));
  ASSERT_TRUE(
      backends_match_ref("open", "k=3 border=reflect101", {Depth::f32, 1}, {600, 150}, rng));
}

// The packed 3x3 kernel on u8 x 3 (src/backends/cuda/u8_3x3.cuh, CN = 3: row bytes, the
// horizontal neighbours 3 bytes apart, edge bytes mapped by pixel): destinations 4-byte
// aligned (tight) so the packed path runs (it falls back otherwise), sources aligned (word
// loads) and padded (byte loads), several 128-byte x 16-row tiles (streaming shape) and
// 4100x1100 (97 x 18 tall blocks), every border incl. constant 300 / -7, tiny images.
TEST(Morphology, EveryBackendMatchesRefOnManyTilesU8x3Packed3x3) {
  auto rng = make_rng(0x40eb);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  const std::vector<Size> sizes = {{1, 1},     {2, 3},    {43, 5},     {517, 70},
                                   {600, 150}, {300, 97}, {4100, 1100}};
  std::size_t turn = 0;
  for (Backend be : test_backends_for("dilate"))
    for (Size s : sizes)
      for (MorphOp op : {MorphOp::dilate, MorphOp::erode})
        for (std::size_t bi = 0; bi < (s.w == 4100 ? 2 : borders.size()); ++bi)
          for (bool tight_src : {true, false}) {
            const Border b = borders[(bi + turn++) % borders.size()];
            PIXFLOW_TRACE(testing::Message() << backend_name(be) << " u8x3 " << s.w << "x" << s.h
                                             << " " << describe(b) << " " << morph_op_name(op)
                                             << (tight_src ? " aligned src" : " padded src"));
            auto src = random_image(s.w, s.h, {Depth::u8, 3}, rng, tight_src);
            auto want = make_dst(s.w, s.h, {Depth::u8, 3}, rng);
            morphology(src, want, op, MorphParams{3, 3, 1, b}, {Backend::ref});
            auto in = to_backend(be, src, rng, tight_src);
            auto got = make_dst_on(be, s.w, s.h, {Depth::u8, 3}, rng, /*tight=*/true);
            morphology(in, got, op, MorphParams{3, 3, 1, b}, {be});
            ASSERT_EQ(compare(to_host(got), want), "");
          }
}

// The CUDA backend's 3x3 composites on one u8 channel in one kernel
// (morph3_composite_u8_kernel in src/backends/cuda/morphology.cu: 128 x 32 outputs a block,
// the intermediate in shared memory, its ring outside the image filled by the border rule
// from the intermediate itself): images of one or two pixels, a block and one more, many
// blocks; every composite, every border (constant inside and outside the depth's range);
// impulse and uniform images (a ring filled from the source instead of the intermediate
// differs at the edges). wrap runs as passes: it is here too.
TEST(Morphology, CompositesMatchRefOnManyTiles3x3) {
  auto rng = make_rng(0x40ea);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(-3));
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(77));
  const std::vector<Size> sizes = {{1, 1},    {2, 1},    {1, 2},     {2, 3},    {5, 7},
                                   {129, 33}, {131, 97}, {600, 150}, {517, 70}, {1000, 5}};
  const MorphOp composites[] = {MorphOp::open, MorphOp::close, MorphOp::gradient, MorphOp::tophat,
                                MorphOp::blackhat};
  for (Size s : sizes)
    for (const Border& b : borders)
      for (MorphOp op : composites) {
        PIXFLOW_TRACE(case_name(morph_op_name(op), Depth::u8, 1, s, Win{3, 3}, 1, b));
        const std::string params = "k=3 " + border_params(b);
        const TestImage sparse = impulse_image(s, {Depth::u8, 1}, op, rng);
        ASSERT_TRUE(backends_match_ref(morph_op_name(op), params, sparse.view, rng));
        ASSERT_TRUE(backends_match_ref(morph_op_name(op), params, {Depth::u8, 1}, s, rng));
      }
  for (MorphOp op : composites)
    ASSERT_TRUE(backends_match_ref(morph_op_name(op), "k=3 border=reflect101", {Depth::u8, 1},
                                   {4100, 1100}, rng));
}

// The CUDA backend's packed 3x3 composites on one u8 channel (morph3_comp_u8_kernel,
// morph3_grad_u8_kernel in src/backends/cuda/morphology.cu; the thread body host-tested in
// tests/comp3_packed_test.cpp): destination rows 4-byte aligned (tight: the packed kernels)
// or at byte 1 (the shared-tile fallback); sources at byte offsets 0, 16 (16-byte chunks), 4
// (words), 1 (bytes). Sizes: tiny (every edge fix in one block), several 128 x 16 blocks of
// the short shape in x and y with partial last ones (517x70, 600x150, 300x97, 4100x1100), the
// tall shape (128 x 64 blocks: 4100x2200 = 33 x 35, 8200x4000); sources at bytes 0, 16 and 4
// with tight destinations take open / close / tophat / blackhat's rows8 kernel (comp3_u8.cuh: 4
// rows a warp, 8 where that grid fills the GPU: 4100x2200 and up; 4100x2203 leaves a last
// warp of 3 rows) and gradient's; every composite, every border
// (constant 300 and -7 saturate to 255 and 0), random and impulse sources (a ring taken from
// the source's border instead of the intermediate's differs at the edges).
TEST(Morphology, PackedCompositesMatchRefAtEveryAlignment3x3) {
  auto rng = make_rng(0x40ec);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  borders.push_back(Border::constant(77));
  const MorphOp composites[] = {MorphOp::open, MorphOp::close, MorphOp::gradient, MorphOp::tophat,
                                MorphOp::blackhat};
  struct Case {
    Size s;
    int src_off, dst_off;
    bool every_border;  // else two borders in turn (the large images)
  };
  const Case cases[] = {
      {{1, 1}, 0, 0, true},        {{2, 3}, 1, 0, true},         {{5, 7}, 4, 0, true},
      {{4, 2}, 16, 0, true},       {{129, 33}, 0, 0, true},      {{517, 70}, 16, 0, true},
      {{517, 70}, 1, 1, true},     {{600, 150}, 4, 0, true},     {{600, 150}, 0, 1, true},
      {{300, 97}, 1, 0, true},     {{300, 97}, 16, 0, true},     {{4100, 1100}, 16, 0, false},
      {{4100, 1100}, 4, 0, false}, {{4100, 2200}, 16, 0, false}, {{4100, 2200}, 1, 0, false},
      {{4100, 2200}, 0, 1, false}, {{4100, 2203}, 4, 0, false},  {{8200, 4000}, 16, 0, false}};
  auto round16 = [](std::int64_t n) { return (n + 15) / 16 * 16; };
  std::size_t turn = 0;
  for (const Case& c : cases) {
    const Size s = c.s;
    for (MorphOp op : composites) {
      const std::size_t nb = c.every_border ? borders.size() : 2;
      for (std::size_t bi = 0; bi < nb; ++bi) {
        const Border b = borders[(bi + turn++) % borders.size()];
        // Small images also as impulse images; the source sits at c.src_off in a wider row.
        for (bool sparse : {false, true}) {
          if (sparse && s.w * s.h > 100000) continue;
          // Rows of a multiple of 16 bytes: the offset alone sets the source's alignment.
          TestImage wide = random_image(round16(s.w + c.src_off), s.h, {Depth::u8, 1}, rng, true);
          if (sparse) {
            const TestImage imp = impulse_image(s, {Depth::u8, 1}, op, rng);
            for (std::int64_t y = 0; y < s.h; ++y)
              std::memcpy(wide.view.row<std::uint8_t>(y) + c.src_off, imp.view.row<std::uint8_t>(y),
                          std::size_t(s.w));
          }
          const ConstImageView src = ConstImageView(wide.view).roi(c.src_off, 0, s.w, s.h);
          TestImage want = make_dst(s.w, s.h, {Depth::u8, 1}, rng, true);
          morphology(src, want.view, op, MorphParams{3, 3, 1, b}, {Backend::ref});
          for (Backend be : test_backends_for(morph_op_name(op))) {
            PIXFLOW_TRACE(testing::Message()
                          << backend_name(be) << " " << morph_op_name(op) << " u8x1 " << s.w << "x"
                          << s.h << " " << describe(b) << " source at byte " << c.src_off
                          << ", destination at byte " << c.dst_off
                          << (sparse ? " impulses" : " random"));
            const TestImage in = to_backend(be, wide.view, rng, true);
            const TestImage out =
                make_dst_on(be, round16(s.w + c.dst_off), s.h, {Depth::u8, 1}, rng, /*tight=*/true);
            const ImageView got = out.view.roi(c.dst_off, 0, s.w, s.h);
            morphology(ConstImageView(in.view).roi(c.src_off, 0, s.w, s.h), got, op,
                       MorphParams{3, 3, 1, b}, {be});
            ASSERT_EQ(compare(to_host(got), want.view), "");
          }
        }
      }
    }
  }
}

// The cpu backend splits rows into four bands per thread (src/backends/cpu/thread_pool.cpp),
// so the images above give bands of at most 12 rows on a 2-core machine and no full block
// of 16 rows: a tall image gives every block size whole blocks (a last output of a 16-row
// block without its prefix rows passed every test above).
TEST(Morphology, TallBandsRunWholeRowBlocks) {
  auto rng = make_rng(0x40ea);
  const Size s{45, 700};  // >= 2 x 16 rows per band up to 8 threads
  const Win wins[] = {{31, 31}, {8, 17}, {5, 9}, {3, 5}, {1, 2}};
  for (Depth d : kDepths)
    for (int ch : {1, 3})
      for (Win k : wins)
        for (const Border& b : all_borders())
          for (MorphOp op : {MorphOp::dilate, MorphOp::erode}) {
            const TestImage sparse = impulse_image(s, {d, ch}, op, rng);
            ASSERT_TRUE(backends_match_ref(morph_op_name(op),
                                           "kw=" + std::to_string(k.kw) + " kh=" +
                                               std::to_string(k.kh) + " " + border_params(b),
                                           sparse.view, rng));
          }
}

// The cpu backend runs the composites in one call over strips of rows (morph_composite):
// rows of 33 KB make the strips 16 rows, so a 37-row image has three strips (the last one
// short) and the first pass's rows cross strip and image edges under every border.
TEST(Morphology, CompositesMatchRefAcrossCpuStrips) {
  auto rng = make_rng(0x40e9);
  for (MorphOp op :
       {MorphOp::open, MorphOp::close, MorphOp::gradient, MorphOp::tophat, MorphOp::blackhat})
    for (const Border& b : all_borders()) {
      ASSERT_TRUE(backends_match_ref(morph_op_name(op), "k=3 " + border_params(b), {Depth::u8, 4},
                                     {8300, 37}, rng));
      ASSERT_TRUE(backends_match_ref(morph_op_name(op), "kw=5 kh=7 " + border_params(b),
                                     {Depth::f32, 1}, {8300, 37}, rng));
    }
}

TEST(Morphology, PipelineStagesMatchDirectCalls) {
  auto rng = make_rng(0x40e7);
  auto src = random_image(30, 20, {Depth::u16, 3}, rng);
  for (MorphOp op : kOps) {
    SCOPED_TRACE(morph_op_name(op));
    Image want(30, 20, {Depth::u16, 3});
    morphology(src, want, op, {4, 3, 2, Border::constant(500)});
    Image got = Pipeline::parse(std::string(morph_op_name(op)) +
                                " k=4 kh=3 iterations=2 border=constant value=500")
                    .run(src);
    EXPECT_EQ(compare(got, want), "");
  }
}

}  // namespace

// f32 orders by totalOrder (docs/ops/morphology.md): the extreme is the same bits whatever
// path a backend takes (direct, van Herk, doubling), NaN and -0 included.
TEST(Morphology, F32SpecialValuesOrderByTotalOrderOnEveryBackend) {
  auto rng = make_rng(0x40ea);
  const Win wins[] = {{3, 3}, {15, 15}, {2, 9}, {9, 1}};
  for (Win k : wins)
    for (int ch : {1, 3})
      for (const char* op : {"dilate", "erode"})
        for (const char* b : {"border=reflect101", "border=constant value=-0.5"})
          ASSERT_TRUE(backends_match_ref_bits(
              op, "kw=" + std::to_string(k.kw) + " kh=" + std::to_string(k.kh) + " " + b, ch,
              {263, 37}, rng));
  // +NaN is the largest sample, -NaN the smallest, -0 below +0.
  Image src(3, 1, {Depth::f32, 1}), dst(3, 1, {Depth::f32, 1});
  const std::uint32_t bits[] = {0x80000000u, 0x7fc00005u, 0x00000000u};
  std::memcpy(src.view().row<float>(0), bits, sizeof bits);
  for (Backend be : {Backend::ref, Backend::cpu}) {
    std::uint32_t got[3];
    dilate(src, dst, MorphParams{3, 1}, Context{be});
    std::memcpy(got, dst.view().row<float>(0), sizeof got);
    EXPECT_EQ(got[0], 0x7fc00005u) << backend_name(be);
    erode(src, dst, MorphParams{3, 1}, Context{be});
    std::memcpy(got, dst.view().row<float>(0), sizeof got);
    EXPECT_EQ(got[0], 0x80000000u) << backend_name(be);  // min of {+NaN, -0, +NaN} (reflect101)
    EXPECT_EQ(got[2], 0x00000000u) << backend_name(be);  // +0 of {+NaN, +0, +0}
  }
}

}  // namespace pixflow::test
