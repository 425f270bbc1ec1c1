// CUDA-specific behaviour: graph capture of op sequences, out-of-memory as a clean error,
// images taller than one grid dimension, queue argument (Queue::cuda(stream)). The per-op sweeps
// against the reference live in each op's test file (test_backends() includes cuda when a GPU
// exists).
#include "tests/common.hpp"

#if PIXFLOW_HAVE_CUDA
#include <cuda_runtime.h>

namespace pixflow::test {
namespace {

bool have_gpu() {
  return cuda_device_count() > 0;
}

#define REQUIRE_GPU()                         \
  if (!have_gpu())                            \
  GTEST_SKIP() << "CUDA backend not tested: " \
               << (cuda_compiled() ? "no GPU present" : "built without CUDA")

TEST(CudaBackend, OpsCaptureIntoOneGraphAndReplayCorrectly) {
  REQUIRE_GPU();
  auto rng = make_rng(0xC001);
  const std::int64_t w = 333, h = 211;
  auto host = random_image(w, h, {Depth::u8, 1}, rng);
  Image src(w, h, {Depth::u8, 1}, Location::cuda(test_cuda_device()));
  Image a(w, h, {Depth::u8, 1}, Location::cuda(test_cuda_device())),
      b(w, h, {Depth::u8, 1}, Location::cuda(test_cuda_device()));
  Image t(h, w, {Depth::u8, 1}, Location::cuda(test_cuda_device()));
  copy(host.view, src);
  cudaStream_t stream;
  ASSERT_EQ(cudaSetDevice(test_cuda_device()), cudaSuccess);  // the stream of the images' device
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  Context ctx{Backend::automatic, Queue::cuda(stream)};
  // Capture: median -> open -> box -> transpose, all on `stream`. A host sync or a plain
  // cudaMalloc inside an op would make capture fail.
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  median(src, a, MedianParams{3, 3}, ctx);
  morphology(a, b, MorphOp::open, MorphParams{3, 3}, ctx);  // scratch: stream-ordered
  box(b, a, BoxParams{5, 5}, ctx);
  transpose(a, t, ctx);
  cudaGraph_t graph;
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  // The same sequence on the reference.
  Image ra(w, h, {Depth::u8, 1}), rb(w, h, {Depth::u8, 1}), rt(h, w, {Depth::u8, 1});
  median(host.view, ra, MedianParams{3, 3}, {Backend::ref});
  morphology(ra, rb, MorphOp::open, MorphParams{3, 3}, {Backend::ref});
  box(rb, ra, BoxParams{5, 5}, {Backend::ref});
  transpose(ra, rt, {Backend::ref});
  EXPECT_EQ(compare(to_host(t), rt), "");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

TEST(CudaBackend, OutOfMemoryIsACleanRecoverableError) {
  REQUIRE_GPU();
  try {
    // 360 GB: more than any one GPU has (90 GB fitted on a 141 GB H200).
    Image huge(600000, 600000, {Depth::u8, 1}, Location::cuda(test_cuda_device()));
    FAIL() << "a 360 GB device image was allocated";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::out_of_memory) << e.what();
    EXPECT_NE(std::string(e.what()).find("cudaMalloc"), std::string::npos) << e.what();
  }
  // The device still works afterwards.
  auto rng = make_rng(0xC002);
  auto host = random_image(64, 64, {Depth::u8, 1}, rng);
  auto dev = to_backend(Backend::cuda, host.view, rng);
  auto dst = make_dst_on(Backend::cuda, 64, 64, {Depth::u8, 1}, rng);
  median(dev, dst, MedianParams{3, 3});
  Image want(64, 64, {Depth::u8, 1});
  median(host.view, want, MedianParams{3, 3}, {Backend::ref});
  EXPECT_EQ(compare(to_host(dst.view), want), "");
}

TEST(CudaBackend, ImageTallerThanOneGridDimension) {
  REQUIRE_GPU();
  // 600000 rows: more blocks than gridDim.y (65535) allows for 8-row blocks.
  auto rng = make_rng(0xC003);
  const std::int64_t w = 7, h = 600000;
  auto host = random_image(w, h, {Depth::u8, 1}, rng);
  auto dev = to_backend(Backend::cuda, host.view, rng);
  for (int k : {3, 5}) {
    auto dst = make_dst_on(Backend::cuda, w, h, {Depth::u8, 1}, rng);
    median(dev, dst, MedianParams{k, k});
    Image want(w, h, {Depth::u8, 1});
    median(host.view, want, MedianParams{k, k}, {Backend::cpu});
    EXPECT_EQ(compare(to_host(dst.view), want), "") << "k=" << k;
  }
  auto tdst = make_dst_on(Backend::cuda, h, w, {Depth::u8, 1}, rng);
  transpose(dev, tdst);
  Image twant(h, w, {Depth::u8, 1});
  transpose(host.view, twant, {Backend::cpu});
  EXPECT_EQ(compare(to_host(tdst.view), twant), "");
}

TEST(CudaBackend, HostImagesWithCudaBackendAreRejected) {
  Image src(8, 8, {Depth::u8, 1}), dst(8, 8, {Depth::u8, 1});
  try {
    median(src, dst, MedianParams{3, 3}, {Backend::cuda});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("median"), std::string::npos) << e.what();
  }
}

TEST(CudaBackend, DeviceImageWithoutCudaIsBackendUnavailable) {
  if (cuda_compiled() && have_gpu()) GTEST_SKIP() << "a GPU is present";
  try {
    Image img(8, 8, {Depth::u8, 1}, Location::cuda(0));
    FAIL() << "allocated a device image without a device";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::backend_unavailable) << e.what();
  }
}

}  // namespace
}  // namespace pixflow::test

#else  // built without CUDA

namespace pixflow::test {
namespace {
TEST(CudaBackend, Skipped) {
  GTEST_SKIP() << "CUDA backend not tested: built without CUDA";
}
TEST(CudaBackend, DeviceImageWithoutCudaIsBackendUnavailable) {
  EXPECT_THROW(Image(8, 8, {Depth::u8, 1}, Location::cuda(0)), Error);
}
}  // namespace
}  // namespace pixflow::test

#endif
