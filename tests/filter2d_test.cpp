// filter2d: ref vs cv::filter2D, every backend vs ref, bad input (API and kernel strings),
// metamorphic checks (1x1 identity kernel == copy, delta shifts).
#include "tests/common.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "src/backends/cuda/filter2d_ftile.hpp"
#include "src/backends/cuda/filter2d_strip.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace pixflow::test {
namespace {

Filter2dParams random_kernel(int kw, int kh, std::mt19937_64& rng, const Border& b) {
  Filter2dParams p;
  p.kw = kw;
  p.kh = kh;
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (int i = 0; i < kw * kh; ++i) p.kernel.push_back(d(rng) * 2.0f / float(kw * kh));
  p.delta = double(std::uniform_int_distribution<int>(-20, 20)(rng)) / 4.0;
  p.border = b;
  return p;
}

struct K {
  int w, h;
};
const K kKernels[] = {{1, 1}, {3, 3}, {5, 3}, {4, 2}, {2, 7}, {15, 15}};

#if PIXFLOW_HAVE_OPENCV
// cv::filter2D with anchor (-1,-1) = (kw/2, kh/2). OpenCV's 2-D filter pads constant with 0
// and rejects wrap, so those are padded by cv::copyMakeBorder, filtered and cropped.
cv::Mat cv_filter(const ConstImageView& src, const Filter2dParams& p) {
  cv::Mat in = to_mat(src), out;
  cv::Mat k(p.kh, p.kw, CV_32F, const_cast<float*>(p.kernel.data()));
  if (p.border.type != BorderType::constant && p.border.type != BorderType::wrap) {
    cv::filter2D(in, out, -1, k, cv::Point(-1, -1), p.delta, cv_border(p.border));
    return out;
  }
  const int l = p.kw / 2, r = p.kw - 1 - l, t = p.kh / 2, bo = p.kh - 1 - t;
  cv::Mat padded, full;
  cv::copyMakeBorder(in, padded, t, bo, l, r, cv_border(p.border), cv::Scalar::all(p.border.value));
  cv::filter2D(padded, full, -1, k, cv::Point(-1, -1), p.delta, cv::BORDER_REPLICATE);
  return full(cv::Rect(l, t, in.cols, in.rows)).clone();
}

// f32: 1e-4 absolute plus 1e-4 relative to the magnitude sum |k|*|p| (+|delta|) of the window
// (relative to the result is unattainable for any float sum under cancellation).
std::string compare_f32(const ConstImageView& got, const ConstImageView& want,
                        const ConstImageView& src, const Filter2dParams& p) {
  const int ch = src.channels();
  Image absf(src.width(), src.height(), src.format());
  for (std::int64_t y = 0; y < src.height(); ++y)
    for (std::int64_t x = 0; x < src.width() * ch; ++x)
      absf.row<float>(y)[x] = std::fabs(src.row<float>(y)[x]);
  Filter2dParams a = p;
  for (float& v : a.kernel) v = std::fabs(v);
  a.delta = std::fabs(p.delta);
  a.border.value = std::fabs(p.border.value);
  Image mag(src.width(), src.height(), src.format());
  filter2d(absf, mag, a, {Backend::ref});
  std::int64_t bad = 0;
  std::ostringstream first;
  for (std::int64_t y = 0; y < got.height(); ++y)
    for (std::int64_t x = 0; x < got.width(); ++x)
      for (int c = 0; c < ch; ++c) {
        const double g = sample(got, x, y, c), w = sample(want, x, y, c);
        const double m = sample(mag, x, y, c);
        if (!(std::fabs(g - w) <= 1e-4 + 1e-4 * m) && bad++ < 3)
          first << " (" << x << "," << y << ",c" << c << "): got " << g << " want " << w
                << " magnitude " << m << ";";
      }
  return bad == 0 ? "" : std::to_string(bad) + " samples differ:" + first.str();
}

TEST(Filter2d, RefWithinOneOfOpenCVForU8AndWithinToleranceForF32) {
  auto rng = make_rng(0xf201);
  for (Depth d : {Depth::u8, Depth::f32})
    for (int ch : {1, 3, 4})
      for (Size s : awkward_sizes())
        for (K k : kKernels)
          for (const Border& b : all_borders()) {
            const Filter2dParams p = random_kernel(k.w, k.h, rng, b);
            PIXFLOW_TRACE(testing::Message()
                          << depth_name(d) << "x" << ch << " " << s.w << "x" << s.h << " kernel "
                          << k.w << "x" << k.h << " delta=" << p.delta << " " << describe(b));
            auto src = random_image(s.w, s.h, {d, ch}, rng);
            auto got = make_dst(s.w, s.h, {d, ch}, rng);
            filter2d(src, got, p, {Backend::ref});
            const cv::Mat want = cv_filter(src, p);
            if (d == Depth::u8)
              ASSERT_EQ(compare(got, view_of(want), 1.0), "");
            else
              ASSERT_EQ(compare_f32(got, view_of(want), src, p), "");
          }
}

TEST(Filter2d, RefWithinOneOfOpenCVOn1920x1080) {
  auto rng = make_rng(0xf202);
  const Filter2dParams p = random_kernel(3, 3, rng, Border::reflect101());
  PIXFLOW_TRACE("u8x3 1920x1080 3x3 reflect101");
  auto src = random_image(1920, 1080, {Depth::u8, 3}, rng);
  auto got = make_dst(1920, 1080, {Depth::u8, 3}, rng);
  filter2d(src, got, p, {Backend::ref});
  ASSERT_EQ(compare(got, view_of(cv_filter(src, p)), 1.0), "");
}
#else
TEST(Filter2d, RefMatchesOpenCV) {
  GTEST_SKIP() << "built without OpenCV (C++): ref not checked against cv::filter2D";
}
#endif

TEST(Filter2d, EveryBackendMatchesRefExactly) {
  auto rng = make_rng(0xf203);
  for (Backend be : test_backends_for("filter2d"))
    for (Depth d : {Depth::u8, Depth::f32})
      for (int ch : {1, 3, 4})
        for (Size s : std::vector<Size>{{1, 1}, {1, 40}, {40, 1}, {17, 13}, {203, 101}})
          for (const Border& b : all_borders()) {
            const K k = kKernels[rng() % std::size(kKernels)];
            const Filter2dParams p = random_kernel(k.w, k.h, rng, b);
            PIXFLOW_TRACE(testing::Message()
                          << backend_name(be) << " " << depth_name(d) << "x" << ch << " " << s.w
                          << "x" << s.h << " kernel " << k.w << "x" << k.h << " " << describe(b));
            auto src = random_image(s.w, s.h, {d, ch}, rng);
            auto want = make_dst(s.w, s.h, {d, ch}, rng);
            filter2d(src, want, p, {Backend::ref});
            auto dsrc = to_backend(be, src, rng);
            auto got = make_dst_on(be, s.w, s.h, {d, ch}, rng);
            filter2d(dsrc, got, p, {be});
            ASSERT_EQ(compare(to_host(got), want), "");
          }
}

// The kernel as a stage parameter, values printed to round-trip.
std::string kernel_params(const Filter2dParams& p) {
  std::ostringstream o;
  o.precision(9);
  o << "kernel=";
  for (int r = 0; r < p.kh; ++r)
    for (int c = 0; c < p.kw; ++c)
      o << p.kernel[std::size_t(r * p.kw + c)] << (c + 1 < p.kw ? "," : r + 1 < p.kh ? ";" : "");
  o << " delta=" << p.delta << " " << border_params(p.border);
  return o.str();
}

// The SIMD kernel's paths, once per SIMD target: every channel count, sizes around and beyond
// the vector widths (blocks of 4 vectors, single vectors, scalar tails), every border, every
// kernel shape up to 15x15, kernels scaled to saturate u8 both ways, and a half-integer
// kernel for round-half-to-even.
TEST(Filter2d, EveryBackendMatchesRefOnEveryKernelPath) {
  auto rng = make_rng(0xf206);
  const K shapes[] = {{1, 1}, {3, 3}, {5, 5}, {5, 3}, {4, 2}, {2, 7}, {1, 15}, {15, 1}, {15, 15}};
  for (Depth d : {Depth::u8, Depth::f32})
    for (int ch : {1, 2, 3, 4})
      for (Size s : std::vector<Size>{{263, 37}, {1000, 5}, {33, 4}, {7, 9}})
        for (const Border& b : all_borders()) {
          const K k = shapes[rng() % std::size(shapes)];
          Filter2dParams p = random_kernel(k.w, k.h, rng, b);
          if (rng() % 3 == 0)
            for (float& v : p.kernel) v *= 8.0f;
          PIXFLOW_TRACE(testing::Message() << depth_name(d) << "x" << ch << " " << s.w << "x" << s.h
                                           << " " << kernel_params(p));
          ASSERT_TRUE(backends_match_ref("filter2d", kernel_params(p), {d, ch}, s, rng));
        }
  Filter2dParams half;
  half.kw = half.kh = 1;
  half.kernel = {0.5f};
  for (Depth d : {Depth::u8, Depth::f32}) {
    PIXFLOW_TRACE(testing::Message() << depth_name(d) << " kernel=0.5");
    ASSERT_TRUE(backends_match_ref("filter2d", kernel_params(half), {d, 3}, {263, 37}, rng));
  }
}

// The CUDA tile kernels' paths (filter2d.cu): 3x3 and 7x7 on 1-4 channels take the strip tile
// kernel, 5x5 the float-tile kernel, other shapes the generic one. Images span several blocks in
// x (128 or 64 samples; 5x5: 256) and y (8 strips of 1-32 rows; 5x5: 8-32 rows), with partial
// blocks at the right and bottom; constant borders
// with values that saturate either way; kernels scaled so that u8 results saturate both ways;
// a centre-only 0.5 kernel whose every odd sample is a tie (round half to even); a kernel of
// huge taps whose sums overflow to inf and inf - inf = NaN (u8: 0).
TEST(Filter2d, EveryBackendMatchesRefOnManyTiles) {
  auto rng = make_rng(0xf207);
  const std::vector<Border> borders = {
      Border::replicate(),   Border::reflect(),    Border::reflect101(),  Border::wrap(),
      Border::constant(300), Border::constant(-7), Border::constant(77.5)};
  const K shapes[] = {{3, 3}, {5, 5}, {7, 7}, {5, 3}, {1, 1}};
  for (Size s : std::vector<Size>{{517, 70}, {600, 150}, {300, 97}, {129, 33}})
    for (Depth d : {Depth::u8, Depth::f32})
      for (int ch : {1, 2, 3, 4})
        for (const K k : shapes) {
          const Border& b = borders[rng() % borders.size()];
          Filter2dParams p = random_kernel(k.w, k.h, rng, b);
          if (rng() % 3 == 0)
            for (float& v : p.kernel) v *= 8.0f;
          PIXFLOW_TRACE(testing::Message() << depth_name(d) << "x" << ch << " " << s.w << "x" << s.h
                                           << " " << kernel_params(p));
          ASSERT_TRUE(backends_match_ref("filter2d", kernel_params(p), {d, ch}, s, rng));
        }
  // One large image per depth (blocks of 32-row strips, more than one block row per grid row
  // is not reached, but every interior block runs the unguarded groups; 5x5: 4100x1100 takes
  // the float tile's small shape at 1 channel, R = 3, the tall one at 3).
  for (Depth d : {Depth::u8, Depth::f32})
    for (int ch : {1, 3}) {
      const Filter2dParams p = random_kernel(5, 5, rng, borders[rng() % borders.size()]);
      PIXFLOW_TRACE(testing::Message()
                    << depth_name(d) << "x" << ch << " 4100x1100 " << kernel_params(p));
      ASSERT_TRUE(backends_match_ref("filter2d", kernel_params(p), {d, ch}, {4100, 1100}, rng));
    }
  // The 5x5 float-tile kernel (filter2d.cu, try_filter2d_ftile): images whose tall grid (R = 4)
  // is under two waves take the small shape (1 channel: 128-sample blocks; R = 4 at 1920x1080
  // u8x1, 3 at u8x3, 2 at 600x1100, 1 at 600x150 and 517x70), larger ones the tall shape
  // (4100x2000 at 1 channel). Tight images (rows 16-byte aligned) take the vector loads and
  // stores and, in the small shape, the inline path of groups across the image's sides; the ROI
  // views above mostly the border path per group.
  for (Depth d : {Depth::u8, Depth::f32})
    for (int ch : {1, 2, 3, 4})
      for (Size s :
           std::vector<Size>{{1920, 1080}, {600, 150}, {517, 70}, {600, 1100}, {4100, 2000}}) {
        if (s.w == 1920 && ch % 2 == 0) continue;  // 1 and 3 channels suffice at this size
        if ((s.h == 1100 || s.h == 2000) && ch != 1) continue;
        const Filter2dParams p = random_kernel(5, 5, rng, borders[rng() % borders.size()]);
        PIXFLOW_TRACE(testing::Message() << depth_name(d) << "x" << ch << " " << s.w << "x" << s.h
                                         << " tight " << kernel_params(p));
        auto src = random_image(s.w, s.h, {d, ch}, rng, true);
        auto want = make_dst(s.w, s.h, {d, ch}, rng, true);
        filter2d(src, want, p, {Backend::ref});
        for (Backend be : test_backends_for("filter2d")) {
          auto dsrc = to_backend(be, src, rng, true);
          auto got = make_dst_on(be, s.w, s.h, {d, ch}, rng, true);
          filter2d(dsrc, got, p, {be});
          ASSERT_EQ(compare(to_host(got), want), "") << backend_name(be);
        }
      }
  for (int k : {3, 5, 7}) {
    Filter2dParams half;
    half.kw = half.kh = k;
    half.kernel.assign(std::size_t(k * k), 0.0f);
    half.kernel[std::size_t(k * k / 2)] = 0.5f;
    Filter2dParams huge = random_kernel(k, k, rng, Border::reflect101());
    for (float& v : huge.kernel) v = v < 0 ? -3e38f : 3e38f;
    for (const Filter2dParams& p : {half, huge})
      for (int ch : {1, 3}) {
        PIXFLOW_TRACE(testing::Message() << "u8x" << ch << " " << kernel_params(p));
        ASSERT_TRUE(
            backends_match_ref("filter2d", kernel_params(p), {Depth::u8, ch}, {300, 97}, rng));
      }
  }
}

// The tile kernel's schedule (filter2d_strip.hpp) on the CPU: KH accumulator rows rotating
// over a strip of n output rows, each input row converted once and fed to every output row
// that uses it, must give every output the reference's sum — kernel rows in order, columns in
// order, one rounding per multiply and add — bit for bit, for strips of every length (the
// guarded first and last groups and the unguarded middle ones), 1-4 channels, u8 samples
// through the byte-to-float conversion and f32 samples including -0 products.
template <int K, int CN, int C, bool kF32>
void check_strip(std::mt19937_64& rng) {
  constexpr int W = C + (K - 1) * CN;
  std::uniform_real_distribution<float> tap(-2.0f, 2.0f);
  for (int n = 1; n <= 3 * K + 2; ++n) {
    float k[K * K];
    for (float& v : k) v = tap(rng) / float(K);
    if (n % 4 == 0) k[0] = -0.0f;
    // n == 2: zero samples under negative taps, every product -0: only the reference's
    // 0 + first product makes the f32 sum +0.
    const bool zeros = kF32 && n == 2;
    if (zeros)
      for (float& v : k) v = -std::fabs(v);
    // Input rows of W samples; u8 rows are packed four bytes a word.
    const int rows = n + K - 1;
    std::vector<float> in(std::size_t(rows) * W);
    std::vector<std::uint32_t> words(std::size_t(rows) * ((W + 3) / 4));
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < W; ++j) {
        float v;
        if constexpr (kF32) {
          v = (zeros || rng() % 5 == 0) ? 0.0f
                                        : std::uniform_real_distribution<float>(-100, 100)(rng);
        } else {
          const std::uint32_t b = std::uint32_t(rng() % 256);
          words[std::size_t(i) * ((W + 3) / 4) + std::size_t(j / 4)] |= b << (8 * (j % 4));
          v = float(b);
        }
        in[std::size_t(i) * W + std::size_t(j)] = v;
      }
    std::vector<float> got(std::size_t(n) * C, -1.0f);
    std::vector<int> stored(std::size_t(n), 0);
    cuda::f2d::strip<K, K, CN, C, kF32>(
        k, n,
        [&](int i, float* win) {
          ASSERT_TRUE(i >= 0 && i < rows) << "row " << i;
          for (int j = 0; j < W; ++j)
            win[j] = kF32 ? in[std::size_t(i) * W + std::size_t(j)]
                          : cuda::f2d::byte_to_float(
                                words[std::size_t(i) * ((W + 3) / 4) + std::size_t(j / 4)], j % 4);
        },
        [&](int o, const float* sums) {
          ASSERT_TRUE(o >= 0 && o < n) << "output row " << o;
          ++stored[std::size_t(o)];
          for (int c = 0; c < C; ++c) got[std::size_t(o) * C + std::size_t(c)] = sums[c];
        });
    for (int o = 0; o < n; ++o) {
      ASSERT_EQ(stored[std::size_t(o)], 1) << "n=" << n << " output row " << o;
      for (int c = 0; c < C; ++c) {
        float sum = 0.0f;  // the reference's rule
        for (int r = 0; r < K; ++r)
          for (int q = 0; q < K; ++q) {
            const float prod = k[r * K + q] * in[std::size_t(o + r) * W + std::size_t(c + q * CN)];
            sum = sum + prod;
          }
        const float g = got[std::size_t(o) * C + std::size_t(c)];
        std::uint32_t gb, wb;
        std::memcpy(&gb, &g, 4);
        std::memcpy(&wb, &sum, 4);
        // f32 keeps the sign of zero; u8 output cannot see it (the kernel skips the 0 + p).
        if (kF32 || sum != 0.0f)
          ASSERT_EQ(gb, wb) << "K=" << K << " CN=" << CN << " n=" << n << " o=" << o << " c=" << c
                            << ": got " << g << " want " << sum;
        else
          ASSERT_EQ(g, 0.0f);
      }
    }
  }
}

TEST(Filter2d, CudaTileScheduleMatchesRuleOnCpu) {
  auto rng = make_rng(0xf208);
  check_strip<3, 1, 8, false>(rng);
  check_strip<5, 1, 8, false>(rng);
  check_strip<5, 3, 8, false>(rng);
  check_strip<5, 4, 8, true>(rng);
  check_strip<7, 2, 4, false>(rng);
  check_strip<7, 3, 4, true>(rng);
  check_strip<3, 4, 8, true>(rng);
  // Every byte value and lane through the u8 conversion.
  for (std::uint32_t b = 0; b < 256; ++b)
    for (int lane = 0; lane < 4; ++lane) {
      const std::uint32_t word = (b << (8 * lane)) | (0xA5A5A5A5u & ~(0xFFu << (8 * lane)));
      ASSERT_EQ(cuda::f2d::byte_to_float(word, lane), float(b)) << "byte " << b << " lane " << lane;
    }
}

// The CUDA 5x5 float-tile kernel's layout and arithmetic (filter2d_ftile.hpp) on the CPU: the
// loader's groups (4 input samples each, at ftile_group_at / ftile_put_group) must fill every
// float a thread's window reads exactly once (no two groups on one float: the swizzle is a
// bijection inside the row pitch), group m + 32k must sit 128k floats after group m (the
// kernel's loader stores with immediate offsets), the window chunks (ftile_swizzle) must give
// every output sample of every lane and row the reference's sum bit for bit, and the 16-byte
// window loads of the 8 lanes of each quarter warp must fall in 8 different bank groups.
template <int CN, bool kZeroStart, int C = 8>
void check_ftile(std::mt19937_64& rng) {
  constexpr int K = 5, kRows = 4;
  using G = cuda::f2d::FtileGeom<CN, K, C>;
  constexpr int th = cuda::f2d::kFtileTY * kRows + K - 1;
  constexpr int kCols = 4 * G::kGroups;  // logical columns -kSh .. 4 * kGroups - kSh - 1
  SCOPED_TRACE(testing::Message() << "CN=" << CN << " C=" << C << " zero start=" << kZeroStart);
  std::vector<float> in(std::size_t(th) * kCols);
  for (float& v : in)
    v = kZeroStart ? (rng() % 5 == 0 ? 0.0f : std::uniform_real_distribution<float>(-100, 100)(rng))
                   : float(rng() % 256);
  // Rows 10..18 all zero: output rows 10..14 see only zero samples (with the taps <= 0 below,
  // only -0 products, whose f32 sum is +0 by the reference's 0 + first product).
  std::fill(in.begin() + 10 * kCols, in.begin() + 19 * kCols, 0.0f);
  auto sample = [&](int t, int l) { return in[std::size_t(t) * kCols + std::size_t(l + G::kSh)]; };
  // The loader: every group of every row, as the kernel stores them.
  std::vector<float> tile(std::size_t(th) * G::kPitch, NAN);
  std::vector<int> writes(tile.size(), 0);
  for (int t = 0; t < th; ++t)
    for (int m = 0; m < G::kGroups; ++m) {
      int lo, hi;
      cuda::f2d::ftile_group_at<G>(m, lo, hi);
      if (m >= 32) {
        int lo0, hi0;
        cuda::f2d::ftile_group_at<G>(m % 32, lo0, hi0);
        ASSERT_EQ(lo, lo0 + 128 * (m / 32)) << "group " << m;
        ASSERT_EQ(hi, hi0 + 128 * (m / 32)) << "group " << m;
      }
      ASSERT_TRUE(lo >= 0 && lo + 2 <= G::kPitch && hi >= 0 && hi + 2 <= G::kPitch)
          << "group " << m << " at " << lo << ", " << hi;
      float* row = tile.data() + std::size_t(t) * G::kPitch;
      const int l0 = 4 * m - G::kSh;
      cuda::f2d::ftile_put_group<G>(row, lo, hi, sample(t, l0), sample(t, l0 + 1),
                                    sample(t, l0 + 2), sample(t, l0 + 3));
      const int f[4] = {lo, lo + 1, G::kSh == 0 ? lo + 2 : hi, G::kSh == 0 ? lo + 3 : hi + 1};
      for (int i : f) ++writes[std::size_t(t) * G::kPitch + std::size_t(i)];
    }
  for (std::size_t i = 0; i < writes.size(); ++i) ASSERT_LE(writes[i], 1) << "float " << i;
  std::uniform_real_distribution<float> tap(-2.0f, 2.0f);
  float k[K * K];
  for (float& v : k) v = -std::fabs(tap(rng)) / float(K);
  k[0] = -0.0f;
  for (int tx = 0; tx < cuda::f2d::kFtileTX; ++tx)
    for (int o = 0; o < cuda::f2d::kFtileTY * kRows; ++o) {
      float acc[C];
      cuda::f2d::ftile_sums<K, CN, C, kZeroStart>(acc, k, [&](int r, int j, float* out) {
        const int at = cuda::f2d::ftile_swizzle<G>(G::kLead + C * tx + 4 * j);
        ASSERT_TRUE(at >= 0 && at + 4 <= G::kPitch && at % 4 == 0) << "chunk " << j;
        for (int i = 0; i < 4; ++i) {
          const std::size_t a = std::size_t(o + r) * G::kPitch + std::size_t(at + i);
          // Window floats past the last one (the chunk's tail) may be unwritten.
          if (4 * j + i < G::kW) {
            ASSERT_EQ(writes[a], 1) << "tx " << tx << " chunk " << j;
          }
          out[i] = tile[a];
        }
      });
      for (int c = 0; c < C; ++c) {
        float sum = 0.0f;  // the reference's rule
        for (int r = 0; r < K; ++r)
          for (int q = 0; q < K; ++q) sum = sum + k[r * K + q] * sample(o + r, C * tx + c + q * CN);
        std::uint32_t gb, wb;
        std::memcpy(&gb, &acc[c], 4);
        std::memcpy(&wb, &sum, 4);
        if (kZeroStart || sum != 0.0f)
          ASSERT_EQ(gb, wb) << "tx " << tx << " row " << o << " c " << c << ": got " << acc[c]
                            << " want " << sum;
        else
          ASSERT_EQ(acc[c], 0.0f);
      }
    }
  // Bank groups (16 bytes each, 8 per 128-byte bank row) of each window load, per quarter warp.
  for (int j = 0; j < G::kWC; ++j)
    for (int q = 0; q < 4; ++q) {
      unsigned seen = 0;
      for (int l = 8 * q; l < 8 * q + 8; ++l)
        seen |= 1u << ((cuda::f2d::ftile_swizzle<G>(G::kLead + C * l + 4 * j) / 4) % 8);
      ASSERT_EQ(seen, 0xFFu) << "window chunk " << j << " quarter " << q << ": bank conflict";
    }
}

TEST(Filter2d, CudaFloatTileScheduleMatchesRuleOnCpu) {
  auto rng = make_rng(0xf209);
  check_ftile<1, false>(rng);
  check_ftile<2, false>(rng);
  check_ftile<3, false>(rng);
  check_ftile<4, false>(rng);
  check_ftile<1, true>(rng);
  check_ftile<3, true>(rng);
  check_ftile<4, true>(rng);
  // The small shape at one channel: 4 outputs a thread (no swizzle: windows 16 bytes apart).
  check_ftile<1, false, 4>(rng);
  check_ftile<1, true, 4>(rng);
}

// The small shape's loader (filter2d.cu, ftile_load_once) on the CPU: item i + 256j of thread i
// (j < ftile_items) is each (tile row, group) of a tile of th rows exactly once; the groups it
// skips (at or past ftile_x_end) hold no sample that a thread with an output inside the row
// reads (its C sums are all computed, those past the row not stored); and at one channel, in
// a block that does not span the whole row, no thread has two items across the image's sides
// (the loader takes one such item inline and sends any others through its slower path).
template <int CN, int C>
void check_ftile_items() {
  constexpr int K = 5, kMaxRows = cuda::f2d::kFtileTY * 4 + K - 1;
  using G = cuda::f2d::FtileGeom<CN, K, C>;
  constexpr int kItems = cuda::f2d::ftile_items<G>(kMaxRows);
  constexpr int kThreads = cuda::f2d::kFtileThreads;
  SCOPED_TRACE(testing::Message() << "CN=" << CN << " C=" << C);
  for (int rows = 1; rows <= 4; ++rows) {
    const int th = cuda::f2d::kFtileTY * rows + K - 1;
    std::vector<int> seen(std::size_t(th) * G::kGroups, 0);
    for (int i = 0; i < kThreads; ++i)
      for (int j = 0; j < kItems; ++j) {
        const int it = i + kThreads * j;
        if (it >= th * G::kGroups) continue;
        int t, m;
        cuda::f2d::ftile_item<G>(it, t, m);
        ASSERT_TRUE(t >= 0 && t < th && m >= 0 && m < G::kGroups) << "item " << it;
        ++seen[std::size_t(t) * G::kGroups + std::size_t(m)];
      }
    for (std::size_t q = 0; q < seen.size(); ++q) ASSERT_EQ(seen[q], 1) << "th " << th << " " << q;
  }
  for (long long wc = CN; wc <= 3 * G::kBW + 40; wc += CN) {
    for (long long e0 = 0; e0 < wc; e0 += G::kBW) {
      const long long x_end = cuda::f2d::ftile_x_end<G>(e0, wc);
      const long long xg = e0 - G::kHalo - G::kSh;  // group m: samples xg + 4m .. + 3
      for (int tx = 0; tx < cuda::f2d::kFtileTX; ++tx) {
        const long long e = e0 + C * tx;
        if (e >= wc) break;
        for (long long smp = e - G::kHalo; smp < e + C + G::kHalo; ++smp) {
          const long long m = (smp - xg) / 4;
          ASSERT_TRUE(m >= 0 && m < G::kGroups && xg + 4 * m < x_end)
              << "wc " << wc << " e0 " << e0 << " tx " << tx << " sample " << smp;
        }
      }
      if (CN != 1 || (e0 == 0 && wc <= G::kBW)) continue;  // a block spanning both sides: 2
      for (int i = 0; i < kThreads; ++i) {
        int across = 0;
        for (int j = 0; j < kItems; ++j) {
          int t, m;
          if (i + kThreads * j >= kMaxRows * G::kGroups) continue;
          cuda::f2d::ftile_item<G>(i + kThreads * j, t, m);
          const long long g = xg + 4 * m;
          across += g < x_end && (g < 0 || g + 4 > wc) ? 1 : 0;
        }
        ASSERT_LE(across, 1) << "wc " << wc << " e0 " << e0 << " thread " << i;
      }
    }
  }
}

TEST(Filter2d, CudaFloatTileSmallShapeLoaderCoversTheTile) {
  check_ftile_items<1, 4>();
  check_ftile_items<2, 8>();
  check_ftile_items<3, 8>();
  check_ftile_items<4, 8>();
}

TEST(Filter2d, IdentityKernelIsCopyAndDeltaShifts) {
  auto rng = make_rng(0xf204);
  for (Depth d : {Depth::u8, Depth::f32})
    for (const Border& b : all_borders()) {
      PIXFLOW_TRACE(testing::Message() << depth_name(d) << " " << describe(b));
      auto src = random_image(19, 11, {d, 3}, rng, false, 0, 200);
      Filter2dParams p;
      p.kw = 3;
      p.kh = 3;
      p.kernel = {0, 0, 0, 0, 1, 0, 0, 0, 0};
      p.border = b;
      auto got = make_dst(19, 11, {d, 3}, rng);
      filter2d(src, got, p, {Backend::ref});
      ASSERT_EQ(compare(got, src), "");
      p.delta = 5;
      filter2d(src, got, p, {Backend::ref});
      for (std::int64_t y = 0; y < 11; ++y)
        for (std::int64_t x = 0; x < 19; ++x)
          for (int c = 0; c < 3; ++c)
            ASSERT_EQ(sample(got, x, y, c), double(float(sample(src, x, y, c)) + 5.0f));
    }
}

TEST(Filter2d, PipelineParsesKernelStringAsRowMajorRows) {
  auto rng = make_rng(0xf205);
  const Pipeline pl = Pipeline::parse("filter2d kernel=1,2,1;0,0,0;-1,-2,-1 delta=3 border=wrap");
  auto src = random_image(23, 17, {Depth::f32, 1}, rng);
  const Image got = pl.run(src, {Backend::cpu});
  Filter2dParams p;
  p.kw = 3;
  p.kh = 3;
  p.kernel = {1, 2, 1, 0, 0, 0, -1, -2, -1};
  p.delta = 3;
  p.border = Border::wrap();
  auto want = make_dst(23, 17, {Depth::f32, 1}, rng);
  filter2d(src, want, p, {Backend::ref});
  ASSERT_EQ(compare(got, want), "");
}

// Depths, dst, overlap and delta: SchemaBadInput (tests/schema_test.cpp). Here: the kernel.
TEST(Filter2d, BadKernelGivesStatusAndNamesOpAndParameter) {
  Image u8(8, 8, {Depth::u8, 1}), small(8, 7, {Depth::u8, 1});
  Filter2dParams ok;
  ok.kw = ok.kh = 1;
  ok.kernel = {1};
  auto with = [&](auto f) {
    Filter2dParams p = ok;
    f(p);
    return p;
  };
  const BadCase cases[] = {
      {"kw 0",
       [&] { filter2d(u8, small, with([](auto& p) { p.kw = 0; })); },
       Status::invalid_argument,
       {"filter2d: ", "kw must be in [1, 15]"}},
      {"kh 16",
       [&] { filter2d(u8, small, with([](auto& p) { p.kh = 16; })); },
       Status::invalid_argument,
       {"filter2d: ", "kh must be in [1, 15]"}},
      {"size mismatch",
       [&] { filter2d(u8, u8, with([](auto& p) { p.kw = 2; })); },
       Status::invalid_argument,
       {"filter2d: ", "kernel must hold"}},
      {"nan tap",
       [&] { filter2d(u8, u8, with([](auto& p) { p.kernel[0] = NAN; })); },
       Status::invalid_argument,
       {"filter2d: ", "kernel values must be finite"}},
  };
  expect_errors(cases);
  const std::string sixteen = "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1";
  std::string tall = "1";
  for (int i = 0; i < 15; ++i) tall += ";1";
  const std::pair<std::string, std::string> strings[] = {
      {"filter2d", "kernel=ROWS is required"},
      {"filter2d kernel=1,2;3", "rows must have equal length"},
      {"filter2d kernel=1,,2", "value 2 of row 1"},
      {"filter2d kernel=a", "value 1 of row 1"},
      {"filter2d kernel=;", "row 1 is empty"},
      {"filter2d kernel=1,2;", "row 2 is empty"},
      {"filter2d kernel=1,", "value 2 of row 1"},
      {"filter2d kernel=nan", "not a finite number"},
      {"filter2d kernel=1e400", "not a finite number"},
      {"filter2d kernel=1x", "not a finite number"},
      {"filter2d kernel=" + sixteen, "kernel is larger than 15x15"},
      {"filter2d kernel=" + tall, "kernel is larger than 15x15"},
  };
  for (const auto& [text, needle] : strings) {
    SCOPED_TRACE(text);
    expect_error([&] { Pipeline::parse(text); }, Status::invalid_argument, {"filter2d: ", needle});
  }
}

}  // namespace
}  // namespace pixflow::test
