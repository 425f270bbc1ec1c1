// The pixflow command-line tool, run as a separate process (PIXFLOW_CLI_PATH) in temporary
// folders, with exit code, stdout and stderr captured separately (docs/contract.md §5,
// docs/cli.md).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common.hpp"

extern char** environ;

namespace pixflow::test {
namespace {

namespace fs = std::filesystem;

// ---- running the binary ------------------------------------------------------------------

struct CliResult {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// `pixflow ARGS...` started with extra environment variables; stdout and stderr go to files
/// (so neither pipe can fill up) and are read back separately by wait().
class CliProcess {
 public:
  /// `stdin_path`: a file given as standard input (none: the test's own).
  explicit CliProcess(const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& env = {},
                      const std::string& stdin_path = {}) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (!stdin_path.empty())
      posix_spawn_file_actions_addopen(&fa, 0, stdin_path.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> argv_s = {PIXFLOW_CLI_PATH};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_s;
    for (char** e = environ; *e; ++e) {
      const std::string kv = *e;
      const std::string key = kv.substr(0, kv.find('='));
      if (!env.count(key)) env_s.push_back(kv);
    }
    for (const auto& [k, v] : env) env_s.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    spawn_rc_ = posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
  }
  ~CliProcess() {
    if (spawn_rc_ == 0 && !waited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;

  pid_t pid() const { return pid_; }
  /// Waits for the exit; `usage` (if given) receives the child's resource usage.
  CliResult wait(struct rusage* usage = nullptr) {
    CliResult r;
    if (spawn_rc_ != 0) {
      r.err = std::string("posix_spawn failed: ") + std::strerror(spawn_rc_);
      return r;
    }
    int status = 0;
    struct rusage ru {};
    wait4(pid_, &status, 0, &ru);
    waited_ = true;
    if (usage) *usage = ru;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out_path_);
    r.err = slurp(err_path_);
    return r;
  }

 private:
  TempDir io_;
  std::string out_path_ = io_ / "stdout", err_path_ = io_ / "stderr";
  pid_t pid_ = 0;
  int spawn_rc_ = -1;
  bool waited_ = false;
};

/// Runs `pixflow ARGS...` to its end.
CliResult run_cli(const std::vector<std::string>& args,
                  const std::map<std::string, std::string>& env = {}) {
  return CliProcess(args, env).wait();
}

std::string describe(const std::vector<std::string>& args) {
  std::string s = "pixflow";
  for (const auto& a : args) s += " '" + a + "'";
  return s;
}

std::string show(const CliResult& r) {
  return "exit " + std::to_string(r.code) + "\n--- stdout:\n" + r.out + "--- stderr:\n" + r.err;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// The names in a folder (to check that failures leave no output and no temp file).
std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> s;
  for (const auto& e : fs::directory_iterator(dir)) s.insert(e.path().filename().string());
  return s;
}

// ---- writing inputs by hand (independent of the writers under test) ------------------------

/// Binary PGM (1 channel) or PPM (3 channels) of u8 samples.
void write_pnm(const std::string& path, const ConstImageView& img) {
  std::ofstream f(path, std::ios::binary);
  f << (img.channels() == 1 ? "P5" : "P6") << "\n"
    << img.width() << " " << img.height() << "\n255\n";
  for (std::int64_t y = 0; y < img.height(); ++y)
    f.write(reinterpret_cast<const char*>(img.row_ptr(y)), std::streamsize(img.row_bytes()));
}

/// NPY v1.0, C order, H x W (1 channel) or H x W x C.
void write_npy(const std::string& path, const ConstImageView& img) {
  const char* descr = img.depth() == Depth::f32   ? "<f4"
                      : img.depth() == Depth::s16 ? "<i2"
                      : img.depth() == Depth::u16 ? "<u2"
                      : img.depth() == Depth::s32 ? "<i4"
                                                  : "|u1";
  std::string shape = "(" + std::to_string(img.height()) + ", " + std::to_string(img.width());
  shape += img.channels() == 1 ? ")" : ", " + std::to_string(img.channels()) + ")";
  std::string header =
      "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const std::uint16_t len = std::uint16_t(header.size());
  const char len_le[2] = {char(len & 0xff), char(len >> 8)};
  f.write(len_le, 2);
  f << header;
  for (std::int64_t y = 0; y < img.height(); ++y)
    f.write(reinterpret_cast<const char*>(img.row_ptr(y)), std::streamsize(img.row_bytes()));
}

/// A PNG signature followed by garbage: a corrupt file with an image extension.
void write_corrupt_png(const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  f.write("\x89PNG\r\n\x1a\n", 8);
  f << "this is not a PNG stream, only its signature";
}

Image random_u8(std::int64_t w, std::int64_t h, int ch, std::uint64_t salt) {
  auto rng = make_rng(salt);
  return clone(random_image(w, h, {Depth::u8, ch}, rng).view);
}

Image transposed(const ConstImageView& src) {
  Image dst(src.height(), src.width(), src.format());
  transpose(src, dst);
  return dst;
}

const std::string kAstronaut = std::string(PIXFLOW_SOURCE_DIR) + "/data/astronaut.png";

bool have_ops(std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (!find_op(n)) return false;
  return true;
}

// ---- a minimal parser for the flat JSON objects of --progress=json ---------------------------

struct JsonValue {
  bool is_string = false;
  std::string text;  // the string's value, or the number's text
};

/// Parses {"key": "string" | number, ...}; returns false on any syntax error.
bool parse_flat_json(const std::string& s, std::map<std::string, JsonValue>& out) {
  std::size_t i = 0;
  auto ws = [&] {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  };
  auto str = [&](std::string& v) {
    if (i >= s.size() || s[i] != '"') return false;
    ++i;
    while (i < s.size() && s[i] != '"') {
      if (static_cast<unsigned char>(s[i]) < 0x20) return false;
      if (s[i] == '\\') {
        if (++i >= s.size()) return false;
        const char e = s[i];
        if (e == 'u') {
          if (i + 4 >= s.size()) return false;
          v += char(std::stoi(s.substr(i + 1, 4), nullptr, 16));
          i += 4;
        } else if (std::strchr("\"\\/bfnrt", e)) {
          v += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
        } else {
          return false;
        }
      } else {
        v += s[i];
      }
      ++i;
    }
    if (i >= s.size()) return false;
    ++i;
    return true;
  };
  ws();
  if (i >= s.size() || s[i++] != '{') return false;
  for (;;) {
    ws();
    std::string key;
    if (!str(key)) return false;
    ws();
    if (i >= s.size() || s[i++] != ':') return false;
    ws();
    JsonValue v;
    if (i < s.size() && s[i] == '"') {
      v.is_string = true;
      if (!str(v.text)) return false;
    } else {
      const std::size_t b = i;
      while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '-' ||
                              s[i] == '.' || s[i] == 'e' || s[i] == 'E' || s[i] == '+'))
        ++i;
      v.text = s.substr(b, i - b);
      char* end = nullptr;
      std::strtod(v.text.c_str(), &end);
      if (v.text.empty() || end != v.text.c_str() + v.text.size()) return false;
    }
    if (out.count(key)) return false;
    out[key] = v;
    ws();
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    if (i < s.size() && s[i] == '}') {
      ++i;
      ws();
      return i == s.size();
    }
    return false;
  }
}

// ---- help, version, info -------------------------------------------------------------------

TEST(CliBasics, HelpAndVersionPrintToStdoutAndExitZero) {
  auto r = run_cli({"--help"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("run"), std::string::npos) << show(r);
  EXPECT_EQ(r.err, "");
  r = run_cli({"run", "--help"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("--keep-going"), std::string::npos) << show(r);
  r = run_cli({"--version"});
  EXPECT_EQ(r.code, 0) << show(r);
  ASSERT_EQ(lines_of(r.out).size(), 1u) << show(r);
  EXPECT_EQ(r.out.rfind("pixflow ", 0), 0u) << show(r);
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(r.out[8]))) << show(r);
}

TEST(CliInfo, ListsEveryRegistryOpWithItsParametersAndDefaults) {
  const auto r = run_cli({"info"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.out.find("CUDA"), std::string::npos);
  EXPECT_NE(r.out.find("TIFF support"), std::string::npos);
  EXPECT_NE(r.out.find("CPU threads"), std::string::npos);
  EXPECT_NE(r.out.find(PIXFLOW_HAVE_SIMD ? "CPU backend:   SIMD "
                                         : "CPU backend:   threaded reference (built without "
                                           "Highway)"),
            std::string::npos)
      << show(r);
  EXPECT_NE(r.out.find("ops (" + std::to_string(op_registry().size()) + ")"), std::string::npos)
      << show(r);
  const auto lines = lines_of(r.out);
  ASSERT_FALSE(op_registry().empty());
  for (const auto& op : op_registry()) {
    // "  <name>  <doc>" then one indented "<param>=<default>  <doc>" line per parameter.
    auto it = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) {
      return l.rfind("  " + op.name + " ", 0) == 0 && l.find(op.doc) != std::string::npos;
    });
    ASSERT_NE(it, lines.end()) << "op " << op.name << " missing\n" << r.out;
    for (const auto& p : op.params) {
      const std::string want =
          "      " + p.name + (p.default_value.empty() ? "" : "=" + p.default_value);
      ++it;
      ASSERT_NE(it, lines.end()) << op.name << " " << p.name;
      EXPECT_EQ(it->rfind(want, 0), 0u)
          << op.name << ": want '" << want << "', got '" << *it << "'";
    }
  }
}

TEST(CliInfo, MarkdownPrintsOneTableRowPerOp) {
  const auto r = run_cli({"info", "--markdown"});
  ASSERT_EQ(r.code, 0) << show(r);
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), op_registry().size() + 2) << r.out;
  EXPECT_EQ(lines[1], "|---|---|---|");
  for (std::size_t i = 0; i < op_registry().size(); ++i) {
    const auto& op = op_registry()[i];
    EXPECT_EQ(lines[i + 2].rfind("| `" + op.name + "` |", 0), 0u) << lines[i + 2];
    for (const auto& p : op.params)
      EXPECT_NE(lines[i + 2].find("`" + p.name + "`"), std::string::npos) << lines[i + 2];
  }
}

// The README's op table is generated from the schema (scripts/update-readme-ops.sh): it must
// be exactly what `pixflow info --markdown` prints now.
TEST(CliInfo, ReadmeOpTableIsTheOutputOfInfoMarkdown) {
  const auto r = run_cli({"info", "--markdown"});
  ASSERT_EQ(r.code, 0) << show(r);
  const std::string readme = slurp(fs::path(PIXFLOW_SOURCE_DIR) / "README.md");
  const std::string begin = "<!-- ops:begin -->\n", end = "<!-- ops:end -->";
  const auto a = readme.find(begin), b = readme.find(end);
  ASSERT_NE(a, std::string::npos) << "README.md has no " << begin;
  ASSERT_NE(b, std::string::npos) << "README.md has no " << end;
  EXPECT_EQ(readme.substr(a + begin.size(), b - a - begin.size()), r.out)
      << "README.md's op table is stale: run scripts/update-readme-ops.sh";
}

// ---- usage errors --------------------------------------------------------------------------

struct UsageCase {
  std::vector<std::string> args;
  std::string culprit;  // must appear in the one stderr line
};

TEST(CliUsage, EveryUsageErrorExits2WithOneStderrLineNamingTheCulprit) {
  TempDir t;
  const std::string in = t / "in.pgm", out = t / "out.pgm", dir = t / "dir", file = t / "file.pgm";
  write_pnm(in, random_u8(5, 4, 1, 0xc1));
  write_pnm(file, random_u8(5, 4, 1, 0xc2));
  fs::create_directory(dir);
  write_pnm(t / "dir/a.pgm", random_u8(5, 4, 1, 0xc3));
  std::vector<UsageCase> cases = {
      {{}, "subcommand"},
      {{"frobnicate"}, "frobnicate"},
      {{"run"}, "PIPELINE"},
      {{"run", "transpose"}, "INPUT"},
      {{"run", "transpose", in}, "--output"},
      {{"run", "transpose", in, "-o", out, "--bogus"}, "--bogus"},
      {{"run", "transpose", in, "-o", out, "surplus"}, "surplus"},
      {{"run", "nosuchop", in, "-o", out}, "nosuchop"},
      {{"run", "transpose k=3", in, "-o", out}, "'k'"},
      {{"run", "transpose | ", in, "-o", out}, "stage 2"},
      {{"run", " | ", in, "-o", out}, "stage 1"},
      {{"run", "transpose", t / "missing.png", "-o", out}, "missing.png"},
      {{"run", "transpose", t / "nothing*.pgm", "-o", dir}, "matches no file"},
      {{"run", "transpose", in, "-o", out, "--quality", "0"}, "--quality"},
      {{"run", "transpose", in, "-o", out, "--quality", "101"}, "--quality"},
      {{"run", "transpose", in, "-o", out, "--compression", "10"}, "--compression"},
      {{"run", "transpose", in, "-o", out, "--format", "gif"}, "gif"},
      {{"run", "transpose", in, "-o", out, "--format", "png"}, "--format"},
      {{"run", "transpose", in, "-o", "-"}, "--format"},
      {{"run", "transpose", in, "-o", "-", "--format", "png", "--progress=json"}, "json"},
      {{"run", "transpose", in, file, "-o", "-", "--format", "png"}, "several inputs"},
      {{"run", "transpose", in, "-", "-o", dir}, "only INPUT"},
      {{"run", "transpose", in, "-o", t / "{bogus}.png"}, "{bogus}"},
      {{"run", "transpose", in, file, "-o", t / "o.png"}, "several inputs"},
      {{"run", "transpose", in, "-o", out, "--jobs", "0"}, "--jobs"},
      {{"convert", in}, "OUTPUT"},
      {{"run", "transpose", in, "-o", out, "--backend", "metal"}, "metal"},
      {{"run", "transpose", in, "-o", out, "--progress=fancy"}, "fancy"},
      {{"run", "transpose", in, "-o", out, "--device=-1"}, "--device"},
      {{"run", "transpose", in, "-o", out, "--device", "abc"}, "abc"},
      {{"run", "transpose", in, "-o", out, "--device", "99"}, "99"},
      {{"run", "transpose", in, "-o", out, "--max-side", "0"}, "--max-side"},
      {{"run", "transpose", in, "-o", t / "out.xyz"}, "out.xyz"},
      {{"run", "transpose", dir, "-o", file}, file},
      {{"run", "transpose", dir, "-o", dir}, dir},
      {{"info", "--bogus"}, "--bogus"},
      {{"demo", "--bogus"}, "--bogus"},
  };
  // Parameter errors need ops that take parameters; they join the table once registered.
  if (have_ops({"median"})) {
    cases.push_back({{"run", "median k=4", in, "-o", out}, "k "});
    cases.push_back({{"run", "median k=3 border=bogus", in, "-o", out}, "bogus"});
    cases.push_back({{"run", "median k=3 k=5", in, "-o", out}, "'k'"});
    cases.push_back({{"run", "median k", in, "-o", out}, "'k'"});
    cases.push_back({{"run", "transpose | median kw=x", in, "-o", out}, "kw"});
  } else {
    std::printf("[ NOTE ] median is not registered yet: its parameter rows are not in the table\n");
  }
  if (have_ops({"sobel"})) cases.push_back({{"run", "sobel dx=1 dy=0 to=u9", in, "-o", out}, "u9"});
  for (const auto& c : cases) {
    SCOPED_TRACE(describe(c.args));
    const auto r = run_cli(c.args);
    EXPECT_EQ(r.code, 2) << show(r);
    const auto lines = lines_of(r.err);
    ASSERT_EQ(lines.size(), 1u) << show(r);
    EXPECT_EQ(lines[0].rfind("pixflow: ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(c.culprit), std::string::npos)
        << "'" << c.culprit << "' not in: " << lines[0];
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(t / "out.xyz"));
  }
}

// ---- single runs ---------------------------------------------------------------------------

TEST(CliRun, PipelineOutputEqualsTheApiOnTheSameFile) {
  TempDir t;
  {  // the bundled PNG photo, u8x3
    const std::string out = t / "astronaut_t.png";
    const auto r = run_cli({"run", "transpose", kAstronaut, "-o", out, "--backend", "cpu"});
    ASSERT_EQ(r.code, 0) << show(r);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "");
    const Image want = transposed(read_image(kAstronaut));
    EXPECT_EQ(compare(read_image(out), want), "");
  }
  {  // odd-sized PPM, a three-stage pipeline, default (auto) backend
    const std::string in = t / "odd.ppm", out = t / "odd_out.ppm";
    write_pnm(in, random_u8(17, 13, 3, 0xc4));
    const auto r = run_cli({"run", "transpose | transpose | transpose", in, "-o", out});
    ASSERT_EQ(r.code, 0) << show(r);
    EXPECT_EQ(compare(read_image(out), transposed(read_image(in))), "");
  }
  if (!have_ops({"gray", "median", "sobel", "convert"})) {
    std::printf(
        "[ NOTE ] gray/median/sobel/convert not registered yet: the filter pipeline case "
        "waits for them\n");
    return;
  }
  {  // a real filter pipeline, compared with direct calls of the public API
    const std::string out = t / "edges.png";
    const auto r = run_cli({"run", "gray | median k=5 | sobel dx=1 dy=0 | convert to=u8 abs=1",
                            kAstronaut, "-o", out, "--backend", "cpu"});
    ASSERT_EQ(r.code, 0) << show(r);
    const Image src = read_image(kAstronaut);
    const std::int64_t w = src.width(), h = src.height();
    Image g(w, h, {Depth::u8, 1}), m(w, h, {Depth::u8, 1}), d(w, h, {Depth::s16, 1}),
        want(w, h, {Depth::u8, 1});
    gray(src, g);
    MedianParams mp;
    mp.kw = mp.kh = 5;
    median(g, m, mp);
    SobelParams sp;
    sp.dx = 1;
    sp.dy = 0;
    sobel(m, d, sp);
    ConvertParams cp;
    cp.to = Depth::u8;
    cp.abs = true;
    convert(d, want, cp);
    EXPECT_EQ(compare(read_image(out), want), "");
  }
}

TEST(CliRun, ThreadsOptionGivesTheSameBytesAtOneThreadAndAtAll) {
  TempDir t;
  const std::string one = t / "one.png", all = t / "all.png", ref = t / "ref.png";
  const std::string pipe = "gaussian sigma=2 | median k=5";
  auto r = run_cli({"run", pipe, kAstronaut, "-o", one, "--backend", "cpu", "--threads", "1"});
  ASSERT_EQ(r.code, 0) << show(r);
  r = run_cli({"run", pipe, kAstronaut, "-o", all, "--backend", "cpu", "--threads", "0"});
  ASSERT_EQ(r.code, 0) << show(r);
  r = run_cli({"run", pipe, kAstronaut, "-o", ref, "--backend", "ref"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(compare(read_image(one), read_image(ref)), "");
  EXPECT_EQ(compare(read_image(all), read_image(ref)), "");
  r = run_cli({"run", pipe, kAstronaut, "-o", t / "bad.png", "--threads", "-2"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_NE(r.err.find("--threads"), std::string::npos) << show(r);
  EXPECT_FALSE(fs::exists(t / "bad.png"));
}

// A crop outside the image (or a pad too large for it) is known from the header: bad usage,
// exit 2, nothing written (issue 13).
TEST(CliRun, CropOutsideTheImageIsBadUsageAndWritesNothing) {
  TempDir t;
  auto r = run_cli({"run", "flip | crop x=500 y=0 w=100 h=10", kAstronaut, "-o", t / "bad.png"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_NE(r.err.find("crop: x + w (500 + 100 = 600) must be <= the image width 512"),
            std::string::npos)
      << show(r);
  EXPECT_FALSE(fs::exists(t / "bad.png"));
  r = run_cli({"run", "crop x=500 y=0 w=12 h=10 | rotate", kAstronaut, "-o", t / "ok.png"});
  ASSERT_EQ(r.code, 0) << show(r);
  const Image ok = read_image(t / "ok.png");
  EXPECT_EQ(ok.width(), 10);
  EXPECT_EQ(ok.height(), 12);
}

TEST(CliRun, OpenclBackendWritesWhatTheCpuBackendWrites) {
  TempDir t;
  const std::string in = t / "in.ppm";
  write_pnm(in, random_u8(37, 23, 3, 0xc6));
  const std::string pipe = "gray | threshold t=100 | transpose";
  auto r = run_cli({"run", pipe, in, "-o", t / "cpu.pgm", "--backend", "cpu"});
  ASSERT_EQ(r.code, 0) << show(r);
  r = run_cli({"run", pipe, in, "-o", t / "ocl.pgm", "--backend", "opencl"});
  if (device_count(Location::Kind::opencl) == 0) {
    EXPECT_EQ(r.code, 1) << show(r);
    EXPECT_NE(r.err.find("opencl"), std::string::npos) << show(r);
    EXPECT_FALSE(fs::exists(t / "ocl.pgm"));
    GTEST_SKIP() << "no OpenCL device: checked the error only";
  }
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(compare(read_image(t / "ocl.pgm"), read_image(t / "cpu.pgm")), "");
  r = run_cli({"run", pipe, in, "-o", t / "bad.pgm", "--backend", "opencl", "--device", "99"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_NE(r.err.find("OpenCL device"), std::string::npos) << show(r);
  EXPECT_FALSE(fs::exists(t / "bad.pgm"));
  // P:D names device D of platform P (0:0 exists wherever a device does).
  r = run_cli({"run", pipe, in, "-o", t / "pd.pgm", "--backend", "opencl", "--device", "0:0"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(compare(read_image(t / "pd.pgm"), read_image(t / "cpu.pgm")), "");
  for (const char* bad : {"7:0", "0:9", "0:", ":0", "a:b"}) {
    r = run_cli({"run", pipe, in, "-o", t / "bad.pgm", "--backend", "opencl", "--device", bad});
    EXPECT_EQ(r.code, 2) << bad << " " << show(r);
    EXPECT_NE(r.err.find("--device"), std::string::npos) << show(r);
    EXPECT_FALSE(fs::exists(t / "bad.pgm"));
  }
  r = run_cli({"run", pipe, in, "-o", t / "bad.pgm", "--backend", "cpu", "--device", "0:0"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_NE(r.err.find("OpenCL"), std::string::npos) << show(r);
}

TEST(CliRun, OutputDirectoryForOneFileTakesTheInputsName) {
  TempDir t;
  const std::string in = t / "one.pgm";
  write_pnm(in, random_u8(6, 9, 1, 0xc5));
  fs::create_directory(t / "outdir");
  const auto r = run_cli({"run", "transpose", in, "-o", t / "outdir"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(compare(read_image(t / "outdir/one.pgm"), transposed(read_image(in))), "");
}

TEST(CliRun, FailedRunExits1AndLeavesNoOutputAndNoTempFile) {
  TempDir t;
  write_corrupt_png(t / "corrupt.png");
  write_pnm(t / "big.pgm", random_u8(17, 13, 1, 0xc6));
  struct Case {
    std::vector<std::string> args;
    std::map<std::string, std::string> env;
    std::string output, culprit;
  };
  std::vector<Case> cases = {
      // corrupt input
      {{"run", "transpose", t / "corrupt.png", "-o", t / "o1.png"}, {}, "o1.png", "corrupt.png"},
      // decoder limits from the environment and from the command line
      {{"run", "transpose", t / "big.pgm", "-o", t / "o4.pgm"},
       {{"PIXFLOW_MAX_SIDE", "16"}},
       "o4.pgm",
       ""},
      {{"run", "transpose", t / "big.pgm", "-o", t / "o5.pgm", "--max-pixels", "100"},
       {},
       "o5.pgm",
       ""},
  };
  if (device_count(Location::Kind::opencl) == 0)  // the backend without a device
    cases.push_back({{"run", "transpose", t / "big.pgm", "-o", t / "o6.pgm", "--backend", "opencl"},
                     {},
                     "o6.pgm",
                     "opencl"});
  if (cuda_device_count() == 0)
    cases.push_back({{"run", "transpose", t / "big.pgm", "-o", t / "o7.pgm", "--backend", "cuda"},
                     {},
                     "o7.pgm",
                     "cuda"});
  if (have_ops({"median"}))  // unsupported depth at run time (s16)
  {
    auto rng = make_rng(0xc8);
    write_npy(t / "s16.npy", random_image(7, 5, {Depth::s16, 1}, rng, true).view);
    cases.push_back(
        {{"run", "median k=3", t / "s16.npy", "-o", t / "o8.npy"}, {}, "o8.npy", "median"});
  }
  const std::set<std::string> before = names_in(t.path());
  for (const auto& c : cases) {
    SCOPED_TRACE(describe(c.args));
    const auto r = run_cli(c.args, c.env);
    EXPECT_EQ(r.code, 1) << show(r);
    const auto lines = lines_of(r.err);
    ASSERT_EQ(lines.size(), 1u) << show(r);
    EXPECT_EQ(lines[0].rfind("pixflow: ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(c.culprit), std::string::npos) << lines[0];
    EXPECT_FALSE(fs::exists(t / c.output));
    EXPECT_EQ(names_in(t.path()), before) << "a failed run left a file behind";
  }
}

TEST(CliRun, CudaBackendMatchesCpuOrFailsWithOneLine) {
  if (cuda_device_count() == 0)
    GTEST_SKIP() << "no CUDA device: --backend cuda is covered as a "
                    "failure (exit 1) in FailedRunExits1...";
  TempDir t;
  const std::string in = t / "in.ppm";
  write_pnm(in, random_u8(33, 21, 3, 0xc9));
  const auto r = run_cli({"run", "transpose", in, "-o", t / "gpu.ppm", "--backend", "cuda"});
  if (r.code == 0) {
    EXPECT_EQ(compare(read_image(t / "gpu.ppm"), transposed(read_image(in))), "");
  } else {  // no CUDA kernel yet: one line naming the op, no output
    EXPECT_EQ(r.code, 1) << show(r);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << show(r);
    EXPECT_NE(r.err.find("transpose"), std::string::npos) << show(r);
    EXPECT_FALSE(fs::exists(t / "gpu.ppm"));
  }
}

// ---- batch ---------------------------------------------------------------------------------

// in/: a.pgm, b_corrupt.png, c.ppm, notes.txt (ignored), sub/ (not recursed).
struct BatchDir {
  TempDir t;
  std::string in = t / "in", out = t / "out";
  BatchDir() {
    fs::create_directories(in + "/sub");
    write_pnm(in + "/a.pgm", random_u8(9, 4, 1, 0xca));
    write_corrupt_png(in + "/b_corrupt.png");
    write_pnm(in + "/c.ppm", random_u8(3, 11, 3, 0xcb));
    write_pnm(in + "/sub/d.pgm", random_u8(2, 2, 1, 0xcc));
    std::ofstream(in + "/notes.txt") << "not an image";
  }
};

TEST(CliBatch, KeepGoingWritesTheGoodOnesAndExits3WithASummaryNamingTheBadFile) {
  BatchDir b;
  const auto r = run_cli({"run", "transpose", b.in, "-o", b.out, "--keep-going"});
  EXPECT_EQ(r.code, 3) << show(r);
  EXPECT_EQ(names_in(b.out), (std::set<std::string>{"a.pgm", "c.ppm"}));
  EXPECT_EQ(compare(read_image(b.out + "/a.pgm"), transposed(read_image(b.in + "/a.pgm"))), "");
  EXPECT_EQ(compare(read_image(b.out + "/c.ppm"), transposed(read_image(b.in + "/c.ppm"))), "");
  const auto lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 2u) << show(r);
  EXPECT_EQ(lines[0], "pixflow: 1 of 3 items failed:");
  EXPECT_NE(lines[1].find("b_corrupt.png"), std::string::npos) << lines[1];
  EXPECT_EQ(r.out, "");
}

TEST(CliBatch, WithoutKeepGoingTheFirstFailureStopsTheBatchWithExit1) {
  BatchDir b;
  const auto r = run_cli({"run", "transpose", b.in, "-o", b.out, "--backend", "cpu"});
  EXPECT_EQ(r.code, 1) << show(r);
  const auto lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << show(r);
  EXPECT_NE(lines[0].find("b_corrupt.png"), std::string::npos) << lines[0];
  // Items run in name order, one at a time on the CPU: a was written, c never started.
  EXPECT_EQ(names_in(b.out), (std::set<std::string>{"a.pgm"}));
}

TEST(CliBatch, AllGoodItemsExit0AndCreateTheOutputDirectory) {
  BatchDir b;
  fs::remove(b.in + "/b_corrupt.png");
  const std::string out = b.out + "/nested/deeper";
  const auto r = run_cli({"run", "transpose", b.in, "-o", out, "--progress=none"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(names_in(out), (std::set<std::string>{"a.pgm", "c.ppm"}));
}

TEST(CliBatch, ProgressJsonGivesOneParseableLinePerItemOnStdout) {
  BatchDir b;
  const auto r =
      run_cli({"run", "transpose", b.in, "-o", b.out, "--keep-going", "--progress=json"});
  EXPECT_EQ(r.code, 3) << show(r);
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << show(r);
  const char* names[] = {"a.pgm", "b_corrupt.png", "c.ppm"};
  std::set<std::size_t> seen;
  for (const auto& line : lines) {
    SCOPED_TRACE(line);
    std::map<std::string, JsonValue> obj;
    ASSERT_TRUE(parse_flat_json(line, obj));
    for (const char* key : {"index", "total", "input", "output", "status", "error", "ms"})
      ASSERT_TRUE(obj.count(key)) << key;
    EXPECT_EQ(obj.size(), 7u);
    EXPECT_FALSE(obj["index"].is_string);
    EXPECT_FALSE(obj["ms"].is_string);
    EXPECT_GE(std::stod(obj["ms"].text), 0.0);
    EXPECT_EQ(obj["total"].text, "3");
    const std::size_t i = std::stoul(obj["index"].text);
    ASSERT_LT(i, 3u);
    seen.insert(i);
    EXPECT_EQ(obj["input"].text, b.in + "/" + names[i]);
    EXPECT_EQ(obj["output"].text, b.out + "/" + names[i]);
    if (i == 1) {
      EXPECT_EQ(obj["status"].text, "error");
      EXPECT_NE(obj["error"].text, "");
    } else {
      EXPECT_EQ(obj["status"].text, "ok");
      EXPECT_EQ(obj["error"].text, "");
    }
  }
  EXPECT_EQ(seen.size(), 3u);
}

TEST(CliBatch, ProgressBarGoesToStderrOnlyWhenAsked) {
  BatchDir b;
  fs::remove(b.in + "/b_corrupt.png");
  // auto: stderr is a file here, so no bar
  auto r = run_cli({"run", "transpose", b.in, "-o", b.out});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(r.err, "");
  r = run_cli({"run", "transpose", b.in, "-o", b.out, "--progress=bar"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.err.find("2/2"), std::string::npos) << show(r);
  EXPECT_EQ(r.out, "");
}

// ---- demo ----------------------------------------------------------------------------------

TEST(CliDemo, WritesItsFivePngsFromTheBundledPhoto) {
  TempDir t;
  const std::string dir = t / "demo_out";
  const auto r = run_cli({"demo", "-o", dir});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(names_in(dir), (std::set<std::string>{"original.png", "noisy.png", "denoised.png",
                                                  "edges.png", "contact_sheet.png"}));
  const Image original = read_image(dir + "/original.png");
  EXPECT_EQ(compare(original, read_image(kAstronaut)), "");
  const Image noisy = read_image(dir + "/noisy.png"), edges = read_image(dir + "/edges.png"),
              sheet = read_image(dir + "/contact_sheet.png");
  EXPECT_EQ(edges.format(), (Format{Depth::u8, 1}));
  EXPECT_EQ(sheet.format(), (Format{Depth::u8, 3}));
  EXPECT_EQ(sheet.width(), 4 * original.width() + 3 * 8);
  EXPECT_EQ(sheet.height(), original.height());
  // about 5% of the pixels were replaced by black or white
  std::int64_t changed = 0;
  for (std::int64_t y = 0; y < original.height(); ++y)
    for (std::int64_t x = 0; x < original.width() * 3; ++x)
      changed += original.row<std::uint8_t>(y)[x] != noisy.row<std::uint8_t>(y)[x];
  const double frac = double(changed) / double(original.width() * original.height() * 3);
  EXPECT_GT(frac, 0.03);
  EXPECT_LT(frac, 0.06);
  for (const char* f :
       {"original.png", "noisy.png", "denoised.png", "edges.png", "contact_sheet.png"})
    EXPECT_NE(r.out.find(f), std::string::npos) << f << " not reported\n" << r.out;
}

// ---- nothing lost, nothing left behind -------------------------------------------------------

/// The header of an NPY of H x W x C u8/s16 samples and nothing after it: read_image fails on
/// it ("truncated"), so a command that answers from the header alone did not decode.
void write_npy_header_only(const std::string& path, std::int64_t w, std::int64_t h, Depth d) {
  std::string header = "{'descr': '" + std::string(d == Depth::s16 ? "<i2" : "|u1") +
                       "', 'fortran_order': False, 'shape': (" + std::to_string(h) + ", " +
                       std::to_string(w) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const char len_le[2] = {char(header.size() & 0xff), char(header.size() >> 8)};
  f.write(len_le, 2);
  f << header;
}

TEST(CliSafety, AnOutputThatIsAnInputIsRefusedWithExit2AndTheInputIsKept) {
  TempDir t;
  const std::string a = t / "a.pgm", b = t / "b.pgm";
  write_pnm(a, random_u8(12, 7, 1, 0xd1));
  write_pnm(b, random_u8(12, 7, 1, 0xd2));
  fs::create_directory(t / "x");
  fs::create_hard_link(a, t / "hard.pgm");
  fs::create_symlink(a, t / "soft.pgm");
  const std::string bytes_a = slurp(a), bytes_b = slurp(b);
  const std::vector<std::vector<std::string>> cases = {
      {"run", "median k=3", a, "-o", a},
      {"run", "median k=3", a, "-o", t / "x/../a.pgm"},
      {"run", "median k=3", a, "-o", t.path().string()},  // the input's own folder
      {"run", "median k=3", a, "-o", t / "hard.pgm"},     // a hard link of the input
      {"run", "median k=3", a, "-o", t / "soft.pgm"},     // a symlink to the input
      {"run", "add with=" + b, a, "-o", b},               // an operand file
  };
  const std::set<std::string> before = names_in(t.path());
  for (const auto& args : cases) {
    SCOPED_TRACE(describe(args));
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, 2) << show(r);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << show(r);
    EXPECT_NE(r.err.find("would be overwritten (use --overwrite-input"), std::string::npos)
        << show(r);
    EXPECT_EQ(slurp(a), bytes_a);
    EXPECT_EQ(slurp(b), bytes_b);
    EXPECT_EQ(names_in(t.path()), before);
  }
  // Asked for: the result replaces the input, atomically, after the input was read.
  const Image want = transposed(read_image(a));
  const auto r = run_cli({"run", "transpose", a, "-o", a, "--overwrite-input"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(compare(read_image(a), want), "");
  EXPECT_EQ(names_in(t.path()), before);
}

TEST(CliSafety, BatchRefusesOutputsThatAreInputsUnlessAsked) {
  BatchDir b;
  fs::remove(b.in + "/b_corrupt.png");
  fs::create_directory(b.out);
  fs::create_hard_link(b.in + "/a.pgm", b.out + "/a.pgm");  // out/a.pgm is in/a.pgm
  const std::string bytes = slurp(b.in + "/a.pgm");
  auto r = run_cli({"run", "transpose", b.in, "-o", b.out});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_NE(r.err.find("--overwrite-input"), std::string::npos) << show(r);
  EXPECT_EQ(slurp(b.in + "/a.pgm"), bytes);
  EXPECT_EQ(names_in(b.out), (std::set<std::string>{"a.pgm"}));  // nothing was run
  r = run_cli({"run", "transpose", b.in, "-o", b.in});
  EXPECT_EQ(r.code, 2) << show(r);
  // In place, asked for: every item is read before its own output replaces it.
  const Image want_a = transposed(read_image(b.in + "/a.pgm")),
              want_c = transposed(read_image(b.in + "/c.ppm"));
  r = run_cli({"run", "transpose", b.in, "-o", b.in, "--overwrite-input"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(compare(read_image(b.in + "/a.pgm"), want_a), "");
  EXPECT_EQ(compare(read_image(b.in + "/c.ppm"), want_c), "");
  EXPECT_EQ(names_in(b.in), (std::set<std::string>{"a.pgm", "c.ppm", "notes.txt", "sub"}));
}

TEST(CliSafety, NoClobberKeepsExistingOutputs) {
  BatchDir b;
  fs::remove(b.in + "/b_corrupt.png");
  fs::create_directory(b.out);
  std::ofstream(b.out + "/a.pgm") << "kept";
  auto r = run_cli({"run", "transpose", b.in, "-o", b.out, "--no-clobber", "--progress=json"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(slurp(b.out + "/a.pgm"), "kept");
  EXPECT_EQ(compare(read_image(b.out + "/c.ppm"), transposed(read_image(b.in + "/c.ppm"))), "");
  EXPECT_NE(r.out.find("\"status\":\"skipped\""), std::string::npos) << show(r);
  // One file: nothing is read, the output is kept, exit 0 with a note.
  write_npy_header_only(b.t / "trunc.npy", 50, 40, Depth::u8);
  r = run_cli({"run", "transpose", b.t / "trunc.npy", "-o", b.out + "/a.pgm", "--no-clobber"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_NE(r.err.find("--no-clobber"), std::string::npos) << show(r);
  EXPECT_EQ(slurp(b.out + "/a.pgm"), "kept");
}

// Output problems are found from INPUT's header, before the pixels are decoded: the input
// here is an NPY header without its data, which read_image would refuse as truncated.
TEST(CliSafety, OutputProblemsAreFoundBeforeDecoding) {
  TempDir t;
  const std::string in = t / "big.npy", in16 = t / "big16.npy";
  write_npy_header_only(in, 8000, 8000, Depth::u8);
  write_npy_header_only(in16, 8000, 8000, Depth::s16);
  fs::create_directory(t / "out");
  std::ofstream(t / "file") << "a file, not a folder";
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string says;
  };
  std::vector<Case> cases = {
      {{"run", "convert to=s16", in, "-o", t / "out/o.png"}, 2, "PNG cannot hold s16"},
      {{"run", "median k=3", in16, "-o", t / "out/o.png"}, 1, "median: src depth"},
      {{"run", "convert to=f32", in, "-o", t / "out/o.jpg"}, 2, "JPEG cannot hold"},
      {{"run", "median k=3", in, "-o", t / "missing/o.png"}, 2, "does not exist"},
      {{"run", "median k=3", in, "-o", t / "file/o.png"}, 2, "is not a folder"},
      {{"run", "median k=3", in, "-o", t / ("out/" + std::string(252, 'n') + ".png")},
       2,
       "is 256 bytes"},
      {{"run", "median k=3", t / "out", "-o", t / "file"}, 2, "is a file"},
      {{"run", "median k=3", in, "-o", t / "newdir/"}, 2, "is not an existing folder"},
      {{"run", "median k=3", in, "-o", t / "out/*.png"}, 2, "looks like a glob"},
  };
  if (geteuid() != 0) {  // root writes into read-only folders: nothing to check there
    fs::create_directory(t / "ro");
    fs::permissions(t / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    cases.push_back({{"run", "median k=3", in, "-o", t / "ro/o.png"}, 2, "is not writable"});
  }
  for (const auto& c : cases) {
    SCOPED_TRACE(describe(c.args));
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = run_cli(c.args);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.code, c.code) << show(r);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << show(r);
    EXPECT_NE(r.err.find(c.says), std::string::npos) << show(r);
    EXPECT_EQ(r.err.find("truncated"), std::string::npos) << "it decoded:\n" << show(r);
    EXPECT_LT(s, 5.0) << "an early check took " << s << " s";
    EXPECT_EQ(names_in(t / "out"), std::set<std::string>{});
  }
}

TEST(CliSafety, ALongestValidOutputNameWorks) {
  TempDir t;
  const std::string in = t / "in.pgm";
  write_pnm(in, random_u8(5, 4, 1, 0xd3));
  const std::string name = std::string(251, 'n') + ".pgm";  // 255 bytes, NAME_MAX
  const auto r = run_cli({"run", "transpose", in, "-o", t / name});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(names_in(t.path()), (std::set<std::string>{"in.pgm", name}));
}

TEST(CliSafety, DeviceLimitAndEnvironmentProblemsAreUsageErrors) {
  TempDir t;
  const std::string in = t / "in.pgm";
  write_pnm(in, random_u8(5, 4, 1, 0xd4));
  const int n = cuda_device_count();
  auto r = run_cli({"run", "transpose", in, "-o", t / "o.pgm", "--device", std::to_string(n + 1)});
  EXPECT_EQ(r.code, 2) << show(r);
  r = run_cli({"run", "transpose", in, "-o", t / "o.pgm"}, {{"PIXFLOW_MAX_SIDE", "abc"}});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_NE(r.err.find("PIXFLOW_MAX_SIDE"), std::string::npos) << show(r);
  // A limit's message names what set it: the flag, the variable, or the default.
  r = run_cli({"run", "transpose", in, "-o", t / "o.pgm", "--max-side", "3"});
  EXPECT_EQ(r.code, 1) << show(r);
  EXPECT_NE(r.err.find("--max-side"), std::string::npos) << show(r);
  r = run_cli({"run", "transpose", in, "-o", t / "o.pgm"}, {{"PIXFLOW_MAX_PIXELS", "10"}});
  EXPECT_EQ(r.code, 1) << show(r);
  EXPECT_NE(r.err.find("PIXFLOW_MAX_PIXELS"), std::string::npos) << show(r);
  EXPECT_FALSE(fs::exists(t / "o.pgm"));
}

/// True when every byte sequence of s is well-formed UTF-8.
bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80         ? 1
                          : (c >> 5) == 6  ? 2
                          : (c >> 4) == 14 ? 3
                          : (c >> 3) == 30 ? 4
                                           : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    i += n;
  }
  return true;
}

TEST(CliSafety, OddFileNamesKeepLinesAndJsonIntact) {
  BatchDir b;
  write_corrupt_png(b.in + "/new\nline.png");
  write_corrupt_png(b.in + "/latin\xe9.png");
  const auto r =
      run_cli({"run", "transpose", b.in, "-o", b.out, "--keep-going", "--progress=json"});
  EXPECT_EQ(r.code, 3) << show(r);
  const auto out = lines_of(r.out);
  ASSERT_EQ(out.size(), 5u) << show(r);
  for (const auto& line : out) {
    std::map<std::string, JsonValue> obj;
    EXPECT_TRUE(parse_flat_json(line, obj)) << line;
    EXPECT_TRUE(valid_utf8(line)) << line;
  }
  // The summary: a header line and one line per failed item, names escaped, no path twice.
  const auto err = lines_of(r.err);
  ASSERT_EQ(err.size(), 4u) << show(r);
  EXPECT_EQ(err[0], "pixflow: 3 of 5 items failed:");
  EXPECT_TRUE(valid_utf8(r.err));
  EXPECT_NE(r.err.find("new\\nline.png"), std::string::npos) << show(r);
  EXPECT_NE(r.err.find("latin\\xe9.png"), std::string::npos) << show(r);
  for (std::size_t i = 1; i < err.size(); ++i) {
    const std::size_t first = err[i].find(b.in), second = err[i].find(b.in, first + 1);
    EXPECT_EQ(second, std::string::npos) << "path printed twice: " << err[i];
  }
}

// Ctrl-C in a batch: the items in flight finish, no new one starts, the count of written items
// is reported, exit 128 + SIGINT, and nothing half-written is left.
TEST(CliSafety, SigintStopsABatchCleanly) {
  TempDir t;
  const std::string in = t / "in", out = t / "out";
  fs::create_directories(in);
  for (int i = 0; i < 40; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "/%02d.pgm", i);
    write_pnm(in + name, random_u8(700, 500, 1, 0xd5 + std::uint64_t(i)));
  }
  CliProcess p({"run", "median k=15", in, "-o", out, "--backend", "cpu"});
  // Wait for the first output, then interrupt.
  for (int i = 0; i < 3000 && !(fs::exists(out) && !fs::is_empty(out)); ++i) usleep(2000);
  kill(p.pid(), SIGINT);
  const auto r = p.wait();
  EXPECT_EQ(r.code, 128 + SIGINT) << show(r);
  const auto names = names_in(out);
  EXPECT_LT(names.size(), 40u) << "the batch did not stop";
  for (const auto& n : names) EXPECT_NE(n[0], '.') << "temporary file left: " << n;
  EXPECT_NE(
      r.err.find("interrupted by SIGINT: " + std::to_string(names.size()) + " of 40 items written"),
      std::string::npos)
      << show(r);
  for (const auto& n : names) EXPECT_NO_THROW((void)read_image(out + "/" + n)) << n;
}

// SIGKILL at any moment of a write leaves the old output or the new one and nothing else.
TEST(CliSafety, SigkillDuringAWriteLeavesNoTemporaryFile) {
  TempDir t;
  const std::string in = t / "in.npy";
  {
    auto rng = make_rng(0xd6);
    write_npy(in, random_image(3000, 2000, {Depth::u8, 3}, rng).view);
  }
  fs::create_directory(t / "out");
  std::mt19937_64 rng(0xd7);
  for (int round = 0; round < 6; ++round) {
    CliProcess p({"run", "transpose", in, "-o", t / "out/o.png", "--backend", "cpu"});
    usleep(useconds_t(50000 + rng() % 250000));
    kill(p.pid(), SIGKILL);
    (void)p.wait();
    const auto names = names_in(t / "out");
    EXPECT_TRUE(names.empty() || names == std::set<std::string>{"o.png"}) << "round " << round;
    if (!names.empty()) {
      EXPECT_NO_THROW((void)read_image(t / "out/o.png"));
    }
  }
}

// Peak memory of a run (docs/cli.md, "Memory"): the decoded input, the result and one
// intermediate image, plus a fixed amount for the program and the codecs.
TEST(CliSafety, PeakMemoryOfARunIsBoundedByThreeImages) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's shadow memory and quarantine inflate the peak";
#endif
  TempDir t;
  const std::string in = t / "in.npy";
  const std::int64_t w = 3000, h = 2500;  // u8x3: 22.5 MB decoded
  {
    auto rng = make_rng(0xd8);
    write_npy(in, random_image(w, h, {Depth::u8, 3}, rng).view);
  }
  const double image_mb = double(w * h * 3) / (1 << 20);
  const double fixed_mb = 40;  // program, libraries, thread stacks
  // Linux reports a child's ru_maxrss as at least this process's own peak when it forked
  // (the child's first memory map is a copy of ours, counters included, and exec keeps its
  // high-water mark): the bound can only be checked from a process whose own peak is below
  // it, as under ctest (one test per process), not late in a run of the whole binary.
  struct rusage self {};
  getrusage(RUSAGE_SELF, &self);
  if (double(self.ru_maxrss) / 1024 >= 3 * image_mb + fixed_mb)
    GTEST_SKIP() << "this process already peaked at " << double(self.ru_maxrss) / 1024
                 << " MB, which a child's ru_maxrss includes; run the test on its own";
  CliProcess p({"run", "box k=3 | gaussian sigma=1 | box k=5 | transpose", in, "-o", t / "o.npy",
                "--backend", "cpu"});
  struct rusage ru {};
  const auto r = p.wait(&ru);
  ASSERT_EQ(r.code, 0) << show(r);
  const double peak_mb = double(ru.ru_maxrss) / 1024;  // ru_maxrss is in KiB on Linux
  EXPECT_LE(peak_mb, 3 * image_mb + fixed_mb)
      << "peak " << peak_mb << " MB for an image of " << image_mb << " MB";
  RecordProperty("peak_mb", std::to_string(peak_mb));
}

TEST(CliSafety, OperandFilesAreDecodedOnceAndShared) {
  TempDir t;
  const std::string f = t / "op.pgm";
  write_pnm(f, random_u8(20, 10, 1, 0xd9));
  std::string text = "add with=" + f;
  for (int i = 0; i < 99; ++i) text += " | add with=" + (i % 2 ? f : t / "x/../op.pgm");
  fs::create_directory(t / "x");
  const Pipeline p = Pipeline::parse(text);
  EXPECT_EQ(p.size(), 100u);
  EXPECT_EQ(p.operand_files(), std::vector<std::string>{f});
}

// The binary holds no path of the build tree (`__FILE__` is mapped relative to the source
// tree) and runs its demo from anywhere: a copy in another folder, started elsewhere.
TEST(CliSafety, TheBinaryHoldsNoBuildPathAndItsDemoRunsWhenMoved) {
#ifdef NDEBUG  // a Debug build's DWARF names its sources by design; the Release binary must not
  const std::string bin = slurp(PIXFLOW_CLI_PATH);
  ASSERT_FALSE(bin.empty());
  EXPECT_EQ(bin.find(std::string(PIXFLOW_SOURCE_DIR) + "/"), std::string::npos)
      << "the binary holds the source path " << PIXFLOW_SOURCE_DIR;
#endif
  TempDir t;
  const std::string moved = t / "pixflow";
  fs::copy_file(PIXFLOW_CLI_PATH, moved);
  fs::permissions(moved, fs::perms::owner_all);
  const std::string cmd = "cd '" + t.path().string() + "' && ./pixflow demo -o out > log 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(t / "log");
  EXPECT_EQ(compare(read_image(t / "out/original.png"), read_image(kAstronaut)), "");
}

// ---- conversion, write options, batches, standard streams (issue 13) ------------------------

TEST(CliConvert, AnEmptyPipelineAndConvertWriteTheInputInAnotherFormat) {
  TempDir t;
  const Image img = random_u8(13, 9, 3, 0x1301);
  write_pnm(t / "in.ppm", img);
  auto r = run_cli({"convert", t / "in.ppm", t / "a.png"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(compare(read_image(t / "a.png"), img), "");
  r = run_cli({"run", "", t / "in.ppm", "-o", t / "b.npy"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(compare(read_image(t / "b.npy"), img), "");
  if (have_webp()) {
    r = run_cli({"convert", t / "b.npy", t / "b.webp", "--lossless"});
    ASSERT_EQ(r.code, 0) << show(r);
    EXPECT_EQ(compare(read_image(t / "b.webp"), img), "");
  }
  // RGBA as JPEG: exit 2, says what to do, writes nothing.
  write_image(t / "rgba.png", random_u8(5, 4, 4, 0x1302));
  r = run_cli({"convert", t / "rgba.png", t / "c.jpg"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_NE(r.err.find("drop the alpha channel first"), std::string::npos) << show(r);
  EXPECT_FALSE(fs::exists(t / "c.jpg"));
}

TEST(CliConvert, QualityAndCompressionReachTheEncoders) {
  TempDir t;
  const Image img = random_u8(48, 32, 3, 0x1303);
  write_pnm(t / "in.ppm", img);
  for (const char* q : {"30", "95"}) {
    const auto r =
        run_cli({"convert", t / "in.ppm", t / (std::string("q") + q + ".jpg"), "--quality", q});
    ASSERT_EQ(r.code, 0) << show(r);
    WriteOptions o;
    o.jpeg_quality = std::atoi(q);
    const std::vector<std::byte> want = encode_image(img, "jpg", o);
    EXPECT_EQ(slurp(t / (std::string("q") + q + ".jpg")),
              std::string(reinterpret_cast<const char*>(want.data()), want.size()));
  }
  // The default stays 95.
  ASSERT_EQ(run_cli({"convert", t / "in.ppm", t / "d.jpg"}).code, 0);
  EXPECT_EQ(slurp(t / "d.jpg"), slurp(t / "q95.jpg"));
  ASSERT_EQ(run_cli({"convert", t / "in.ppm", t / "c0.png", "--compression", "0"}).code, 0);
  ASSERT_EQ(run_cli({"convert", t / "in.ppm", t / "c9.png", "--compression", "9"}).code, 0);
  EXPECT_GT(fs::file_size(t / "c0.png"), std::uintmax_t(48 * 32 * 3));  // stored blocks
  EXPECT_EQ(compare(read_image(t / "c0.png"), img), "");
  EXPECT_EQ(compare(read_image(t / "c9.png"), img), "");
}

TEST(CliBatch, InputsGlobsFormatsPatternsAndRecursion) {
  TempDir t;
  fs::create_directories(t / "in/sub/deep");
  const Image a = random_u8(6, 5, 3, 0x1304), b = random_u8(7, 3, 1, 0x1305),
              c = random_u8(4, 4, 3, 0x1306);
  write_pnm(t / "in/a.ppm", a);
  write_pnm(t / "in/sub/b.pgm", b);
  write_pnm(t / "in/sub/deep/c.ppm", c);
  write_pnm(t / "in/sub/a.pgm", b);  // the same stem as in/a.ppm
  write_pnm(t / "x.ppm", c);
  // Several inputs and a quoted glob, a folder OUTPUT with --format: new extensions.
  auto r = run_cli({"convert", t / "x.ppm", t / "in/*.ppm", "-o", t / "o1/", "--format", "png"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(names_in(t / "o1"), (std::set<std::string>{"a.png", "x.png"}));
  EXPECT_EQ(compare(read_image(t / "o1/a.png"), a), "");
  // --recursive keeps the sub-folders; --jobs 2 gives the same files.
  r = run_cli({"run", "transpose", t / "in", "-o", t / "o2", "--recursive", "--format", "npy",
               "--jobs", "2"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(compare(read_image(t / "o2/sub/deep/c.npy"), transposed(c)), "");
  EXPECT_EQ(compare(read_image(t / "o2/sub/b.npy"), transposed(b)), "");
  EXPECT_EQ(compare(read_image(t / "o2/a.npy"), transposed(a)), "");
  // A pattern: {dir}{stem}, the folders made as needed.
  r = run_cli({"convert", t / "in", "-r", "-o", t / "o3/{dir}{stem}-{ext}.png"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_EQ(compare(read_image(t / "o3/sub/b-pgm.png"), b), "");
  EXPECT_EQ(compare(read_image(t / "o3/sub/deep/c-ppm.png"), c), "");
  // Collisions: refused (exit 2) before anything is written.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"convert", t / "in", "-r", "-o", t / "o4/{stem}.png"},
        std::vector<std::string>{"convert", t / "in/a.ppm", t / "in/sub/a.pgm", "-o", t / "o4/",
                                 "--format", "png"}}) {
    SCOPED_TRACE(describe(args));
    r = run_cli(args);
    EXPECT_EQ(r.code, 2) << show(r);
    EXPECT_NE(r.err.find("would both be written"), std::string::npos) << show(r);
    EXPECT_FALSE(fs::exists(t / "o4"));
  }
}

TEST(CliConvert, ProfileAndResolutionAreCarriedUnlessStripped) {
  TempDir t;
  WriteOptions o;
  o.metadata.icc.resize(400);  // a header libpng accepts, then bytes that do not deflate
  for (std::size_t i = 0; i < 400; ++i) o.metadata.icc[i] = std::byte((i * 2654435761u) >> 13);
  const char* hdr = "\0\0\x01\x90\0\0\0\0\x02\x10\0\0mntrRGB XYZ ";  // 400 bytes, RGB
  std::memcpy(o.metadata.icc.data(), hdr, 24);
  std::memcpy(o.metadata.icc.data() + 36, "acsp", 4);
  std::memset(o.metadata.icc.data() + 64, 0, 68);
  const char d50[] = "\0\0\xf6\xd6\0\x01\0\0\0\0\xd3\x2d";
  std::memcpy(o.metadata.icc.data() + 68, d50, 12);
  o.metadata.dpi_x = o.metadata.dpi_y = 300;
  // The source is TIFF where libtiff is built in (its ICC tag and resolution), else PNG.
  const std::string in = t / (have_tiff() ? "in.tif" : "in.png");
  write_image(in, random_u8(8, 6, 3, 0x1309), o);
  auto meta_of = [](const std::string& path) {
    ImageMetadata m;
    (void)read_image(path, IoLimits{}, &m);
    return m;
  };
  // PNG keeps the resolution as whole pixels per metre (300 dpi reads back as 299.9994).
  auto expect_meta = [&](const ImageMetadata& got) {
    EXPECT_EQ(got.icc, o.metadata.icc);
    EXPECT_NEAR(got.dpi_x, o.metadata.dpi_x, 0.01);
    EXPECT_NEAR(got.dpi_y, o.metadata.dpi_y, 0.01);
  };
  {
    expect_meta(meta_of(in));
    ASSERT_EQ(run_cli({"convert", in, t / "a.jpg"}).code, 0);
    expect_meta(meta_of(t / "a.jpg"));
    ASSERT_EQ(run_cli({"convert", t / "a.jpg", t / "b.png"}).code, 0);
    const ImageMetadata b = meta_of(t / "b.png");
    EXPECT_EQ(b.icc, o.metadata.icc);
    EXPECT_NEAR(b.dpi_x, 300, 0.01);
    ASSERT_EQ(run_cli({"convert", t / "a.jpg", t / "c.png", "--strip"}).code, 0);
    EXPECT_EQ(meta_of(t / "c.png"), ImageMetadata{});
    if (have_ops({"gray"})) {  // the profile describes RGB: a gray result leaves it out
      ASSERT_EQ(run_cli({"run", "gray", t / "a.jpg", "-o", t / "g.png"}).code, 0);
      const ImageMetadata g = meta_of(t / "g.png");
      EXPECT_TRUE(g.icc.empty());
      EXPECT_NEAR(g.dpi_x, 300, 0.01);
    }
  }
}

TEST(CliConvert, StandardInputAndOutputAreBinarySafe) {
  TempDir t;
  const Image img = random_u8(19, 11, 3, 0x1307);
  write_image(t / "in.png", img);
  // stdin (format from the bytes) to stdout (--format): the encoder's bytes exactly.
  auto r = CliProcess({"convert", "-", "-", "--format", "ppm"}, {}, t / "in.png").wait();
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::byte> want = encode_image(img, "ppm");
  EXPECT_EQ(r.out, std::string(reinterpret_cast<const char*>(want.data()), want.size()));
  r = CliProcess({"run", "transpose", "-", "-o", t / "o.png"}, {}, t / "in.png").wait();
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(compare(read_image(t / "o.png"), transposed(img)), "");
  // A result stdout's format cannot hold: exit 2, nothing on stdout.
  write_image(t / "rgba.png", random_u8(5, 4, 4, 0x1308));
  r = run_cli({"convert", t / "rgba.png", "-", "--format", "jpg"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace pixflow::test
