// JPEG through libjpeg(-turbo). libjpeg reports errors by calling error_exit, which must not
// return: ours longjmps back into the function that called setjmp (decode_header,
// decode_pixels, encode), whose frames hold only PODs; the C++ caller throws afterwards.
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>
// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

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

struct DecodeState {
  jpeg_decompress_struct cinfo;
  ErrorMgr err;
  bool created = false;
};

bool decode_header(DecodeState* s, std::FILE* f) {
  if (setjmp(s->err.jump)) return false;
  jpeg_create_decompress(&s->cinfo);
  s->created = true;
  jpeg_stdio_src(&s->cinfo, f);
  jpeg_read_header(&s->cinfo, TRUE);
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

bool encode(EncodeState* s, std::FILE* f, JSAMPROW* rows, JDIMENSION w, JDIMENSION h,
            int components, int quality) {
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
  jpeg_start_compress(&s->cinfo, TRUE);
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

}  // namespace

Image read_jpeg(const std::string& path, std::FILE* f, const IoLimits& limits) {
  DecodeState s;
  std::memset(&s.cinfo, 0, sizeof s.cinfo);
  s.cinfo.err = jpeg_std_error(&s.err.pub);
  s.err.pub.error_exit = jpeg_error_exit_cb;
  s.err.pub.emit_message = jpeg_emit_message_cb;
  DecodeGuard guard{&s};
  if (!decode_header(&s, f)) read_fail(Status::io_error, path, "corrupt JPEG: ", s.err.message);
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
  Image img(s.cinfo.image_width, s.cinfo.image_height, fmt);
  std::vector<JSAMPROW> rows(s.cinfo.image_height);
  for (JDIMENSION y = 0; y < s.cinfo.image_height; ++y) rows[y] = img.row<JSAMPLE>(y);
  if (!decode_pixels(&s, rows.data(), s.cinfo.image_height, s.cinfo.image_width, components))
    read_fail(Status::io_error, path, "corrupt JPEG: ", s.err.message);
  return img;
}

void write_jpeg(const std::string& path, std::FILE* f, ConstImageView img, int quality) {
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
  if (!encode(&s, f, rows.data(), JDIMENSION(img.width()), JDIMENSION(img.height()), img.channels(),
              quality))
    write_fail(Status::io_error, path, "libjpeg: ", s.err.message);
}

}  // namespace pixflow::detail::io
