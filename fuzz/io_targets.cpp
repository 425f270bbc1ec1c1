// The decoder targets: the input bytes become a file (a memfd reached through /proc/self/fd,
// so nothing touches the disk) that read_image reads with the fuzz limits; each codec's target
// takes only inputs with its signature. A decoded image must satisfy the format's contract
// (docs/contract.md §1) and the limits, every byte of it must be readable, and the lossless
// formats (PNG, TIFF, PGM/PPM, NPY) must give the same pixels back after write_image +
// read_image.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "fuzz/fuzz_util.hpp"
#include "fuzz/targets.hpp"

namespace pixflow::fuzz {

namespace {

namespace fs = std::filesystem;

enum class Codec { png, jpeg, tiff, pnm, npy, any };

const char* codec_name(Codec c) {
  switch (c) {
    case Codec::png:
      return "png";
    case Codec::jpeg:
      return "jpeg";
    case Codec::tiff:
      return "tiff";
    case Codec::pnm:
      return "pnm";
    case Codec::npy:
      return "npy";
    case Codec::any:
      return "read_image";
  }
  return "?";
}

/// The input as a file. One per process: a memfd when the kernel has them, else a file in
/// the process's scratch folder. Each call replaces the contents.
class InputFile {
 public:
  static InputFile& get() {
    static InputFile f;
    return f;
  }
  const std::string& write(const std::uint8_t* data, std::size_t size) {
    if (ftruncate(fd_, 0) != 0) die("fuzz: ftruncate failed: ", std::strerror(errno));
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = pwrite(fd_, data + done, size - done, off_t(done));
      if (n <= 0) die("fuzz: pwrite failed: ", std::strerror(errno));
      done += std::size_t(n);
    }
    return path_;
  }

 private:
  InputFile() {
    fd_ = memfd_create("pixflow-fuzz-input", MFD_CLOEXEC);
    if (fd_ >= 0 && access(("/proc/self/fd/" + std::to_string(fd_)).c_str(), R_OK) == 0) {
      path_ = "/proc/self/fd/" + std::to_string(fd_);
      return;
    }
    if (fd_ >= 0) close(fd_);
    path_ = (scratch_dir() / "input").string();
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) die("fuzz: cannot create ", path_, ": ", std::strerror(errno));
  }
  int fd_ = -1;
  std::string path_;
};

/// The codec read_image picks for these bytes (its signature rules, src/io/io.cpp), or
/// Codec::any for none.
Codec detect(const std::uint8_t* d, std::size_t n) {
  auto starts = [&](const char* sig, std::size_t len) {
    return n >= len && std::memcmp(d, sig, len) == 0;
  };
  if (starts("\x89PNG\r\n\x1a\n", 8)) return Codec::png;
  if (starts("\xff\xd8\xff", 3)) return Codec::jpeg;
  if (starts("II*\0", 4) || starts("MM\0*", 4) || starts("II+\0", 4) || starts("MM\0+", 4))
    return Codec::tiff;
  if (starts("\x93NUMPY", 6)) return Codec::npy;
  if (n >= 2 && d[0] == 'P' && d[1] >= '1' && d[1] <= '7') return Codec::pnm;
  return Codec::any;
}

/// The formats a codec may return (docs/contract.md §1, docs/io.md).
bool format_allowed(Codec c, Format f) {
  const Depth d = f.depth;
  const int ch = f.channels;
  switch (c) {
    case Codec::png:
      return (d == Depth::u8 || d == Depth::u16) && (ch == 1 || ch == 3 || ch == 4);
    case Codec::jpeg:
      return d == Depth::u8 && (ch == 1 || ch == 3);
    case Codec::tiff:
      return d != Depth::s32 && (ch == 1 || ch == 3 || ch == 4);
    case Codec::pnm:
      return (d == Depth::u8 || d == Depth::u16) && (ch == 1 || ch == 3);
    case Codec::npy:
    case Codec::any:
      return ch >= 1 && ch <= 4;
  }
  return false;
}

/// The extension a decoded image is written back with for the round trip ("" = none: JPEG
/// is lossy, and read_image's codec is not known here).
std::string round_trip_extension(Codec c, Format f) {
  switch (c) {
    case Codec::png:
      return ".png";
    case Codec::tiff:
      return ".tif";
    case Codec::pnm:
      return f.channels == 1 ? ".pgm" : ".ppm";
    case Codec::npy:
      return ".npy";
    default:
      return "";
  }
}

/// Round trips only images this small: the write + read costs more than the decode.
constexpr std::int64_t kRoundTripPixels = 1 << 16;

void check_decoded(Codec c, const Image& img, const IoLimits& lim) {
  const char* who = codec_name(c);
  if (img.empty() || img.data() == nullptr || !img.location().is_host())
    die(who, ": decoded an empty or non-host image without an error");
  if (img.width() > lim.max_side || img.height() > lim.max_side ||
      img.width() * img.height() > lim.max_pixels ||
      img.width() * img.height() * std::int64_t(img.format().pixel_bytes()) > lim.max_bytes)
    die(who, ": decoded ", img.width(), "x", img.height(), " ", to_string(img.format()),
        " beyond the limits");
  if (!format_allowed(c, img.format()))
    die(who, ": decoded a format the codec does not promise: ", to_string(img.format()));
  if (img.stride() < img.view().row_bytes()) die(who, ": stride below the row size");
  touch(img.view());
}

void round_trip(Codec c, const Image& img) {
  const std::string ext = round_trip_extension(c, img.format());
  if (ext.empty() || img.width() * img.height() > kRoundTripPixels) return;
  const std::string path = (scratch_dir() / ("round_trip" + ext)).string();
  try {
    write_image(path, img);
  } catch (const Error& e) {
    // A decoded image is always writable in its own format; only the disk may fail.
    if (e.status() != Status::io_error)
      die(codec_name(c), ": decoded ", to_string(img.format()),
          " but write_image refuses it: ", e.what());
    return;
  }
  Image back;
  try {
    back = read_image(path, fuzz_limits());
  } catch (const Error& e) {
    die(codec_name(c), ": cannot read back what write_image wrote (", to_string(img.format()), " ",
        img.width(), "x", img.height(), "): ", e.what());
  }
  const std::string diff = compare_bits(back.view(), img.view());
  if (!diff.empty())
    die(codec_name(c), ": the round trip through ", ext, " changed the image: ", diff);
}

/// Reads the bytes with read_image. A codec's target takes only inputs with its signature
/// (returning -1, which keeps others out of its corpus); read_image's takes everything.
int decode_target(Codec target, const std::uint8_t* data, std::size_t size) {
  const Codec c = detect(data, size);
  if (target != Codec::any && c != target) return -1;
  if (c == Codec::tiff && !have_tiff()) return 0;
  const std::string& path = InputFile::get().write(data, size);
  const IoLimits lim = fuzz_limits();
  Image img;
  try {
    img = read_image(path, lim);
  } catch (const Error& e) {
    check_error_status(codec_name(c), e,
                       {Status::io_error, Status::unsupported, Status::limit_exceeded});
    return 0;
  }
  if (c == Codec::any) die("read_image: decoded an image from bytes of no known signature");
  check_decoded(c, img, lim);
  round_trip(c, img);
  return 0;
}

}  // namespace

IoLimits fuzz_limits() {
  IoLimits l;
  l.max_side = 4096;
  l.max_pixels = std::int64_t(1) << 22;
  l.max_bytes = std::int64_t(1) << 26;
  return l;
}

int fuzz_png(const std::uint8_t* d, std::size_t n) {
  return decode_target(Codec::png, d, n);
}
int fuzz_jpeg(const std::uint8_t* d, std::size_t n) {
  return decode_target(Codec::jpeg, d, n);
}
int fuzz_tiff(const std::uint8_t* d, std::size_t n) {
  return decode_target(Codec::tiff, d, n);
}
int fuzz_pnm(const std::uint8_t* d, std::size_t n) {
  return decode_target(Codec::pnm, d, n);
}
int fuzz_npy(const std::uint8_t* d, std::size_t n) {
  return decode_target(Codec::npy, d, n);
}
int fuzz_read_image(const std::uint8_t* d, std::size_t n) {
  return decode_target(Codec::any, d, n);
}

}  // namespace pixflow::fuzz
