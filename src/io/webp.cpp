// WebP through libwebp's simple API: the whole file is read into memory (libwebp decodes
// from a buffer), its header checked against the limits before any pixel memory, then
// decoded into RGB or RGBA. Written lossy at WriteOptions::jpeg_quality, or lossless.
#include <webp/decode.h>
#include <webp/encode.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "src/io/codecs.hpp"

namespace pixflow {

bool have_webp() {
  return true;
}

namespace detail::io {

ImageHeader read_webp(const std::string& path, std::FILE* f, const IoLimits& limits,
                      Image* pixels) {
  // The header (RIFF, VP8/VP8L/VP8X chunk headers) sits in the first few dozen bytes.
  std::vector<std::uint8_t> head(64);
  head.resize(std::fread(head.data(), 1, head.size(), f));
  WebPBitstreamFeatures ft{};
  VP8StatusCode st = WebPGetFeatures(head.data(), head.size(), &ft);
  if (st == VP8_STATUS_NOT_ENOUGH_DATA)
    read_fail(Status::io_error, path,
              truncation_message(std::int64_t(head.size()), file_size(f), -1, "the WebP header"));
  if (st == VP8_STATUS_UNSUPPORTED_FEATURE)
    read_fail(Status::unsupported, path, "WebP feature not supported by libwebp");
  if (st != VP8_STATUS_OK)
    read_fail(Status::io_error, path, "corrupt WebP header (libwebp ", st, ")");
  if (ft.has_animation)
    read_fail(Status::unsupported, path, "animated WebP is not supported (one still image)");
  const Format fmt{Depth::u8, ft.has_alpha ? 4 : 3};
  check_size(path, ft.width, ft.height, fmt, limits);
  const ImageHeader header{ft.width, ft.height, fmt, FileFormat::webp};
  if (!pixels) return header;

  // The whole file: its size, bounded by the decoded-size limit plus slack (a compressed
  // WebP is never much larger than its pixels), then libwebp into the image's rows.
  const std::int64_t size = file_size(f);
  if (size < 0) read_fail(Status::io_error, path, "cannot tell the file's size");
  if (size > limits.max_bytes + (16 << 20))
    read_fail(Status::limit_exceeded, path, "WebP file of ", size,
              " bytes is larger than the decoded-size limit max_bytes = ", limits.max_bytes);
  std::vector<std::uint8_t> data(static_cast<std::size_t>(size));
  std::rewind(f);
  read_exact(f, data.data(), data.size(), path, "the WebP data");
  Image img(ft.width, ft.height, fmt);
  const std::size_t bytes = std::size_t(img.view().stride()) * std::size_t(ft.height);
  const int stride = int(img.view().stride());
  const std::uint8_t* ok =
      fmt.channels == 4
          ? WebPDecodeRGBAInto(data.data(), data.size(), img.row<std::uint8_t>(0), bytes, stride)
          : WebPDecodeRGBInto(data.data(), data.size(), img.row<std::uint8_t>(0), bytes, stride);
  if (!ok) {
    // Decoding a cut file fails; say so as for the other formats.
    WebPDecoderConfig cfg;
    if (WebPInitDecoderConfig(&cfg) &&
        WebPGetFeatures(data.data(), data.size(), &cfg.input) == VP8_STATUS_OK) {
      const std::uint32_t riff = std::uint32_t(data[4]) | std::uint32_t(data[5]) << 8 |
                                 std::uint32_t(data[6]) << 16 | std::uint32_t(data[7]) << 24;
      if (std::uint64_t(riff) + 8 > data.size())
        read_fail(Status::io_error, path,
                  truncation_message(std::int64_t(data.size()), size, -1,
                                     cat(std::uint64_t(riff) + 8, " bytes (its RIFF size)")));
    }
    read_fail(Status::io_error, path, "corrupt WebP data (libwebp could not decode it)");
  }
  *pixels = std::move(img);
  return header;
}

void write_webp(const std::string& path, std::FILE* f, ConstImageView img,
                const WriteOptions& opt) {
  if (img.width() > WEBP_MAX_DIMENSION || img.height() > WEBP_MAX_DIMENSION)
    write_fail(Status::unsupported, path, "WebP cannot hold ", img.width(), "x", img.height(),
               " (at most ", WEBP_MAX_DIMENSION, " per side)");
  const int w = int(img.width()), h = int(img.height()), ch = img.channels();
  // WebP has no gray: a gray image is written as RGB (r = g = b). Rows are packed.
  const int out_ch = ch == 4 ? 4 : 3;
  std::vector<std::uint8_t> packed(std::size_t(w) * std::size_t(h) * std::size_t(out_ch));
  for (int y = 0; y < h; ++y) {
    const auto* src = reinterpret_cast<const std::uint8_t*>(img.row_ptr(y));
    std::uint8_t* dst = packed.data() + std::size_t(y) * std::size_t(w) * std::size_t(out_ch);
    if (ch == 1) {
      for (int x = 0; x < w; ++x) dst[3 * x] = dst[3 * x + 1] = dst[3 * x + 2] = src[x];
    } else {
      std::memcpy(dst, src, std::size_t(w) * std::size_t(out_ch));
    }
  }
  // The advanced API, for `exact`: libwebp would otherwise change the colour of fully
  // transparent pixels, and a lossless file must give back what was written (as PNG does).
  WebPConfig config;
  WebPPicture pic;
  if (!WebPConfigInit(&config) || !WebPPictureInit(&pic))
    write_fail(Status::io_error, path, "libwebp: version mismatch");
  config.lossless = opt.lossless ? 1 : 0;
  config.quality = opt.lossless ? 75.0f : float(opt.jpeg_quality);
  config.exact = 1;
  pic.use_argb = opt.lossless ? 1 : 0;
  pic.width = w;
  pic.height = h;
  WebPMemoryWriter mem;
  WebPMemoryWriterInit(&mem);
  pic.writer = WebPMemoryWrite;
  pic.custom_ptr = &mem;
  const int stride = w * out_ch;
  bool ok = out_ch == 4 ? WebPPictureImportRGBA(&pic, packed.data(), stride) != 0
                        : WebPPictureImportRGB(&pic, packed.data(), stride) != 0;
  ok = ok && WebPEncode(&config, &pic) != 0;
  const int err = pic.error_code;
  WebPPictureFree(&pic);
  const bool written = ok && std::fwrite(mem.mem, 1, mem.size, f) == mem.size;
  WebPMemoryWriterClear(&mem);
  if (!ok) write_fail(Status::io_error, path, "libwebp: encoding failed (error ", err, ")");
  if (!written) write_fail(Status::io_error, path, "write failed");
}

}  // namespace detail::io
}  // namespace pixflow
