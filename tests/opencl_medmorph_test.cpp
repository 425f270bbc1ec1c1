// The OpenCL median and morphology kernels against the reference, on the edges their work-item
// shapes have (src/backends/opencl/median.cpp, morphology.cpp): a work-item computes VW
// neighbouring samples of RY rows, so widths (in samples) that are no multiple of VW, heights
// that are no multiple of RY (or odd, for the pairs of rows of 5x5 / 7x7), images narrower or
// lower than the window (every sample on the border path), 1-pixel images, ROI views at odd
// byte offsets and strides (to_backend), every border and channel counts 1..4 on u8, u16 and
// f32 (f32 also on special values, bit for bit). Only the OpenCL backend runs here: the family
// tests (median_test.cpp, morphology_test.cpp) sweep every backend on fewer such shapes.
#include "tests/common.hpp"

#include "pixflow/ops.hpp"

namespace pixflow::test {
namespace {

bool have_opencl(std::string_view op) {
  for (Backend b : test_backends_for(op))
    if (b == Backend::opencl) return true;
  return false;
}

const std::vector<Size>& shapes() {
  static const std::vector<Size> s{{1, 1}, {1, 9},   {9, 1},   {2, 3},   {5, 4},
                                   {7, 7}, {37, 19}, {70, 33}, {131, 10}};
  return s;
}

// Runs `run` on `src` with the reference and on OpenCL (the source an ROI copy, the
// destination poisoned) and compares exactly (f32 bit for bit).
// `tight`: both views at the start of their buffers with rows of exactly the image's width.
template <class F>
std::string opencl_vs_ref(const ConstImageView& src, std::mt19937_64& rng, F&& run,
                          bool tight = false) {
  Image want(src.width(), src.height(), src.format());
  run(src, want.view(), Context{Backend::ref});
  const TestImage s = to_backend(Backend::opencl, src, rng, tight);
  const TestImage d =
      make_dst_on(Backend::opencl, src.width(), src.height(), src.format(), rng, tight);
  run(ConstImageView(s), ImageView(d), Context{});
  const Image got = to_host(d);
  return src.depth() == Depth::f32 ? compare_bits(got.view(), want.view())
                                   : compare(got.view(), want.view());
}

std::string what(Format f, Size s, const std::string& params, const Border& b) {
  return std::string(depth_name(f.depth)) + "x" + std::to_string(f.channels) + " " +
         std::to_string(s.w) + "x" + std::to_string(s.h) + " " + params + " " + describe(b);
}

std::vector<Border> borders() {
  std::vector<Border> b = all_borders();
  b.push_back(Border::constant(300));  // saturates on u8
  return b;
}

TEST(MedianOpencl, NetworkWindowsMatchRefOnEveryEdge) {
  if (!have_opencl("median")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x0c1d);
  for (Depth dep : {Depth::u8, Depth::u16, Depth::f32})
    for (int ch : {1, 2, 3, 4})
      for (Size s : shapes())
        for (int k : {3, 5, 7})
          for (const Border& b : borders()) {
            if (ch == 2 && b.type != BorderType::reflect101) continue;  // fewer cases
            const Format f{dep, ch};
            const TestImage src = random_image(s.w, s.h, f, rng);
            const std::string r =
                opencl_vs_ref(src, rng, [&](ConstImageView in, ImageView out, const Context& c) {
                  median(in, out, MedianParams{k, k, b}, c);
                });
            ASSERT_EQ(r, "") << what(f, s, "k=" + std::to_string(k), b);
          }
}

TEST(MedianOpencl, NetworkWindowsOrderF32ByTotalOrder) {
  if (!have_opencl("median")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x0c1e);
  for (int ch : {1, 3})
    for (Size s : std::vector<Size>{{37, 19}, {6, 5}})
      for (int k : {3, 5, 7})
        for (const Border& b : {Border::reflect101(), Border::constant(-0.0)}) {
          const TestImage src = special_f32_image(s.w, s.h, ch, rng);
          const std::string r =
              opencl_vs_ref(src, rng, [&](ConstImageView in, ImageView out, const Context& c) {
                median(in, out, MedianParams{k, k, b}, c);
              });
          ASSERT_EQ(r, "") << what({Depth::f32, ch}, s, "k=" + std::to_string(k), b);
        }
}

// PIXFLOW_OCL_MEDIAN for the duration of a scope.
struct ScopedMedianSchedule {
  explicit ScopedMedianSchedule(const char* v) { setenv("PIXFLOW_OCL_MEDIAN", v, 1); }
  ~ScopedMedianSchedule() { unsetenv("PIXFLOW_OCL_MEDIAN"); }
  ScopedMedianSchedule(const ScopedMedianSchedule&) = delete;
  ScopedMedianSchedule& operator=(const ScopedMedianSchedule&) = delete;
};

// The lane types of median_net (median.cpp): the word kernel (u8 x 1, quads of 4 samples, VW 4
// or 8: interior work-items need the words i0 - 4 .. i0 + VW + 3, so widths up to ~3 work-items
// are mostly edge work-items; views tight with widths multiple of 4 take the aligned loads,
// -DALIGNED4, the others vload4), and ushort keys (u16; u16x2 is u16 off NVIDIA). Heights no
// multiple of RY, and odd; every border; u8 x 3 and u16 take the fallbacks.
TEST(MedianOpencl, LaneVariantsMatchRefOnEveryEdge) {
  if (!have_opencl("median")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x0c1f);
  const std::vector<Size> sizes{{1, 1},  {3, 2},   {4, 5},   {7, 3},   {8, 9},  {12, 7},
                                {13, 4}, {16, 11}, {20, 17}, {29, 6},  {32, 3}, {37, 19},
                                {64, 9}, {67, 10}, {96, 1},  {131, 13}};
  for (const char* sched : {"net,4,0,words", "net,8,0,words", "net,4,2,words", "net,8,6,words",
                            "net,4,0,u16", "net,1,2,u16", "net,4,4,u16x2", "net,16,0,u16x2"}) {
    const ScopedMedianSchedule env(sched);
    for (Format f : {Format{Depth::u8, 1}, Format{Depth::u8, 3}, Format{Depth::u16, 1}}) {
      if (f.channels == 3 && std::string(sched) != "net,4,0,words") continue;  // the fallback
      for (Size s : sizes)
        for (int k : {3, 5, 7})
          for (const Border& b : borders())
            for (bool tight : {false, true}) {
              if (f.depth == Depth::u16 && (tight || s.w > 40)) continue;  // fewer cases
              const TestImage src = random_image(s.w, s.h, f, rng);
              const std::string r = opencl_vs_ref(
                  src, rng,
                  [&](ConstImageView in, ImageView out, const Context& c) {
                    median(in, out, MedianParams{k, k, b}, c);
                  },
                  tight);
              ASSERT_EQ(r, "") << what(f, s, "k=" + std::to_string(k), b) << " " << sched
                               << (tight ? " tight" : " offset");
            }
    }
  }
}

// Few sample values: long runs of equal keys (the word kernel's keys tie-break by the byte
// before each sample; the median's high byte must still be the reference's sample).
TEST(MedianOpencl, WordKernelOnFewLevels) {
  if (!have_opencl("median")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x0c20);
  for (const char* sched : {"net,4,0,words", "net,8,0,words"})
    for (int levels : {2, 3})
      for (int k : {3, 5, 7})
        for (bool tight : {false, true}) {
          const ScopedMedianSchedule env(sched);
          TestImage src = random_image(64, 23, Format{Depth::u8, 1}, rng);
          for (std::int64_t y = 0; y < src.view.height(); ++y) {
            std::uint8_t* row = src.view.row<std::uint8_t>(y);
            for (std::int64_t x = 0; x < src.view.width(); ++x)
              row[x] = std::uint8_t((row[x] % levels) * 255 / (levels - 1));
          }
          const std::string r = opencl_vs_ref(
              src, rng,
              [&](ConstImageView in, ImageView out, const Context& c) {
                median(in, out, MedianParams{k, k, Border::constant(128)}, c);
              },
              tight);
          ASSERT_EQ(r, "") << sched << " levels " << levels << " k=" << k
                           << (tight ? " tight" : " offset");
        }
}

const MorphOp kOps[] = {MorphOp::dilate,   MorphOp::erode,  MorphOp::open,    MorphOp::close,
                        MorphOp::gradient, MorphOp::tophat, MorphOp::blackhat};

TEST(MorphOpencl, SmallAndLargeWindowsMatchRefOnEveryEdge) {
  if (!have_opencl("dilate")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x0c1f);
  struct Win {
    int kw, kh, it;
  };
  const std::vector<Win> wins{{3, 3, 1}, {5, 5, 1}, {1, 5, 1},   {4, 3, 1},
                              {3, 3, 2}, {7, 2, 1}, {15, 15, 1}, {21, 3, 1}};
  for (Depth dep : {Depth::u8, Depth::u16, Depth::f32})
    for (int ch : {1, 3})
      for (Size s : shapes())
        for (const Win& wn : wins)
          for (const Border& b : borders()) {
            const Format f{dep, ch};
            const TestImage src = random_image(s.w, s.h, f, rng);
            for (MorphOp op : {MorphOp::dilate, MorphOp::erode}) {
              const std::string r =
                  opencl_vs_ref(src, rng, [&](ConstImageView in, ImageView out, const Context& c) {
                    morphology(in, out, op, MorphParams{wn.kw, wn.kh, wn.it, b}, c);
                  });
              ASSERT_EQ(r, "") << what(f, s,
                                       std::string(morph_op_name(op)) + " " +
                                           std::to_string(wn.kw) + "x" + std::to_string(wn.kh) +
                                           " it=" + std::to_string(wn.it),
                                       b);
            }
          }
}

// The composites: fused in one kernel (morph_comp: 64 x 32 output tiles, so 70x33 and 130x65
// cross tile edges; one channel, odd centred windows up to 7x7, iterations included) or
// through core's passes (k = 15, 3 channels, wrap for all but gradient).
TEST(MorphOpencl, CompositesMatchRef) {
  if (!have_opencl("dilate")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x0c20);
  struct Win {
    int kw, kh, it;
  };
  const std::vector<Win> wins{{3, 3, 1}, {5, 5, 1}, {7, 7, 1}, {3, 5, 1}, {3, 3, 2}, {15, 15, 1}};
  for (Depth dep : {Depth::u8, Depth::u16, Depth::f32})
    for (int ch : {1, 3})
      for (Size s : std::vector<Size>{{1, 1}, {2, 3}, {37, 19}, {70, 33}, {130, 65}})
        for (const Win& wn : wins)
          for (const Border& b : borders()) {
            if (ch == 3 && (s.w > 40 || wn.it > 1)) continue;  // fewer cases
            const Format f{dep, ch};
            const TestImage src = random_image(s.w, s.h, f, rng);
            for (MorphOp op : kOps) {
              const std::string r =
                  opencl_vs_ref(src, rng, [&](ConstImageView in, ImageView out, const Context& c) {
                    morphology(in, out, op, MorphParams{wn.kw, wn.kh, wn.it, b}, c);
                  });
              ASSERT_EQ(r, "") << what(f, s,
                                       std::string(morph_op_name(op)) + " " +
                                           std::to_string(wn.kw) + "x" + std::to_string(wn.kh) +
                                           " it=" + std::to_string(wn.it),
                                       b);
            }
          }
}

TEST(MorphOpencl, F32SpecialValuesBitForBit) {
  if (!have_opencl("dilate")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x0c21);
  for (int k : {3, 5, 15})
    for (MorphOp op : kOps)
      for (const Border& b : {Border::replicate(), Border::constant(-0.0)}) {
        const TestImage src = special_f32_image(37, 19, 1, rng);
        const std::string r =
            opencl_vs_ref(src, rng, [&](ConstImageView in, ImageView out, const Context& c) {
              morphology(in, out, op, MorphParams{k, k, 1, b}, c);
            });
        ASSERT_EQ(r, "") << what({Depth::f32, 1}, {37, 19},
                                 std::string(morph_op_name(op)) + " k=" + std::to_string(k), b);
      }
}

}  // namespace
}  // namespace pixflow::test
