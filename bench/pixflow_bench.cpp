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
// through schema::Op::bind and timed as Bound::run (make_cases); dot and matmul by hand.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <cuda_runtime.h>

#include "bench/maps.hpp"
#include "bench/peers.hpp"
#include "pixflow/pixflow.hpp"
#include "src/schema/schema.hpp"

namespace pb = pixflow_bench;
namespace sc = pixflow::schema;
using namespace pixflow;

namespace {

// ---- small utilities ------------------------------------------------------------------------

std::string fmt_double(double v, int prec = 2) {
  if (!std::isfinite(v)) return "";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      o += '\\';
      o += ch;
    } else if (u < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", u);
      o += b;
    } else {
      o += ch;
    }
  }
  return o;
}
std::string jnum(double v) {
  if (!std::isfinite(v)) return "null";
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}
std::string jstr(const std::string& s) {
  return "\"" + json_escape(s) + "\"";
}

void parallel_for(std::int64_t n, const std::function<void(std::int64_t)>& f) {
  const int nt = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<std::int64_t> next{0};
  std::mutex m;
  std::exception_ptr first;
  std::vector<std::thread> ts;
  for (int t = 0; t < nt; ++t)
    ts.emplace_back([&] {
      for (std::int64_t i; (i = next++) < n;) {
        try {
          f(i);
        } catch (...) {
          std::lock_guard<std::mutex> g(m);
          if (!first) first = std::current_exception();
        }
      }
    });
  for (auto& t : ts) t.join();
  if (first) std::rethrow_exception(first);
}

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

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

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Times `launch` (enqueues one call on s; throws on failure) by graph replay. The caller has
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

// ---- inputs ----------------------------------------------------------------------------------

struct Buffer {
  Image host, dev;
};

/// Random host image (u8/u16/s16 over the full range, f32 uniform [0, 1)) and its device copy.
/// Cached by (size, format, salt) so that cases share uploads.
std::map<std::tuple<std::int64_t, std::int64_t, int, int, int>, std::shared_ptr<Buffer>> g_inputs;

std::shared_ptr<Buffer> random_input(std::int64_t w, std::int64_t h, Format f, int salt) {
  const auto key = std::make_tuple(w, h, int(f.depth), f.channels, salt);
  if (auto it = g_inputs.find(key); it != g_inputs.end()) return it->second;
  auto b = std::make_shared<Buffer>();
  b->host = Image(w, h, f);
  const std::int64_t spr = w * f.channels;
  Image& hi = b->host;
  parallel_for(h, [&](std::int64_t y) {
    std::uint64_t st = splitmix(std::uint64_t(salt) * 0x1000003ull + std::uint64_t(y));
    for (std::int64_t i = 0; i < spr; ++i) {
      st = splitmix(st);
      switch (f.depth) {
        case Depth::u8:
          hi.row<std::uint8_t>(y)[i] = std::uint8_t(st >> 56);
          break;
        case Depth::u16:
          hi.row<std::uint16_t>(y)[i] = std::uint16_t(st >> 48);
          break;
        case Depth::s16:
          hi.row<std::int16_t>(y)[i] = std::int16_t(st >> 48);
          break;
        case Depth::s32:
          hi.row<std::int32_t>(y)[i] = std::int32_t(st >> 40) - (1 << 23);
          break;
        case Depth::f32:
          hi.row<float>(y)[i] = float(st >> 40) / float(1 << 24);
          break;
      }
    }
  });
  b->dev = Image(w, h, f, Location::cuda(0));
  copy(b->host, b->dev);
  g_inputs[key] = b;
  return b;
}

/// The remap maps (bench/maps.hpp), on the host and the device.
std::pair<std::shared_ptr<Buffer>, std::shared_ptr<Buffer>> smooth_maps(std::int64_t w,
                                                                        std::int64_t h) {
  const auto kx = std::make_tuple(w, h, -1, 1, 0), ky = std::make_tuple(w, h, -1, 1, 1);
  if (g_inputs.count(kx)) return {g_inputs[kx], g_inputs[ky]};
  auto mx = std::make_shared<Buffer>(), my = std::make_shared<Buffer>();
  mx->host = Image(w, h, {Depth::f32, 1});
  my->host = Image(w, h, {Depth::f32, 1});
  parallel_for(h, [&](std::int64_t y) {
    bench::smooth_map_row(y, w, h, mx->host.row<float>(y), my->host.row<float>(y));
  });
  for (auto* b : {mx.get(), my.get()}) {
    b->dev = Image(w, h, {Depth::f32, 1}, Location::cuda(0));
    copy(b->host, b->dev);
  }
  g_inputs[kx] = mx;
  g_inputs[ky] = my;
  return {mx, my};
}

// ---- cases -----------------------------------------------------------------------------------

/// The images of one call: device views for the timed call, host views (possibly crops) for
/// the reference.
struct Views {
  ConstImageView src, src2, mx, my;
};
using OpFn = std::function<void(const Views&, ImageView, const Context&)>;

/// How the reference is computed for a band of destination rows [y0, y1).
enum class RefKind {
  local,      ///< dst rows depend on src rows within +-halo (src and src2 cropped with halo)
  remap,      ///< dst rows depend on the same map rows and the whole src
  matmul,     ///< C rows depend on the same A rows and the whole B
  transpose,  ///< dst rows are src columns
  full,       ///< no locality (recursive filters): the whole image, once
};

struct Tol {
  double abs = 0, rel = 0;  ///< pass if |got - want| <= abs + rel * |want|
  std::string text() const {
    if (abs == 0 && rel == 0) return "exact";
    std::string s;
    if (abs != 0) s += "abs " + fmt_double(abs, abs < 0.01 ? 6 : 2);
    if (rel != 0) s += std::string(s.empty() ? "" : " + ") + "rel " + jnum(rel);
    return s;
  }
};

struct Case {
  std::string op, variant;
  std::int64_t w = 0, h = 0;  ///< src size
  Format fmt;                 ///< src format
  std::int64_t ow = 0, oh = 0;
  Format ofmt;
  bool two_inputs = false, maps = false;
  std::int64_t w2 = 0, h2 = 0;  ///< second input size (matmul B), else src's
  /// Catalogue cases: the schema op and its KEY=VALUE list, bound to the case's images
  /// (bind_views) for every call. Hand-written cases (dot, matmul): schema_op is null.
  const sc::Op* schema_op = nullptr;
  sc::KeyValues kv;
  std::string params;  ///< kv as text, for the JSON
  OpFn fn;             ///< one call on the images of a Views (both kinds of case)
  RefKind ref = RefKind::local;
  int halo = 0;  ///< rows of source a destination row reads on either side (RefKind::local)
  Tol tol;
  pb::PeerCase peer;
  std::vector<float> kernel;  ///< filter2d taps kept alive for the peer
  std::string target;         ///< PERFORMANCE.md target for 8K u8 (µs), "" if none

  std::string size() const { return std::to_string(w) + "x" + std::to_string(h); }
  std::string name() const {
    return op + (variant.empty() ? "" : " " + variant) + " " + to_string(fmt) +
           (ofmt == fmt ? "" : "->" + to_string(ofmt)) + " " + size();
  }
  double in_bytes() const {
    double b = double(w) * double(h) * double(fmt.pixel_bytes());
    if (two_inputs) b += double(w2) * double(h2) * double(fmt.pixel_bytes());
    if (maps) b += 2.0 * double(ow) * double(oh) * 4.0;
    return b;
  }
  double out_bytes() const { return double(ow) * double(oh) * double(ofmt.pixel_bytes()); }
};

struct Row {
  std::string name, op, variant, params, size, fmt, out_fmt;
  std::string status = "not run";  ///< ok, n/a (...), FAILED (...), error (...)
  Timing t, copy;
  double copy_bytes = 0, in_bytes = 0, out_bytes = 0, out_pixels = 0;
  std::string npp_name, npp_note, npp_status;
  Timing npp;
  std::string capture;  ///< "" or "not capturable: ..."
  std::string check = "not run", check_detail;
  std::int64_t checked = 0, mismatches = 0;
  double max_err = 0;
  std::string tol;
  std::string target;
  bool failed = false;
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

// ---- the case list from the op schema ------------------------------------------------------
//
// Every schema::catalogue() op, every entry of op->bench(), in the formats below, at 1920x1080
// and 8192x8192 (--quick: 1080p). Everything about a case comes from the schema (parameters,
// output shape, halo, tolerance, target, label, formats, f32 parameters).
// dot and matmul (API only, not in the catalogue) are written by hand.

const Format kU8{Depth::u8, 1}, kRGB{Depth::u8, 3}, kF32{Depth::f32, 1}, kRGBF{Depth::f32, 3};

/// "k=3 border=wrap" -> {k: 3, border: wrap}; later pairs replace earlier ones.
void parse_kv(const std::string& text, sc::KeyValues& kv) {
  std::istringstream in(text);
  for (std::string tok; in >> tok;) {
    const std::size_t eq = tok.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(Status::invalid_argument, "bench: bad KEY=VALUE '" + tok + "' in '" + text + "'");
    kv[tok.substr(0, eq)] = tok.substr(eq + 1);
  }
}
std::string kv_text(const sc::KeyValues& kv) {
  std::string s;
  for (const auto& [k, v] : kv) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

/// The source formats an op is benchmarked in: its schema's bench_formats(), else u8x1, u8x3 and
/// f32x1 (u8x3 and f32x3 for an op that takes no 1-channel source, e.g. gray), those its depths and
/// channel counts allow.
bool takes_one_channel(const sc::Op& op) {
  return std::count(op.channels().begin(), op.channels().end(), 1) > 0;
}
std::vector<Format> bench_formats(const sc::Op& op) {
  std::vector<Format> want = !op.bench_formats().empty() ? op.bench_formats()
                             : takes_one_channel(op)     ? std::vector<Format>{kU8, kRGB, kF32}
                                                         : std::vector<Format>{kRGB, kRGBF};
  std::vector<Format> out;
  for (Format f : want)
    if (std::count(op.depths().begin(), op.depths().end(), f.depth) &&
        std::count(op.channels().begin(), op.channels().end(), f.channels))
      out.push_back(f);
  return out;
}

/// An Image that does not own its pixels (the case's buffers outlive every call).
std::shared_ptr<const Image> borrowed(const ConstImageView& v) {
  return std::make_shared<const Image>(
      Image::wrap({}, ImageView(const_cast<std::byte*>(v.data()), v.width(), v.height(), v.stride(),
                                v.format(), v.location())));
}

/// The schema's image parameters resolved to the images of a call: `with` (like_src) = src2,
/// map_x/map_y = mx/my. The parameter's text is a placeholder.
sc::ImageSource views_source(const Views& v) {
  return [v](const sc::Param& p, const std::string&) {
    switch (p.role) {
      case sc::ImageRole::like_src:
        return borrowed(v.src2);
      case sc::ImageRole::map_x:
        return borrowed(v.mx);
      case sc::ImageRole::map_y:
        return borrowed(v.my);
    }
    throw Error(Status::internal, "bench: unknown image role of " + p.name);
  };
}

std::unique_ptr<sc::Bound> bind_views(const Case& c, const Views& v) {
  return c.schema_op->bind(c.kv, views_source(v));
}

/// The value of a number parameter as bound: the case's text, else the schema's default.
std::optional<double> param_number(const sc::Op& op, const sc::KeyValues& kv,
                                   const std::string& name) {
  for (const sc::Param& p : op.params()) {
    if (p.name != name) continue;
    auto it = kv.find(name);
    const std::string text = it != kv.end() ? it->second : p.default_text;
    if (text.empty()) return std::nullopt;
    return std::stod(text);
  }
  return std::nullopt;
}

/// A `kernel=ROWS` parameter's taps (rows ';', values ','), for the NPP peer.
std::vector<float> kernel_taps(const std::string& text) {
  std::vector<float> taps;
  std::string t = text;
  std::replace(t.begin(), t.end(), ';', ',');
  std::istringstream in(t);
  for (std::string v; std::getline(in, v, ',');) taps.push_back(std::stof(v));
  return taps;
}

/// One case of a catalogue op: bench entry `params` (with the depth's rule merged over it) on
/// a w x h source of format f.
Case schema_case(const sc::Op& op, const std::string& params, const std::string& label,
                 const std::string& target, bool target_here, std::int64_t w, std::int64_t h,
                 Format f) {
  Case c;
  c.op = op.name();
  c.variant = label;
  c.w = c.w2 = w;
  c.h = c.h2 = h;
  c.fmt = f;
  c.schema_op = &op;
  parse_kv(params, c.kv);
  if (f.depth == Depth::f32) parse_kv(op.bench_f32_params(), c.kv);
  // Image parameters: a required one the entry does not name (remap's maps) gets a
  // placeholder text; views_source resolves them all by role.
  for (const sc::Param& p : op.params())
    if (p.kind == sc::Kind::image && p.required && !c.kv.count(p.name)) c.kv[p.name] = p.name;
  c.params = kv_text(c.kv);
  for (const sc::Param& p : op.params()) {
    if (p.kind != sc::Kind::image || !c.kv.count(p.name)) continue;
    if (p.role == sc::ImageRole::like_src)
      c.two_inputs = true;
    else
      c.maps = true;
  }
  c.fn = [&op, kv = c.kv](const Views& v, ImageView d, const Context& x) {
    op.bind(kv, views_source(v))->run(v.src, d, x);
  };

  // Shape and halo from a binding to placeholder images (no pixels are touched): `with` of
  // the source's size and format, the maps of the source's size (the output is the maps').
  const auto placeholder = [](std::int64_t pw, std::int64_t ph, Format pf) {
    return ConstImageView(nullptr, pw, ph, pw * std::int64_t(pf.pixel_bytes()), pf,
                          Location::cuda(0));
  };
  Views shapes;
  shapes.src = shapes.src2 = placeholder(w, h, f);
  shapes.mx = shapes.my = placeholder(w, h, {Depth::f32, 1});
  const auto bound = bind_views(c, shapes);
  const sc::Shape out = bound->output(shapes.src);
  c.ow = out.width;
  c.oh = out.height;
  c.ofmt = out.format;
  const sc::Halo halo = bound->halo(f);
  if (halo.x >= 0 && halo.y >= 0) {
    c.ref = RefKind::local;
    c.halo = halo.y;
    c.peer.kw = 2 * halo.x + 1;
    c.peer.kh = 2 * halo.y + 1;
  } else if (c.maps) {
    c.ref = RefKind::remap;
  } else {
    // No locality: a transposing op (a 7x5 source gives 5x7) checks by source columns,
    // anything else (recursive filters) on the whole image.
    const sc::Shape probe = bound->output(placeholder(7, 5, f));
    c.ref = probe.width == 5 && probe.height == 7 ? RefKind::transpose : RefKind::full;
  }
  const sc::Tolerance tol = op.bench_tolerance(f.depth);
  c.tol = Tol{tol.abs, tol.rel};
  if (target_here) c.target = target;

  // The NPP peer's parameters: kw/kh above, the rest by parameter name.
  c.peer.op = c.op;
  if (auto v = param_number(op, c.kv, "d")) c.peer.d = int(*v);
  if (auto v = param_number(op, c.kv, "sigma_color")) c.peer.sigma_color = *v;
  if (auto v = param_number(op, c.kv, "sigma_space")) c.peer.sigma_space = *v;
  if (auto v = param_number(op, c.kv, "t")) c.peer.t = *v;
  if (auto v = param_number(op, c.kv, "maxval")) c.peer.maxval = *v;
  if (auto it = c.kv.find("kernel"); it != c.kv.end()) c.kernel = kernel_taps(it->second);
  return c;
}

std::vector<Case> make_cases(bool quick) {
  std::vector<Case> cs;
  std::vector<std::pair<std::int64_t, std::int64_t>> sizes = {{1920, 1080}};
  if (!quick) sizes.push_back({8192, 8192});

  for (auto [w, h] : sizes) {
    const bool big = w == 8192;
    // Format-major within a size; ops that take 1 channel first, then the 3-channel-only
    // ones (gray), so that the order is that of the committed results.
    for (bool one_channel : {true, false}) {
      for (Format f : {kU8, kRGB, kF32, kRGBF}) {
        for (const sc::Op* op : sc::catalogue()) {
          if (takes_one_channel(*op) != one_channel) continue;
          const std::vector<Format> fs = bench_formats(*op);
          if (std::find(fs.begin(), fs.end(), f) == fs.end()) continue;
          // The PERFORMANCE.md targets are for 8K u8: the op's first u8 format (u8x1; gray:
          // u8x3).
          const bool target_here = big && f.depth == Depth::u8 && f == fs.front();
          for (const auto& e : op->bench()) {
            cs.push_back(schema_case(*op, e.params, e.label, e.target_us, target_here, w, h, f));
          }
        }
      }
    }

    auto base = [&](const std::string& op, const std::string& var, Format f, Format of) {
      Case c;
      c.op = op;
      c.variant = var;
      c.w = w;
      c.h = h;
      c.fmt = f;
      c.ow = w;
      c.oh = h;
      c.ofmt = of;
      c.w2 = w;
      c.h2 = h;
      c.peer.op = op;
      return c;
    };
    {
      const std::int64_t dw = big ? 4096 : w, dh = big ? 4096 : h;
      Case c = base("dot", "", {Depth::f32, 4}, kF32);
      c.w = c.ow = c.w2 = dw;
      c.h = c.oh = c.h2 = dh;
      c.two_inputs = true;
      c.fn = [](const Views& v, ImageView d, const Context& x) { dot(v.src, v.src2, d, x); };
      c.tol = Tol{1e-6, 1e-6};
      cs.push_back(c);
    }
    {
      const int n = big ? 4096 : 1024;
      Case c = base("matmul", std::to_string(n) + "^3", kF32, kF32);
      c.w = c.h = c.ow = c.oh = c.w2 = c.h2 = n;
      c.two_inputs = true;
      c.fn = [](const Views& v, ImageView d, const Context& x) { matmul(v.src, v.src2, d, x); };
      c.ref = RefKind::matmul;
      c.tol = Tol{0, 1e-5 * n};  // relative error <= 1e-5 * K (ops.hpp)
      c.peer.m = c.peer.n = c.peer.k = n;
      cs.push_back(c);
    }
  }
  return cs;
}

// ---- reference and comparison ----------------------------------------------------------------

/// Computes reference rows [y0, y1) of the case's destination into `out` (host, out rows only)
/// with Backend::ref on host views.
void ref_rows(const Case& c, const Views& h, std::int64_t y0, std::int64_t y1,
              const ImageView& out) {
  const Context rc{Backend::ref};
  switch (c.ref) {
    case RefKind::local: {
      const std::int64_t c0 = std::max<std::int64_t>(0, y0 - c.halo);
      const std::int64_t c1 = std::min<std::int64_t>(c.h, y1 + c.halo);
      Views v = h;
      v.src = h.src.roi(0, c0, c.w, c1 - c0);
      if (c.two_inputs) v.src2 = h.src2.roi(0, c0, c.w, c1 - c0);
      Image tmp(c.ow, c1 - c0, c.ofmt);
      c.fn(v, tmp, rc);
      copy(ConstImageView(tmp.view()).roi(0, y0 - c0, c.ow, y1 - y0), out);
      return;
    }
    case RefKind::remap: {
      Views v = h;
      v.mx = h.mx.roi(0, y0, c.ow, y1 - y0);
      v.my = h.my.roi(0, y0, c.ow, y1 - y0);
      c.fn(v, out, rc);
      return;
    }
    case RefKind::matmul: {
      Views v = h;
      v.src = h.src.roi(0, y0, c.w, y1 - y0);
      c.fn(v, out, rc);
      return;
    }
    case RefKind::transpose: {
      Views v = h;
      v.src = h.src.roi(y0, 0, y1 - y0, c.h);
      c.fn(v, out, rc);
      return;
    }
    case RefKind::full:
      break;
  }
  throw Error(Status::internal, "bench: full reference goes through ref_full");
}

template <class T>
double as_double(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return double(v);
}
double sample(Depth d, const std::byte* p) {
  switch (d) {
    case Depth::u8:
      return as_double<std::uint8_t>(p);
    case Depth::u16:
      return as_double<std::uint16_t>(p);
    case Depth::s16:
      return as_double<std::int16_t>(p);
    case Depth::s32:
      return as_double<std::int32_t>(p);
    case Depth::f32:
      return as_double<float>(p);
  }
  return NAN;
}

struct CheckResult {
  std::int64_t checked = 0, mismatches = 0;
  double max_err = 0;
  std::string first;
};

void compare_row(const Case& c, const ConstImageView& got, const ConstImageView& want,
                 std::int64_t y_got, std::int64_t y_want, std::int64_t y_report, CheckResult& r) {
  const Depth d = c.ofmt.depth;
  const std::size_t sb = depth_bytes(d);
  const std::int64_t n = c.ow * c.ofmt.channels;
  const std::byte* g = got.row_ptr(y_got);
  const std::byte* w = want.row_ptr(y_want);
  for (std::int64_t i = 0; i < n; ++i) {
    const double a = sample(d, g + i * sb), b = sample(d, w + i * sb);
    ++r.checked;
    if (std::isnan(a) && std::isnan(b)) continue;
    const double err = std::fabs(a - b);
    const bool ok = err <= c.tol.abs + c.tol.rel * std::fabs(b);
    if (!(err <= r.max_err)) r.max_err = std::isnan(err) ? INFINITY : std::max(r.max_err, err);
    if (!ok) {
      if (r.mismatches == 0) {
        std::ostringstream s;
        s.precision(9);
        s << "first at x=" << i / c.ofmt.channels << " y=" << y_report
          << " c=" << i % c.ofmt.channels << ": got " << a << ", want " << b;
        r.first = s.str();
      }
      ++r.mismatches;
    }
  }
}

/// Destination rows checked: all for small images; for large ones the first and last 4 rows,
/// the middle row and random rows, >= 120k pixels (whole rows, so border columns are in).
std::vector<std::int64_t> check_rows(const Case& c) {
  std::vector<std::int64_t> rows;
  if (c.ow * c.oh <= 4'000'000) {
    for (std::int64_t y = 0; y < c.oh; ++y) rows.push_back(y);
    return rows;
  }
  const std::int64_t want = std::max<std::int64_t>(16, (120000 + c.ow - 1) / c.ow);
  for (std::int64_t y : {std::int64_t(0), std::int64_t(1), std::int64_t(2), std::int64_t(3),
                         c.oh / 2, c.oh - 4, c.oh - 3, c.oh - 2, c.oh - 1})
    rows.push_back(y);
  std::uint64_t st = splitmix(std::hash<std::string>{}(c.name()));
  while (std::int64_t(rows.size()) < want) {
    st = splitmix(st);
    const std::int64_t y = std::int64_t(st % std::uint64_t(c.oh));
    if (std::find(rows.begin(), rows.end(), y) == rows.end()) rows.push_back(y);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

/// Compares the downloaded output with the reference. Throws pixflow::Error when the reference
/// itself is not available (reported as "n/a").
CheckResult check_case(const Case& c, const Views& host, const Image& got) {
  CheckResult r;
  if (c.ref == RefKind::full) {
    Image want(c.ow, c.oh, c.ofmt);
    c.fn(host, want, Context{Backend::ref});
    for (std::int64_t y : check_rows(c)) compare_row(c, got, want, y, y, y, r);
    return r;
  }
  const std::vector<std::int64_t> rows = check_rows(c);
  const bool all = std::int64_t(rows.size()) == c.oh;
  // Bands of consecutive rows (all rows) or single sampled rows, in parallel.
  const std::int64_t band = all ? 32 : 1;
  const std::int64_t nb = all ? (c.oh + band - 1) / band : std::int64_t(rows.size());
  std::vector<CheckResult> parts(static_cast<std::size_t>(nb));
  parallel_for(nb, [&](std::int64_t b) {
    const std::int64_t y0 = all ? b * band : rows[std::size_t(b)];
    const std::int64_t y1 = all ? std::min(c.oh, y0 + band) : y0 + 1;
    Image want(c.ow, y1 - y0, c.ofmt);
    ref_rows(c, host, y0, y1, want);
    for (std::int64_t y = y0; y < y1; ++y)
      compare_row(c, got, want, y, y - y0, y, parts[std::size_t(b)]);
  });
  for (auto& p : parts) {
    if (p.mismatches && !r.mismatches) r.first = p.first;
    r.checked += p.checked;
    r.mismatches += p.mismatches;
    r.max_err = std::max(r.max_err, p.max_err);
  }
  return r;
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

/// The row status for an Error thrown by the warm-up call, and whether it is a failure: an op
/// without a CUDA kernel (unsupported) or still a skeleton stub is "n/a"; anything else (a
/// backend_error, an invalid_argument for a valid case) is a defect.
std::pair<std::string, bool> error_status(const pixflow::Error& e) {
  const std::string what = e.what();
  if (e.status() == Status::unsupported && what.find("implementation") != std::string::npos)
    return {"n/a (no CUDA kernel)", false};
  if (e.status() == Status::unsupported) return {"n/a (unsupported: " + what + ")", false};
  if (e.status() == Status::internal && what.find("not implemented") != std::string::npos)
    return {"n/a (not implemented: " + what + ")", false};
  return {std::string("error (") + status_name(e.status()) + ": " + what + ")", true};
}

void run_case(Case& c, cudaStream_t s, Row& row) {
  row.name = c.name();
  row.op = c.op;
  row.variant = c.variant;
  row.params = c.params;
  row.size = c.size();
  row.fmt = to_string(c.fmt);
  row.out_fmt = to_string(c.ofmt);
  row.in_bytes = c.in_bytes();
  row.out_bytes = c.out_bytes();
  row.out_pixels = double(c.ow) * double(c.oh);
  row.tol = c.tol.text();
  row.target = c.target;

  // Inputs and destination.
  auto in = random_input(c.w, c.h, c.fmt, 1);
  std::shared_ptr<Buffer> in2, mx, my;
  if (c.two_inputs) in2 = random_input(c.w2, c.h2, c.fmt, 2);
  if (c.maps) std::tie(mx, my) = smooth_maps(c.ow, c.oh);
  Views dv, hv;
  dv.src = in->dev;
  hv.src = in->host;
  if (in2) {
    dv.src2 = in2->dev;
    hv.src2 = in2->host;
  }
  if (mx) {
    dv.mx = mx->dev;
    dv.my = my->dev;
    hv.mx = mx->host;
    hv.my = my->host;
  }
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
    std::tie(row.status, row.failed) = error_status(e);
    row.check = "n/a";
  }
  if (row.status == "not run") {
    row.t = time_calls(s, launch);
    if (!row.t.problem.empty()) row.capture = "not capturable: " + row.t.problem;
    ck(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  }

  // Copy floor: (in + out) / 2 bytes copied, so that read + write traffic equals the op's.
  row.copy_bytes = std::floor((row.in_bytes + row.out_bytes) / 2.0);
  copy_bufs(std::size_t(row.copy_bytes));
  row.copy = time_calls(s, [&] {
    ck(cudaMemcpyAsync(g_copy.b.get(), g_copy.a.get(), std::size_t(row.copy_bytes),
                       cudaMemcpyDeviceToDevice, s),
       "cudaMemcpyAsync");
  });

  // Peers (NPP for images, cuBLAS for matmul), into a scratch destination.
  {
    Image pdst(c.ow, c.oh, c.ofmt, Location::cuda(0));
    pb::PeerCase pc = c.peer;
    pc.kernel = c.kernel.empty() ? nullptr : c.kernel.data();
    pc.src = peer_image(dv.src);
    if (in2) pc.src2 = peer_image(dv.src2);
    if (mx) {
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
    try {
      const CheckResult r = check_case(c, hv, got);
      row.checked = r.checked;
      row.mismatches = r.mismatches;
      row.max_err = r.max_err;
      if (r.mismatches) {
        row.check = "FAILED";
        row.check_detail = std::to_string(r.mismatches) + " of " + std::to_string(r.checked) +
                           " samples off (tolerance " + row.tol + "); " + r.first;
        row.failed = true;
      } else {
        row.check = "ok";
        row.check_detail = std::to_string(r.checked) + " samples, " + row.tol;
      }
    } catch (const pixflow::Error& e) {
      row.check = "n/a (reference: " + std::string(e.what()) + ")";
    }
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
    o << "    {\"case\": " << jstr(r.name) << ", \"op\": " << jstr(r.op)
      << ", \"variant\": " << jstr(r.variant) << ", \"params\": " << jstr(r.params)
      << ", \"size\": " << jstr(r.size) << ", \"format\": " << jstr(r.fmt)
      << ", \"out_format\": " << jstr(r.out_fmt) << ", \"status\": " << jstr(r.status)
      << ", \"us\": " << jnum(timed && r.capture.empty() ? r.t.us : NAN)
      << ", \"capturable\": " << (r.capture.empty() ? "true" : "false")
      << ", \"capture_problem\": " << jstr(r.capture) << ", \"timing\": " << timing_json(r.t)
      << ", \"gpix_s\": " << jnum(timed ? r.out_pixels / r.t.us / 1e3 : NAN)
      << ", \"gb_s\": " << jnum(timed ? (r.in_bytes + r.out_bytes) / r.t.us / 1e3 : NAN)
      << ", \"in_bytes\": " << jnum(r.in_bytes) << ", \"out_bytes\": " << jnum(r.out_bytes)
      << ", \"out_pixels\": " << jnum(r.out_pixels) << ", \"copy_bytes\": " << jnum(r.copy_bytes)
      << ", \"copy_us\": " << jnum(r.copy.us) << ", \"copy\": " << timing_json(r.copy)
      << ", \"ratio_to_copy\": " << jnum(timed ? r.t.us / r.copy.us : NAN)
      << ", \"npp\": {\"function\": " << jstr(r.npp_name) << ", \"note\": " << jstr(r.npp_note)
      << ", \"status\": " << jstr(r.npp_status)
      << ", \"us\": " << jnum(r.npp_status.rfind("ok", 0) == 0 ? r.npp.us : NAN)
      << ", \"timing\": " << timing_json(r.npp) << "}"
      << ", \"check\": " << jstr(r.check) << ", \"check_detail\": " << jstr(r.check_detail)
      << ", \"checked\": " << r.checked << ", \"mismatches\": " << r.mismatches
      << ", \"max_err\": " << jnum(r.max_err) << ", \"tolerance\": " << jstr(r.tol)
      << ", \"target_us\": " << (r.target.empty() ? "null" : r.target)
      << ", \"failed\": " << (r.failed ? "true" : "false") << "}"
      << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  o << "  ]\n}\n";
  if (!o) std::fprintf(stderr, "pixflow-bench: cannot write %s\n", path.c_str());
}

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--filter REGEX] [--quick] [--json FILE] [--list]\n"
               "  --filter REGEX  run the cases whose name matches (e.g. 'median|box .*u8x1')\n"
               "  --quick         1920x1080 only, shorter graphs\n"
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
    } else if (a == "--json" && i + 1 < argc) {
      g_opt.json = argv[++i];
    } else if (a == "--list") {
      list = true;
    } else {
      return usage(argv[0]);
    }
  }
  std::vector<Case> cases;
  try {
    for (Case& c : make_cases(g_opt.quick))
      if (std::regex_search(c.name(), g_opt.filter)) cases.push_back(std::move(c));
  } catch (const std::exception& e) {  // a bench entry the schema itself rejects
    std::fprintf(stderr, "pixflow-bench: cannot make the case list: %s\n", e.what());
    return 2;
  }
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
      g_inputs.clear();
      last_size = c.size();
    }
    const auto tc = std::chrono::steady_clock::now();
    try {
      run_case(c, s, row);
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
