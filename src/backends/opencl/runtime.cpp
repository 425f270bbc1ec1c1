// The OpenCL runtime (runtime.hpp): devices, contexts, queues, programs, buffers, launches.
#include "src/backends/opencl/runtime.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <string_view>
#include <vector>

#include "src/backends/opencl/program_cache.hpp"
#include "src/base/error.hpp"

namespace pixflow::opencl {

namespace {

const char* cl_error_name(cl_int e) {
  switch (e) {
#define PIXFLOW_CL_ERR(x) \
  case x:                 \
    return #x;
    PIXFLOW_CL_ERR(CL_DEVICE_NOT_FOUND)
    PIXFLOW_CL_ERR(CL_DEVICE_NOT_AVAILABLE)
    PIXFLOW_CL_ERR(CL_COMPILER_NOT_AVAILABLE)
    PIXFLOW_CL_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    PIXFLOW_CL_ERR(CL_OUT_OF_RESOURCES)
    PIXFLOW_CL_ERR(CL_OUT_OF_HOST_MEMORY)
    PIXFLOW_CL_ERR(CL_BUILD_PROGRAM_FAILURE)
    PIXFLOW_CL_ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    PIXFLOW_CL_ERR(CL_INVALID_VALUE)
    PIXFLOW_CL_ERR(CL_INVALID_DEVICE)
    PIXFLOW_CL_ERR(CL_INVALID_CONTEXT)
    PIXFLOW_CL_ERR(CL_INVALID_COMMAND_QUEUE)
    PIXFLOW_CL_ERR(CL_INVALID_MEM_OBJECT)
    PIXFLOW_CL_ERR(CL_INVALID_BUILD_OPTIONS)
    PIXFLOW_CL_ERR(CL_INVALID_PROGRAM)
    PIXFLOW_CL_ERR(CL_INVALID_PROGRAM_EXECUTABLE)
    PIXFLOW_CL_ERR(CL_INVALID_KERNEL_NAME)
    PIXFLOW_CL_ERR(CL_INVALID_KERNEL)
    PIXFLOW_CL_ERR(CL_INVALID_ARG_INDEX)
    PIXFLOW_CL_ERR(CL_INVALID_ARG_VALUE)
    PIXFLOW_CL_ERR(CL_INVALID_ARG_SIZE)
    PIXFLOW_CL_ERR(CL_INVALID_KERNEL_ARGS)
    PIXFLOW_CL_ERR(CL_INVALID_WORK_DIMENSION)
    PIXFLOW_CL_ERR(CL_INVALID_WORK_GROUP_SIZE)
    PIXFLOW_CL_ERR(CL_INVALID_WORK_ITEM_SIZE)
    PIXFLOW_CL_ERR(CL_INVALID_GLOBAL_OFFSET)
    PIXFLOW_CL_ERR(CL_INVALID_EVENT_WAIT_LIST)
    PIXFLOW_CL_ERR(CL_INVALID_OPERATION)
    PIXFLOW_CL_ERR(CL_INVALID_BUFFER_SIZE)
    PIXFLOW_CL_ERR(CL_INVALID_GLOBAL_WORK_SIZE)
    PIXFLOW_CL_ERR(CL_INVALID_PLATFORM)
    PIXFLOW_CL_ERR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
#undef PIXFLOW_CL_ERR
  }
  return "an OpenCL error";
}

std::string info_string(cl_platform_id p, cl_platform_info what) {
  std::size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (clGetPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
  s.resize(std::strlen(s.c_str()));
  return s;
}

std::string info_string(cl_device_id d, cl_device_info what) {
  std::size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (clGetDeviceInfo(d, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
  s.resize(std::strlen(s.c_str()));
  return s;
}

template <class T>
T info_value(cl_device_id d, cl_device_info what) {
  T v{};
  if (clGetDeviceInfo(d, what, sizeof v, &v, nullptr) != CL_SUCCESS) return T{};
  return v;
}

std::vector<DeviceInfo> enumerate() {
  std::vector<DeviceInfo> out;
  cl_uint np = 0;
  if (clGetPlatformIDs(0, nullptr, &np) != CL_SUCCESS || np == 0) return out;
  std::vector<cl_platform_id> ps(np);
  if (clGetPlatformIDs(np, ps.data(), nullptr) != CL_SUCCESS) return out;
  for (cl_uint pi = 0; pi < np; ++pi) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(ps[pi], CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0)
      continue;
    std::vector<cl_device_id> ds(nd);
    if (clGetDeviceIDs(ps[pi], CL_DEVICE_TYPE_ALL, nd, ds.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_uint di = 0; di < nd; ++di) {
      DeviceInfo d;
      d.platform = ps[pi];
      d.id = ds[di];
      d.platform_index = int(pi);
      d.device_index = int(di);
      d.platform_name = info_string(ps[pi], CL_PLATFORM_NAME);
      d.platform_version = info_string(ps[pi], CL_PLATFORM_VERSION);
      d.name = info_string(ds[di], CL_DEVICE_NAME);
      d.version = info_string(ds[di], CL_DEVICE_VERSION);
      d.driver = info_string(ds[di], CL_DRIVER_VERSION);
      d.global_mem = info_value<cl_ulong>(ds[di], CL_DEVICE_GLOBAL_MEM_SIZE);
      d.local_mem = info_value<cl_ulong>(ds[di], CL_DEVICE_LOCAL_MEM_SIZE);
      d.compute_units = info_value<cl_uint>(ds[di], CL_DEVICE_MAX_COMPUTE_UNITS);
      d.fp64 = info_string(ds[di], CL_DEVICE_EXTENSIONS).find("cl_khr_fp64") != std::string::npos;
      d.rounded_divide = (info_value<cl_device_fp_config>(ds[di], CL_DEVICE_SINGLE_FP_CONFIG) &
                          CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
      d.little_endian = info_value<cl_bool>(ds[di], CL_DEVICE_ENDIAN_LITTLE) == CL_TRUE;
      if (d.platform_name.find("NVIDIA") != std::string::npos) {
        constexpr cl_device_info kComputeCapabilityMajorNv = 0x4000;
        d.nv_cc_major = info_value<cl_uint>(ds[di], kComputeCapabilityMajorNv);
      }
      out.push_back(std::move(d));
    }
  }
  return out;
}

std::string where(int device) {
  const auto& ds = devices();
  if (device < 0 || device >= int(ds.size())) return detail::cat("opencl:", device);
  return detail::cat("opencl:", device, " (", ds[std::size_t(device)].name, ")");
}

// One program of a device: made once, under its own lock, so that building one program does
// not hold up threads that want another (every OpenCL 1.2 call but clSetKernelArg is
// thread-safe, clBuildProgram on distinct programs included).
struct ProgramSlot {
  std::mutex mu;
  cl_program prog = nullptr;  // null until built (a failed build leaves it null: tried again)
};

// One device's context, default queue and built programs, for the life of the process
// (NVIDIA's context creation alone takes about 2 s: never per call).
struct DeviceState {
  cl_context ctx = nullptr;
  cl_command_queue queue = nullptr;
  std::mutex mu;  // programs (the map; each slot has its own lock)
  std::map<std::string, std::shared_ptr<ProgramSlot>, std::less<>> programs;
  // Kernel objects not borrowed by a Kernel now, per (program, name); kept for the process
  // like the programs (at most as many per key as launches ever ran at once).
  std::mutex pool_mu;
  std::map<std::pair<cl_program, std::string>, std::vector<cl_kernel>> pool;
};

DeviceState& state(int device) {
  const auto& ds = devices();
  detail::require(device >= 0 && device < int(ds.size()), Status::backend_unavailable, "opencl",
                  "no device opencl:", device, " (", ds.size(), " OpenCL devices visible)");
  static std::mutex mu;
  static std::map<int, std::unique_ptr<DeviceState>> states;
  std::lock_guard<std::mutex> lock(mu);
  auto& s = states[device];
  if (!s) {
    auto fresh = std::make_unique<DeviceState>();
    const DeviceInfo& d = ds[std::size_t(device)];
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                           reinterpret_cast<cl_context_properties>(d.platform), 0};
    cl_int err = CL_SUCCESS;
    fresh->ctx = clCreateContext(props, 1, &d.id, nullptr, nullptr, &err);
    check(err, "opencl", device, "clCreateContext");
    fresh->queue = clCreateCommandQueue(fresh->ctx, d.id, 0, &err);
    if (err != CL_SUCCESS) clReleaseContext(fresh->ctx);
    check(err, "opencl", device, "clCreateCommandQueue");
    s = std::move(fresh);
  }
  return *s;
}

// The first lines of a build log, for an error message.
std::string log_head(const std::string& log, int lines) {
  std::istringstream in(log);
  std::string line, out;
  for (int i = 0; i < lines && std::getline(in, line); ++i) out += "\n  " + line;
  return out;
}

std::string build_log(cl_program prog, cl_device_id id) {
  std::size_t n = 0;
  std::string log;
  if (clGetProgramBuildInfo(prog, id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) == CL_SUCCESS &&
      n > 1) {
    log.resize(n);
    (void)clGetProgramBuildInfo(prog, id, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
    log.resize(std::strlen(log.c_str()));
  }
  return log;
}

// The program from the disk cache's binary, or null when there is none or the driver refuses
// it (then the file is deleted and the caller builds from source: a stale or damaged cache
// never shows as an error).
cl_program from_binary(const DeviceState& s, const DeviceInfo& info, const std::string& dir,
                       const program_cache::Key& key, const std::string& opts) {
  const std::vector<unsigned char> bin = program_cache::load(dir, key);
  if (bin.empty()) return nullptr;
  const unsigned char* data = bin.data();
  const std::size_t len = bin.size();
  cl_int status = CL_INVALID_BINARY, err = CL_SUCCESS;
  cl_program prog = clCreateProgramWithBinary(s.ctx, 1, &info.id, &len, &data, &status, &err);
  if (err == CL_SUCCESS && status == CL_SUCCESS)
    err = clBuildProgram(prog, 1, &info.id, opts.c_str(), nullptr, nullptr);
  if (err == CL_SUCCESS && status == CL_SUCCESS) {
    program_cache::note_loaded();
    return prog;
  }
  if (prog) clReleaseProgram(prog);
  program_cache::reject(dir, key);
  return nullptr;
}

// Writes a program's binary (for its one device) to the disk cache; failures are the cache's
// business (counted), never the caller's.
void to_disk(cl_program prog, const std::string& dir, const program_cache::Key& key) {
  std::size_t n = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof n, &n, nullptr) != CL_SUCCESS ||
      n == 0)
    return;
  std::vector<unsigned char> bin(n);
  unsigned char* data = bin.data();
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof data, &data, nullptr) != CL_SUCCESS)
    return;
  program_cache::save(dir, key, bin);
}

cl_program make_program(int device, const DeviceState& s, std::string_view source,
                        const std::string& options, std::string_view op) {
  const std::string_view prelude = kernel_source("common"), body = kernel_source(source);
  detail::require(!body.empty(), Status::internal, op, "no OpenCL kernel source '", source, "'");
  const std::string text = detail::cat(prelude, "\n", body);
  // Float division and sqrt correctly rounded, as on the host: without it OpenCL allows
  // 2.5 ulp, and NVIDIA's compiler turned bilateral's (float)((double)a / (double)b) into
  // its approximate div.full.f32 (PTX of session 21), one ulp off the reference.
  // PIXFLOW_OCLGRIND on oclgrind's simulator: its interpreter (21.10) lacks some LLVM
  // intrinsics clang makes of plain OpenCL C (llvm.fshl of a two-word byte shift), so a kernel
  // writes those lines another way there (the same bytes; kernels/linear.cl shl_ch).
  const DeviceInfo& info = devices()[std::size_t(device)];
  const std::string opts =
      std::string("-cl-std=CL1.2 -Werror ") +
      (info.rounded_divide ? "-cl-fp32-correctly-rounded-divide-sqrt " : "") +
      (info.name.find("Oclgrind") != std::string::npos ? "-DPIXFLOW_OCLGRIND=1 " : "") + options;
  const std::string dir = program_cache::folder();
  program_cache::Key key;
  if (!dir.empty()) {
    key = program_cache::key_of(info, source, text, opts);
    if (cl_program prog = from_binary(s, info, dir, key, opts)) return prog;
  }
  const char* str = text.c_str();
  const std::size_t len = text.size();
  cl_int err = CL_SUCCESS;
  cl_program prog = clCreateProgramWithSource(s.ctx, 1, &str, &len, &err);
  check(err, op, device, "clCreateProgramWithSource");
  err = clBuildProgram(prog, 1, &info.id, opts.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    const std::string log = build_log(prog, info.id);
    clReleaseProgram(prog);
    detail::fail(Status::backend_error, op, "building the OpenCL program '", source, "' (", options,
                 ") failed on ", where(device), ": ", cl_error_name(err), log_head(log, 8));
  }
  program_cache::note_built();
  if (!dir.empty()) to_disk(prog, dir, key);
  return prog;
}

cl_program build(int device, DeviceState& s, std::string_view source, const std::string& options,
                 std::string_view op) {
  std::shared_ptr<ProgramSlot> slot;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto& p = s.programs[detail::cat(source, "|", options)];
    if (!p) p = std::make_shared<ProgramSlot>();
    slot = p;
  }
  std::lock_guard<std::mutex> lock(slot->mu);
  if (!slot->prog) slot->prog = make_program(device, s, source, options, op);
  return slot->prog;
}

// The reserved address ranges of the live buffers.
struct Region {
  std::size_t size;
  cl_mem mem;
  int device;
};
std::mutex g_regions_mu;
std::map<std::uintptr_t, Region> g_regions;

std::size_t page_round(std::size_t bytes) {
  static const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE));
  return (std::max<std::size_t>(bytes, 1) + page - 1) / page * page;
}

// PIXFLOW_OPENCL_LAUNCH_LOG=<file>: every launch appends "<kernel function> <build options>"
// to the file (a debugging aid; the oclgrind pass, scripts/oclgrind-check.sh, proves with it
// that every __kernel of kernels/*.cl ran). Unset: one cached null check per launch.
void log_launch(cl_kernel k) {
  static const char* const path = std::getenv("PIXFLOW_OPENCL_LAUNCH_LOG");
  if (!path || !*path) return;
  char name[128] = {};
  cl_program prog = nullptr;
  std::string opts;
  (void)clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, nullptr);
  (void)clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof prog, &prog, nullptr);
  cl_device_id dev = nullptr;
  std::size_t n = 0;
  if (prog && clGetProgramInfo(prog, CL_PROGRAM_DEVICES, sizeof dev, &dev, nullptr) == CL_SUCCESS &&
      clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_OPTIONS, 0, nullptr, &n) == CL_SUCCESS &&
      n > 1) {
    opts.resize(n);
    (void)clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_OPTIONS, n, opts.data(), nullptr);
    opts.resize(std::strlen(opts.c_str()));
  }
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (std::FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s %s\n", name, opts.c_str());
    std::fclose(f);
  }
}

}  // namespace

const std::vector<DeviceInfo>& devices() noexcept {
  static const std::vector<DeviceInfo> ds = [] {
    try {
      return enumerate();
    } catch (...) {
      return std::vector<DeviceInfo>{};
    }
  }();
  return ds;
}

int device_index(int platform, int device) noexcept {
  const auto& ds = devices();
  for (std::size_t i = 0; i < ds.size(); ++i)
    if (ds[i].platform_index == platform && ds[i].device_index == device) return int(i);
  return -1;
}

void check(cl_int err, std::string_view op, int device, const char* what) {
  if (err == CL_SUCCESS) return;
  const bool oom = err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_HOST_MEMORY ||
                   err == CL_INVALID_BUFFER_SIZE;
  throw Error(oom ? Status::out_of_memory : Status::backend_error,
              detail::cat(op, ": OpenCL ", what, " failed on ", where(device), ": ",
                          cl_error_name(err), " (", err, ")"));
}

cl_context context(int device) {
  return state(device).ctx;
}

cl_command_queue default_queue(int device) {
  return state(device).queue;
}

void forget_programs(int device) {
  DeviceState& s = state(device);
  std::map<std::string, std::shared_ptr<ProgramSlot>, std::less<>> dropped;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    dropped.swap(s.programs);
  }
  decltype(s.pool) kernels;
  {
    std::lock_guard<std::mutex> lock(s.pool_mu);
    kernels.swap(s.pool);
  }
  for (auto& [key, ks] : kernels)
    for (cl_kernel k : ks) clReleaseKernel(k);
  for (auto& [key, slot] : dropped) {
    std::lock_guard<std::mutex> lock(slot->mu);
    if (slot->prog) clReleaseProgram(slot->prog);
    slot->prog = nullptr;
  }
}

cl_program program(int device, std::string_view source, const std::string& options,
                   std::string_view op) {
  return build(device, state(device), source, options, op);
}

namespace {

// allocate(), the buffer's contents copied from `init` (bytes of it) when not null: by
// CL_MEM_COPY_HOST_PTR, at creation, so no command goes on any queue and nobody waits for
// the queue to drain (a blocking clEnqueueWriteBuffer on the call's queue did, for every
// call of the ops that upload taps).
std::shared_ptr<std::byte> allocate_from(int device, std::size_t bytes, const void* init) {
  const cl_context ctx = context(device);
  const std::size_t reserved = page_round(bytes);
  cl_int err = CL_SUCCESS;
  cl_mem mem =
      clCreateBuffer(ctx, init ? CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR : CL_MEM_READ_WRITE,
                     std::max<std::size_t>(bytes, 1), const_cast<void*>(init), &err);
  check(err, "image", device, "clCreateBuffer");
  void* addr =
      mmap(nullptr, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (addr == MAP_FAILED) {
    clReleaseMemObject(mem);
    detail::fail(Status::out_of_memory, "image", "cannot reserve ", reserved,
                 " bytes of address space for an OpenCL buffer");
  }
  {
    std::lock_guard<std::mutex> lock(g_regions_mu);
    g_regions[reinterpret_cast<std::uintptr_t>(addr)] = {std::max<std::size_t>(bytes, 1), mem,
                                                         device};
  }
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(addr), [reserved](std::byte* p) {
    cl_mem m = nullptr;
    {
      std::lock_guard<std::mutex> lock(g_regions_mu);
      auto it = g_regions.find(reinterpret_cast<std::uintptr_t>(p));
      if (it != g_regions.end()) {
        m = it->second.mem;
        g_regions.erase(it);
      }
    }
    munmap(p, reserved);
    // The driver frees the memory once the commands queued on it have finished.
    if (m) clReleaseMemObject(m);
  });
}

}  // namespace

std::shared_ptr<std::byte> allocate(int device, std::size_t bytes) {
  return allocate_from(device, bytes, nullptr);
}

namespace {

// The queue-ordered workspace (see runtime.hpp). Free blocks are kept per (device, queue):
// a block released by a call goes back to the list of the queue its commands went to, and
// only a later call on that in-order queue takes it again, so its commands run after every
// command that used the block before (what cudaMallocAsync's stream-ordered pool gives CUDA).
// Each queue that has a list is retained (its handle cannot be reused for another queue while
// blocks wait on it); a list whose queue only the pool still holds is dropped.
struct PooledBlock {
  std::shared_ptr<std::byte> owner;  // allocate()'s: the buffer and its address range
  std::size_t bytes = 0;
};
struct QueuePool {
  int device = 0;
  std::vector<PooledBlock> free;
};
struct WorkspacePool {
  std::mutex mu;
  std::map<cl_command_queue, QueuePool> queues;
  std::map<int, std::size_t> held;  // bytes in free lists, per device
};
WorkspacePool& workspace_pool() {
  static WorkspacePool* p = new WorkspacePool;  // never destroyed: its buffers live as long
  return *p;                                    // as the contexts (the process)
}

// At most this many bytes of a device wait in free lists (an eighth of its memory: an
// 8192 x 8192 x 3 image of int sums is 768 MiB), and a block serves requests of half its
// size and more (a small call does not pin a large block).
std::size_t pool_cap(int device) {
  return std::size_t(devices()[std::size_t(device)].global_mem / 8);
}

// Releases the lists of queues only the pool still holds, and `device`'s whole pool when
// `all` (an allocation failed: the memory goes back before the retry). Called under the lock.
void trim_pool(WorkspacePool& p, int device, bool all, std::vector<PooledBlock>& dropped,
               std::vector<cl_command_queue>& queues) {
  for (auto it = p.queues.begin(); it != p.queues.end();) {
    cl_uint refs = 0;
    const bool orphan = clGetCommandQueueInfo(it->first, CL_QUEUE_REFERENCE_COUNT, sizeof refs,
                                              &refs, nullptr) == CL_SUCCESS &&
                        refs <= 1;
    if (orphan || (all && it->second.device == device)) {
      for (PooledBlock& b : it->second.free) {
        p.held[it->second.device] -= b.bytes;
        dropped.push_back(std::move(b));
      }
      queues.push_back(it->first);
      it = p.queues.erase(it);
    } else {
      ++it;
    }
  }
}

bool pool_enabled() {
  const char* v = std::getenv("PIXFLOW_OCL_POOL");
  return !(v && std::string_view(v) == "off");
}

bool in_order(cl_command_queue q) {
  cl_command_queue_properties props = 0;
  return clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, nullptr) ==
             CL_SUCCESS &&
         (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0;
}

}  // namespace

std::shared_ptr<std::byte> workspace(int device, std::size_t bytes, cl_command_queue queue) {
  bytes = std::max<std::size_t>(bytes, 1);
  if (queue == nullptr) queue = default_queue(device);
  if (!pool_enabled() || !in_order(queue)) return allocate(device, bytes);
  WorkspacePool& p = workspace_pool();
  std::shared_ptr<std::byte> owner;
  std::size_t size = 0;
  {
    std::lock_guard<std::mutex> lock(p.mu);
    auto it = p.queues.find(queue);
    if (it != p.queues.end()) {
      auto& f = it->second.free;
      auto best = f.end();
      for (auto b = f.begin(); b != f.end(); ++b)
        if (b->bytes >= bytes && b->bytes / 2 <= bytes &&
            (best == f.end() || b->bytes < best->bytes))
          best = b;
      if (best != f.end()) {
        owner = std::move(best->owner);
        size = best->bytes;
        p.held[device] -= size;
        f.erase(best);
      }
    }
  }
  if (!owner) {
    size = bytes;
    try {
      owner = allocate(device, bytes);
    } catch (const Error& e) {
      if (e.status() != Status::out_of_memory) throw;
      // The free lists may hold the memory: give all of this device's back and try once more.
      std::vector<PooledBlock> dropped;
      std::vector<cl_command_queue> queues;
      {
        std::lock_guard<std::mutex> lock(p.mu);
        trim_pool(p, device, true, dropped, queues);
      }
      dropped.clear();
      for (cl_command_queue q : queues) clReleaseCommandQueue(q);
      owner = allocate(device, bytes);
    }
  }
  std::byte* addr = owner.get();
  // The call's handle: when the call drops it, the block goes back to the queue's list (or is
  // released, past the cap or with the pool switched off since).
  return std::shared_ptr<std::byte>(
      addr, [owner = std::move(owner), size, device, queue](std::byte*) mutable {
        std::vector<PooledBlock> dropped;
        std::vector<cl_command_queue> queues;
        {
          WorkspacePool& pool = workspace_pool();
          std::lock_guard<std::mutex> lock(pool.mu);
          try {
            if (pool_enabled() && pool.held[device] + size <= pool_cap(device)) {
              auto [it, fresh] = pool.queues.try_emplace(queue);
              if (fresh) {
                it->second.device = device;
                clRetainCommandQueue(queue);
              }
              it->second.free.push_back({std::move(owner), size});
              pool.held[device] += size;
            }
            trim_pool(pool, device, false, dropped, queues);
          } catch (const std::bad_alloc&) {
            // No host memory for the list: the block is released instead of kept.
          }
        }
        dropped.clear();  // outside the lock: releasing a buffer may wait in the driver
        owner.reset();
        for (cl_command_queue q : queues) clReleaseCommandQueue(q);
      });
}

std::size_t workspace_pooled_bytes(int device) {
  WorkspacePool& p = workspace_pool();
  std::lock_guard<std::mutex> lock(p.mu);
  auto it = p.held.find(device);
  return it == p.held.end() ? 0 : it->second;
}

BufferRef resolve(const void* p, int device, std::string_view op) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard<std::mutex> lock(g_regions_mu);
  auto it = g_regions.upper_bound(a);
  if (it != g_regions.begin()) {
    --it;
    const Region& r = it->second;
    if (a - it->first < r.size) {
      detail::require(r.device == device, Status::invalid_argument, op, "the image at ", p,
                      " is on opencl:", r.device, ", not opencl:", device);
      return {r.mem, a - it->first, r.size - (a - it->first)};
    }
  }
  detail::fail(Status::invalid_argument, op, "the pointer ", p, " of an opencl:", device,
               " image is not in any OpenCL buffer pixflow allocated");
}

void require_fp64(const Launch& l, std::string_view op) {
  const DeviceInfo& d = devices()[std::size_t(l.device)];
  detail::require(d.fp64, Status::unsupported, op, "opencl:", l.device, " (", d.name,
                  ") has no double precision (cl_khr_fp64), which this op's rule needs");
}

namespace {

// The read-only uploads of recent calls (taps, weight tables, coefficients) per device, keyed by
// their bytes: a call with the same parameters takes the buffer again instead of creating one
// (NVIDIA's driver allocates and copies at clCreateBuffer and frees at the release: per call,
// for a table of a few hundred bytes). Least recently used first out past kUploadEntries or
// kUploadBytes of a device.
constexpr std::size_t kUploadEntries = 64, kUploadBytes = std::size_t(16) << 20;
struct Upload {
  int device = 0;
  std::uint64_t hash = 0;
  std::vector<unsigned char> bytes;
  std::shared_ptr<std::byte> owner;
};
struct UploadCache {
  std::mutex mu;
  std::vector<Upload> entries;  // most recently used last
};
UploadCache& upload_cache() {
  static UploadCache* c = new UploadCache;  // never destroyed, as the contexts
  return *c;
}

std::uint64_t fnv1a(const unsigned char* p, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

std::shared_ptr<std::byte> upload(int device, std::size_t bytes, const void* data) {
  const char* env = std::getenv("PIXFLOW_OCL_UPLOADS");
  if ((env && std::string_view(env) == "off") || bytes == 0 || bytes > kUploadBytes / 4)
    return allocate_from(device, bytes, data);
  const auto* p = static_cast<const unsigned char*>(data);
  const std::uint64_t h = fnv1a(p, bytes);
  UploadCache& c = upload_cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    for (auto it = c.entries.begin(); it != c.entries.end(); ++it)
      if (it->device == device && it->hash == h && it->bytes.size() == bytes &&
          std::memcmp(it->bytes.data(), p, bytes) == 0) {
        std::shared_ptr<std::byte> owner = it->owner;
        std::rotate(it, it + 1, c.entries.end());
        return owner;
      }
  }
  std::shared_ptr<std::byte> owner = allocate_from(device, bytes, data);
  std::vector<Upload> dropped;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    c.entries.push_back({device, h, std::vector<unsigned char>(p, p + bytes), owner});
    std::size_t n = 0, total = 0;
    for (const Upload& u : c.entries)
      if (u.device == device) ++n, total += u.bytes.size();
    for (auto it = c.entries.begin();
         it != c.entries.end() && (n > kUploadEntries || total > kUploadBytes);) {
      if (it->device != device) {
        ++it;
        continue;
      }
      --n;
      total -= it->bytes.size();
      dropped.push_back(std::move(*it));
      it = c.entries.erase(it);
    }
  }
  return owner;  // `dropped` released outside the lock
}

}  // namespace

DeviceBuffer device_buffer(const Launch& l, std::size_t bytes, std::string_view op,
                           const void* data) {
  DeviceBuffer b;
  b.owner = data ? upload(l.device, bytes, data) : allocate_from(l.device, bytes, nullptr);
  const BufferRef r = resolve(b.owner.get(), l.device, op);
  detail::require(r.offset == 0, Status::internal, op, "an allocation resolved at offset ",
                  r.offset);
  b.mem = r.mem;
  return b;
}

DeviceBuffer scratch_buffer(const Launch& l, std::size_t bytes, std::string_view op) {
  DeviceBuffer b;
  b.owner = workspace(l.device, bytes, l.queue);
  const BufferRef r = resolve(b.owner.get(), l.device, op);
  detail::require(r.offset == 0, Status::internal, op, "an allocation resolved at offset ",
                  r.offset);
  b.mem = r.mem;
  return b;
}

Kernel::Kernel(const Launch& l, std::string_view source, const std::string& options,
               const char* name, std::string_view op)
    : launch_(l), op_(op), prog_(program(l.device, source, options, op)), name_(name) {
  DeviceState& s = state(l.device);
  {
    std::lock_guard<std::mutex> lock(s.pool_mu);
    auto it = s.pool.find({prog_, std::string(name)});
    if (it != s.pool.end() && !it->second.empty()) {
      k_ = it->second.back();
      it->second.pop_back();
      return;
    }
  }
  cl_int err = CL_SUCCESS;
  k_ = clCreateKernel(prog_, name, &err);
  check(err, op, l.device, "clCreateKernel");
}

Kernel::~Kernel() {
  if (!k_) return;
  try {
    DeviceState& s = state(launch_.device);
    std::lock_guard<std::mutex> lock(s.pool_mu);
    s.pool[{prog_, std::string(name_)}].push_back(k_);
  } catch (...) {
    clReleaseKernel(k_);  // no pool to give it back to (out of memory): release it
  }
}

void Kernel::set(std::size_t bytes, const void* value) {
  check(clSetKernelArg(k_, next_, bytes, value), op_, launch_.device, "clSetKernelArg");
  ++next_;
}

Kernel& Kernel::image(const ConstImageView& v) {
  BufferRef b{};
  if (!v.empty()) b = resolve(v.data(), launch_.device, op_);
  const cl_ulong off = b.offset;
  const cl_long stride = v.stride();
  set(sizeof(cl_mem), &b.mem);
  set(sizeof off, &off);
  set(sizeof stride, &stride);
  return *this;
}

std::size_t Kernel::static_local_bytes() const {
  cl_ulong bytes = 0;
  check(clGetKernelWorkGroupInfo(k_, devices()[std::size_t(launch_.device)].id,
                                 CL_KERNEL_LOCAL_MEM_SIZE, sizeof bytes, &bytes, nullptr),
        op_, launch_.device, "clGetKernelWorkGroupInfo");
  return std::size_t(bytes);
}

bool fits_local_memory(const Launch& l, std::string_view source, const std::string& options,
                       const char* name, std::string_view op) {
  const Kernel k(l, source, options, name, op);
  return k.static_local_bytes() <= devices()[std::size_t(l.device)].local_mem;
}

Kernel& Kernel::local(std::size_t bytes) {
  set(bytes, nullptr);
  return *this;
}

void Kernel::run(std::size_t gx, std::size_t gy, std::size_t lx, std::size_t ly) {
  if (gx == 0 || gy == 0) return;
  const std::size_t g[2] = {(gx + lx - 1) / lx * lx, (gy + ly - 1) / ly * ly};
  const std::size_t l[2] = {lx, ly};
  check(clEnqueueNDRangeKernel(launch_.queue, k_, 2, nullptr, g, l, 0, nullptr, nullptr), op_,
        launch_.device, "clEnqueueNDRangeKernel");
  log_launch(k_);
}

const char* cl_type(Depth d) {
  switch (d) {
    case Depth::u8:
      return "uchar";
    case Depth::u16:
      return "ushort";
    case Depth::s16:
      return "short";
    case Depth::s32:
      return "int";
    case Depth::f32:
      return "float";
  }
  return "uchar";
}

std::string depth_options(Depth d, const char* prefix) {
  static const char* const kTag[] = {"U8", "U16", "S16", "S32", "F32"};
  return detail::cat("-D", prefix, "=", cl_type(d), " -D", prefix, "_", kTag[int(d)], "=1 ");
}

}  // namespace pixflow::opencl
