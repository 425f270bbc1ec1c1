// CUDA-specific behaviour: graph capture of op sequences, out-of-memory as a clean error,
// images taller than one grid dimension, queue argument (Queue::cuda(stream)). The per-op sweeps
// against the reference live in each op's test file (test_backends() includes cuda when a GPU
// exists).
#include "tests/common.hpp"

#if PIXFLOW_HAVE_CUDA
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

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

// The memory nodes of a captured graph (cudaMallocAsync / cudaFreeAsync inside an op).
int memory_nodes(cudaGraph_t graph) {
  std::size_t n = 0;
  EXPECT_EQ(cudaGraphGetNodes(graph, nullptr, &n), cudaSuccess);
  std::vector<cudaGraphNode_t> nodes(n);
  EXPECT_EQ(cudaGraphGetNodes(graph, nodes.data(), &n), cudaSuccess);
  int mem = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType t{};
    EXPECT_EQ(cudaGraphNodeGetType(node, &t), cudaSuccess);
    mem += t == cudaGraphNodeTypeMemAlloc || t == cudaGraphNodeTypeMemFree;
  }
  return mem;
}

// The ops with device scratch (gaussian_iir, the composites run as passes in core), each with
// a caller workspace of exactly the queried size: captured into a graph with no memory node
// (nothing allocated inside the op), replayed, equal bit for bit to the default run (which
// allocates stream-ordered: its capture has memory nodes). One byte less: invalid_argument.
TEST(CudaBackend, WorkspaceOpsCaptureWithoutMemoryNodesAndEqualTheDefault) {
  REQUIRE_GPU();
  auto rng = make_rng(0xC004);
  const int dev = test_cuda_device();
  ASSERT_EQ(cudaSetDevice(dev), cudaSuccess);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  struct Case {
    std::string what;
    Format f;
    std::function<void(ConstImageView, ImageView, const Context&)> run;
    std::function<std::size_t(ConstImageView, const Context&)> bytes;
  };
  const GaussianIirParams iir{8.0, Border::reflect101()};
  std::vector<Case> cases;
  for (Format f : {Format{Depth::u8, 3}, Format{Depth::f32, 1}})
    cases.push_back(
        {"gaussian_iir sigma=8", f,
         [&](ConstImageView s, ImageView d, const Context& c) { gaussian_iir(s, d, iir, c); },
         [&](ConstImageView s, const Context& c) {
           return gaussian_iir_workspace_bytes(s, iir, c);
         }});
  for (MorphOp m : {MorphOp::open, MorphOp::gradient, MorphOp::tophat})
    cases.push_back({morph_op_name(m), Format{Depth::u8, 1},
                     [m](ConstImageView s, ImageView d, const Context& c) {
                       morphology(s, d, m, MorphParams{5, 5}, c);
                     },
                     [m](ConstImageView s, const Context& c) {
                       return morphology_workspace_bytes(s, m, MorphParams{5, 5}, c);
                     }});
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what + " " + to_string(k.f));
    const std::int64_t w = 301, h = 157;
    auto host = random_image(w, h, k.f, rng);
    auto src = to_backend(Backend::cuda, host.view, rng);
    auto want = make_dst_on(Backend::cuda, w, h, k.f, rng);
    auto got = make_dst_on(Backend::cuda, w, h, k.f, rng);
    Context ctx{Backend::automatic, Queue::cuda(stream)};
    // The default: stream-ordered scratch, recorded as memory nodes when captured.
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
    k.run(src, want, ctx);
    cudaGraph_t graph;
    ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
    EXPECT_GT(memory_nodes(graph), 0);
    cudaGraphExec_t exec;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    // The caller's workspace: no memory node.
    const std::size_t n = k.bytes(src, ctx);
    ASSERT_GT(n, 0u);
    void* d_ws = nullptr;
    ASSERT_EQ(cudaMalloc(&d_ws, n), cudaSuccess);
    ctx.workspace = {d_ws, n, Location::cuda(dev)};
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
    k.run(src, got, ctx);
    ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
    EXPECT_EQ(memory_nodes(graph), 0);
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    // compare_bits reads f32 samples; integers compared by value are compared bit for bit.
    auto same = [&](const ConstImageView& a, const ConstImageView& b) {
      return k.f.depth == Depth::f32 ? compare_bits(a, b) : compare(a, b);
    };
    EXPECT_EQ(same(to_host(got.view), to_host(want.view)), "");
    // One byte less: refused before anything is queued; dst keeps its bits.
    const Image before = to_host(got.view);
    ctx.workspace.bytes = n - 1;
    expect_error([&] { k.run(src, got, ctx); }, Status::invalid_argument,
                 {"the workspace has " + std::to_string(n - 1) + " bytes but the call needs " +
                  std::to_string(n)});
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(same(to_host(got.view), before), "");
    // A host buffer for device images: the wrong location.
    std::vector<std::byte> host_ws(n + Workspace::kAlignment);
    ctx.workspace = {nullptr, n, Location::host()};
    ctx.workspace.data =
        host_ws.data() + (Workspace::kAlignment -
                          reinterpret_cast<std::uintptr_t>(host_ws.data()) % Workspace::kAlignment);
    expect_error([&] { k.run(src, got, ctx); }, Status::invalid_argument,
                 {"the workspace is on host but the images are on cuda:"});
    ASSERT_EQ(cudaFree(d_ws), cudaSuccess);
  }
  cudaStreamDestroy(stream);
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
