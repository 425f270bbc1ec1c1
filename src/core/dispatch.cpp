#include "src/core/dispatch.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace pixflow::detail {

// Defined in the file the build generates from the backends it compiles (CMakeLists.txt).
void register_compiled_backends(ImplTable& table);

const ImplTable& impl_table() {
  static const ImplTable table = [] {
    ImplTable t;
    register_compiled_backends(t);
    return t;
  }();
  return table;
}

std::vector<Backend> ImplTable::backends() const {
  std::vector<Backend> out;
  for (Backend b : {Backend::ref, Backend::cpu, Backend::cuda, Backend::opencl})
    for (const auto& [key, entries] : impls_)
      if (key.second == b) {
        out.push_back(b);
        break;
      }
  return out;
}

namespace {

Backend backend_of(Location::Kind k) {
  switch (k) {
    case Location::Kind::host:
      return Backend::cpu;
    case Location::Kind::cuda:
      return Backend::cuda;
    case Location::Kind::opencl:
      return Backend::opencl;
  }
  return Backend::cpu;
}

const char* kind_name(Location::Kind k) {
  switch (k) {
    case Location::Kind::host:
      return "host";
    case Location::Kind::cuda:
      return "cuda";
    case Location::Kind::opencl:
      return "opencl";
  }
  return "?";
}

}  // namespace

Exec select_exec(std::string_view op, const Context& ctx, Location loc) {
  Exec e;
  e.location = loc;
  e.threads = ctx.threads;
  const Backend natural = backend_of(loc.kind);
  switch (ctx.backend) {
    case Backend::automatic:
      e.backend = natural;
      break;
    case Backend::ref:
    case Backend::cpu:
      require(loc.is_host(), Status::invalid_argument, op, "backend ", backend_name(ctx.backend),
              " needs host images (got ", to_string(loc), "); copy them explicitly");
      e.backend = ctx.backend;
      break;
    case Backend::cuda:
    case Backend::opencl:
      require(natural == ctx.backend, Status::invalid_argument, op, "backend ",
              backend_name(ctx.backend), " needs ", backend_name(ctx.backend), " images (got ",
              to_string(loc), "); copy them explicitly");
      e.backend = ctx.backend;
      break;
    default:
      fail(Status::invalid_argument, op, "unknown backend ", int(ctx.backend));
  }
  if (!loc.is_host()) {
    e.device = impl_table().device(loc.kind);
    require(e.device != nullptr, Status::backend_unavailable, op, "the ", backend_name(e.backend),
            " backend is not built");
    const int n = e.device->count();
    require(loc.device >= 0 && loc.device < n, Status::backend_unavailable, op, "no device ",
            to_string(loc), " (", n, " ", e.device->name(), " devices visible)");
  }
  if (ctx.workspace.given()) {
    require(ctx.workspace.location == loc, Status::invalid_argument, op, "the workspace is on ",
            to_string(ctx.workspace.location), " but the images are on ", to_string(loc));
    require(reinterpret_cast<std::uintptr_t>(ctx.workspace.data) % Workspace::kAlignment == 0,
            Status::invalid_argument, op, "the workspace must be aligned to ",
            Workspace::kAlignment, " bytes (got ", ctx.workspace.data, ")");
  }
  if (!ctx.queue.is_default() || ctx.queue.kind != Location::Kind::host) {
    require(ctx.queue.kind == loc.kind, Status::invalid_argument, op, "the queue is a ",
            kind_name(ctx.queue.kind), " queue but the images are on ", to_string(loc));
    e.queue = ctx.queue.handle;
    if (e.device && e.queue) {  // a stream of cuda:0 with images on cuda:1 would launch there
      const int qd = e.device->queue_device(e.queue);
      require(qd < 0 || qd == loc.device, Status::invalid_argument, op, "the queue belongs to ",
              to_string(Location{loc.kind, qd}), " but the images are on ", to_string(loc));
    }
  }
  return e;
}

void fail_unsupported(std::string_view op, Backend b, Format f, bool backend_has_op) {
  const std::vector<Backend> built = impl_table().backends();
  if (std::find(built.begin(), built.end(), b) == built.end())
    fail(Status::backend_unavailable, op, "the ", backend_name(b), " backend is not built");
  if (!backend_has_op) fail(Status::unsupported, op, "no ", backend_name(b), " implementation");
  fail(Status::unsupported, op, "the ", backend_name(b), " implementation does not take ",
       to_string(f));
}

std::shared_ptr<std::byte> ScratchArena::take(const Exec& exec, std::size_t bytes) {
  const std::size_t offset = align_scratch(used_);
  require(bytes <= SIZE_MAX - offset, Status::limit_exceeded, op_, "scratch of ", bytes,
          " bytes is too large");
  switch (mode_) {
    case Mode::measure:
      used_ = offset + bytes;
      return nullptr;
    case Mode::carve:
      require(offset + bytes <= ws_.bytes, Status::invalid_argument, op_, "the workspace has ",
              ws_.bytes, " bytes but the call needs ", offset + bytes,
              " (see the op's *_workspace_bytes)");
      used_ = offset + bytes;
      // Non-owning: the caller keeps the buffer alive until the queued work is done.
      return std::shared_ptr<std::byte>(std::shared_ptr<std::byte>(),
                                        static_cast<std::byte*>(ws_.data) + offset);
    case Mode::allocate:
      break;
  }
  used_ = offset + bytes;
  const std::size_t n = bytes ? bytes : 1;
  if (exec.device) return exec.device->workspace(exec.location.device, n, exec.queue);
  void* p = std::aligned_alloc(Workspace::kAlignment, align_scratch(n));
  require(p != nullptr, Status::out_of_memory, op_, "cannot allocate ", n,
          " bytes of host scratch");
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [](std::byte* q) { std::free(q); });
}

std::array<Image, 2> scratch_images(const Exec& exec, int n, std::int64_t width,
                                    std::int64_t height, Format fmt) {
  require(n >= 0 && n <= 2 && exec.scratch, Status::internal, "scratch", "bad request");
  std::array<Image, 2> out;
  if (n == 0) return out;
  const std::int64_t stride = (width * std::int64_t(fmt.pixel_bytes()) + 63) / 64 * 64;
  const std::size_t one = align_scratch(std::size_t(stride) * std::size_t(height));
  auto mem = exec.scratch->take(exec, one * std::size_t(n));
  if (!mem) return out;  // measuring
  for (int i = 0; i < n; ++i) {
    ImageView v(mem.get() + one * std::size_t(i), width, height, stride, fmt, exec.location);
    out[std::size_t(i)] = Image::wrap(mem, v);
  }
  return out;
}

}  // namespace pixflow::detail
