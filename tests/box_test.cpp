#include <algorithm>
#include <array>

#include "tests/common.hpp"

#include "src/backends/cpu/simd/box_div.hpp"
#include "src/backends/cuda/box_warp_u8.hpp"
#include "src/base/numeric.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace pixflow::test {
namespace {

const Depth kDepths[] = {Depth::u8, Depth::u16, Depth::f32};
struct Win {
  int kw, kh;
};
// Odd, even, 1-wide and larger-than-the-image windows.
const Win kWindows[] = {{1, 1}, {3, 3}, {2, 4}, {5, 3}, {1, 7}, {6, 1}, {21, 21}};

// The contract's tolerance vs OpenCV (docs/contract.md §3): integers ±1 when normalised (OpenCV
// scales by a rounded reciprocal), exact for the saturated sum; f32 1e-4 abs + 1e-5 rel.
struct Tol {
  double abs, rel;
};
[[maybe_unused]] Tol cv_tolerance(Depth d, bool normalize) {
  if (d == Depth::f32) return {1e-4, 1e-5};
  return {normalize ? 1.0 : 0.0, 0.0};
}

std::string case_name(Depth d, int ch, Size s, Win k, bool norm, const Border& b) {
  return std::string(depth_name(d)) + "x" + std::to_string(ch) + " " + std::to_string(s.w) + "x" +
         std::to_string(s.h) + " k=" + std::to_string(k.kw) + "x" + std::to_string(k.kh) +
         " normalize=" + std::to_string(norm) + " " + describe(b);
}

#if PIXFLOW_HAVE_OPENCV
// cv::boxFilter with the border type itself, except constant (OpenCV's box filter always
// uses 0) and any type it refuses: those pad with copyMakeBorder, filter, crop.
cv::Mat cv_box(const cv::Mat& src, Win k, bool norm, const Border& b) {
  cv::Mat out;
  if (b.type != BorderType::constant) {
    try {
      cv::boxFilter(src, out, -1, cv::Size(k.kw, k.kh), cv::Point(-1, -1), norm, cv_border(b));
      return out;
    } catch (const cv::Exception&) {
    }
  }
  const int ax = k.kw / 2, ay = k.kh / 2;
  cv::Mat padded;
  cv::copyMakeBorder(src, padded, ay, k.kh - 1 - ay, ax, k.kw - 1 - ax, cv_border(b),
                     cv::Scalar::all(b.value));
  cv::boxFilter(padded, out, -1, cv::Size(k.kw, k.kh), cv::Point(-1, -1), norm,
                cv::BORDER_REPLICATE);
  return out(cv::Rect(ax, ay, src.cols, src.rows)).clone();
}

TEST(Box, RefMatchesOpenCVBoxFilterWithinContractTolerance) {
  auto rng = make_rng(0xb0c1);
  for (Depth d : kDepths)
    for (int ch : {1, 3, 4})
      for (Size s : awkward_sizes())
        for (Win k : kWindows)
          for (bool norm : {true, false})
            for (const Border& b : all_borders()) {
              PIXFLOW_TRACE(case_name(d, ch, s, k, norm, b));
              auto src = random_image(s.w, s.h, {d, ch}, rng);
              auto got = make_dst(s.w, s.h, {d, ch}, rng);
              box(src, got, {k.kw, k.kh, norm, b}, {Backend::ref});
              cv::Mat want = cv_box(to_mat(src), k, norm, b);
              const Tol t = cv_tolerance(d, norm);
              ASSERT_EQ(compare(got, view_of(want), t.abs, t.rel), "");
            }
}

TEST(Box, RefMatchesOpenCVBlurOnFullHd) {
  auto rng = make_rng(0xb0c2);
  for (Depth d : kDepths) {
    PIXFLOW_TRACE(depth_name(d));
    auto src = random_image(1920, 1080, {d, 1}, rng);
    auto got = make_dst(1920, 1080, {d, 1}, rng);
    box(src, got, {5, 5, true, Border::reflect101()}, {Backend::ref});
    cv::Mat want;
    cv::blur(to_mat(src), want, cv::Size(5, 5));
    const Tol t = cv_tolerance(d, true);
    ASSERT_EQ(compare(got, view_of(want), t.abs, t.rel), "");
  }
}
#else
TEST(Box, RefMatchesOpenCVBoxFilterWithinContractTolerance) {
  GTEST_SKIP() << "built without OpenCV (C++)";
}
TEST(Box, RefMatchesOpenCVBlurOnFullHd) {
  GTEST_SKIP() << "built without OpenCV (C++)";
}
#endif

TEST(Box, RefIntegerRuleIsExactSumRoundedHalfToEven) {
  // Brute force of the documented rule on a tiny image with ties: a 2x1 window over
  // (1, 2) sums to 3, 3/2 = 1.5 -> 2; over (2, 3) 5/2 = 2.5 -> 2 (half to even).
  Image src(3, 1, {Depth::u8, 1}), dst(3, 1, {Depth::u8, 1});
  src.row<std::uint8_t>(0)[0] = 1;
  src.row<std::uint8_t>(0)[1] = 2;
  src.row<std::uint8_t>(0)[2] = 3;
  box(src, dst, {2, 1, true, Border::replicate()}, {Backend::ref});
  // x=0: window (x-1, x) = (1, 1) -> 1; x=1: (1, 2) -> 1.5 -> 2; x=2: (2, 3) -> 2.5 -> 2.
  EXPECT_EQ(dst.row<std::uint8_t>(0)[0], 1);
  EXPECT_EQ(dst.row<std::uint8_t>(0)[1], 2);
  EXPECT_EQ(dst.row<std::uint8_t>(0)[2], 2);
  box(src, dst, {255, 1, false, Border::replicate()}, {Backend::ref});  // saturated sum
  EXPECT_EQ(dst.row<std::uint8_t>(0)[1], 255);
}

TEST(Box, SeparableSumEqualsTwoDimensionalSum) {
  // Unnormalised u16 sums of small values do not saturate, so the 2-D window sum equals a
  // row pass then a column pass (non-constant borders: a constant border's value would
  // enter the second pass unsummed).
  auto rng = make_rng(0xb0c3);
  for (const Border& b :
       {Border::replicate(), Border::reflect(), Border::reflect101(), Border::wrap()})
    for (Win k : {Win{3, 3}, Win{2, 5}, Win{7, 4}}) {
      PIXFLOW_TRACE(case_name(Depth::u16, 3, {21, 16}, k, false, b));
      auto src = random_image(21, 16, {Depth::u16, 3}, rng, false, 0, 100);
      auto got = make_dst(21, 16, {Depth::u16, 3}, rng);
      box(src, got, {k.kw, k.kh, false, b}, {Backend::ref});
      Image rows(21, 16, {Depth::u16, 3}), want(21, 16, {Depth::u16, 3});
      box(src, rows, {k.kw, 1, false, b}, {Backend::ref});
      box(rows, want, {1, k.kh, false, b}, {Backend::ref});
      ASSERT_EQ(compare(got, want), "");
    }
}

TEST(Box, WindowOneIsCopyAndConstantImageStaysConstant) {
  auto rng = make_rng(0xb0c4);
  for (Depth d : kDepths)
    for (const Border& b : all_borders()) {
      PIXFLOW_TRACE(std::string(depth_name(d)) + " " + describe(b));
      auto src = random_image(13, 9, {d, 3}, rng);
      auto got = make_dst(13, 9, {d, 3}, rng);
      box(src, got, {1, 1, true, b}, {Backend::ref});
      ASSERT_EQ(compare(got, src), "");
      fill_constant(src, 77);  // the constant border's value too
      box(src, got, {5, 4, true, b}, {Backend::ref});
      ASSERT_EQ(compare(got, src), "");
    }
}

// The division without a division that the CUDA box kernels use (detail::RecipU32) is the
// rule's div_round_half_even: every sum a u8 window of up to 700 samples can take, and for
// larger n (up to 65025 = 255 x 255) the sums around every tie and multiple of n, random
// sums and the largest 32-bit values.
TEST(Box, ReciprocalDivisionIsTheRoundingRule) {
  auto check = [](std::uint32_t s, std::uint32_t n, const detail::RecipU32& r) {
    const auto want = std::uint32_t(detail::div_round_half_even(std::int64_t(s), n));
    if (r(s) != want) {
      ADD_FAILURE() << s << " / " << n << ": got " << r(s) << ", want " << want;
      return false;
    }
    return true;
  };
  for (std::uint32_t n = 1; n <= 700; ++n) {
    const detail::RecipU32 r(n);
    for (std::uint32_t s = 0; s <= 255 * n; ++s)
      if (!check(s, n, r)) return;
  }
  auto rng = make_rng(0xd1f);
  std::uniform_int_distribution<std::uint32_t> any;
  for (int t = 0; t < 3000; ++t) {
    const std::uint32_t n = t < 2 ? 65025u - std::uint32_t(t) : 701 + any(rng) % 64325;
    const detail::RecipU32 r(n);
    for (std::uint32_t k : {0u, 1u, 2u, 3u, 127u, 128u, 254u, 255u, 65534u, 65535u}) {
      const std::uint64_t base = std::uint64_t(k) * n;
      const std::int64_t half = n / 2;
      for (std::int64_t d : {std::int64_t(-1), std::int64_t(0), std::int64_t(1), half - 1, half,
                             half + 1, std::int64_t(n) - 1})
        if (std::int64_t(base) + d >= 0 && std::uint64_t(std::int64_t(base) + d) <= 0xffffffffu &&
            !check(std::uint32_t(std::int64_t(base) + d), n, r))
          return;
    }
    for (int i = 0; i < 100; ++i)
      if (!check(any(rng), n, r)) return;
    if (!check(0xffffffffu, n, r) || !check(0xfffffffeu, n, r)) return;
  }
}

// The CUDA u8 box kernel's float division (detail::RecipOddU8, odd n < 32768) is the rule's
// div_round_half_even: every sum of every odd window up to 1001 samples, and every sum of
// the largest odd n it takes and of odd n around powers of two.
TEST(Box, FloatReciprocalDivisionOfOddWindowsIsTheRoundingRule) {
  auto check_n = [](std::uint32_t n) {
    ASSERT_TRUE(detail::RecipOddU8::applies(n)) << n;
    const detail::RecipOddU8 r(n);
    for (std::uint32_t s = 0; s <= 255 * n; ++s) {
      const auto want = std::uint32_t(detail::div_round_half_even(std::int64_t(s), n));
      ASSERT_EQ(r(s), want) << s << " / " << n;
    }
  };
  for (std::uint32_t n = 1; n <= 1001; n += 2) check_n(n);
  for (std::uint32_t n : {32767u, 32765u, 16383u, 16385u, 8191u, 8193u, 4095u, 4097u, 2047u, 2049u,
                          961u * 3u, 255u * 127u})
    check_n(n);
  EXPECT_FALSE(detail::RecipOddU8::applies(32769u));
  EXPECT_FALSE(detail::RecipOddU8::applies(64u));
}

// Windows and sizes beyond the schema's examples (tests/schema_test.cpp sweeps those) and
// the CPU backend's row bands at 1920x1080.
TEST(Box, EveryBackendMatchesRef) {
  auto rng = make_rng(0xb0c5);
  for (Depth d : kDepths)
    for (int ch : {1, 2, 3, 4})
      for (Size s : std::vector<Size>{{1, 1}, {1, 9}, {9, 1}, {17, 13}, {64, 3}})
        for (Win k : {Win{3, 3}, Win{2, 4}, Win{1, 7}, Win{21, 21}})
          for (bool norm : {true, false})
            for (const Border& b : all_borders())
              ASSERT_TRUE(backends_match_ref(
                  "box",
                  "kw=" + std::to_string(k.kw) + " kh=" + std::to_string(k.kh) +
                      " normalize=" + std::to_string(norm) + " " + border_params(b),
                  {d, ch}, s, rng));
  ASSERT_TRUE(
      backends_match_ref("box", "k=5 border=reflect101", {Depth::u8, 3}, {1920, 1080}, rng));
}

// The SIMD kernel's paths (src/backends/cpu/simd/box.cpp): running column sums over bands,
// the binary decomposition of kw (powers of two, all bits set, one bit), the exact
// round-half-even division and the saturated sum, 16-bit doubling stopped early with 32-bit
// terms (u8 31x31: 3 terms + low bits; 32x31: 4 terms, no low bits; 17x31: 2; 255x3),
// normalised u8 over 257 samples in 16-bit lanes (box_wrap_plan: 31x31 and 23x31 subtract
// one column sum, 45x10 three with W_16, 17x31 and 7x100 add one, 3x200 sums W_1),
// every border (constant with values inside and outside the depth's range), rows around
// the vector widths.
TEST(Box, EveryBackendMatchesRefLargeWindows) {
  auto rng = make_rng(0xb0c7);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(0));
  borders.push_back(Border::constant(-3));
  borders.push_back(Border::constant(300));
  const std::vector<Size> sizes = {{263, 37}, {1000, 5}, {31, 97}, {70, 3}};
  const Win wins[] = {{15, 15}, {31, 31}, {9, 9},   {31, 7},  {4, 16},  {2, 2},   {255, 3},
                      {1, 33},  {32, 31}, {17, 31}, {23, 31}, {45, 10}, {7, 100}, {3, 200}};
  for (Depth d : kDepths)
    for (int ch : {1, 3})
      for (Size s : sizes)
        for (Win k : wins)
          for (bool norm : {true, false})
            for (const Border& b : borders)
              ASSERT_TRUE(backends_match_ref(
                  "box",
                  "kw=" + std::to_string(k.kw) + " kh=" + std::to_string(k.kh) +
                      " normalize=" + std::to_string(norm) + " " + border_params(b),
                  {d, ch}, s, rng));
}

// Every image x window x normalize on u8, the borders taken in turn: each case through
// every backend against the reference.
template <std::size_t N>
void sweep_u8(const std::vector<std::pair<Size, int>>& images, const Win (&wins)[N],
              const std::vector<Border>& borders, std::mt19937_64& rng) {
  std::size_t turn = 0;
  for (const auto& [s, ch] : images)
    for (Win k : wins)
      for (bool norm : {true, false})
        ASSERT_TRUE(backends_match_ref(
            "box",
            "kw=" + std::to_string(k.kw) + " kh=" + std::to_string(k.kh) + " normalize=" +
                std::to_string(norm) + " " + border_params(borders[turn++ % borders.size()]),
            {Depth::u8, ch}, s, rng));
}

// Images of many tiles for the CUDA u8 kernel (src/backends/cuda/separable.cu, box_u8_kernel:
// 256-sample tiles of 32 or 64 rows, 16-byte loads inside the image, per-sample borders at
// its edges, running column sums split in row segments, runs of 32 outputs per thread),
// 1-4 channels, windows narrower and wider than a tile's halo, even and one-sided; the
// borders taken in turn. The last image has enough tiles for 64-row tiles.
TEST(Box, EveryBackendMatchesRefOnManyTiles) {
  auto rng = make_rng(0xb0c9);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  const std::vector<std::pair<Size, int>> images = {
      {{600, 150}, 1}, {{517, 70}, 3}, {{300, 97}, 4}, {{389, 40}, 2}};
  const Win wins[] = {{5, 5}, {9, 9}, {31, 31}, {4, 16}, {31, 7}, {1, 7}, {7, 1}, {3, 3}};
  ASSERT_NO_FATAL_FAILURE(sweep_u8(images, wins, borders, rng));
  for (const char* params : {"kw=9 kh=9 border=reflect101", "kw=31 kh=7 border=constant value=7"})
    ASSERT_TRUE(backends_match_ref("box", params, {Depth::u8, 1}, {4100, 1100}, rng));
  // The packed 3x3 kernel in both block shapes (launch.cuh, tall_blocks_fill): the streaming
  // one at 4100x1100 (and every size above), the tall one at 4100x2200 (33 x 35 blocks).
  for (Size s : std::vector<Size>{{4100, 1100}, {4100, 2200}})
    for (const char* params :
         {"k=3 border=reflect101", "k=3 normalize=0 border=constant value=-7", "k=3 border=wrap"})
      ASSERT_TRUE(backends_match_ref("box", params, {Depth::u8, 1}, s, rng));
}

// Images of many strips and segments for every u8 kernel (the warp-strip kernel on u8 x 1 with
// 8-byte aligned rows, the byte-tile kernel on the rest, the packed 3x3): 4100 x 1100 and
// 8200 x 300 (19 / 37 warp strips of 4-row segments), 1003 x 1501 (5 strips, 4-row segments,
// odd sizes), u8x2..4 and u8x3 4100 wide; every border in turn, mean and sum, odd, even,
// one-sided and kw != kh windows (9x31, 1x31), windows past the warp kernel (17x100: kh > 31
// is fine, 255 wide u8x4: the byte-tile fallback). The random ROI offsets of
// backends_match_ref send about one case in nine through the warp kernel;
// EveryBackendMatchesRefOnManyWarpStrips picks the offsets.
TEST(Box, EveryBackendMatchesRefOnManyStrips) {
  auto rng = make_rng(0xb0cc);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  const std::vector<std::pair<Size, int>> images = {
      {{517, 70}, 1},    {{600, 150}, 3},  {{300, 97}, 4},   {{2100, 300}, 2},
      {{4100, 1100}, 1}, {{4100, 200}, 3}, {{8200, 300}, 1}, {{1003, 1501}, 1}};
  const Win wins[] = {{3, 3}, {9, 9},    {31, 31}, {4, 16}, {31, 7},
                      {2, 2}, {17, 100}, {9, 31},  {1, 31}};
  ASSERT_NO_FATAL_FAILURE(sweep_u8(images, wins, borders, rng));
  ASSERT_TRUE(
      backends_match_ref("box", "kw=255 kh=5 border=reflect", {Depth::u8, 4}, {700, 40}, rng));
}

// The CUDA u8 x 1 warp-strip kernel (separable.cu box_warp_u8_kernel; its lane arithmetic is
// src/backends/cuda/box_warp_u8.hpp) run on the CPU: every warp (strip) and segment of the
// launch plan, its 32 lanes in lockstep a row at a time (seed of kh rows, the kAhead ring of
// loads, the 16-bit column sums, the scan of the lanes' totals, the window lookups in the other
// lanes' prefixes, the finish, the clipped stores), compared with the reference on every sample.
// Strips and segments (the GPU's plan and a one-SM plan: long segments), every odd width the
// kernel takes, kh from 1 to kMaxKh = 255 (the 16-bit column sums at their limit with 255s), mean
// and sum, every border (constant 300 and -7 too), widths around whole strips, 1x1.
namespace bw = pixflow::cuda::box_warp;

// paths counts the segments of a warp by the kernel's path: inside and all direct, pick inside,
// pick on border rows, border rows all direct, gather (BorderRows with gathering lanes).
using WarpPaths = std::array<long long, 5>;
template <int KW>
void emulate_box_warp(const ConstImageView& src, const ImageView& dst, const BoxParams& bp,
                      const bw::Plan& pl, WarpPaths& paths) {
  const bw::Params p = bw::params_of(bp.kw, bp.kh, bp.border, pl);
  const bw::Img si{const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>(src.data())),
                   src.stride(), int(src.width()), int(src.height())};
  const bw::Img di{reinterpret_cast<unsigned char*>(dst.data()), dst.stride(), int(dst.width()),
                   int(dst.height())};
  const int ay = p.kh / 2;
  struct Lane {
    int xb;
    bool direct, out;
    int sources[bw::kLaneCols];
    bw::Pick pk;
    bool pick_ok;
    bw::Cols c, c0;
    bw::Row8 qi[bw::kAhead], qo[bw::kAhead];
    bw::u32 q[bw::kLaneCols];
  };
  std::vector<Lane> ln(bw::kLanes);
  for (long long strip = 0; strip < p.strips; ++strip)
    for (long long sg = 0; sg < p.segs; ++sg) {
      const long long ys = sg * p.seg_rows, ye = std::min<long long>(di.h, ys + p.seg_rows);
      const int n = int(ye - ys);
      for (int l = 0; l < bw::kLanes; ++l) {
        Lane& a = ln[std::size_t(l)];
        a.xb = bw::lane_col(int(strip), l, KW);
        a.direct = bw::lane_direct(a.xb, si.w);
        std::fill(std::begin(a.sources), std::end(a.sources), 1 << 30);  // poison
        if (!a.direct) bw::lane_sources(a.xb, si.w, p.border, a.sources);
        a.pick_ok = bw::plan_pick(a.xb, l, si.w, p.border, KW, a.pk);
        a.out = l >= bw::first_out_lane(KW) && l < bw::end_out_lane(KW) && a.xb < di.w;
      }
      // The horizontal chain of output row y from every lane's column sums (Lane::*cs): the
      // lane-local prefixes, the other lanes' values as the shuffles read them, the finish.
      auto horizontal = [&](long long y, bw::Cols Lane::*cs) {
        for (Lane& a : ln) bw::local_prefix(a.*cs, a.q);
        std::vector<bw::Row8> res(bw::kLanes);
        for (int l = 0; l < bw::kLanes; ++l) {
          bw::u32 s[bw::kLaneCols];
          bw::window_sums<KW>(
              [&](int dl, int k2) -> bw::u32 {
                const int from = l + dl;
                // The shuffles return the lane's own value off the warp's ends.
                return ln[std::size_t(from < 0 || from >= bw::kLanes ? l : from)].q[k2];
              },
              s);
          res[std::size_t(l)] =
              bp.normalize ? bw::finish<false>(s, p.rcp) : bw::finish<true>(s, p.rcp);
        }
        for (int l = 0; l < bw::kLanes; ++l)
          if (ln[std::size_t(l)].out)
            bw::store8(di.data + y * di.stride + ln[std::size_t(l)].xb, ln[std::size_t(l)].xb, di.w,
                       res[std::size_t(l)]);
      };
      // The kernel's row cursors: seed and entering rows (`in`), leaving rows (`rows`).
      const long long y0 = ys - ay - 1;
      const bool inside = bw::segment_inside(ys, n, p.kh, si.h);
      auto run = [&](auto make) {
        using Cursor = decltype(make(ln[0]));
        std::vector<Cursor> in, rows;
        auto load = [&](const Lane& a, const Cursor& cur) {
          if constexpr (std::is_same_v<Cursor, bw::InsideRows<true>>) {  // rows inside
            const long long row = (cur.p - a.xb - si.data) / si.stride;
            EXPECT_TRUE(row >= 0 && row < si.h) << row;
            if (row < 0 || row >= si.h) return bw::Row8{0, 0};
          }
          if constexpr (std::is_same_v<Cursor, bw::PickRows<true>>) {  // rows inside, own word
            const long long row = (cur.p - a.pk.off - si.data) / si.stride;
            EXPECT_TRUE(row >= 0 && row < si.h) << row;
            if (row < 0 || row >= si.h) return bw::Row8{0, 0};
          }
          if constexpr (Cursor::kPick) {  // the own word: whole, inside the row
            if (a.pk.ld) {
              EXPECT_TRUE(a.pk.off >= 0 && a.pk.off + bw::kLaneCols <= si.w && a.pk.off % 8 == 0)
                  << a.pk.off;
            }
          }
          return cur.load(a.xb, a.direct, a.sources, p.value);
        };
        // The rows as used: on the pick path each lane's select from its own word and its
        // partner's (the kernel's shuffles) of the same row; raw(l) is lane l's load.
        auto use_all = [&](auto raw) {
          std::vector<bw::Row8> u(bw::kLanes);
          for (int l = 0; l < bw::kLanes; ++l) {
            const Lane& a = ln[std::size_t(l)];
            if constexpr (Cursor::kPick) {
              EXPECT_TRUE(a.pk.partner >= 0 && a.pk.partner < bw::kLanes);
              u[std::size_t(l)] = bw::select8(raw(l), raw(a.pk.partner), a.pk);
            } else {
              u[std::size_t(l)] = raw(l);
            }
          }
          return u;
        };
        // The kernel's refill: a load only of rows the segment reads; the cursor moves on.
        auto refill = [&](const Lane& a, bw::Row8& q, Cursor& cur, bool want) {
          if (want) q = load(a, cur);
          cur.next();
        };
        for (Lane& a : ln) {
          rows.push_back(make(a));
          in.push_back(rows.back());
          a.c = bw::Cols{0, 0, 0, 0};
        }
        for (int i = 0; i < p.kh; ++i) {
          std::vector<bw::Row8> raw(bw::kLanes);
          for (int l = 0; l < bw::kLanes; ++l) {
            raw[std::size_t(l)] = load(ln[std::size_t(l)], in[std::size_t(l)]);
            in[std::size_t(l)].next();
          }
          const auto u = use_all([&](int l) { return raw[std::size_t(l)]; });
          for (int l = 0; l < bw::kLanes; ++l) bw::enter(ln[std::size_t(l)].c, u[std::size_t(l)]);
        }
        for (int k = 0; k < bw::kAhead; ++k)
          for (std::size_t l = 0; l < ln.size(); ++l) {
            refill(ln[l], ln[l].qi[k], in[l], k < n);
            refill(ln[l], ln[l].qo[k], rows[l], k < n);
          }
        auto slot = [&](bw::Row8(Lane::*ring)[bw::kAhead], int k) {
          return use_all([&, ring, k](int l) { return (ln[std::size_t(l)].*ring)[k]; });
        };
        long long y = ys;
        // Rows rb + k, rb + k + 1 (ring slots k, k + 1), as the kernel's pair.
        auto pair = [&](int rb, int k) {
          const auto i0 = slot(&Lane::qi, k), o0 = slot(&Lane::qo, k);
          const auto i1 = slot(&Lane::qi, k + 1), o1 = slot(&Lane::qo, k + 1);
          for (std::size_t l = 0; l < ln.size(); ++l) {
            Lane& a = ln[l];
            a.c0 = a.c;
            bw::step(a.c0, i0[l], o0[l]);
            a.c = a.c0;
            bw::step(a.c, i1[l], o1[l]);
            refill(a, a.qi[k], in[l], rb + k + bw::kAhead < n);
            refill(a, a.qo[k], rows[l], rb + k + bw::kAhead < n);
            refill(a, a.qi[k + 1], in[l], rb + k + 1 + bw::kAhead < n);
            refill(a, a.qo[k + 1], rows[l], rb + k + 1 + bw::kAhead < n);
          }
          horizontal(y, &Lane::c0);
          horizontal(y + 1, &Lane::c);
          y += 2;
        };
        auto single = [&](int k) {
          const auto i0 = slot(&Lane::qi, k), o0 = slot(&Lane::qo, k);
          for (std::size_t l = 0; l < ln.size(); ++l) bw::step(ln[l].c, i0[l], o0[l]);
          horizontal(y, &Lane::c);
        };
        int rb = 0;
        for (; rb + bw::kAhead <= n; rb += bw::kAhead) {
          pair(rb, 0);
          pair(rb, 2);
        }
        if (rb + 2 <= n) pair(rb, 0);
        if (n - rb == 1) single(0);
        if (n - rb == 3) single(2);
      };
      const bool all_direct =
          std::all_of(ln.begin(), ln.end(), [](const Lane& a) { return a.direct; });
      const bool pick = std::all_of(ln.begin(), ln.end(), [](const Lane& a) { return a.pick_ok; });
      const bw::u32 cw = p.value * 0x01010101u;
      ++paths[inside && all_direct  ? 0
              : inside && pick      ? 1
              : pick && !all_direct ? 2
              : all_direct          ? 3
                                    : 4];
      if (inside && all_direct)
        run([&](const Lane& a) {
          return bw::InsideRows<true>{si.data + y0 * si.stride + a.xb, si.stride};
        });
      else if (inside && pick)
        run([&](const Lane& a) {
          return bw::PickRows<true>{si.data + y0 * si.stride + a.pk.off, si.stride, a.pk.ld, cw};
        });
      else if (pick && !all_direct)
        run([&](const Lane& a) {
          return bw::PickRows<false>{&si, y0, p.border, a.pk.off, a.pk.ld, cw};
        });
      else
        run([&](const Lane&) { return bw::BorderRows{&si, y0, p.border}; });
    }
}

template <int KW = bw::kMinKw>
void emulate_box_warp_kw(const ConstImageView& src, const ImageView& dst, const BoxParams& bp,
                         const bw::Plan& pl, WarpPaths& paths) {
  if constexpr (KW <= bw::kMaxKw) {
    if (bp.kw != KW) return emulate_box_warp_kw<KW + 2>(src, dst, bp, pl, paths);
    emulate_box_warp<KW>(src, dst, bp, pl, paths);
  }
}

TEST(Box, WarpKernelEmulationMatchesRef) {
  auto rng = make_rng(0xb0cd);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  // Heights for every remainder of the pair loop (segment rows % 4 = 0..3 in one-segment and
  // 16-row plans: 70, 37, 19, 45, 3, 2, 22 = 16 + 6, 1) and 2-row segments.
  const std::vector<Size> sizes = {{1, 1},    {2, 3},    {517, 70}, {240, 37},
                                   {241, 19}, {700, 45}, {300, 2},  {260, 22}};
  const Win wins[] = {{9, 9},  {31, 31}, {5, 5},  {9, 31},  {31, 9},  {7, 1},
                      {5, 40}, {17, 3},  {25, 7}, {11, 13}, {29, 255}};
  std::size_t turn = 0;
  WarpPaths paths{};
  for (Size sz : sizes)
    for (Win k : wins)
      for (bool norm : {true, false}) {
        if (!bw::takes(k.kw, k.kh, norm)) continue;
        const Border b = borders[turn++ % borders.size()];
        // The GPU's segment rule (132 SMs) and one SM (one segment a strip, or few).
        for (long long sms : {132LL, 1LL}) {
          const bw::Plan pl = bw::plan(sz.w, sz.h, k.kw, sms);
          PIXFLOW_TRACE(case_name(Depth::u8, 1, sz, k, norm, b) + " sms=" + std::to_string(sms));
          // (The host body is alignment-agnostic: tight and padded views.)
          auto src = random_image(sz.w, sz.h, {Depth::u8, 1}, rng, turn % 2 == 0);
          if (turn % 5 == 0) fill_constant(src, 255);  // the largest column sums
          auto want = make_dst(sz.w, sz.h, {Depth::u8, 1}, rng);
          auto got = make_dst(sz.w, sz.h, {Depth::u8, 1}, rng, true);
          const BoxParams bp{k.kw, k.kh, norm, b};
          box(src, want, bp, {Backend::ref});
          emulate_box_warp_kw(src, got, bp, pl, paths);
          ASSERT_EQ(compare(got, want), "");
        }
      }
  // The edge lanes (plan_pick, select8; else the gather) under every border: widths that are
  // multiples of 8 (every edge warp picks: the 8192 and 1920 of the bench), of 4 but not 8, odd
  // ones and tiny ones (the row's partial last word, images of a word or less: the gather),
  // one strip and several (256: the last strip's lanes all past the row), every window width
  // class (pad 8 or 16, right halo 1 or 2 lanes), short segments (border rows) and long ones.
  const int widths[] = {1,  3,  7,  8,   9,   12,  16,  20,  24,  31, 32,
                        40, 44, 64, 100, 232, 248, 256, 257, 500, 512};
  const Win edge_wins[] = {{5, 3}, {9, 9}, {15, 5}, {17, 7}, {23, 1}, {31, 31}};
  for (int w : widths)
    for (const Border& b : borders)
      for (Win k : edge_wins) {
        const Size sz{w, k.kw == 31 ? 40 : 21};
        const bw::Plan pl = bw::plan(sz.w, sz.h, k.kw, 132);
        PIXFLOW_TRACE(case_name(Depth::u8, 1, sz, k, true, b));
        WarpPaths wp{};
        auto src = random_image(sz.w, sz.h, {Depth::u8, 1}, rng, w % 2 == 0);
        auto want = make_dst(sz.w, sz.h, {Depth::u8, 1}, rng);
        auto got = make_dst(sz.w, sz.h, {Depth::u8, 1}, rng, true);
        const BoxParams bp{k.kw, k.kh, true, b};
        box(src, want, bp, {Backend::ref});
        emulate_box_warp_kw(src, got, bp, pl, wp);
        ASSERT_EQ(compare(got, want), "");
        if (w % 8 == 0) {
          EXPECT_EQ(wp[4], 0) << "a warp gathers at width " << w;
          EXPECT_GT(wp[1] + wp[2], 0) << "no warp picks at width " << w;
        }
        if (w % 8 != 0 && w > 8) {
          EXPECT_GT(wp[4], 0) << "no warp gathers at width " << w;
        }
        for (std::size_t i = 0; i < paths.size(); ++i) paths[i] += wp[i];
      }
  // Every path of the kernel ran: inside direct, pick inside, pick on border rows, border rows
  // direct, gather.
  for (std::size_t i = 0; i < paths.size(); ++i) EXPECT_GT(paths[i], 0) << "path " << i;
  // The plan at 8192^2: 31 wide = 37 strips of 224 outputs (10 blocks) x 256 segments of
  // kMaxSegRows = 32 rows (one wave, 7 blocks a SM, would take 92 of 90 rows); 9 wide = 35
  // strips of 240 (9 blocks) x 256 of 32 (one wave: 102 of 81). Every plan with segments
  // between the bounds fits one wave of whole blocks (session 14's counted warps and launched a
  // second wave).
  EXPECT_EQ(bw::outs_of(31), 224);
  EXPECT_EQ(bw::outs_of(9), 240);
  const bw::Plan p31 = bw::plan(8192, 8192, 31, 132);
  EXPECT_EQ(p31.strips, 37);
  EXPECT_EQ(p31.seg_rows, bw::kMaxSegRows);
  EXPECT_EQ(p31.segs, 256);
  const bw::Plan p9 = bw::plan(8192, 8192, 9, 132);
  EXPECT_EQ(p9.strips, 35);
  EXPECT_EQ(p9.seg_rows, bw::kMaxSegRows);
  EXPECT_EQ(p9.segs, 256);
  for (Size sz : std::vector<Size>{{8192, 8192}, {1920, 1080}, {4096, 4096}, {8200, 300}})
    for (int kw = bw::kMinKw; kw <= bw::kMaxKw; kw += 2) {
      const bw::Plan pl = bw::plan(sz.w, sz.h, kw, 132);
      const long long blocks = (pl.strips + bw::kWarps - 1) / bw::kWarps * pl.segs;
      if (pl.seg_rows > bw::kMinSegRows && pl.seg_rows < bw::kMaxSegRows) {
        EXPECT_LE(blocks, 132 * bw::kMinBlocks) << sz.w << " " << kw;
      }
      EXPECT_LE(pl.seg_rows, bw::kMaxSegRows);
      EXPECT_GE(pl.segs * pl.seg_rows, sz.h);
    }
  EXPECT_FALSE(bw::takes(3, 3, true));
  EXPECT_FALSE(bw::takes(9, 8, true));
  EXPECT_TRUE(bw::takes(9, 8, false));
  EXPECT_FALSE(bw::takes(33, 3, false));
  EXPECT_FALSE(bw::takes(9, 257, false));
}

// The warp-strip kernel on the GPU (host emulation above): sources at byte offsets 0, 16 (the
// kernel: 8-byte aligned rows), 4 and 1 (the byte-tile fallback) of 64-byte aligned rows,
// destinations at 0 and 8 (kernel) or 3 (fallback); widths of 1 to 37 strips (31 wide: 224
// outputs a strip) and heights of one to many segments (8200 x 300: 37 strips x 4-row
// segments; 128 x 40000: one strip x 44-row segments, the long chains of large images), odd
// sizes, every border (constant 300 and -7 too), mean and sum, kw != kh, windows at the
// kernel's limits (5, 31, kh 255) and past them (33, 3, even n normalised: the fallback).
TEST(Box, EveryBackendMatchesRefOnManyWarpStrips) {
  auto rng = make_rng(0xb0ce);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  const std::vector<Size> sizes = {{1, 1},     {7, 5},      {241, 19},    {517, 70},
                                   {1000, 33}, {8200, 300}, {128, 40000}, {2003, 517}};
  const Win wins[] = {{9, 9}, {31, 31},  {9, 31}, {31, 9}, {5, 5}, {1, 31},
                      {7, 1}, {17, 255}, {25, 4}, {33, 3}, {3, 3}, {11, 13}};
  std::size_t turn = 0;
  for (Backend be : test_backends_for("box"))
    for (Size s : sizes)
      for (Win k : wins) {
        const bool big = s.w * s.h > 500000;
        for (bool norm : {true, false}) {
          if (big && turn % 3 != 0) {  // a third of the big cases: the sweep stays short
            ++turn;
            continue;
          }
          const Border b = borders[turn % borders.size()];
          const std::int64_t so = std::array<std::int64_t, 4>{0, 16, 4, 1}[turn % 4];
          const std::int64_t dof = std::array<std::int64_t, 3>{0, 8, 3}[turn % 3];
          ++turn;
          PIXFLOW_TRACE(testing::Message()
                        << backend_name(be) << " " << case_name(Depth::u8, 1, s, k, norm, b)
                        << " src offset " << so << " dst offset " << dof);
          const BoxParams bp{k.kw, k.kh, norm, b};
          auto src = random_image(s.w, s.h, {Depth::u8, 1}, rng, true);
          if (turn % 7 == 0) fill_constant(src, 255);  // the largest sums
          auto want = make_dst(s.w, s.h, {Depth::u8, 1}, rng);
          box(src, want, bp, {Backend::ref});
          const Location loc = backend_location(be);
          Image in_backing(s.w + 16 + 8, s.h, {Depth::u8, 1}, loc);
          ImageView in = in_backing.view().roi(so, 0, s.w, s.h);
          copy(src, in);
          Image out_backing(s.w + 16, s.h, {Depth::u8, 1}, loc);
          ImageView out = out_backing.view().roi(dof, 0, s.w, s.h);
          box(in, out, bp, {be});
          ASSERT_EQ(compare(to_host(out), want), "");
        }
      }
}

// The CUDA f32 x 1 3x3 kernel (src/backends/cuda/f32_3x3.cuh: the reference's double sums in
// its order, then float(s / 9) or float(s))
// at 517x70, 600x150, 300x97 and 4100x1100 its short shape (128 x 16 outputs a block), at
// 4100x2200 (33 x 35 blocks of 128 x 64 >= 1056, launch.cuh tall_blocks_fill) its tall one;
// every border in turn (constant 300 and -7 too). The sources sit at random offsets and
// strides (mostly the tile loader's per-chunk path; F32Kernel3x3.CudaMatchesRefOnAlignedImages
// in tests/f32_3x3_test.cpp takes the 16-byte path for sure).
// The generic path's cases beside it (5x5, 3 channels).
TEST(Box, EveryBackendMatchesRefOnManyTilesF32x1) {
  auto rng = make_rng(0xb0ca);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  std::size_t turn = 0;
  for (Size s : std::vector<Size>{{517, 70}, {600, 150}, {300, 97}, {4100, 1100}, {4100, 2200}})
    for (bool norm : {true, false})
      ASSERT_TRUE(backends_match_ref("box",
                                     "k=3 normalize=" + std::to_string(norm) + " " +
                                         border_params(borders[turn++ % borders.size()]),
                                     {Depth::f32, 1}, s, rng));
  for (Size s : std::vector<Size>{{1, 1}, {3, 130}, {130, 2}})
    ASSERT_TRUE(backends_match_ref("box", "k=3 border=reflect101", {Depth::f32, 1}, s, rng));
  ASSERT_TRUE(backends_match_ref("box", "k=5 border=reflect101", {Depth::f32, 1}, {517, 70}, rng));
  ASSERT_TRUE(backends_match_ref("box", "k=3 normalize=0 border=constant value=300",
                                 {Depth::f32, 3}, {300, 97}, rng));
}

// The packed 3x3 kernel on u8 x 3 (u8_3x3.cuh linear3, CN = 3): aligned destinations (the
// packed path), aligned and padded sources, streaming and tall blocks, every border, mean and
// sum.
TEST(Box, EveryBackendMatchesRefOnManyTilesU8x3Packed3x3) {
  auto rng = make_rng(0xb0ca);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  const std::vector<Size> sizes = {{1, 1},     {2, 3},    {43, 5},     {517, 70},
                                   {600, 150}, {300, 97}, {4100, 1100}};
  std::size_t turn = 0;
  for (Backend be : test_backends_for("box"))
    for (Size s : sizes)
      for (bool norm : {true, false})
        for (std::size_t bi = 0; bi < (s.w == 4100 ? 2 : borders.size()); ++bi)
          for (bool tight_src : {true, false}) {
            const Border b = borders[(bi + turn++) % borders.size()];
            PIXFLOW_TRACE(testing::Message()
                          << backend_name(be) << " u8x3 " << s.w << "x" << s.h << " " << describe(b)
                          << " normalize=" << norm << (tight_src ? " aligned src" : " padded src"));
            auto src = random_image(s.w, s.h, {Depth::u8, 3}, rng, tight_src);
            auto want = make_dst(s.w, s.h, {Depth::u8, 3}, rng);
            box(src, want, BoxParams{3, 3, norm, b}, {Backend::ref});
            auto in = to_backend(be, src, rng, tight_src);
            auto got = make_dst_on(be, s.w, s.h, {Depth::u8, 3}, rng, /*tight=*/true);
            box(in, got, BoxParams{3, 3, norm, b}, {be});
            ASSERT_EQ(compare(to_host(got), want), "");
          }
}

TEST(Box, EveryBackendMatchesRefOnExtremeSums) {
  // The largest sums (255x255 windows of the depth's maximum: S = 65025 * 65535 < 2^32 for
  // u16) and sums near them, normalised (ties and the division's correction step) or
  // saturated.
  auto rng = make_rng(0xb0c8);
  for (Depth d : {Depth::u8, Depth::u16}) {
    const double hi = d == Depth::u8 ? 255 : 65535;
    for (bool norm : {true, false})
      for (Win k : {Win{255, 255}, Win{254, 255}, Win{128, 2}, Win{2, 1}, Win{3, 5}, Win{31, 31},
                    Win{32, 31}, Win{17, 31}}) {
        const std::string params = "kw=" + std::to_string(k.kw) + " kh=" + std::to_string(k.kh) +
                                   " normalize=" + std::to_string(norm);
        PIXFLOW_TRACE(std::string(depth_name(d)) + " " + params);
        auto full = random_image(40, 30, {d, 1}, rng);
        fill_constant(full, hi);
        ASSERT_TRUE(backends_match_ref("box", params + " border=reflect", full.view, rng));
        auto high = random_image(300, 20, {d, 3}, rng, false, hi - 3, hi);
        ASSERT_TRUE(
            backends_match_ref("box", params + " border=constant value=1e9", high.view, rng));
        auto low = random_image(300, 20, {d, 1}, rng, false, 0, 3);  // many exact ties
        ASSERT_TRUE(backends_match_ref("box", params + " border=wrap", low.view, rng));
      }
  }
}

// The u8 kernel's division in 16-bit lanes (box_wrap_shift, box_wrap_plan, box_div.hpp),
// for every window it takes (n <= 257: exact sums, one term; n > 257: the plan's terms),
// over every S' = S + floor(n/2) <= 255n + n/2 and both ends of the estimate e of S'/2^sh
// (the least integer above S'/2^sh - (terms + 1), and S' >> sh): q0 grows with e, so both
// ends in [floor(S'/n) - 1, floor(S'/n)] prove every e the kernel can form.
TEST(Box, SixteenBitDivisionIsExactForEveryWindowItTakes) {
  std::vector<std::uint64_t> seen;  // n * 8 + terms
  int wrapped = 0;
  auto check = [&](std::uint32_t n, int terms) {
    const int sh = cpu::box_wrap_shift(n, terms);
    ASSERT_GE(sh, 0) << n;
    const std::uint64_t key = std::uint64_t(n) * 8 + std::uint64_t(terms);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) return;
    seen.push_back(key);
    const std::uint64_t m = (std::uint64_t(65536) << sh) / n;
    const std::uint64_t k = sh == 0 ? 0 : std::uint64_t(terms) + 1;  // e exact for sh = 0
    for (std::uint64_t S = 0; S <= 255 * std::uint64_t(n) + n / 2; ++S) {
      const std::uint64_t fl = S / n, e_hi = S >> sh;
      const std::uint64_t e_lo = k == 0 ? S : S >= (k << sh) ? ((S - (k << sh)) >> sh) + 1 : 0;
      ASSERT_LT(e_hi, 65536u);
      const std::uint64_t q_lo = (e_lo * m) >> 16, q_hi = (e_hi * m) >> 16;
      if (q_lo + 1 < fl || q_hi > fl) FAIL() << "n=" << n << " terms=" << terms << " S'=" << S;
    }
  };
  for (std::uint32_t n = 2; n <= 257; ++n) check(n, 1);
  for (int kh = 1; kh <= 255; ++kh)
    for (int kw = 1; kw <= 255; ++kw) {
      if (kw * kh <= 257 || kw / cpu::box_u16_top(kh) > 4) continue;
      const cpu::BoxWrapPlan plan = cpu::box_wrap_plan(kw, kh);
      if (plan.sh >= 0) {
        ++wrapped;
        check(std::uint32_t(kw * kh), plan.terms);
      } else {  // W_top wider than 16 columns: the doubling passes, then their terms
        int top = 1;
        while (2 * top <= kw) top *= 2;
        top = std::min(top, cpu::box_u16_top(kh));
        const int terms = kw / top + (kw % top != 0);
        if (cpu::box_wrap_shift(std::uint32_t(kw * kh), terms) >= 0)
          check(std::uint32_t(kw * kh), terms);
      }
      if (HasFatalFailure()) return;
    }
  EXPECT_GT(wrapped, 1000);
  EXPECT_EQ(cpu::box_wrap_plan(31, 31).sh, 2);
}

TEST(Box, PipelineStageMatchesDirectCall) {
  auto rng = make_rng(0xb0c6);
  auto src = random_image(30, 20, {Depth::f32, 1}, rng);
  Image want(30, 20, {Depth::f32, 1});
  box(src, want, {4, 3, false, Border::reflect()});
  Image got = Pipeline::parse("box k=4 kh=3 normalize=0 border=reflect").run(src);
  EXPECT_EQ(compare(got, want), "");
}

}  // namespace
}  // namespace pixflow::test
