// The dispatcher's device handling, checked without a GPU: a recording DeviceApi stands in
// for a device backend, so that every launch is seen to run with its images' device current
// and the previous device restored (also when the implementation throws). On a GPU machine,
// tests/cuda_test.cpp runs the real CUDA DeviceApi.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "src/core/dispatch.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

// Records enter/leave; `current` is the device a launch would run on.
class RecordingDevice final : public detail::DeviceApi {
 public:
  mutable int current = 0;
  mutable std::vector<int> seen;  // the current device at every enter, after switching

  Location::Kind kind() const noexcept override { return Location::Kind::opencl; }
  const char* name() const noexcept override { return "recording"; }
  int count() const noexcept override { return 8; }
  std::string describe(int d) const override { return "recording:" + std::to_string(d); }
  std::shared_ptr<std::byte> allocate(int, std::size_t) const override { return nullptr; }
  std::shared_ptr<std::byte> workspace(int, std::size_t, void*) const override { return nullptr; }
  std::shared_ptr<std::byte> pinned(std::size_t) const override { return nullptr; }
  void copy_2d(void*, std::size_t, Location, const void*, std::size_t, Location, std::size_t,
               std::size_t, void*, bool) const override {}
  void synchronize(int, void*) const override {}
  int enter(int device) const override {
    const int prev = current;
    current = device;
    seen.push_back(current);
    return prev;
  }
  void leave(int previous) const noexcept override { current = previous; }
};

TEST(Dispatch, EveryLaunchRunsWithItsImagesDeviceCurrentAndRestoresThePreviousOne) {
  RecordingDevice dev;
  dev.current = 0;
  auto rng = make_rng(1);
  TestImage src = random_image(13, 7, {Depth::u8, 1}, rng);
  TestImage dst = make_dst(7, 13, {Depth::u8, 1}, rng);
  // The cpu implementation runs on host memory; the Exec says the images are on device 5 of
  // the recording kind, which is what the scope follows.
  detail::Exec exec;
  exec.backend = Backend::cpu;
  exec.location = Location::opencl(5);
  exec.device = &dev;
  const ConstImageView in = src;
  const ImageView out = dst;
  for (int i = 0; i < 3; ++i) detail::run_on("transpose", exec, in.format(), in, out);
  EXPECT_EQ(dev.seen, (std::vector<int>{5, 5, 5}));
  EXPECT_EQ(dev.current, 0) << "the previous device must be current again after the launch";
}

TEST(Dispatch, TheDeviceScopeRestoresThePreviousDeviceWhenTheLaunchThrows) {
  RecordingDevice dev;
  dev.current = 2;
  try {
    detail::DeviceScope scope(&dev, 6);
    EXPECT_EQ(dev.current, 6);
    throw std::runtime_error("a failing launch");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(dev.current, 2);
  // A lookup that finds nothing throws before any device is made current.
  detail::Exec exec;
  exec.backend = Backend::cpu;
  exec.location = Location::opencl(6);
  exec.device = &dev;
  EXPECT_THROW(detail::run_on("no_such_op", exec, Format{Depth::u8, 1}, 1), Error);
  EXPECT_EQ(dev.current, 2);
  EXPECT_EQ(dev.seen, (std::vector<int>{6}));
}

TEST(Dispatch, AMissingImplementationIsUnsupportedNamingTheOpAndTheBackend) {
  detail::Exec exec;
  exec.backend = Backend::cpu;
  try {
    detail::run_on("median", exec, Format{Depth::u8, 1}, 1, 2.0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::unsupported);
    EXPECT_NE(std::string(e.what()).find("median: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cpu"), std::string::npos) << e.what();
  }
}

TEST(Dispatch, EveryHostOpOfTheCatalogueIsRegisteredOnRefAndCpu) {
  for (const char* op :
       {"median",   "morph_pass", "box",       "gaussian", "gaussian_iir", "sobel", "scharr",
        "filter2d", "epsilon",    "bilateral", "remap",    "transpose",    "gray",  "add",
        "sub",      "absdiff",    "mul",       "convert",  "threshold",    "dot",   "matmul"}) {
    EXPECT_TRUE(detail::impl_table().has(op, Backend::ref)) << op;
    EXPECT_TRUE(detail::impl_table().has(op, Backend::cpu)) << op;
  }
}

}  // namespace
}  // namespace pixflow::test
