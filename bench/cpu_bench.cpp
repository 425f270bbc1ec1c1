// pixflow-bench-cpu: the CPU benchmark of issue 9 (docs/bench.md, "CPU").
//
// Every benchmark case of the op schema (src/schema: each catalogue op's bench() entries) at
// SIZE x SIZE (default 4096) for u8x1 and u8x3 where the op takes them, timed on the host:
//   ref       Backend::ref (scalar, one thread), one run: the oracle;
//   cpu 1T    Backend::cpu with Context::threads = 1;
//   cpu NT    Backend::cpu with all hardware threads (or --threads N);
//   OpenCV    the same operation through OpenCV's C++ API with cv::setNumThreads(1) and (N),
//             in the same process on the same input (peers below; "—" where OpenCV has none).
// Protocol (PERFORMANCE.md, host version): one warm-up call, then the median of --repeats calls
// (default 7) on the same preallocated, poisoned output (a warm-up slower than 1 s counts as a
// run, and one more call is made: the slow cases are the threaded reference's). Every cpu output
// (1T and NT) is compared with ref's byte for byte; a mismatch is reported and makes the exit
// status 1. OpenCV's output is compared with ref's for information (its border and rounding rules
// differ in places: docs/ops/*.md); the max |difference| is printed. Also matmul 1024x1024 f32
// beside OpenBLAS's cblas_sgemm when the build found it.
//
// Output: a Markdown table on stdout (and --md FILE), one JSON object per case (--json FILE),
// with the CPU model, the SIMD target dispatch chose and OpenCV's.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>

#if PIXFLOW_HAVE_OPENBLAS
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
#endif

#include "bench/maps.hpp"
#include "pixflow/pixflow.hpp"
#include "src/schema/schema.hpp"

namespace sc = pixflow::schema;
using namespace pixflow;

namespace {

struct Options {
  std::int64_t size = 4096;
  int repeats = 7;
  int threads = 0;  // 0 = hardware threads
  std::string filter;
  std::vector<Format> formats{{Depth::u8, 1}, {Depth::u8, 3}};
  std::string json, md;
  bool with_ref = true;
};

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v[v.size() / 2];
}

/// Median time of `repeats` calls after one warm-up. A call slower than 1 s (the threaded
/// reference behind an op without a SIMD kernel) is its own measurement: the median of the
/// calls made within 1 s after it, at least one more.
double time_ms(int repeats, const std::function<void()>& f) {
  const double w0 = now_ms();
  f();
  const double warm = now_ms() - w0;
  std::vector<double> t;
  if (warm > 1000) {
    t.push_back(warm);
    repeats = 1;
  }
  for (int i = 0; i < repeats; ++i) {
    const double t0 = now_ms();
    f();
    t.push_back(now_ms() - t0);
  }
  return median_of(t);
}

void fill_random(const ImageView& v, std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> real(lo, hi);
  std::uniform_int_distribution<int> byte(0, 255);
  for (std::int64_t y = 0; y < v.height(); ++y) {
    const std::int64_t n = v.width() * v.channels();
    switch (v.depth()) {
      case Depth::u8:
        for (std::int64_t i = 0; i < n; ++i) v.row<std::uint8_t>(y)[i] = std::uint8_t(byte(rng));
        break;
      case Depth::f32:
        for (std::int64_t i = 0; i < n; ++i) v.row<float>(y)[i] = float(real(rng));
        break;
      default:
        std::memset(v.row<std::byte>(y), 0, std::size_t(v.row_bytes()));
    }
  }
}

void poison(const ImageView& v) {
  for (std::int64_t y = 0; y < v.height(); ++y)
    std::memset(v.row<std::byte>(y), 0xA5, std::size_t(v.row_bytes()));
}

bool same_bytes(const ConstImageView& a, const ConstImageView& b) {
  if (a.width() != b.width() || a.height() != b.height() || a.format() != b.format()) return false;
  const std::size_t row = std::size_t(a.row_bytes());
  for (std::int64_t y = 0; y < a.height(); ++y)
    if (std::memcmp(a.row<std::byte>(y), b.row<std::byte>(y), row) != 0) return false;
  return true;
}

int cv_depth(Depth d) {
  switch (d) {
    case Depth::u8:
      return CV_8U;
    case Depth::u16:
      return CV_16U;
    case Depth::s16:
      return CV_16S;
    case Depth::s32:
      return CV_32S;
    case Depth::f32:
      return CV_32F;
  }
  return -1;
}

cv::Mat as_mat(const ConstImageView& v) {
  return cv::Mat(int(v.height()), int(v.width()), CV_MAKETYPE(cv_depth(v.depth()), v.channels()),
                 const_cast<std::byte*>(v.data()), std::size_t(v.stride()));
}

double max_abs_diff(const cv::Mat& a, const cv::Mat& b) {
  if (a.size() != b.size() || a.type() != b.type()) return NAN;
  cv::Mat fa, fb;
  a.convertTo(fa, CV_64F);
  b.convertTo(fb, CV_64F);
  double mx = 0;
  cv::Mat diff = cv::abs(fa - fb);
  cv::minMaxLoc(diff.reshape(1), nullptr, &mx);
  return mx;
}

// ---- OpenCV peers -------------------------------------------------------------------------

struct PeerInput {
  cv::Mat src, other, map_x, map_y;  // other: the second operand of arith
  sc::KeyValues kv;
};
using Peer = std::function<void(const PeerInput&, cv::Mat& dst)>;

int kv_int(const sc::KeyValues& kv, const char* key, int dflt) {
  auto it = kv.find(key);
  return it == kv.end() ? dflt : std::stoi(it->second);
}
double kv_double(const sc::KeyValues& kv, const char* key, double dflt) {
  auto it = kv.find(key);
  return it == kv.end() ? dflt : std::stod(it->second);
}

cv::Mat parse_kernel(const std::string& text) {
  std::vector<std::vector<float>> rows(1);
  std::string num;
  auto flush = [&] {
    if (!num.empty()) rows.back().push_back(std::stof(num));
    num.clear();
  };
  for (char c : text) {
    if (c == ',') {
      flush();
    } else if (c == ';') {
      flush();
      rows.emplace_back();
    } else {
      num += c;
    }
  }
  flush();
  cv::Mat k(int(rows.size()), int(rows[0].size()), CV_32F);
  for (int y = 0; y < k.rows; ++y)
    for (int x = 0; x < k.cols; ++x) k.at<float>(y, x) = rows[std::size_t(y)][std::size_t(x)];
  return k;
}

std::optional<Peer> opencv_peer(const std::string& op) {
  auto morph = [](int type) -> Peer {
    return [type](const PeerInput& in, cv::Mat& d) {
      const int k = kv_int(in.kv, "k", 3);
      cv::morphologyEx(in.src, d, type, cv::getStructuringElement(cv::MORPH_RECT, {k, k}), {-1, -1},
                       1, cv::BORDER_REPLICATE);
    };
  };
  if (op == "median")
    return
        [](const PeerInput& in, cv::Mat& d) { cv::medianBlur(in.src, d, kv_int(in.kv, "k", 3)); };
  if (op == "dilate") return morph(cv::MORPH_DILATE);
  if (op == "erode") return morph(cv::MORPH_ERODE);
  if (op == "open") return morph(cv::MORPH_OPEN);
  if (op == "close") return morph(cv::MORPH_CLOSE);
  if (op == "gradient") return morph(cv::MORPH_GRADIENT);
  if (op == "tophat") return morph(cv::MORPH_TOPHAT);
  if (op == "blackhat") return morph(cv::MORPH_BLACKHAT);
  if (op == "box")
    return [](const PeerInput& in, cv::Mat& d) {
      const int k = kv_int(in.kv, "k", 3);
      cv::blur(in.src, d, {k, k});
    };
  if (op == "gaussian")
    return [](const PeerInput& in, cv::Mat& d) {
      const int k = kv_int(in.kv, "k", 0);
      cv::GaussianBlur(in.src, d, {k, k}, kv_double(in.kv, "sigma", 0));
    };
  if (op == "sobel")
    return [](const PeerInput& in, cv::Mat& d) {
      cv::Sobel(in.src, d, CV_16S, kv_int(in.kv, "dx", 1), kv_int(in.kv, "dy", 0),
                kv_int(in.kv, "k", 3));
    };
  if (op == "scharr")
    return [](const PeerInput& in, cv::Mat& d) {
      cv::Scharr(in.src, d, CV_16S, kv_int(in.kv, "dx", 1), kv_int(in.kv, "dy", 0));
    };
  if (op == "filter2d")
    return [](const PeerInput& in, cv::Mat& d) {
      cv::filter2D(in.src, d, -1, parse_kernel(in.kv.at("kernel")));
    };
  if (op == "bilateral")
    return [](const PeerInput& in, cv::Mat& d) {
      cv::bilateralFilter(in.src, d, kv_int(in.kv, "d", 9), kv_double(in.kv, "sigma_color", 75),
                          kv_double(in.kv, "sigma_space", 75));
    };
  if (op == "remap")
    return [](const PeerInput& in, cv::Mat& d) {
      cv::remap(in.src, d, in.map_x, in.map_y, cv::INTER_LINEAR, cv::BORDER_CONSTANT, 0);
    };
  if (op == "transpose") return [](const PeerInput& in, cv::Mat& d) { cv::transpose(in.src, d); };
  if (op == "gray")
    return [](const PeerInput& in, cv::Mat& d) { cv::cvtColor(in.src, d, cv::COLOR_RGB2GRAY); };
  if (op == "add") return [](const PeerInput& in, cv::Mat& d) { cv::add(in.src, in.other, d); };
  if (op == "sub")
    return [](const PeerInput& in, cv::Mat& d) { cv::subtract(in.src, in.other, d); };
  if (op == "absdiff")
    return [](const PeerInput& in, cv::Mat& d) { cv::absdiff(in.src, in.other, d); };
  if (op == "mul")
    return [](const PeerInput& in, cv::Mat& d) { cv::multiply(in.src, in.other, d); };
  if (op == "convert")
    return [](const PeerInput& in, cv::Mat& d) {
      in.src.convertTo(d, CV_32F, kv_double(in.kv, "scale", 1));
    };
  if (op == "threshold")
    return [](const PeerInput& in, cv::Mat& d) {
      cv::threshold(in.src, d, kv_double(in.kv, "t", 127), kv_double(in.kv, "maxval", 255),
                    cv::THRESH_BINARY);
    };
  return std::nullopt;
}

// ---- results ------------------------------------------------------------------------------

struct Result {
  std::string op, label, params, format;
  double ref_ms = NAN, cpu1 = NAN, cpun = NAN, cv1 = NAN, cvn = NAN;
  std::string check;  // "exact" or what differs
  double cv_diff = NAN;
  double mb = 0;  // bytes read + written per call, MB
};

std::string fmt(double v, int prec = 2) {
  if (!std::isfinite(v)) return "—";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

std::string jnum(double v) {
  if (!std::isfinite(v)) return "null";
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const auto c = line.find(':');
      return c == std::string::npos ? line : line.substr(c + 2);
    }
  return "unknown";
}

std::vector<Format> parse_formats(const std::string& s) {
  std::vector<Format> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto x = item.find('x');
    const std::string d = item.substr(0, x);
    const int ch = x == std::string::npos ? 1 : std::stoi(item.substr(x + 1));
    Depth depth = d == "u16" ? Depth::u16 : d == "f32" ? Depth::f32 : Depth::u8;
    out.push_back({depth, ch});
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "pixflow-bench-cpu: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--size")
      o.size = std::stoll(next());
    else if (a == "--repeats")
      o.repeats = std::max(1, std::stoi(next()));
    else if (a == "--threads")
      o.threads = std::stoi(next());
    else if (a == "--filter")
      o.filter = next();
    else if (a == "--formats")
      o.formats = parse_formats(next());
    else if (a == "--json")
      o.json = next();
    else if (a == "--md")
      o.md = next();
    else if (a == "--no-ref-timing")
      o.with_ref = false;
    else {
      std::fprintf(stderr,
                   "usage: pixflow-bench-cpu [--size N] [--repeats N] [--threads N] "
                   "[--filter REGEX] [--formats u8x1,u8x3] [--json FILE] [--md FILE]\n");
      std::exit(a == "--help" ? 0 : 2);
    }
  }
  return o;
}

Result run_case(const Options& o, const sc::Op& op, const sc::BenchCase& bc, Format fmt,
                int threads, std::mt19937_64& rng) {
  Result r;
  r.op = op.name();
  r.label = bc.label;
  r.params = bc.params;
  r.format = to_string(fmt);
  const std::int64_t n = o.size;
  Image src(n, n, fmt);
  fill_random(src.view(), rng, 0, 1);
  PeerInput pin;
  pin.src = as_mat(src.view());
  sc::KeyValues kv;
  {
    std::stringstream in(bc.params);
    std::string item;
    while (in >> item) {
      const auto eq = item.find('=');
      kv[item.substr(0, eq)] = eq == std::string::npos ? "" : item.substr(eq + 1);
    }
  }
  for (const sc::Param& p : op.params())
    if (p.kind == sc::Kind::image && p.required && !kv.count(p.name)) kv[p.name] = "random";
  pin.kv = kv;
  std::vector<std::shared_ptr<const Image>> held;
  auto images = [&](const sc::Param& p, const std::string&) -> std::shared_ptr<const Image> {
    std::shared_ptr<Image> img;
    switch (p.role) {
      case sc::ImageRole::like_src:
        img = std::make_shared<Image>(n, n, fmt);
        fill_random(img->view(), rng, 0, 1);
        pin.other = as_mat(img->view());
        break;
      case sc::ImageRole::map_x:
      case sc::ImageRole::map_y: {
        img = std::make_shared<Image>(n, n, Format{Depth::f32, 1});
        std::vector<float> other(static_cast<std::size_t>(n));
        for (std::int64_t y = 0; y < n; ++y) {
          float* row = img->view().row<float>(y);
          if (p.role == sc::ImageRole::map_x)
            bench::smooth_map_row(y, n, n, row, other.data());
          else
            bench::smooth_map_row(y, n, n, other.data(), row);
        }
        (p.role == sc::ImageRole::map_x ? pin.map_x : pin.map_y) = as_mat(img->view());
        break;
      }
    }
    held.push_back(img);
    return img;
  };
  const auto bound = op.bind(kv, images);
  const sc::Shape out = bound->output(src.view());
  Image want(out.width, out.height, out.format), got(out.width, out.height, out.format);
  r.mb = double(src.view().stride() * n + want.view().stride() * out.height) / 1e6;

  poison(want.view());
  const double t0 = now_ms();
  bound->run(src.view(), want.view(), Context{Backend::ref});
  r.ref_ms = now_ms() - t0;
  if (!o.with_ref) r.ref_ms = NAN;

  std::string check = "exact";
  for (int t : {1, threads}) {
    Context ctx{Backend::cpu};
    ctx.threads = t;
    poison(got.view());
    const double ms = time_ms(o.repeats, [&] { bound->run(src.view(), got.view(), ctx); });
    (t == 1 ? r.cpu1 : r.cpun) = ms;
    if (!same_bytes(got.view(), want.view()))
      check = "MISMATCH at " + std::to_string(t) + " thread(s)";
  }
  r.check = check;

  if (auto peer = opencv_peer(op.name())) {
    cv::Mat d;
    try {
      for (int t : {1, threads}) {
        cv::setNumThreads(t);
        (t == 1 ? r.cv1 : r.cvn) = time_ms(o.repeats, [&] { (*peer)(pin, d); });
      }
      r.cv_diff = max_abs_diff(d, as_mat(want.view()));
    } catch (const cv::Exception& e) {
      std::fprintf(stderr, "OpenCV %s %s: %s\n", r.op.c_str(), r.format.c_str(), e.what());
      r.cv1 = r.cvn = NAN;
    }
  }
  return r;
}

#if PIXFLOW_HAVE_OPENBLAS
Result run_matmul(const Options& o, int threads, std::mt19937_64& rng) {
  Result r;
  r.op = "matmul";
  r.label = "1024^3";
  r.format = "f32x1";
  const std::int64_t n = 1024;
  Image a(n, n, {Depth::f32, 1}), b(n, n, {Depth::f32, 1}), want(n, n, {Depth::f32, 1}),
      got(n, n, {Depth::f32, 1});
  fill_random(a.view(), rng, -1, 1);
  fill_random(b.view(), rng, -1, 1);
  r.mb = 3.0 * n * n * 4 / 1e6;
  const double t0 = now_ms();
  matmul(a.view(), b.view(), want.view(), Context{Backend::ref});
  r.ref_ms = o.with_ref ? now_ms() - t0 : NAN;
  r.check = "exact";
  for (int t : {1, threads}) {
    Context ctx{Backend::cpu};
    ctx.threads = t;
    poison(got.view());
    (t == 1 ? r.cpu1 : r.cpun) =
        time_ms(o.repeats, [&] { matmul(a.view(), b.view(), got.view(), ctx); });
    if (!same_bytes(got.view(), want.view()))
      r.check = "MISMATCH at " + std::to_string(t) + " thread(s)";
  }
  std::vector<float> c(std::size_t(n * n));
  for (int t : {1, threads}) {
    openblas_set_num_threads(t);
    (t == 1 ? r.cv1 : r.cvn) = time_ms(o.repeats, [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(n), int(n), int(n), 1.0f,
                  a.view().row<float>(0), int(a.view().stride() / 4), b.view().row<float>(0),
                  int(b.view().stride() / 4), 0.0f, c.data(), int(n));
    });
  }
  double mx = 0;
  for (std::int64_t y = 0; y < n; ++y)
    for (std::int64_t x = 0; x < n; ++x)
      mx =
          std::max(mx, double(std::fabs(c[std::size_t(y * n + x)] - want.view().row<float>(y)[x])));
  r.cv_diff = mx;
  return r;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const int threads =
      o.threads > 0 ? o.threads : int(std::max(1u, std::thread::hardware_concurrency()));
  std::mt19937_64 rng(20261123);
  const std::regex filter(o.filter.empty() ? ".*" : o.filter);
  const std::string cpu = cpu_model(), note = backend_note(Backend::cpu);
  std::printf(
      "# pixflow-bench-cpu\n\nCPU: %s, %d threads used (of %u)\npixflow cpu backend: %s\n"
      "OpenCV %s, %s\nsize %" PRId64 "x%" PRId64
      ", median of %d runs after a warm-up; "
      "ms per call\n\n",
      cpu.c_str(), threads, std::thread::hardware_concurrency(), note.c_str(), CV_VERSION,
      cv::getCPUFeaturesLine().c_str(), o.size, o.size, o.repeats);
  std::vector<Result> results;
  bool mismatch = false;
  const char* header =
      "| op | case | format | ref | cpu 1T | OpenCV 1T | × 1T | cpu NT | OpenCV NT | × NT | "
      "GB/s NT | check | max \\|cv−ref\\| "
      "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::printf("%s", header);
  auto print = [&](const Result& r) {
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                r.op.c_str(), r.label.c_str(), r.format.c_str(), fmt(r.ref_ms, 1).c_str(),
                fmt(r.cpu1).c_str(), fmt(r.cv1).c_str(), fmt(r.cv1 / r.cpu1).c_str(),
                fmt(r.cpun).c_str(), fmt(r.cvn).c_str(), fmt(r.cvn / r.cpun).c_str(),
                fmt(r.mb / r.cpun, 1).c_str(), r.check.c_str(), fmt(r.cv_diff, 3).c_str());
    std::fflush(stdout);
  };
  for (const sc::Op* op : sc::catalogue())
    for (const sc::BenchCase& bc : op->bench())
      for (const Format& f : o.formats) {
        if (!std::regex_search(op->name() + " " + bc.label + " " + to_string(f), filter)) continue;
        if (std::find(op->channels().begin(), op->channels().end(), f.channels) ==
                op->channels().end() ||
            std::find(op->depths().begin(), op->depths().end(), f.depth) == op->depths().end())
          continue;
        try {
          results.push_back(run_case(o, *op, bc, f, threads, rng));
        } catch (const std::exception& e) {
          // An op that cannot take this format (gray on u8x1, ...): not a case.
          continue;
        }
        mismatch |= results.back().check != "exact";
        print(results.back());
      }
#if PIXFLOW_HAVE_OPENBLAS
  if (std::regex_search(std::string("matmul"), filter)) {
    results.push_back(run_matmul(o, threads, rng));
    mismatch |= results.back().check != "exact";
    print(results.back());
    std::printf("\n(matmul: the OpenCV columns are OpenBLAS cblas_sgemm.)\n");
  }
#endif
  if (!o.md.empty()) {
    std::ofstream md(o.md);
    md << "# pixflow-bench-cpu\n\nCPU: " << cpu << ", " << threads << " threads used\n\n"
       << "pixflow cpu backend: " << note << "\n\nOpenCV " << CV_VERSION << " ("
       << cv::getCPUFeaturesLine() << "); size " << o.size << "x" << o.size << ", median of "
       << o.repeats << " runs after a warm-up; ms per call; × = OpenCV time / pixflow time\n\n"
       << header;
    for (const Result& r : results)
      md << "| " << r.op << " | " << r.label << " | " << r.format << " | " << fmt(r.ref_ms, 1)
         << " | " << fmt(r.cpu1) << " | " << fmt(r.cv1) << " | " << fmt(r.cv1 / r.cpu1) << " | "
         << fmt(r.cpun) << " | " << fmt(r.cvn) << " | " << fmt(r.cvn / r.cpun) << " | "
         << fmt(r.mb / r.cpun, 1) << " | " << r.check << " | " << fmt(r.cv_diff, 3) << " |\n";
  }
  if (!o.json.empty()) {
    std::ofstream js(o.json);
    js << "{\"cpu\": \"" << cpu << "\", \"threads\": " << threads << ", \"backend_note\": \""
       << note << "\", \"opencv\": \"" << CV_VERSION << "\", \"size\": " << o.size
       << ", \"cases\": [\n";
    for (std::size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      js << "  {\"op\": \"" << r.op << "\", \"label\": \"" << r.label << "\", \"format\": \""
         << r.format << "\", \"ref_ms\": " << jnum(r.ref_ms) << ", \"cpu_1t_ms\": " << jnum(r.cpu1)
         << ", \"cpu_nt_ms\": " << jnum(r.cpun) << ", \"peer_1t_ms\": " << jnum(r.cv1)
         << ", \"peer_nt_ms\": " << jnum(r.cvn) << ", \"mb\": " << jnum(r.mb) << ", \"check\": \""
         << r.check << "\", \"peer_max_diff\": " << jnum(r.cv_diff) << "}"
         << (i + 1 < results.size() ? ",\n" : "\n");
    }
    js << "]}\n";
  }
  if (mismatch) std::fprintf(stderr, "pixflow-bench-cpu: some cpu outputs differ from ref\n");
  return mismatch ? 1 : 0;
}
