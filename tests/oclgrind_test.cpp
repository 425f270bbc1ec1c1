// The oclgrind pass (issue 11): every __kernel of src/backends/opencl/kernels/*.cl runs on
// oclgrind's simulated device, its result compared exactly with the reference, while oclgrind
// checks every memory access, the API calls and data races. scripts/oclgrind-check.sh
// (`make test-oclgrind`) runs this test under `oclgrind --check-api --data-races` and fails
// on any diagnostic oclgrind prints; without PIXFLOW_TEST_OCLGRIND=1 the test skips, so plain
// ctest lists it and moves on.
//
// The cases come from the op schema, as the schema harness's do (tests/schema_test.cpp), in
// two tiers; the borders are taken in turn, case by case (a border is a kernel argument, not
// a build option, so each op still meets all five):
// - breadth, 19 x 13: every catalogue op x every example x every depth x channels 1, 3, 4
//   where the op allows them: every program the schema's examples build (kernels are built
//   per depth, convert per destination depth, sobel per output, bilateral per channel
//   count), windows larger than the image, one partial work-group each way;
// - size, 67 x 61 (the issue asks for 64^2 to 128^2): every op x every depth with its first
//   example, the channel counts in turn: many work-groups, and neither side a multiple of
//   any work-group side (4, 8, 16, 64), so the last groups hang over the image.
// The full product at 67 x 61 would take hours: oclgrind interprets every instruction (one
// median case there, f32 x 4 with k=5, took 35 s on the shared 2-core dev machine).
// Plus dot and matmul (API only) at both sizes.
//
// Device images are packed (stride = row bytes) and sit at one end of their OpenCL buffer,
// the last sample in the buffer's last byte or the first sample in its first byte, case by
// case in turn: an access past either end of an image is then outside its buffer, which
// oclgrind reports (an ROI view inside a padded allocation, as the other tests use, would hide
// it). The same goes for image parameters (arith's second image, remap's maps).
//
// Coverage: the runtime appends each launch's kernel function and build options to
// PIXFLOW_OPENCL_LAUNCH_LOG (src/backends/opencl/runtime.cpp); at the end the test reads the
// __kernel functions of the .cl files and fails for each one that never ran, so a new kernel
// cannot go unchecked. The schema-driven cases take in a new op, example or depth by
// themselves; a kernel that only an API call reaches (dot, matmul) needs a case here.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "tests/common.hpp"

namespace pixflow::test {
namespace {

struct Tier {
  const char* name;
  Size size;
  bool every_example_and_channel;  // else the first example, the channel counts in turn
};
constexpr Tier kTiers[] = {{"breadth", {19, 13}, true}, {"size", {67, 61}, false}};

bool oclgrind_pass_enabled() {
  const char* v = std::getenv("PIXFLOW_TEST_OCLGRIND");
  return v && std::strcmp(v, "1") == 0;
}

// Which end of its buffer a device image touches.
enum class Flush { end, start };

// A packed copy of host view `v` on `dev` whose last (Flush::end) or first (Flush::start)
// byte is its buffer's. Device images are allocated in whole 64-byte rows: a one-row u8
// image of the packed size has `stride - bytes` bytes of slack, put at the other end.
TestImage on_device(const ConstImageView& v, Location dev, Flush flush) {
  const std::int64_t row = v.row_bytes(), bytes = row * v.height();
  TestImage t;
  t.backing = Image(std::max<std::int64_t>(bytes, 1), 1, {Depth::u8, 1}, dev);
  const std::int64_t slack = t.backing.stride() - bytes;
  t.view = ImageView(t.backing.data() + (flush == Flush::end ? slack : 0), v.width(), v.height(),
                     row, v.format(), dev);
  copy(v, t.view);
  return t;
}

// The device counterpart of a host image parameter: the same samples in on_device's layout.
std::shared_ptr<const Image> device_param(const ConstImageView& host, Location dev, Flush flush) {
  auto t = std::make_shared<TestImage>(on_device(host, dev, flush));
  std::shared_ptr<std::byte> owner(t, t->backing.data());  // keeps the backing alive
  return std::make_shared<const Image>(Image::wrap(owner, t->view));
}

// One catalogue-op case: the reference on host images, OpenCL on device copies of the same
// images in on_device's layout (the source, every image parameter, the poisoned
// destination), compared exactly.
::testing::AssertionResult op_matches_ref(const schema::Op& op, const std::string& params, Format f,
                                          Size s, Location dev, Flush flush, std::mt19937_64& rng) {
  try {
    auto kv = split_params(params);
    for (const schema::Param& p : op.params())
      if (p.kind == schema::Kind::image && p.required && !kv.count(p.name)) kv[p.name] = "random";
    const TestImage src = random_image(s.w, s.h, f, rng, true);
    // The host images bound for the reference, kept to bind their device copies.
    std::map<std::string, std::shared_ptr<const Image>> host_params;
    const schema::ImageSource random = random_images(src.view, rng);
    const auto host_bound = op.bind(kv, [&](const schema::Param& p, const std::string& v) {
      return host_params[p.name] = random(p, v);
    });
    const auto dev_bound = op.bind(kv, [&](const schema::Param& p, const std::string&) {
      return device_param(host_params.at(p.name)->view(), dev, flush);
    });
    const schema::Shape out = host_bound->output(src.view);
    TestImage want = make_dst(out.width, out.height, out.format, rng, true);
    host_bound->run(src.view, want.view, Context{Backend::ref});
    const TestImage dsrc = on_device(src.view, dev, flush);
    const TestImage poisoned = make_dst(out.width, out.height, out.format, rng, true);
    const TestImage got = on_device(poisoned.view, dev, flush);
    dev_bound->run(dsrc.view, got.view, Context{Backend::opencl});
    const std::string diff = compare(to_host(got.view), want.view);
    if (!diff.empty()) return ::testing::AssertionFailure() << "opencl differs from ref: " << diff;
  } catch (const Error& e) {
    return ::testing::AssertionFailure() << "threw " << e.what();
  }
  return ::testing::AssertionSuccess();
}

// dot (f32 x 4, w x h) and matmul (one-channel f32 and s32, h x w times w x (w - 8)) in
// on_device's layout. Their f32 results are the reference's sums in its order, so
// bit-identical (tests/linalg_test.cpp).
void linalg_cases(Size s, Location dev, int& turn, std::mt19937_64& rng) {
  const auto flush = [&turn] { return turn++ % 2 ? Flush::start : Flush::end; };
  {
    const Flush fl = flush();
    PIXFLOW_TRACE(testing::Message() << "dot " << s.w << "x" << s.h);
    const TestImage a = random_image(s.w, s.h, {Depth::f32, 4}, rng, true),
                    b = random_image(s.w, s.h, {Depth::f32, 4}, rng, true);
    TestImage want = make_dst(s.w, s.h, {Depth::f32, 1}, rng, true);
    dot(a.view, b.view, want.view, {Backend::ref});
    const TestImage da = on_device(a.view, dev, fl), db = on_device(b.view, dev, fl);
    const TestImage got = on_device(make_dst(s.w, s.h, {Depth::f32, 1}, rng, true).view, dev, fl);
    dot(da.view, db.view, got.view, {Backend::opencl});
    EXPECT_EQ(compare_bits(to_host(got.view), want.view), "");
  }
  for (Depth d : {Depth::f32, Depth::s32}) {
    const Flush fl = flush();
    const std::int64_t m = s.h, k = s.w, n = s.w - 8;
    PIXFLOW_TRACE(testing::Message()
                  << "matmul " << depth_name(d) << " M=" << m << " K=" << k << " N=" << n);
    const TestImage a = random_image(k, m, {d, 1}, rng, true, -1000, 1000),
                    b = random_image(n, k, {d, 1}, rng, true, -1000, 1000);
    TestImage want = make_dst(n, m, {d, 1}, rng, true);
    matmul(a.view, b.view, want.view, {Backend::ref});
    const TestImage da = on_device(a.view, dev, fl), db = on_device(b.view, dev, fl);
    const TestImage got = on_device(make_dst(n, m, {d, 1}, rng, true).view, dev, fl);
    matmul(da.view, db.view, got.view, {Backend::opencl});
    EXPECT_EQ(compare_bits(to_host(got.view), want.view), "");
  }
}

// The __kernel functions of src/backends/opencl/kernels/*.cl, by name, with their file.
std::map<std::string, std::string> kernel_functions() {
  std::map<std::string, std::string> out;
  const std::filesystem::path dir =
      std::filesystem::path(PIXFLOW_SOURCE_DIR) / "src/backends/opencl/kernels";
  // "__kernel [__attribute__((...))] void name(": attributes never hold "void", ";" or "{".
  const std::regex kernel(R"(__kernel\b[^;{]*?\bvoid\s+(\w+)\s*\()");
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".cl") continue;
    std::ifstream in(e.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    for (std::sregex_iterator m(s.begin(), s.end(), kernel), end; m != end; ++m) {
      const std::string name = (*m)[1];
      // The launch log names functions only: a name in two files would be ambiguous.
      EXPECT_FALSE(out.count(name)) << name << " is a __kernel of both " << out[name] << " and "
                                    << e.path().filename().string();
      out[name] = e.path().filename().string();
    }
  }
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(Oclgrind, EveryKernelRunsOnSmallImagesAndMatchesRef) {
  if (!oclgrind_pass_enabled())
    GTEST_SKIP() << "the oclgrind pass: run scripts/oclgrind-check.sh (PIXFLOW_TEST_OCLGRIND=1)";
  ASSERT_GT(device_count(Location::Kind::opencl), 0)
      << "PIXFLOW_TEST_OCLGRIND=1 but no OpenCL device (built without the OpenCL backend?)";
  const Location dev = Location::opencl(test_opencl_device());
  const std::string device = describe_device(dev);
  std::printf("[oclgrind] device: %s\n", device.c_str());
  // The pass stands for oclgrind's checks: on another device it would prove less than it says.
  ASSERT_NE(device.find("Oclgrind"), std::string::npos)
      << "not oclgrind's device: run the test under oclgrind (scripts/oclgrind-check.sh)";
  const char* log_path = std::getenv("PIXFLOW_OPENCL_LAUNCH_LOG");
  ASSERT_TRUE(log_path && *log_path)
      << "set PIXFLOW_OPENCL_LAUNCH_LOG=<file>: the coverage check reads the launches from it";
  // This run's launches only, unless it continues an earlier run (scripts/oclgrind-check.sh
  // runs the cases twice: with the default schedules, then with the A/B ones, variant.hpp).
  if (!std::getenv("PIXFLOW_OCLGRIND_APPEND")) std::ofstream(log_path, std::ios::trunc).close();

  // PIXFLOW_OCLGRIND_OPS=a,b,...: only those catalogue ops (and no dot / matmul), for a run
  // whose schedule switches touch only them.
  const char* only = std::getenv("PIXFLOW_OCLGRIND_OPS");
  auto selected = [only](const std::string& name) {
    if (only == nullptr || *only == '\0') return true;
    return ("," + std::string(only) + ",").find("," + name + ",") != std::string::npos;
  };
  auto rng = make_rng(0x0C16D);
  int cases = 0, turn = 0;  // turn: the border and the buffer end, case by case
  for (const schema::Op* op : schema::catalogue()) {
    if (!selected(op->name())) continue;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<int> tier_cases;
    for (const Tier& tier : kTiers) {
      tier_cases.push_back(0);
      std::vector<std::pair<std::string, Format>> plan;
      std::vector<int> chans;
      for (int ch : op->channels())
        if (ch != 2) chans.push_back(ch);  // as the schema harness: no 2-channel paths
      if (tier.every_example_and_channel) {
        for (const std::string& example : op->examples())
          for (Depth d : op->depths())
            for (int ch : chans) plan.push_back({example, {d, ch}});
      } else {
        for (std::size_t i = 0; i < op->depths().size(); ++i)
          plan.push_back({op->examples().front(), {op->depths()[i], chans[i % chans.size()]}});
      }
      for (const auto& [example, f] : plan) {
        std::string params = example;
        if (op->has_border() && !split_params(example).count("border")) {
          const std::vector<Border> borders = all_borders();
          params += (params.empty() ? "" : " ") +
                    border_params(borders[std::size_t(turn) % borders.size()]);
        }
        const Flush flush = turn++ % 2 ? Flush::start : Flush::end;
        PIXFLOW_TRACE(testing::Message() << op->name() << " " << params << " " << to_string(f)
                                         << " " << tier.size.w << "x" << tier.size.h
                                         << (flush == Flush::end ? " end" : " start") << "-flush");
        EXPECT_TRUE(op_matches_ref(*op, params, f, tier.size, dev, flush, rng));
        ++tier_cases.back();
      }
      cases += tier_cases.back();
    }
    std::printf("[oclgrind] %-12s %3d + %d cases %6.1f s\n", op->name().c_str(), tier_cases[0],
                tier_cases[1], seconds_since(t0));
    std::fflush(stdout);
  }
  if (selected("dot") && selected("matmul")) {
    const auto t0 = std::chrono::steady_clock::now();
    for (const Tier& tier : kTiers) linalg_cases(tier.size, dev, turn, rng);
    cases += 3 * int(std::size(kTiers));
    std::printf("[oclgrind] dot, matmul    3 + 3 cases %6.1f s\n", seconds_since(t0));
  }
  synchronize(dev);

  // Coverage: every __kernel function launched at least once (over the runs that share the
  // log; a run that a later one continues leaves the check to it).
  if (std::getenv("PIXFLOW_OCLGRIND_SKIP_COVERAGE")) {
    std::printf("[oclgrind] %d cases; coverage checked by the run that continues this one\n",
                cases);
    return;
  }
  std::map<std::string, int> launches;
  std::map<std::string, std::set<std::string>> variants;  // build options per kernel
  {
    std::ifstream in(log_path);
    std::string line;
    while (std::getline(in, line)) {
      const std::size_t sp = line.find(' ');
      const std::string name = line.substr(0, sp);
      ++launches[name];
      variants[name].insert(sp == std::string::npos ? "" : line.substr(sp + 1));
    }
  }
  const auto kernels = kernel_functions();
  ASSERT_FALSE(kernels.empty()) << "no __kernel found under " << PIXFLOW_SOURCE_DIR;
  std::size_t programs = 0;
  for (const auto& [name, file] : kernels) {
    const int n = launches.count(name) ? launches[name] : 0;
    const std::size_t v = variants.count(name) ? variants[name].size() : 0;
    programs += v;
    std::printf("[oclgrind] %-14s %-15s %5d launches, %3zu build variants\n", name.c_str(),
                file.c_str(), n, v);
    EXPECT_GT(n, 0) << "__kernel " << name << " (" << file
                    << ") never ran in the oclgrind pass: add a case that reaches it";
  }
  for (const auto& [name, n] : launches)
    EXPECT_TRUE(kernels.count(name)) << "launched " << name << ", not a __kernel of kernels/*.cl";
  std::printf("[oclgrind] %d cases, %zu __kernel functions, %zu (kernel, options) variants\n",
              cases, kernels.size(), programs);
  RecordProperty("cases", cases);
}

}  // namespace
}  // namespace pixflow::test
