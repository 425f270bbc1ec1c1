// remap: ref vs cv::remap (maps on OpenCV's 1/32 grid), non-finite and far-away maps, every
// backend vs ref, identity map == copy, bad input.
#include "tests/common.hpp"

#include <cmath>
#include <limits>

#include "bench/maps.hpp"
#include "src/base/numeric.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace pixflow::test {
namespace {

// Map coordinates: an integer in [-len-2, 2*len+2] plus a fraction k/32 (OpenCV quantises
// linear coordinates to 1/32); for nearest k != 16 (OpenCV rounds .5 half to even).
[[maybe_unused]] TestImage random_map(std::int64_t w, std::int64_t h, std::int64_t len,
                                      bool nearest, std::mt19937_64& rng) {
  TestImage m = make_dst(w, h, {Depth::f32, 1}, rng);
  std::uniform_int_distribution<std::int64_t> ip(-len - 2, 2 * len + 2);
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      int k = int(rng() % 32);
      if (nearest && k == 16) k = 15;
      m.view.row<float>(y)[x] = float(ip(rng)) + float(k) / 32.0f;
    }
  return m;
}

const char* interp_name(Interp i) {
  return i == Interp::nearest ? "nearest" : "linear";
}

#if PIXFLOW_HAVE_OPENCV
TEST(Remap, RefMatchesOpenCVOnTheOneThirtySecondGrid) {
  auto rng = make_rng(0x7e01);
  const Size dsts[] = {{1, 1}, {13, 11}, {1, 7}};
  for (Depth d : {Depth::u8, Depth::u16, Depth::f32})
    for (int ch : {1, 3, 4})
      for (Size s : awkward_sizes())
        for (Interp in : {Interp::nearest, Interp::linear})
          for (const Border& b : all_borders()) {
            const Size ds = dsts[rng() % 3];
            PIXFLOW_TRACE(testing::Message()
                          << depth_name(d) << "x" << ch << " src " << s.w << "x" << s.h << " dst "
                          << ds.w << "x" << ds.h << " " << interp_name(in) << " " << describe(b));
            auto src = random_image(s.w, s.h, {d, ch}, rng);
            const bool nearest = in == Interp::nearest;
            auto mx = random_map(ds.w, ds.h, s.w, nearest, rng);
            auto my = random_map(ds.w, ds.h, s.h, nearest, rng);
            auto got = make_dst(ds.w, ds.h, {d, ch}, rng);
            remap(src, mx, my, got, RemapParams{in, b}, {Backend::ref});
            cv::Mat want;
            cv::remap(to_mat(src), want, to_mat(mx), to_mat(my),
                      nearest ? cv::INTER_NEAREST : cv::INTER_LINEAR, cv_border(b),
                      cv::Scalar::all(b.value));
            if (nearest)
              ASSERT_EQ(compare(got, view_of(want)), "");
            else if (d == Depth::f32)
              ASSERT_EQ(compare(got, view_of(want), 1e-4, 1e-4), "");
            else
              ASSERT_EQ(compare(got, view_of(want), 1.0), "");
          }
}

TEST(Remap, RefMatchesOpenCVOn1920x1080) {
  auto rng = make_rng(0x7e02);
  PIXFLOW_TRACE("u8x3 1920x1080 linear constant(0)");
  auto src = random_image(1920, 1080, {Depth::u8, 3}, rng);
  auto mx = random_map(1920, 1080, 1920, false, rng);
  auto my = random_map(1920, 1080, 1080, false, rng);
  auto got = make_dst(1920, 1080, {Depth::u8, 3}, rng);
  remap(src, mx, my, got, RemapParams{}, {Backend::ref});
  cv::Mat want;
  cv::remap(to_mat(src), want, to_mat(mx), to_mat(my), cv::INTER_LINEAR, cv::BORDER_CONSTANT);
  ASSERT_EQ(compare(got, view_of(want), 1.0), "");
}
#else
TEST(Remap, RefMatchesOpenCV) {
  GTEST_SKIP() << "built without OpenCV (C++): ref not checked against cv::remap";
}
#endif

// Non-finite map entries give the constant border's value (or 0 for other borders); finite
// coordinates far outside are clamped to +-2^30 and mapped through the border like any other.
TEST(Remap, NonFiniteAndFarAwayMapEntriesGiveTheDocumentedResult) {
  auto rng = make_rng(0x7e03);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float xs[] = {nan, inf, -inf, 1e30f, -1e30f, 3e9f, 2.5f};
  const float ys[] = {1.0f, 2.0f, 0.0f, 1.0f, -1e30f, 1.0f, nan};
  const int n = int(std::size(xs));
  for (Depth d : {Depth::u8, Depth::u16, Depth::f32})
    for (Interp in : {Interp::nearest, Interp::linear})
      for (const Border& b : all_borders()) {
        PIXFLOW_TRACE(testing::Message()
                      << depth_name(d) << " " << interp_name(in) << " " << describe(b));
        auto src = random_image(5, 4, {d, 1}, rng);
        auto mx = make_dst(n, 1, {Depth::f32, 1}, rng);
        auto my = make_dst(n, 1, {Depth::f32, 1}, rng);
        for (int i = 0; i < n; ++i)
          mx.view.row<float>(0)[i] = xs[i], my.view.row<float>(0)[i] = ys[i];
        auto got = make_dst(n, 1, {d, 1}, rng);
        remap(src, mx, my, got, RemapParams{in, b}, {Backend::ref});
        const double invalid = b.type == BorderType::constant ? b.value : 0.0;
        for (int i : {0, 1, 2, 6}) EXPECT_EQ(sample(got, i, 0, 0), invalid) << "entry " << i;
        // 1e30 clamps to 2^30; with x0 = 2^30 and fx = 0 both interpolations read column
        // border_index(2^30) of row 1 (reflect101: 2^30 mod 8 = 0 -> column 0, etc.).
        const std::int64_t big = std::int64_t(1) << 30;
        auto at = [&](std::int64_t x, std::int64_t y) {
          const auto xx = detail::border_index(x, 5, b.type),
                     yy = detail::border_index(y, 4, b.type);
          return (xx < 0 || yy < 0) ? invalid : sample(src, xx, yy, 0);
        };
        EXPECT_EQ(sample(got, 3, 0, 0), at(big, 1));
        EXPECT_EQ(sample(got, 4, 0, 0), at(-big, -big));
        EXPECT_EQ(sample(got, 5, 0, 0), at(big, 1));
      }
}

TEST(Remap, EveryBackendMatchesRefExactly) {
  auto rng = make_rng(0x7e04);
  for (Backend be : test_backends_for("remap"))
    for (Depth d : {Depth::u8, Depth::u16, Depth::f32})
      for (int ch : {1, 3, 4})
        for (Size s : std::vector<Size>{{1, 1}, {1, 40}, {40, 1}, {17, 13}, {203, 101}})
          for (Interp in : {Interp::nearest, Interp::linear})
            for (const Border& b : all_borders()) {
              PIXFLOW_TRACE(testing::Message()
                            << backend_name(be) << " " << depth_name(d) << "x" << ch << " " << s.w
                            << "x" << s.h << " " << interp_name(in) << " " << describe(b));
              auto src = random_image(s.w, s.h, {d, ch}, rng);
              // Arbitrary (not grid) fractions and some non-finite entries.
              auto mx = random_image(31, 9, {Depth::f32, 1}, rng, false, -2.0 * s.w, 3.0 * s.w);
              auto my = random_image(31, 9, {Depth::f32, 1}, rng, false, -2.0 * s.h, 3.0 * s.h);
              mx.view.row<float>(0)[0] = std::numeric_limits<float>::quiet_NaN();
              my.view.row<float>(1)[3] = std::numeric_limits<float>::infinity();
              auto want = make_dst(31, 9, {d, ch}, rng);
              remap(src, mx, my, want, RemapParams{in, b}, {Backend::ref});
              auto dsrc = to_backend(be, src, rng);
              auto dmx = to_backend(be, mx, rng);
              auto dmy = to_backend(be, my, rng);
              auto got = make_dst_on(be, 31, 9, {d, ch}, rng);
              remap(dsrc, dmx, dmy, got, RemapParams{in, b}, {be});
              ASSERT_EQ(compare(to_host(got), want), "");
            }
}

// The cpu backend's SIMD paths (src/backends/cpu/simd/remap.cpp) under every target of the
// machine: maps near the identity with fractions (taps gathered inside the source), lanes
// whose taps cross each edge (the border: the vector goes to the reference), fractions of
// exactly 0.5 (nearest rounds up), a NaN in some rows, the row's tail; u8/u16 sources whose
// p00 and p10 share one 32-bit read (x1, u8x3) and those that need two.
TEST(Remap, EveryBackendMatchesRefOnEverySimdPath) {
  auto rng = make_rng(0x7e06);
  std::uniform_real_distribution<float> jitter(-1.2f, 1.2f);
  for (Depth d : {Depth::u8, Depth::u16, Depth::f32})
    for (int ch : {1, 3, 4})
      for (Size s : std::vector<Size>{{2, 2}, {3, 5}, {37, 19}, {130, 41}})
        for (Interp in : {Interp::nearest, Interp::linear})
          for (const Border& b : all_borders()) {
            PIXFLOW_TRACE(testing::Message()
                          << depth_name(d) << "x" << ch << " " << s.w << "x" << s.h << " "
                          << interp_name(in) << " " << describe(b));
            auto src = random_image(s.w, s.h, {d, ch}, rng);
            const std::int64_t w = s.w + 21, h = s.h + 3;  // tails for every vector width
            auto mx = make_dst(w, h, {Depth::f32, 1}, rng);
            auto my = make_dst(w, h, {Depth::f32, 1}, rng);
            for (std::int64_t y = 0; y < h; ++y)
              for (std::int64_t x = 0; x < w; ++x) {
                float fx = float(x) * float(s.w) / float(w) + jitter(rng);
                float fy = float(y) * float(s.h) / float(h) + jitter(rng);
                if (rng() % 7 == 0) fx = std::floor(fx) + 0.5f;
                if (rng() % 7 == 0) fy = std::floor(fy) + 0.5f;
                mx.view.row<float>(y)[x] = fx;
                my.view.row<float>(y)[x] = fy;
              }
            mx.view.row<float>(h - 1)[w / 2] = std::numeric_limits<float>::quiet_NaN();
            my.view.row<float>(0)[w / 3] = -std::numeric_limits<float>::infinity();
            auto want = make_dst(w, h, {d, ch}, rng);
            remap(src, mx, my, want, RemapParams{in, b}, {Backend::ref});
            for (Backend be : test_backends_for("remap"))
              for (const std::string& target : cpu_targets_for(be)) {
                PIXFLOW_TRACE(testing::Message() << backend_name(be) << " " << target);
                SimdTargetScope forced(target);
                auto dsrc = to_backend(be, src, rng);
                auto dmx = to_backend(be, mx, rng);
                auto dmy = to_backend(be, my, rng);
                auto got = make_dst_on(be, w, h, {d, ch}, rng);
                remap(dsrc, dmx, dmy, got, RemapParams{in, b}, {be});
                ASSERT_EQ(compare(to_host(got), want), "");
              }
          }
}

// The CUDA fast kernel (src/backends/cuda/remap.cu): several outputs per thread with vector
// map loads and packed stores where rows are aligned (tight views of widths that are
// multiples of 4) and scalar ones where not (odd offsets, odd widths: the row's tail);
// interior pixels without border code next to pixels of the same thread that need it. The
// maps mix a near-identity warp (whole threads interior) with entries anywhere around the
// source, entries exactly at the interior's limits (x0 + 1 == w, floor(m + 0.5) == w, -0,
// -0.5 and the floats just inside), non-finite and far-away entries. Sizes span several
// blocks (128 x 8 outputs) and differ between source and maps.
TEST(Remap, EveryBackendMatchesRefOnManyTiles) {
  auto rng = make_rng(0x7e07);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  const Size srcs[] = {{1, 1}, {2, 3}, {67, 35}, {300, 70}};
  const Size maps[] = {{1, 1}, {7, 3}, {131, 19}, {516, 33}, {517, 17}};
  // Entries at and around the limits of the interior along one axis of length len.
  const auto edge = [&](std::int64_t len) {
    const float l = float(len);
    const float cands[] = {0.0f,
                           -0.0f,
                           -0.5f,
                           std::nextafter(-0.5f, 0.0f),
                           std::nextafter(-0.5f, -1.0f),
                           std::nextafter(0.0f, -1.0f),
                           l - 1.0f,
                           std::nextafter(l - 1.0f, 0.0f),
                           l - 0.5f,
                           std::nextafter(l - 0.5f, 0.0f),
                           l - 1.5f,
                           l,
                           std::nextafter(l, 0.0f),
                           -1.0f};
    return cands[rng() % std::size(cands)];
  };
  const auto odd = [&]() {
    const float cands[] = {nan, inf, -inf, 1e30f, -1e30f, 3e9f, -3e9f};
    return cands[rng() % std::size(cands)];
  };
  std::uniform_real_distribution<float> jitter(-1.5f, 1.5f), unit(0.0f, 1.0f);
  for (Backend be : test_backends_for("remap"))
    for (Depth d : {Depth::u8, Depth::u16, Depth::f32})
      for (int ch : {1, 3, 4})
        for (Interp in : {Interp::nearest, Interp::linear})
          for (const Border& b : borders)
            for (int k = 0; k < 3; ++k) {
              const Size s = srcs[rng() % std::size(srcs)];
              const Size m = maps[rng() % std::size(maps)];
              const bool tight = k == 0;  // aligned rows: the vector loads and stores
              PIXFLOW_TRACE(testing::Message()
                            << backend_name(be) << " " << depth_name(d) << "x" << ch << " src "
                            << s.w << "x" << s.h << " maps " << m.w << "x" << m.h << " "
                            << interp_name(in) << " " << describe(b) << (tight ? " tight" : ""));
              auto src = random_image(s.w, s.h, {d, ch}, rng);
              auto mx = make_dst(m.w, m.h, {Depth::f32, 1}, rng);
              auto my = make_dst(m.w, m.h, {Depth::f32, 1}, rng);
              for (std::int64_t y = 0; y < m.h; ++y) {
                const bool plain_row = rng() % 3 == 0;  // every thread of the row interior
                for (std::int64_t x = 0; x < m.w; ++x) {
                  float fx = float(x) * float(s.w) / float(m.w) + jitter(rng);
                  float fy = float(y) * float(s.h) / float(m.h) + jitter(rng);
                  fx = std::fmin(std::fmax(fx, 0.0f), float(s.w) - 1.25f);
                  fy = std::fmin(std::fmax(fy, 0.0f), float(s.h) - 1.25f);
                  if (!plain_row) {
                    const float u = unit(rng);
                    if (u < 0.08f) {
                      fx = -3.0f + unit(rng) * float(s.w + 6);
                      fy = -3.0f + unit(rng) * float(s.h + 6);
                    } else if (u < 0.14f) {
                      fx = edge(s.w);
                    } else if (u < 0.20f) {
                      fy = edge(s.h);
                    } else if (u < 0.22f) {
                      (rng() % 2 ? fx : fy) = odd();
                    } else if (u < 0.25f) {
                      fx = std::floor(fx) + 0.5f;  // nearest: the tie rounds up
                    }
                  }
                  mx.view.row<float>(y)[x] = fx;
                  my.view.row<float>(y)[x] = fy;
                }
              }
              auto want = make_dst(m.w, m.h, {d, ch}, rng);
              remap(src, mx, my, want, RemapParams{in, b}, {Backend::ref});
              auto dsrc = to_backend(be, src, rng, tight);
              auto dmx = to_backend(be, mx, rng, tight);
              auto dmy = to_backend(be, my, rng, tight);
              auto got = make_dst_on(be, m.w, m.h, {d, ch}, rng, tight);
              remap(dsrc, dmx, dmy, got, RemapParams{in, b}, {be});
              // compare_bits reads f32 samples: every bit there (signs of zero), values
              // (exact) for the integer depths.
              const Image host = to_host(got);
              ASSERT_EQ(d == Depth::f32 ? compare_bits(host, want) : compare(host, want), "");
            }
}

// The benchmark's lens maps (bench/maps.hpp: a slight zoom plus sine displacements, so each
// warp of a row's ends crosses the left or right edge and the first and last rows the top and
// bottom) at sizes of several blocks of the CUDA fast kernel (128 x 8 outputs a block row)
// with partial ones: interior threads next to threads whose pixels take the border rule (with
// all their loads in flight: the border path of remap.cu), every border, every depth and
// channel count; u8x3 linear reads words where the source's start and stride are multiples of
// 4 (tight) and bytes elsewhere. Some rows carry non-finite entries.
// The fast kernel's one shape (remap_ring_kernel; rows a thread by remap_ring.hpp's
// blocks_y, each thread's next 3 rows of maps in flight in a 4-slot shared ring) at rows a
// thread from 1 to 9, so that threads end at every position of the ring and some go round it
// twice (4-byte pixels / wider): 517x70 .. 600x150 one row; 1030x500 1-2 / 3; 1500x900 (bench
// cases) 2-3 / 5-6; 2300x1000 4-5 / 8-9 (every depth, channel count and interpolation, the
// border varying); ~4100x1100 (the bench's cases) 8-9, 33 block columns; 40x70000 (the bench's
// cases, one block column) 8-9 rows in two waves' worth of block rows (973).
TEST(Remap, EveryBackendMatchesRefOnLensMaps) {
  auto rng = make_rng(0x7e09);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  enum class Runs {
    all,      // every depth, channel count, interpolation and border
    formats,  // every depth, channel count and interpolation, one border each (in turn)
    bench,    // the bench's cases: linear, constant 0, u8x1/u8x3/f32x1
  };
  struct Case {
    Size size;
    Runs runs;
    bool cuda_only;  // the CUDA kernel's shapes; the CPU backends' cases are the small ones
  };
  const Case cases[] = {{{517, 70}, Runs::all, false},      {{600, 150}, Runs::all, false},
                        {{300, 97}, Runs::all, false},      {{1030, 500}, Runs::formats, true},
                        {{1500, 900}, Runs::bench, true},   {{2300, 1000}, Runs::formats, true},
                        {{4100, 1100}, Runs::bench, false}, {{40, 70000}, Runs::bench, true}};
  std::size_t turn = 0;  // the border of the next `formats` run
  for (const Case& cs : cases) {
    const std::int64_t w = cs.size.w, h = cs.size.h;
    auto mx = make_dst(w, h, {Depth::f32, 1}, rng);
    auto my = make_dst(w, h, {Depth::f32, 1}, rng);
    for (std::int64_t y = 0; y < h; ++y)
      bench::smooth_map_row(y, w, h, mx.view.row<float>(y), my.view.row<float>(y));
    mx.view.row<float>(h / 2)[w / 3] = std::numeric_limits<float>::quiet_NaN();
    my.view.row<float>(h - 1)[w - 2] = -std::numeric_limits<float>::infinity();
    for (Backend be : test_backends_for("remap"))
      for (Depth d : {Depth::u8, Depth::u16, Depth::f32})
        for (int ch : {1, 3, 4})
          for (Interp in : {Interp::nearest, Interp::linear}) {
            const std::size_t pick = turn++ % borders.size();
            for (std::size_t bi = 0; bi < borders.size(); ++bi) {
              const Border& b = borders[bi];
              const bool bench_case = in == Interp::linear && b.type == BorderType::constant &&
                                      b.value == 0.0 && (d == Depth::u8 || ch == 1) &&
                                      d != Depth::u16;
              if (cs.runs == Runs::bench && !bench_case) continue;
              if (cs.runs == Runs::formats && bi != pick) continue;
              if (cs.cuda_only && be != Backend::cuda) continue;
              for (bool tight : {true, false}) {
                PIXFLOW_TRACE(testing::Message()
                              << backend_name(be) << " " << depth_name(d) << "x" << ch << " " << w
                              << "x" << h << " " << interp_name(in) << " " << describe(b)
                              << (tight ? " tight" : ""));
                auto src = random_image(w, h, {d, ch}, rng, tight);
                auto want = make_dst(w, h, {d, ch}, rng);
                remap(src, mx, my, want, RemapParams{in, b}, {Backend::ref});
                auto dsrc = to_backend(be, src, rng, tight);
                auto dmx = to_backend(be, mx, rng, tight);
                auto dmy = to_backend(be, my, rng, tight);
                auto got = make_dst_on(be, w, h, {d, ch}, rng, tight);
                remap(dsrc, dmx, dmy, got, RemapParams{in, b}, {be});
                const Image host = to_host(got);
                ASSERT_EQ(d == Depth::f32 ? compare_bits(host, want) : compare(host, want), "");
              }
            }
          }
  }
}

// f32 results keep the reference's sign of zero: a map entry of -0 has the fraction
// -0 - floor(-0) = +0 in the reference (a fast floor that gives -0 - +0 = -0 flips the sign
// of zero results); sources of +-0 make the sign visible.
TEST(Remap, EveryBackendMatchesRefOnSignedZeros) {
  auto rng = make_rng(0x7e08);
  for (Backend be : test_backends_for("remap"))
    for (int ch : {1, 3})
      for (Interp in : {Interp::nearest, Interp::linear})
        for (const Border& b : {Border::replicate(), Border::constant(-0.0)}) {
          PIXFLOW_TRACE(testing::Message() << backend_name(be) << " f32x" << ch << " "
                                           << interp_name(in) << " " << describe(b));
          const std::int64_t sw = 37, sh = 11, w = 133, h = 9;
          auto src = random_image(sw, sh, {Depth::f32, ch}, rng);
          for (std::int64_t y = 0; y < sh; ++y)
            for (std::int64_t x = 0; x < sw * ch; ++x)
              src.view.row<float>(y)[x] = rng() % 2 ? -0.0f : 0.0f;
          auto mx = make_dst(w, h, {Depth::f32, 1}, rng);
          auto my = make_dst(w, h, {Depth::f32, 1}, rng);
          for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x) {
              const float ix = float(x % (sw - 1)), iy = float(y % (sh - 1));
              mx.view.row<float>(y)[x] = rng() % 2 ? -0.0f : ix + float(rng() % 4) * 0.25f;
              my.view.row<float>(y)[x] = rng() % 2 ? -0.0f : iy + float(rng() % 4) * 0.25f;
            }
          auto want = make_dst(w, h, {Depth::f32, ch}, rng);
          remap(src, mx, my, want, RemapParams{in, b}, {Backend::ref});
          const bool tight = rng() % 2 == 0;
          auto dsrc = to_backend(be, src, rng, tight);
          auto dmx = to_backend(be, mx, rng, tight);
          auto dmy = to_backend(be, my, rng, tight);
          auto got = make_dst_on(be, w, h, {Depth::f32, ch}, rng, tight);
          remap(dsrc, dmx, dmy, got, RemapParams{in, b}, {be});
          ASSERT_EQ(compare_bits(to_host(got), want), "");
        }
}

TEST(Remap, IdentityMapIsCopyForBothInterpolations) {
  auto rng = make_rng(0x7e05);
  for (Depth d : {Depth::u8, Depth::u16, Depth::f32})
    for (Interp in : {Interp::nearest, Interp::linear}) {
      PIXFLOW_TRACE(testing::Message() << depth_name(d) << " " << interp_name(in));
      auto src = random_image(23, 17, {d, 3}, rng);
      auto mx = make_dst(23, 17, {Depth::f32, 1}, rng);
      auto my = make_dst(23, 17, {Depth::f32, 1}, rng);
      for (std::int64_t y = 0; y < 17; ++y)
        for (std::int64_t x = 0; x < 23; ++x)
          mx.view.row<float>(y)[x] = float(x), my.view.row<float>(y)[x] = float(y);
      auto got = make_dst(23, 17, {d, 3}, rng);
      remap(src, mx, my, got, RemapParams{in, Border::constant(3)}, {Backend::ref});
      ASSERT_EQ(compare(got, src), "");
    }
}

// Depths, channels, dst format, overlap with src and the border: SchemaBadInput
// (tests/schema_test.cpp). Here: the maps, and dst of the maps' size.
TEST(Remap, BadMapsGiveStatusAndNamesOpAndParameter) {
  Image src(8, 8, {Depth::u8, 1});
  Image mx(5, 4, {Depth::f32, 1}), my(5, 4, {Depth::f32, 1}), dst(5, 4, {Depth::u8, 1});
  Image mu8(5, 4, {Depth::u8, 1}), m2(5, 4, {Depth::f32, 2}), my_small(5, 3, {Depth::f32, 1});
  Image dst_big(6, 4, {Depth::u8, 1}), dst_src(8, 8, {Depth::u8, 1});
  const BadCase cases[] = {
      {"map_x u8",
       [&] { remap(src, mu8, my, dst, {}); },
       Status::invalid_argument,
       {"remap: ", "map_x must be 1-channel f32", "u8x1"}},
      {"map_y 2ch",
       [&] { remap(src, mx, m2, dst, {}); },
       Status::invalid_argument,
       {"remap: ", "map_y must be 1-channel f32"}},
      {"map sizes",
       [&] { remap(src, mx, my_small, dst, {}); },
       Status::invalid_argument,
       {"remap: ", "map_y must have map_x's size 5x4"}},
      {"dst size",
       [&] { remap(src, mx, my, dst_big, {}); },
       Status::invalid_argument,
       {"remap: ", "dst must be 5x4 u8x1"}},
      {"dst of src's size",
       [&] { remap(src, mx, my, dst_src, {}); },
       Status::invalid_argument,
       {"remap: ", "dst must be 5x4 u8x1"}},
      {"dst overlaps map",
       [&] { remap(src, mx, my, ImageView(mx), {}); },
       Status::invalid_argument,
       {"remap: "}},
      {"cli no map_x",
       [&] { Pipeline::parse("remap map_y=a.npy"); },
       Status::invalid_argument,
       {"remap: ", "map_x=FILE is required"}},
  };
  expect_errors(cases);
}

}  // namespace
}  // namespace pixflow::test
