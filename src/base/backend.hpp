// The backend plug-in interface. A backend is one folder under src/backends/ whose files
// register, into an ImplTable, (1) their implementations of ops — keyed by op name and
// backend, with the depths and channel counts each one takes — and (2) for a device
// backend, a DeviceApi for its location kind. Core validates a call, picks the backend
// from the images' location, makes their device current and calls the registered
// implementation; it knows no backend by name and has no #if per backend.
//
// Registration: a backend source file holds
//   PIXFLOW_REGISTER_IMPLS(cuda_median) { table.add<...>("median", Backend::cuda, fn); }
// and the build (CMakeLists.txt) collects every PIXFLOW_REGISTER_IMPLS of the backends it
// compiles into one generated function that core calls once (static initialisers would be
// dropped by the linker from a static library).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

#include "pixflow/device.hpp"
#include "pixflow/image.hpp"
#include "pixflow/ops.hpp"

namespace pixflow::detail {

class DeviceApi;
class ScratchArena;

/// What an implementation receives besides its images and parameters.
struct Exec {
  Backend backend = Backend::ref;
  Location location;                  ///< where the call's images live (current device)
  void* queue = nullptr;              ///< native queue (cudaStream_t, ...); null = default
  int threads = 0;                    ///< host backends: worker cap (0 = all cores)
  const DeviceApi* device = nullptr;  ///< the location's device interface; null for host
  /// Where the call's scratch comes from (src/base/scratch.hpp): the caller's workspace, a
  /// stream-ordered allocation, or a size query. Set by core for every call.
  ScratchArena* scratch = nullptr;
};

/// The depths and channel counts one implementation takes (bit masks).
struct Support {
  std::uint32_t depths = ~0u;    ///< bit (1 << int(Depth))
  std::uint32_t channels = ~0u;  ///< bit (1 << channels)

  static Support of(std::initializer_list<Depth> ds, std::initializer_list<int> cs = {}) {
    Support s;
    if (ds.size()) {
      s.depths = 0;
      for (Depth d : ds) s.depths |= 1u << int(d);
    }
    if (cs.size()) {
      s.channels = 0;
      for (int c : cs) s.channels |= 1u << c;
    }
    return s;
  }
  bool takes(Format f) const {
    return (depths >> int(f.depth) & 1u) && f.channels >= 0 && f.channels < 32 &&
           (channels >> f.channels & 1u);
  }
};

/// One device kind's memory, copies, queues and current device.
class DeviceApi {
 public:
  virtual ~DeviceApi() = default;
  virtual Location::Kind kind() const noexcept = 0;
  virtual const char* name() const noexcept = 0;  ///< "cuda"
  /// Devices visible (0 when none; never throws).
  virtual int count() const noexcept = 0;
  /// One line describing device n for `pixflow info`.
  virtual std::string describe(int device) const = 0;

  /// `bytes` of device memory on `device`; the deleter frees it. Throws out_of_memory.
  virtual std::shared_ptr<std::byte> allocate(int device, std::size_t bytes) const = 0;
  /// Workspace ordered on `queue`: usable by work enqueued on `queue` after this call and
  /// released on `queue` when the last reference goes (no host synchronisation).
  virtual std::shared_ptr<std::byte> workspace(int device, std::size_t bytes,
                                               void* queue) const = 0;
  /// Host memory the device can DMA from and to.
  virtual std::shared_ptr<std::byte> pinned(std::size_t bytes) const = 0;

  /// Copies `rows` rows of `row_bytes` between host and this kind's devices (either side may
  /// be host) on `queue`; waits for the copy when `synchronous`.
  virtual void copy_2d(void* dst, std::size_t dst_stride, Location dst_loc, const void* src,
                       std::size_t src_stride, Location src_loc, std::size_t row_bytes,
                       std::size_t rows, void* queue, bool synchronous) const = 0;
  /// Waits for everything enqueued on `queue` (null = the device's default queue).
  virtual void synchronize(int device, void* queue) const = 0;

  /// The device a queue belongs to, or -1 when it cannot be told (the default queue, or no
  /// way to ask): a queue of one device used with images of another is refused by dispatch.
  virtual int queue_device(void* queue) const {
    (void)queue;
    return -1;
  }

  /// The device number of member `member` of group `group` (OpenCL: device D of platform P,
  /// `--device P:D`), or -1 when there is none or the kind has no groups.
  virtual int index_of(int group, int member) const noexcept {
    (void)group;
    (void)member;
    return -1;
  }

  /// Makes `device` current on the calling thread; returns the previous one for `leave`.
  virtual int enter(int device) const = 0;
  virtual void leave(int previous) const noexcept = 0;
};

/// Makes a device current for a scope (no-op for host locations).
class DeviceScope {
 public:
  DeviceScope(const DeviceApi* api, int device) : api_(api) {
    if (api_) prev_ = api_->enter(device);
  }
  ~DeviceScope() {
    if (api_) api_->leave(prev_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  const DeviceApi* api_;
  int prev_ = 0;
};

/// Implementations of one call shape: void(const Exec&, Args...).
template <class... Args>
using ImplFn = void (*)(const Exec&, Args...);

/// The table every backend registers into: (op, backend) -> implementations with their
/// support, plus one DeviceApi per device kind.
class ImplTable {
 public:
  /// Registers fn for `op` on backend `b` for the formats `s` takes. The signature is
  /// checked at lookup: core and the backend must agree on Args.
  template <class... Args>
  void add(std::string_view op, Backend b, ImplFn<Args...> fn, Support s = {}) {
    impls_[{std::string(op), b}].push_back(
        {reinterpret_cast<void (*)()>(fn), &typeid(ImplFn<Args...>), s, false});
  }
  /// Registers fn as the backend's answer for whatever none of its `add` entries takes
  /// (the `cpu` backend: the threaded reference behind its SIMD kernels), whatever the
  /// order in which the backend's files register.
  template <class... Args>
  void add_fallback(std::string_view op, Backend b, ImplFn<Args...> fn, Support s = {}) {
    impls_[{std::string(op), b}].push_back(
        {reinterpret_cast<void (*)()>(fn), &typeid(ImplFn<Args...>), s, true});
  }
  void add_device(std::unique_ptr<DeviceApi> api) { devices_.push_back(std::move(api)); }

  /// The implementation of `op` on `b` that takes `f`, or nullptr (no entry for f);
  /// `any` tells whether the backend has the op at all (for the error message).
  template <class... Args>
  ImplFn<Args...> find(std::string_view op, Backend b, Format f, bool* any = nullptr) const {
    auto it = impls_.find({std::string(op), b});
    if (any) *any = it != impls_.end();
    if (it == impls_.end()) return nullptr;
    // An op may have several call shapes (arith with an image or a scalar): the entry
    // must match both the signature core calls with and the format.
    for (bool fallback : {false, true})
      for (const Entry& e : it->second)
        if (e.fallback == fallback && *e.signature == typeid(ImplFn<Args...>) && e.support.takes(f))
          return reinterpret_cast<ImplFn<Args...>>(e.fn);
    return nullptr;
  }
  const DeviceApi* device(Location::Kind kind) const {
    for (const auto& d : devices_)
      if (d->kind() == kind) return d.get();
    return nullptr;
  }
  /// Backends with at least one implementation, in enum order.
  std::vector<Backend> backends() const;
  /// Whether backend `b` registered anything for `op`.
  bool has(std::string_view op, Backend b) const { return impls_.count({std::string(op), b}); }
  const std::vector<std::unique_ptr<DeviceApi>>& devices() const { return devices_; }
  /// A line a backend says of itself (pixflow::backend_note).
  void set_note(Backend b, std::string text) { notes_[b] = std::move(text); }
  std::string note(Backend b) const {
    auto it = notes_.find(b);
    return it == notes_.end() ? std::string() : it->second;
  }

 private:
  struct Entry {
    void (*fn)();
    const std::type_info* signature;
    Support support;
    bool fallback;  ///< consulted only when no other entry of the op takes the call
  };
  std::map<std::pair<std::string, Backend>, std::vector<Entry>, std::less<>> impls_;
  std::vector<std::unique_ptr<DeviceApi>> devices_;
  std::map<Backend, std::string> notes_;
};

/// The process-wide table, filled on first use by every compiled backend.
const ImplTable& impl_table();

}  // namespace pixflow::detail

/// Defines the registration function `name` of a backend file (see the top of this file).
#define PIXFLOW_REGISTER_IMPLS(name) \
  void pixflow_register_##name(::pixflow::detail::ImplTable& table)
