// The format-independent part of file I/O: limits, format detection by signature, dispatch
// to the codecs, and atomic writes (an unnamed O_TMPFILE file linked in under the output's
// name, or a named temporary file renamed over it, always in the output's folder).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <span>

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
    case FileFormat::webp:
      return d == Depth::u8 && (c == 1 || c == 3 || c == 4);
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
    case FileFormat::webp:
      return "WebP";
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

// ---- named temporary files, and the table a signal handler reads -------------------------

/// One slot per named temporary file that exists now. A signal handler may read the table at
/// any moment, even on the thread that is changing it, so every field is a lock-free atomic
/// and `state` works as a sequence lock: (generation << 2) | phase, where phase 0 is free, 1
/// being filled, 2 holds a name. The handler copies a slot and uses the copy only if `state`
/// did not change meanwhile; freeing a slot starts a new generation, so a slot that was
/// freed and filled again in between does not look unchanged.
struct PendingSlot {
  std::atomic<std::uint32_t> state{0};
  std::atomic<int> dir{-1};
  std::array<std::atomic<std::uint64_t>, 4> name{};  // NUL-terminated, at most 31 bytes
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free &&
                  std::atomic<std::uint64_t>::is_always_lock_free &&
                  std::atomic<int>::is_always_lock_free,
              "remove_pending_temporaries must be async-signal-safe");
// More writes than this at once in the fallback are not registered: they still clean up
// after themselves, only a signal handler would miss them.
constexpr int kPendingSlots = 256;
PendingSlot g_pending[kPendingSlots];

std::atomic<bool> g_force_named{false};

/// Registers `name` (relative to the folder `dir`); returns the slot, or -1 when all are
/// taken.
int register_pending(int dir, const char* name) noexcept {
  std::uint64_t words[4] = {};
  std::memcpy(words, name, std::min<std::size_t>(std::strlen(name), sizeof words - 1));
  for (int i = 0; i < kPendingSlots; ++i) {
    PendingSlot& s = g_pending[i];
    std::uint32_t st = s.state.load(std::memory_order_relaxed);
    if ((st & 3u) != 0 || !s.state.compare_exchange_strong(st, st | 1u, std::memory_order_acquire))
      continue;
    s.dir.store(dir, std::memory_order_relaxed);
    for (int k = 0; k < 4; ++k) s.name[std::size_t(k)].store(words[k], std::memory_order_relaxed);
    s.state.store((st & ~3u) | 2u, std::memory_order_release);
    return i;
  }
  return -1;
}

void unregister_pending(int slot) noexcept {
  if (slot < 0) return;
  PendingSlot& s = g_pending[slot];
  const std::uint32_t st = s.state.load(std::memory_order_relaxed);
  s.state.store(((st >> 2) + 1u) << 2, std::memory_order_release);
}

/// Writes ".pixflow-" and 6 characters of [A-Za-z0-9]: a fixed 15 bytes, whatever the
/// output's name, so that every valid output name (up to NAME_MAX) has a valid temporary.
void make_temp_name(char (&out)[16]) noexcept {
  static std::atomic<std::uint64_t> counter{0};
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  std::uint64_t x = std::uint64_t(ts.tv_nsec) ^ (std::uint64_t(ts.tv_sec) << 30) ^
                    (std::uint64_t(getpid()) << 40) ^
                    counter.fetch_add(1, std::memory_order_relaxed) * 0x9e3779b97f4a7c15ull;
  // splitmix64's finaliser: neighbouring inputs give unrelated names.
  x ^= x >> 30, x *= 0xbf58476d1ce4e5b9ull, x ^= x >> 27, x *= 0x94d049bb133111ebull, x ^= x >> 31;
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::memcpy(out, ".pixflow-", 9);
  for (int i = 0; i < 6; ++i, x /= 62) out[9 + i] = kChars[x % 62];
  out[15] = '\0';
}

/// Owns a file descriptor.
struct Fd {
  int v = -1;
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (v >= 0) ::close(v);
  }
};

/// Where a write goes: the folder and the name in it, after following symlinks.
struct Target {
  std::string dir, name;
};

/// Follows `path` while it is a symlink (a relative link is relative to its own folder), so
/// that the write replaces the link's final target, in the target's folder, and the link
/// stays a link. A path that does not exist (or a dangling link's target) is created.
Target resolve_target(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p(path);
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    if (hops == 40)  // Linux's own limit (ELOOP)
      detail::io::write_fail(Status::io_error, path, "too many levels of symbolic links");
    std::string buf(PATH_MAX, '\0');
    const ssize_t n = readlink(p.c_str(), buf.data(), buf.size());
    if (n < 0 || std::size_t(n) >= buf.size())
      detail::io::write_fail(Status::io_error, path, "cannot read the symbolic link '", p.string(),
                             "': ", std::strerror(n < 0 ? errno : ENAMETOOLONG));
    buf.resize(std::size_t(n));
    const fs::path link(buf);
    p = link.is_absolute() ? link : p.parent_path() / link;
  }
  Target t;
  t.dir = p.has_parent_path() ? p.parent_path().string() : ".";
  t.name = p.filename().string();
  if (t.name.empty() || t.name == "." || t.name == "..")
    detail::io::write_fail(Status::io_error, path, "'", p.string(), "' names a folder");
  return t;
}

/// The file being written, in the target's folder: an unnamed O_TMPFILE file where the
/// kernel and the file system have them, else a named temporary file (registered for
/// remove_pending_temporaries). Until publish() succeeds, the destructor discards it: an
/// unnamed file vanishes when closed, a named one is unlinked.
class Output {
 public:
  Output(const std::string& path, Target t) : path_(path), t_(std::move(t)) {
    // O_PATH: the folder needs no read permission, only search and write, as for rename.
#ifdef O_PATH
    dir_.v = ::open(t_.dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
#else
    dir_.v = ::open(t_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#endif
    if (dir_.v < 0) fail("cannot open its folder '", t_.dir, "': ", std::strerror(errno));
#ifdef O_TMPFILE
    // Publishing an unnamed file links /proc/self/fd/N; without /proc, take the fallback.
    if (!g_force_named.load(std::memory_order_relaxed) && ::access("/proc/self/fd", X_OK) == 0) {
      // 0666: open applies the umask, as for any new file.
      fd_.v = ::openat(dir_.v, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
      if (fd_.v >= 0) {
        unnamed_ = true;
        return;
      }
      // Kernels before 3.11 and file systems without O_TMPFILE answer one of these;
      // anything else (no permission, read-only, full) would fail a named file too.
      if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
        fail("cannot create a file in '", t_.dir, "': ", std::strerror(errno));
    }
#endif
    for (int attempt = 0;; ++attempt) {
      make_temp_name(tmp_);
      fd_.v = ::openat(dir_.v, tmp_, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_.v >= 0) break;
      const int err = errno;
      if (err != EEXIST || attempt == 99) {
        tmp_[0] = '\0';
        fail("cannot create a temporary file in '", t_.dir, "': ", std::strerror(err));
      }
    }
    slot_ = register_pending(dir_.v, tmp_);
  }
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  ~Output() {
    // Unlink before unregistering: a signal handler in between still finds the name.
    if (!published_ && tmp_[0] != '\0') ::unlinkat(dir_.v, tmp_, 0);
    unregister_pending(slot_);
  }

  int fd() const {
    return fd_.v;
  }

  /// Gives the written file the output's name.
  void publish() {
#ifdef O_TMPFILE
    if (unnamed_) {
      if (link_unnamed(t_.name.c_str()) == 0) {
        published_ = true;
        return;
      }
      if (errno != EEXIST)
        fail("cannot link the new file into '", t_.dir, "': ", std::strerror(errno));
      // The output exists: a link cannot replace it, a rename can. The temporary name
      // exists from here to the rename, microseconds; it is registered meanwhile.
      keep_mode();
      for (int attempt = 0;; ++attempt) {
        make_temp_name(tmp_);
        if (link_unnamed(tmp_) == 0) break;
        const int err = errno;
        if (err != EEXIST || attempt == 99) {
          tmp_[0] = '\0';
          fail("cannot link the new file into '", t_.dir, "': ", std::strerror(err));
        }
      }
      slot_ = register_pending(dir_.v, tmp_);
    } else {
      keep_mode();
    }
#else
    keep_mode();
#endif
    if (::renameat(dir_.v, tmp_, dir_.v, t_.name.c_str()) != 0)
      fail("cannot rename the temporary file over it: ", std::strerror(errno));
    published_ = true;
  }

 private:
  template <class... A>
  [[noreturn]] void fail(const A&... msg) const {
    detail::io::write_fail(Status::io_error, path_, msg...);
  }

#ifdef O_TMPFILE
  /// Links the unnamed file as `name` in the folder; 0 or -1 with errno, as linkat.
  int link_unnamed(const char* name) const {
    char proc[40];
    std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd_.v);
    if (::linkat(AT_FDCWD, proc, dir_.v, name, AT_SYMLINK_FOLLOW) == 0) return 0;
    if (errno != ENOENT) return -1;
    // /proc went away: AT_EMPTY_PATH does the same where the kernel permits it to us.
    return ::linkat(fd_.v, "", dir_.v, name, AT_EMPTY_PATH);
  }
#endif

  /// A replaced file keeps its permission bits (the new file has 0666 & ~umask). Errors are
  /// ignored: some file systems (FAT, some FUSE) refuse chmod, and the data is what counts.
  void keep_mode() const {
    struct stat st {};
    if (::fstatat(dir_.v, t_.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
      (void)::fchmod(fd_.v, st.st_mode & 0777);
  }

  std::string path_;  // as the caller gave it, for messages
  Target t_;
  Fd dir_, fd_;
  bool unnamed_ = false, published_ = false;
  char tmp_[16] = {};  // the named temporary file while one exists
  int slot_ = -1;
};

/// Encodes `img` into the open file `fd` (which stays open).
void encode(FileFormat ff, const std::string& path, int fd, ConstImageView img,
            const WriteOptions& opt) {
  using namespace detail::io;
  if (ff == FileFormat::tiff) return write_tiff(path, fd, img, opt);
  const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0)
    write_fail(Status::io_error, path, "cannot open the new file: ", std::strerror(errno));
  FilePtr f(::fdopen(copy, "wb"));
  if (!f) {
    ::close(copy);
    write_fail(Status::io_error, path, "cannot open the new file: ", std::strerror(errno));
  }
  switch (ff) {
    case FileFormat::png:
      write_png(path, f.get(), img, opt);
      break;
    case FileFormat::jpeg:
      write_jpeg(path, f.get(), img, opt);
      break;
    case FileFormat::pnm:
      write_pnm(path, f.get(), img);
      break;
    case FileFormat::npy:
      write_npy(path, f.get(), img);
      break;
    case FileFormat::webp:
      write_webp(path, f.get(), img, opt);
      break;
    case FileFormat::tiff:
      break;
  }
  const bool bad = std::fflush(f.get()) != 0 || std::ferror(f.get());
  const int err = errno;
  if (std::fclose(f.release()) != 0 || bad)
    write_fail(Status::io_error, path, "write failed: ", std::strerror(bad ? err : errno));
}

ImageHeader read_stream(const std::string& path, std::FILE* file, const IoLimits& limits,
                        Image* pixels, ImageMetadata* meta = nullptr);

/// read_image and read_image_header: detection by signature, then the codec.
ImageHeader read_any(const std::string& path, const IoLimits& limits, Image* pixels,
                     ImageMetadata* meta = nullptr) {
  using namespace detail::io;
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f) read_fail(Status::io_error, path, "cannot open: ", std::strerror(errno));
  return read_stream(path, f.get(), limits, pixels, meta);
}

/// An unnamed file holding `bytes`, positioned at its start: the codecs read through a
/// descriptor (libtiff seeks on it), so memory is decoded as a file that has no name.
detail::io::FilePtr unnamed_file(std::span<const std::byte> bytes, const std::string& name) {
  using namespace detail::io;
#if defined(__linux__)
  int fd = ::memfd_create("pixflow-decode", MFD_CLOEXEC);
  FilePtr f(fd >= 0 ? ::fdopen(fd, "w+b") : std::tmpfile());
  if (fd >= 0 && !f) ::close(fd);
#else
  FilePtr f(std::tmpfile());
#endif
  if (!f)
    read_fail(Status::io_error, name, "cannot create an unnamed file: ", std::strerror(errno));
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size())
    read_fail(Status::io_error, name, "cannot buffer ", bytes.size(),
              " bytes: ", std::strerror(errno));
  if (std::fflush(f.get()) != 0 || std::fseek(f.get(), 0, SEEK_SET) != 0)
    read_fail(Status::io_error, name, "cannot buffer the bytes: ", std::strerror(errno));
  return f;
}

/// Detection by signature, then the codec, on an open file at its start.
ImageHeader read_stream(const std::string& path, std::FILE* file, const IoLimits& limits,
                        Image* pixels, ImageMetadata* meta) {
  if (meta) *meta = ImageMetadata{};
  using namespace detail::io;
  if (limits.max_side <= 0 || limits.max_pixels <= 0 || limits.max_bytes <= 0)
    throw Error(
        Status::invalid_argument,
        detail::cat("read_image: limits must be positive (max_side ", limits.max_side,
                    ", max_pixels ", limits.max_pixels, ", max_bytes ", limits.max_bytes, ")"));
  unsigned char sig[12] = {};
  const std::size_t n = std::fread(sig, 1, sizeof sig, file);
  if (std::ferror(file)) read_fail(Status::io_error, path, "cannot read: ", std::strerror(errno));
  if (n == 0) read_fail(Status::io_error, path, "file is empty");
  std::rewind(file);
  auto starts = [&](const char* s, std::size_t len) {
    return n >= len && std::memcmp(sig, s, len) == 0;
  };
  ImageHeader h;
  if (starts("\x89PNG\r\n\x1a\n", 8)) {
    h = read_png(path, file, limits, pixels, meta);
    h.file_format = FileFormat::png;
  } else if (starts("\xff\xd8\xff", 3)) {
    h = read_jpeg(path, file, limits, pixels, meta);
    h.file_format = FileFormat::jpeg;
  } else if (starts("II*\0", 4) || starts("MM\0*", 4) || starts("II+\0", 4) || starts("MM\0+", 4)) {
    h = read_tiff(path, file, limits, pixels, meta);
    h.file_format = FileFormat::tiff;
  } else if (starts("\x93NUMPY", 6)) {
    h = read_npy(path, file, limits, pixels);
    h.file_format = FileFormat::npy;
  } else if (n >= 2 && sig[0] == 'P' && sig[1] >= '1' && sig[1] <= '7') {
    h = read_pnm(path, file, limits, pixels);
    h.file_format = FileFormat::pnm;
  } else if (starts("RIFF", 4) && (n < 12 || std::memcmp(sig + 8, "WEBP", 4) == 0)) {
    // (a RIFF file cut before its form type is read as a cut WebP: "truncated")
    h = read_webp(path, file, limits, pixels);
    h.file_format = FileFormat::webp;
  } else if (starts("GIF8", 4) || starts("BM", 2) || starts("RIFF", 4)) {
    read_fail(Status::unsupported, path,
              "GIF, BMP and RIFF files other than WebP are not supported (PNG, JPEG, TIFF, "
              "WebP, PGM/PPM, NPY)");
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
  if (ext == ".webp") return FileFormat::webp;
  throw Error(Status::invalid_argument,
              detail::cat("write_image: ", path, ": unknown extension '", ext,
                          "' (expected .png .jpg .jpeg .tif .tiff .pgm .ppm .pnm .npy .webp)"));
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

void force_named_temporaries(bool on) {
  g_force_named.store(on, std::memory_order_relaxed);
}

}  // namespace detail::io

Image read_image(const std::string& path, const IoLimits& limits) {
  Image img;
  read_any(path, limits, &img);
  return img;
}

Image read_image(const std::string& path, const IoLimits& limits, ImageMetadata* metadata) {
  Image img;
  read_any(path, limits, &img, metadata);
  return img;
}

Image decode_image(std::span<const std::byte> bytes, const std::string& name,
                   const IoLimits& limits, ImageMetadata* metadata) {
  if (bytes.empty()) detail::io::read_fail(Status::io_error, name, "file is empty");
  const detail::io::FilePtr f = unnamed_file(bytes, name);
  Image img;
  (void)read_stream(name, f.get(), limits, &img, metadata);
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
  if (ff == FileFormat::webp && !have_webp())
    write_fail(Status::unsupported, path, "WebP: pixflow was built without libwebp");
  if (!can_write(ff, ext, fmt))
    write_fail(Status::unsupported, path, format_name(ff, ext), " cannot hold ", to_string(fmt),
               " images (", depth_name(fmt.depth), ", ", fmt.channels, " channels)",
               ff == FileFormat::jpeg && fmt.channels == 4
                   ? "; JPEG has no alpha: drop the alpha channel first, or write PNG or TIFF"
                   : "");
}

namespace {

/// write_image's and encode_image's checks, before any file exists; returns the format.
FileFormat check_write(const std::string& path, ConstImageView img, const WriteOptions& opt) {
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
  if ((ff == FileFormat::jpeg || ff == FileFormat::webp) &&
      (opt.jpeg_quality < 1 || opt.jpeg_quality > 100))
    write_fail(Status::invalid_argument, path, "jpeg_quality must be in [1, 100] (got ",
               opt.jpeg_quality, ")");
  if (opt.compression < -1 || opt.compression > 9)
    write_fail(Status::invalid_argument, path,
               "compression must be in [0, 9], or -1 for the default (got ", opt.compression, ")");
  return ff;
}

}  // namespace

void write_image(const std::string& path, ConstImageView img, const WriteOptions& opt) {
  const FileFormat ff = check_write(path, img, opt);
  Output out(path, resolve_target(path));
  encode(ff, path, out.fd(), img, opt);
  out.publish();
}

std::vector<std::byte> encode_image(ConstImageView img, const std::string& format,
                                    const WriteOptions& opt) {
  using namespace detail::io;
  const std::string name = "<memory>" + (format.starts_with('.') ? format : "." + format);
  const FileFormat ff = check_write(name, img, opt);
  // The codecs write to a descriptor (libtiff seeks): an unnamed file, read back whole.
  const FilePtr f = unnamed_file({}, name);
  encode(ff, name, ::fileno(f.get()), img, opt);
  const off_t size = ::lseek(::fileno(f.get()), 0, SEEK_END);
  if (size < 0 || ::lseek(::fileno(f.get()), 0, SEEK_SET) != 0)
    write_fail(Status::io_error, name, "cannot read the encoded bytes: ", std::strerror(errno));
  std::vector<std::byte> bytes(static_cast<std::size_t>(size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(::fileno(f.get()), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      write_fail(Status::io_error, name,
                 "cannot read the encoded bytes: ", n < 0 ? std::strerror(errno) : "short read");
    done += std::size_t(n);
  }
  return bytes;
}

void remove_pending_temporaries() noexcept {
  for (PendingSlot& s : g_pending) {
    const std::uint32_t st = s.state.load(std::memory_order_acquire);
    if ((st & 3u) != 2u) continue;
    const int dir = s.dir.load(std::memory_order_relaxed);
    std::uint64_t words[4];
    for (int k = 0; k < 4; ++k) words[k] = s.name[std::size_t(k)].load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s.state.load(std::memory_order_relaxed) != st) continue;  // changed while copied
    char name[sizeof words];
    std::memcpy(name, words, sizeof words);
    name[sizeof name - 1] = '\0';
    ::unlinkat(dir, name, 0);
  }
}

}  // namespace pixflow
