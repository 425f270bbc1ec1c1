// The OpenCL backend's device side: devices, buffers behind reserved addresses, copies in
// every direction with ROI views, errors; and the list of ops it does not have yet (issue 11
// in progress), checked both ways. Op results against the reference are in each op's test
// and the schema harness (test_backends_for). Without an OpenCL device these tests skip and
// say why.
#include <algorithm>
#include <cstring>
#include <thread>

#include "src/schema/schema.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

bool have_opencl() {
  return !opencl_tests_off() && device_count(Location::Kind::opencl) > 0;
}

const char* built_with_opencl() {
  const std::vector<Backend> built = compiled_backends();
  return std::count(built.begin(), built.end(), Backend::opencl) ? "with" : "without";
}

#define PIXFLOW_NEED_OPENCL()                                       \
  if (!have_opencl())                                               \
  GTEST_SKIP() << "no OpenCL device (built " << built_with_opencl() \
               << " the OpenCL backend), or PIXFLOW_TEST_OPENCL=off"

TEST(OpenclBackend, ListsItsDevicesWithNameAndVersion) {
  PIXFLOW_NEED_OPENCL();
  for (int d = 0; d < device_count(Location::Kind::opencl); ++d) {
    const std::string line = describe_device(Location::opencl(d));
    SCOPED_TRACE(line);
    EXPECT_NE(line.find("opencl:" + std::to_string(d)), std::string::npos);
    EXPECT_NE(line.find("OpenCL"), std::string::npos);
    EXPECT_NE(line.find("compute units"), std::string::npos);
  }
  expect_error([] { (void)describe_device(Location::opencl(99)); }, Status::backend_unavailable,
               {"opencl:99"});
  expect_error(
      [] {
        Image img(4, 4, {Depth::u8, 1}, Location::opencl(99));
      },
      Status::backend_unavailable, {"opencl:99"});
}

TEST(OpenclBackend, CopiesRoundTripThroughRoiViewsInEveryDirection) {
  PIXFLOW_NEED_OPENCL();
  auto rng = make_rng(0x0C1001);
  const Location dev = Location::opencl(test_opencl_device());
  for (Format f :
       {Format{Depth::u8, 1}, Format{Depth::u8, 3}, Format{Depth::u16, 4}, Format{Depth::f32, 1}})
    for (Size s : std::vector<Size>{{1, 1}, {17, 13}, {1, 9}, {300, 7}}) {
      SCOPED_TRACE(to_string(f) + " " + std::to_string(s.w) + "x" + std::to_string(s.h));
      const TestImage src = random_image(s.w, s.h, f, rng);
      // Device ROIs at odd offsets of larger buffers, both ways and device to device.
      Image a(s.w + 3, s.h + 2, f, dev), b(s.w + 1, s.h + 5, f, dev);
      ImageView av = a.view().roi(2, 1, s.w, s.h), bv = b.view().roi(1, 4, s.w, s.h);
      copy(src.view, av);
      copy(av, bv);
      TestImage back = make_dst(s.w, s.h, f, rng);
      copy(bv, back.view);
      EXPECT_EQ(compare(back.view, src.view), "");
      // Asynchronous forms on the default queue, then a wait.
      TestImage back2 = make_dst(s.w, s.h, f, rng);
      copy_async(src.view, bv);
      copy_async(bv, back2.view);
      synchronize(dev);
      EXPECT_EQ(compare(back2.view, src.view), "");
    }
}

TEST(OpenclBackend, AViewNotInAnyBufferIsRefusedNamingTheOp) {
  PIXFLOW_NEED_OPENCL();
  const int d = test_opencl_device();
  alignas(64) static std::byte fake_src[4096], fake_dst[4096];
  const ConstImageView src(fake_src, 8, 8, 64, {Depth::u8, 1}, Location::opencl(d));
  const ImageView dst(fake_dst, 8, 8, 64, {Depth::u8, 1}, Location::opencl(d));
  expect_error([&] { transpose(src, dst); }, Status::invalid_argument,
               {"transpose", "not in any OpenCL buffer"});
}

TEST(OpenclBackend, WorksFromSeveralThreadsAtOnce) {
  PIXFLOW_NEED_OPENCL();
  const Location dev = Location::opencl(test_opencl_device());
  std::vector<std::string> diffs(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      auto rng = make_rng(0x0C1100 + std::uint64_t(t));
      const TestImage src = random_image(61, 37, {Depth::u8, 3}, rng, true);
      TestImage want = make_dst(37, 61, {Depth::u8, 3}, rng, true);
      transpose(src.view, want.view, {Backend::ref});
      Image a(61, 37, {Depth::u8, 3}, dev), b(37, 61, {Depth::u8, 3}, dev);
      copy(src.view, a);
      for (int i = 0; i < 5; ++i) transpose(a, b);
      const Image got = to_host(b);
      diffs[std::size_t(t)] = compare(got, want.view);
    });
  for (auto& th : threads) th.join();
  for (const auto& d : diffs) EXPECT_EQ(d, "");
}

// Each catalogue op on a small image on OpenCL: the ops of opencl_pending_ops() answer
// `unsupported` naming the backend, every other op runs. So the list can neither hide a
// missing op nor keep one that was ported.
TEST(OpenclBackend, PendingListIsExactlyWhatItLacks) {
  PIXFLOW_NEED_OPENCL();
  auto rng = make_rng(0x0C1200);
  const Location dev = Location::opencl(test_opencl_device());
  const auto& pending = opencl_pending_ops();
  for (const schema::Op* op : schema::catalogue()) {
    SCOPED_TRACE(op->name());
    const Format f{op->depths().front(), op->name() == "gray" ? 3 : 1};
    const TestImage host = random_image(16, 12, f, rng, true);
    auto kv = split_params(op->examples().front());
    for (const schema::Param& p : op->params())
      if (p.kind == schema::Kind::image && p.required && !kv.count(p.name)) kv[p.name] = "x";
    // Image parameters (maps, a second operand) on the device, like the source.
    std::vector<std::shared_ptr<Image>> keep;
    const auto bound = op->bind(kv, [&](const schema::Param& p, const std::string&) {
      const Format pf = p.role == schema::ImageRole::like_src ? f : Format{Depth::f32, 1};
      Image h(16, 12, pf);
      fill_constant(h, 1);
      auto d = std::make_shared<Image>(16, 12, pf, dev);
      copy(h, *d);
      return std::shared_ptr<const Image>(d);
    });
    const schema::Shape out = bound->output(host.view);
    Image src(16, 12, f, dev), dst(out.width, out.height, out.format, dev);
    copy(host.view, src);
    const bool listed = std::find(pending.begin(), pending.end(), op->name()) != pending.end();
    try {
      bound->run(src, dst, Context{Backend::opencl});
      synchronize(dev);
      EXPECT_FALSE(listed) << op->name() << " runs on OpenCL: take it off opencl_pending_ops()";
    } catch (const Error& e) {
      EXPECT_TRUE(listed) << e.what();
      EXPECT_EQ(e.status(), Status::unsupported) << e.what();
      EXPECT_NE(std::string(e.what()).find("opencl"), std::string::npos) << e.what();
    }
  }
  for (const char* op : {"dot", "matmul"}) {
    const bool listed = std::find(pending.begin(), pending.end(), op) != pending.end();
    Image a(4, 4, {Depth::f32, op == std::string("dot") ? 4 : 1}, dev),
        b(4, 4, {Depth::f32, op == std::string("dot") ? 4 : 1}, dev), c(4, 4, {Depth::f32, 1}, dev);
    try {
      if (op == std::string("dot"))
        dot(a, b, c);
      else
        matmul(a, b, c);
      EXPECT_FALSE(listed) << op << " runs on OpenCL: take it off opencl_pending_ops()";
    } catch (const Error& e) {
      EXPECT_TRUE(listed) << e.what();
      EXPECT_EQ(e.status(), Status::unsupported) << e.what();
    }
  }
}

}  // namespace
}  // namespace pixflow::test
