// The CUDA device interface (src/base/backend.hpp's DeviceApi for cuda:N locations): device
// memory, stream-ordered workspace, pinned host memory, copies, synchronisation and the
// current device. Also the backend's error reporting (check.cuh) and stream-ordered allocation
// (stream_alloc).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "pixflow/device.hpp"
#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/cuda_ops.hpp"
#include "src/base/backend.hpp"
#include "src/base/error.hpp"

namespace pixflow::cuda {

void throw_cuda_error(cudaError_t err, const char* what, const char* file, int line) {
  const Status st =
      err == cudaErrorMemoryAllocation ? Status::out_of_memory : Status::backend_error;
  if (err == cudaErrorMemoryAllocation) (void)cudaGetLastError();  // not sticky: clear it
  throw Error(st, detail::cat("cuda: ", what, " failed: ", cudaGetErrorName(err), " (",
                              cudaGetErrorString(err), ") at ", file, ":", line));
}

bool debug_sync() {
  static const bool on = [] {
    const char* v = std::getenv("PIXFLOW_DEBUG_SYNC");
    return v && std::strcmp(v, "0") != 0 && *v;
  }();
  return on;
}

namespace {

// Runs f with `device` current and restores the previous one, without throwing: for the
// deleters, which may run on any thread with any device current (cudaFreeAsync on the null
// stream orders the free on the *current* device's stream, so it must be the owner's).
template <class F>
void on_device_noexcept(int device, F&& f) noexcept {
  int prev = device;
  (void)cudaGetDevice(&prev);
  if (prev != device) (void)cudaSetDevice(device);
  f();
  if (prev != device) (void)cudaSetDevice(prev);
}

int current_device() {
  int d = 0;
  PIXFLOW_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

int visible_devices() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver / no device: not an error for the caller
    return 0;
  }
  return n;
}

class CudaDevice final : public detail::DeviceApi {
 public:
  Location::Kind kind() const noexcept override { return Location::Kind::cuda; }
  const char* name() const noexcept override { return "cuda"; }
  int count() const noexcept override { return visible_devices(); }

  std::string describe(int device) const override {
    cudaDeviceProp prop{};
    PIXFLOW_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    char mem[32];
    std::snprintf(mem, sizeof mem, "%.1f", double(prop.totalGlobalMem) / (1024.0 * 1024 * 1024));
    return detail::cat("cuda:", device, " ", prop.name, ", ", prop.multiProcessorCount, " SMs, ",
                       mem, " GiB, compute capability ", prop.major, ".", prop.minor);
  }

  std::shared_ptr<std::byte> allocate(int device, std::size_t bytes) const override {
    detail::DeviceScope scope(this, device);
    void* p = nullptr;
    PIXFLOW_CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1));
    return std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [device](std::byte* q) {
      on_device_noexcept(device, [q] { (void)cudaFree(q); });
    });
  }

  std::shared_ptr<std::byte> workspace(int device, std::size_t bytes, void* queue) const override {
    detail::DeviceScope scope(this, device);
    return stream_alloc(bytes, static_cast<cudaStream_t>(queue));
  }

  std::shared_ptr<std::byte> pinned(std::size_t bytes) const override {
    void* p = nullptr;
    if (visible_devices() == 0) {  // a CUDA build on a machine without GPU: ordinary memory
      p = std::malloc(bytes ? bytes : 1);
      if (!p)
        detail::fail(Status::out_of_memory, "pinned_image", "cannot allocate ", bytes, " bytes");
      return std::shared_ptr<std::byte>(static_cast<std::byte*>(p),
                                        [](std::byte* q) { std::free(q); });
    }
    PIXFLOW_CUDA_CHECK(cudaMallocHost(&p, bytes ? bytes : 1));
    return std::shared_ptr<std::byte>(static_cast<std::byte*>(p),
                                      [](std::byte* q) { (void)cudaFreeHost(q); });
  }

  void copy_2d(void* dst, std::size_t dst_stride, Location dst_loc, const void* src,
               std::size_t src_stride, Location src_loc, std::size_t row_bytes, std::size_t rows,
               void* queue, bool synchronous) const override {
    auto kind_ok = [](Location l) { return l.is_host() || l.kind == Location::Kind::cuda; };
    detail::require(kind_ok(dst_loc) && kind_ok(src_loc), Status::backend_unavailable, "copy",
                    "cannot copy ", to_string(src_loc), " -> ", to_string(dst_loc), " with CUDA");
    const Location dev = src_loc.is_host() ? dst_loc : src_loc;
    detail::DeviceScope scope(this, dev.device);
    const auto st = static_cast<cudaStream_t>(queue);
    PIXFLOW_CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_stride, src, src_stride, row_bytes, rows,
                                         cudaMemcpyDefault, st));
    if (synchronous) PIXFLOW_CUDA_CHECK(cudaStreamSynchronize(st));
  }

  void synchronize(int device, void* queue) const override {
    detail::DeviceScope scope(this, device);
    PIXFLOW_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(queue)));
  }

  int queue_device(void* queue) const override {
#if CUDART_VERSION >= 12080
    // cudaStreamGetDevice is not permitted while a stream captures a graph (it would
    // invalidate the capture): a capturing stream is not asked.
    const auto st = static_cast<cudaStream_t>(queue);
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (!queue) return -1;
    if (cudaStreamIsCapturing(st, &capture) != cudaSuccess) {
      (void)cudaGetLastError();  // a later launch check must not see this query's error
      return -1;
    }
    if (capture != cudaStreamCaptureStatusNone) return -1;
    int device = -1;
    if (cudaStreamGetDevice(st, &device) == cudaSuccess) return device;
    (void)cudaGetLastError();  // not a stream this runtime knows: say nothing, as before
#else
    (void)queue;
#endif
    return -1;
  }

  int enter(int device) const override {
    int prev = 0;
    PIXFLOW_CUDA_CHECK(cudaGetDevice(&prev));
    if (prev != device) PIXFLOW_CUDA_CHECK(cudaSetDevice(device));
    return prev;
  }
  void leave(int previous) const noexcept override {
    (void)cudaSetDevice(previous);
  }
};

}  // namespace

std::shared_ptr<std::byte> stream_alloc(std::size_t bytes, cudaStream_t stream) {
  const int device = current_device();
  void* p = nullptr;
  PIXFLOW_CUDA_CHECK(cudaMallocAsync(&p, bytes ? bytes : 1, stream));
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [stream, device](std::byte* q) {
    on_device_noexcept(device, [q, stream] { (void)cudaFreeAsync(q, stream); });
  });
}

}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_device) {
  table.add_device(std::make_unique<pixflow::cuda::CudaDevice>());
}
