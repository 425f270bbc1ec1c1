// PNG through libpng. libpng reports errors by longjmp: the functions that call setjmp
// (decode_header, decode_pixels, encode) hold only PODs in their frames, so a longjmp
// skips no destructor; they return false and the C++ caller throws after they return.
#include <png.h>

#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "src/io/codecs.hpp"

namespace pixflow::detail::io {

namespace {

/// Everything the setjmp frames touch: plain data only.
struct PngState {
  png_structp png = nullptr;
  png_infop info = nullptr;
  std::FILE* file = nullptr;
  char message[256] = {};
  // What the read callback saw: bytes consumed so far (for "at byte N"), the file size, and
  // a short read (truncated: where the read started, its length, what libpng was reading;
  // read_errno: an I/O error).
  std::int64_t pos = 0, size = -1;
  bool truncated = false;
  std::int64_t cut_at = 0, cut_need = 0;
  char cut_what[48] = {};
  int read_errno = 0;
  // Header (filled by decode_header).
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0;
  bool has_trns = false;
  bool want_meta = false;  // read iCCP and pHYs (read_image with metadata)
};

extern "C" void png_error_cb(png_structp png, png_const_charp msg) {
  auto* s = static_cast<PngState*>(png_get_error_ptr(png));
  std::snprintf(s->message, sizeof s->message, "%s", msg ? msg : "unknown libpng error");
  png_longjmp(png, 1);
}
extern "C" void png_warning_cb(png_structp, png_const_charp) {}

/// Names what libpng was reading, for a truncation message: "a chunk header", "the IDAT
/// chunk", ...
void describe_read(png_structp png, char (&out)[48]) {
  const png_uint_32 type = png_get_io_chunk_type(png);
  char name[5] = {};
  for (int i = 0; i < 4; ++i) {
    const char c = char(type >> (24 - 8 * i) & 0xff);
    name[i] = std::isalpha(static_cast<unsigned char>(c)) ? c : '?';
  }
  switch (png_get_io_state(png) & PNG_IO_MASK_LOC) {
    case PNG_IO_SIGNATURE:
      std::snprintf(out, sizeof out, "the PNG signature");
      break;
    case PNG_IO_CHUNK_HDR:
      std::snprintf(out, sizeof out, "a chunk header");
      break;
    case PNG_IO_CHUNK_DATA:
      std::snprintf(out, sizeof out, "the %s chunk", name);
      break;
    case PNG_IO_CHUNK_CRC:
      std::snprintf(out, sizeof out, "the CRC of the %s chunk", name);
      break;
    default:
      std::snprintf(out, sizeof out, "the PNG data");
  }
}

/// libpng's default reader reports every short read as "Read Error"; this one counts the
/// bytes, so that a truncated file can say where it ends and other errors where they are.
extern "C" void png_read_cb(png_structp png, png_bytep data, png_size_t len) {
  auto* s = static_cast<PngState*>(png_get_io_ptr(png));
  const std::size_t got = std::fread(data, 1, len, s->file);
  const std::int64_t at = s->pos;
  s->pos += std::int64_t(got);
  if (got == len) return;
  if (std::ferror(s->file)) {
    s->read_errno = errno ? errno : EIO;
  } else {
    s->truncated = true;
    s->cut_at = at;
    s->cut_need = std::int64_t(len);
    describe_read(png, s->cut_what);
  }
  png_error(png, "short read");  // the caller reports what the fields above say
}

bool decode_header(PngState* s) {
  if (setjmp(png_jmpbuf(s->png))) return false;
  png_set_read_fn(s->png, s, png_read_cb);
  // libpng's own default limit (1e6 per side) would report large images as corrupt; the
  // limits are pixflow's (check_size), so allow what the PNG format allows.
  png_set_user_limits(s->png, 0x7fffffffU, 0x7fffffffU);
  // Only IHDR, PLTE, tRNS and IDAT matter here. libpng allocates a known ancillary chunk's
  // declared length (up to 2^31 - 1) before reading it, going on past its own 8 MB chunk
  // limit with a warning: a 100-byte file could make it allocate 2 GiB. These are skipped
  // unread instead (their bytes are read in small pieces for the CRC).
  // With metadata wanted, iCCP (its profile bounded by libpng's 8 MB chunk allocation
  // limit, png_set_chunk_malloc_max) and pHYs (9 bytes), the last two, are read.
  static const png_byte kIgnored[] =
      "bKGD\0cHRM\0eXIf\0gAMA\0hIST\0iTXt\0oFFs\0pCAL\0sBIT\0sCAL\0sPLT\0"
      "sRGB\0tEXt\0tIME\0zTXt\0iCCP\0pHYs";
  const int ignored = int(sizeof kIgnored / 5) - (s->want_meta ? 2 : 0);
  png_set_keep_unknown_chunks(s->png, PNG_HANDLE_CHUNK_NEVER, kIgnored, ignored);
  if (s->want_meta) png_set_chunk_malloc_max(s->png, 8000000);
  png_read_info(s->png, s->info);
  int interlace = 0, compression = 0, filter = 0;
  png_get_IHDR(s->png, s->info, &s->width, &s->height, &s->bit_depth, &s->color_type, &interlace,
               &compression, &filter);
  s->has_trns = png_get_valid(s->png, s->info, PNG_INFO_tRNS) != 0;
  return true;
}

/// Sets the transforms that give pixflow's layout (see docs/io.md), checks that libpng
/// agrees on the row size, and decodes into `rows`.
bool decode_pixels(PngState* s, png_bytep* rows, png_size_t want_rowbytes) {
  if (setjmp(png_jmpbuf(s->png))) return false;
  if (s->color_type == PNG_COLOR_TYPE_PALETTE) {
    png_set_palette_to_rgb(s->png);
    if (s->has_trns) png_set_tRNS_to_alpha(s->png);
  }
  if (s->color_type == PNG_COLOR_TYPE_GRAY && s->bit_depth < 8)
    png_set_expand_gray_1_2_4_to_8(s->png);
  if (s->color_type == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(s->png);
  if (s->bit_depth == 16 && std::endian::native == std::endian::little) png_set_swap(s->png);
  png_set_interlace_handling(s->png);
  png_read_update_info(s->png, s->info);
  if (png_get_rowbytes(s->png, s->info) != want_rowbytes) {
    std::snprintf(s->message, sizeof s->message, "unexpected decoded row size %lu (want %lu)",
                  static_cast<unsigned long>(png_get_rowbytes(s->png, s->info)),
                  static_cast<unsigned long>(want_rowbytes));
    return false;
  }
  png_read_image(s->png, rows);
  png_read_end(s->png, nullptr);
  return true;
}

struct ReadGuard {
  PngState* s;
  ~ReadGuard() { png_destroy_read_struct(&s->png, &s->info, nullptr); }
};

std::uint32_t crc32(const unsigned char* p, std::size_t n) {
  std::uint32_t c = 0xffffffffu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c ^ 0xffffffffu;
}

std::uint32_t be32(const unsigned char* p) {
  return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | p[3];
}

/// libpng reads every chunk up to the first IDAT before it reports the header, so a file
/// that is only a signature and a huge IHDR would end as a read error. The limits come
/// first: when the first chunk is a well-formed IHDR (length 13, valid CRC), its size is
/// checked here, before libpng runs. The full check after png_read_info stays.
void precheck_ihdr(const std::string& path, std::FILE* f, const IoLimits& limits) {
  unsigned char h[33];
  const std::size_t n = std::fread(h, 1, sizeof h, f);
  std::rewind(f);
  if (n != sizeof h || std::memcmp(h + 8, "\0\0\0\x0dIHDR", 8) != 0 ||
      crc32(h + 12, 17) != be32(h + 29))
    return;  // libpng reports what is wrong
  const int bit_depth = h[24], ct = h[25];
  const int ch = ct == 0 ? 1 : ct == 2 || ct == 3 ? 3 : 4;  // palette: RGB at least
  check_size(path, be32(h + 16), be32(h + 20), Format{bit_depth == 16 ? Depth::u16 : Depth::u8, ch},
             limits);
}

struct WriteState {
  png_structp png = nullptr;
  png_infop info = nullptr;
  std::FILE* file = nullptr;
  char message[256] = {};
};

extern "C" void png_write_error_cb(png_structp png, png_const_charp msg) {
  auto* s = static_cast<WriteState*>(png_get_error_ptr(png));
  std::snprintf(s->message, sizeof s->message, "%s", msg ? msg : "unknown libpng error");
  png_longjmp(png, 1);
}

/// What encode() writes beside the pixels (plain data: it sits in a setjmp frame).
struct PngExtras {
  int level = -1;
  const png_byte* icc = nullptr;
  png_uint_32 icc_len = 0;
  png_uint_32 ppm_x = 0, ppm_y = 0;  // pixels per metre; 0: no pHYs
};

bool encode(WriteState* s, png_uint_32 w, png_uint_32 h, int bit_depth, int color_type,
            png_bytep* rows, const PngExtras& x) {
  if (setjmp(png_jmpbuf(s->png))) return false;
  png_init_io(s->png, s->file);
  if (x.level >= 0) png_set_compression_level(s->png, x.level);
  png_set_IHDR(s->png, s->info, w, h, bit_depth, color_type, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  // A profile libpng rejects (wrong colour space for the image, bad header) is a benign
  // error: a warning, and the chunk is left out, rather than a failed write.
  png_set_benign_errors(s->png, 1);
  if (x.icc_len) png_set_iCCP(s->png, s->info, "ICC profile", 0, x.icc, x.icc_len);
  if (x.ppm_x && x.ppm_y) png_set_pHYs(s->png, s->info, x.ppm_x, x.ppm_y, PNG_RESOLUTION_METER);
  png_write_info(s->png, s->info);
  if (bit_depth == 16 && std::endian::native == std::endian::little) png_set_swap(s->png);
  png_write_image(s->png, rows);
  png_write_end(s->png, nullptr);
  return true;
}

struct WriteGuard {
  WriteState* s;
  ~WriteGuard() { png_destroy_write_struct(&s->png, &s->info); }
};

/// Throws the io_error for a failed decode_header/decode_pixels: the truncation, the read
/// error, or libpng's message with the byte it had reached.
[[noreturn]] void png_fail(const std::string& path, const PngState& s) {
  if (s.truncated)
    read_fail(Status::io_error, path, truncation_message(s.cut_at, s.size, s.cut_need, s.cut_what));
  if (s.read_errno)
    read_fail(Status::io_error, path, "read failed at byte ", s.pos, ": ",
              std::strerror(s.read_errno));
  read_fail(Status::io_error, path, "corrupt PNG: ", s.message, " at byte ", s.pos);
}

}  // namespace

ImageHeader read_png(const std::string& path, std::FILE* f, const IoLimits& limits, Image* pixels,
                     ImageMetadata* meta) {
  precheck_ihdr(path, f, limits);
  PngState s;
  s.file = f;
  s.want_meta = pixels && meta;
  s.size = file_size(f);
  s.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &s, png_error_cb, png_warning_cb);
  if (!s.png) read_fail(Status::out_of_memory, path, "libpng: cannot create a read struct");
  ReadGuard guard{&s};
  s.info = png_create_info_struct(s.png);
  if (!s.info) read_fail(Status::out_of_memory, path, "libpng: cannot create an info struct");
  if (!decode_header(&s)) png_fail(path, s);

  int channels = 0;
  switch (s.color_type) {
    case PNG_COLOR_TYPE_GRAY:
      channels = 1;
      break;
    case PNG_COLOR_TYPE_RGB:
      channels = 3;
      break;
    case PNG_COLOR_TYPE_PALETTE:
      channels = s.has_trns ? 4 : 3;
      break;
    case PNG_COLOR_TYPE_GRAY_ALPHA:  // expanded to RGBA: pixflow has no 2-channel layout
    case PNG_COLOR_TYPE_RGB_ALPHA:
      channels = 4;
      break;
    default:
      read_fail(Status::io_error, path, "corrupt PNG: colour type ", s.color_type);
  }
  const Format fmt{s.bit_depth == 16 ? Depth::u16 : Depth::u8, channels};
  check_size(path, std::int64_t(s.width), std::int64_t(s.height), fmt, limits);
  const ImageHeader header{std::int64_t(s.width), std::int64_t(s.height), fmt, FileFormat::png};
  if (!pixels) return header;
  Image img(s.width, s.height, fmt);
  std::vector<png_bytep> rows(s.height);
  for (png_uint_32 y = 0; y < s.height; ++y) rows[y] = img.row<png_byte>(y);
  if (!decode_pixels(&s, rows.data(), png_size_t(img.view().row_bytes()))) png_fail(path, s);
  if (s.want_meta) {  // png_get_* only read the info struct: no longjmp here
    png_charp name = nullptr;
    int comp = 0;
    png_bytep profile = nullptr;
    png_uint_32 len = 0, px = 0, py = 0;
    int unit = 0;
    if (png_get_iCCP(s.png, s.info, &name, &comp, &profile, &len) && profile && len) {
      const auto* b = reinterpret_cast<const std::byte*>(profile);
      meta->icc.assign(b, b + len);
    }
    if (png_get_pHYs(s.png, s.info, &px, &py, &unit) && unit == PNG_RESOLUTION_METER && px && py) {
      meta->dpi_x = px * 0.0254;
      meta->dpi_y = py * 0.0254;
    }
  }
  *pixels = std::move(img);
  return header;
}

void write_png(const std::string& path, std::FILE* f, ConstImageView img, const WriteOptions& opt) {
  WriteState s;
  s.file = f;
  s.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &s, png_write_error_cb, png_warning_cb);
  if (!s.png) write_fail(Status::out_of_memory, path, "libpng: cannot create a write struct");
  WriteGuard guard{&s};
  s.info = png_create_info_struct(s.png);
  if (!s.info) write_fail(Status::out_of_memory, path, "libpng: cannot create an info struct");
  if (img.width() > 0x7fffffff || img.height() > 0x7fffffff)
    write_fail(Status::unsupported, path, "PNG cannot hold ", img.width(), "x", img.height());
  const int ct = img.channels() == 1   ? PNG_COLOR_TYPE_GRAY
                 : img.channels() == 3 ? PNG_COLOR_TYPE_RGB
                                       : PNG_COLOR_TYPE_RGB_ALPHA;
  std::vector<png_bytep> rows(std::size_t(img.height()));
  for (std::int64_t y = 0; y < img.height(); ++y)
    rows[std::size_t(y)] = const_cast<png_bytep>(reinterpret_cast<const png_byte*>(img.row_ptr(y)));
  PngExtras x;
  x.level = opt.compression;
  const ImageMetadata& m = opt.metadata;
  if (!m.icc.empty() && m.icc.size() <= 0x7fffffff) {
    x.icc = reinterpret_cast<const png_byte*>(m.icc.data());
    x.icc_len = png_uint_32(m.icc.size());
  }
  auto ppm = [](double dpi) {
    const double v = std::round(dpi / 0.0254);
    return v >= 1 && v <= 2147483647.0 ? png_uint_32(v) : png_uint_32(0);
  };
  x.ppm_x = ppm(m.dpi_x);
  x.ppm_y = ppm(m.dpi_y);
  if (!encode(&s, png_uint_32(img.width()), png_uint_32(img.height()),
              img.depth() == Depth::u16 ? 16 : 8, ct, rows.data(), x))
    write_fail(Status::io_error, path, "libpng: ", s.message);
}

}  // namespace pixflow::detail::io
