// The OpenCL backend's packed u8 3x3 kernel (src/backends/opencl/kernels/linear.cl
// linear3_packed: box mean, box sum, gaussian, sobel / scharr to s16, two samples a 32-bit
// word, 4 outputs a work-item): bit-identical to the reference at the edges that scheme has,
// i.e. widths not a multiple of the 4 outputs a work-item or the 128 samples a work-group,
// 1-pixel and 1-row images, 1 to 4 channels (the +-CH byte shifts), sources at word-aligned
// and odd offsets and strides (word loads vs vload4), images of several tiles, every border.
// The family tests (Box.*, Gaussian.*, Sobel.*) cover the rest; PIXFLOW_OCL_LINEAR3=tile
// selects the one-sample tile kernels instead, so the same test then checks those.
#include <algorithm>
#include <functional>
#include <vector>

#include "tests/common.hpp"

namespace pixflow::test {
namespace {

struct Case {
  const char* what;
  Depth out;
  std::function<void(ConstImageView, ImageView, const Border&, Backend)> run;
};

TEST(Linear3Opencl, PackedU8MatchesRefAtEveryEdge) {
  const std::vector<Backend> backends = test_backends_for("box");
  if (std::find(backends.begin(), backends.end(), Backend::opencl) == backends.end())
    GTEST_SKIP() << "no OpenCL device";
  const Case cases[] = {
      {"box mean", Depth::u8,
       [](ConstImageView s, ImageView d, const Border& b, Backend be) {
         box(s, d, {3, 3, true, b}, {be});
       }},
      {"box sum", Depth::u8,
       [](ConstImageView s, ImageView d, const Border& b, Backend be) {
         box(s, d, {3, 3, false, b}, {be});
       }},
      {"gaussian sigma=0.8", Depth::u8,
       [](ConstImageView s, ImageView d, const Border& b, Backend be) {
         gaussian(s, d, GaussianParams{0.8, 0.0, 3, 3, b}, {be});
       }},
      // Different x and y taps, and nearly flat ones (the lanes' largest sums).
      {"gaussian sigma=1.3/30", Depth::u8,
       [](ConstImageView s, ImageView d, const Border& b, Backend be) {
         gaussian(s, d, GaussianParams{1.3, 30.0, 3, 3, b}, {be});
       }},
      // Signed taps (lanes that borrow), both axes, 1-tap axes (k = 1), scharr's largest sums.
      {"sobel dx=1", Depth::s16,
       [](ConstImageView s, ImageView d, const Border& b, Backend be) {
         sobel(s, d, {1, 0, 3, 1.0, 0.0, Depth::s16, b}, {be});
       }},
      {"sobel dx=1 dy=1", Depth::s16,
       [](ConstImageView s, ImageView d, const Border& b, Backend be) {
         sobel(s, d, {1, 1, 3, 1.0, 0.0, Depth::s16, b}, {be});
       }},
      {"sobel dy=2", Depth::s16,
       [](ConstImageView s, ImageView d, const Border& b, Backend be) {
         sobel(s, d, {0, 2, 3, 1.0, 0.0, Depth::s16, b}, {be});
       }},
      {"sobel dx=1 k=1", Depth::s16,
       [](ConstImageView s, ImageView d, const Border& b, Backend be) {
         sobel(s, d, {1, 0, 1, 1.0, 0.0, Depth::s16, b}, {be});
       }},
      {"scharr dy=1", Depth::s16,
       [](ConstImageView s, ImageView d, const Border& b, Backend be) {
         scharr(s, d, {0, 1, 1.0, 0.0, Depth::s16, b}, {be});
       }},
  };
  const std::vector<Size> sizes = {{1, 1},  {1, 6},    {6, 1},    {2, 2},   {3, 5},
                                   {4, 3},  {5, 4},    {9, 33},   {31, 32}, {32, 31},
                                   {33, 2}, {129, 34}, {131, 70}, {257, 9}};
  auto rng = make_rng(0x13a3);
  for (const Case& c : cases)
    for (int ch : {1, 2, 3, 4})
      for (Size s : sizes)
        for (const Border& b : all_borders())
          for (bool tight : {true, false}) {
            PIXFLOW_TRACE(testing::Message()
                          << c.what << " u8x" << ch << " " << s.w << "x" << s.h << " "
                          << describe(b) << (tight ? " aligned" : " odd offset/stride"));
            // Extremes often: the lanes' largest sums and the saturating box sum.
            auto src =
                random_image(s.w, s.h, {Depth::u8, ch}, rng, tight, rng() % 2 ? 200 : 0, 255);
            auto want = make_dst(s.w, s.h, {c.out, ch}, rng);
            c.run(src, want, b, Backend::ref);
            auto in = to_backend(Backend::opencl, src, rng, tight);
            auto got = make_dst_on(Backend::opencl, s.w, s.h, {c.out, ch}, rng, tight);
            c.run(in, got, b, Backend::opencl);
            ASSERT_EQ(compare(to_host(got), want), "");
          }
}

// The OpenCL integer box's running sums (kernels/linear.cl box_tile: BOX_RUNNING down the
// columns, BOX_HRUN along the rows in walks of 8 outputs of one channel): windows that take
// either, both or neither (linear.cpp weighs them by KW, KH and the channels), widths that end
// a walk or a tile early, images of several tiles both ways, 1 to 4 channels, every border,
// u8 and u16, mean and saturated sum. PIXFLOW_OCL_BOX=cols / direct turn them off.
TEST(BoxRunningOpencl, MatchesRefAtEveryEdge) {
  const std::vector<Backend> backends = test_backends_for("box");
  if (std::find(backends.begin(), backends.end(), Backend::opencl) == backends.end())
    GTEST_SKIP() << "no OpenCL device";
  struct Win {
    int kw, kh;
  };
  const Win wins[] = {{31, 31}, {9, 9}, {5, 1}, {2, 12}};
  const std::vector<Size> sizes = {{1, 1}, {1, 40}, {70, 1}, {65, 33}, {200, 70}};
  auto rng = make_rng(0xb0c5);
  for (Depth dp : {Depth::u8, Depth::u16})
    for (Win k : wins)
      for (bool norm : {true, false})
        for (int ch : {1, 2, 3, 4})
          for (Size s : sizes) {
            // Each program (depth, window, channels) costs a PoCL compile: u16 on 1 and 3.
            if (dp == Depth::u16 && (ch == 2 || ch == 4)) continue;
            for (const Border& b : all_borders()) {
              PIXFLOW_TRACE(testing::Message() << depth_name(dp) << "x" << ch << " " << s.w << "x"
                                               << s.h << " k=" << k.kw << "x" << k.kh
                                               << " normalize=" << norm << " " << describe(b));
              auto src = random_image(s.w, s.h, {dp, ch}, rng);
              auto want = make_dst(s.w, s.h, {dp, ch}, rng);
              box(src, want, {k.kw, k.kh, norm, b}, {Backend::ref});
              auto in = to_backend(Backend::opencl, src, rng);
              auto got = make_dst_on(Backend::opencl, s.w, s.h, {dp, ch}, rng);
              box(in, got, {k.kw, k.kh, norm, b}, {Backend::opencl});
              ASSERT_EQ(compare(to_host(got), want), "");
            }
          }
}

// The OpenCL Gaussian's tile kernel as the default runs it (kernels/linear.cl gauss_tile:
// taps in constant memory, symmetric integer taps folded, 64-row tiles where they fit):
// windows from sigma and given ones, kw != kh, images of several 64-row tiles, every depth,
// 1 to 4 channels, every border. PIXFLOW_OCL_GAUSS=tile selects the first round's kernel instead.
TEST(GaussianTileOpencl, MatchesRefAtEveryEdge) {
  const std::vector<Backend> backends = test_backends_for("gaussian");
  if (std::find(backends.begin(), backends.end(), Backend::opencl) == backends.end())
    GTEST_SKIP() << "no OpenCL device";
  const GaussianParams params[] = {
      {2.0, 0.0, 0, 0, {}}, {8.0, 0.0, 0, 0, {}}, {1.5, 4.0, 9, 0, {}}, {1.2, 0.0, 7, 3, {}}};
  const std::vector<Size> sizes = {{1, 1}, {3, 70}, {70, 3}, {130, 140}};
  auto rng = make_rng(0x6a55);
  for (Depth dp : {Depth::u8, Depth::u16, Depth::f32})
    for (GaussianParams p : params)
      for (int ch : {1, 2, 3, 4}) {
        // Each program (depth, window, channels) costs a PoCL compile: u16 and f32 on 1 and 3.
        if (dp != Depth::u8 && (ch == 2 || ch == 4)) continue;
        for (Size s : sizes)
          for (const Border& b : all_borders()) {
            PIXFLOW_TRACE(testing::Message() << depth_name(dp) << "x" << ch << " " << s.w << "x"
                                             << s.h << " sigma=" << p.sigma << "/" << p.sigma_y
                                             << " k=" << p.kw << "x" << p.kh << " " << describe(b));
            p.border = b;
            auto src = random_image(s.w, s.h, {dp, ch}, rng);
            auto want = make_dst(s.w, s.h, {dp, ch}, rng);
            gaussian(src, want, p, {Backend::ref});
            auto in = to_backend(Backend::opencl, src, rng);
            auto got = make_dst_on(Backend::opencl, s.w, s.h, {dp, ch}, rng);
            gaussian(in, got, p, {Backend::opencl});
            ASSERT_EQ(compare(to_host(got), want), "");
          }
      }
}

}  // namespace
}  // namespace pixflow::test
