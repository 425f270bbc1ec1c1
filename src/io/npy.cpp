// NPY (NumPy's .npy): format versions 1.0, 2.0 and 3.0; dtypes |u1 <u2 <i2 <i4 <f4 and
// their big-endian forms; shape (H, W) or (H, W, C) with C in 1..4; C order only.
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "src/io/codecs.hpp"

namespace pixflow::detail::io {

namespace {

// A header is a short Python dict literal; anything this long is corrupt (numpy itself
// refuses headers over 10000 bytes by default).
constexpr std::uint32_t kMaxHeader = 1 << 20;

/// A tiny parser for the header dict: {'descr': '<u2', 'fortran_order': False,
/// 'shape': (3, 4), }. Values are strings, True/False, or tuples of non-negative integers.
struct HeaderParser {
  const std::string& s;
  const std::string& path;
  std::size_t i = 0;

  [[noreturn]] void bad(const char* what) const {
    read_fail(Status::io_error, path, "corrupt NPY header (", what, " at offset ", i, ")");
  }
  void ws() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  std::string str() {
    ws();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) bad("expected a string");
    const char q = s[i++];
    const std::size_t end = s.find(q, i);
    if (end == std::string::npos) bad("unterminated string");
    std::string out = s.substr(i, end - i);
    i = end + 1;
    return out;
  }
  bool boolean() {
    ws();
    if (s.compare(i, 4, "True") == 0) return i += 4, true;
    if (s.compare(i, 5, "False") == 0) return i += 5, false;
    bad("expected True or False");
  }
  /// Saturates at INT64_MAX: such a dimension fails the limits, not the parser.
  std::vector<std::int64_t> tuple() {
    if (!eat('(')) bad("expected a tuple");
    std::vector<std::int64_t> dims;
    for (;;) {
      if (eat(')')) break;
      if (dims.size() > 32) bad("too many dimensions");
      ws();
      if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) bad("expected a size");
      std::int64_t v = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        const int d = s[i++] - '0';
        v = v > (INT64_MAX - d) / 10 ? INT64_MAX : v * 10 + d;
      }
      if (i < s.size() && s[i] == 'L') ++i;  // Python 2 long literals
      dims.push_back(v);
      if (!eat(',')) {
        if (!eat(')')) bad("expected ',' or ')'");
        break;
      }
    }
    return dims;
  }
};

struct Dtype {
  Depth depth;
  bool swap;  // the file's byte order differs from the host's
};

Dtype parse_descr(const std::string& d, const std::string& path) {
  if (d.size() == 3) {
    const char order = d[0];
    const std::string t = d.substr(1);
    const bool host_little = std::endian::native == std::endian::little;
    if (t == "u1" && (order == '|' || order == '<' || order == '>')) return {Depth::u8, false};
    if (order == '<' || order == '>' || order == '=') {
      const bool swap = order != '=' && (order == '<') != host_little;
      if (t == "u2") return {Depth::u16, swap};
      if (t == "i2") return {Depth::s16, swap};
      if (t == "i4") return {Depth::s32, swap};
      if (t == "f4") return {Depth::f32, swap};
    }
  }
  read_fail(Status::unsupported, path, "NPY dtype '", d,
            "' is not supported (|u1, <u2, <i2, <i4, <f4 or their '>' forms)");
}

void byteswap_row(std::byte* p, std::int64_t n, std::size_t size) {
  for (std::int64_t k = 0; k < n; ++k, p += size)
    for (std::size_t a = 0, b = size - 1; a < b; ++a, --b) std::swap(p[a], p[b]);
}

const char* descr_of(Depth d) {
  const bool little = std::endian::native == std::endian::little;
  switch (d) {
    case Depth::u8:
      return "|u1";
    case Depth::u16:
      return little ? "<u2" : ">u2";
    case Depth::s16:
      return little ? "<i2" : ">i2";
    case Depth::s32:
      return little ? "<i4" : ">i4";
    case Depth::f32:
      return little ? "<f4" : ">f4";
  }
  return "?";
}

}  // namespace

ImageHeader read_npy(const std::string& path, std::FILE* f, const IoLimits& limits, Image* pixels) {
  unsigned char pre[10];
  read_exact(f, pre, 8, path, "the NPY magic string and version");
  const int major = pre[6];
  if (major < 1 || major > 3)
    read_fail(Status::unsupported, path, "NPY format version ", major, ".", int(pre[7]),
              " is not supported (1.0, 2.0, 3.0)");
  std::uint32_t hlen = 0;
  if (major == 1) {
    read_exact(f, pre + 8, 2, path, "the NPY header length");
    hlen = std::uint32_t(pre[8]) | std::uint32_t(pre[9]) << 8;
  } else {
    unsigned char l[4];
    read_exact(f, l, 4, path, "the NPY header length");
    hlen = std::uint32_t(l[0]) | std::uint32_t(l[1]) << 8 | std::uint32_t(l[2]) << 16 |
           std::uint32_t(l[3]) << 24;
  }
  if (hlen > kMaxHeader) read_fail(Status::io_error, path, "corrupt NPY header length ", hlen);
  const std::int64_t left0 = bytes_left(f);
  if (left0 >= 0 && left0 < std::int64_t(hlen))
    read_fail(Status::io_error, path,
              truncation_message(std::ftell(f), file_size(f), hlen, "the NPY header"));
  std::string header(hlen, '\0');
  read_exact(f, header.data(), hlen, path, "the NPY header");

  HeaderParser p{header, path};
  std::string descr;
  bool have_descr = false, have_order = false, have_shape = false, fortran = false;
  std::vector<std::int64_t> shape;
  if (!p.eat('{')) p.bad("expected '{'");
  for (;;) {
    if (p.eat('}')) break;
    const std::string key = p.str();
    if (!p.eat(':')) p.bad("expected ':'");
    if (key == "descr") {
      p.ws();
      if (p.i < header.size() && header[p.i] == '[')
        read_fail(Status::unsupported, path, "NPY structured dtypes are not supported");
      descr = p.str(), have_descr = true;
    } else if (key == "fortran_order") {
      fortran = p.boolean(), have_order = true;
    } else if (key == "shape") {
      shape = p.tuple(), have_shape = true;
    } else {
      p.bad("unknown key");
    }
    if (!p.eat(',')) {
      if (!p.eat('}')) p.bad("expected ',' or '}'");
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape)
    read_fail(Status::io_error, path, "corrupt NPY header (descr, fortran_order and shape ",
              "are required)");
  const Dtype dt = parse_descr(descr, path);
  if (fortran)
    read_fail(Status::unsupported, path, "NPY arrays in Fortran order are not supported");
  if (shape.size() != 2 && shape.size() != 3)
    read_fail(Status::unsupported, path, "NPY shape must be (H, W) or (H, W, C) (got ",
              shape.size(), " dimensions)");
  const std::int64_t c = shape.size() == 3 ? shape[2] : 1;
  if (c < 1 || c > 4)
    read_fail(Status::unsupported, path, "NPY channel count must be in [1, 4] (got ", c, ")");
  const Format fmt{dt.depth, int(c)};
  if (shape[0] == 0 || shape[1] == 0)
    read_fail(Status::unsupported, path, "empty NPY arrays are not supported (shape has a 0)");
  check_size(path, shape[1], shape[0], fmt, limits);
  const std::int64_t w = shape[1], h = shape[0];
  const ImageHeader hdr{w, h, fmt, FileFormat::npy};
  if (!pixels) return hdr;
  const std::int64_t row_bytes = w * std::int64_t(fmt.pixel_bytes());
  const std::int64_t left = bytes_left(f);
  if (left >= 0 && left < row_bytes * h)
    read_fail(Status::io_error, path,
              truncation_message(std::ftell(f), file_size(f), row_bytes * h,
                                 cat("the array data (", h, " rows of ", row_bytes, " bytes)")));
  Image img(w, h, fmt);
  for (std::int64_t y = 0; y < h; ++y) {
    std::byte* row = img.row<std::byte>(y);
    read_exact(f, row, std::size_t(row_bytes), path, "a row of array data");
    if (dt.swap) byteswap_row(row, w * c, depth_bytes(dt.depth));
  }
  *pixels = std::move(img);
  return hdr;
}

void write_npy(const std::string& path, std::FILE* f, ConstImageView img) {
  std::string dict = cat("{'descr': '", descr_of(img.depth()), "', 'fortran_order': False, ",
                         "'shape': (", img.height(), ", ", img.width());
  dict += img.channels() == 1 ? std::string("), }") : cat(", ", img.channels(), "), }");
  // Version 1.0; magic (6) + version (2) + length (2) + dict + padding + '\n' is a
  // multiple of 64, as numpy writes it.
  std::size_t total = 10 + dict.size() + 1;
  total = (total + 63) / 64 * 64;
  dict.append(total - 10 - dict.size() - 1, ' ');
  dict += '\n';
  const std::size_t hlen = dict.size();
  const unsigned char pre[10] = {0x93,
                                 'N',
                                 'U',
                                 'M',
                                 'P',
                                 'Y',
                                 1,
                                 0,
                                 static_cast<unsigned char>(hlen & 0xff),
                                 static_cast<unsigned char>(hlen >> 8)};
  bool ok = std::fwrite(pre, 1, 10, f) == 10 &&
            std::fwrite(dict.data(), 1, dict.size(), f) == dict.size();
  for (std::int64_t y = 0; ok && y < img.height(); ++y)
    ok = std::fwrite(img.row_ptr(y), 1, std::size_t(img.row_bytes()), f) ==
         std::size_t(img.row_bytes());
  if (!ok) write_fail(Status::io_error, path, "write failed: ", std::strerror(errno));
}

}  // namespace pixflow::detail::io
