// The OpenCL schedules an environment variable selects (src/backends/opencl/variant.hpp,
// PIXFLOW_OCL_*): every schedule of an op against the reference, bit for bit, on the edges
// of its own tiling (block and tile boundaries, partial work-groups, lines shorter than the
// border extension, 1-pixel images), every border, ROI views at odd offsets
// (backends_match_ref). The family tests run the default schedule; these run each.
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/common.hpp"

namespace pixflow::test {
namespace {

// Sets an environment variable for a scope (the schedule switches read it at every call).
class ScopedSchedule {
 public:
  ScopedSchedule(const char* var, const char* value) : var_(var) { setenv(var, value, 1); }
  ~ScopedSchedule() { unsetenv(var_); }
  ScopedSchedule(const ScopedSchedule&) = delete;
  ScopedSchedule& operator=(const ScopedSchedule&) = delete;

 private:
  const char* var_;
};

bool have_opencl(const char* op) {
  for (Backend b : test_backends_for(op))
    if (b == Backend::opencl) return true;
  return false;
}

std::vector<Border> borders_and_outside_constant() {
  std::vector<Border> b = all_borders();
  b.push_back(Border::constant(300));
  return b;
}

// gaussian_iir (PIXFLOW_OCL_IIR): the fused kernel's work-groups of 32 lines and tiles of 256
// positions (8 blocks of 32): lines of 1..3 positions, a last block shorter than three, n
// across one and several tiles, partial line groups, e past a whole tile (sigma 70: e = 288,
// anti-causal tiles left of the line skipped), 1-4 channels interleaved in rows.
TEST(OpenclSchedules, GaussianIirEveryScheduleMatchesRef) {
  if (!have_opencl("gaussian_iir")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x5c1);
  const std::vector<Border> borders = borders_and_outside_constant();
  const std::vector<Size> sizes = {{1, 1},   {1, 40},  {40, 1},   {2, 3},   {33, 31},
                                   {257, 5}, {5, 257}, {290, 70}, {70, 290}};
  for (const char* schedule : {"fused", "fused-free", "line"}) {
    const ScopedSchedule env("PIXFLOW_OCL_IIR", schedule);
    std::size_t turn = 0;
    for (Depth d : {Depth::u8, Depth::f32})
      for (int ch : {1, 2, 3, 4})
        for (Size s : sizes) {
          const Border& b = borders[turn % borders.size()];
          const double sigma = turn % 3 == 0 ? 0.5 : turn % 3 == 1 ? 3.0 : 70.0;
          ++turn;
          PIXFLOW_TRACE(testing::Message() << "PIXFLOW_OCL_IIR=" << schedule);
          ASSERT_TRUE(backends_match_ref("gaussian_iir",
                                         "sigma=" + std::to_string(sigma) + " " + border_params(b),
                                         {d, ch}, s, rng));
        }
    for (const Border& b : borders) {
      PIXFLOW_TRACE(testing::Message() << "PIXFLOW_OCL_IIR=" << schedule);
      ASSERT_TRUE(backends_match_ref("gaussian_iir", "sigma=8 " + border_params(b), {Depth::u8, 1},
                                     {517, 67}, rng));
    }
  }
}

TEST(OpenclSchedules, UnknownScheduleIsAnError) {
  if (!have_opencl("gaussian_iir")) GTEST_SKIP() << "no OpenCL device";
  const ScopedSchedule env("PIXFLOW_OCL_IIR", "nope");
  const Location dev = Location::opencl(test_opencl_device());
  Image dev_src(8, 8, {Depth::u8, 1}, dev), dev_dst(8, 8, {Depth::u8, 1}, dev);
  try {
    gaussian_iir(dev_src, dev_dst, {2.0, Border::replicate()});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("PIXFLOW_OCL_IIR=nope"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pixflow::test
