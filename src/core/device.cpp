// Devices, queues and copies over the registered device interfaces.
#include "pixflow/device.hpp"

#include <cstdlib>
#include <cstring>

#include "src/base/error.hpp"
#include "src/core/memory.hpp"

namespace pixflow::detail {

const DeviceApi& device_api(std::string_view who, Location loc) {
  const DeviceApi* api = impl_table().device(loc.kind);
  require(api != nullptr, Status::backend_unavailable, who, "cannot use ", to_string(loc),
          ": pixflow was built without that backend");
  const int n = api->count();
  require(loc.device >= 0 && loc.device < n, Status::backend_unavailable, who, "no device ",
          to_string(loc), " (", n, " ", api->name(), " devices visible)");
  return *api;
}

std::shared_ptr<std::byte> device_alloc(Location loc, std::size_t bytes) {
  const DeviceApi& api = device_api("image", loc);
  return api.allocate(loc.device, bytes);
}

void copy_2d(void* dst, std::size_t dst_stride, Location dst_loc, const void* src,
             std::size_t src_stride, Location src_loc, std::size_t row_bytes, std::size_t rows,
             Queue queue, bool synchronous) {
  require(src_loc.is_host() || dst_loc.is_host() || src_loc.kind == dst_loc.kind,
          Status::unsupported, "copy", "cannot copy ", to_string(src_loc), " -> ",
          to_string(dst_loc), " directly; copy through the host");
  const Location dev = src_loc.is_host() ? dst_loc : src_loc;
  const DeviceApi& api = device_api("copy", dev);
  if (!src_loc.is_host()) (void)device_api("copy", src_loc);
  if (!dst_loc.is_host()) (void)device_api("copy", dst_loc);
  require(queue.kind == Location::Kind::host || queue.kind == dev.kind, Status::invalid_argument,
          "copy", "the queue's kind does not match ", to_string(dev));
  api.copy_2d(dst, dst_stride, dst_loc, src, src_stride, src_loc, row_bytes, rows, queue.handle,
              synchronous);
}

}  // namespace pixflow::detail

namespace pixflow {

int device_count(Location::Kind kind) noexcept {
  if (kind == Location::Kind::host) return 1;
  const detail::DeviceApi* api = detail::impl_table().device(kind);
  return api ? api->count() : 0;
}

int device_index(Location::Kind kind, int platform, int device) noexcept {
  const detail::DeviceApi* api = detail::impl_table().device(kind);
  return api ? api->index_of(platform, device) : -1;
}

int cuda_device_count() noexcept {
  return device_count(Location::Kind::cuda);
}

bool cuda_compiled() noexcept {
  return detail::impl_table().device(Location::Kind::cuda) != nullptr;
}

std::vector<Backend> compiled_backends() {
  return detail::impl_table().backends();
}

std::string backend_note(Backend b) {
  return detail::impl_table().note(b);
}

std::string describe_device(Location where) {
  if (where.is_host()) return "host";
  return detail::device_api("describe_device", where).describe(where.device);
}

void copy_async(ConstImageView src, ImageView dst, Queue queue) {
  detail::require(
      src.width() == dst.width() && src.height() == dst.height() && src.format() == dst.format(),
      Status::invalid_argument, "copy", "dst must match src in size and format");
  if (src.empty()) return;
  if (src.location().is_host() && dst.location().is_host()) {
    copy(src, dst);
    return;
  }
  detail::copy_2d(dst.data(), std::size_t(dst.stride()), dst.location(), src.data(),
                  std::size_t(src.stride()), src.location(), std::size_t(src.row_bytes()),
                  std::size_t(src.height()), queue, false);
}

void synchronize(Location where, Queue queue) {
  if (where.is_host()) return;
  const detail::DeviceApi& api = detail::device_api("synchronize", where);
  detail::require(queue.kind == Location::Kind::host || queue.kind == where.kind,
                  Status::invalid_argument, "synchronize", "the queue's kind does not match ",
                  to_string(where));
  api.synchronize(where.device, queue.handle);
}

Image pinned_image(std::int64_t width, std::int64_t height, Format fmt) {
  detail::require(width >= 0 && height >= 0 && fmt.channels >= 1 && fmt.channels <= 4,
                  Status::invalid_argument, "pinned_image", "size must be non-negative and ",
                  "channels 1..4");
  const std::int64_t stride = (width * std::int64_t(fmt.pixel_bytes()) + 63) / 64 * 64;
  const std::size_t bytes = std::size_t(stride * height);
  std::shared_ptr<std::byte> mem;
  for (const auto& api : detail::impl_table().devices())
    if (api->count() > 0) {
      mem = api->pinned(bytes ? bytes : 1);
      break;
    }
  if (!mem) {
    void* p = std::malloc(bytes ? bytes : 1);
    if (!p)
      detail::fail(Status::out_of_memory, "pinned_image", "cannot allocate ", bytes, " bytes");
    mem =
        std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [](std::byte* q) { std::free(q); });
  }
  ImageView v(mem.get(), width, height, stride, fmt, Location::host());
  return Image::wrap(std::move(mem), v);
}

}  // namespace pixflow
