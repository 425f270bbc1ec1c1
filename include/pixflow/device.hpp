// Devices, queues and explicit copies between locations.
#pragma once

#include <string>
#include <vector>

#include "pixflow/image.hpp"

namespace pixflow {

/// Where an op runs. `automatic` follows the images (host -> cpu, cuda:N -> cuda);
/// `ref` is the scalar reference (host images), the tests' oracle.
enum class Backend { automatic, ref, cpu, cuda, opencl };
const char* backend_name(Backend b) noexcept;

/// A device backend's queue: a cudaStream_t for CUDA images (an OpenCL command queue for
/// OpenCL images). The default-constructed queue is the default queue of whatever device
/// the images are on (the legacy default stream on CUDA). Ops, copies and synchronisation
/// take a Queue of the images' kind; a queue of another kind is an invalid_argument.
struct Queue {
  Location::Kind kind = Location::Kind::host;
  void* handle = nullptr;

  static constexpr Queue cuda(void* stream) { return {Location::Kind::cuda, stream}; }
  static constexpr Queue opencl(void* command_queue) {
    return {Location::Kind::opencl, command_queue};
  }
  constexpr bool is_default() const { return handle == nullptr; }
  constexpr bool operator==(const Queue&) const = default;
};

/// Number of devices of a location kind that this build can use (0 when its backend is
/// compiled out or no device is present; 1 for host).
int device_count(Location::Kind kind) noexcept;
/// The device number of a `P:D` name (OpenCL: device D of platform P, in the order `pixflow
/// info` lists them), or -1 when there is none or the kind has no platforms.
int device_index(Location::Kind kind, int platform, int device) noexcept;
/// Number of CUDA devices visible (0 when CUDA is compiled out or no GPU is present).
int cuda_device_count() noexcept;
/// True when pixflow was compiled with the CUDA backend.
bool cuda_compiled() noexcept;
/// The backends this build registered implementations for (ref, cpu, cuda, ...).
std::vector<Backend> compiled_backends();
/// What a backend says of itself for `pixflow info` and the benchmarks, e.g. for `cpu`
/// "SIMD AVX2 (Highway run-time dispatch; targets AVX2, SSE4), threaded reference for the
/// rest" or "threaded reference (built without Highway)"; empty when it says nothing.
std::string backend_note(Backend b);
/// One line about a device (name, memory, compute capability) for `pixflow info`.
std::string describe_device(Location where);

/// Copies between any two locations (host/host, host/device, device/device) on `queue`
/// (of the device's kind; default = that device's default queue). Asynchronous for device
/// copies; the host buffer of an async host<->device copy must stay alive until the
/// queue reaches it.
void copy_async(ConstImageView src, ImageView dst, Queue queue = {});

/// Waits for all work on `queue` (default = the default queue) of device `where`.
void synchronize(Location where, Queue queue = {});

/// Host memory that devices can DMA from/to directly (cudaMallocHost); ordinary memory
/// when no device backend provides pinned memory.
Image pinned_image(std::int64_t width, std::int64_t height, Format fmt);

}  // namespace pixflow
