// Helpers shared by the fuzz target bodies, and the table of targets.
#include "fuzz/fuzz_util.hpp"

#include <cmath>
#include <cstring>
#include <sstream>
#include <system_error>

#include "fuzz/targets.hpp"

namespace pixflow::fuzz {

namespace fs = std::filesystem;

const std::vector<Target>& targets() {
  static const std::vector<Target> t{
      {"png", fuzz_png, "PNG decoder (libpng) + lossless round trip"},
      {"jpeg", fuzz_jpeg, "JPEG decoder (libjpeg-turbo)"},
      {"tiff", fuzz_tiff, "TIFF decoder (libtiff) + lossless round trip"},
      {"pnm", fuzz_pnm, "PGM/PPM decoder + lossless round trip"},
      {"npy", fuzz_npy, "NPY decoder + lossless round trip"},
      {"read_image", fuzz_read_image, "read_image: signature detection, then any decoder"},
      {"pipeline", fuzz_pipeline, "Pipeline::parse and parameter binding on arbitrary text"},
      {"differential", fuzz_differential, "random pipelines: Backend::cpu == Backend::ref"},
  };
  return t;
}

const Target* find_target(std::string_view name) {
  for (const Target& t : targets())
    if (name == t.name) return &t;
  return nullptr;
}

void check_error_status(const char* who, const Error& e, std::initializer_list<Status> allowed) {
  for (Status s : allowed)
    if (e.status() == s) {
      if (std::strlen(e.what()) == 0) die(who, ": an Error (", status_name(s), ") without message");
      return;
    }
  die(who, ": unexpected status ", status_name(e.status()), ": ", e.what());
}

namespace {
struct Scratch {
  fs::path path;
  Scratch() {
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string tmpl = (base / "pixflow-fuzz-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) die("fuzz: mkdtemp failed in ", base.string());
    path = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};
}  // namespace

const fs::path& scratch_dir() {
  static const Scratch s;
  return s.path;
}

// Where touch() leaves its sum, so that the reads are not optimised away.
volatile unsigned touch_sink = 0;

void touch(const ConstImageView& v) {
  unsigned sum = 0;
  for (std::int64_t y = 0; y < v.height(); ++y) {
    const std::byte* r = v.row_ptr(y);
    for (std::int64_t i = 0; i < v.row_bytes(); ++i) sum += unsigned(r[i]);
  }
  touch_sink = sum;
}

namespace {
double sample_value(const ConstImageView& v, std::int64_t x, std::int64_t y, int c) {
  const std::int64_t i = x * v.channels() + c;
  switch (v.depth()) {
    case Depth::u8:
      return v.row<std::uint8_t>(y)[i];
    case Depth::u16:
      return v.row<std::uint16_t>(y)[i];
    case Depth::s16:
      return v.row<std::int16_t>(y)[i];
    case Depth::s32:
      return v.row<std::int32_t>(y)[i];
    case Depth::f32:
      return v.row<float>(y)[i];
  }
  return 0;
}
}  // namespace

std::string sample_text(const ConstImageView& v, std::int64_t x, std::int64_t y, int c) {
  std::ostringstream s;
  const double d = sample_value(v, x, y, c);
  if (v.depth() == Depth::f32) {
    std::uint32_t bits;
    std::memcpy(&bits, &v.row<float>(y)[x * v.channels() + c], 4);
    s.precision(9);
    s << d << " (0x" << std::hex << bits << ")";
  } else {
    s << d;
  }
  return s.str();
}

std::string compare_bits(const ConstImageView& got, const ConstImageView& want) {
  if (got.width() != want.width() || got.height() != want.height() || got.format() != want.format())
    return detail::cat("shape ", got.width(), "x", got.height(), " ", to_string(got.format()),
                       " instead of ", want.width(), "x", want.height(), " ",
                       to_string(want.format()));
  const std::size_t bytes = depth_bytes(got.depth());
  std::int64_t bad = 0;
  std::ostringstream first;
  for (std::int64_t y = 0; y < got.height(); ++y) {
    if (std::memcmp(got.row_ptr(y), want.row_ptr(y), std::size_t(got.row_bytes())) == 0) continue;
    for (std::int64_t x = 0; x < got.width(); ++x)
      for (int c = 0; c < got.channels(); ++c) {
        const std::size_t off = std::size_t(x * got.channels() + c) * bytes;
        if (std::memcmp(got.row_ptr(y) + off, want.row_ptr(y) + off, bytes) == 0) continue;
        if (got.depth() == Depth::f32 && std::isnan(sample_value(got, x, y, c)) &&
            std::isnan(sample_value(want, x, y, c)))
          continue;
        if (bad < 6)
          first << " (" << x << "," << y << ",c" << c << "): got " << sample_text(got, x, y, c)
                << " want " << sample_text(want, x, y, c) << ";";
        ++bad;
      }
  }
  if (bad == 0) return "";
  return detail::cat(bad, " of ", got.width() * got.height() * got.channels(),
                     " samples differ in ", got.width(), "x", got.height(), " ",
                     to_string(got.format()), ":", first.str());
}

}  // namespace pixflow::fuzz
