// Context::workspace and the scratch queries (include/pixflow/ops.hpp, docs/architecture.md
// "Scratch"): the query is 0 for ops without scratch; an op given exactly the queried bytes
// runs and equals the default run bit for bit; one byte less, a misaligned buffer or one at
// another location is invalid_argument naming the op, with dst untouched. The CUDA side
// (capture without memory nodes) is in cuda_test.cpp.
#include <cstdlib>
#include <memory>

#include "src/schema/ops.hpp"
#include "src/schema/schema.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

constexpr MorphOp kComposites[] = {MorphOp::open, MorphOp::close, MorphOp::gradient,
                                   MorphOp::tophat, MorphOp::blackhat};

bool is_composite(std::string_view name) {
  for (MorphOp m : kComposites)
    if (name == morph_op_name(m)) return true;
  return false;
}

// A host buffer aligned as Workspace requires, with room for `bytes` (at least 1 byte, so
// that a 0-byte workspace still has a pointer: given, but empty).
struct HostBuffer {
  explicit HostBuffer(std::size_t bytes)
      : mem(static_cast<std::byte*>(
                std::aligned_alloc(Workspace::kAlignment,
                                   (bytes / Workspace::kAlignment + 1) * Workspace::kAlignment)),
            [](std::byte* p) { std::free(p); }) {}
  Workspace workspace(std::size_t bytes) const { return {mem.get(), bytes, Location::host()}; }
  std::unique_ptr<std::byte, void (*)(std::byte*)> mem;
};

// "" when the two views hold the same samples bit for bit (compare_bits reads f32 only;
// integers compared by value are compared bit for bit).
std::string same_bits(const ConstImageView& got, const ConstImageView& want) {
  return got.depth() == Depth::f32 ? compare_bits(got, want) : compare(got, want);
}

Context with_workspace(Context ctx, const Workspace& ws) {
  ctx.workspace = ws;
  return ctx;
}

// One intermediate image of core's composites: rows padded to 64 bytes, 256-aligned blocks.
std::size_t intermediate_bytes(std::int64_t w, std::int64_t h, Format f) {
  const std::size_t stride = (std::size_t(w) * std::size_t(f.pixel_bytes()) + 63) / 64 * 64;
  return (stride * std::size_t(h) + 255) / 256 * 256;
}

TEST(Workspace, QueryIsZeroForEveryOpWithoutScratch) {
  // Every catalogue op and example through the generic query (Pipeline::workspace_bytes) on
  // both host backends: only the composites on a backend that runs their passes in core
  // need scratch (gaussian_iir needs some on CUDA only).
  auto rng = make_rng(0x5C1);
  for (const schema::Op* op : schema::catalogue()) {
    bool has_image_param = false;
    for (const auto& p : op->params()) has_image_param |= p.kind == schema::Kind::image;
    if (has_image_param) continue;  // arith with=, remap: files; none needs scratch
    const Depth d = op->depths().front();
    const int cn = op->channels().back() >= 3 ? 3 : op->channels().back();
    auto src = random_image(29, 17, {d, cn}, rng);
    for (const auto& example : op->examples())
      for (Backend b : {Backend::ref, Backend::cpu}) {
        SCOPED_TRACE(op->name() + " " + example + " on " + backend_name(b));
        const Pipeline pipe = Pipeline::parse(op->name() + " " + example);
        const std::size_t n = pipe.workspace_bytes(src.view, {b});
        if (!is_composite(op->name())) {
          EXPECT_EQ(n, 0u);
        } else if (b == Backend::ref) {
          EXPECT_GT(n, 0u);
        }
      }
  }
}

TEST(Workspace, MorphologyQueryIsTheIntermediatesCoreRunsThrough) {
  const Format f{Depth::u8, 3};
  const ConstImageView src(nullptr, 37, 23, 37 * 3, f);  // a query reads no pixels
  const std::size_t one = intermediate_bytes(37, 23, f);
  const Context ref{Backend::ref};
  EXPECT_EQ(morphology_workspace_bytes(src, MorphOp::dilate, {}, ref), 0u);
  EXPECT_EQ(morphology_workspace_bytes(src, MorphOp::erode, {}, ref), 0u);
  EXPECT_EQ(morphology_workspace_bytes(src, MorphOp::open, {}, ref), one);
  EXPECT_EQ(morphology_workspace_bytes(src, MorphOp::close, {}, ref), one);
  EXPECT_EQ(morphology_workspace_bytes(src, MorphOp::gradient, {}, ref), 2 * one);
  EXPECT_EQ(morphology_workspace_bytes(src, MorphOp::tophat, {}, ref), 2 * one);
  EXPECT_EQ(morphology_workspace_bytes(src, MorphOp::blackhat, {}, ref), 2 * one);
#if PIXFLOW_HAVE_SIMD
  // The cpu backend runs composites in one call over strips (host temporaries, not counted).
  EXPECT_EQ(morphology_workspace_bytes(src, MorphOp::gradient, {}, {Backend::cpu}), 0u);
#endif
  // The host backends' gaussian_iir needs none.
  EXPECT_EQ(
      gaussian_iir_workspace_bytes(ConstImageView(nullptr, 37, 23, 37, {Depth::u8, 1}), {}, ref),
      0u);
}

TEST(Workspace, ExactSizeRunsAndEqualsTheDefaultBitForBit) {
  auto rng = make_rng(0x5C2);
  for (Backend b : {Backend::ref, Backend::cpu})
    for (Format f : {Format{Depth::u8, 1}, Format{Depth::u16, 3}, Format{Depth::f32, 4}})
      for (MorphOp m : kComposites) {
        SCOPED_TRACE(std::string(morph_op_name(m)) + " " + to_string(f) + " on " + backend_name(b));
        auto src = random_image(41, 19, f, rng);
        const MorphParams p{5, 3, 1, Border::reflect101()};
        auto want = make_dst(41, 19, f, rng), got = make_dst(41, 19, f, rng);
        morphology(src, want, m, p, {b});
        const std::size_t n = morphology_workspace_bytes(src, m, p, {b});
        HostBuffer buf(n);
        morphology(src, got, m, p, with_workspace({b}, buf.workspace(n)));
        EXPECT_EQ(same_bits(got.view, want.view), "");
      }
  // An op without scratch takes a given workspace of 0 bytes (and ignores its size).
  auto src = random_image(33, 21, {Depth::u8, 3}, rng);
  auto want = make_dst(33, 21, {Depth::u8, 3}, rng), got = make_dst(33, 21, {Depth::u8, 3}, rng);
  const GaussianIirParams p{3.5, Border::reflect101()};
  gaussian_iir(src, want, p);
  HostBuffer buf(0);
  ASSERT_EQ(gaussian_iir_workspace_bytes(src, p), 0u);
  gaussian_iir(src, got, p, with_workspace({}, buf.workspace(0)));
  EXPECT_EQ(same_bits(got.view, want.view), "");
}

TEST(Workspace, OneByteLessIsInvalidArgumentAndLeavesDstUntouched) {
  auto rng = make_rng(0x5C3);
  for (MorphOp m : kComposites) {
    SCOPED_TRACE(morph_op_name(m));
    auto src = random_image(40, 30, {Depth::u8, 1}, rng);
    auto dst = make_dst(40, 30, {Depth::u8, 1}, rng);
    const Image before = to_host(dst.view);
    const std::size_t n = morphology_workspace_bytes(src, m, {}, {Backend::ref});
    ASSERT_GT(n, 0u);
    HostBuffer buf(n);
    expect_error(
        [&] { morphology(src, dst, m, {}, with_workspace({Backend::ref}, buf.workspace(n - 1))); },
        Status::invalid_argument,
        {std::string(morph_op_name(m)) + ": the workspace has " + std::to_string(n - 1) +
         " bytes but the call needs " + std::to_string(n)});
    EXPECT_EQ(same_bits(dst.view, before), "");
  }
}

TEST(Workspace, WrongLocationOrAlignmentIsInvalidArgument) {
  auto rng = make_rng(0x5C4);
  auto src = random_image(20, 10, {Depth::u8, 1}, rng);
  auto dst = make_dst(20, 10, {Depth::u8, 1}, rng);
  const Image before = to_host(dst.view);
  HostBuffer buf(4096);
  Workspace on_gpu = buf.workspace(4096);
  on_gpu.location = Location::cuda(0);
  Workspace misaligned = buf.workspace(4000);
  misaligned.data = buf.mem.get() + 8;
  const Context ref{Backend::ref};
  const BadCase cases[] = {
      {"open, workspace on cuda:0",
       [&] { morphology(src, dst, MorphOp::open, {}, with_workspace(ref, on_gpu)); },
       Status::invalid_argument,
       {"open: the workspace is on cuda:0 but the images are on host"}},
      {"median (no scratch) still checks the location",
       [&] { median(src, dst, {}, with_workspace(ref, on_gpu)); },
       Status::invalid_argument,
       {"median: the workspace is on cuda:0"}},
      {"the query checks it too",
       [&] { morphology_workspace_bytes(src, MorphOp::open, {}, with_workspace(ref, on_gpu)); },
       Status::invalid_argument,
       {"open: the workspace is on cuda:0"}},
      {"misaligned",
       [&] { morphology(src, dst, MorphOp::tophat, {}, with_workspace(ref, misaligned)); },
       Status::invalid_argument,
       {"tophat: the workspace must be aligned to 256 bytes"}},
      {"not a size query for a bad source",
       [&] {
         morphology_workspace_bytes(ConstImageView(nullptr, 4, 4, 8, {Depth::s16, 1}),
                                    MorphOp::open, {}, ref);
       },
       Status::unsupported,
       {"open: src depth must be one of"}},
  };
  expect_errors(cases);
  EXPECT_EQ(same_bits(dst.view, before), "");
}

TEST(Workspace, PipelineQueryIsItsLargestStageAndRunsInIt) {
  auto rng = make_rng(0x5C5);
  auto src = random_image(45, 27, {Depth::u8, 3}, rng);
  const Pipeline pipe = Pipeline::parse("gradient k=3 | gray | open k=5 | median k=3");
  const Context ref{Backend::ref};
  const std::size_t n = pipe.workspace_bytes(src.view, ref);
  EXPECT_EQ(n, std::max(2 * intermediate_bytes(45, 27, {Depth::u8, 3}),
                        intermediate_bytes(45, 27, {Depth::u8, 1})));
  const Image want = pipe.run(src.view, ref);
  HostBuffer buf(n);
  const Image got = pipe.run(src.view, with_workspace(ref, buf.workspace(n)));
  EXPECT_EQ(same_bits(got, want), "");
  expect_error([&] { pipe.run(src.view, with_workspace(ref, buf.workspace(n - 1))); },
               Status::invalid_argument, {"gradient: the workspace has"});
}

}  // namespace
}  // namespace pixflow::test
