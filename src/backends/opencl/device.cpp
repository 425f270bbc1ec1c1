// The OpenCL device interface (src/base/backend.hpp's DeviceApi for opencl:N locations):
// buffers, copies, queues and the device list. Devices are numbered over every platform the
// ICD loader finds, platform by platform (runtime.hpp); nothing picks "the first platform".
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "src/backends/opencl/runtime.hpp"
#include "src/base/backend.hpp"
#include "src/base/error.hpp"

namespace pixflow::opencl {
namespace {

cl_command_queue queue_of(int device, void* queue) {
  return queue ? static_cast<cl_command_queue>(queue) : default_queue(device);
}

class OpenclDevice final : public detail::DeviceApi {
 public:
  Location::Kind kind() const noexcept override { return Location::Kind::opencl; }
  const char* name() const noexcept override { return "opencl"; }
  int count() const noexcept override { return int(devices().size()); }

  std::string describe(int device) const override {
    const auto& ds = devices();
    detail::require(device >= 0 && device < int(ds.size()), Status::backend_unavailable,
                    "describe_device", "no device opencl:", device);
    const DeviceInfo& d = ds[std::size_t(device)];
    char mem[32];
    std::snprintf(mem, sizeof mem, "%.1f", double(d.global_mem) / (1024.0 * 1024 * 1024));
    return detail::cat("opencl:", device, " (", d.platform_index, ":", d.device_index, ") ", d.name,
                       ", ", d.platform_name, ", ", d.version, ", driver ", d.driver, ", ",
                       d.compute_units, " compute units, ", mem, " GiB, local memory ",
                       d.local_mem / 1024, " KiB", d.fp64 ? "" : ", no fp64");
  }

  std::shared_ptr<std::byte> allocate(int device, std::size_t bytes) const override {
    return opencl::allocate(device, bytes);
  }

  // OpenCL 1.2 has no stream-ordered allocation: runtime.hpp's queue-ordered pool gives it.
  std::shared_ptr<std::byte> workspace(int device, std::size_t bytes, void* queue) const override {
    return opencl::workspace(device, bytes, queue_of(device, queue));
  }

  std::shared_ptr<std::byte> pinned(std::size_t bytes) const override {
    void* p = std::malloc(bytes ? bytes : 1);
    if (!p)
      detail::fail(Status::out_of_memory, "pinned_image", "cannot allocate ", bytes, " bytes");
    return std::shared_ptr<std::byte>(static_cast<std::byte*>(p),
                                      [](std::byte* q) { std::free(q); });
  }

  void copy_2d(void* dst, std::size_t dst_stride, Location dst_loc, const void* src,
               std::size_t src_stride, Location src_loc, std::size_t row_bytes, std::size_t rows,
               void* queue, bool synchronous) const override {
    auto kind_ok = [](Location l) { return l.is_host() || l.kind == Location::Kind::opencl; };
    detail::require(kind_ok(dst_loc) && kind_ok(src_loc), Status::backend_unavailable, "copy",
                    "cannot copy ", to_string(src_loc), " -> ", to_string(dst_loc), " with OpenCL");
    if (rows == 0 || row_bytes == 0) return;
    const std::size_t region[3] = {row_bytes, rows, 1};
    const std::size_t zero[3] = {0, 0, 0};
    auto origin = [](const BufferRef& b, std::size_t stride, std::size_t* o) {
      o[0] = b.offset % stride;
      o[1] = b.offset / stride;
      o[2] = 0;
    };
    const cl_bool block = synchronous ? CL_TRUE : CL_FALSE;
    if (src_loc.is_host()) {
      const int dev = dst_loc.device;
      const BufferRef d = resolve(dst, dev, "copy");
      std::size_t o[3];
      origin(d, dst_stride, o);
      check(clEnqueueWriteBufferRect(queue_of(dev, queue), d.mem, block, o, zero, region,
                                     dst_stride, 0, src_stride, 0, src, 0, nullptr, nullptr),
            "copy", dev, "clEnqueueWriteBufferRect");
      return;
    }
    if (dst_loc.is_host()) {
      const int dev = src_loc.device;
      const BufferRef s = resolve(src, dev, "copy");
      std::size_t o[3];
      origin(s, src_stride, o);
      check(clEnqueueReadBufferRect(queue_of(dev, queue), s.mem, block, o, zero, region, src_stride,
                                    0, dst_stride, 0, dst, 0, nullptr, nullptr),
            "copy", dev, "clEnqueueReadBufferRect");
      return;
    }
    if (src_loc.device == dst_loc.device) {
      const int dev = src_loc.device;
      const BufferRef s = resolve(src, dev, "copy"), d = resolve(dst, dev, "copy");
      std::size_t so[3], dof[3];
      origin(s, src_stride, so);
      origin(d, dst_stride, dof);
      const cl_command_queue q = queue_of(dev, queue);
      check(clEnqueueCopyBufferRect(q, s.mem, d.mem, so, dof, region, src_stride, 0, dst_stride, 0,
                                    0, nullptr, nullptr),
            "copy", dev, "clEnqueueCopyBufferRect");
      if (synchronous) check(clFinish(q), "copy", dev, "clFinish");
      return;
    }
    // Two devices (two contexts): through the host, synchronously.
    std::vector<std::byte> bounce(row_bytes * rows);
    copy_2d(bounce.data(), row_bytes, Location::host(), src, src_stride, src_loc, row_bytes, rows,
            nullptr, true);
    copy_2d(dst, dst_stride, dst_loc, bounce.data(), row_bytes, Location::host(), row_bytes, rows,
            nullptr, true);
  }

  void synchronize(int device, void* queue) const override {
    check(clFinish(queue_of(device, queue)), "synchronize", device, "clFinish");
  }

  int queue_device(void* queue) const override {
    if (!queue) return -1;
    cl_device_id id = nullptr;
    if (clGetCommandQueueInfo(static_cast<cl_command_queue>(queue), CL_QUEUE_DEVICE, sizeof id, &id,
                              nullptr) != CL_SUCCESS)
      return -1;
    const auto& ds = devices();
    for (std::size_t i = 0; i < ds.size(); ++i)
      if (ds[i].id == id) return int(i);
    return -1;
  }

  int index_of(int platform, int device) const noexcept override {
    return device_index(platform, device);
  }

  // OpenCL has no current device: every call names its device and queue.
  int enter(int device) const override { return device; }
  void leave(int) const noexcept override {}
};

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_device) {
  table.add_device(std::make_unique<pixflow::opencl::OpenclDevice>());
  table.set_note(pixflow::Backend::opencl,
                 "OpenCL C 1.2 kernels built at run time per device (programs kept per process)");
}
