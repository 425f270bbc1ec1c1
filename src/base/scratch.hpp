// Where an op's scratch comes from (docs/architecture.md, "Scratch"). Core puts one
// ScratchArena behind every call's Exec; whatever needs scratch (core's composites, a
// backend's entry point) asks it with take(), once per call for everything it needs, before
// anything is queued. The arena answers from one of three sources:
// - allocate (no Context::workspace): the device's stream-ordered workspace
//   (DeviceApi::workspace) or host memory, as before the workspace API;
// - carve (a Context::workspace given): sub-buffers of the caller's buffer at offsets rounded
//   up to Workspace::kAlignment, never an allocation; too small: invalid_argument;
// - measure (the *_workspace_bytes queries): no memory, only the offsets.
// Carve and measure do the same offset arithmetic on the same sequence of take() calls, so a
// query returns exactly what the call carves.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "pixflow/ops.hpp"

namespace pixflow::detail {

struct Exec;

class ScratchArena {
 public:
  enum class Mode { allocate, carve, measure };

  /// The arena of one call of `op` (the name errors start with; it must outlive the arena,
  /// as the op names of core's calls do): carve from `ws` when given, else allocate; or
  /// measure.
  ScratchArena(std::string_view op, const Workspace& ws, bool measure = false)
      : op_(op),
        ws_(ws),
        mode_(measure      ? Mode::measure
              : ws.given() ? Mode::carve
                           : Mode::allocate) {}
  ScratchArena(const ScratchArena&) = delete;
  ScratchArena& operator=(const ScratchArena&) = delete;

  Mode mode() const { return mode_; }
  bool measuring() const { return mode_ == Mode::measure; }
  /// Bytes carved or measured so far (the query's answer once the call's takes are done).
  std::size_t used() const { return used_; }

  /// `bytes` of scratch usable by work queued on exec's queue after this call, at an offset
  /// aligned to Workspace::kAlignment: owning (released in queue order when the last
  /// reference goes) when allocating, a non-owning view of the caller's buffer when carving,
  /// null when measuring. Throws invalid_argument (carve: the buffer is too small), or
  /// out_of_memory (allocate).
  std::shared_ptr<std::byte> take(const Exec& exec, std::size_t bytes);

 private:
  std::string_view op_;  // no copy: an arena is made on every call
  Workspace ws_;
  Mode mode_;
  std::size_t used_ = 0;
};

/// `n` rounded up to a multiple of Workspace::kAlignment (offsets inside a scratch block).
constexpr std::size_t align_scratch(std::size_t n) {
  return (n + Workspace::kAlignment - 1) / Workspace::kAlignment * Workspace::kAlignment;
}

/// The name under which a backend registers the scratch layout of `op`: an implementation
/// `void(const Exec&, const ConstImageView& src, const Params&)` that takes from
/// exec.scratch exactly what its op's implementation takes, and queues nothing.
inline std::string scratch_op(std::string_view op) {
  return std::string(op) + ".workspace";
}

}  // namespace pixflow::detail
