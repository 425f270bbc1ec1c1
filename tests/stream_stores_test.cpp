// Streaming (non-temporal) stores of the SIMD kernels (src/backends/cpu/simd/store_out-inl.hpp):
// they switch on only for destinations larger than a quarter of the last-level cache, which
// few other tests reach (1920x1080 u8x4 on a 32 MiB cache), so here the threshold is 0 and every
// kernel that uses them runs against the reference on each SIMD target. make_dst's ROI offsets give
// rows that start aligned (streamed) and rows that do not (plain stores); each case runs a few
// times to meet both.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/common.hpp"

#if PIXFLOW_HAVE_SIMD
#include "src/backends/cpu/simd/rows.hpp"
#endif

namespace pixflow::test {
namespace {

#if PIXFLOW_HAVE_SIMD
struct StreamAlways {
  StreamAlways() { cpu::set_stream_threshold_for_test(0); }
  ~StreamAlways() { cpu::set_stream_threshold_for_test(-1); }
};

TEST(StreamStores, KernelsMatchRefWithStreamingStoresOn) {
  StreamAlways always;
  auto rng = make_rng(0x57e4);
  struct Case {
    const char* op;
    const char* params;
    std::vector<Depth> depths;
  };
  const std::vector<Case> cases = {
      {"median", "k=3", {Depth::u8, Depth::f32}},
      {"median", "k=5", {Depth::u8, Depth::u16}},
      {"dilate", "k=3", {Depth::u8, Depth::u16, Depth::f32}},
      {"erode", "kw=7 kh=5", {Depth::u8, Depth::f32}},
      {"erode", "kw=3 kh=9", {Depth::u8}},  // van Herk rows: plain stores
      {"box", "k=3", {Depth::u8, Depth::u16}},
      {"box", "kw=31 kh=31", {Depth::u8}},
      {"gaussian", "sigma=1.5", {Depth::u8, Depth::u16, Depth::f32}},
      {"sobel", "dx=1 dy=0 to=s16", {Depth::u8}},
      {"sobel", "dx=1 dy=1 to=f32 scale=0.5", {Depth::u8, Depth::f32}},
      {"scharr", "dx=0 dy=1 to=s16 scale=3 delta=1", {Depth::u8}},
      {"threshold", "t=100 type=binary maxval=200", {Depth::u8, Depth::u16, Depth::f32}},
      {"add", "with=random", {Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32}},
      {"mul", "with=random", {Depth::u8, Depth::u16, Depth::s16, Depth::s32}},
      {"sub", "value=2.5", {Depth::u8, Depth::s32, Depth::f32}},  // double lanes
      {"convert", "to=f32 scale=0.5 offset=1", {Depth::u8, Depth::s32}},
      {"convert", "to=s32 scale=3", {Depth::u16, Depth::f32}},
  };
  const std::vector<Size> sizes = {{263, 9}, {64, 4}, {130, 3}};
  for (const Case& c : cases)
    for (Depth d : c.depths)
      for (int ch : {1, 3})
        for (Size s : sizes)
          for (int rep = 0; rep < 3; ++rep)
            ASSERT_TRUE(backends_match_ref(c.op, c.params, {d, ch}, s, rng));
}
#else
TEST(StreamStores, KernelsMatchRefWithStreamingStoresOn) {
  GTEST_SKIP() << "built without Highway: no SIMD kernels";
}
#endif

}  // namespace
}  // namespace pixflow::test
