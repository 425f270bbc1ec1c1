// pixflow-bench-opencl: the OpenCL backend on the cases of pixflow-bench (bench/cases.hpp: the
// same case list from the op schema, the same names, inputs and reference check), built
// without CUDA too, so that OpenCL kernels can be measured from a CUDA-off build.
//
// For every case: random input already on the device (Location::opencl(N)), output
// preallocated and poisoned (0xCD); the schema-bound op is called through the public API with
// Context{automatic, the device's default queue}. Protocol (OpenCL has no graphs):
//   warm-up   one call + clFinish (it builds the kernels' programs; its time is `first_ms`);
//   wall      one call + clFinish (then 3, if fast) estimates a call; then `reps` (5) batches of n
//   calls
//             (n: a batch of ~--batch-ms, 5 ms) each followed by clFinish, timed with the host's
//             steady clock; the time per call is the median batch / n. It includes the host's
//             per-enqueue cost of each call (clSetKernelArg, clEnqueueNDRangeKernel, the
//             per-call buffers some ops make) wherever that exceeds the kernel's time: at
//             1920x1080 it can dominate, unlike pixflow-bench's CUDA-graph replay.
//   device    on a second queue of the same context with CL_QUEUE_PROFILING_ENABLE: a marker
//             waiting on a user event (the gate), n calls, a marker; the gate is opened once
//             all are enqueued, so the device runs them back to back without the host's
//             enqueue gaps; time = (end of the last marker - end of the first) / n, median of
//             up to 3 batches. An upper bound of the kernels' time (the driver's launch gaps
//             are in), the closest OpenCL 1.2 has to a graph replay. An op that waits on its
//             queue while enqueuing (a blocking upload of its taps) cannot be gated: a
//             watchdog opens the gate after a timeout and the device time is "n/a" with that
//             reason.
// A copy floor of the same traffic (clEnqueueCopyBuffer of (in + out) / 2 bytes) is timed the
// same two ways. The output is then downloaded and compared with Backend::ref exactly as
// pixflow-bench does (a mismatch is a FAILED row and a nonzero exit status).
//
// Time caps: --case-s bounds the timing of one case (fewer reps, smaller batches, or one
// single call for a case slower than that); --max-s bounds the run: the cases after it are
// "not reached". The JSON is rewritten before and after every case, every case listed from the
// start, so that a run killed by its caller still says which case was running and which were
// not reached. Cases run 1080p first, then 8192x8192 u8x1, then the other 8K cases.
#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "bench/cases.hpp"
#include "pixflow/pixflow.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/schema/schema.hpp"

namespace sc = pixflow::schema;
namespace ocl = pixflow::opencl;
using namespace pixflow;
using namespace pixflow::bench;

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Options {
  std::regex filter{".*"};
  bool quick = false;
  std::vector<Size> sizes;  ///< --size WxH (repeatable), else standard_sizes(quick)
  std::string json;
  std::string device;     ///< --device N or P:D; "" = the first NVIDIA device, else 0
  double batch_ms = 5.0;  ///< wall-clock batch length
  int reps = 5;           ///< wall-clock batches (device: up to 3)
  double case_s = 2.0;    ///< timing budget of one case (wall and device each get half)
  double max_s = 0;       ///< the whole run (0: no cap)
  bool device_time = true;
};
Options g_opt;

/// The device and the two queues the benchmark uses.
struct Cl {
  int dev = 0;
  cl_context ctx = nullptr;
  cl_device_id id = nullptr;
  cl_command_queue q = nullptr;   ///< the device's default queue (pixflow's)
  cl_command_queue pq = nullptr;  ///< profiling queue of the same context (device time)
};

void check(cl_int err, const Cl& cl, const char* what) {
  ocl::check(err, "pixflow-bench-opencl", cl.dev, what);
}

/// One call enqueued on the given queue; throws on failure.
using Launch = std::function<void(cl_command_queue)>;

struct Timing {
  double us = NAN;  ///< wall clock per call
  int n = 0, reps = 0;
  std::string method;   ///< "batch", or "single" (one call slower than the case budget)
  double dev_us = NAN;  ///< gated batch per call
  int dev_n = 0, dev_reps = 0;
  std::string dev_problem;  ///< why there is no dev_us
};

/// n calls and clFinish, wall clock (ms).
double wall_batch_ms(const Cl& cl, const Launch& f, int n) {
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) f(cl.q);
  check(clFinish(cl.q), cl, "clFinish");
  return ms_since(t0);
}

cl_ulong profiled_end(const Cl& cl, cl_event e) {
  cl_ulong t = 0;
  check(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t, &t, nullptr), cl,
        "clGetEventProfilingInfo");
  return t;
}

/// n calls behind a closed gate on the profiling queue (see the file comment): device ms of
/// the batch, or nullopt with `problem` set when the gate had to be opened by the watchdog
/// (the calls were not all enqueued within `timeout_ms`) or the markers' times are unusable.
std::optional<double> gated_batch_ms(const Cl& cl, const Launch& f, int n, double timeout_ms,
                                     std::string& problem) {
  cl_int err = CL_SUCCESS;
  cl_event gate = clCreateUserEvent(cl.ctx, &err);
  check(err, cl, "clCreateUserEvent");
  cl_event e0 = nullptr, e1 = nullptr;
  std::mutex m;
  std::condition_variable cv;
  bool enqueued = false, opened = false, fired = false;
  cl_int open_err = CL_SUCCESS;
  const auto open = [&] {  // under m: exactly once, by whichever side comes first
    if (!opened) {
      opened = true;
      open_err = clSetUserEventStatus(gate, CL_COMPLETE);
    }
  };
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lk(m);
    if (!cv.wait_for(lk, std::chrono::duration<double, std::milli>(timeout_ms),
                     [&] { return enqueued; })) {
      fired = true;
      open();
    }
  });
  const auto finish = [&] {
    {
      std::lock_guard<std::mutex> lk(m);
      enqueued = true;
      open();
    }
    cv.notify_all();
    watchdog.join();
  };
  const auto release = [&] {
    for (cl_event e : {e0, e1, gate})
      if (e) (void)clReleaseEvent(e);
  };
  try {
    check(clEnqueueMarkerWithWaitList(cl.pq, 1, &gate, &e0), cl, "clEnqueueMarkerWithWaitList");
    for (int i = 0; i < n; ++i) f(cl.pq);
    check(clEnqueueMarkerWithWaitList(cl.pq, 0, nullptr, &e1), cl, "clEnqueueMarkerWithWaitList");
  } catch (...) {
    finish();
    (void)clFinish(cl.pq);
    release();
    throw;
  }
  finish();
  try {
    check(open_err, cl, "clSetUserEventStatus");
    check(clWaitForEvents(1, &e1), cl, "clWaitForEvents");
    const cl_ulong t0 = profiled_end(cl, e0), t1 = profiled_end(cl, e1);
    release();
    if (fired) {
      problem = "the op waits on its queue while enqueuing (the gate's watchdog opened it)";
      return std::nullopt;
    }
    if (t1 <= t0) {
      problem = "the markers' profiling times do not increase";
      return std::nullopt;
    }
    return double(t1 - t0) * 1e-6;
  } catch (...) {
    release();
    throw;
  }
}

/// Wall-clock and device timing of `f` (already called once: the warm-up).
Timing time_calls(const Cl& cl, const Launch& f) {
  Timing t;
  const double budget_ms = 1000.0 * g_opt.case_s / 2;
  // One call estimates; a fast one is re-estimated over 3 (one call's clFinish latency is
  // noisy).
  double est = wall_batch_ms(cl, f, 1);
  if (est < budget_ms / 16) est = wall_batch_ms(cl, f, 3) / 3;
  if (est >= budget_ms / 2) {
    t.us = 1000.0 * est;
    t.n = t.reps = 1;
    t.method = "single";
  } else {
    t.n = int(std::clamp(std::ceil(g_opt.batch_ms / std::max(est, 1e-4)), 1.0,
                         g_opt.quick ? 500.0 : 2000.0));
    t.reps = g_opt.reps;
    while (t.reps > 1 && t.reps * t.n * est > budget_ms) --t.reps;
    if (t.reps * t.n * est > budget_ms) t.n = std::max(1, int(budget_ms / est));
    std::vector<double> reps;
    for (int r = 0; r < t.reps; ++r) reps.push_back(wall_batch_ms(cl, f, t.n) / t.n);
    t.us = 1000.0 * median_of(reps);
    t.method = "batch";
  }
  if (!g_opt.device_time) {
    t.dev_problem = "not measured (--no-device-time)";
    return t;
  }
  // The host enqueues no slower than the wall-clock rate: 4x that plus 50 ms is a generous
  // deadline for n enqueues.
  t.dev_n = t.n;
  const double timeout_ms = 50.0 + 4.0 * t.n * t.us / 1000.0;
  const int dev_reps = std::min(t.reps, 3);
  std::vector<double> reps;
  for (int r = 0; r < dev_reps; ++r) {
    const std::optional<double> ms = gated_batch_ms(cl, f, t.dev_n, timeout_ms, t.dev_problem);
    if (!ms) break;
    reps.push_back(*ms / t.dev_n);
  }
  if (!t.dev_problem.empty()) return t;
  t.dev_reps = int(reps.size());
  t.dev_us = 1000.0 * median_of(reps);
  return t;
}

// ---- the copy floor ------------------------------------------------------------------------

/// Two buffers of the context for the copy floor, grown on demand.
struct CopyBufs {
  cl_mem a = nullptr, b = nullptr;
  std::size_t bytes = 0;
  void reset() {
    if (a) (void)clReleaseMemObject(a);
    if (b) (void)clReleaseMemObject(b);
    a = b = nullptr;
    bytes = 0;
  }
  ~CopyBufs() { reset(); }
};
CopyBufs g_copy;

void copy_bufs(const Cl& cl, std::size_t bytes) {
  if (g_copy.bytes >= bytes) return;
  g_copy.reset();
  cl_int err = CL_SUCCESS;
  g_copy.a = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  check(err, cl, "clCreateBuffer");
  g_copy.b = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  check(err, cl, "clCreateBuffer");
  const cl_uchar one = 1;
  check(clEnqueueFillBuffer(cl.q, g_copy.a, &one, 1, 0, bytes, 0, nullptr, nullptr), cl,
        "clEnqueueFillBuffer");
  check(clFinish(cl.q), cl, "clFinish");
  g_copy.bytes = bytes;
}

// ---- one case --------------------------------------------------------------------------------

struct Row : RowBase {
  Timing t, copy;
  double first_ms = NAN;  ///< the warm-up call (program builds included)
  double seconds = NAN;   ///< the whole case, check included
};

bool timed(const Row& r) {
  return std::isfinite(r.t.us) && r.status.rfind("n/a", 0) != 0;
}

/// A device that still answers: both queues finish and a small copy goes through.
bool device_alive(const Cl& cl) {
  if (clFinish(cl.q) != CL_SUCCESS || clFinish(cl.pq) != CL_SUCCESS) return false;
  try {
    copy_bufs(cl, 4096);
    return clEnqueueCopyBuffer(cl.q, g_copy.a, g_copy.b, 0, 0, 4096, 0, nullptr, nullptr) ==
               CL_SUCCESS &&
           clFinish(cl.q) == CL_SUCCESS;
  } catch (const Error&) {
    return false;
  }
}

void run_case(const Case& c, const Cl& cl, Inputs& inputs, Row& row) {
  const auto tc = Clock::now();
  describe(c, row);
  row.status = "not run";
  const CaseViews cv = case_views(c, inputs);
  const Views &dv = cv.dev, &hv = cv.host;
  Image dst(c.ow, c.oh, c.ofmt, Location::opencl(cl.dev));
  {
    // Poison the whole allocation: a pixel the op fails to write cannot match the reference.
    const ocl::BufferRef d = ocl::resolve(dst.data(), cl.dev, "pixflow-bench-opencl");
    const cl_uchar poison = 0xCD;
    check(clEnqueueFillBuffer(cl.q, d.mem, &poison, 1, d.offset,
                              std::size_t(dst.stride()) * std::size_t(dst.height()), 0, nullptr,
                              nullptr),
          cl, "clEnqueueFillBuffer");
    check(clFinish(cl.q), cl, "clFinish");
  }
  // A catalogue case is bound once to the device images; the timed call is bound->run.
  const std::unique_ptr<sc::Bound> bound = c.schema_op ? bind_views(c, dv) : nullptr;
  const Launch launch = [&](cl_command_queue q) {
    const Context ctx{Backend::automatic, Queue::opencl(q)};
    if (bound)
      bound->run(dv.src, dst, ctx);
    else
      c.fn(dv, dst, ctx);
  };

  // Warm-up call: tells whether there is an OpenCL kernel at all, and builds its programs.
  try {
    const auto t0 = Clock::now();
    launch(cl.q);
    check(clFinish(cl.q), cl, "clFinish after the op");
    row.first_ms = ms_since(t0);
  } catch (const Error& e) {
    std::tie(row.status, row.failed) = error_status(e, "OpenCL");
    row.check = "n/a";
  }
  if (row.status == "not run") row.t = time_calls(cl, launch);

  // Copy floor: (in + out) / 2 bytes copied, so that read + write traffic equals the op's.
  const std::size_t cb = std::size_t(row.copy_bytes);
  copy_bufs(cl, cb);
  row.copy = time_calls(cl, [&](cl_command_queue q) {
    check(clEnqueueCopyBuffer(q, g_copy.a, g_copy.b, 0, 0, cb, 0, nullptr, nullptr), cl,
          "clEnqueueCopyBuffer");
  });

  if (row.check == "not run") {
    Image got(c.ow, c.oh, c.ofmt);
    copy(dst, got);
    check_into(c, hv, got, row);
  }
  if (row.status == "not run") row.status = row.failed ? "FAILED" : "ok";
  row.seconds = ms_since(tc) / 1000.0;
}

// ---- output ----------------------------------------------------------------------------------

std::string us_cell(const Row& r) {
  if (r.status.rfind("n/a", 0) == 0) return "n/a";
  if (!timed(r)) return r.status.substr(0, r.status.find(" ("));
  return fmt_double(r.t.us, 1) + (r.t.method == "single" ? "!" : "");
}

void print_table(const std::vector<Row>& rows) {
  std::printf("\n%-44s %12s %10s %8s %8s %7s %9s %9s  %s\n", "case", "wall us", "device us",
              "Gpix/s", "GB/s", "xcopy", "copy us", "copy dev", "check");
  for (const Row& r : rows) {
    const bool t = timed(r);
    std::string check = r.check;
    if (r.status.rfind("n/a", 0) == 0) check = r.status;
    if (r.failed) check = "FAILED: " + (r.status == "FAILED" ? r.check_detail : r.status);
    if (!t && !r.failed && r.status.rfind("n/a", 0) != 0) check = r.status;
    std::printf("%-44s %12s %10s %8s %8s %7s %9s %9s  %s\n", r.name.c_str(), us_cell(r).c_str(),
                t ? fmt_double(r.t.dev_us, 1).c_str() : "",
                t ? fmt_double(r.out_pixels / r.t.us / 1e3, 2).c_str() : "",
                t ? fmt_double((r.in_bytes + r.out_bytes) / r.t.us / 1e3, 0).c_str() : "",
                t ? fmt_double(r.t.us / r.copy.us, 2).c_str() : "",
                fmt_double(r.copy.us, 1).c_str(), fmt_double(r.copy.dev_us, 1).c_str(),
                check.c_str());
  }
}

std::string timing_json(const Timing& t) {
  return "{\"us\": " + jnum(t.us) + ", \"n\": " + std::to_string(t.n) +
         ", \"reps\": " + std::to_string(t.reps) + ", \"method\": " + jstr(t.method) +
         ", \"device_us\": " + jnum(t.dev_us) + ", \"device_n\": " + std::to_string(t.dev_n) +
         ", \"device_reps\": " + std::to_string(t.dev_reps) +
         ", \"device_problem\": " + jstr(t.dev_problem) + "}";
}

const char* kMethod =
    "wall: warm-up call, then the median of up to 5 batches of n calls (~5 ms) each ended by "
    "clFinish, host steady clock / n: includes the host's per-enqueue cost (no graphs in "
    "OpenCL); device: n calls enqueued behind a user-event gate on a profiling queue, released "
    "at once, (end of the closing marker - end of the opening one) / n, median of up to 3; "
    "copy: clEnqueueCopyBuffer of (in + out) / 2 bytes, timed the same two ways";

struct RunInfo {
  std::string device, device_name, date;
  int device_index = 0;
};

void write_json(const std::string& path, const std::vector<Row>& rows, const RunInfo& info,
                bool complete, const std::string& stop_reason) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream o(tmp);
    o << "{\n  \"tool\": \"pixflow-bench-opencl\",\n  \"date\": " << jstr(info.date)
      << ",\n  \"device\": " << jstr(info.device) << ",\n  \"gpu\": " << jstr(info.device_name)
      << ",\n  \"device_index\": " << info.device_index << ",\n  \"method\": " << jstr(kMethod)
      << ",\n  \"quick\": " << (g_opt.quick ? "true" : "false")
      << ",\n  \"batch_ms\": " << jnum(g_opt.batch_ms) << ",\n  \"reps\": " << g_opt.reps
      << ",\n  \"case_s\": " << jnum(g_opt.case_s) << ",\n  \"max_s\": " << jnum(g_opt.max_s)
      << ",\n  \"complete\": " << (complete ? "true" : "false")
      << ",\n  \"stopped\": " << jstr(stop_reason) << ",\n  \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      const bool t = timed(r);
      o << "    {" << row_json_fields(r) << ", \"us\": " << jnum(t ? r.t.us : NAN)
        << ", \"device_us\": " << jnum(t ? r.t.dev_us : NAN) << ", \"timing\": " << timing_json(r.t)
        << ", \"first_ms\": " << jnum(r.first_ms) << ", \"seconds\": " << jnum(r.seconds)
        << ", \"gpix_s\": " << jnum(t ? r.out_pixels / r.t.us / 1e3 : NAN)
        << ", \"gb_s\": " << jnum(t ? (r.in_bytes + r.out_bytes) / r.t.us / 1e3 : NAN)
        << ", \"copy_us\": " << jnum(r.copy.us) << ", \"copy_device_us\": " << jnum(r.copy.dev_us)
        << ", \"copy\": " << timing_json(r.copy)
        << ", \"ratio_to_copy\": " << jnum(t ? r.t.us / r.copy.us : NAN) << "}"
        << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    o << "  ]\n}\n";
    if (!o) {
      std::fprintf(stderr, "pixflow-bench-opencl: cannot write %s\n", tmp.c_str());
      return;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    std::fprintf(stderr, "pixflow-bench-opencl: cannot rename %s\n", tmp.c_str());
}

int usage(const char* argv0) {
  std::fprintf(
      stderr,
      "usage: %s [--filter REGEX] [--quick] [--size WxH]... [--device N|P:D] [--json FILE]\n"
      "          [--case-s S] [--max-s S] [--batch-ms MS] [--no-device-time] [--list]\n"
      "  --filter REGEX    run the cases whose name matches (e.g. 'median|box .*u8x1')\n"
      "  --quick           1920x1080 only\n"
      "  --size WxH        this size instead of 1920x1080 and 8192x8192 (repeatable)\n"
      "  --device N|P:D    opencl:N, or device D of platform P (default: the first device\n"
      "                    whose description names NVIDIA, else opencl:0)\n"
      "  --json FILE       write every number as JSON (rewritten after every case)\n"
      "  --case-s S        timing budget of one case in seconds (default 2)\n"
      "  --max-s S         stop starting cases after S seconds; the rest are 'not reached'\n"
      "  --batch-ms MS     length of a wall-clock batch (default 5)\n"
      "  --no-device-time  wall clock only (no gated batches on a profiling queue)\n"
      "  --list            print the case names (in run order) and exit\n",
      argv0);
  return 2;
}

/// --device's text to a device index; -1 when it names none.
int pick_device(const std::string& text) {
  const int n = device_count(Location::Kind::opencl);
  if (text.empty()) {
    for (int i = 0; i < n; ++i)
      if (describe_device(Location::opencl(i)).find("NVIDIA") != std::string::npos) return i;
    return n > 0 ? 0 : -1;
  }
  try {
    const std::size_t colon = text.find(':');
    if (colon != std::string::npos)
      return device_index(Location::Kind::opencl, std::stoi(text.substr(0, colon)),
                          std::stoi(text.substr(colon + 1)));
    const int i = std::stoi(text);
    return i >= 0 && i < n ? i : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

/// 1080p (the first size) first, then 8192x8192 u8x1, then the rest: under a time cap the
/// cases the targets name come first.
int priority(const Case& c, const Size& first) {
  if (c.w == first.w && c.h == first.h) return 0;
  return c.fmt == Format{Depth::u8, 1} ? 1 : 2;
}

bool parse_double(const char* s, double& v) {
  try {
    std::size_t used = 0;
    v = std::stod(s, &used);
    return used == std::string(s).size() && std::isfinite(v) && v >= 0;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--filter" && has) {
      try {
        g_opt.filter = std::regex(argv[++i], std::regex::extended | std::regex::icase);
      } catch (const std::regex_error& e) {
        std::fprintf(stderr, "pixflow-bench-opencl: bad --filter: %s\n", e.what());
        return 2;
      }
    } else if (a == "--quick") {
      g_opt.quick = true;
    } else if (a == "--size" && has) {
      const std::optional<Size> sz = parse_size(argv[++i]);
      if (!sz) return usage(argv[0]);
      g_opt.sizes.push_back(*sz);
    } else if (a == "--device" && has) {
      g_opt.device = argv[++i];
    } else if (a == "--json" && has) {
      g_opt.json = argv[++i];
    } else if (a == "--case-s" && has) {
      if (!parse_double(argv[++i], g_opt.case_s) || g_opt.case_s <= 0) return usage(argv[0]);
    } else if (a == "--max-s" && has) {
      if (!parse_double(argv[++i], g_opt.max_s)) return usage(argv[0]);
    } else if (a == "--batch-ms" && has) {
      if (!parse_double(argv[++i], g_opt.batch_ms) || g_opt.batch_ms <= 0) return usage(argv[0]);
    } else if (a == "--no-device-time") {
      g_opt.device_time = false;
    } else if (a == "--list") {
      list = true;
    } else {
      return usage(argv[0]);
    }
  }
  std::optional<std::vector<Case>> selected =
      select_cases(g_opt.sizes, g_opt.quick, g_opt.filter, "pixflow-bench-opencl");
  if (!selected) return 2;
  std::vector<Case> cases = std::move(*selected);
  std::stable_sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) {
    return priority(a, g_opt.sizes.front()) < priority(b, g_opt.sizes.front());
  });
  if (list) {
    for (const Case& c : cases) std::printf("%s\n", c.name().c_str());
    return 0;
  }

  const int ndev = device_count(Location::Kind::opencl);
  for (int i = 0; i < ndev; ++i)
    std::printf("  %s\n", describe_device(Location::opencl(i)).c_str());
  Cl cl;
  cl.dev = pick_device(g_opt.device);
  if (cl.dev < 0) {
    std::fprintf(stderr, "pixflow-bench-opencl: no OpenCL device %s(%d found)\n",
                 g_opt.device.empty() ? "" : ("'" + g_opt.device + "' ").c_str(), ndev);
    return 1;
  }
  RunInfo info;
  info.device_index = cl.dev;
  info.device = describe_device(Location::opencl(cl.dev));
  info.device_name = ocl::devices()[std::size_t(cl.dev)].name;
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  info.date = date;
  try {
    cl.ctx = ocl::context(cl.dev);
    cl.q = ocl::default_queue(cl.dev);
    cl.id = ocl::devices()[std::size_t(cl.dev)].id;
    cl_int err = CL_SUCCESS;
    cl.pq = clCreateCommandQueue(cl.ctx, cl.id, CL_QUEUE_PROFILING_ENABLE, &err);
    check(err, cl, "clCreateCommandQueue (profiling)");
  } catch (const Error& e) {
    std::fprintf(stderr, "pixflow-bench-opencl: %s\n", e.what());
    return 1;
  }
  std::printf("pixflow-bench-opencl: %s; %s; %zu cases\n", info.device.c_str(), date, cases.size());
  std::fflush(stdout);

  Inputs inputs(Location::opencl(cl.dev));
  std::vector<Row> rows(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    describe(cases[i], rows[i]);
    rows[i].status = "not reached";
  }
  bool dead = false;
  std::string stop;
  std::string last_size;
  int not_reached = 0;
  const auto t0 = Clock::now();
  const auto save = [&](bool complete, const std::string& why) {
    if (!g_opt.json.empty()) write_json(g_opt.json, rows, info, complete, why);
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    Row& row = rows[i];
    if (dead) {
      row.status = "not run (device lost earlier)";
      continue;
    }
    if (g_opt.max_s > 0 && ms_since(t0) / 1000.0 > g_opt.max_s) {
      if (stop.empty()) stop = "time cap (--max-s " + fmt_double(g_opt.max_s, 0) + ") reached";
      row.status = "not reached (time cap)";
      ++not_reached;
      continue;
    }
    if (c.size() != last_size) {  // free the previous size's inputs before the next
      inputs.clear();
      last_size = c.size();
    }
    // Saved before the case too: a run killed inside it names the case.
    row.status = "running (killed or hung here if this stays)";
    save(false, "running");
    try {
      run_case(c, cl, inputs, row);
    } catch (const Error& e) {
      row.status = std::string("error (") + status_name(e.status()) + ": " + e.what() + ")";
      row.failed = true;
    } catch (const std::exception& e) {
      row.status = std::string("error (") + e.what() + ")";
      row.failed = true;
    }
    if (row.failed && !device_alive(cl)) {
      dead = true;
      stop = "OpenCL device lost after " + row.name + ": " + row.status;
      std::fprintf(stderr, "pixflow-bench-opencl: %s; the remaining cases are not run\n",
                   stop.c_str());
    }
    std::fprintf(
        stderr, "[bench-opencl] %-44s %-12s dev %-10s %s (%.1f s)\n", row.name.c_str(),
        us_cell(row).c_str(), timed(row) ? fmt_double(row.t.dev_us, 1).c_str() : "",
        row.failed ? ("FAILED " + row.status + " " + row.check_detail).c_str() : row.check.c_str(),
        std::isfinite(row.seconds) ? row.seconds : 0.0);
    save(false, "running");
  }
  const double total = ms_since(t0) / 1000.0;
  print_table(rows);
  int failed = 0, na = 0, ok = 0, nodev = 0;
  for (const Row& r : rows) {
    failed += r.failed;
    na += r.status.rfind("n/a", 0) == 0;
    ok += r.status == "ok";
    nodev += timed(r) && !std::isfinite(r.t.dev_us);
  }
  std::printf(
      "\npixflow-bench-opencl: %zu cases in %.0f s on opencl:%d (%s): %d ok, %d FAILED, %d n/a, "
      "%d without device time, %d not reached%s\n",
      rows.size(), total, cl.dev, info.device_name.c_str(), ok, failed, na, nodev, not_reached,
      dead ? " (stopped: device lost)" : "");
  save(!dead && not_reached == 0, stop);
  inputs.clear();
  g_copy.reset();
  (void)clReleaseCommandQueue(cl.pq);
  return failed || dead ? 1 : 0;
}
