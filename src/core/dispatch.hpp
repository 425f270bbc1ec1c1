// validate -> dispatch. Every public op checks its images and parameters (src/core/check.hpp
// and the op's schema), then calls `dispatch`, which picks the backend from the images'
// location and Context::backend, checks the queue, makes the images' device current and
// calls the implementation that backend registered (src/base/backend.hpp). A backend
// without an implementation for the op or the format answers `unsupported`; nothing falls
// back silently to another backend.
#pragma once

#include <array>
#include <string_view>

#include "pixflow/ops.hpp"
#include "src/base/backend.hpp"
#include "src/base/error.hpp"
#include "src/base/scratch.hpp"

namespace pixflow::detail {

/// Backend, device interface and queue for a call whose images live at `loc`. Throws
/// invalid_argument for a backend, queue or Context::workspace (location, alignment) that
/// does not match the location and backend_unavailable for a backend or device that this
/// build or machine lacks. The caller points Exec::scratch at the call's ScratchArena.
Exec select_exec(std::string_view op, const Context& ctx, Location loc);

[[noreturn]] void fail_unsupported(std::string_view op, Backend b, Format f, bool backend_has_op);

/// Same, for a call that already selected its Exec (multi-pass ops: one selection, many
/// launches).
template <class... A>
void run_on(std::string_view op, const Exec& exec, Format f, const A&... args) {
  bool any = false;
  auto fn = impl_table().find<const A&...>(op, exec.backend, f, &any);
  if (!fn) fail_unsupported(op, exec.backend, f, any);
  DeviceScope scope(exec.device, exec.location.device);
  fn(exec, args...);
}

/// Whether the call's backend has an implementation of `op` for `f` taking these
/// arguments: for optional fused implementations (a composite in one call) that core
/// otherwise runs as a sequence of required ops.
template <class... A>
bool has_impl(std::string_view op, const Exec& exec, Format f) {
  return impl_table().find<const A&...>(op, exec.backend, f) != nullptr;
}

/// Runs op's implementation on the backend chosen for `where` (the call's first image),
/// with that image's device current. Every implementation parameter is a const reference.
template <class... A>
void dispatch(std::string_view op, const Context& ctx, const ConstImageView& where,
              const A&... args) {
  Exec exec = select_exec(op, ctx, where.location());
  ScratchArena scratch(op, ctx.workspace);
  exec.scratch = &scratch;
  run_on(op, exec, where.format(), args...);
}

/// The bytes of scratch `plan(exec)` takes for a call of `op` on images at `loc`: `plan`
/// runs the call's scratch requests (the same code as the call) on an Exec whose arena
/// measures; it must queue nothing. The *_workspace_bytes queries.
template <class Plan>
std::size_t measure_scratch(std::string_view op, const Context& ctx, Location loc, Plan&& plan) {
  Exec exec = select_exec(op, ctx, loc);
  ScratchArena scratch(op, ctx.workspace, /*measure=*/true);
  exec.scratch = &scratch;
  plan(static_cast<const Exec&>(exec));
  return scratch.used();
}

/// `n` (<= 2) images of `fmt` at the call's location for intermediate results, in one
/// take() from the call's arena (rows padded to 64 bytes, each image 256-aligned): views of
/// the caller's workspace, or a stream-ordered allocation on devices (no host
/// synchronisation) and ordinary memory on the host; empty images when measuring.
std::array<Image, 2> scratch_images(const Exec& exec, int n, std::int64_t width,
                                    std::int64_t height, Format fmt);

}  // namespace pixflow::detail
