// PGM/PPM (Netpbm): P5/P6 binary and P2/P3 ASCII read, P5/P6 written. Sample values are
// stored as they are in the file (no rescaling by maxval); maxval <= 255 gives u8, else u16
// (big-endian in binary files). A sample above maxval is corrupt data.
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "src/io/codecs.hpp"

namespace pixflow::detail::io {

namespace {

/// Reads one decimal header/ASCII-data token, skipping whitespace and '#' comments (to the
/// end of the line). Returns -1 at end of file, -2 for a non-digit, -3 for a value > limit.
long long next_number(std::FILE* f, long long limit) {
  int c = std::fgetc(f);
  for (;;) {
    while (c != EOF && std::isspace(c)) c = std::fgetc(f);
    if (c != '#') break;
    while (c != EOF && c != '\n' && c != '\r') c = std::fgetc(f);
  }
  if (c == EOF) return -1;
  if (!std::isdigit(c)) return -2;
  long long v = 0;
  while (c != EOF && std::isdigit(c)) {
    v = v * 10 + (c - '0');
    if (v > limit) return -3;
    c = std::fgetc(f);
  }
  // The single whitespace that ends the token (for the last header field, the one byte
  // before binary data) is consumed; anything else is an error for the caller to see.
  if (c != EOF && !std::isspace(c)) return -2;
  return v;
}

long long header_number(std::FILE* f, const std::string& path, const char* what, long long limit) {
  const long long v = next_number(f, limit);
  if (v == -1)
    read_fail(Status::io_error, path,
              truncation_message(std::ftell(f), file_size(f), -1,
                                 cat("the ", what, " in the PGM/PPM header")));
  if (v == -2) read_fail(Status::io_error, path, "corrupt PGM/PPM header: bad ", what);
  if (v == -3) {
    if (limit == 65535)
      read_fail(Status::io_error, path, "corrupt PGM/PPM header: ", what, " must be in [1, 65535]");
    read_fail(Status::limit_exceeded, path, what, " exceeds ", limit);
  }
  return v;
}

template <class T>
void read_ascii(std::FILE* f, const std::string& path, Image& img, long long maxval) {
  const std::int64_t n = img.width() * img.channels();
  for (std::int64_t y = 0; y < img.height(); ++y) {
    T* row = img.row<T>(y);
    for (std::int64_t i = 0; i < n; ++i) {
      const long long v = next_number(f, maxval);
      if (v == -1)
        read_fail(
            Status::io_error, path,
            truncation_message(std::ftell(f), file_size(f), -1,
                               cat("ASCII sample ", i, " of row ", y, " (", n, " samples a row)")));
      if (v == -2) read_fail(Status::io_error, path, "corrupt ASCII data at row ", y);
      if (v == -3) read_fail(Status::io_error, path, "sample above maxval ", maxval, " at row ", y);
      row[i] = T(v);
    }
  }
}

}  // namespace

ImageHeader read_pnm(const std::string& path, std::FILE* f, const IoLimits& limits, Image* pixels) {
  char magic[2];
  read_exact(f, magic, 2, path, "the PGM/PPM magic number");
  const char kind = magic[1];
  if (kind == '1' || kind == '4' || kind == '7')
    read_fail(Status::unsupported, path, "Netpbm P", kind,
              " (bitmap/PAM) is not supported (P2, P3, P5, P6)");
  if (kind != '2' && kind != '3' && kind != '5' && kind != '6')
    read_fail(Status::io_error, path, "corrupt PGM/PPM magic");
  // Sides beyond 2^40 cannot pass any limit; stop parsing before the number overflows.
  constexpr long long kSideCap = 1LL << 40;
  const std::int64_t w = header_number(f, path, "width", kSideCap);
  const std::int64_t h = header_number(f, path, "height", kSideCap);
  const long long maxval = header_number(f, path, "maxval", 65535);
  if (maxval < 1)
    read_fail(Status::io_error, path, "corrupt PGM/PPM header: maxval must be in [1, 65535]");
  const int ch = (kind == '3' || kind == '6') ? 3 : 1;
  const Format fmt{maxval <= 255 ? Depth::u8 : Depth::u16, ch};
  check_size(path, w, h, fmt, limits);
  const ImageHeader header{w, h, fmt, FileFormat::pnm};
  if (!pixels) return header;
  const std::int64_t row_bytes = w * std::int64_t(fmt.pixel_bytes());
  const std::int64_t left = bytes_left(f);
  const bool binary = kind == '5' || kind == '6';
  // Binary: all the samples must be there; ASCII: at least one digit and one separator per
  // sample (less the last). Checked before allocating.
  const std::int64_t samples = w * h * ch;  // <= the checked decoded size
  const std::int64_t need = binary                    ? row_bytes * h
                            : samples > INT64_MAX / 2 ? INT64_MAX
                                                      : 2 * samples - 1;
  if (left >= 0 && left < need)
    read_fail(
        Status::io_error, path,
        truncation_message(std::ftell(f), file_size(f), need,
                           binary ? cat("the pixel data (", h, " rows of ", row_bytes, " bytes)")
                                  : cat("the ASCII pixel data (", samples,
                                        " samples, at least 2 bytes each but the last)")));
  Image img(w, h, fmt);
  if (!binary) {
    if (fmt.depth == Depth::u8)
      read_ascii<std::uint8_t>(f, path, img, maxval);
    else
      read_ascii<std::uint16_t>(f, path, img, maxval);
    *pixels = std::move(img);
    return header;
  }
  for (std::int64_t y = 0; y < h; ++y) {
    std::byte* row = img.row<std::byte>(y);
    read_exact(f, row, std::size_t(row_bytes), path, "a row of pixel data");
    if (fmt.depth == Depth::u8) {
      if (maxval < 255)
        for (std::int64_t i = 0; i < row_bytes; ++i)
          if (std::uint8_t(row[i]) > maxval)
            read_fail(Status::io_error, path, "sample above maxval ", maxval, " at row ", y);
    } else {
      auto* p = reinterpret_cast<std::uint16_t*>(row);
      for (std::int64_t i = 0; i < w * ch; ++i) {
        std::uint16_t v;
        std::memcpy(&v, p + i, 2);
        if constexpr (std::endian::native == std::endian::little)
          v = std::uint16_t((v >> 8) | (v << 8));
        if (v > maxval)
          read_fail(Status::io_error, path, "sample above maxval ", maxval, " at row ", y);
        p[i] = v;
      }
    }
  }
  *pixels = std::move(img);
  return header;
}

void write_pnm(const std::string& path, std::FILE* f, ConstImageView img) {
  const bool u16 = img.depth() == Depth::u16;
  std::fprintf(f, "P%c\n%lld %lld\n%d\n", img.channels() == 1 ? '5' : '6',
               static_cast<long long>(img.width()), static_cast<long long>(img.height()),
               u16 ? 65535 : 255);
  std::vector<std::uint8_t> buf(std::size_t(img.row_bytes()));
  for (std::int64_t y = 0; y < img.height(); ++y) {
    std::memcpy(buf.data(), img.row_ptr(y), buf.size());
    if (u16)
      for (std::size_t i = 0; i + 1 < buf.size(); i += 2) {
        if constexpr (std::endian::native == std::endian::little) std::swap(buf[i], buf[i + 1]);
      }
    if (std::fwrite(buf.data(), 1, buf.size(), f) != buf.size())
      write_fail(Status::io_error, path, "write failed: ", std::strerror(errno));
  }
}

}  // namespace pixflow::detail::io
