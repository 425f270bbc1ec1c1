// The generic backend-versus-reference test, driven by the op schema (src/schema): every
// catalogue op x every parameter set of op->examples() x every depth of op->depths() x
// channels 1, 3, 4 where op->channels() allows (2 is skipped: no backend has a 2-channel
// path of its own) x every border when op->has_border() and the example names none x the
// awkward sizes of tests/common.hpp (1x1, 1xN, Nx1, 17x13, windows larger than the image,
// ROI views at odd offsets, poisoned destinations). Every backend of test_backends() must
// match Backend::ref bit for bit, f32 and gaussian_iir included (the contract; see
// backends_match_ref in tests/common.cpp). A failure prints the op, its parameters, depth,
// channels, size, border and the seed (PIXFLOW_TEST_SEED replays it).
//
// Also: the registry shows the schema's parameters and defaults; dispatch refuses a queue
// of the wrong kind and a device that does not exist; a pipeline stage equals the call.
//
// Runtime: one CTest entry per op (ctest -R Schema). The largest awkward size (101x67) is
// skipped for the ops whose reference costs O(window) per sample or more (bilateral,
// median, epsilon) to keep the whole test well under a minute on 2 cores in Release;
// their per-family tests run larger images.
#include <cstdio>
#include <filesystem>
#include <set>

#include "src/schema/schema.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

std::uint64_t salt_of(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char c : s) h = (h ^ std::uint8_t(c)) * 1099511628211ull;
  return h;
}

// The parameter sets to run for one example: the example itself when it names a border or
// the op has none, else the example with each border appended.
std::vector<std::string> with_borders(const schema::Op& op, const std::string& example) {
  if (!op.has_border() || split_params(example).count("border")) return {example};
  std::vector<std::string> out;
  for (const Border& b : all_borders())
    out.push_back(example.empty() ? border_params(b) : example + " " + border_params(b));
  return out;
}

bool expensive(const std::string& op) {
  return op == "bilateral" || op == "median" || op == "epsilon";
}

std::vector<std::string> op_names() {
  std::vector<std::string> v;
  for (const schema::Op* op : schema::catalogue()) v.push_back(op->name());
  return v;
}

class SchemaBackends : public ::testing::TestWithParam<std::string> {};

TEST_P(SchemaBackends, EveryBackendMatchesRefExactlyOnEveryExampleDepthChannelBorderSize) {
  const schema::Op* op = schema::find(GetParam());
  ASSERT_NE(op, nullptr);
  ASSERT_FALSE(op->examples().empty()) << op->name() << " has no examples to test";
  auto rng = make_rng(salt_of(op->name()));
  int cases = 0;
  for (const std::string& example : op->examples())
    for (const std::string& params : with_borders(*op, example))
      for (Depth d : op->depths())
        for (int ch : op->channels()) {
          if (ch == 2) continue;
          for (Size s : awkward_sizes()) {
            if (expensive(op->name()) && s.w * s.h > 4096) continue;
            PIXFLOW_TRACE(testing::Message() << op->name() << " " << params << " "
                                             << depth_name(d) << "x" << ch << " " << s.w << "x"
                                             << s.h);
            ASSERT_TRUE(backends_match_ref(op->name(), params, {d, ch}, s, rng));
            ++cases;
          }
        }
  RecordProperty("cases", cases);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, SchemaBackends, ::testing::ValuesIn(op_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// Binds `params` of `op` for a w x h source of format f; image parameters (added when
// required) are constant host images of their role, as files would be.
std::unique_ptr<schema::Bound> bind_constant_images(const schema::Op& op, const std::string& params,
                                                    std::int64_t w, std::int64_t h, Format f) {
  auto kv = split_params(params);
  for (const schema::Param& p : op.params())
    if (p.kind == schema::Kind::image && p.required && !kv.count(p.name)) kv[p.name] = "x";
  return op.bind(kv, [=](const schema::Param& p, const std::string&) {
    Image m(w, h, p.role == schema::ImageRole::like_src ? f : Format{Depth::f32, 1});
    fill_constant(m, 1);
    return std::make_shared<const Image>(std::move(m));
  });
}

TEST(Schema, EveryCatalogueOpHasExamplesDepthsAndChannelsAndItsExamplesBind) {
  for (const schema::Op* op : schema::catalogue()) {
    SCOPED_TRACE(op->name());
    EXPECT_FALSE(op->depths().empty());
    EXPECT_FALSE(op->channels().empty());
    EXPECT_FALSE(op->examples().empty());
    for (const std::string& e : op->examples())
      EXPECT_NO_THROW(bind_constant_images(*op, e, 8, 8, {op->depths().front(), 3})) << e;
  }
}

TEST(Schema, RegistryShowsEveryCatalogueParameterWithTheSchemaDefault) {
  const auto& ops = schema::catalogue();
  ASSERT_EQ(op_registry().size(), ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const schema::Op& op = *ops[i];
    SCOPED_TRACE(op.name());
    EXPECT_EQ(op_registry()[i].name, op.name());  // catalogue order
    const OpInfo* info = find_op(op.name());
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->doc, op.doc());
    EXPECT_EQ(info->params.size(), op.params().size());
    for (const schema::Param& p : op.params()) {
      SCOPED_TRACE(p.name);
      const ParamInfo* pi = nullptr;
      for (const ParamInfo& q : info->params)
        if (q.name == p.name) pi = &q;
      ASSERT_NE(pi, nullptr) << "parameter missing from op_registry()";
      // As `pixflow info` shows it: "(required)", the shorthand that sets it ("kw" -> "k"),
      // else the schema's default.
      std::string want = p.required ? "(required)" : p.default_text;
      for (const schema::Param& q : op.params())
        for (const std::string& set : q.sets)
          if (set == p.name) want = q.name;
      EXPECT_EQ(pi->default_value, want);
      EXPECT_FALSE(pi->doc.empty());
    }
  }
  EXPECT_EQ(find_op("no_such_op"), nullptr);
}

TEST(Schema, DispatchRefusesAQueueOfTheWrongKindNamingTheOp) {
  for (const schema::Op* op : schema::catalogue()) {
    SCOPED_TRACE(op->name());
    const Format f{op->depths().front(), op->channels().back()};
    Image src(9, 7, f);
    fill_constant(src, 3);
    const auto bound = bind_constant_images(*op, op->examples().front(), 9, 7, f);
    const schema::Shape out = bound->output(src);
    Image dst(out.width, out.height, out.format);
    for (Backend b : {Backend::automatic, Backend::cpu, Backend::ref})
      expect_error([&] { bound->run(src, dst, Context{b, Queue::cuda(nullptr)}); },
                   Status::invalid_argument, {op->name() + ":", "queue"});
    expect_error([&] { bound->run(src, dst, Context{Backend::automatic, Queue::opencl(&src)}); },
                 Status::invalid_argument, {op->name() + ":", "queue"});
  }
}

TEST(Schema, OpOnANonExistentDeviceIsBackendUnavailableNeverACrash) {
  // Views of a device that no machine has (cuda:7) over fake, non-null pointers: nothing
  // may dereference them; every op answers backend_unavailable. Image parameters are host
  // images (as files are): a stage that moves them to the device fails the same way.
  alignas(64) static std::byte fake_src[512], fake_dst[512];
  for (const schema::Op* op : schema::catalogue()) {
    SCOPED_TRACE(op->name());
    const Format f{op->depths().front(), op->channels().front()};
    ConstImageView src(fake_src, 5, 4, 64, f, Location::cuda(7));
    std::unique_ptr<schema::Bound> bound;
    ASSERT_NO_THROW(bound = bind_constant_images(*op, op->examples().front(), 5, 4, f));
    const schema::Shape out = bound->output(src);
    ImageView dst(fake_dst, out.width, out.height, 64, out.format, Location::cuda(7));
    expect_error([&] { bound->run(src, dst, Context{}); }, Status::backend_unavailable, {"cuda"});
    expect_error([&] { bound->run(src, dst, Context{Backend::automatic, Queue::cuda(nullptr)}); },
                 Status::backend_unavailable, {"cuda"});
  }
}

TEST(Schema, PipelineStageEqualsDirectCallForEveryOpsFirstExample) {
  auto rng = make_rng(0x5c4e);
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("pixflow_schema_" + std::to_string(run_seed()));
  std::filesystem::create_directories(dir);
  for (const schema::Op* op : schema::catalogue()) {
    const std::string& example = op->examples().front();
    const Format f{op->depths().front(), op->channels().back() == 4 ? 3 : op->channels().back()};
    PIXFLOW_TRACE(op->name() + " " + example + " " + to_string(f));
    auto src = random_image(23, 17, f, rng);
    // Image parameters: files, as on the command line.
    auto kv = split_params(example);
    std::string text = op->name() + " " + example;
    std::map<std::string, std::shared_ptr<const Image>> files;
    for (const schema::Param& p : op->params()) {
      if (p.kind != schema::Kind::image || !(p.required || kv.count(p.name))) continue;
      const double hi = p.role == schema::ImageRole::map_y ? 20.0 : 26.0;
      auto img = std::make_shared<Image>(
          clone(random_image(23, 17, p.role == schema::ImageRole::like_src ? f : Format{Depth::f32, 1},
                             rng, true, p.role == schema::ImageRole::like_src ? 0 : -3,
                             p.role == schema::ImageRole::like_src ? 0 : hi)
                    .view));
      const std::string path = (dir / (op->name() + "_" + p.name + ".npy")).string();
      write_image(path, *img);
      files[p.name] = img;
      kv[p.name] = path;
      text += " " + p.name + "=" + path;
    }
    Image got;
    try {
      got = Pipeline::parse(text).run(src);
    } catch (const Error& e) {
      ADD_FAILURE() << text << ": " << e.what();
      continue;
    }
    auto bound = op->bind(kv, [&](const schema::Param& p, const std::string&) {
      return files.at(p.name);
    });
    const schema::Shape out = bound->output(src);
    auto want = make_dst(out.width, out.height, out.format, rng);
    bound->run(src, want, Context{});
    EXPECT_EQ(compare(got, want), "") << text;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pixflow::test
