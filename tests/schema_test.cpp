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
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include "src/schema/ops.hpp"
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
            PIXFLOW_TRACE(testing::Message() << op->name() << " " << params << " " << depth_name(d)
                                             << "x" << ch << " " << s.w << "x" << s.h);
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
      expect_error(
          [&] {
            bound->run(src, dst, Context{b, Queue::cuda(nullptr)});
          },
          Status::invalid_argument, {op->name() + ":", "queue"});
    expect_error(
        [&] {
          bound->run(src, dst, Context{Backend::automatic, Queue::opencl(&src)});
        },
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
    expect_error(
        [&] {
          bound->run(src, dst, Context{Backend::automatic, Queue::cuda(nullptr)});
        },
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
      auto img = std::make_shared<Image>(clone(
          random_image(23, 17, p.role == schema::ImageRole::like_src ? f : Format{Depth::f32, 1},
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
    auto bound =
        op->bind(kv, [&](const schema::Param& p, const std::string&) { return files.at(p.name); });
    const schema::Shape out = bound->output(src);
    auto want = make_dst(out.width, out.height, out.format, rng);
    bound->run(src, want, Context{});
    EXPECT_EQ(compare(got, want), "") << text;
  }
  std::filesystem::remove_all(dir);
}

// ---- Bad input, derived from the schema ----------------------------------------------------
// Every catalogue op refuses every out-of-schema value and every unusable image with the
// documented status and a message "<op>: <what> ..." that names the key (or src/dst). The
// expected messages are written out here from the schema's data (names, ranges, choices,
// depths, channels, output shape), so a change of wording or of the checks shows up.
//
// Parsing (through op->bind and through Pipeline::parse, whose required image files do not
// exist: value and key errors must come before any file is read): for every integer and
// shorthand key: below lo, above hi, "abc", "2.5", and an even value when odd (0 accepted
// for zero_ok); for every number key: outside a finite bound, "nan", "inf", "-inf", "abc";
// booleans "2"; choices and borders "bogus"; an unknown key; a key given twice; a constant
// border's value nan. Image and text keys (files, kernels) are op-specific: see the family
// tests. The C++ API's checks of the same keys (OpDef::validate, which every public function
// calls through detail::check_op) are schema::check_integer / check_number with the same
// Param: their messages are checked here for every key, and a non-finite constant border is
// checked through validate of every typed declaration with a border.
//
// Running (the bound first example on real images, through the C++ function the stage
// calls, and through Pipeline::run where the op takes no required image file): a source
// depth outside depths() and a channel count outside channels() are unsupported; an empty
// src or dst, a dst of the wrong width, height, depth or channel count, a dst that is the
// source's memory (same start, or one pixel on) are invalid_argument. The point-wise ops
// that may run in place (arith, threshold, convert to the same depth) must give the
// out-of-place result when dst is src.

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// An integer key's bound as its messages say it (all digits: 2147483647, not 2.14748e+09).
std::string whole(double v) {
  return std::to_string(static_cast<long long>(v));
}

// The range of a number key as the messages say it.
std::string number_range(const schema::Param& p) {
  const bool lo = p.lo > -schema::kUnbounded, hi = p.hi < schema::kUnbounded;
  if (lo && hi) return "in [" + num(p.lo) + ", " + num(p.hi) + "]";
  if (lo) return "finite and >= " + num(p.lo);
  if (hi) return "finite and <= " + num(p.hi);
  return "finite";
}

std::string join_names(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// Runs f and expects `status` with exactly the message `want`.
void expect_message(const std::function<void()>& f, Status status, const std::string& want) {
  try {
    f();
    ADD_FAILURE() << "no error; expected " << status_name(status) << ": " << want;
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_EQ(std::string(e.what()), want);
  }
}

// A shorthand ("k") is checked as the first key it sets, under its own name.
schema::Param as_checked(const schema::Op& op, const schema::Param& p) {
  if (p.sets.empty()) return p;
  for (const schema::Param& q : op.params())
    if (q.name == p.sets.front()) {
      schema::Param r = q;
      r.name = p.name;
      return r;
    }
  ADD_FAILURE() << op.name() << ": shorthand " << p.name << " sets unknown " << p.sets.front();
  return p;
}

// Constant images for the image keys (bind never reads them on a refused value).
schema::ImageSource constant_images() {
  return [](const schema::Param& p, const std::string&) {
    Image m(9, 7,
            p.role == schema::ImageRole::like_src ? Format{Depth::u8, 1} : Format{Depth::f32, 1});
    fill_constant(m, 1);
    return std::make_shared<const Image>(std::move(m));
  };
}

struct ParseCase {
  std::string what;
  schema::KeyValues kv;
  std::string want;  ///< the exact message
};

// The stage text of kv; required image keys not in kv name files that do not exist.
std::string stage_text(const schema::Op& op, const schema::KeyValues& kv) {
  std::string t = op.name();
  for (const auto& [k, v] : kv) t += " " + k + "=" + v;
  for (const schema::Param& p : op.params())
    if (p.kind == schema::Kind::image && p.required && !kv.count(p.name))
      t += " " + p.name + "=/nonexistent/pixflow_bad_input_" + p.name + ".npy";
  return t;
}

std::vector<ParseCase> parse_cases(const schema::Op& op) {
  const std::string& n = op.name();
  const schema::KeyValues base = split_params(op.examples().front());
  std::vector<ParseCase> out;
  auto add = [&](const std::string& key, const std::string& value, const std::string& want,
                 schema::KeyValues extra = {}) {
    schema::KeyValues kv = base;
    for (const auto& [k, v] : extra) kv[k] = v;
    kv[key] = value;
    out.push_back({key + "=" + value, kv, n + ": " + want});
  };
  std::vector<std::string> names;
  for (const schema::Param& p0 : op.params()) {
    names.push_back(p0.name);
    const schema::Param p = as_checked(op, p0);
    const std::string& k = p.name;
    switch (p.kind) {
      case schema::Kind::integer: {
        const std::string r = "[" + whole(p.lo) + ", " + whole(p.hi) + "]";
        for (const std::string& v : {whole(p.lo - 1), whole(p.hi + 1), std::string("abc"),
                                     std::string("2.5"), std::string("1e400")})
          add(k, v, k + " must be an integer in " + r + " (got '" + v + "')");
        add(k, "nan", k + " must be an integer in " + r + " (got 'nan': not a number)");
        if (p.odd) {
          long long even = p.lo <= 0 ? 2 : (long long)p.lo + ((long long)p.lo & 1);
          EXPECT_LE(double(even), p.hi) << n << " " << k;
          const std::string v = std::to_string(even);
          if (p.zero_ok)
            add(k, v,
                k + " must be 0 (" + p.zero_means + ") or odd and in [1, " + whole(p.hi) +
                    "] (got " + v + ")");
          else
            add(k, v, k + " must be odd and in " + r + " (got " + v + ")");
        }
        break;
      }
      case schema::Kind::number: {
        std::vector<std::string> values{"nan", "inf", "-inf", "abc", "1e400"};
        if (p.lo > -schema::kUnbounded) values.push_back(num(p.lo - 1));
        if (p.hi < schema::kUnbounded) values.push_back(num(p.hi + 1));
        // Non-finite values are named as such ("not a number", "infinite").
        auto what = [](const std::string& v) {
          return v == "nan"                           ? std::string(": not a number")
                 : v.find("inf") != std::string::npos ? std::string(": infinite")
                                                      : std::string();
        };
        for (const std::string& v : values)
          add(k, v,
              k + " must be a number, " + number_range(p) + " (got '" + v + "'" + what(v) + ")");
        if (k == "value" && op.has_border())  // the constant border's value
          add(k, "nan", "value must be a number, finite (got 'nan': not a number)",
              {{"border", "constant"}});
        break;
      }
      case schema::Kind::boolean:
        add(k, "2", k + " must be 0 or 1 (got '2')");
        break;
      case schema::Kind::choice:
      case schema::Kind::depth:
      case schema::Kind::border:
        add(k, "bogus", k + " must be one of " + join_names(p.choices) + " (got 'bogus')");
        add(k, "", k + " must be one of " + join_names(p.choices) + " (got '')");
        break;
      case schema::Kind::image:
      case schema::Kind::text:
        break;  // files and kernels: op-specific (the family tests)
    }
  }
  add("no_such_key", "1",
      "unknown parameter 'no_such_key' (expected " +
          (names.empty() ? std::string("none") : join_names(names)) + ")");
  return out;
}

// A catalogue op's first example, bound for a source like `src` with random images for the
// image keys (like_src: src's size and format; map_x/map_y: coordinates over src's size).
std::unique_ptr<schema::Bound> bind_first_example(const schema::Op& op, const ConstImageView& src,
                                                  std::mt19937_64& rng) {
  auto kv = split_params(op.examples().front());
  for (const schema::Param& p : op.params())
    if (p.kind == schema::Kind::image && p.required && !kv.count(p.name)) kv[p.name] = "random";
  const std::int64_t w = std::max<std::int64_t>(src.width(), 1),
                     h = std::max<std::int64_t>(src.height(), 1);
  const Format f = src.width() > 0 ? src.format() : Format{op.depths().front(), 1};
  return op.bind(kv, [&rng, w, h, f](const schema::Param& p, const std::string&) {
    const bool like = p.role == schema::ImageRole::like_src;
    const double hi = p.role == schema::ImageRole::map_y ? double(h) : double(w);
    return std::make_shared<const Image>(
        clone(random_image(w, h, like ? f : Format{Depth::f32, 1}, rng, true, like ? 0 : -3,
                           like ? 0 : hi + 3)
                  .view));
  });
}

// The ops whose C++ function may run with dst == src (the same view), for the same format.
bool may_run_in_place(const schema::Op& op) {
  static const std::set<std::string> ops{"add", "sub", "absdiff", "mul", "threshold", "convert"};
  return ops.count(op.name()) > 0;
}

const Depth kEveryDepth[] = {Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32};

// The format the run cases use: the op's first depth, 3 channels where allowed.
Format good_format(const schema::Op& op) {
  for (int ch : {3, 1, 4, 2})
    for (int c : op.channels())
      if (c == ch) return {op.depths().front(), ch};
  return {op.depths().front(), op.channels().front()};
}

// Whether a pipeline stage of the op names a file (a required image key).
bool needs_image_file(const schema::Op& op) {
  for (const schema::Param& p : op.params())
    if (p.kind == schema::Kind::image && p.required) return true;
  return false;
}

class SchemaBadInput : public ::testing::TestWithParam<std::string> {};

TEST_P(SchemaBadInput, ParsingRefusesEveryOutOfSchemaValueNamingOpAndKey) {
  const schema::Op* op = schema::find(GetParam());
  ASSERT_NE(op, nullptr);
  const std::string& n = op->name();
  const bool has_required_image = needs_image_file(*op);
  int cases = 0;
  for (const ParseCase& c : parse_cases(*op)) {
    auto kv = c.kv;
    for (const schema::Param& p : op->params())
      if (p.kind == schema::Kind::image && p.required && !kv.count(p.name)) kv[p.name] = "x";
    const std::string text = stage_text(*op, c.kv);
    SCOPED_TRACE(text);
    expect_message([&] { op->bind(kv, constant_images()); }, Status::invalid_argument, c.want);
    if (c.what.back() != '=')  // the pipeline refuses "key=" before the key's parser
      expect_message([&] { Pipeline::parse(text); }, Status::invalid_argument, c.want);
    ++cases;
  }
  // A key given twice (the pipeline's split; bind takes a map).
  const schema::KeyValues base = split_params(op->examples().front());
  if (!base.empty()) {
    const auto& [k, v] = *base.begin();
    const std::string text = stage_text(*op, base) + " " + k + "=" + v;
    SCOPED_TRACE(text);
    expect_message([&] { Pipeline::parse(text); }, Status::invalid_argument,
                   n + ": parameter '" + k + "' given twice");
    ++cases;
  }
  // 0 for a zero_ok key passes the key's own check (a cross-field rule may still refuse it).
  for (const schema::Param& p0 : op->params()) {
    const schema::Param p = as_checked(*op, p0);
    if (!p.zero_ok) continue;
    auto kv = base;
    kv[p.name] = "0";
    SCOPED_TRACE(n + " " + p.name + "=0");
    EXPECT_EQ(schema::parse_integer(n, p, "0"), 0);
    EXPECT_NO_THROW(schema::check_integer(n, p, 0));
    try {
      op->bind(kv, constant_images());
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find(p.name + " must be"), std::string::npos) << e.what();
    }
    ++cases;
  }
  // The C++ API's checks of the same keys (validate: check_integer / check_number).
  for (const schema::Param& p : op->params()) {
    if (!p.sets.empty()) continue;
    SCOPED_TRACE(n + " " + p.name + " (C++ API check)");
    if (p.kind == schema::Kind::integer) {
      const std::string r = "[" + whole(p.lo) + ", " + whole(p.hi) + "]";
      for (const long long v : {(long long)p.lo - 1, (long long)p.hi + 1}) {
        const std::string got = " (got " + std::to_string(v) + ")";
        std::string want = n + ": " + p.name + " must be in " + r + got;
        if (p.odd && p.zero_ok)
          want = n + ": " + p.name + " must be 0 (" + p.zero_means + ") or odd and in [1, " +
                 whole(p.hi) + "]" + got;
        else if (p.odd)
          want = n + ": " + p.name + " must be odd and in " + r + got;
        expect_message([&] { schema::check_integer(n, p, v); }, Status::invalid_argument, want);
        ++cases;
      }
    } else if (p.kind == schema::Kind::number) {
      std::vector<double> values{NAN, INFINITY, -INFINITY};
      if (p.lo > -schema::kUnbounded) values.push_back(p.lo - 1);
      if (p.hi < schema::kUnbounded) values.push_back(p.hi + 1);
      for (const double v : values) {
        expect_message([&] { schema::check_number(n, p, v); }, Status::invalid_argument,
                       n + ": " + p.name + " must be " + number_range(p) + " (got " +
                           (std::isnan(v) ? std::string("NaN: not a number") : num(v)) + ")");
        ++cases;
      }
    }
  }
  RecordProperty("cases", cases);
  std::printf("[bad-input] %s: %d parsing cases%s\n", n.c_str(), cases,
              has_required_image ? " (pipeline with missing image files)" : "");
}

TEST_P(SchemaBadInput, RunRefusesUnusableImagesNamingOpAndSrcOrDst) {
  const schema::Op* op = schema::find(GetParam());
  ASSERT_NE(op, nullptr);
  const std::string& n = op->name();
  const bool has_required_image = needs_image_file(*op);
  const std::string stage = op->name() + " " + op->examples().front();
  auto rng = make_rng(salt_of("bad " + n));
  int cases = 0;
  // Source depth and channel count outside the schema's: unsupported, through the C++
  // function and through a pipeline.
  std::string depths;
  for (Depth d : op->depths()) depths += (depths.empty() ? "" : ", ") + std::string(depth_name(d));
  for (Depth d : kEveryDepth) {
    if (std::find(op->depths().begin(), op->depths().end(), d) != op->depths().end()) continue;
    const Format f{d, good_format(*op).channels};
    PIXFLOW_TRACE(n + " src " + to_string(f));
    auto src = random_image(9, 7, f, rng);
    const auto bound = bind_first_example(*op, src, rng);
    Image dst(9, 7, f);
    const std::string want =
        n + ": src depth must be one of " + depths + " (got " + depth_name(d) + ")";
    {
      SCOPED_TRACE("C++ API");
      expect_message([&] { bound->run(src, dst, Context{}); }, Status::unsupported, want);
    }
    if (!has_required_image) {
      SCOPED_TRACE("Pipeline::run");
      expect_message([&] { Pipeline::parse(stage).run(src); }, Status::unsupported, want);
    }
    ++cases;
  }
  if (op->channels().size() < 4) {
    std::string list;
    for (int c : op->channels()) list += (list.empty() ? "" : ", ") + std::to_string(c);
    for (int ch = 1; ch <= 4; ++ch) {
      if (std::find(op->channels().begin(), op->channels().end(), ch) != op->channels().end())
        continue;
      const Format f{op->depths().front(), ch};
      PIXFLOW_TRACE(n + " src " + to_string(f));
      auto src = random_image(9, 7, f, rng);
      const auto bound = bind_first_example(*op, src, rng);
      Image dst(9, 7, f);
      const std::string want =
          n + ": src must have " + list + " channels (got " + std::to_string(ch) + ")";
      expect_message([&] { bound->run(src, dst, Context{}); }, Status::unsupported, want);
      if (!has_required_image)
        expect_message([&] { Pipeline::parse(stage).run(src); }, Status::unsupported, want);
      ++cases;
    }
  }
  // A good source: the bound stage runs; then bad destinations.
  const Format f = good_format(*op);
  auto src = random_image(9, 7, f, rng);
  const auto bound = bind_first_example(*op, src, rng);
  const schema::Shape out = bound->output(src);
  const std::string shape =
      std::to_string(out.width) + "x" + std::to_string(out.height) + " " + to_string(out.format);
  auto want = make_dst(out.width, out.height, out.format, rng);
  ASSERT_NO_THROW(bound->run(src, want, Context{})) << stage;
  {
    Depth other = Depth::u8;
    for (Depth d : kEveryDepth)
      if (d != out.format.depth) {
        other = d;
        break;
      }
    const std::pair<std::int64_t, std::int64_t> sizes[] = {
        {out.width + 1, out.height},
        // (a 1-row result: one more)
        {out.width, out.height > 1 ? out.height - 1 : out.height + 1},
        {out.width, out.height},
        {out.width, out.height}};
    const Format formats[] = {out.format,
                              out.format,
                              {other, out.format.channels},
                              {out.format.depth, out.format.channels % 4 + 1}};
    for (int i = 0; i < 4; ++i) {
      Image dst(sizes[i].first, sizes[i].second, formats[i]);
      PIXFLOW_TRACE(n + " dst " + std::to_string(dst.width()) + "x" + std::to_string(dst.height()) +
                    " " + to_string(dst.format()));
      expect_message([&] { bound->run(src, dst, Context{}); }, Status::invalid_argument,
                     n + ": dst must be " + shape + " (got " + std::to_string(dst.width()) + "x" +
                         std::to_string(dst.height()) + " " + to_string(dst.format()) + ")");
      ++cases;
    }
  }
  {
    PIXFLOW_TRACE(n + " empty src / dst");
    Image dst(out.width, out.height, out.format);
    expect_message([&] { bound->run(ConstImageView{}, dst, Context{}); }, Status::invalid_argument,
                   n + ": src must not be empty (got 0x0)");
    expect_message([&] { bound->run(src, ImageView{}, Context{}); }, Status::invalid_argument,
                   n + ": dst must not be empty (got 0x0)");
    cases += 2;
  }
  // dst in src's memory: at the same start (the same view where the formats agree), and one
  // pixel on. One buffer, wide and tall enough for both views.
  {
    const std::int64_t px = std::int64_t(out.format.pixel_bytes());
    const std::int64_t stride = std::max(src.view.row_bytes(), out.width * px + px) + 64;
    const std::int64_t rows = std::max(src.view.height(), out.height) + 1;
    std::vector<std::byte> buf(std::size_t(stride * rows));
    const ImageView in(buf.data(), src.view.width(), src.view.height(), stride, f);
    copy(src, in);
    const ImageView same(buf.data(), out.width, out.height, stride, out.format);
    const ImageView shifted(buf.data() + px, out.width, out.height, stride, out.format);
    PIXFLOW_TRACE(n + " dst over src");
    const std::string overlap = n + ": dst overlaps src; this op cannot run in place";
    if (may_run_in_place(*op) && out.format == f) {
      ASSERT_NO_THROW(bound->run(in, in, Context{})) << stage << " in place";
      EXPECT_EQ(compare(in, want), "") << stage << " in place";
    } else {
      expect_message([&] { bound->run(in, same, Context{}); }, Status::invalid_argument, overlap);
    }
    copy(src, in);
    expect_message([&] { bound->run(in, shifted, Context{}); }, Status::invalid_argument, overlap);
    cases += 2;
  }
  RecordProperty("cases", cases);
  std::printf("[bad-input] %s: %d run cases\n", n.c_str(), cases);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, SchemaBadInput, ::testing::ValuesIn(op_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// A non-finite constant border through the C++ API's check (validate, which each public
// function calls through detail::check_op) of every typed declaration with a border.
template <class P>
void expect_border_refused(const schema::OpDef<P>& def, std::set<std::string>& seen) {
  seen.insert(def.name());
  for (const double v : {double(NAN), double(INFINITY), -double(INFINITY)}) {
    P p{};
    p.border = Border::constant(v);
    SCOPED_TRACE(def.name() + " border value " + num(v));
    expect_message([&] { def.validate(p); }, Status::invalid_argument,
                   def.name() + ": border value must be finite (got " + num(v) + ")");
  }
}

TEST(Schema, NonFiniteConstantBorderIsRefusedByTheCppChecksOfEveryOpWithABorder) {
  std::set<std::string> seen;
  expect_border_refused(schema::median_op(), seen);
  for (MorphOp m : {MorphOp::dilate, MorphOp::erode, MorphOp::open, MorphOp::close,
                    MorphOp::gradient, MorphOp::tophat, MorphOp::blackhat})
    expect_border_refused(schema::morph_op(m), seen);
  expect_border_refused(schema::box_op(), seen);
  expect_border_refused(schema::gaussian_op(), seen);
  expect_border_refused(schema::gaussian_iir_op(), seen);
  expect_border_refused(schema::sobel_op(), seen);
  expect_border_refused(schema::scharr_op(), seen);
  expect_border_refused(schema::filter2d_op(), seen);
  expect_border_refused(schema::epsilon_op(), seen);
  expect_border_refused(schema::bilateral_op(), seen);
  expect_border_refused(schema::remap_op(), seen);
  expect_border_refused(schema::pad_op(), seen);
  std::set<std::string> with_border;
  for (const schema::Op* op : schema::catalogue())
    if (op->has_border()) with_border.insert(op->name());
  EXPECT_EQ(seen, with_border) << "add the new op with a border here";
}

}  // namespace
}  // namespace pixflow::test
