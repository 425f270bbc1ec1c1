// Several CUDA devices in one process (docs/architecture.md, "Devices"): every op on every
// device, devices alternating call by call, one host thread per device at once, and images
// of one call on different devices refused. Skipped (with the reason) on hosts with fewer
// than two CUDA devices; scripts/gpu-check-multi.sh runs it on a two-GPU machine.
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#if PIXFLOW_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "src/schema/schema.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

#define PIXFLOW_NEED_TWO_GPUS()                                                    \
  do {                                                                             \
    if (cuda_device_count() < 2)                                                   \
      GTEST_SKIP() << "needs two CUDA devices (found " << cuda_device_count()      \
                   << "); scripts/gpu-check-multi.sh runs this on nvidia-h200-x2"; \
  } while (0)

/// Restores the tests' device when a test that switches devices ends.
struct DeviceRestore {
  int saved = test_cuda_device();
  ~DeviceRestore() { set_test_cuda_device(saved); }
};

// Every catalogue op, every example, on each device in turn: the case's device alternates
// between cuda:0 and cuda:1 (the same process, the same cached state of each device).
TEST(MultiGpu, EveryOpMatchesRefWithItsImagesOnAlternatingDevices) {
  PIXFLOW_NEED_TWO_GPUS();
  DeviceRestore restore;
  int cases = 0;
  for (const schema::Op* op : schema::catalogue()) {
    auto rng = make_rng(0x3a11 + std::uint64_t(cases));
    for (const std::string& example : op->examples())
      for (Depth d : op->depths())
        for (int ch : {1, 3}) {
          if (std::find(op->channels().begin(), op->channels().end(), ch) == op->channels().end())
            continue;
          for (Size s : std::vector<Size>{{37, 23}, {300, 7}}) {
            const int device = cases % 2;
            set_test_cuda_device(device);
            PIXFLOW_TRACE(testing::Message()
                          << "cuda:" << device << " " << op->name() << " " << example << " "
                          << depth_name(d) << "x" << ch << " " << s.w << "x" << s.h);
            ASSERT_TRUE(backends_match_ref(op->name(), example, {d, ch}, s, rng));
            ++cases;
          }
        }
  }
  RecordProperty("cases", cases);
}

// Two host threads, each driving its own device with a two-stage pipeline, at once: each
// result equals the reference's.
TEST(MultiGpu, TwoThreadsEachDrivingItsOwnDeviceAtOnce) {
  PIXFLOW_NEED_TWO_GPUS();
  const Pipeline p = Pipeline::parse("median k=5 | gaussian sigma=2");
  auto rng = make_rng(0x3a12);
  std::vector<Image> src, want;
  for (int d = 0; d < 2; ++d) {
    src.push_back(clone(random_image(1013 + d * 17, 701, {Depth::u8, 3}, rng).view));
    want.push_back(p.run(src.back(), Context{Backend::ref}));
  }
  std::atomic<int> mismatches{0};
  std::vector<std::string> errors(2);
  auto drive = [&](int d) {
    try {
      const Location loc = Location::cuda(d);
      for (int i = 0; i < 20; ++i) {
        Image dev(src[d].width(), src[d].height(), src[d].format(), loc);
        copy(src[d], dev);
        const Image out = p.run(dev, Context{Backend::cuda});
        if (!(out.location() == loc)) ++mismatches;
        if (!compare(to_host(out), want[d]).empty()) ++mismatches;
      }
    } catch (const std::exception& e) {
      errors[d] = e.what();
    }
  };
  std::thread t0(drive, 0), t1(drive, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  EXPECT_EQ(mismatches.load(), 0);
}

// Images of one call on two devices: a clear error naming both locations, never a launch on
// the wrong device. A pipeline runs where its source lives; its stages cannot be split.
TEST(MultiGpu, ImagesOfOneCallOnDifferentDevicesAreRefused) {
  PIXFLOW_NEED_TWO_GPUS();
  Image a(64, 32, {Depth::u8, 1}, Location::cuda(0)), b(64, 32, {Depth::u8, 1}, Location::cuda(1));
  Image dst0(64, 32, {Depth::u8, 1}, Location::cuda(0)),
      dst1(64, 32, {Depth::u8, 1}, Location::cuda(1));
  const BadCase cases[] = {
      {"add a@0 b@1",
       [&] { arith(a, b, dst0, ArithOp::add); },
       Status::invalid_argument,
       {"add", "cuda:1", "cuda:0"}},
      {"median src@0 dst@1",
       [&] {
         MedianParams p;
         p.kw = p.kh = 3;
         median(a, dst1, p);
       },
       Status::invalid_argument,
       {"median", "one location", "cuda:0", "cuda:1"}},
      {"transpose src@1 dst@0",
       [&] {
         Image t(32, 64, {Depth::u8, 1}, Location::cuda(0));
         transpose(b, t);
       },
       Status::invalid_argument,
       {"transpose", "one location"}},
  };
  expect_errors(cases);
#if PIXFLOW_HAVE_CUDA
  // A stream of cuda:0 with images on cuda:1: refused, not launched on the wrong device.
  cudaStream_t s0 = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&s0), cudaSuccess);
  try {
    MedianParams p;
    p.kw = p.kh = 3;
    median(b, dst1, p, Context{Backend::cuda, Queue::cuda(s0)});
    ADD_FAILURE() << "a stream of cuda:0 ran with images on cuda:1";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::invalid_argument);
    EXPECT_NE(
        std::string(e.what()).find("the queue belongs to cuda:0 but the images are on cuda:1"),
        std::string::npos)
        << e.what();
  }
  cudaStreamDestroy(s0);
#endif
  // Copies between devices are explicit and exact.
  auto rng = make_rng(0x3a13);
  const Image host = clone(random_image(64, 32, {Depth::u8, 1}, rng).view);
  copy(host, a);
  copy(a, b);
  EXPECT_EQ(compare(to_host(b), host), "");
}

}  // namespace
}  // namespace pixflow::test
