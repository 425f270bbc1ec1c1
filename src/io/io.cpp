// The format-independent part of file I/O: limits, format detection by signature, dispatch
// to the codecs, and atomic writes (temporary file in the same folder + rename).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "pixflow/io.hpp"
#include "src/io/codecs.hpp"

namespace pixflow {

namespace {

std::int64_t env_limit(const char* name, std::int64_t fallback, std::string& from) {
  const char* s = std::getenv(name);
  if (!s) return fallback;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  if (!std::isdigit(static_cast<unsigned char>(*s)) || *end != '\0' || errno == ERANGE || v <= 0)
    throw Error(Status::invalid_argument,
                detail::cat(name, ": must be a positive integer (got '", s, "')"));
  from = name;
  return std::int64_t(v);
}

std::string lower_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return ext;
}

/// The umask of this process without changing it (umask(2) cannot be read without a write,
/// which would race with other threads): Linux reports it in /proc/self/status.
mode_t current_umask() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Umask:", 0) == 0) return mode_t(std::strtoul(line.c_str() + 6, nullptr, 8));
  return 022;
}

/// Which formats hold which images (docs/contract.md §1): true when `fmt` can be written as
/// `ff` (`ext` tells .pgm from .ppm).
bool can_write(FileFormat ff, const std::string& ext, Format fmt) {
  const Depth d = fmt.depth;
  const int c = fmt.channels;
  switch (ff) {
    case FileFormat::png:
      return (d == Depth::u8 || d == Depth::u16) && (c == 1 || c == 3 || c == 4);
    case FileFormat::jpeg:
      return d == Depth::u8 && (c == 1 || c == 3);
    case FileFormat::tiff:
      return d != Depth::s32 && (c == 1 || c == 3 || c == 4);
    case FileFormat::pnm: {
      if (d != Depth::u8 && d != Depth::u16) return false;
      if (ext == ".pgm") return c == 1;
      if (ext == ".ppm") return c == 3;
      return c == 1 || c == 3;
    }
    case FileFormat::npy:
      return true;
  }
  return false;
}

const char* format_name(FileFormat ff, const std::string& ext) {
  switch (ff) {
    case FileFormat::png:
      return "PNG";
    case FileFormat::jpeg:
      return "JPEG";
    case FileFormat::tiff:
      return "TIFF";
    case FileFormat::pnm:
      return ext == ".pgm" ? "PGM" : ext == ".ppm" ? "PPM" : "PNM";
    case FileFormat::npy:
      return "NPY";
  }
  return "?";
}

/// "(set by X)", or for a limit nobody set, how to raise it: the part of a limit_exceeded
/// message that tells the user what to change.
std::string limit_origin(const std::string& from, std::int64_t value, std::int64_t fallback,
                         const char* option, const char* env) {
  if (from.empty() || from == "default") {
    if (value == fallback)
      return detail::cat("(the default; raise it with ", option, " or ", env, ")");
    return "(set by the calling program)";
  }
  return detail::cat("(set by ", from, ")");
}

/// read_image and read_image_header: detection by signature, then the codec.
ImageHeader read_any(const std::string& path, const IoLimits& limits, Image* pixels) {
  using namespace detail::io;
  if (limits.max_side <= 0 || limits.max_pixels <= 0 || limits.max_bytes <= 0)
    throw Error(
        Status::invalid_argument,
        detail::cat("read_image: limits must be positive (max_side ", limits.max_side,
                    ", max_pixels ", limits.max_pixels, ", max_bytes ", limits.max_bytes, ")"));
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f) read_fail(Status::io_error, path, "cannot open: ", std::strerror(errno));
  unsigned char sig[8] = {};
  const std::size_t n = std::fread(sig, 1, sizeof sig, f.get());
  if (std::ferror(f.get()))
    read_fail(Status::io_error, path, "cannot read: ", std::strerror(errno));
  if (n == 0) read_fail(Status::io_error, path, "file is empty");
  std::rewind(f.get());
  auto starts = [&](const char* s, std::size_t len) {
    return n >= len && std::memcmp(sig, s, len) == 0;
  };
  ImageHeader h;
  if (starts("\x89PNG\r\n\x1a\n", 8)) {
    h = read_png(path, f.get(), limits, pixels);
    h.file_format = FileFormat::png;
  } else if (starts("\xff\xd8\xff", 3)) {
    h = read_jpeg(path, f.get(), limits, pixels);
    h.file_format = FileFormat::jpeg;
  } else if (starts("II*\0", 4) || starts("MM\0*", 4) || starts("II+\0", 4) || starts("MM\0+", 4)) {
    h = read_tiff(path, f.get(), limits, pixels);
    h.file_format = FileFormat::tiff;
  } else if (starts("\x93NUMPY", 6)) {
    h = read_npy(path, f.get(), limits, pixels);
    h.file_format = FileFormat::npy;
  } else if (n >= 2 && sig[0] == 'P' && sig[1] >= '1' && sig[1] <= '7') {
    h = read_pnm(path, f.get(), limits, pixels);
    h.file_format = FileFormat::pnm;
  } else if (starts("GIF8", 4) || starts("BM", 2) || starts("RIFF", 4)) {
    read_fail(Status::unsupported, path,
              "GIF, BMP and RIFF (WebP) files are not supported (PNG, JPEG, TIFF, PGM/PPM, NPY)");
  } else {
    read_fail(Status::io_error, path,
              "not a PNG, JPEG, TIFF, PGM/PPM or NPY file (unrecognised signature)");
  }
  return h;
}

}  // namespace

IoLimits IoLimits::from_env() {
  IoLimits l;
  l.max_side = env_limit("PIXFLOW_MAX_SIDE", l.max_side, l.max_side_from);
  l.max_pixels = env_limit("PIXFLOW_MAX_PIXELS", l.max_pixels, l.max_pixels_from);
  l.max_bytes = env_limit("PIXFLOW_MAX_BYTES", l.max_bytes, l.max_bytes_from);
  return l;
}

FileFormat format_from_path(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext == ".png") return FileFormat::png;
  if (ext == ".jpg" || ext == ".jpeg") return FileFormat::jpeg;
  if (ext == ".tif" || ext == ".tiff") return FileFormat::tiff;
  if (ext == ".pgm" || ext == ".ppm" || ext == ".pnm") return FileFormat::pnm;
  if (ext == ".npy") return FileFormat::npy;
  throw Error(Status::invalid_argument,
              detail::cat("write_image: ", path, ": unknown extension '", ext,
                          "' (expected .png .jpg .jpeg .tif .tiff .pgm .ppm .pnm .npy)"));
}

namespace detail::io {

void check_size(const std::string& path, std::int64_t w, std::int64_t h, Format fmt,
                const IoLimits& limits) {
  if (w <= 0 || h <= 0)
    read_fail(Status::io_error, path, "invalid image size ", w, "x", h, " in the header");
  const auto side = [&] {
    return limit_origin(limits.max_side_from, limits.max_side, IoLimits::kDefaultMaxSide,
                        "--max-side", "PIXFLOW_MAX_SIDE");
  };
  if (w > limits.max_side)
    read_fail(Status::limit_exceeded, path, "width ", w,
              " exceeds the limit max_side = ", limits.max_side, " ", side());
  if (h > limits.max_side)
    read_fail(Status::limit_exceeded, path, "height ", h,
              " exceeds the limit max_side = ", limits.max_side, " ", side());
  std::int64_t pixels = 0, bytes = 0;
  const bool pixels_overflow = __builtin_mul_overflow(w, h, &pixels);
  if (pixels_overflow || pixels > limits.max_pixels)
    read_fail(Status::limit_exceeded, path, "size ", w, "x", h,
              pixels_overflow ? std::string() : cat(" (", pixels, " pixels)"),
              " exceeds the limit max_pixels = ", limits.max_pixels, " ",
              limit_origin(limits.max_pixels_from, limits.max_pixels, IoLimits::kDefaultMaxPixels,
                           "--max-pixels", "PIXFLOW_MAX_PIXELS"));
  const bool bytes_overflow =
      __builtin_mul_overflow(pixels, std::int64_t(fmt.pixel_bytes()), &bytes);
  if (bytes_overflow || bytes > limits.max_bytes)
    read_fail(Status::limit_exceeded, path, "decoded size of ", w, "x", h, " ", to_string(fmt),
              bytes_overflow ? std::string() : cat(" (", bytes, " bytes)"),
              " exceeds the limit max_bytes = ", limits.max_bytes, " ",
              limit_origin(limits.max_bytes_from, limits.max_bytes, IoLimits::kDefaultMaxBytes,
                           "--max-bytes", "PIXFLOW_MAX_BYTES"));
}

std::int64_t file_size(std::FILE* f) {
  struct stat st {};
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  return std::int64_t(st.st_size);
}

std::int64_t bytes_left(std::FILE* f) {
  const long pos = std::ftell(f);
  const std::int64_t size = file_size(f);
  if (pos < 0 || size < 0) return -1;
  return std::max<std::int64_t>(0, size - pos);
}

std::string truncation_message(std::int64_t at, std::int64_t size, std::int64_t need,
                               const std::string& what) {
  // Where the file ends first (that is what a user compares with the size it should have),
  // then what the reader was after.
  const std::int64_t end = size >= 0 ? size : need < 0 ? at : -1;
  std::string s = end >= 0 ? cat("file is truncated at byte ", end, ": expected ")
                           : std::string("file is truncated: expected ");
  return need >= 0 ? s + cat(need, " bytes of ", what, " from byte ", at) : s + what;
}

void read_exact(std::FILE* f, void* dst, std::size_t n, const std::string& path, const char* what) {
  if (n == 0) return;
  const long at = std::ftell(f);
  if (std::fread(dst, 1, n, f) != n) {
    if (std::ferror(f))
      read_fail(Status::io_error, path, "read failed at byte ", at, ": ", std::strerror(errno));
    read_fail(Status::io_error, path, truncation_message(at, file_size(f), std::int64_t(n), what));
  }
}

}  // namespace detail::io

Image read_image(const std::string& path, const IoLimits& limits) {
  Image img;
  read_any(path, limits, &img);
  return img;
}

ImageHeader read_image_header(const std::string& path, const IoLimits& limits) {
  return read_any(path, limits, nullptr);
}

void check_write_format(const std::string& path, Format fmt) {
  using namespace detail::io;
  const FileFormat ff = format_from_path(path);
  const std::string ext = lower_extension(path);
  if (ff == FileFormat::tiff && !have_tiff())
    write_fail(Status::unsupported, path, "TIFF: pixflow was built without libtiff");
  if (!can_write(ff, ext, fmt))
    write_fail(Status::unsupported, path, format_name(ff, ext), " cannot hold ", to_string(fmt),
               " images (", depth_name(fmt.depth), ", ", fmt.channels, " channels)");
}

void write_image(const std::string& path, ConstImageView img, const WriteOptions& opt) {
  using namespace detail::io;
  if (!img.location().is_host())
    write_fail(Status::invalid_argument, path, "the image must be on the host (got ",
               to_string(img.location()), "); copy it first");
  if (img.empty() || img.data() == nullptr || img.channels() < 1 || img.channels() > 4 ||
      img.stride() < img.row_bytes())
    write_fail(Status::invalid_argument, path,
               "the image must be non-empty with stride >= ", "row bytes (got ", img.width(), "x",
               img.height(), " ", to_string(img.format()), ", stride ", img.stride(), ")");
  check_write_format(path, img.format());
  const FileFormat ff = format_from_path(path);
  if (ff == FileFormat::jpeg && (opt.jpeg_quality < 1 || opt.jpeg_quality > 100))
    write_fail(Status::invalid_argument, path, "jpeg_quality must be in [1, 100] (got ",
               opt.jpeg_quality, ")");
  // The temporary file: same folder (so rename is atomic), hidden, ends in ".tmp".
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
  std::string tmp = (dir / ("." + p.filename().string() + ".XXXXXX.tmp")).string();
  const int fd = mkstemps(tmp.data(), 4);
  if (fd < 0)
    write_fail(Status::io_error, path, "cannot create a temporary file in '", dir.string(),
               "': ", std::strerror(errno));
  // mkstemp creates 0600; give the result the mode a plain fopen would have.
  (void)fchmod(fd, 0666 & ~current_umask());
  std::FILE* f = nullptr;
  try {
    if (ff == FileFormat::tiff) {
      ::close(fd);
      write_tiff(path, tmp, img);
    } else {
      f = fdopen(fd, "wb");
      if (!f) {
        ::close(fd);
        write_fail(Status::io_error, path,
                   "cannot open the temporary file: ", std::strerror(errno));
      }
      switch (ff) {
        case FileFormat::png:
          write_png(path, f, img);
          break;
        case FileFormat::jpeg:
          write_jpeg(path, f, img, opt.jpeg_quality);
          break;
        case FileFormat::pnm:
          write_pnm(path, f, img);
          break;
        case FileFormat::npy:
          write_npy(path, f, img);
          break;
        case FileFormat::tiff:
          break;
      }
      const bool bad = std::fflush(f) != 0 || std::ferror(f);
      const int err = errno;
      std::FILE* g = f;
      f = nullptr;
      if (std::fclose(g) != 0 || bad)
        write_fail(Status::io_error, path, "write failed: ", std::strerror(bad ? err : errno));
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      write_fail(Status::io_error, path,
                 "cannot rename the temporary file over it: ", std::strerror(errno));
  } catch (...) {
    if (f) std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
}

}  // namespace pixflow
