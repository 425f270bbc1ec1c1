// The OpenCL backend's buffer reuse (src/backends/opencl/runtime.hpp). The queue-ordered
// workspace: a block a call drops goes back to its queue's free list and only a later call on
// the same queue takes it; another queue never does; a queue the user released loses its list;
// PIXFLOW_OCL_POOL=off keeps nothing. The read-only uploads: the same bytes share a buffer.
// And ops whose passes take blocks and uploads again and again, on two queues in turn and
// without waiting between calls, stay bit-exact against the reference.
#include <cstdlib>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tests/common.hpp"

#if PIXFLOW_TEST_HAVE_OPENCL
#include <CL/cl.h>

#include "src/backends/opencl/runtime.hpp"
#endif

namespace pixflow::test {
namespace {

#if PIXFLOW_TEST_HAVE_OPENCL

#define PIXFLOW_NEED_OPENCL()                                          \
  if (opencl_tests_off() || device_count(Location::Kind::opencl) == 0) \
  GTEST_SKIP() << "no OpenCL device, or PIXFLOW_TEST_OPENCL=off"

// A second in-order queue on the device's context, released at the end of the scope.
class OwnQueue {
 public:
  explicit OwnQueue(int device) {
    cl_int err = CL_SUCCESS;
    q_ = clCreateCommandQueue(opencl::context(device), opencl::devices()[std::size_t(device)].id, 0,
                              &err);
    EXPECT_EQ(err, CL_SUCCESS);
  }
  ~OwnQueue() { release(); }
  void release() {
    if (q_) clReleaseCommandQueue(q_);
    q_ = nullptr;
  }
  cl_command_queue get() const { return q_; }
  OwnQueue(const OwnQueue&) = delete;
  OwnQueue& operator=(const OwnQueue&) = delete;

 private:
  cl_command_queue q_ = nullptr;
};

constexpr std::size_t kMiB = std::size_t(1) << 20;

TEST(OpenclWorkspace, ABlockReturnsToItsQueueAndServesTheNextCallThere) {
  PIXFLOW_NEED_OPENCL();
  const int dev = test_opencl_device();
  // A queue of its own: its list starts empty whatever earlier tests left on the default one.
  OwnQueue own(dev);
  ASSERT_NE(own.get(), nullptr);
  const cl_command_queue q = own.get();
  std::byte* first = nullptr;
  std::byte* second = nullptr;
  {
    const auto a = opencl::workspace(dev, 3 * kMiB, q);
    first = a.get();
    EXPECT_EQ(opencl::resolve(a.get(), dev, "test").size, 3 * kMiB);
  }
  EXPECT_GE(opencl::workspace_pooled_bytes(dev), 3 * kMiB);
  {
    // The same size on the same queue: the same block (its address range and buffer).
    const auto b = opencl::workspace(dev, 3 * kMiB, q);
    EXPECT_EQ(b.get(), first);
    // While it is taken, a second request gets another block.
    const auto c = opencl::workspace(dev, 3 * kMiB, q);
    EXPECT_NE(c.get(), first);
    second = c.get();
  }
  {
    // Less than half a block's size takes neither 3 MiB block (a small call keeps no large
    // block).
    const auto small = opencl::workspace(dev, kMiB, q);
    EXPECT_NE(small.get(), first);
    EXPECT_NE(small.get(), second);
    // Between half and all of it takes one of them.
    const auto fits = opencl::workspace(dev, 2 * kMiB, q);
    EXPECT_TRUE(fits.get() == first || fits.get() == second);
  }
}

TEST(OpenclWorkspace, ANullQueueIsTheDefaultQueue) {
  PIXFLOW_NEED_OPENCL();
  const int dev = test_opencl_device();
  // The smallest block of the default queue's list that serves the request (one of earlier
  // tests' or a new one): released and asked for again under the other name, the same one.
  std::byte* first = nullptr;
  {
    const auto a = opencl::workspace(dev, 3 * kMiB + 4096, nullptr);
    first = a.get();
  }
  const auto b = opencl::workspace(dev, 3 * kMiB + 4096, opencl::default_queue(dev));
  EXPECT_EQ(b.get(), first);
}

TEST(OpenclWorkspace, AnotherQueueNeverTakesTheBlockAndAReleasedQueueLosesItsList) {
  PIXFLOW_NEED_OPENCL();
  const int dev = test_opencl_device();
  const cl_command_queue q = opencl::default_queue(dev);
  std::byte* on_default = nullptr;
  {
    const auto a = opencl::workspace(dev, 5 * kMiB, q);
    on_default = a.get();
  }
  OwnQueue own(dev);
  ASSERT_NE(own.get(), nullptr);
  std::byte* on_own = nullptr;
  {
    const auto b = opencl::workspace(dev, 5 * kMiB, own.get());
    EXPECT_NE(b.get(), on_default);
    on_own = b.get();
  }
  {
    const auto c = opencl::workspace(dev, 5 * kMiB, own.get());
    EXPECT_EQ(c.get(), on_own);
  }
  const std::size_t before = opencl::workspace_pooled_bytes(dev);
  own.release();
  // The next block dropped anywhere trims the lists of queues only the pool holds.
  { const auto d = opencl::workspace(dev, 5 * kMiB, q); }
  EXPECT_EQ(opencl::workspace_pooled_bytes(dev), before - 5 * kMiB);
}

TEST(OpenclWorkspace, OffKeepsNothing) {
  PIXFLOW_NEED_OPENCL();
  const int dev = test_opencl_device();
  const EnvScope off({{"PIXFLOW_OCL_POOL", "off"}});
  const std::size_t before = opencl::workspace_pooled_bytes(dev);
  { const auto a = opencl::workspace(dev, 7 * kMiB, nullptr); }
  EXPECT_EQ(opencl::workspace_pooled_bytes(dev), before);
}

// Read-only uploads (device_buffer with data: taps, tables) of the same bytes share a buffer;
// other bytes, or PIXFLOW_OCL_UPLOADS=off, get their own.
TEST(OpenclWorkspace, UploadsOfTheSameBytesShareABuffer) {
  PIXFLOW_NEED_OPENCL();
  const int dev = test_opencl_device();
  const opencl::Launch l{dev, opencl::default_queue(dev)};
  std::vector<int> taps = {1, 4, 6, 4, 1, 0x5eed};
  const auto a = opencl::device_buffer(l, taps.size() * sizeof(int), "test", taps.data());
  const auto b = opencl::device_buffer(l, taps.size() * sizeof(int), "test", taps.data());
  EXPECT_EQ(a.mem, b.mem);
  taps[2] = 7;
  const auto c = opencl::device_buffer(l, taps.size() * sizeof(int), "test", taps.data());
  EXPECT_NE(c.mem, a.mem);
  // The contents are the bytes given.
  std::vector<int> back(taps.size());
  ASSERT_EQ(clEnqueueReadBuffer(l.queue, c.mem, CL_TRUE, 0, back.size() * sizeof(int), back.data(),
                                0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(back, taps);
  {
    const EnvScope off({{"PIXFLOW_OCL_UPLOADS", "off"}});
    const auto d = opencl::device_buffer(l, taps.size() * sizeof(int), "test", taps.data());
    EXPECT_NE(d.mem, c.mem);
  }
}

// The ops whose passes go through the workspace (core's composites, the separable box and
// gaussian passes, van Herk morphology, the IIR), called back to back on two queues in turn
// with no wait between calls, each on its own source: every result equals the reference.
TEST(OpenclWorkspace, OpsStayExactWhileBlocksAreTakenAgainOnTwoQueues) {
  PIXFLOW_NEED_OPENCL();
  const int dev = test_opencl_device();
  const Location loc = Location::opencl(dev);
  auto rng = make_rng(0x9001);
  OwnQueue own(dev);
  ASSERT_NE(own.get(), nullptr);
  const Queue queues[2] = {Queue{}, Queue::opencl(own.get())};
  struct Call {
    const char* what;
    Format fmt;
    std::function<void(ConstImageView, ImageView, const Context&)> run;
  };
  const std::vector<Call> calls = {
      {"open 3x3 u8x3",
       {Depth::u8, 3},
       [](ConstImageView s, ImageView d, const Context& c) {
         morphology(s, d, MorphOp::open, {3, 3, 1, Border::reflect101()}, c);
       }},
      {"gradient 5x5 u8x1 wrap",
       {Depth::u8, 1},
       [](ConstImageView s, ImageView d, const Context& c) {
         morphology(s, d, MorphOp::gradient, {5, 5, 1, Border::wrap()}, c);
       }},
      {"dilate 21x21 u16x1",
       {Depth::u16, 1},
       [](ConstImageView s, ImageView d, const Context& c) {
         morphology(s, d, MorphOp::dilate, {21, 21, 1, Border::replicate()}, c);
       }},
      {"box 9x9 u8x3",
       {Depth::u8, 3},
       [](ConstImageView s, ImageView d, const Context& c) {
         box(s, d, {9, 9, true, Border::reflect101()}, c);
       }},
      {"gaussian sigma=2 f32x1",
       {Depth::f32, 1},
       [](ConstImageView s, ImageView d, const Context& c) {
         GaussianParams p;
         p.sigma = 2;
         gaussian(s, d, p, c);
       }},
      {"gaussian_iir sigma=3 u8x1",
       {Depth::u8, 1},
       [](ConstImageView s, ImageView d, const Context& c) {
         GaussianIirParams p;
         p.sigma = 3;
         gaussian_iir(s, d, p, c);
       }},
  };
  const std::int64_t w = 211, h = 97;
  for (const Call& call : calls) {
    SCOPED_TRACE(call.what);
    std::vector<TestImage> srcs, dsts;
    std::vector<Image> want;
    for (int i = 0; i < 6; ++i) {
      srcs.push_back(random_image(w, h, call.fmt, rng));
      want.emplace_back(w, h, call.fmt);
      call.run(srcs.back(), want.back(), Context{Backend::ref});
    }
    std::vector<TestImage> dev_srcs;
    for (int i = 0; i < 6; ++i) {
      dev_srcs.push_back(to_backend(Backend::opencl, srcs[std::size_t(i)], rng));
      dsts.push_back(make_dst_on(Backend::opencl, w, h, call.fmt, rng));
    }
    synchronize(loc);
    for (int i = 0; i < 6; ++i) {
      Context c{Backend::opencl};
      c.queue = queues[i % 2];
      call.run(dev_srcs[std::size_t(i)], dsts[std::size_t(i)], c);
    }
    synchronize(loc, queues[1]);
    synchronize(loc);
    // The passes' blocks went back to the queues' lists (what the calls after the first took).
    EXPECT_GT(opencl::workspace_pooled_bytes(dev), 0u);
    for (int i = 0; i < 6; ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(compare(to_host(dsts[std::size_t(i)]), want[std::size_t(i)]), "");
    }
  }
}

#else

TEST(OpenclWorkspace, NeedsTheOpenclBackend) {
  GTEST_SKIP() << "built without the OpenCL backend";
}

#endif

}  // namespace
}  // namespace pixflow::test
