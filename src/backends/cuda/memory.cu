// Device memory, pinned memory and copies for cuda:N images.
#include <cstdlib>
#include <cstring>

#include "pixflow/device.hpp"
#include "src/core/check.hpp"
#include "src/core/memory.hpp"
#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/cuda_ops.hpp"

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
struct DeviceGuard {
  int prev = 0;
  explicit DeviceGuard(int dev) {
    PIXFLOW_CUDA_CHECK(cudaGetDevice(&prev));
    if (prev != dev) PIXFLOW_CUDA_CHECK(cudaSetDevice(dev));
  }
  ~DeviceGuard() { (void)cudaSetDevice(prev); }
};
}  // namespace

Image scratch_image(std::int64_t width, std::int64_t height, Format fmt, Location loc,
                    void* stream) {
  const std::int64_t stride = (width * std::int64_t(fmt.pixel_bytes()) + 63) / 64 * 64;
  DeviceGuard guard(loc.device);
  auto st = static_cast<cudaStream_t>(stream);
  void* p = nullptr;
  PIXFLOW_CUDA_CHECK(cudaMallocAsync(&p, std::size_t(stride * height) + 1, st));
  std::shared_ptr<std::byte> owner(static_cast<std::byte*>(p),
                                   [st](std::byte* q) { (void)cudaFreeAsync(q, st); });
  return Image::wrap(std::move(owner), ImageView(p, width, height, stride, fmt, loc));
}

}  // namespace pixflow::cuda

namespace pixflow::detail {

std::shared_ptr<std::byte> device_alloc(Location loc, std::size_t bytes) {
  require(loc.kind == Location::Kind::cuda, Status::backend_unavailable, "image",
          "cannot allocate on ", to_string(loc), ": that backend is not built");
  const int n = device_count();
  require(loc.device >= 0 && loc.device < n, Status::backend_unavailable, "image", "no device ",
          to_string(loc), " (", n, " CUDA devices visible)");
  cuda::DeviceGuard guard(loc.device);
  void* p = nullptr;
  PIXFLOW_CUDA_CHECK(cudaMalloc(&p, bytes));
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(p),
                                    [](std::byte* q) { (void)cudaFree(q); });
}

std::shared_ptr<std::byte> pinned_alloc(std::size_t bytes) {
  void* p = nullptr;
  if (device_count() == 0) {
    p = std::malloc(bytes ? bytes : 1);
    if (!p) fail(Status::out_of_memory, "pinned_image", "cannot allocate ", bytes, " bytes");
    return std::shared_ptr<std::byte>(static_cast<std::byte*>(p),
                                      [](std::byte* q) { std::free(q); });
  }
  PIXFLOW_CUDA_CHECK(cudaMallocHost(&p, bytes ? bytes : 1));
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(p),
                                    [](std::byte* q) { (void)cudaFreeHost(q); });
}

void copy_2d(void* dst, std::size_t dst_stride, Location dst_loc, const void* src,
             std::size_t src_stride, Location src_loc, std::size_t row_bytes, std::size_t rows,
             void* stream, bool synchronous) {
  auto kind_ok = [](Location l) { return l.is_host() || l.kind == Location::Kind::cuda; };
  require(kind_ok(dst_loc) && kind_ok(src_loc), Status::backend_unavailable, "copy", "cannot copy ",
          to_string(src_loc), " -> ", to_string(dst_loc));
  const Location dev = src_loc.is_host() ? dst_loc : src_loc;
  cuda::DeviceGuard guard(dev.device);
  auto s = static_cast<cudaStream_t>(stream);
  PIXFLOW_CUDA_CHECK(
      cudaMemcpy2DAsync(dst, dst_stride, src, src_stride, row_bytes, rows, cudaMemcpyDefault, s));
  if (synchronous) PIXFLOW_CUDA_CHECK(cudaStreamSynchronize(s));
}

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

void device_synchronize(void* stream) {
  if (device_count() == 0) return;
  PIXFLOW_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
}

}  // namespace pixflow::detail

namespace pixflow {
bool cuda_compiled() noexcept {
  return true;
}
}  // namespace pixflow
