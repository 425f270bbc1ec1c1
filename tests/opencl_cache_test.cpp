// The disk cache of OpenCL program binaries (src/backends/opencl/program_cache.hpp): a first
// build writes a file, a later one (in this process after forget_programs, or in another
// process) loads it, damaged and refused files are replaced without an error, `off` and an
// unwritable folder write nothing, and every op result stays bit-exact against the reference.
//
// Most cases run in this process and drop its programs with opencl::forget_programs: that
// isolates one case in milliseconds and lets the counters of program_cache_stats() say what
// happened (built, loaded, corrupt, rejected). One case runs the CLI twice as separate
// processes, which is what a user sees. Each case works in its own temporary folder and
// restores the environment it changed. Without an OpenCL device these tests skip and say why.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/common.hpp"

#if PIXFLOW_TEST_HAVE_OPENCL
#include "src/backends/opencl/runtime.hpp"
#endif

extern char** environ;

namespace pixflow::test {
namespace {

#if PIXFLOW_TEST_HAVE_OPENCL

namespace fs = std::filesystem;
using opencl::ProgramCacheStats;

bool have_opencl() {
  return !opencl_tests_off() && device_count(Location::Kind::opencl) > 0;
}

#define PIXFLOW_NEED_OPENCL()  \
  if (!have_opencl())          \
  GTEST_SKIP() << "no OpenCL " \
                  "device, or PIXFLOW_TEST_OPENCL=off"

ProgramCacheStats operator-(const ProgramCacheStats& a, const ProgramCacheStats& b) {
  return {a.built - b.built,     a.loaded - b.loaded,   a.saved - b.saved,
          a.unsaved - b.unsaved, a.corrupt - b.corrupt, a.rejected - b.rejected};
}

std::string show(const ProgramCacheStats& s) {
  std::ostringstream o;
  o << "built " << s.built << ", loaded " << s.loaded << ", saved " << s.saved << ", unsaved "
    << s.unsaved << ", corrupt " << s.corrupt << ", rejected " << s.rejected;
  return o.str();
}

// ---- the file format, read here independently of program_cache.cpp ------------------------

constexpr std::size_t kHeader = 48;

std::uint64_t fnv1a(const std::string& bytes, std::size_t from) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = from; i < bytes.size(); ++i)
    h = (h ^ static_cast<unsigned char>(bytes[i])) * 0x100000001b3ull;
  return h;
}

std::uint64_t u64_at(const std::string& b, std::size_t at) {
  std::uint64_t v = 0;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}

void put_u64(std::string& b, std::size_t at, std::uint64_t v) {
  std::memcpy(b.data() + at, &v, 8);
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void spill(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}

/// "" when `p` is a whole cache file (magic, version, header size, payload size and checksum
/// agree, the key in the header is the one in the name), else what is wrong.
std::string check_file(const fs::path& p) {
  const std::string b = slurp(p);
  if (b.size() <= kHeader) return "shorter than its header";
  if (b.compare(0, 8, "PXFCLBIN") != 0) return "no magic";
  std::uint32_t version = 0, header = 0;
  std::memcpy(&version, b.data() + 8, 4);
  std::memcpy(&header, b.data() + 12, 4);
  if (version != 1 || header != kHeader) return "format version or header size";
  if (u64_at(b, 32) != b.size() - kHeader) return "payload size";
  if (u64_at(b, 40) != fnv1a(b, kHeader)) return "payload checksum";
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", (unsigned long long)u64_at(b, 16),
                (unsigned long long)u64_at(b, 24));
  const std::string name = p.filename().string();
  if (name.size() < 6 + 32 || name.compare(name.size() - 6 - 32, 32, hex) != 0)
    return "key in header differs from name " + name;
  return "";
}

/// The cache files of a folder (not the dot-named temp files), sorted.
std::vector<fs::path> cache_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".clbin" && e.path().filename().string()[0] != '.')
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

/// Every name under a folder, recursively (temp files included).
std::set<std::string> everything_under(const fs::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    out.insert(fs::relative(e.path(), dir).string());
  return out;
}

/// (inode, mtime in ns): a file replaced by rename gets a new inode.
std::pair<ino_t, long long> identity(const fs::path& p) {
  struct stat st {};
  if (stat(p.c_str(), &st) != 0) return {0, 0};
  return {st.st_ino, (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec};
}

// The op every case runs: median 3x3 on u16 (one program; u8 x 1 would take the word kernel,
// whose build options follow the views' 4-byte alignment, which the harness's random ROIs
// vary), checked bit-exact against the reference on an awkward size in ROI views by the
// shared harness.
::testing::AssertionResult run_median(std::uint64_t salt, Depth depth = Depth::u16) {
  auto rng = make_rng(salt);
  return backends_match_ref("median", "k=3 border=reflect101", {depth, 1}, {37, 23}, rng);
}

class OpenclCache : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_opencl()) return;
    device_ = test_opencl_device();
    // This process may have built the op's program already (another test): start cold.
    opencl::forget_programs(device_);
  }
  void TearDown() override {
    // The programs of this case came from a folder that is about to go away; later tests
    // of the binary build their own.
    if (have_opencl()) opencl::forget_programs(device_);
  }
  int device_ = 0;
};

TEST_F(OpenclCache, FirstUseWritesAFileAndTheNextBuildLoadsIt) {
  PIXFLOW_NEED_OPENCL();
  TempDir tmp;
  EnvScope env({{"PIXFLOW_OPENCL_CACHE_DIR", tmp.path().string()}});
  ASSERT_EQ(opencl::program_cache_folder(), tmp.path().string());

  const ProgramCacheStats s0 = opencl::program_cache_stats();
  ASSERT_TRUE(run_median(0xCAC1));
  const ProgramCacheStats first = opencl::program_cache_stats() - s0;
  const std::vector<fs::path> files = cache_files(tmp.path());
  ASSERT_FALSE(files.empty()) << show(first);
  EXPECT_EQ(first.built, files.size()) << show(first);
  EXPECT_EQ(first.saved, files.size()) << show(first);
  EXPECT_EQ(first.loaded, 0u) << show(first);
  std::vector<std::pair<ino_t, long long>> ids;
  for (const auto& f : files) {
    EXPECT_EQ(check_file(f), "") << f;
    EXPECT_EQ(f.filename().string().rfind("median-", 0), 0u) << f;
    ids.push_back(identity(f));
  }

  opencl::forget_programs(device_);
  const ProgramCacheStats s1 = opencl::program_cache_stats();
  ASSERT_TRUE(run_median(0xCAC2));
  const ProgramCacheStats second = opencl::program_cache_stats() - s1;
  EXPECT_EQ(second.loaded, files.size()) << show(second);
  EXPECT_EQ(second.built, 0u) << show(second);
  EXPECT_EQ(second.saved, 0u) << show(second);
  EXPECT_EQ(cache_files(tmp.path()), files);
  for (std::size_t i = 0; i < files.size(); ++i) EXPECT_EQ(identity(files[i]), ids[i]) << files[i];
  // No temp file left behind.
  EXPECT_EQ(everything_under(tmp.path()).size(), files.size());
}

// Two processes of the CLI: the first writes the cache, the second loads it (its files keep
// their inode and mtime: nothing rebuilt them) and both give the reference's result.
TEST_F(OpenclCache, ASecondProcessLoadsTheFirstOnesFiles) {
  PIXFLOW_NEED_OPENCL();
  TempDir tmp;
  const std::string cache = tmp / "cache";
  EnvScope env({{"PIXFLOW_OPENCL_CACHE_DIR", cache}});
  auto rng = make_rng(0xCAC3);
  const TestImage src = random_image(41, 19, {Depth::u8, 1}, rng, true);
  write_image(tmp / "in.pgm", src.view);
  TestImage want = make_dst(41, 19, {Depth::u8, 1}, rng, true);
  median(src.view, want.view, {5, 5, Border::reflect()}, {Backend::ref});

  auto cli = [&](const std::string& out) {
    std::vector<std::string> args = {PIXFLOW_CLI_PATH,
                                     "run",
                                     "median k=5 border=reflect",
                                     tmp / "in.pgm",
                                     "-o",
                                     out,
                                     "--backend",
                                     "opencl",
                                     "--device",
                                     std::to_string(device_),
                                     "--progress=none"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  };

  ASSERT_EQ(cli(tmp / "a.pgm"), 0);
  const std::vector<fs::path> files = cache_files(cache);
  ASSERT_FALSE(files.empty());
  std::vector<std::pair<ino_t, long long>> ids;
  for (const auto& f : files) {
    EXPECT_EQ(check_file(f), "") << f;
    ids.push_back(identity(f));
  }
  ASSERT_EQ(cli(tmp / "b.pgm"), 0);
  EXPECT_EQ(cache_files(cache), files);
  for (std::size_t i = 0; i < files.size(); ++i) EXPECT_EQ(identity(files[i]), ids[i]) << files[i];
  EXPECT_EQ(compare(read_image(tmp / "a.pgm"), want.view), "");
  EXPECT_EQ(compare(read_image(tmp / "b.pgm"), want.view), "");
}

// A truncated file (inside the header, inside the payload) and one with flipped payload or
// key bytes are found before the driver sees them, deleted and written again; the op's result
// stays exact and no error shows.
TEST_F(OpenclCache, DamagedFilesAreRebuiltAndReplaced) {
  PIXFLOW_NEED_OPENCL();
  TempDir tmp;
  EnvScope env({{"PIXFLOW_OPENCL_CACHE_DIR", tmp.path().string()}});
  ASSERT_TRUE(run_median(0xCAC4));
  const std::vector<fs::path> files = cache_files(tmp.path());
  ASSERT_FALSE(files.empty());

  struct Damage {
    const char* what;
    std::string (*f)(std::string);
  };
  const Damage damages[] = {
      {"truncated in the payload",
       [](std::string b) { return b.substr(0, kHeader + (b.size() - kHeader) / 2); }},
      {"truncated in the header", [](std::string b) { return b.substr(0, 20); }},
      {"empty", [](std::string) { return std::string(); }},
      {"payload bytes flipped",
       [](std::string b) {
         for (std::size_t i = kHeader; i < b.size(); i += 97) b[i] = char(~b[i]);
         return b;
       }},
      {"key byte flipped",
       [](std::string b) {
         b[20] = char(b[20] ^ 1);
         return b;
       }},
      {"other format version",
       [](std::string b) {
         b[8] = char(b[8] + 1);
         return b;
       }},
  };
  std::uint64_t salt = 0xCAC5;
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.what);
    for (const auto& f : files) spill(f, d.f(slurp(f)));
    opencl::forget_programs(device_);
    const ProgramCacheStats s0 = opencl::program_cache_stats();
    ASSERT_TRUE(run_median(salt++));
    const ProgramCacheStats s = opencl::program_cache_stats() - s0;
    EXPECT_EQ(s.corrupt, files.size()) << show(s);
    EXPECT_EQ(s.rejected, 0u) << show(s);
    EXPECT_EQ(s.loaded, 0u) << show(s);
    EXPECT_EQ(s.built, files.size()) << show(s);
    EXPECT_EQ(s.saved, files.size()) << show(s);
    EXPECT_EQ(cache_files(tmp.path()), files);
    for (const auto& f : files) EXPECT_EQ(check_file(f), "") << f;
  }
}

// A file whose header is right (size and checksum of its payload) but whose payload is no
// binary the driver takes: the driver refuses it, the file is deleted and the program built
// from source and saved again, silently.
TEST_F(OpenclCache, ABinaryTheDriverRefusesIsDeletedAndRebuilt) {
  PIXFLOW_NEED_OPENCL();
  TempDir tmp;
  EnvScope env({{"PIXFLOW_OPENCL_CACHE_DIR", tmp.path().string()}});
  ASSERT_TRUE(run_median(0xCAC6));
  const std::vector<fs::path> files = cache_files(tmp.path());
  ASSERT_FALSE(files.empty());
  std::map<fs::path, std::string> garbage;
  for (const auto& f : files) {
    std::string b = slurp(f).substr(0, kHeader);
    std::string payload = "not a program binary, but a well-formed cache file around one\n";
    while (payload.size() < 4096) payload += payload;
    b += payload;
    put_u64(b, 32, payload.size());
    put_u64(b, 40, fnv1a(b, kHeader));
    spill(f, b);
    ASSERT_EQ(check_file(f), "") << "the test's own file is malformed: " << f;
    garbage[f] = b;
  }
  opencl::forget_programs(device_);
  const ProgramCacheStats s0 = opencl::program_cache_stats();
  ASSERT_TRUE(run_median(0xCAC7));
  const ProgramCacheStats s = opencl::program_cache_stats() - s0;
  EXPECT_EQ(s.rejected, files.size()) << show(s);
  EXPECT_EQ(s.corrupt, 0u) << show(s);
  EXPECT_EQ(s.loaded, 0u) << show(s);
  EXPECT_EQ(s.built, files.size()) << show(s);
  EXPECT_EQ(s.saved, files.size()) << show(s);
  for (const auto& f : files) {
    EXPECT_EQ(check_file(f), "") << f;
    EXPECT_NE(slurp(f), garbage[f]) << f;
  }
  // And the rewritten file loads.
  opencl::forget_programs(device_);
  const ProgramCacheStats s1 = opencl::program_cache_stats();
  ASSERT_TRUE(run_median(0xCAC8));
  EXPECT_EQ((opencl::program_cache_stats() - s1).loaded, files.size());
}

// `off` writes nothing anywhere: the default folders point into the temp folder too, so a
// cache that ignored `off` would be seen there (and not in the user's ~/.cache).
TEST_F(OpenclCache, OffWritesNothing) {
  PIXFLOW_NEED_OPENCL();
  TempDir tmp;
  EnvScope env({{"PIXFLOW_OPENCL_CACHE_DIR", "off"},
                {"XDG_CACHE_HOME", tmp / "xdg"},
                {"HOME", tmp / "home"}});
  EXPECT_EQ(opencl::program_cache_folder(), "");
  const ProgramCacheStats s0 = opencl::program_cache_stats();
  ASSERT_TRUE(run_median(0xCAC9));
  const ProgramCacheStats s = opencl::program_cache_stats() - s0;
  EXPECT_GE(s.built, 1u) << show(s);
  EXPECT_EQ(s.saved + s.unsaved + s.loaded + s.corrupt + s.rejected, 0u) << show(s);
  EXPECT_TRUE(everything_under(tmp.path()).empty());
}

// Without PIXFLOW_OPENCL_CACHE_DIR (or with it empty): $XDG_CACHE_HOME/pixflow/opencl when
// XDG_CACHE_HOME is an absolute path, else $HOME/.cache/pixflow/opencl; neither: off.
TEST_F(OpenclCache, TheDefaultFolderFollowsXdgThenHome) {
  PIXFLOW_NEED_OPENCL();
  TempDir tmp;
  {
    EnvScope env({{"PIXFLOW_OPENCL_CACHE_DIR", ""},
                  {"XDG_CACHE_HOME", tmp / "xdg"},
                  {"HOME", tmp / "home"}});
    EXPECT_EQ(opencl::program_cache_folder(), tmp / "xdg/pixflow/opencl");
    ASSERT_TRUE(run_median(0xCACA));
    EXPECT_FALSE(cache_files(tmp / "xdg/pixflow/opencl").empty());
    // The folders the cache made are the user's alone: the binaries are code the driver runs.
    struct stat st {};
    ASSERT_EQ(stat((tmp / "xdg/pixflow/opencl").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
  }
  opencl::forget_programs(device_);
  {
    EnvScope env({{"PIXFLOW_OPENCL_CACHE_DIR", std::nullopt},
                  {"XDG_CACHE_HOME", "relative/cache"},
                  {"HOME", tmp / "home"}});
    EXPECT_EQ(opencl::program_cache_folder(), tmp / "home/.cache/pixflow/opencl");
    ASSERT_TRUE(run_median(0xCACB));
    EXPECT_FALSE(cache_files(tmp / "home/.cache/pixflow/opencl").empty());
  }
  {
    EnvScope env({{"PIXFLOW_OPENCL_CACHE_DIR", std::nullopt},
                  {"XDG_CACHE_HOME", std::nullopt},
                  {"HOME", std::nullopt}});
    EXPECT_EQ(opencl::program_cache_folder(), "");
  }
}

// A folder that cannot be made (its parent is a file) or written: nothing saved, no error,
// exact results. (A read-only folder is tested only when not root: root writes anywhere.)
TEST_F(OpenclCache, AnUnwritableFolderStillRunsTheOp) {
  PIXFLOW_NEED_OPENCL();
  TempDir tmp;
  spill(tmp.path() / "file", "a file where the cache's parent folder should be");
  {
    EnvScope env({{"PIXFLOW_OPENCL_CACHE_DIR", tmp / "file/cache"}});
    const ProgramCacheStats s0 = opencl::program_cache_stats();
    ASSERT_TRUE(run_median(0xCACC));
    const ProgramCacheStats s = opencl::program_cache_stats() - s0;
    EXPECT_GE(s.built, 1u) << show(s);
    EXPECT_EQ(s.unsaved, s.built) << show(s);
    EXPECT_EQ(s.saved, 0u) << show(s);
  }
  if (geteuid() != 0) {
    opencl::forget_programs(device_);
    fs::create_directory(tmp.path() / "ro");
    fs::permissions(tmp.path() / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    EnvScope env({{"PIXFLOW_OPENCL_CACHE_DIR", tmp / "ro"}});
    const ProgramCacheStats s0 = opencl::program_cache_stats();
    ASSERT_TRUE(run_median(0xCACD));
    const ProgramCacheStats s = opencl::program_cache_stats() - s0;
    EXPECT_EQ(s.saved, 0u) << show(s);
    EXPECT_EQ(s.unsaved, s.built) << show(s);
    fs::permissions(tmp.path() / "ro", fs::perms::owner_all);
  }
  EXPECT_EQ(everything_under(tmp.path()), (std::set<std::string>{"file"}));
}

// Threads that need programs at once, some the same, some different: each program is built
// once in the process, every file is whole, no temp file is left, every result exact.
TEST_F(OpenclCache, ThreadsBuildingAtOnceLeaveWholeFiles) {
  PIXFLOW_NEED_OPENCL();
  TempDir tmp;
  EnvScope env({{"PIXFLOW_OPENCL_CACHE_DIR", tmp.path().string()}});
  const Depth depths[] = {Depth::u8, Depth::u16, Depth::f32, Depth::u8, Depth::u16, Depth::f32};
  const Location dev = Location::opencl(device_);
  std::vector<std::string> diffs(std::size(depths));
  const ProgramCacheStats s0 = opencl::program_cache_stats();
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < std::size(depths); ++t)
    threads.emplace_back([&, t] {
      auto rng = make_rng(0xCAD0 + t);
      const Format f{depths[t], 1};
      const TestImage src = random_image(29, 31, f, rng, true);
      TestImage want = make_dst(29, 31, f, rng, true);
      median(src.view, want.view, {3, 3, Border::replicate()}, {Backend::ref});
      Image a(29, 31, f, dev), b(29, 31, f, dev);
      copy(src.view, a);
      median(a, b, {3, 3, Border::replicate()});
      diffs[t] = compare(to_host(b), want.view);
    });
  for (auto& th : threads) th.join();
  for (const auto& d : diffs) EXPECT_EQ(d, "");
  const ProgramCacheStats s = opencl::program_cache_stats() - s0;
  const std::vector<fs::path> files = cache_files(tmp.path());
  EXPECT_EQ(files.size(), 3u);
  EXPECT_EQ(s.built, 3u) << show(s);
  EXPECT_EQ(s.saved, 3u) << show(s);
  for (const auto& f : files) EXPECT_EQ(check_file(f), "") << f;
  EXPECT_EQ(everything_under(tmp.path()).size(), files.size());
}

// The embedded kernel sources are self-contained: the shared rule headers they include
// (src/base/rules/*.h) are written into the text, so a user needs no file beside the binary
// and the cache key, a hash of that text, changes with any rule. Needs no device.
TEST(OpenclSources, EmbeddedSourcesCarryTheRuleHeaders) {
  const std::pair<const char*, const char*> uses[] = {{"common", "PIXFLOW_RULES_BORDER_H"},
                                                      {"pointwise", "PIXFLOW_RULES_POINTWISE_H"},
                                                      {"linear", "PIXFLOW_RULES_SATURATE_H"},
                                                      {"bilateral", "PIXFLOW_RULES_BILATERAL_H"},
                                                      {"iir", "PIXFLOW_RULES_IIR_H"},
                                                      {"remap", "PIXFLOW_RULES_REMAP_H"},
                                                      {"epsilon", "PIXFLOW_RULES_EPSILON_H"},
                                                      {"median", ""},
                                                      {"morphology", ""},
                                                      {"linalg", ""}};
  for (const auto& [name, guard] : uses) {
    const std::string_view text = opencl::kernel_source(name);
    ASSERT_FALSE(text.empty()) << name;
    EXPECT_EQ(text.find("#include \""), std::string_view::npos) << name << ": an include left";
    if (*guard) {
      EXPECT_NE(text.find(std::string("#define ") + guard), std::string_view::npos) << name;
    }
  }
  EXPECT_NE(opencl::kernel_source("common").find("PX_DEFINE_BORDER_INDEX(px_border_index_i32"),
            std::string_view::npos);
}

#else  // built without the OpenCL backend

TEST(OpenclCache, NeedsTheOpenclBackend) {
  GTEST_SKIP() << "built without the OpenCL backend";
}

#endif

}  // namespace
}  // namespace pixflow::test
