// The fuzz targets in the ordinary test build (fuzz/README.md). Every file of the committed
// seed corpus (fuzz/corpus/<target>/) and of the stored findings (fuzz/regressions/<target>/)
// goes through its target's body, the same function the libFuzzer binary calls, so that the
// targets keep compiling and every past finding stays fixed; the schema's seeds (every op
// example) run in memory too, so a new op is covered before the corpus is regenerated. A body
// aborts when an invariant breaks: the test's process dies with the body's message.
//
// Then each finding as an API test of its own (FuzzRegression.*), with what it was.
//
// Suites are named Fuzz* (`ctest -R Fuzz`; `make test-asan` runs them under ASan + UBSan).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "src/schema/ops.hpp"
#include "src/schema/schema.hpp"
#include "tests/common.hpp"

#if PIXFLOW_HAVE_FUZZ_BODIES
#include "fuzz/targets.hpp"
#endif

namespace pixflow::test {
namespace {

namespace fs = std::filesystem;

const fs::path kFuzzDir = fs::path(PIXFLOW_SOURCE_DIR) / "fuzz";

std::vector<std::string> target_names() {
  return {"png", "jpeg", "tiff", "pnm", "npy", "read_image", "pipeline", "differential"};
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

[[maybe_unused]] std::string read_file(const fs::path& p) {  // unused without the fuzz bodies
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class FuzzCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzCorpus, EverySeedAndStoredFindingPassesTheTargetBody) {
  const std::string name = GetParam();
  const auto seeds = files_in(kFuzzDir / "corpus" / name);
  const auto findings = files_in(kFuzzDir / "regressions" / name);
  EXPECT_FALSE(seeds.empty()) << "no seeds in fuzz/corpus/" << name;
#if PIXFLOW_HAVE_FUZZ_BODIES
  if (name == "tiff" && !have_tiff()) GTEST_SKIP() << "built without libtiff";
  const fuzz::Target* t = fuzz::find_target(name);
  ASSERT_NE(t, nullptr) << "fuzz/targets.hpp has no target " << name;
  for (const auto* list : {&seeds, &findings})
    for (const fs::path& f : *list) {
      SCOPED_TRACE(f.string());
      const std::string bytes = read_file(f);
      EXPECT_EQ(t->body(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), 0);
    }
  RecordProperty("inputs", int(seeds.size() + findings.size()));
#else
  GTEST_SKIP() << "the fuzz bodies need <fuzzer/FuzzedDataProvider.h> (clang)";
#endif
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzCorpus, ::testing::ValuesIn(target_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(FuzzCorpus, EveryTargetHasACorpusFolderAndABody) {
  std::set<std::string> dirs;
  for (const auto& e : fs::directory_iterator(kFuzzDir / "corpus"))
    if (e.is_directory()) dirs.insert(e.path().filename().string());
  const auto names = target_names();
  EXPECT_EQ(dirs, std::set<std::string>(names.begin(), names.end()));
#if PIXFLOW_HAVE_FUZZ_BODIES
  std::set<std::string> bodies;
  for (const fuzz::Target& t : fuzz::targets()) bodies.insert(t.name);
  EXPECT_EQ(bodies, std::set<std::string>(names.begin(), names.end()));
#endif
}

#if PIXFLOW_HAVE_FUZZ_BODIES
TEST(FuzzCorpus, SchemaSeedsOfEveryOpExamplePassInMemory) {
  // The same texts as fuzz/corpus/{pipeline,differential}/op-* (pixflow_fuzz_seeds), from the
  // catalogue of this build.
  const auto pipeline = fuzz::pipeline_seeds();
  const auto differential = fuzz::differential_seeds();
  std::size_t examples = 0;
  for (const schema::Op* op : schema::catalogue()) examples += op->examples().size();
  EXPECT_EQ(pipeline.size(), examples);
  EXPECT_EQ(differential.size(), examples);
  for (const auto& s : pipeline) {
    SCOPED_TRACE("pipeline " + s.name + ": " + s.text);
    EXPECT_EQ(
        fuzz::fuzz_pipeline(reinterpret_cast<const std::uint8_t*>(s.text.data()), s.text.size()),
        0);
  }
  for (const auto& s : differential) {
    SCOPED_TRACE("differential " + s.name);
    EXPECT_EQ(fuzz::fuzz_differential(reinterpret_cast<const std::uint8_t*>(s.text.data()),
                                      s.text.size()),
              0);
  }
}
#endif

// ---- findings ---------------------------------------------------------------------------------

// differential, fuzz/regressions/differential/arith-empty-operand: schema::Op::bind took an
// empty `value=` (or `with=`) of add/sub/absdiff/mul for an absent one once the key rule had
// seen the key, and bound a stage with neither operand; running it dereferenced the null
// `with` image. (Pipeline::parse never passes an empty value; bind's other callers can.)
TEST(FuzzRegression, ArithStageWithAnEmptyOperandIsRefusedAtBind) {
  for (ArithOp a : {ArithOp::add, ArithOp::sub, ArithOp::absdiff, ArithOp::mul}) {
    const schema::Op& op = schema::arith_op(a);
    SCOPED_TRACE(op.name());
    const schema::ImageSource none = [](const schema::Param&, const std::string&) {
      return std::shared_ptr<const Image>();
    };
    const schema::KeyValues empty_value{{"value", ""}}, empty_with{{"with", ""}};
    expect_error([&] { op.bind(empty_value, none); }, Status::invalid_argument,
                 {op.name() + ":", "value=V must not be empty"});
    expect_error([&] { op.bind(empty_with, none); }, Status::invalid_argument,
                 {op.name() + ":", "with=FILE must not be empty"});
    EXPECT_NO_THROW(op.bind({{"value", "3"}}, none));
  }
}

// differential, fuzz/regressions/differential/bilateral-huge-sigma-space: with d=0 the radius
// round(1.5 * sigma_space) was converted to int before the limit check; sigma_space=1e30
// overflowed (undefined behaviour; INT_MIN on x86), passed "radius <= 31" and ran with a
// 3x3 window. `pixflow run "bilateral d=0 sigma_space=1e30"` exited 0.
TEST(FuzzRegression, BilateralHugeSigmaSpaceWithDZeroIsRefused) {
  for (const char* s : {"21", "1e30", "1e300", "1431655765.5"})
    expect_error([&] { Pipeline::parse(std::string("bilateral d=0 sigma_space=") + s); },
                 Status::invalid_argument, {"bilateral:", "sigma_space must be < 21 when d=0"});
  EXPECT_NO_THROW(Pipeline::parse("bilateral d=0 sigma_space=20.6"));  // radius 31
  EXPECT_NO_THROW(Pipeline::parse("bilateral d=5 sigma_space=1e30"));  // d > 0: not from sigma
  Image src(4, 3, {Depth::u8, 1}), dst(4, 3, {Depth::u8, 1});
  fill_constant(src, 9);
  BilateralParams p;
  p.d = 0;
  p.sigma_space = 1e300;
  expect_error([&] { bilateral(src, dst, p); }, Status::invalid_argument,
               {"bilateral:", "sigma_space must be < 21 when d=0"});
}

// The peak virtual memory of this process (VmPeak, kB), or -1 where /proc does not say.
long long vm_peak_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmPeak:", 0) == 0) return std::stoll(line.substr(7));
  return -1;
}

std::uint32_t crc32(const std::string& bytes) {
  std::uint32_t c = 0xffffffffu;
  for (unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c ^ 0xffffffffu;
}

std::string be32(std::uint32_t v) {
  return {char(v >> 24), char(v >> 16 & 0xff), char(v >> 8 & 0xff), char(v & 0xff)};
}

// png, fuzz/regressions/png/huge-text-chunk: libpng allocates a known ancillary chunk's
// declared length before reading it (past its own 8 MB limit, with only a warning), so a
// 48-byte PNG declaring a 2 GiB tEXt, zTXt, sPLT or eXIf chunk made read_image allocate
// 2 GiB whatever the IoLimits. png.cpp now has libpng skip the chunks pixflow does not use.
TEST(FuzzRegression, PngHugeAncillaryChunkIsSkippedNotAllocated) {
  const auto dir =
      fs::path(::testing::TempDir()) / ("pixflow_fuzz_png_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string ihdr = "IHDR" + be32(2) + be32(2) + std::string("\x08\x00\x00\x00\x00", 5);
  for (const char* type : {"tEXt", "zTXt", "sPLT", "eXIf", "iTXt"}) {
    SCOPED_TRACE(type);
    // Signature, a valid 2x2 IHDR, then a chunk that declares 2^31 - 16 bytes and ends.
    const std::string png = std::string("\x89PNG\r\n\x1a\n", 8) + be32(13) + ihdr +
                            be32(crc32(ihdr)) + be32(0x7ffffff0u) + type + "Comment";
    const std::string path = (dir / (std::string(type) + ".png")).string();
    std::ofstream(path, std::ios::binary) << png;
    const long long before = vm_peak_kb();
    expect_error([&] { read_image(path); }, Status::io_error, {path});
    const long long after = vm_peak_kb();
    if (before >= 0 && after >= 0) {
      EXPECT_LT(after - before, 256 * 1024)
          << "read_image's peak virtual memory grew by " << (after - before) / 1024 << " MiB";
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pixflow::test
