// Device hooks when pixflow is built without CUDA: every device request answers
// backend_unavailable, and pinned memory is ordinary memory.
#include <cstdlib>

#include "pixflow/device.hpp"
#include "src/core/check.hpp"
#include "src/core/memory.hpp"

namespace pixflow::detail {

std::shared_ptr<std::byte> device_alloc(Location loc, std::size_t) {
  fail(Status::backend_unavailable, "image", "cannot allocate on ", to_string(loc),
       ": pixflow was built without CUDA");
}

std::shared_ptr<std::byte> pinned_alloc(std::size_t bytes) {
  void* p = std::malloc(bytes ? bytes : 1);
  if (!p) fail(Status::out_of_memory, "pinned_image", "cannot allocate ", bytes, " bytes");
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [](std::byte* q) { std::free(q); });
}

void copy_2d(void*, std::size_t, Location dst_loc, const void*, std::size_t, Location src_loc,
             std::size_t, std::size_t, void*, bool) {
  fail(Status::backend_unavailable, "copy", "cannot copy ", to_string(src_loc), " -> ",
       to_string(dst_loc), ": pixflow was built without CUDA");
}

int device_count() noexcept { return 0; }
void device_synchronize(void*) {}

}  // namespace pixflow::detail

namespace pixflow {
bool cuda_compiled() noexcept { return false; }
}  // namespace pixflow
