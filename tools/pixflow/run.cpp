// `pixflow run`: one image, or every image of a directory (batch), through a pipeline on
// the CPU or on CUDA devices, with progress reporting and the exit codes of docs/contract.md §5.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <new>
#include <optional>
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
  IoLimits l = IoLimits::from_env();
  auto set = [](const std::optional<std::int64_t>& v, const char* name, std::int64_t& dst) {
    if (!v) return;
    if (*v <= 0)
      throw UsageError(std::string(name) + " must be > 0 (got " + std::to_string(*v) + ")");
    dst = *v;
  };
  set(opt.max_side, "--max-side", l.max_side);
  set(opt.max_pixels, "--max-pixels", l.max_pixels);
  set(opt.max_bytes, "--max-bytes", l.max_bytes);
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

// Where the pipeline runs: the host (CPU backend) or a list of CUDA devices.
struct Target {
  Backend backend = Backend::cpu;
  std::optional<Error> unavailable;  // thrown after the usage checks (a failure, exit 1)
  std::vector<int> devices;          // CUDA device numbers; empty for the CPU
  Location location(int worker) const {
    return devices.empty() ? Location::host() : Location::cuda(devices[std::size_t(worker)]);
  }
};

Target resolve_target(const RunOptions& opt, bool batch) {
  if (opt.device && *opt.device < 0)
    throw UsageError("--device must be >= 0 (got " + std::to_string(*opt.device) + ")");
  std::string b = opt.backend;
  Target t;
  if (b == "opencl") {
    t.unavailable =
        Error(Status::backend_unavailable,
              "opencl: the OpenCL backend is not available yet (use --backend cpu or cuda)");
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
    if (opt.device) {
      if (*opt.device >= n)
        throw UsageError("--device " + std::to_string(*opt.device) + " is out of range (" +
                         std::to_string(n) + " CUDA device(s): 0.." + std::to_string(n - 1) + ")");
      t.devices = {*opt.device};
    } else {
      for (int d = 0; d < (batch ? n : 1); ++d) t.devices.push_back(d);
    }
    return t;
  }
  if (opt.device && *opt.device != 0)
    throw UsageError("--device " + std::to_string(*opt.device) +
                     " is out of range (the CPU backend has device 0 only" +
                     (n == 0 ? std::string(", and no CUDA device was found)") : std::string(")")));
  if (b == "ref") t.backend = Backend::ref;
  return t;
}

// ---- one item ------------------------------------------------------------------------------

void process(const Pipeline& pipeline, const std::string& in, const std::string& out, Location loc,
             Backend backend, const IoLimits& limits) {
  Context ctx;
  ctx.backend = backend;
  Image src = read_image(in, limits);
  Image result;
  if (loc.is_host()) {
    result = pipeline.run(src, ctx);
  } else {
    // Explicit upload, run on the device, explicit download (no hidden copies).
    Image d_src(src.width(), src.height(), src.format(), loc);
    copy(src, d_src);
    Image d_dst = pipeline.run(d_src, ctx);
    result = Image(d_dst.width(), d_dst.height(), d_dst.format());
    copy(d_dst, result);
  }
  write_image(out, result);  // atomic: temp file + rename
}

// ---- progress ------------------------------------------------------------------------------

struct ItemResult {
  std::size_t index = 0;
  std::string input, output;
  bool ok = true;
  std::string error;
  double ms = 0;
};

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      case '\r':
        o += "\\r";
        break;
      case '\t':
        o += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += char(c);
        }
    }
  }
  return o + "\"";
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
    if (!r.ok) ++failed_;
    if (mode_ == ProgressMode::json) {
      std::ostringstream s;
      s.setf(std::ios::fixed);
      s.precision(3);
      s << "{\"index\":" << r.index << ",\"total\":" << total_
        << ",\"input\":" << json_string(r.input) << ",\"output\":" << json_string(r.output)
        << ",\"status\":\"" << (r.ok ? "ok" : "error") << "\",\"error\":" << json_string(r.error)
        << ",\"ms\":" << r.ms << "}\n";
      std::cout << s.str() << std::flush;
    } else if (mode_ == ProgressMode::bar) {
      draw(fs::path(r.input).filename().string());
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

// ---- batch ---------------------------------------------------------------------------------

bool is_image_name(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  for (const char* e : {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".pgm", ".ppm", ".pnm", ".npy"})
    if (ext == e) return true;
  return false;
}

std::vector<fs::path> list_images(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && is_image_name(e.path())) files.push_back(e.path());
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
    return a.filename().string() < b.filename().string();
  });
  return files;
}

ItemResult run_item(const Pipeline& pipeline, std::size_t index, const std::string& in,
                    const std::string& out, Location loc, Backend backend, const IoLimits& limits) {
  ItemResult r;
  r.index = index;
  r.input = in;
  r.output = out;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    process(pipeline, in, out, loc, backend, limits);
  } catch (const std::bad_alloc&) {
    r.ok = false;
    r.error = "out of host memory";
  } catch (const std::exception& e) {  // pixflow::Error and anything else: this item failed
    r.ok = false;
    r.error = e.what();
    for (char& c : r.error)
      if (c == '\n' || c == '\r') c = ' ';
  }
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

int run_batch(const RunOptions& opt, const Pipeline& pipeline, const Target& target,
              const IoLimits& limits) {
  const fs::path in_dir(opt.input), out_dir(opt.output);
  std::error_code ec;
  const std::vector<fs::path> files = list_images(in_dir);
  fs::create_directories(out_dir, ec);
  if (ec)
    throw Error(Status::io_error,
                "cannot create output directory '" + opt.output + "': " + ec.message());
  if (files.empty()) {
    print_error("note: no image files in '" + opt.input + "' (nothing to do)");
    return kOk;
  }

  Reporter reporter(progress_mode(opt.progress, true), files.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex m;
  std::vector<ItemResult> failures;  // in completion order

  auto worker = [&](int w) {
    const Location loc = target.location(w);
    while (!stop.load()) {
      const std::size_t i = next.fetch_add(1);
      if (i >= files.size()) break;
      const std::string in = files[i].string();
      const std::string out = (out_dir / files[i].filename()).string();
      ItemResult r = run_item(pipeline, i, in, out, loc, target.backend, limits);
      if (!r.ok) {
        std::lock_guard<std::mutex> lock(m);
        failures.push_back(r);
        if (!opt.keep_going) stop = true;
      }
      reporter.done(r);
    }
  };
  const int workers = target.devices.empty() ? 1 : int(target.devices.size());
  if (workers == 1) {
    worker(0);
  } else {  // one worker thread per CUDA device
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) threads.emplace_back(worker, w);
    for (auto& t : threads) t.join();
  }
  reporter.finish();

  if (failures.empty()) return kOk;
  if (!opt.keep_going) {
    print_error(failures.front().input + ": " + failures.front().error);
    return kFailed;
  }
  std::sort(failures.begin(), failures.end(),
            [](const ItemResult& a, const ItemResult& b) { return a.index < b.index; });
  std::cerr << "pixflow: " << failures.size() << " of " << files.size() << " items failed:\n";
  for (const auto& f : failures) std::cerr << "  " << f.input << ": " << f.error << "\n";
  std::cerr << std::flush;
  return kPartial;
}

// Usage checks of the paths, before anything is read or a device is touched.
void check_batch_paths(const RunOptions& opt) {
  const fs::path in_dir(opt.input), out_dir(opt.output);
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec))
    throw UsageError("INPUT '" + opt.input + "' is a directory, so OUTPUT '" + opt.output +
                     "' must be a directory too (it is a file)");
  if (fs::exists(out_dir, ec) && fs::equivalent(in_dir, out_dir, ec))
    throw UsageError("OUTPUT directory '" + opt.output +
                     "' is the INPUT directory (its files "
                     "would be overwritten); choose another");
}

fs::path single_output(const RunOptions& opt) {
  fs::path out(opt.output);
  std::error_code ec;
  if (fs::is_directory(out, ec)) out /= fs::path(opt.input).filename();  // like cp FILE DIR
  try {
    (void)format_from_path(out.string());  // an unknown extension is bad usage, found early
  } catch (const Error& e) {
    if (e.status() == Status::invalid_argument) throw UsageError(e.what());
    throw;
  }
  return out;
}

int run_single(const RunOptions& opt, const fs::path& out, const Pipeline& pipeline,
               const Target& target, const IoLimits& limits) {
  const ProgressMode mode = progress_mode(opt.progress, false);
  if (mode == ProgressMode::none) {  // errors propagate as they are (one line, exit 1)
    process(pipeline, opt.input, out.string(), target.location(0), target.backend, limits);
    return kOk;
  }
  Reporter reporter(mode, 1);
  ItemResult r =
      run_item(pipeline, 0, opt.input, out.string(), target.location(0), target.backend, limits);
  reporter.done(r);
  reporter.finish();
  if (r.ok) return kOk;
  print_error(r.error);
  return kFailed;
}

}  // namespace

int run_command(const RunOptions& opt) {
  const IoLimits limits = limits_from(opt);
  const Pipeline pipeline = parse_pipeline(opt.pipeline, limits);
  std::error_code ec;
  const bool batch = fs::is_directory(opt.input, ec);
  const Target target = resolve_target(opt, batch);
  fs::path out;
  if (batch)
    check_batch_paths(opt);
  else
    out = single_output(opt);
  if (target.unavailable) throw *target.unavailable;
  return batch ? run_batch(opt, pipeline, target, limits)
               : run_single(opt, out, pipeline, target, limits);
}

}  // namespace pixflow::cli
