// The OpenCL median and morphology kernels against the reference, on the edges their work-item
// shapes have (src/backends/opencl/median.cpp, morphology.cpp): a work-item computes VW
// neighbouring samples of RY rows, so widths (in samples) that are no multiple of VW, heights
// that are no multiple of RY (or odd, for the pairs of rows of 5x5 / 7x7), images narrower or
// lower than the window (every sample on the border path), 1-pixel images, ROI views at odd
// byte offsets and strides (to_backend), every border and channel counts 1..4 on u8, u16 and
// f32 (f32 also on special values, bit for bit). Only the OpenCL backend runs here: the family
// tests (median_test.cpp, morphology_test.cpp) sweep every backend on fewer such shapes.
#include <cstdlib>

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
    const EnvScope env({{"PIXFLOW_OCL_MEDIAN", sched}});
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
          const EnvScope env({{"PIXFLOW_OCL_MEDIAN", sched}});
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

// One window on one channel count under a schedule (each is a program build on PoCL, a second
// or two: the cases are chosen to cover the kernels' edges with few of them).
struct PackedCase {
  int ch, kw, kh, it;
};

std::string describe_case(const PackedCase& c, MorphOp op) {
  return std::string(morph_op_name(op)) + " " + std::to_string(c.kw) + "x" + std::to_string(c.kh) +
         " it=" + std::to_string(c.it);
}

// A device copy of `v` with rows packed (stride = row bytes: a stride that is no multiple of 8
// or 16 when w * ch is none) at the end of its buffer (64-byte rows: the first byte at offset
// 64 k - bytes), as the oclgrind pass lays images out.
TestImage packed_rows_on_device(const ConstImageView& v) {
  const std::int64_t row = v.row_bytes(), bytes = row * v.height();
  TestImage t;
  t.backing = Image(std::max<std::int64_t>(bytes, 1), 1, {Depth::u8, 1},
                    Location::opencl(test_opencl_device()));
  const std::int64_t slack = t.backing.stride() - bytes;
  t.view = ImageView(t.backing.data() + slack, v.width(), v.height(), row, v.format(),
                     t.backing.location());
  copy(v, t.view);
  return t;
}

// Runs `op` with the reference and on OpenCL over every size and border, the views aligned
// (word loads and stores), at odd byte offsets (vload4 / byte stores) and with packed rows,
// in turn.
void packed_cases(const char* sched, const std::vector<PackedCase>& cases,
                  std::initializer_list<MorphOp> ops, const std::vector<Size>& sizes,
                  std::mt19937_64& rng) {
  const EnvScope env({{"PIXFLOW_OCL_MORPH", sched}});
  std::size_t turn = 0;
  for (const PackedCase& c : cases)
    for (MorphOp op : ops)
      for (Size s : sizes)
        for (const Border& b : borders()) {
          const Format f{Depth::u8, c.ch};
          const TestImage src = random_image(s.w, s.h, f, rng);
          const int layout = int(turn++ % 3);  // 0 aligned, 1 at an offset, 2 packed rows
          const MorphParams p{c.kw, c.kh, c.it, b};
          Image want(s.w, s.h, f);
          morphology(src, want.view(), op, p, Context{Backend::ref});
          const TestImage ds = layout == 2 ? packed_rows_on_device(src)
                                           : to_backend(Backend::opencl, src, rng, layout == 0);
          const TestImage dd = layout == 2
                                   ? packed_rows_on_device(make_dst(s.w, s.h, f, rng, true).view)
                                   : make_dst_on(Backend::opencl, s.w, s.h, f, rng, layout == 0);
          morphology(ConstImageView(ds), ImageView(dd), op, p, Context{});
          ASSERT_EQ(compare(to_host(dd).view(), want.view()), "")
              << sched
              << (layout == 0   ? " aligned "
                  : layout == 1 ? " offset "
                                : " packed rows ")
              << what(f, s, describe_case(c, op), b);
        }
}

// morph_u8 (PIXFLOW_OCL_MORPH=packed...): a work-item BW row bytes (4, 8, 16) of RY rows (even),
// a warp 32 work-items, the halo 4 or 8 bytes. Widths in bytes (w * ch) below, at and past
// BW, 2 BW, 32 BW, work-items whose halo reaches past either end (the gather), windows wider
// or higher than the image, row counts that are no multiple of RY (and odd: the pairs of
// output rows), even windows (anchor kw / 2: a reach of kw / 2 left, kw / 2 - 1 right), 1-wide
// windows, windows whose reach takes 8-byte halos (5x5 on 4 channels, 7 wide on 2) and ones
// past them (7 wide on 3 channels: the call goes to morph_small), iterations (3x3 twice: a 5x5
// centred), every border (constant 300 saturates), dilate and erode, chains and doubling.
TEST(MorphOpencl, PackedU8MatchesRefOnEveryEdge) {
  if (!have_opencl("dilate")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x0c22);
  const std::vector<Size> sizes{{1, 1},   {1, 9},   {9, 1},   {3, 2},    {5, 4},  {17, 7},
                                {19, 13}, {33, 13}, {70, 33}, {131, 10}, {260, 5}};
  const auto both = {MorphOp::dilate, MorphOp::erode};
  packed_cases("packed",
               {{1, 3, 3, 1},
                {1, 5, 5, 1},
                {1, 3, 3, 2},
                {2, 5, 5, 1},
                {3, 3, 3, 1},
                {4, 5, 5, 1},
                {4, 3, 3, 1},
                {4, 4, 3, 1}},
               both, sizes, rng);
  packed_cases("packed,4,4,7", {{1, 4, 3, 1}, {1, 7, 2, 1}, {3, 1, 5, 1}, {3, 7, 2, 1}}, both,
               sizes, rng);
  packed_cases("packed,16,2,5,doubling", {{1, 3, 3, 1}, {1, 2, 2, 1}, {4, 5, 1, 1}}, both, sizes,
               rng);
  packed_cases("packed,8,6,7,doubling", {{1, 7, 7, 1}, {2, 6, 4, 1}}, both, sizes, rng);
}

// The larger windows of PIXFLOW_OCL_MORPH=packed: morph_u8_vh (a work-item 4 or 8 bytes of KH
// rows: row counts around multiples of KH, images lower than the window) then morph_u8 with
// one row (8 and 16 taps by doubling, reaches of 8 bytes); one-column and one-row windows (a
// single pass), even sides, iterations (5x5 three times: 13x13 centred), and past the
// schedule (21 wide: the van Herk passes).
TEST(MorphOpencl, PackedLargeWindowsMatchRefOnEveryEdge) {
  if (!have_opencl("dilate")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x0c25);
  const std::vector<Size> sizes{{1, 1},   {3, 2},   {9, 16},  {17, 15},
                                {33, 31}, {70, 47}, {131, 9}, {260, 30}};
  const auto both = {MorphOp::dilate, MorphOp::erode};
  packed_cases("packed",
               {{1, 15, 15, 1},
                {1, 1, 21, 1},
                {1, 16, 9, 1},
                {1, 5, 5, 3},
                {2, 9, 1, 1},
                {3, 5, 11, 1},
                {4, 3, 8, 1},
                {1, 21, 3, 1}},
               both, sizes, rng);
  packed_cases("packed,8,0,3", {{1, 15, 15, 1}, {3, 4, 6, 1}}, both, sizes, rng);
}

// morph_u8_comp (open, close, tophat, blackhat of one u8 channel, odd centred windows up to
// 5 x 5) and morph_u8's gradient (u8, 1..4 channels) under PIXFLOW_OCL_MORPH=packed...: E's
// rows outside the image (the work-items at the top and bottom: images lower than RY and
// than the window), E's bytes outside it (work-items within the window's half of either
// end, images narrower than BW), row counts that are no multiple of RY, every border (wrap:
// gradient here, the others through core's passes), views aligned and at odd offsets.
TEST(MorphOpencl, PackedCompositesMatchRefOnEveryEdge) {
  if (!have_opencl("dilate")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x0c24);
  const std::vector<Size> sizes{{1, 1},  {2, 3},   {3, 2},   {5, 5},    {9, 4},
                                {17, 9}, {33, 13}, {70, 33}, {131, 10}, {300, 21}};
  const auto comps = {MorphOp::open, MorphOp::close, MorphOp::tophat, MorphOp::blackhat};
  const auto grad = {MorphOp::gradient};
  packed_cases("packed", {{1, 3, 3, 1}, {1, 5, 5, 1}, {1, 3, 3, 2}}, comps, sizes, rng);
  packed_cases("packed", {{1, 3, 3, 1}, {2, 3, 5, 1}, {3, 3, 3, 1}, {4, 5, 5, 1}}, grad, sizes,
               rng);
  packed_cases("packed,4,2,5", {{1, 3, 5, 1}, {1, 1, 3, 1}}, comps, sizes, rng);
  packed_cases("packed,4,2,5", {{1, 1, 3, 1}}, grad, sizes, rng);
  packed_cases("packed,16,4,5", {{1, 5, 1, 1}}, comps, sizes, rng);
  packed_cases("packed,16,4,5", {{3, 3, 3, 1}}, grad, sizes, rng);
  // The composites as core's passes through morph_u8 (no fused kernel).
  packed_cases("packed-passes", {{1, 3, 3, 1}, {3, 5, 5, 1}}, comps, sizes, rng);
}

// With PIXFLOW_OCL_MORPH unset, u8 x 1 images of at least 2^24 pixels take the packed kernels
// (use_packed, morphology.cpp): one such image (4099 x 4097, every window shape the packed
// kernels take: small, large, composite, gradient) against the reference.
TEST(MorphOpencl, LargeU8ImagesTakeThePackedKernelsByDefault) {
  if (!have_opencl("dilate")) GTEST_SKIP() << "no OpenCL device";
  if (std::getenv("PIXFLOW_OCL_MORPH")) GTEST_SKIP() << "PIXFLOW_OCL_MORPH is set";
  auto rng = make_rng(0x0c2a);
  const TestImage src = random_image(4099, 4097, Format{Depth::u8, 1}, rng);
  struct Case {
    MorphOp op;
    int k;
    Border b;
  };
  const Case cases[] = {
      {MorphOp::dilate, 3, Border::reflect101()}, {MorphOp::erode, 5, Border::constant(7)},
      {MorphOp::dilate, 15, Border::replicate()}, {MorphOp::open, 3, Border::reflect()},
      {MorphOp::gradient, 3, Border::wrap()},     {MorphOp::tophat, 5, Border::reflect101()}};
  for (const Case& c : cases) {
    const std::string r =
        opencl_vs_ref(src, rng, [&](ConstImageView in, ImageView out, const Context& ctx) {
          morphology(in, out, c.op, MorphParams{c.k, c.k, 1, c.b}, ctx);
        });
    ASSERT_EQ(r, "") << morph_op_name(c.op) << " " << c.k << "x" << c.k;
  }
}

TEST(MorphOpencl, UnknownScheduleIsAnError) {
  if (!have_opencl("dilate")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x0c23);
  const TestImage src = random_image(9, 7, Format{Depth::u8, 1}, rng);
  const TestImage ds = to_backend(Backend::opencl, src, rng);
  const TestImage dd = make_dst_on(Backend::opencl, 9, 7, Format{Depth::u8, 1}, rng);
  const EnvScope env({{"PIXFLOW_OCL_MORPH", "packed,3,0,5"}});
  try {
    morphology(ConstImageView(ds), ImageView(dd), MorphOp::dilate, MorphParams{}, Context{});
    FAIL() << "PIXFLOW_OCL_MORPH=packed,3,0,5 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::invalid_argument) << e.what();
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
