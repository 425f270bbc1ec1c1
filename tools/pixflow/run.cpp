// `pixflow run`: one image, or every image of a directory (batch), through a pipeline on
// the CPU or on CUDA devices, with progress reporting and the exit codes of docs/contract.md §5.
#include <glob.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pixflow/pixflow.hpp"
#include "tools/pixflow/cli.hpp"

namespace pixflow::cli {

namespace fs = std::filesystem;

namespace {

// ---- options -----------------------------------------------------------------------------

IoLimits limits_from(const RunOptions& opt) {
  IoLimits l;
  try {
    l = IoLimits::from_env();
  } catch (const Error& e) {  // a malformed PIXFLOW_MAX_* is bad usage, as a bad --max-*
    if (e.status() == Status::invalid_argument) throw UsageError(e.what());
    throw;
  }
  auto set = [](const std::optional<std::int64_t>& v, const char* flag, std::int64_t& dst,
                std::string& from) {
    if (!v) return;
    if (*v <= 0)
      throw UsageError(std::string(flag) + " must be > 0 (got " + std::to_string(*v) + ")");
    dst = *v;
    from = flag;  // a limit_exceeded message names the flag that set the limit
  };
  set(opt.max_side, "--max-side", l.max_side, l.max_side_from);
  set(opt.max_pixels, "--max-pixels", l.max_pixels, l.max_pixels_from);
  set(opt.max_bytes, "--max-bytes", l.max_bytes, l.max_bytes_from);
  return l;
}

// A bad pipeline (syntax, unknown op or key, out-of-range value) is bad usage; anything
// else that parsing can hit (e.g. an unreadable with=FILE) is a failed operation.
Pipeline parse_pipeline(const std::string& text, const IoLimits& limits) {
  try {
    return Pipeline::parse(text, limits);
  } catch (const Error& e) {
    if (e.status() == Status::invalid_argument) throw UsageError(e.what());
    throw;
  }
}

// Where the pipeline runs: the host (CPU backend) or a list of CUDA or OpenCL devices.
struct Target {
  Backend backend = Backend::cpu;
  std::optional<Error> unavailable;  // thrown after the usage checks (a failure, exit 1)
  Location::Kind kind = Location::Kind::host;
  std::vector<int> devices;  // device numbers of `kind`; empty for the CPU
  int threads = 0;           // --threads: the host backends' thread cap (0 = all)
  Context context() const {
    Context c;
    c.backend = backend;
    c.threads = threads;
    return c;
  }
  Location location(int worker) const {
    return devices.empty() ? Location::host() : Location{kind, devices[std::size_t(worker)]};
  }
};

// --device: a number, or P:D (platform P, device D) for OpenCL; nullopt when not given.
std::optional<int> parse_device(const RunOptions& opt, bool opencl) {
  if (!opt.device) return std::nullopt;
  const std::string& s = *opt.device;
  auto number = [&](const std::string& t) {
    if (t.empty() || t.size() > 6 || t.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError("--device must be a device number >= 0" +
                       std::string(opencl ? " or P:D (platform:device)" : "") + " (got '" + s +
                       "')");
    return std::stoi(t);
  };
  const auto colon = s.find(':');
  if (colon == std::string::npos) return number(s);
  if (!opencl)
    throw UsageError("--device " + s +
                     ": the P:D form names an OpenCL device (use --backend opencl)");
  const int p = number(s.substr(0, colon)), d = number(s.substr(colon + 1));
  const int n = device_index(Location::Kind::opencl, p, d);
  if (n < 0)
    throw UsageError("--device " + s + ": no device " + std::to_string(d) + " on OpenCL platform " +
                     std::to_string(p) + " (`pixflow info` lists them)");
  return n;
}

Target resolve_target(const RunOptions& opt, bool batch) {
  const std::optional<int> device = parse_device(opt, opt.backend == "opencl");
  std::string b = opt.backend;
  Target t;
  if (b == "opencl") {  // never chosen by auto: an explicit choice, one device
    const int m = device_count(Location::Kind::opencl);
    if (m == 0) {
      const std::vector<Backend> built = compiled_backends();
      t.unavailable = Error(Status::backend_unavailable,
                            std::count(built.begin(), built.end(), Backend::opencl)
                                ? "opencl: no OpenCL device found (`pixflow info` lists platforms)"
                                : "opencl: pixflow was built without OpenCL");
      return t;
    }
    const int d = device.value_or(0);
    if (d >= m)
      throw UsageError("--device " + std::to_string(d) + " is out of range (" + std::to_string(m) +
                       " OpenCL device(s): 0.." + std::to_string(m - 1) +
                       ", numbered as `pixflow info` lists them)");
    t.backend = Backend::opencl;
    t.kind = Location::Kind::opencl;
    t.devices = {d};
    return t;
  }
  const int n = cuda_device_count();
  if (b == "auto") b = n > 0 ? "cuda" : "cpu";
  if (b == "cuda") {
    if (n == 0) {
      t.unavailable = Error(
          Status::backend_unavailable,
          cuda_compiled() ? "cuda: no CUDA device found" : "cuda: pixflow was built without CUDA");
      return t;
    }
    t.backend = Backend::cuda;
    t.kind = Location::Kind::cuda;
    if (device) {
      if (*device >= n)
        throw UsageError("--device " + std::to_string(*device) + " is out of range (" +
                         std::to_string(n) + " CUDA device(s): 0.." + std::to_string(n - 1) + ")");
      t.devices = {*device};
    } else {
      for (int d = 0; d < (batch ? n : 1); ++d) t.devices.push_back(d);
    }
    return t;
  }
  if (device && *device != 0)
    throw UsageError("--device " + std::to_string(*device) +
                     " is out of range (the CPU backend has device 0 only" +
                     (n == 0 ? std::string(", and no CUDA device was found)") : std::string(")")));
  if (b == "ref") t.backend = Backend::ref;
  return t;
}

// ---- what a run may touch -------------------------------------------------------------------

/// A file's identity (device, inode), following symlinks: two paths name one file when their
/// ids are equal, whatever their spelling (`./x/../a.png`), and hard links share one.
struct FileId {
  dev_t dev;
  ino_t ino;
  auto operator<=>(const FileId&) const = default;
};

std::optional<FileId> file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

/// The files a run reads (INPUT, or every batch item, and every operand file), so that no
/// output replaces one of them unless --overwrite-input says so.
class Inputs {
 public:
  void add(const std::string& path, std::string role) {
    if (const auto id = file_id(path)) roles_.emplace(*id, std::move(role));
  }
  /// Throws UsageError when `out` exists and is one of the inputs.
  void check_output(const std::string& out) const {
    const auto id = file_id(out);
    if (!id) return;
    const auto it = roles_.find(*id);
    if (it == roles_.end()) return;
    throw UsageError("OUTPUT '" + out + "' is " + it->second +
                     ", which would be overwritten (use --overwrite-input to allow it)");
  }

 private:
  std::map<FileId, std::string> roles_;
};

Inputs inputs_of(const Pipeline& pipeline) {
  Inputs in;
  for (const std::string& f : pipeline.operand_files())
    in.add(f, "the operand file '" + f + "' of the pipeline");
  return in;
}

/// The nearest folder of `p` that exists ("." for a bare name).
fs::path existing_folder(fs::path p) {
  std::error_code ec;
  while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
  return p.empty() ? fs::path(".") : p;
}

/// A folder that the run will write into (or create under) is a folder and writable.
void check_writable_folder(const fs::path& dir, const std::string& what) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UsageError(what + " '" + dir.string() + "' is not a folder");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw UsageError(what + " '" + dir.string() + "' is not writable (" + std::strerror(errno) +
                     ")");
}

/// The file name fits the file system of its folder (NAME_MAX bytes, usually 255).
void check_name_length(const fs::path& out) {
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  long max = ::pathconf(existing_folder(dir).c_str(), _PC_NAME_MAX);
  if (max <= 0) max = NAME_MAX;
  const std::size_t len = out.filename().native().size();
  if (len > std::size_t(max))
    throw UsageError("OUTPUT name '" + out.filename().string() + "' is " + std::to_string(len) +
                     " bytes; its file system takes at most " + std::to_string(max));
}

/// A single OUTPUT file, before anything is decoded: its folder exists and is writable, its
/// name fits.
void check_output_file(const fs::path& out) {
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::exists(dir, ec))
    throw UsageError("the folder of OUTPUT '" + out.string() + "' does not exist");
  check_writable_folder(dir, "the folder of OUTPUT");
  check_name_length(out);
}

/// The result's depth and channels for INPUT, from its header alone, against what OUTPUT's
/// format can hold. A file that cannot be read or a stage that cannot take the source is a
/// failed operation (pixflow::Error, exit 1) found before decoding; a format that cannot
/// hold the result is bad usage (`usage`), or an Error naming the output in a batch.
void check_result_fits(const Pipeline& pipeline, const std::string& in, const std::string& out,
                       const IoLimits& limits, bool usage) {
  const ImageHeader h = read_image_header(in, limits);
  ImageShape r;
  try {
    r = pipeline.plan({h.width, h.height, h.format});
  } catch (const Error& e) {
    // A stage whose parameters do not fit the image (a crop outside it, a pad whose output is
    // too large) is bad usage, found before decoding; a depth a stage does not take stays a
    // failed operation (unsupported).
    if (usage && e.status() == Status::invalid_argument) throw UsageError(e.what());
    throw;
  }
  try {
    check_write_format(out, r.format);
  } catch (const Error& e) {
    if (usage) throw UsageError(e.what());
    throw;
  }
}

// ---- one item ------------------------------------------------------------------------------

/// How the outputs are written: the options of write_image, and the format of standard
/// output (an extension with its dot, e.g. ".jpg"; empty when not given).
struct Writing {
  WriteOptions options;
  std::string format;
  bool strip = false;  ///< --strip: no ICC profile or resolution carried over
};

/// Every byte of standard input (INPUT "-"): decoded from memory, its format from its
/// contents, as for a file.
std::vector<std::byte> read_stdin() {
  std::vector<std::byte> bytes;
  std::byte buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw Error(Status::io_error,
                  std::string("cannot read standard input: ") + std::strerror(errno));
    if (n == 0) return bytes;
    bytes.insert(bytes.end(), buf, buf + n);
  }
}

/// Writes all of `bytes` to standard output (OUTPUT "-"), binary as they are.
void write_stdout(const std::vector<std::byte>& bytes) {
  std::cout.flush();
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(STDOUT_FILENO, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error(Status::io_error, std::string("cannot write to standard output: ") +
                                        std::strerror(n < 0 ? errno : EIO));
    done += std::size_t(n);
  }
}

void process(const Pipeline& pipeline, const std::string& in, const std::string& out, Location loc,
             const Context& ctx, const IoLimits& limits, const Writing& w) {
  ImageMetadata meta;
  Image src = in == "-" ? decode_image(read_stdin(), "<stdin>", limits, &meta)
                        : read_image(in, limits, &meta);
  const bool gray_in = src.channels() == 1;
  if (in == "-" || out == "-") {
    // No header was checked before decoding standard input: the result's format against
    // the output's, before any pipeline runs or a byte is written.
    const ImageShape r = pipeline.plan({src.width(), src.height(), src.format()});
    try {
      check_write_format(out == "-" ? "<stdout>" + w.format : out, r.format);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  }
  Image result;
  if (pipeline.size() == 0) {
    result = std::move(src);  // a conversion: nothing to run, nothing to upload
  } else if (loc.is_host()) {
    result = pipeline.run(src, ctx);
  } else {
    // Explicit upload, run on the device, explicit download (no hidden copies). The host
    // source is released once uploaded: host memory holds one image at a time.
    Image d_src(src.width(), src.height(), src.format(), loc);
    copy(src, d_src);
    src = Image();
    Image d_dst = pipeline.run(d_src, ctx);
    d_src = Image();
    result = Image(d_dst.width(), d_dst.height(), d_dst.format());
    copy(d_dst, result);
  }
  // The input's profile and resolution go to the output where its format holds them; a
  // profile only while the colour model stays (a gray profile does not describe RGB).
  WriteOptions o = w.options;
  if (!w.strip) {
    o.metadata = std::move(meta);
    if (gray_in != (result.channels() == 1)) o.metadata.icc.clear();
  }
  if (out == "-") {
    write_stdout(encode_image(result, w.format, o));  // whole, or nothing on failure
    return;
  }
  write_image(out, result, o);  // atomic: nothing is left behind on failure or signal
}

// ---- progress ------------------------------------------------------------------------------

struct ItemResult {
  std::size_t index = 0;
  std::string input, output;
  enum class State { ok, error, skipped } state = State::ok;
  std::string error;
  double ms = 0;
  bool ok() const { return state != State::error; }
};

const char* state_name(ItemResult::State s) {
  switch (s) {
    case ItemResult::State::ok:
      return "ok";
    case ItemResult::State::error:
      return "error";
    case ItemResult::State::skipped:
      return "skipped";
  }
  return "?";
}

enum class ProgressMode { none, bar, json };

ProgressMode progress_mode(const std::string& s, bool batch) {
  if (s == "json") return ProgressMode::json;
  if (s == "bar") return ProgressMode::bar;
  if (s == "none") return ProgressMode::none;
  return batch && isatty(STDERR_FILENO) ? ProgressMode::bar : ProgressMode::none;  // auto
}

// Thread-safe: workers of several devices report as items complete.
class Reporter {
 public:
  Reporter(ProgressMode mode, std::size_t total) : mode_(mode), total_(total) {
    if (mode_ == ProgressMode::bar) draw("");
  }

  void done(const ItemResult& r) {
    std::lock_guard<std::mutex> lock(m_);
    ++done_;
    if (!r.ok()) ++failed_;
    if (mode_ == ProgressMode::json) {
      std::ostringstream s;
      s.setf(std::ios::fixed);
      s.precision(3);
      s << "{\"index\":" << r.index << ",\"total\":" << total_
        << ",\"input\":" << json_string(r.input) << ",\"output\":" << json_string(r.output)
        << ",\"status\":\"" << state_name(r.state) << "\",\"error\":" << json_string(r.error)
        << ",\"ms\":" << r.ms << "}\n";
      std::cout << s.str() << std::flush;
    } else if (mode_ == ProgressMode::bar) {
      draw(escape_text(fs::path(r.input).filename().string()));
    }
  }

  /// Ends the bar's line so that later messages start on a fresh one.
  void finish() {
    std::lock_guard<std::mutex> lock(m_);
    if (mode_ == ProgressMode::bar) std::cerr << "\n" << std::flush;
  }

 private:
  void draw(const std::string& name) {
    constexpr std::size_t kWidth = 30;
    const std::size_t fill = total_ ? done_ * kWidth / total_ : kWidth;
    std::string line = "[" + std::string(fill, '#') + std::string(kWidth - fill, '.') + "] " +
                       std::to_string(done_) + "/" + std::to_string(total_);
    if (failed_) line += " (" + std::to_string(failed_) + " failed)";
    if (!name.empty()) line += "  " + name;
    const std::size_t len = line.size();
    if (len < last_len_) line += std::string(last_len_ - len, ' ');
    last_len_ = len;
    std::cerr << "\r" << line << std::flush;
  }

  std::mutex m_;
  ProgressMode mode_;
  std::size_t total_, done_ = 0, failed_ = 0, last_len_ = 0;
};

// ---- inputs and outputs ----------------------------------------------------------------

bool is_image_name(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  for (const char* e :
       {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".pgm", ".ppm", ".pnm", ".npy", ".webp"})
    if (ext == e) return true;
  return false;
}

/// One item of a run: the file read and, relative to the folder given as INPUT, its sub-folder
/// (empty for a file named on the command line or a file at a folder's top).
struct Source {
  fs::path path, sub;
};

/// The image files of folder `dir` (with --recursive, of its sub-folders too, `skip` and
/// hidden folders excluded), in byte order of their paths relative to `dir`.
void list_images(const fs::path& dir, bool recursive, const fs::path& skip,
                 std::vector<Source>& out) {
  std::vector<Source> found;
  std::error_code ec;
  if (!recursive) {
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file() && is_image_name(e.path())) found.push_back({e.path(), {}});
  } else {
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
         ++it) {
      const fs::path& p = it->path();
      if (it->is_directory(ec)) {
        // The output folder inside the input one holds earlier results, not inputs.
        if (!skip.empty() && fs::equivalent(p, skip, ec)) it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file(ec) && is_image_name(p))
        found.push_back({p, p.parent_path().lexically_relative(dir)});
    }
  }
  for (Source& f : found)
    if (f.sub == ".") f.sub.clear();
  std::sort(found.begin(), found.end(), [](const Source& a, const Source& b) {
    return (a.sub / a.path.filename()).string() < (b.sub / b.path.filename()).string();
  });
  out.insert(out.end(), found.begin(), found.end());
}

bool has_glob(const std::string& s) {
  return s.find_first_of("*?[") != std::string::npos;
}

/// The sources of the INPUT arguments: files as given, folders listed, glob patterns that
/// name no file expanded (as a shell would, for arguments quoted or from scripts). `batch`:
/// more than one argument, a folder or a pattern (the output is then a folder or a pattern).
std::vector<Source> expand_inputs(const RunOptions& opt, bool& batch, const fs::path& skip) {
  std::vector<Source> out;
  batch = opt.inputs.size() > 1;
  std::error_code ec;
  for (const std::string& a : opt.inputs) {
    if (a == "-") {
      if (opt.inputs.size() > 1)
        throw UsageError("INPUT '-' (standard input) must be the only INPUT");
      out.push_back({a, {}});
      continue;
    }
    if (fs::is_directory(a, ec)) {
      batch = true;
      list_images(a, opt.recursive, skip, out);
      continue;
    }
    if (fs::exists(a, ec)) {
      out.push_back({a, {}});
      continue;
    }
    if (!has_glob(a)) throw UsageError("INPUT '" + a + "' does not exist");
    batch = true;
    glob_t g{};
    const int rc = ::glob(a.c_str(), 0, nullptr, &g);
    std::vector<std::string> names(g.gl_pathv, g.gl_pathv + (rc == 0 ? g.gl_pathc : 0));
    ::globfree(&g);
    if (names.empty()) throw UsageError("INPUT pattern '" + a + "' matches no file");
    for (const std::string& n : names) {
      if (fs::is_directory(n, ec))
        list_images(n, opt.recursive, skip, out);
      else
        out.push_back({n, {}});
    }
  }
  return out;
}

/// "--format jpg" as an extension with its dot; empty when not given.
std::string format_extension(const RunOptions& opt) {
  if (!opt.format) return {};
  std::string f = *opt.format;
  std::transform(f.begin(), f.end(), f.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  if (f.starts_with('.')) f.erase(0, 1);
  for (const char* e : {"png", "jpg", "jpeg", "tif", "tiff", "pgm", "ppm", "pnm", "npy", "webp"})
    if (f == e) return "." + f;
  throw UsageError("--format '" + *opt.format +
                   "' is not a format pixflow writes (png, jpg, jpeg, tif, tiff, pgm, ppm, pnm, "
                   "npy, webp)");
}

Writing writing_from(const RunOptions& opt) {
  Writing w;
  if (opt.quality) {
    if (*opt.quality < 1 || *opt.quality > 100)
      throw UsageError("--quality must be in [1, 100] (JPEG and WebP quality; got " +
                       std::to_string(*opt.quality) + ")");
    w.options.jpeg_quality = *opt.quality;
  }
  if (opt.compression) {
    if (*opt.compression < 0 || *opt.compression > 9)
      throw UsageError(
          "--compression must be in [0, 9] (PNG zlib level; TIFF: 0 none, 1..9 "
          "Deflate; got " +
          std::to_string(*opt.compression) + ")");
    w.options.compression = *opt.compression;
  }
  w.format = format_extension(opt);
  w.strip = opt.strip;
  w.options.lossless = opt.lossless;
  return w;
}

bool is_pattern(const std::string& output) {
  return output.find('{') != std::string::npos;
}

/// OUTPUT with its placeholders replaced for `src`: {stem} (file name without extension),
/// {name} (file name), {ext} (its extension, without the dot), {dir} (the sub-folder under
/// the INPUT folder, with a trailing '/', empty at the top). `{{` and `}}` are braces.
std::string expand_pattern(const std::string& pattern, const Source& src) {
  const fs::path name = src.path.filename();
  std::string ext = name.extension().string();
  if (!ext.empty()) ext.erase(0, 1);
  const std::string dir = src.sub.empty() ? std::string() : src.sub.string() + "/";
  std::string out;
  for (std::size_t i = 0; i < pattern.size();) {
    if (pattern.compare(i, 2, "{{") == 0 || pattern.compare(i, 2, "}}") == 0) {
      out += pattern[i];
      i += 2;
      continue;
    }
    if (pattern[i] != '{') {
      out += pattern[i++];
      continue;
    }
    const std::size_t end = pattern.find('}', i);
    const std::string key = end == std::string::npos ? "" : pattern.substr(i + 1, end - i - 1);
    if (key == "stem")
      out += name.stem().string();
    else if (key == "name")
      out += name.string();
    else if (key == "ext")
      out += ext;
    else if (key == "dir")
      out += dir;
    else
      throw UsageError(
          "OUTPUT pattern '" + pattern + "': unknown placeholder '" +
          pattern.substr(i, end == std::string::npos ? std::string::npos : end - i + 1) +
          "' (known: {stem} {name} {ext} {dir}; {{ and }} for braces)");
    i = end + 1;
  }
  return out;
}

/// An output file name against --format: a name without an extension gets the format's; a
/// name with another one is bad usage (the extension is what a reader believes).
fs::path apply_format(fs::path out, const std::string& fmt) {
  if (fmt.empty()) return out;
  std::string ext = out.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  if (ext.empty()) return out += fmt;
  const auto family = [](const std::string& e) {
    return e == ".jpeg" ? std::string(".jpg") : e == ".tiff" ? std::string(".tif") : e;
  };
  if (family(ext) != family(fmt))
    throw UsageError("OUTPUT '" + out.string() + "' ends in '" + out.extension().string() +
                     "' but --format asks for '" + fmt.substr(1) +
                     "': give one of them, or the same");
  return out;
}

/// The output of each source (folder OUTPUT: the sub-folder and file name kept, the
/// extension --format's; a pattern: expanded), checked before anything is read: known
/// extension, a name the file system takes, and no two sources on one output.
std::vector<std::string> batch_outputs(const RunOptions& opt, const std::vector<Source>& srcs,
                                       const std::string& fmt) {
  std::vector<std::string> outs;
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < srcs.size(); ++i) {
    const Source& s = srcs[i];
    fs::path out;
    if (is_pattern(opt.output)) {
      out = apply_format(expand_pattern(opt.output, s), fmt);
    } else {
      const fs::path name = s.path.filename();
      out = fs::path(opt.output) / s.sub /
            (fmt.empty() ? name : fs::path(name.stem().string() + fmt));
    }
    if (out.extension().empty())
      throw UsageError("output '" + out.string() + "' (for '" + s.path.string() +
                       "') has no file extension: end the pattern in .png, .jpg, ..., or give "
                       "--format");
    try {
      (void)format_from_path(out.string());
    } catch (const Error& e) {
      if (e.status() == Status::invalid_argument) throw UsageError(e.what());
      throw;
    }
    check_name_length(out);
    const std::string key = out.lexically_normal().string();
    const auto [it, fresh] = seen.emplace(key, i);
    if (!fresh)
      throw UsageError("inputs '" + srcs[it->second].path.string() + "' and '" + s.path.string() +
                       "' would both be written to '" + out.string() +
                       "'; nothing was written (keep the folders with --recursive or {dir}, or "
                       "rename)");
    outs.push_back(out.string());
  }
  return outs;
}

// ---- batch ---------------------------------------------------------------------------------

/// "path: message", or the message alone when it already names the path (the library's
/// messages do: "read_image: in/b.png: ...").
std::string with_path(const std::string& path, const std::string& message) {
  return message.find(path) != std::string::npos ? message : path + ": " + message;
}

ItemResult run_item(const Pipeline& pipeline, std::size_t index, const std::string& in,
                    const std::string& out, Location loc, const Context& ctx,
                    const IoLimits& limits, bool no_clobber, const Writing& w, bool make_folder) {
  ItemResult r;
  r.index = index;
  r.input = in;
  r.output = out;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    std::error_code ec;
    if (no_clobber && out != "-" && fs::exists(fs::symlink_status(out, ec))) {
      r.state = ItemResult::State::skipped;
    } else {
      if (in != "-") {
        check_name_length(out);
        check_result_fits(pipeline, in, out, limits, false);  // before decoding
      }
      if (make_folder && fs::path(out).has_parent_path()) {
        fs::create_directories(fs::path(out).parent_path(), ec);
        if (ec)
          throw Error(Status::io_error,
                      "cannot create the folder of '" + out + "': " + ec.message());
      }
      process(pipeline, in, out, loc, ctx, limits, w);
    }
  } catch (const std::bad_alloc&) {
    r.state = ItemResult::State::error;
    r.error = "out of host memory";
  } catch (const std::exception& e) {  // pixflow::Error and anything else: this item failed
    r.state = ItemResult::State::error;
    r.error = e.what();
  }
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal " + std::to_string(sig);
}

int run_batch(const RunOptions& opt, const std::vector<Source>& files,
              const std::vector<std::string>& outs, const Pipeline& pipeline, const Target& target,
              const IoLimits& limits, const Writing& w) {
  if (!is_pattern(opt.output)) {
    std::error_code ec;
    fs::create_directories(opt.output, ec);
    if (ec)
      throw Error(Status::io_error,
                  "cannot create output directory '" + opt.output + "': " + ec.message());
  }
  if (files.empty()) {
    std::string in;
    for (const std::string& a : opt.inputs) in += (in.empty() ? "'" : ", '") + a + "'";
    print_error("note: no image files in " + in + " (nothing to do)");
    return kOk;
  }

  install_signal_handlers(true);
  Reporter reporter(progress_mode(opt.progress, true), files.size());
  std::atomic<std::size_t> next{0}, written{0}, skipped{0};
  std::atomic<bool> stop{false};
  std::mutex m;
  std::vector<ItemResult> failures;  // in completion order

  // CPU: --jobs items at once, the cores shared among them unless --threads says otherwise.
  const int workers =
      target.devices.empty()
          ? int(std::min<std::size_t>(std::size_t(std::max(1, opt.jobs)), files.size()))
          : int(target.devices.size());
  Context ctx = target.context();
  if (target.devices.empty() && workers > 1 && ctx.threads == 0)
    ctx.threads = std::max(1, int(std::thread::hardware_concurrency()) / workers);

  auto worker = [&](int wk) {
    const Location loc = target.location(target.devices.empty() ? 0 : wk);
    while (!stop.load() && stop_signal() == 0) {
      const std::size_t i = next.fetch_add(1);
      if (i >= files.size()) break;
      ItemResult r = run_item(pipeline, i, files[i].path.string(), outs[i], loc, ctx, limits,
                              opt.no_clobber, w, true);
      if (!r.ok()) {
        std::lock_guard<std::mutex> lock(m);
        failures.push_back(r);
        if (!opt.keep_going) stop = true;
      } else {
        ++(r.state == ItemResult::State::skipped ? skipped : written);
      }
      reporter.done(r);
    }
  };
  if (workers == 1) {
    worker(0);
  } else {  // one worker thread per CUDA device, or --jobs on the CPU
    std::vector<std::thread> threads;
    for (int wk = 0; wk < workers; ++wk) threads.emplace_back(worker, wk);
    for (auto& t : threads) t.join();
  }
  reporter.finish();

  if (const int sig = stop_signal()) {
    std::string line = "interrupted by " + signal_name(sig) + ": " + std::to_string(written) +
                       " of " + std::to_string(files.size()) + " items written";
    if (skipped) line += ", " + std::to_string(skipped) + " skipped (--no-clobber)";
    if (!failures.empty()) line += ", " + std::to_string(failures.size()) + " failed";
    print_error(line + "; the rest were not started");
    return 128 + sig;
  }
  if (failures.empty()) return kOk;
  if (!opt.keep_going) {
    print_error(with_path(failures.front().input, failures.front().error));
    return kFailed;
  }
  std::sort(failures.begin(), failures.end(),
            [](const ItemResult& a, const ItemResult& b) { return a.index < b.index; });
  std::cerr << "pixflow: " << failures.size() << " of " << files.size() << " items failed:\n";
  for (const auto& f : failures)
    std::cerr << "  " << escape_text(with_path(f.input, f.error)) << "\n";
  std::cerr << std::flush;
  return kPartial;
}

// Usage checks of a batch, before anything is read or a device is touched: OUTPUT is (or can
// become) a writable folder, or a pattern whose folders can be made; no output would replace
// an input or an operand file.
void check_batch_paths(const RunOptions& opt, const std::vector<Source>& files,
                       const std::vector<std::string>& outs, const Pipeline& pipeline,
                       const std::string& fmt) {
  const fs::path out_dir(opt.output);
  std::error_code ec;
  if (opt.output == "-")
    throw UsageError("OUTPUT '-' (standard output) takes one image; this run has several inputs");
  if (is_pattern(opt.output)) {
    std::set<std::string> dirs;
    for (const std::string& o : outs)
      dirs.insert(existing_folder(fs::path(o).parent_path()).string());
    for (const std::string& d : dirs) check_writable_folder(d, "OUTPUT folder");
  } else {
    const bool exists = fs::exists(out_dir, ec);
    if ((exists && !fs::is_directory(out_dir, ec)) ||
        (!exists && opt.output.back() != '/' && is_image_name(out_dir)))
      throw UsageError("OUTPUT '" + opt.output + "' " +
                       (exists ? "is a file" : "looks like a file name") +
                       ", but this run has several inputs (a folder, a pattern or more than one "
                       "file): name a folder, or a pattern such as 'out/{stem}.png'");
    // The nearest existing folder of OUTPUT is where it will be created (or it is OUTPUT).
    check_writable_folder(existing_folder(opt.output), "OUTPUT folder");
  }
  if (opt.overwrite_input) return;
  if (!is_pattern(opt.output) && fmt.empty() && fs::exists(out_dir, ec))
    for (const std::string& a : opt.inputs)
      if (fs::is_directory(a, ec) && fs::equivalent(a, out_dir, ec))
        throw UsageError("OUTPUT directory '" + opt.output +
                         "' is the INPUT directory (its files would be overwritten); choose "
                         "another or use --overwrite-input");
  Inputs inputs = inputs_of(pipeline);
  for (const Source& f : files)
    inputs.add(f.path.string(), "the batch input '" + f.path.string() + "'");
  for (const std::string& o : outs) inputs.check_output(o);
}

fs::path single_output(const RunOptions& opt, const Source& src, const std::string& fmt) {
  if (opt.output == "-") {
    if (fmt.empty())
      throw UsageError("OUTPUT '-' (standard output) needs --format (e.g. --format png)");
    if (opt.progress == "json")
      throw UsageError("--progress=json writes to standard output, which OUTPUT '-' takes");
    return "-";
  }
  std::error_code ec;
  fs::path out(opt.output);
  if (is_pattern(opt.output)) {
    if (src.path == "-")
      throw UsageError("OUTPUT pattern '" + opt.output +
                       "' needs an input file name; standard input has none");
    out = apply_format(expand_pattern(opt.output, src), fmt);
  } else if (fs::is_directory(out, ec)) {
    if (src.path == "-")
      throw UsageError("OUTPUT '" + opt.output +
                       "' is a folder; standard input has no name to give the file: name the "
                       "output file");
    const fs::path name = src.path.filename();  // like cp FILE DIR
    out /= fmt.empty() ? name : fs::path(name.stem().string() + fmt);
  } else {
    // Say what OUTPUT looks like rather than "unknown extension ''".
    if (has_glob(opt.output))
      throw UsageError("OUTPUT '" + opt.output +
                       "' looks like a glob; pixflow does not expand OUTPUT: name one file, a "
                       "folder, or a pattern such as 'out/{stem}.png'");
    if (out.extension().empty() && fmt.empty())
      throw UsageError(
          "OUTPUT '" + opt.output + "' has no file extension" +
          (opt.output.back() == '/' ? std::string(" and is not an existing folder")
                                    : std::string()) +
          ": name a file ending in .png, .jpg, .tif, .webp, .pgm, .ppm, .pnm or .npy, or an "
          "existing folder");
    out = apply_format(out, fmt);
  }
  try {
    (void)format_from_path(out.string());  // an unknown extension is bad usage, found early
  } catch (const Error& e) {
    if (e.status() == Status::invalid_argument) throw UsageError(e.what());
    throw;
  }
  return out;
}

int run_single(const RunOptions& opt, const std::string& in, const fs::path& out,
               const Pipeline& pipeline, const Target& target, const IoLimits& limits,
               const Writing& w) {
  install_signal_handlers(false);
  const ProgressMode mode = progress_mode(opt.progress, false);
  if (mode == ProgressMode::none) {  // errors propagate as they are (one line, exit 1)
    process(pipeline, in, out.string(), target.location(0), target.context(), limits, w);
    return kOk;
  }
  Reporter reporter(mode, 1);
  ItemResult r = run_item(pipeline, 0, in, out.string(), target.location(0), target.context(),
                          limits, false, w, false);
  reporter.done(r);
  reporter.finish();
  if (r.ok()) return kOk;
  print_error(r.error);
  return kFailed;
}

/// An empty pipeline (or only blanks) converts: read, write in the output's format.
Pipeline parse_or_empty(const std::string& text, const IoLimits& limits) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return Pipeline{};
  return parse_pipeline(text, limits);
}

}  // namespace

int run_command(const RunOptions& opt) {
  const IoLimits limits = limits_from(opt);
  const Writing w = writing_from(opt);
  if (opt.jobs < 1 || opt.jobs > 256)
    throw UsageError("--jobs must be in [1, 256] (got " + std::to_string(opt.jobs) + ")");
  const Pipeline pipeline = parse_or_empty(opt.pipeline, limits);
  if (opt.inputs.empty()) throw UsageError("no INPUT given");
  bool batch = false;
  std::error_code ec;
  const fs::path skip = fs::is_directory(opt.output, ec) ? fs::path(opt.output) : fs::path();
  const std::vector<Source> files = expand_inputs(opt, batch, skip);
  Target target = resolve_target(opt, batch);
  target.threads = opt.threads;
  if (batch) {
    if (opt.output == "-")
      throw UsageError("OUTPUT '-' (standard output) takes one image; this run has several inputs");
    const std::vector<std::string> outs = batch_outputs(opt, files, w.format);
    check_batch_paths(opt, files, outs, pipeline, w.format);
    if (target.unavailable) throw *target.unavailable;
    return run_batch(opt, files, outs, pipeline, target, limits, w);
  }

  const std::string in = files.front().path.string();
  const fs::path out = single_output(opt, files.front(), w.format);
  if (out != "-") {
    if (is_pattern(opt.output)) {  // its folders are made just before the write
      check_writable_folder(existing_folder(out.parent_path()), "the folder of OUTPUT");
      check_name_length(out);
    } else {
      check_output_file(out);
    }
    if (opt.no_clobber && fs::exists(fs::symlink_status(out, ec))) {
      print_error("note: kept '" + out.string() + "', which exists (--no-clobber)");
      return kOk;
    }
    if (!opt.overwrite_input) {
      Inputs inputs = inputs_of(pipeline);
      if (in != "-") inputs.add(in, "INPUT");
      inputs.check_output(out.string());
    }
  }
  // The header of INPUT against OUTPUT's format: a result the format cannot hold is found
  // before decoding (exit 2), as is an input a stage cannot take (exit 1). Standard input
  // and output are checked once decoded (process).
  if (in != "-" && out != "-") check_result_fits(pipeline, in, out.string(), limits, true);
  if (target.unavailable) throw *target.unavailable;
  if (is_pattern(opt.output) && out.has_parent_path()) {
    fs::create_directories(out.parent_path(), ec);
    if (ec)
      throw Error(Status::io_error,
                  "cannot create the folder of '" + out.string() + "': " + ec.message());
  }
  return run_single(opt, in, out, pipeline, target, limits, w);
}

}  // namespace pixflow::cli
