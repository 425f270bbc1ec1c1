// JPEG through libjpeg(-turbo). libjpeg reports errors by calling error_exit, which must not
// return: ours longjmps back into the function that called setjmp (decode_header,
// decode_pixels, encode), whose frames hold only PODs; the C++ caller throws afterwards.
// Reading goes through pixflow's own source manager, which counts bytes: a truncated file
// is an error naming the byte where it ends (libjpeg's stdio source would pad it with a
// fake end-of-image marker and decode grey), and corrupt data names where it was found.
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>
// jerror.h: ERREXIT and the message codes, for the source manager.
#include <jerror.h>

#include "src/io/codecs.hpp"

namespace pixflow::detail::io {

namespace {

struct ErrorMgr {
  jpeg_error_mgr pub;  // first member: libjpeg hands us &pub
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {};
};

extern "C" void jpeg_error_exit_cb(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<ErrorMgr*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  std::longjmp(e->jump, 1);
}

/// Warnings (msg_level -1) mean corrupt data that libjpeg would paper over (a truncated file
/// decodes as grey): pixflow treats them as errors. Trace messages (level >= 0) are ignored.
extern "C" void jpeg_emit_message_cb(j_common_ptr cinfo, int msg_level) {
  if (msg_level < 0) jpeg_error_exit_cb(cinfo);
}

/// A source manager over a FILE*, counting what it has read.
struct Source {
  jpeg_source_mgr pub;  // first member: libjpeg hands us &pub
  std::FILE* file = nullptr;
  std::int64_t read = 0;  // bytes read from the file so far
  bool truncated = false;
  int read_errno = 0;
  JOCTET buffer[4096];
};

extern "C" void jpeg_src_init(j_decompress_ptr) {}
extern "C" void jpeg_src_term(j_decompress_ptr) {}

extern "C" boolean jpeg_src_fill(j_decompress_ptr cinfo) {
  auto* s = reinterpret_cast<Source*>(cinfo->src);
  const std::size_t n = std::fread(s->buffer, 1, sizeof s->buffer, s->file);
  if (n == 0) {
    if (std::ferror(s->file))
      s->read_errno = errno ? errno : EIO;
    else
      s->truncated = true;
    ERREXIT(cinfo, JERR_INPUT_EOF);  // longjmps; the caller reports what the flags say
  }
  s->read += std::int64_t(n);
  s->pub.next_input_byte = s->buffer;
  s->pub.bytes_in_buffer = n;
  return TRUE;
}

extern "C" void jpeg_src_skip(j_decompress_ptr cinfo, long count) {
  auto* s = reinterpret_cast<Source*>(cinfo->src);
  if (count <= 0) return;
  while (std::size_t(count) > s->pub.bytes_in_buffer) {
    count -= long(s->pub.bytes_in_buffer);
    jpeg_src_fill(cinfo);
  }
  s->pub.next_input_byte += count;
  s->pub.bytes_in_buffer -= std::size_t(count);
}

struct DecodeState {
  jpeg_decompress_struct cinfo;
  ErrorMgr err;
  Source src;
  bool created = false;
  bool want_icc = false;  // keep the APP2 markers (read_image with metadata)
};

bool decode_header(DecodeState* s, std::FILE* f) {
  if (setjmp(s->err.jump)) return false;
  jpeg_create_decompress(&s->cinfo);
  s->created = true;
  s->src.file = f;
  s->src.pub.init_source = jpeg_src_init;
  s->src.pub.fill_input_buffer = jpeg_src_fill;
  s->src.pub.skip_input_data = jpeg_src_skip;
  s->src.pub.resync_to_restart = jpeg_resync_to_restart;
  s->src.pub.term_source = jpeg_src_term;
  s->src.pub.next_input_byte = nullptr;
  s->src.pub.bytes_in_buffer = 0;
  s->cinfo.src = &s->src.pub;
  // Each marker is at most 64 KiB and the markers are in the file: bounded by its size.
  if (s->want_icc) jpeg_save_markers(&s->cinfo, JPEG_APP0 + 2, 0xffff);
  jpeg_read_header(&s->cinfo, TRUE);
  return true;
}

/// The ICC profile from the saved APP2 markers (malloc'd by libjpeg: the caller frees it);
/// false on a libjpeg error (a malformed marker sequence).
bool read_icc(DecodeState* s, JOCTET** data, unsigned int* len) {
  if (setjmp(s->err.jump)) return false;
  if (!jpeg_read_icc_profile(&s->cinfo, data, len)) {
    *data = nullptr;
    *len = 0;
  }
  return true;
}

bool decode_pixels(DecodeState* s, JSAMPROW* rows, JDIMENSION height, JDIMENSION width,
                   int components) {
  if (setjmp(s->err.jump)) return false;
  jpeg_start_decompress(&s->cinfo);
  if (s->cinfo.output_width != width || s->cinfo.output_height != height ||
      s->cinfo.output_components != components) {
    std::snprintf(s->err.message, sizeof s->err.message, "unexpected decoded layout");
    return false;
  }
  while (s->cinfo.output_scanline < height) {
    JSAMPROW* at = rows + s->cinfo.output_scanline;
    jpeg_read_scanlines(&s->cinfo, at, height - s->cinfo.output_scanline);
  }
  jpeg_finish_decompress(&s->cinfo);
  return true;
}

struct DecodeGuard {
  DecodeState* s;
  ~DecodeGuard() {
    if (s->created) jpeg_destroy_decompress(&s->cinfo);
  }
};

struct EncodeState {
  jpeg_compress_struct cinfo;
  ErrorMgr err;
  bool created = false;
};

/// What encode() writes beside the pixels (plain data: it sits in a setjmp frame).
struct JpegExtras {
  const JOCTET* icc = nullptr;
  unsigned int icc_len = 0;
  UINT16 dpi_x = 0, dpi_y = 0;  // 0: the JFIF default (no unit, 1:1)
};

bool encode(EncodeState* s, std::FILE* f, JSAMPROW* rows, JDIMENSION w, JDIMENSION h,
            int components, int quality, const JpegExtras& x) {
  if (setjmp(s->err.jump)) return false;
  jpeg_create_compress(&s->cinfo);
  s->created = true;
  jpeg_stdio_dest(&s->cinfo, f);
  s->cinfo.image_width = w;
  s->cinfo.image_height = h;
  s->cinfo.input_components = components;
  s->cinfo.in_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&s->cinfo);
  jpeg_set_quality(&s->cinfo, quality, TRUE);
  if (x.dpi_x && x.dpi_y) {
    s->cinfo.density_unit = 1;  // dots per inch
    s->cinfo.X_density = x.dpi_x;
    s->cinfo.Y_density = x.dpi_y;
  }
  jpeg_start_compress(&s->cinfo, TRUE);
  if (x.icc_len) jpeg_write_icc_profile(&s->cinfo, x.icc, x.icc_len);
  while (s->cinfo.next_scanline < h)
    jpeg_write_scanlines(&s->cinfo, rows + s->cinfo.next_scanline, h - s->cinfo.next_scanline);
  jpeg_finish_compress(&s->cinfo);
  return true;
}

struct EncodeGuard {
  EncodeState* s;
  ~EncodeGuard() {
    if (s->created) jpeg_destroy_compress(&s->cinfo);
  }
};

/// Throws the io_error for a failed decode_header/decode_pixels: the truncation, the read
/// error, or libjpeg's message with the byte it had reached. `what` names the part being
/// read, for a truncation.
[[noreturn]] void jpeg_fail(const std::string& path, const DecodeState& s, std::FILE* f,
                            const char* what) {
  if (s.src.truncated)
    read_fail(Status::io_error, path, truncation_message(s.src.read, file_size(f), -1, what));
  if (s.src.read_errno)
    read_fail(Status::io_error, path, "read failed at byte ", s.src.read, ": ",
              std::strerror(s.src.read_errno));
  read_fail(Status::io_error, path, "corrupt JPEG: ", s.err.message, " at byte ",
            s.src.read - std::int64_t(s.src.pub.bytes_in_buffer));
}

}  // namespace

ImageHeader read_jpeg(const std::string& path, std::FILE* f, const IoLimits& limits, Image* pixels,
                      ImageMetadata* meta) {
  DecodeState s;
  s.want_icc = pixels && meta;
  std::memset(&s.cinfo, 0, sizeof s.cinfo);
  std::memset(&s.src.pub, 0, sizeof s.src.pub);
  s.cinfo.err = jpeg_std_error(&s.err.pub);
  s.err.pub.error_exit = jpeg_error_exit_cb;
  s.err.pub.emit_message = jpeg_emit_message_cb;
  DecodeGuard guard{&s};
  if (!decode_header(&s, f)) jpeg_fail(path, s, f, "the rest of the JPEG header");
  int components = 0;
  switch (s.cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE:
      components = 1;
      break;
    case JCS_RGB:
    case JCS_YCbCr:
      components = 3;
      break;
    case JCS_CMYK:
    case JCS_YCCK:
      read_fail(Status::unsupported, path, "CMYK/YCCK JPEG is not supported (gray or RGB only)");
    default:
      read_fail(Status::unsupported, path, "JPEG colour space ", int(s.cinfo.jpeg_color_space),
                " is not supported (gray or RGB only)");
  }
  s.cinfo.out_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  const Format fmt{Depth::u8, components};
  check_size(path, s.cinfo.image_width, s.cinfo.image_height, fmt, limits);
  const ImageHeader header{std::int64_t(s.cinfo.image_width), std::int64_t(s.cinfo.image_height),
                           fmt, FileFormat::jpeg};
  if (!pixels) return header;
  if (meta) {
    JOCTET* icc = nullptr;
    unsigned int len = 0;
    if (!read_icc(&s, &icc, &len)) jpeg_fail(path, s, f, "the ICC profile");
    if (icc) {
      const auto* b = reinterpret_cast<const std::byte*>(icc);
      meta->icc.assign(b, b + len);
      std::free(icc);
    }
    if (s.cinfo.saw_JFIF_marker && s.cinfo.X_density && s.cinfo.Y_density &&
        (s.cinfo.density_unit == 1 || s.cinfo.density_unit == 2)) {
      const double k = s.cinfo.density_unit == 1 ? 1.0 : 2.54;  // dots per cm -> per inch
      meta->dpi_x = s.cinfo.X_density * k;
      meta->dpi_y = s.cinfo.Y_density * k;
    }
  }
  Image img(s.cinfo.image_width, s.cinfo.image_height, fmt);
  std::vector<JSAMPROW> rows(s.cinfo.image_height);
  for (JDIMENSION y = 0; y < s.cinfo.image_height; ++y) rows[y] = img.row<JSAMPLE>(y);
  if (!decode_pixels(&s, rows.data(), s.cinfo.image_height, s.cinfo.image_width, components))
    jpeg_fail(path, s, f, "the rest of the JPEG image data (up to its end-of-image marker)");
  *pixels = std::move(img);
  return header;
}

void write_jpeg(const std::string& path, std::FILE* f, ConstImageView img,
                const WriteOptions& opt) {
  if (img.width() > JPEG_MAX_DIMENSION || img.height() > JPEG_MAX_DIMENSION)
    write_fail(Status::unsupported, path, "JPEG cannot hold ", img.width(), "x", img.height(),
               " (at most ", JPEG_MAX_DIMENSION, " per side)");
  EncodeState s;
  std::memset(&s.cinfo, 0, sizeof s.cinfo);
  s.cinfo.err = jpeg_std_error(&s.err.pub);
  s.err.pub.error_exit = jpeg_error_exit_cb;
  s.err.pub.emit_message = jpeg_emit_message_cb;
  EncodeGuard guard{&s};
  std::vector<JSAMPROW> rows(std::size_t(img.height()));
  for (std::int64_t y = 0; y < img.height(); ++y)
    rows[std::size_t(y)] = const_cast<JSAMPROW>(reinterpret_cast<const JSAMPLE*>(img.row_ptr(y)));
  JpegExtras x;
  const ImageMetadata& m = opt.metadata;
  if (!m.icc.empty() && m.icc.size() <= 0xffffffu) {
    x.icc = reinterpret_cast<const JOCTET*>(m.icc.data());
    x.icc_len = unsigned(m.icc.size());
  }
  auto dpi = [](double d) {
    const double v = std::round(d);
    return v >= 1 && v <= 65535 ? UINT16(v) : UINT16(0);
  };
  x.dpi_x = dpi(m.dpi_x);
  x.dpi_y = dpi(m.dpi_y);
  if (!encode(&s, f, rows.data(), JDIMENSION(img.width()), JDIMENSION(img.height()), img.channels(),
              opt.jpeg_quality, x))
    write_fail(Status::io_error, path, "libjpeg: ", s.err.message);
}

}  // namespace pixflow::detail::io
