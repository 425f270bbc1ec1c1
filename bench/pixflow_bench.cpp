// pixflow-bench: the GPU benchmark of PERFORMANCE.md.
//
// For every case: random input already on the device, output preallocated and poisoned; the op
// is called once (warm-up; an op without a CUDA kernel is reported "n/a" here), then N calls are
// captured into a CUDA graph (N such that one replay takes >= ~2 ms), replayed once to warm up
// and 5 more times under CUDA events; the time per call is the median replay time / N. A
// device-to-device copy moving the same traffic (input + output bytes, read + written) is timed
// the same way, and so are the peers (NPP, cuBLAS) in the same process. Then the output is
// downloaded and compared with Backend::ref on the host: every pixel at 1080p, whole sampled rows
// (the first and last rows included, >= 100k pixels) for the large sizes.
//
// The cases are those of the op schema (src/schema): every catalogue op's bench() entries, bound
// The case list, the inputs and the check are shared with pixflow-bench-opencl (bench/cases.hpp).
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include <cuda_runtime.h>

#include "bench/cases.hpp"
#include "bench/peers.hpp"
#include "pixflow/pixflow.hpp"
#include "src/schema/schema.hpp"

namespace pb = pixflow_bench;
namespace sc = pixflow::schema;
using namespace pixflow;
using namespace pixflow::bench;

namespace {

// A CUDA failure outside an op: recorded, never thrown through the timing code.
struct CudaFail {
  std::string what;
};
void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw CudaFail{std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                   ")"};
  }
}
// A sticky error (e.g. an illegal address in a kernel) kills the context: nothing after it can
// be measured, so the run stops and says so.
bool context_dead() {
  const cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) return false;
  (void)cudaGetLastError();
  return cudaDeviceSynchronize() != cudaSuccess;
}

// ---- timing ----------------------------------------------------------------------------------

struct Timing {
  double us = NAN;       ///< per call (median replay / n)
  double loop_us = NAN;  ///< per call, events around a plain loop (fallback or information)
  int n = 0;             ///< calls per graph
  std::string method;    ///< "graph", "loop"
  std::string problem;   ///< "" or why the graph could not be made
};

struct Options {
  std::regex filter{".*"};
  bool quick = false;
  std::string json;
  double graph_ms = 2.0;
  int reps = 5;
  std::vector<Size> sizes;  ///< --size WxH (repeatable), else standard_sizes(quick)
};
Options g_opt;

double events_ms(cudaStream_t s, const std::function<void()>& work) {
  cudaEvent_t a = nullptr, b = nullptr;
  ck(cudaEventCreate(&a), "cudaEventCreate");
  ck(cudaEventCreate(&b), "cudaEventCreate");
  float ms = 0;
  try {
    ck(cudaEventRecord(a, s), "cudaEventRecord");
    work();
    ck(cudaEventRecord(b, s), "cudaEventRecord");
    ck(cudaEventSynchronize(b), "cudaEventSynchronize");
    ck(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
  } catch (...) {
    (void)cudaEventDestroy(a);
    (void)cudaEventDestroy(b);
    throw;
  }
  (void)cudaEventDestroy(a);
  (void)cudaEventDestroy(b);
  return ms;
}

/// already run it once outside capture. Falls back to a plain loop when capture fails.
Timing time_calls(cudaStream_t s, const std::function<void()>& launch) {
  Timing t;
  // Estimate one call: 3 plain calls under events.
  const double est_ms = events_ms(s,
                                  [&] {
                                    for (int i = 0; i < 3; ++i) launch();
                                  }) /
                        3.0;
  t.n = static_cast<int>(std::clamp(std::ceil(g_opt.graph_ms / std::max(est_ms, 1e-4)), 1.0,
                                    g_opt.quick ? 500.0 : 2000.0));
  t.loop_us = 1000.0 *
              events_ms(s,
                        [&] {
                          for (int i = 0; i < t.n; ++i) launch();
                        }) /
              t.n;

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ck(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  std::string problem;
  try {
    for (int i = 0; i < t.n; ++i) launch();
  } catch (const pixflow::Error& e) {
    problem = e.what();
  } catch (const CudaFail& e) {
    problem = e.what;
  } catch (const std::exception& e) {
    problem = e.what();
  }
  const cudaError_t end = cudaStreamEndCapture(s, &graph);
  if (problem.empty() && end != cudaSuccess)
    problem = std::string("cudaStreamEndCapture: ") + cudaGetErrorName(end);
  if (problem.empty() && graph) {
    const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
    if (e != cudaSuccess) problem = std::string("cudaGraphInstantiate: ") + cudaGetErrorName(e);
  }
  (void)cudaGetLastError();
  if (!problem.empty() || !exec) {
    if (graph) (void)cudaGraphDestroy(graph);
    t.problem = problem.empty() ? "capture produced no graph" : problem;
    t.method = "loop";
    t.us = t.loop_us;
    return t;
  }
  try {
    ck(cudaGraphLaunch(exec, s), "cudaGraphLaunch");  // warm-up replay
    ck(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    std::vector<double> reps;
    for (int r = 0; r < g_opt.reps; ++r)
      reps.push_back(events_ms(s, [&] { ck(cudaGraphLaunch(exec, s), "cudaGraphLaunch"); }));
    t.us = 1000.0 * median_of(reps) / t.n;
    t.method = "graph";
  } catch (...) {
    (void)cudaGraphExecDestroy(exec);
    (void)cudaGraphDestroy(graph);
    throw;
  }
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
  return t;
}

struct Row : RowBase {
  Timing t, copy;
  std::string npp_name, npp_note, npp_status;
  Timing npp;
  std::string capture;  ///< "" or "not capturable: ..."
};

pb::PDepth pdepth(Depth d) {
  return d == Depth::u8 ? pb::PDepth::u8 : d == Depth::s16 ? pb::PDepth::s16 : pb::PDepth::f32;
}
pb::PeerImage peer_image(const ConstImageView& v) {
  pb::PeerImage p;
  p.data = const_cast<std::byte*>(v.data());
  p.stride = v.stride();
  p.width = int(v.width());
  p.height = int(v.height());
  p.depth = pdepth(v.depth());
  p.channels = v.channels();
  return p;
}

// ---- one case --------------------------------------------------------------------------------

/// Device scratch for the copy floor.
struct CopyBuf {
  std::shared_ptr<std::byte> a, b;
  std::size_t bytes = 0;
};
CopyBuf g_copy;

void copy_bufs(std::size_t bytes) {
  if (g_copy.bytes >= bytes) return;
  g_copy = {};
  void* a = nullptr;
  void* b = nullptr;
  ck(cudaMalloc(&a, bytes), "cudaMalloc");
  g_copy.a = std::shared_ptr<std::byte>(static_cast<std::byte*>(a),
                                        [](std::byte* p) { (void)cudaFree(p); });
  ck(cudaMalloc(&b, bytes), "cudaMalloc");
  g_copy.b = std::shared_ptr<std::byte>(static_cast<std::byte*>(b),
                                        [](std::byte* p) { (void)cudaFree(p); });
  ck(cudaMemset(a, 1, bytes), "cudaMemset");
  g_copy.bytes = bytes;
}

void run_case(Case& c, cudaStream_t s, Inputs& inputs, Row& row) {
  describe(c, row);

  // Inputs and destination.
  const CaseViews cv = case_views(c, inputs);
  const Views &dv = cv.dev, &hv = cv.host;
  Image dst(c.ow, c.oh, c.ofmt, Location::cuda(0));
  ck(cudaMemset2DAsync(dst.data(), std::size_t(dst.stride()), 0xCD,
                       std::size_t(dst.view().row_bytes()), std::size_t(dst.height()), s),
     "cudaMemset2DAsync (poison)");
  const Context ctx{Backend::automatic, Queue::cuda(s)};
  // A catalogue case is bound once to the device images; the timed call is bound->run.
  const std::unique_ptr<sc::Bound> bound = c.schema_op ? bind_views(c, dv) : nullptr;
  auto launch = [&] {
    if (bound)
      bound->run(dv.src, dst, ctx);
    else
      c.fn(dv, dst, ctx);
    ck(cudaGetLastError(), "kernel launch");
  };

  // Warm-up call: tells whether there is a CUDA kernel at all.
  try {
    launch();
    ck(cudaStreamSynchronize(s), "cudaStreamSynchronize after the op");
  } catch (const pixflow::Error& e) {
    std::tie(row.status, row.failed) = error_status(e, "CUDA");
    row.check = "n/a";
  }
  if (row.status == "not run") {
    row.t = time_calls(s, launch);
    if (!row.t.problem.empty()) row.capture = "not capturable: " + row.t.problem;
    ck(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  }

  // Copy floor: (in + out) / 2 bytes copied, so that read + write traffic equals the op's.
  copy_bufs(std::size_t(row.copy_bytes));
  row.copy = time_calls(s, [&] {
    ck(cudaMemcpyAsync(g_copy.b.get(), g_copy.a.get(), std::size_t(row.copy_bytes),
                       cudaMemcpyDeviceToDevice, s),
       "cudaMemcpyAsync");
  });

  // Peers (NPP for images, cuBLAS for matmul), into a scratch destination.
  {
    Image pdst(c.ow, c.oh, c.ofmt, Location::cuda(0));
    pb::PeerCase pc{c.peer};
    pc.kernel = c.kernel.empty() ? nullptr : c.kernel.data();
    pc.src = peer_image(dv.src);
    if (cv.in2) pc.src2 = peer_image(dv.src2);
    if (cv.mx) {
      pc.map_x = peer_image(dv.mx);
      pc.map_y = peer_image(dv.my);
    }
    pc.dst = peer_image(pdst);
    pc.stream = s;
    pb::PeerLaunch pl = c.op == "matmul" ? pb::make_cublas_peer(pc) : pb::make_npp_peer(pc);
    (void)cudaGetLastError();
    row.npp_name = pl.name;
    row.npp_note = pl.note;
    if (!pl) {
      row.npp_status = "n/a";
    } else {
      auto plaunch = [&] {
        const std::string e = pl.launch();
        if (!e.empty()) throw CudaFail{e};
        ck(cudaGetLastError(), "peer launch");
      };
      try {
        plaunch();
        ck(cudaStreamSynchronize(s), "cudaStreamSynchronize after the peer");
        row.npp = time_calls(s, plaunch);
        row.npp_status = row.npp.method == "graph" ? "ok" : "ok (loop: " + row.npp.problem + ")";
      } catch (const CudaFail& e) {
        row.npp_status = "n/a (" + e.what + ")";
        (void)cudaGetLastError();
      }
    }
    ck(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  }

  // Correctness.
  if (row.check == "not run") {
    Image got(c.ow, c.oh, c.ofmt);
    copy(dst, got);
    check_into(c, hv, got, row);
  }
  if (row.status == "not run") row.status = row.failed ? "FAILED" : "ok";
}

// ---- output ----------------------------------------------------------------------------------

std::string us_cell(const Row& r) {
  if (r.status.rfind("n/a", 0) == 0) return "n/a";
  if (!r.capture.empty()) return "not capturable";
  return fmt_double(r.t.us, 1);
}

void print_table(const std::vector<Row>& rows) {
  std::printf("\n%-44s %12s %8s %8s %7s %9s %12s  %s\n", "case", "us", "Gpix/s", "GB/s", "xcopy",
              "copy us", "NPP us", "check");
  for (const Row& r : rows) {
    const bool timed = std::isfinite(r.t.us) && r.status.rfind("n/a", 0) != 0;
    std::string npp = std::isfinite(r.npp.us) && r.npp_status.rfind("ok", 0) == 0
                          ? fmt_double(r.npp.us, 1)
                          : (r.npp_name.empty() ? "-" : "n/a");
    std::string check = r.check;
    if (r.status.rfind("n/a", 0) == 0) check = r.status;
    if (r.failed) check = "FAILED: " + r.check_detail;
    std::printf("%-44s %12s %8s %8s %7s %9s %12s  %s\n", r.name.c_str(), us_cell(r).c_str(),
                timed ? fmt_double(r.out_pixels / r.t.us / 1e3, 2).c_str() : "",
                timed ? fmt_double((r.in_bytes + r.out_bytes) / r.t.us / 1e3, 0).c_str() : "",
                timed ? fmt_double(r.t.us / r.copy.us, 2).c_str() : "",
                fmt_double(r.copy.us, 1).c_str(), npp.c_str(), check.c_str());
    if (!r.capture.empty())
      std::printf("    ^ %s (loop time %s us)\n", r.capture.c_str(),
                  fmt_double(r.t.loop_us, 1).c_str());
  }
}

std::string timing_json(const Timing& t) {
  return "{\"us\": " + jnum(t.us) + ", \"loop_us\": " + jnum(t.loop_us) +
         ", \"n\": " + std::to_string(t.n) + ", \"method\": " + jstr(t.method) +
         ", \"problem\": " + jstr(t.problem) + "}";
}

void write_json(const std::string& path, const std::vector<Row>& rows, const std::string& gpu,
                int driver, int runtime, const std::string& date, bool complete,
                const std::string& stop_reason) {
  std::ofstream o(path);
  o << "{\n  \"tool\": \"pixflow-bench\",\n  \"date\": " << jstr(date)
    << ",\n  \"gpu\": " << jstr(gpu) << ",\n  \"driver_version\": " << driver
    << ",\n  \"runtime_version\": " << runtime
    << ",\n  \"npp\": " << (pb::npp_compiled() ? "true" : "false")
    << ",\n  \"cublas\": " << (pb::cublas_compiled() ? "true" : "false")
    << ",\n  \"quick\": " << (g_opt.quick ? "true" : "false")
    << ",\n  \"graph_ms\": " << jnum(g_opt.graph_ms) << ",\n  \"reps\": " << g_opt.reps
    << ",\n  \"complete\": " << (complete ? "true" : "false")
    << ",\n  \"stopped\": " << jstr(stop_reason) << ",\n  \"rows\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const bool timed = std::isfinite(r.t.us) && r.status.rfind("n/a", 0) != 0;
    o << "    {" << row_json_fields(r)
      << ", \"us\": " << jnum(timed && r.capture.empty() ? r.t.us : NAN)
      << ", \"capturable\": " << (r.capture.empty() ? "true" : "false")
      << ", \"capture_problem\": " << jstr(r.capture) << ", \"timing\": " << timing_json(r.t)
      << ", \"gpix_s\": " << jnum(timed ? r.out_pixels / r.t.us / 1e3 : NAN)
      << ", \"gb_s\": " << jnum(timed ? (r.in_bytes + r.out_bytes) / r.t.us / 1e3 : NAN)
      << ", \"copy_us\": " << jnum(r.copy.us) << ", \"copy\": " << timing_json(r.copy)
      << ", \"ratio_to_copy\": " << jnum(timed ? r.t.us / r.copy.us : NAN)
      << ", \"npp\": {\"function\": " << jstr(r.npp_name) << ", \"note\": " << jstr(r.npp_note)
      << ", \"status\": " << jstr(r.npp_status)
      << ", \"us\": " << jnum(r.npp_status.rfind("ok", 0) == 0 ? r.npp.us : NAN)
      << ", \"timing\": " << timing_json(r.npp) << "}}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  o << "  ]\n}\n";
  if (!o) std::fprintf(stderr, "pixflow-bench: cannot write %s\n", path.c_str());
}

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--filter REGEX] [--quick] [--size WxH]... [--json FILE] [--list]\n"
               "  --filter REGEX  run the cases whose name matches (e.g. 'median|box .*u8x1')\n"
               "  --quick         1920x1080 only, shorter graphs\n"
               "  --size WxH      this size instead of 1920x1080 and 8192x8192 (repeatable)\n"
               "  --json FILE     write every number as JSON\n"
               "  --list          print the case names and exit\n",
               argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--filter" && i + 1 < argc) {
      try {
        g_opt.filter = std::regex(argv[++i], std::regex::extended | std::regex::icase);
      } catch (const std::regex_error& e) {
        std::fprintf(stderr, "pixflow-bench: bad --filter: %s\n", e.what());
        return 2;
      }
    } else if (a == "--quick") {
      g_opt.quick = true;
      g_opt.graph_ms = 1.0;
      g_opt.reps = 5;
    } else if (a == "--size" && i + 1 < argc) {
      const std::optional<Size> sz = parse_size(argv[++i]);
      if (!sz) return usage(argv[0]);
      g_opt.sizes.push_back(*sz);
    } else if (a == "--json" && i + 1 < argc) {
      g_opt.json = argv[++i];
    } else if (a == "--list") {
      list = true;
    } else {
      return usage(argv[0]);
    }
  }
  std::optional<std::vector<Case>> selected =
      select_cases(g_opt.sizes, g_opt.quick, g_opt.filter, "pixflow-bench");
  if (!selected) return 2;
  std::vector<Case> cases = std::move(*selected);
  if (list) {
    for (const Case& c : cases) std::printf("%s\n", c.name().c_str());
    return 0;
  }

  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "pixflow-bench: no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop{};
  int driver = 0, runtime = 0;
  (void)cudaGetDeviceProperties(&prop, 0);
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::printf("pixflow-bench: %s, driver %d, runtime %d, %s; NPP %s, cuBLAS %s; %zu cases\n",
              prop.name, driver, runtime, date, pb::npp_compiled() ? "on" : "off",
              pb::cublas_compiled() ? "on" : "off", cases.size());
  std::fflush(stdout);

  cudaStream_t s = nullptr;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
    std::fprintf(stderr, "pixflow-bench: cannot create a stream\n");
    return 1;
  }
  Inputs inputs(Location::cuda(0));
  std::vector<Row> rows;
  bool dead = false;
  std::string stop;
  std::string last_size;
  const auto t0 = std::chrono::steady_clock::now();
  for (Case& c : cases) {
    Row row;
    row.name = c.name();
    if (dead) {
      row.status = "not run (device context lost earlier)";
      rows.push_back(row);
      continue;
    }
    if (c.size() != last_size) {  // free the previous size's inputs before the next
      inputs.clear();
      last_size = c.size();
    }
    const auto tc = std::chrono::steady_clock::now();
    try {
      run_case(c, s, inputs, row);
    } catch (const CudaFail& e) {
      row.status = "error (" + e.what + ")";
      row.failed = true;
    } catch (const pixflow::Error& e) {
      row.status = std::string("error (") + status_name(e.status()) + ": " + e.what() + ")";
      row.failed = true;
    } catch (const std::exception& e) {
      row.status = std::string("error (") + e.what() + ")";
      row.failed = true;
    }
    if (row.failed && context_dead()) {
      dead = true;
      stop = "CUDA context lost after " + row.name + ": " + row.status;
      std::fprintf(stderr, "pixflow-bench: %s; the remaining cases are not run\n", stop.c_str());
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - tc).count();
    std::fprintf(
        stderr, "[bench] %-44s %-14s %s (%.1f s)\n", row.name.c_str(), us_cell(row).c_str(),
        row.failed ? ("FAILED " + row.status + " " + row.check_detail).c_str() : row.check.c_str(),
        secs);
    rows.push_back(row);
    // Rewritten after every case, so that a run cut off by a timeout still reports.
    if (!g_opt.json.empty())
      write_json(g_opt.json, rows, prop.name, driver, runtime, date, false, "running");
  }
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  print_table(rows);
  int failed = 0, na = 0, ok = 0, nocap = 0;
  for (const Row& r : rows) {
    failed += r.failed;
    na += r.status.rfind("n/a", 0) == 0;
    ok += r.status == "ok";
    nocap += !r.capture.empty();
  }
  std::printf(
      "\npixflow-bench: %zu cases in %.0f s: %d ok, %d FAILED, %d n/a, %d not capturable%s\n",
      rows.size(), total, ok, failed, na, nocap, dead ? " (stopped: context lost)" : "");
  if (!g_opt.json.empty())
    write_json(g_opt.json, rows, prop.name, driver, runtime, date, !dead, stop);
  (void)cudaStreamDestroy(s);
  return failed || dead ? 1 : 0;
}
