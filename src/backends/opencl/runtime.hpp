// The OpenCL backend's runtime: the devices of every platform, one context and default queue
// per device (made on first use and kept for the process), programs built once per (device,
// source, options) and their binaries cached on disk (program_cache.hpp), device buffers and
// the launch helper the op files use.
//
// Device memory. pixflow's images are (pointer, stride) views, and ROIs are pointer
// arithmetic; an OpenCL buffer is a handle. Each allocation therefore reserves a range of the
// process's address space of the buffer's size (mmap PROT_NONE: no memory behind it, never
// dereferenceable) and records range -> cl_mem. A view's pointer resolves to (buffer,
// offset) by that table (`resolve`); kernels take the buffer and the byte offset.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pixflow/image.hpp"
#include "src/base/backend.hpp"

namespace pixflow::opencl {

/// One device of one platform, as `pixflow info` lists it.
struct DeviceInfo {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  int platform_index = 0, device_index = 0;  ///< P:D, in the ICD loader's order
  std::string platform_name, platform_version, name, version, driver;
  std::uint64_t global_mem = 0, local_mem = 0;
  unsigned compute_units = 0;
  bool fp64 = false;
  bool rounded_divide = false;  ///< CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT (float / and sqrt)
};

/// Every device of every platform (GPU, CPU, accelerator), platform by platform. Never
/// throws: a broken platform is skipped. Location::opencl(n) is the n-th entry.
const std::vector<DeviceInfo>& devices() noexcept;

/// The index of device `d` of platform `p` (for `--device P:D`), or -1.
int device_index(int platform, int device) noexcept;

/// Throws pixflow::Error (backend_error; out_of_memory for the allocation failures) when
/// err is not CL_SUCCESS: "<op>: OpenCL <what> failed on opencl:<n> (<device>): <CL_NAME>".
void check(cl_int err, std::string_view op, int device, const char* what);

/// The device's context and default (in-order) queue, made on first use; throws
/// backend_unavailable for an index past devices() and backend_error when the driver fails.
cl_context context(int device);
cl_command_queue default_queue(int device);

/// The program of embedded source `source` (kernels/<source>.cl after the common prelude)
/// built for `device` with `options`, made once per (device, source, options) and kept: from
/// the disk cache's binary when it has one, else from source (and then saved there); a build
/// failure throws backend_error naming `op`, the device and the build log's first lines.
cl_program program(int device, std::string_view source, const std::string& options,
                   std::string_view op);

/// What the disk cache of program binaries (program_cache.hpp) did in this process; for the
/// tests and scripts/opencl-cache-timing.sh.
struct ProgramCacheStats {
  std::uint64_t built = 0;     ///< programs built from source
  std::uint64_t loaded = 0;    ///< programs made from a cached binary
  std::uint64_t saved = 0;     ///< binaries written
  std::uint64_t unsaved = 0;   ///< binaries that could not be written (folder not writable, ...)
  std::uint64_t corrupt = 0;   ///< files deleted for a bad header, size or checksum
  std::uint64_t rejected = 0;  ///< files deleted because the driver refused their binary
};
ProgramCacheStats program_cache_stats() noexcept;

/// The disk cache's folder as the environment sets it now ("" when off).
std::string program_cache_folder();

/// Releases the programs this process built for `device` (kernel objects made from them stay
/// valid), so that the next kernel() loads or builds them again: how the tests check the disk
/// cache without starting a process per case. Not while other threads launch on the device.
void forget_programs(int device);

/// Device memory of `bytes` on `device` at a reserved address (see above); the deleter
/// releases both.
std::shared_ptr<std::byte> allocate(int device, std::size_t bytes);

/// The buffer and byte offset behind a pointer into an allocation of `device`; throws
/// invalid_argument naming `op` when the pointer is in none.
struct BufferRef {
  cl_mem mem = nullptr;
  std::size_t offset = 0;
  std::size_t size = 0;  ///< bytes of the allocation after `offset`
};
BufferRef resolve(const void* p, int device, std::string_view op);

/// What an OpenCL entry point gets from the call: its device and queue (never null).
struct Launch {
  int device = 0;
  cl_command_queue queue = nullptr;
};

/// Throws unsupported naming `op` when the launch's device has no double precision
/// (cl_khr_fp64), which the op's rule needs.
void require_fp64(const Launch& l, std::string_view op);

/// A per-call buffer of `bytes` on the launch's device, its contents copied from `data` when
/// given (at creation, CL_MEM_COPY_HOST_PTR: no command on the call's queue, no wait for it to
/// drain; `data` may be freed on return): `mem` for a kernel argument; `owner` keeps it alive
/// (releasing it while kernels that use it are queued is safe: the driver frees it when they
/// finish).
struct DeviceBuffer {
  std::shared_ptr<std::byte> owner;
  cl_mem mem = nullptr;
};
DeviceBuffer device_buffer(const Launch& l, std::size_t bytes, std::string_view op,
                           const void* data = nullptr);

/// Builds a kernel's argument list and enqueues it. Images go in as three arguments
/// (buffer, ulong byte offset, long stride in bytes).
///
/// Kernel objects are pooled per (program, kernel name) on the device: a Kernel borrows one
/// for its lifetime (clSetKernelArg is not thread-safe on a shared object, so no two Kernels
/// hold the same one) and gives it back; the arguments are captured at enqueue, so a pooled
/// object is reused at once. clCreateKernel per launch was part of the 10-14 us that NVIDIA's
/// OpenCL spent per call at 1920x1080 (bench/NOTES.md, session 22).
class Kernel {
 public:
  Kernel(const Launch& l, std::string_view source, const std::string& options, const char* name,
         std::string_view op);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  template <class T>
  Kernel& arg(const T& v) {
    set(sizeof(T), &v);
    return *this;
  }
  Kernel& image(const ConstImageView& v);
  Kernel& image(const ImageView& v) { return image(ConstImageView(v)); }
  /// Local memory of `bytes` for the next __local argument.
  Kernel& local(std::size_t bytes);
  /// The kernel's static local memory (its __local arrays: CL_KERNEL_LOCAL_MEM_SIZE).
  std::size_t static_local_bytes() const;
  /// Enqueues over a 2-D range of `gx` x `gy` work-items in groups of lx x ly (gx, gy are
  /// rounded up to multiples of the group; the kernel checks its bounds).
  void run(std::size_t gx, std::size_t gy, std::size_t lx, std::size_t ly);

 private:
  void set(std::size_t bytes, const void* value);
  Launch launch_;
  std::string_view op_;
  cl_program prog_ = nullptr;
  const char* name_ = nullptr;
  cl_kernel k_ = nullptr;  // borrowed from the device's pool, given back by the destructor
  cl_uint next_ = 0;
};

/// Whether kernel `name` of `source` built with `options` fits the device's local memory
/// (its static __local arrays within CL_DEVICE_LOCAL_MEM_SIZE): a kernel sized for the H100's
/// 48 KiB would fail to launch (CL_OUT_OF_RESOURCES) on a device with less, e.g. oclgrind's
/// 32 KiB, so its caller takes another schedule there.
bool fits_local_memory(const Launch& l, std::string_view source, const std::string& options,
                       const char* name, std::string_view op);

/// The OpenCL C type name of a depth ("uchar", "ushort", "short", "int", "float").
const char* cl_type(Depth d);

/// -D options naming a depth: "-DT=uchar -DDEPTH_U8=1" (prefix "T" by default).
std::string depth_options(Depth d, const char* prefix = "T");

}  // namespace pixflow::opencl
