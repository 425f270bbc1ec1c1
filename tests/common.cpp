#include "tests/common.hpp"

#if PIXFLOW_HAVE_SIMD
#include "src/backends/cpu/simd/rows.hpp"
#endif

#include "src/base/numeric.hpp"
#include "src/schema/schema.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace pixflow::test {

namespace {
// The OpenCL programs the tests (and the CLI processes they start, which inherit the
// environment) build go to a cache folder of the build tree, never into the user's ~/.cache;
// a PIXFLOW_OPENCL_CACHE_DIR set by the caller wins. Set before main, so before any build.
[[maybe_unused]] const bool g_opencl_cache_dir_set =
    setenv("PIXFLOW_OPENCL_CACHE_DIR", PIXFLOW_TEST_OPENCL_CACHE_DIR, /*overwrite=*/0) == 0;
}  // namespace

template <class T>
T detail_saturate(double v) {
  return detail::saturate_cast<T>(v);
}

std::uint64_t run_seed() {
  static const std::uint64_t seed = [] {
    if (const char* s = std::getenv("PIXFLOW_TEST_SEED"))
      return std::uint64_t(std::strtoull(s, nullptr, 0));
    return std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  }();
  return seed;
}

std::mt19937_64 make_rng(std::uint64_t salt) {
  std::seed_seq seq{std::uint32_t(run_seed()), std::uint32_t(run_seed() >> 32), std::uint32_t(salt),
                    std::uint32_t(salt >> 32)};
  return std::mt19937_64(seq);
}

namespace {

TestImage padded(std::int64_t w, std::int64_t h, Format fmt, std::mt19937_64& rng, bool tight) {
  const std::int64_t ox = tight ? 0 : std::int64_t(rng() % 3);
  const std::int64_t oy = tight ? 0 : std::int64_t(rng() % 2);
  const std::int64_t pad = tight ? 0 : 1 + std::int64_t(rng() % 5);
  TestImage t;
  t.backing = Image(w + ox + pad, h + oy, fmt);
  t.view = t.backing.view().roi(ox, oy, w, h);
  return t;
}

template <class T>
void fill(const ImageView& v, std::mt19937_64& rng, double lo, double hi) {
  const std::int64_t n = v.width() * v.channels();
  for (std::int64_t y = 0; y < v.height(); ++y) {
    T* r = v.row<T>(y);
    if constexpr (std::is_same_v<T, float>) {
      std::uniform_real_distribution<float> d{float(lo), float(hi)};
      for (std::int64_t i = 0; i < n; ++i) r[i] = d(rng);
    } else {
      std::uniform_int_distribution<std::int64_t> d{std::int64_t(lo), std::int64_t(hi)};
      for (std::int64_t i = 0; i < n; ++i) r[i] = T(d(rng));
    }
  }
}

}  // namespace

TestImage random_image(std::int64_t w, std::int64_t h, Format fmt, std::mt19937_64& rng, bool tight,
                       double lo, double hi) {
  TestImage t = padded(w, h, fmt, rng, tight);
  poison(t.backing.view());
  if (!(lo < hi)) {
    switch (fmt.depth) {
      case Depth::u8:
        lo = 0, hi = 255;
        break;
      case Depth::u16:
        lo = 0, hi = 65535;
        break;
      case Depth::s16:
        lo = -32768, hi = 32767;
        break;
      case Depth::s32:
        lo = -1000000, hi = 1000000;
        break;
      case Depth::f32:
        lo = -1000, hi = 1000;
        break;
    }
  }
  switch (fmt.depth) {
    case Depth::u8:
      fill<std::uint8_t>(t.view, rng, lo, hi);
      break;
    case Depth::u16:
      fill<std::uint16_t>(t.view, rng, lo, hi);
      break;
    case Depth::s16:
      fill<std::int16_t>(t.view, rng, lo, hi);
      break;
    case Depth::s32:
      fill<std::int32_t>(t.view, rng, lo, hi);
      break;
    case Depth::f32:
      fill<float>(t.view, rng, lo, hi);
      break;
  }
  return t;
}

TestImage make_dst(std::int64_t w, std::int64_t h, Format fmt, std::mt19937_64& rng, bool tight) {
  TestImage t = padded(w, h, fmt, rng, tight);
  poison(t.backing.view());
  return t;
}

void poison(const ImageView& v) {
  if (v.location().kind != Location::Kind::host) {  // a device view: poison a host copy there
    Image h(v.width(), v.height(), v.format());
    poison(h.view());
    copy(h, v);
    return;
  }
  for (std::int64_t y = 0; y < v.height(); ++y) {
    if (v.depth() == Depth::f32) {
      float* r = v.row<float>(y);
      for (std::int64_t i = 0; i < v.width() * v.channels(); ++i) r[i] = std::nanf("");
    } else {
      std::memset(v.row_ptr(y), 0xA5, std::size_t(v.row_bytes()));
    }
  }
}

double sample(const ConstImageView& v, std::int64_t x, std::int64_t y, int c) {
  const std::int64_t i = x * v.channels() + c;
  switch (v.depth()) {
    case Depth::u8:
      return v.row<std::uint8_t>(y)[i];
    case Depth::u16:
      return v.row<std::uint16_t>(y)[i];
    case Depth::s16:
      return v.row<std::int16_t>(y)[i];
    case Depth::s32:
      return v.row<std::int32_t>(y)[i];
    case Depth::f32:
      return v.row<float>(y)[i];
  }
  return 0;
}

std::string compare(const ConstImageView& got, const ConstImageView& want, double tol, double rel) {
  std::ostringstream s;
  if (got.width() != want.width() || got.height() != want.height() ||
      got.format() != want.format()) {
    s << "shape differs: got " << got.width() << "x" << got.height() << " "
      << to_string(got.format()) << ", want " << want.width() << "x" << want.height() << " "
      << to_string(want.format());
    return s.str();
  }
  std::int64_t bad = 0;
  double worst = 0;
  std::ostringstream first;
  for (std::int64_t y = 0; y < got.height(); ++y)
    for (std::int64_t x = 0; x < got.width(); ++x)
      for (int c = 0; c < got.channels(); ++c) {
        const double g = sample(got, x, y, c), w = sample(want, x, y, c);
        bool ok;
        double d = std::fabs(g - w);
        if (std::isnan(g) || std::isnan(w)) {
          ok = std::isnan(g) && std::isnan(w);
          d = INFINITY;
        } else {
          ok = d <= tol + rel * std::fabs(w);
        }
        if (!ok) {
          if (bad < 5)
            first << " (" << x << "," << y << ",c" << c << "): got " << g << " want " << w << ";";
          ++bad;
          worst = std::max(worst, d);
        }
      }
  if (bad == 0) return "";
  s << bad << " of " << got.width() * got.height() * got.channels() << " samples differ in "
    << got.width() << "x" << got.height() << " " << to_string(got.format()) << " (tol " << tol
    << ", rel " << rel << "), max |diff| " << worst << ":" << first.str();
  return s.str();
}

std::vector<Backend> test_backends() {
  std::vector<Backend> b{Backend::cpu};
  if (cuda_device_count() > 0) {
    b.push_back(Backend::cuda);
  } else {
    static bool said = false;
    if (!said) {
      said = true;
      std::printf("[pixflow] CUDA backend not tested: %s\n",
                  cuda_compiled() ? "no GPU present" : "built without CUDA");
    }
  }
  return b;
}

std::vector<std::string> cpu_targets_for(Backend b) {
#if PIXFLOW_HAVE_SIMD
  if (b == Backend::cpu) return cpu::simd_targets();
#endif
  (void)b;
  return {""};
}

SimdTargetScope::SimdTargetScope(const std::string& target) : forced_(!target.empty()) {
#if PIXFLOW_HAVE_SIMD
  if (forced_ && !cpu::force_simd_target(target))
    throw std::runtime_error("no SIMD target " + target);
#endif
}

SimdTargetScope::~SimdTargetScope() {
#if PIXFLOW_HAVE_SIMD
  if (forced_) cpu::force_simd_target("");
#endif
}

namespace {
int g_cuda_device = -1;  // -1: not chosen yet (PIXFLOW_TEST_CUDA_DEVICE, default 0)
}  // namespace

int test_cuda_device() {
  if (g_cuda_device >= 0) return g_cuda_device;
  g_cuda_device = 0;
  if (const char* s = std::getenv("PIXFLOW_TEST_CUDA_DEVICE")) {
    char* end = nullptr;
    const long d = std::strtol(s, &end, 10);
    const int n = cuda_device_count();
    if (*s == '\0' || *end != '\0' || d < 0 || d >= n) {
      std::fprintf(stderr,
                   "[pixflow] PIXFLOW_TEST_CUDA_DEVICE='%s' is not a CUDA device (%d found)\n", s,
                   n);
      std::exit(1);  // a run that was asked to test a device must not pass without it
    }
    g_cuda_device = int(d);
    std::printf("[pixflow] CUDA tests run on cuda:%d (PIXFLOW_TEST_CUDA_DEVICE)\n", g_cuda_device);
  }
  return g_cuda_device;
}

void set_test_cuda_device(int device) {
  g_cuda_device = device;
}

int test_opencl_device() {
  static const int device = [] {
    const char* s = std::getenv("PIXFLOW_TEST_OPENCL_DEVICE");
    if (!s) return 0;
    char* end = nullptr;
    const long d = std::strtol(s, &end, 10);
    const int n = device_count(Location::Kind::opencl);
    if (*s == '\0' || *end != '\0' || d < 0 || d >= n) {
      std::fprintf(stderr,
                   "[pixflow] PIXFLOW_TEST_OPENCL_DEVICE='%s' is not an OpenCL device (%d found)\n",
                   s, n);
      std::exit(1);  // a run that was asked to test a device must not pass without it
    }
    std::printf("[pixflow] OpenCL tests run on opencl:%ld (PIXFLOW_TEST_OPENCL_DEVICE): %s\n", d,
                describe_device(Location::opencl(int(d))).c_str());
    return int(d);
  }();
  return device;
}

const std::vector<std::string>& opencl_pending_ops() {
  static const std::vector<std::string> pending = {};  // every op runs on OpenCL
  return pending;
}

bool opencl_tests_off() {
  static const bool off = [] {
    const char* v = std::getenv("PIXFLOW_TEST_OPENCL");
    if (!v || std::strcmp(v, "off") != 0) return false;
    std::printf("[pixflow] OpenCL backend not tested: PIXFLOW_TEST_OPENCL=off\n");
    return true;
  }();
  return off;
}

std::vector<Backend> test_backends_for(std::string_view op) {
  std::vector<Backend> b = test_backends();
  const auto& pending = opencl_pending_ops();
  if (std::find(pending.begin(), pending.end(), op) != pending.end()) return b;
  if (opencl_tests_off()) return b;
  if (device_count(Location::Kind::opencl) > 0) {
    b.push_back(Backend::opencl);
  } else {
    static bool said = false;
    if (!said) {
      said = true;
      const std::vector<Backend> built = compiled_backends();
      std::printf("[pixflow] OpenCL backend not tested: %s\n",
                  std::find(built.begin(), built.end(), Backend::opencl) != built.end()
                      ? "no OpenCL platform with a device"
                      : "built without OpenCL");
    }
  }
  return b;
}

Location backend_location(Backend b) {
  if (b == Backend::cuda) return Location::cuda(test_cuda_device());
  if (b == Backend::opencl) return Location::opencl(test_opencl_device());
  return Location::host();
}

TestImage to_backend(Backend b, const ConstImageView& host, std::mt19937_64& rng, bool tight) {
  const Location loc = backend_location(b);
  const std::int64_t ox = tight ? 0 : std::int64_t(rng() % 3);
  const std::int64_t oy = tight ? 0 : std::int64_t(rng() % 2);
  const std::int64_t pad = tight ? 0 : 1 + std::int64_t(rng() % 5);
  TestImage t;
  t.backing = Image(host.width() + ox + pad, host.height() + oy, host.format(), loc);
  t.view = t.backing.view().roi(ox, oy, host.width(), host.height());
  copy(host, t.view);
  return t;
}

TestImage make_dst_on(Backend b, std::int64_t w, std::int64_t h, Format fmt, std::mt19937_64& rng,
                      bool tight) {
  TestImage host = make_dst(w, h, fmt, rng, true);
  if (backend_location(b).is_host()) return make_dst(w, h, fmt, rng, tight);
  return to_backend(b, host.view, rng, tight);
}

Image to_host(const ConstImageView& v) {
  Image out(v.width(), v.height(), v.format());
  copy(v, out);
  return out;
}

void expect_error(const std::function<void()>& f, Status status,
                  const std::vector<std::string>& needles) {
  try {
    f();
    ADD_FAILURE() << "no error; expected " << status_name(status);
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    for (const auto& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "'" << n << "' not in: " << e.what();
  }
}

void expect_errors(std::span<const BadCase> cases) {
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.what);
    expect_error(c.f, c.status, c.needles);
  }
}

void fill_constant(const ImageView& v, double value) {
  for (std::int64_t y = 0; y < v.height(); ++y)
    for (std::int64_t i = 0; i < v.width() * v.channels(); ++i) switch (v.depth()) {
        case Depth::u8:
          v.row<std::uint8_t>(y)[i] = detail_saturate<std::uint8_t>(value);
          break;
        case Depth::u16:
          v.row<std::uint16_t>(y)[i] = detail_saturate<std::uint16_t>(value);
          break;
        case Depth::s16:
          v.row<std::int16_t>(y)[i] = detail_saturate<std::int16_t>(value);
          break;
        case Depth::s32:
          v.row<std::int32_t>(y)[i] = detail_saturate<std::int32_t>(value);
          break;
        case Depth::f32:
          v.row<float>(y)[i] = float(value);
          break;
      }
}

std::vector<Border> all_borders() {
  return {Border::replicate(), Border::reflect(), Border::reflect101(), Border::wrap(),
          Border::constant(77)};
}

std::string describe(const Border& b) {
  std::string s = border_name(b.type);
  if (b.type == BorderType::constant) s += "(" + std::to_string(b.value) + ")";
  return s;
}

std::string border_params(const Border& b) {
  std::ostringstream s;
  s << "border=" << border_name(b.type);
  if (b.type == BorderType::constant) s << " value=" << b.value;
  return s.str();
}

std::vector<Size> awkward_sizes() {
  // 263 x 37: several vectors of every width plus a tail, and several row bands per thread.
  return {{1, 1}, {1, 9}, {9, 1}, {2, 2}, {17, 13}, {31, 7}, {64, 3}, {101, 67}, {263, 37}};
}

std::map<std::string, std::string> split_params(const std::string& text) {
  std::map<std::string, std::string> kv;
  std::istringstream in(text);
  std::string item;
  while (in >> item) {
    const std::size_t eq = item.find('=');
    kv[item.substr(0, eq)] = eq == std::string::npos ? "" : item.substr(eq + 1);
  }
  return kv;
}

schema::ImageSource random_images(const ConstImageView& src, std::mt19937_64& rng) {
  const std::int64_t w = src.width(), h = src.height();
  const Format fmt = src.format();
  return [w, h, fmt, &rng](const schema::Param& p, const std::string&) {
    std::shared_ptr<TestImage> t;
    switch (p.role) {
      case schema::ImageRole::like_src:
        t = std::make_shared<TestImage>(random_image(w, h, fmt, rng));
        break;
      case schema::ImageRole::map_x:
        t = std::make_shared<TestImage>(
            random_image(w, h, {Depth::f32, 1}, rng, false, -3.0, double(w) + 3));
        break;
      case schema::ImageRole::map_y:
        t = std::make_shared<TestImage>(
            random_image(w, h, {Depth::f32, 1}, rng, false, -3.0, double(h) + 3));
        break;
    }
    std::shared_ptr<std::byte> owner(t, t->backing.data());  // keeps the backing alive
    return std::make_shared<const Image>(Image::wrap(owner, t->view));
  };
}

namespace {

bool has_nan(const ConstImageView& v) {
  if (v.depth() != Depth::f32) return false;
  for (std::int64_t y = 0; y < v.height(); ++y)
    for (std::int64_t i = 0; i < v.width() * v.channels(); ++i)
      if (std::isnan(v.row<float>(y)[i])) return true;
  return false;
}
// Whether an f32 view holds a sample with exactly these bits.
bool has_bits(const ConstImageView& v, std::uint32_t bits) {
  if (v.depth() != Depth::f32) return false;
  for (std::int64_t y = 0; y < v.height(); ++y)
    for (std::int64_t i = 0; i < v.width() * v.channels(); ++i) {
      std::uint32_t b;
      std::memcpy(&b, v.row<float>(y) + i, sizeof b);
      if (b == bits) return true;
    }
  return false;
}
}  // namespace

std::string compare_bits(const ConstImageView& got, const ConstImageView& want) {
  if (got.width() != want.width() || got.height() != want.height() || got.format() != want.format())
    return "shape differs";
  std::int64_t bad = 0;
  std::ostringstream first;
  const std::int64_t n = got.width() * got.channels();
  for (std::int64_t y = 0; y < got.height(); ++y)
    for (std::int64_t i = 0; i < n; ++i) {
      std::uint32_t g, w;
      std::memcpy(&g, got.row<float>(y) + i, 4);
      std::memcpy(&w, want.row<float>(y) + i, 4);
      if (g != w && bad++ < 5)
        first << " (" << i / got.channels() << "," << y << ",c" << i % got.channels() << "): got 0x"
              << std::hex << g << " want 0x" << w << std::dec << ";";
    }
  if (bad == 0) return "";
  return std::to_string(bad) + " samples differ:" + first.str();
}

namespace {

// backends_match_ref (bits = false: values compared, NaN poison) and backends_match_ref_bits
// (bits = true: every bit compared, poison the NaN 0x7fc00000).
::testing::AssertionResult match_ref(std::string_view op_name, const std::string& params,
                                     const ConstImageView& src, std::mt19937_64& rng, bool bits) {
  const schema::Op* op = schema::find(op_name);
  if (!op) return ::testing::AssertionFailure() << "no catalogue op " << op_name;
  std::map<std::string, std::string> kv = split_params(params);
  for (const schema::Param& p : op->params())
    if (p.kind == schema::Kind::image && p.required && !kv.count(p.name)) kv[p.name] = "random";
  const std::string what = "seed=" + std::to_string(run_seed()) + " " + std::string(op_name) + " " +
                           params + " on " + std::to_string(src.width()) + "x" +
                           std::to_string(src.height()) + " " + to_string(src.format());
  std::string stage = "ref";
  try {
    const auto bound = op->bind(kv, random_images(src, rng));
    const schema::Shape out = bound->output(src);
    TestImage want = make_dst(out.width, out.height, out.format, rng);
    bound->run(src, want, Context{Backend::ref});
    if (bits ? has_bits(want, 0x7fc00000u) : has_nan(want))
      return ::testing::AssertionFailure() << what << ": the reference left poison (NaN)";
    for (Backend be : test_backends_for(op_name))
      for (const std::string& target : cpu_targets_for(be)) {
        stage = backend_name(be) + (target.empty() ? "" : " (SIMD " + target + ")");
        SimdTargetScope forced(target);
        TestImage dsrc = to_backend(be, src, rng);
        TestImage got = make_dst_on(be, out.width, out.height, out.format, rng);
        bound->run(dsrc, got, Context{be});
        const std::string diff =
            bits ? compare_bits(to_host(got), want) : compare(to_host(got), want);
        if (!diff.empty())
          return ::testing::AssertionFailure()
                 << what << ": " << stage << " differs from ref: " << diff;
      }
  } catch (const Error& e) {
    return ::testing::AssertionFailure() << what << ": " << stage << " threw " << e.what();
  }
  return ::testing::AssertionSuccess();
}
}  // namespace

::testing::AssertionResult backends_match_ref(std::string_view op, const std::string& params,
                                              const ConstImageView& src, std::mt19937_64& rng) {
  return match_ref(op, params, src, rng, false);
}

::testing::AssertionResult backends_match_ref(std::string_view op, const std::string& params,
                                              Format fmt, Size s, std::mt19937_64& rng) {
  TestImage src = random_image(s.w, s.h, fmt, rng);
  return backends_match_ref(op, params, src.view, rng);
}

TestImage special_f32_image(std::int64_t w, std::int64_t h, int channels, std::mt19937_64& rng) {
  static constexpr std::uint32_t kSpecial[] = {
      0x7fc00001u, 0xffc00001u, 0x7fd23456u, 0xfff00042u, 0x7f800001u /* signalling */,
      0x7f800000u, 0xff800000u, 0x00000000u, 0x80000000u, 0x7f7fffffu,
      0xff7fffffu, 0x00000001u, 0x80000001u, 0x00400000u};
  TestImage t = random_image(w, h, {Depth::f32, channels}, rng);
  std::uniform_int_distribution<int> pick(0, 2 * int(std::size(kSpecial)) - 1);
  std::uniform_int_distribution<int> small(-16, 16);
  for (std::int64_t y = 0; y < h; ++y) {
    float* r = t.view.row<float>(y);
    for (std::int64_t i = 0; i < w * channels; ++i) {
      const int k = pick(rng);
      if (k < int(std::size(kSpecial)))
        std::memcpy(&r[i], &kSpecial[k], sizeof(float));
      else
        r[i] = float(small(rng)) * 0.25f;
    }
  }
  return t;
}

::testing::AssertionResult backends_match_ref_bits(std::string_view op_name,
                                                   const std::string& params, int channels, Size s,
                                                   std::mt19937_64& rng) {
  TestImage src = special_f32_image(s.w, s.h, channels, rng);
  return match_ref(op_name, params, src.view, rng, true);
}

#if PIXFLOW_HAVE_OPENCV
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

cv::Mat to_mat(const ConstImageView& v) {
  return cv::Mat(int(v.height()), int(v.width()), CV_MAKETYPE(cv_depth(v.depth()), v.channels()),
                 const_cast<std::byte*>(v.data()), std::size_t(v.stride()));
}

int cv_border(const Border& b) {
  switch (b.type) {
    case BorderType::replicate:
      return cv::BORDER_REPLICATE;
    case BorderType::reflect:
      return cv::BORDER_REFLECT;
    case BorderType::reflect101:
      return cv::BORDER_REFLECT_101;
    case BorderType::wrap:
      return cv::BORDER_WRAP;
    case BorderType::constant:
      return cv::BORDER_CONSTANT;
  }
  return -1;
}

// The pixflow depth of an OpenCV depth (throws for depths pixflow does not have).
static Depth depth_of_cv(int cv_depth, const char* who) {
  switch (cv_depth) {
    case CV_8U:
      return Depth::u8;
    case CV_16U:
      return Depth::u16;
    case CV_16S:
      return Depth::s16;
    case CV_32S:
      return Depth::s32;
    case CV_32F:
      return Depth::f32;
    default:
      throw std::runtime_error(std::string(who) + ": unsupported depth");
  }
}

ConstImageView view_of(const cv::Mat& m) {
  const Depth d = depth_of_cv(m.depth(), "view_of");
  return ConstImageView(m.data, m.cols, m.rows, std::int64_t(m.step[0]), Format{d, m.channels()});
}

Image from_mat(const cv::Mat& m) {
  const Depth d = depth_of_cv(m.depth(), "from_mat");
  Image out(m.cols, m.rows, Format{d, m.channels()});
  for (int y = 0; y < m.rows; ++y)
    std::memcpy(out.row<std::byte>(y), m.ptr(y), m.cols * m.elemSize());
  return out;
}
#endif

EnvScope::EnvScope(std::initializer_list<std::pair<const char*, std::optional<std::string>>> vars) {
  for (const auto& [name, value] : vars) {
    const char* old = std::getenv(name);
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
}

EnvScope::~EnvScope() {
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    if (it->second)
      setenv(it->first.c_str(), it->second->c_str(), 1);
    else
      unsetenv(it->first.c_str());
  }
}

TempDir::TempDir(std::string_view prefix) {
  std::string tmpl =
      (std::filesystem::temp_directory_path() / (std::string(prefix) + "_XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add, ec);
  std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> TempDir::entries() const {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(path_))
    out.push_back(e.path().filename().string());
  return out;
}

}  // namespace pixflow::test
