// File I/O: round trips for every format x depth x channels, cross-checks with OpenCV's
// codecs, hand-made NPY/PNG/TIFF/JPEG files for the cases OpenCV cannot write, truncated and
// corrupted files, size limits (API and environment), header probes, and atomic writes
// (O_TMPFILE and the named fallback, SIGKILL, symlinks, modes). Suites are named Io* so
// that `make test-asan` runs them under AddressSanitizer + UBSan.
#include <fcntl.h>
#include <png.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "src/io/codecs.hpp"
#include "tests/common.hpp"

#if PIXFLOW_HAVE_OPENCV
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace pixflow::test {
namespace {

namespace fs = std::filesystem;
using Bytes = std::string;

// ---- helpers ------------------------------------------------------------------------------

Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}
void write_bytes(const std::string& path, const Bytes& b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(b.data(), std::streamsize(b.size()));
}

/// Runs f, which must throw pixflow::Error with `status` and a message containing every
/// string of `parts`. Returns the message ("" if it did not throw as expected).
std::string expect_error(const std::function<void()>& f, Status status,
                         const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(status_name(e.status()), std::string(status_name(status))) << e.what();
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "message lacks '" << p << "': " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no pixflow::Error thrown (expected " << status_name(status) << ")";
  return "";
}

std::string fmt_desc(Format f) {
  return to_string(f);
}

// Little helpers for hand-made files.
void put16le(Bytes& b, unsigned v) {
  b += char(v & 0xff), b += char(v >> 8 & 0xff);
}
void put32le(Bytes& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b += char(v >> (8 * i) & 0xff);
}
void put32be(Bytes& b, std::uint32_t v) {
  for (int i = 3; i >= 0; --i) b += char(v >> (8 * i) & 0xff);
}

std::uint32_t crc32(const Bytes& b, std::size_t from, std::size_t n) {
  std::uint32_t c = 0xffffffffu;
  for (std::size_t i = from; i < from + n; ++i) {
    c ^= std::uint8_t(b[i]);
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c ^ 0xffffffffu;
}

// ---- hand-made PNG (stored deflate blocks), for layouts OpenCV cannot write ---------------

void png_chunk(Bytes& out, const char* type, const Bytes& data) {
  put32be(out, std::uint32_t(data.size()));
  const std::size_t start = out.size();
  out.append(type, 4);
  out += data;
  put32be(out, crc32(out, start, data.size() + 4));
}

/// A PNG signature and an IHDR of 2^20 + 1 x 1 pixels (8-bit gray) with a valid CRC, and no
/// pixel data: one pixel wider than the default max_side.
Bytes wide_png_header() {
  Bytes head = "\x89PNG\r\n\x1a\n", ihdr;
  put32be(ihdr, (1u << 20) + 1);
  put32be(ihdr, 1);
  ihdr += Bytes("\x08\x00\x00\x00\x00", 5);
  png_chunk(head, "IHDR", ihdr);
  return head;
}

Bytes zlib_stored(const Bytes& raw) {
  Bytes z = "\x78\x01";
  std::size_t i = 0;
  do {
    const std::size_t n = std::min<std::size_t>(65535, raw.size() - i);
    z += char(i + n == raw.size() ? 1 : 0);
    put16le(z, unsigned(n));
    put16le(z, unsigned(~n & 0xffff));
    z.append(raw, i, n);
    i += n;
  } while (i < raw.size());
  std::uint32_t a = 1, b = 0;
  for (unsigned char c : raw) a = (a + c) % 65521, b = (b + a) % 65521;
  put32be(z, b << 16 | a);
  return z;
}

int png_channels(int color_type) {
  switch (color_type) {
    case 0:
      return 1;
    case 2:
      return 3;
    case 3:
      return 1;
    case 4:
      return 2;
    default:
      return 4;
  }
}

/// A PNG of `samples` (row-major, png_channels(ct) per pixel; palette indices for ct 3).
Bytes make_png(std::uint32_t w, std::uint32_t h, int bit_depth, int ct,
               const std::vector<unsigned>& samples, bool interlace, const Bytes& plte = "",
               const Bytes& trns = "") {
  const int ch = png_channels(ct);
  Bytes raw;
  auto emit_row = [&](std::uint32_t y, std::uint32_t x0, std::uint32_t dx) {
    raw += '\0';  // filter: none
    unsigned acc = 0;
    int nbits = 0;
    for (std::uint32_t x = x0; x < w; x += dx)
      for (int c = 0; c < ch; ++c) {
        const unsigned v = samples[(std::size_t(y) * w + x) * ch + c];
        if (bit_depth == 16) {
          raw += char(v >> 8), raw += char(v & 0xff);
        } else if (bit_depth == 8) {
          raw += char(v);
        } else {
          acc = acc << bit_depth | v, nbits += bit_depth;
          if (nbits == 8) raw += char(acc), acc = 0, nbits = 0;
        }
      }
    if (nbits) raw += char(acc << (8 - nbits));
  };
  if (!interlace) {
    for (std::uint32_t y = 0; y < h; ++y) emit_row(y, 0, 1);
  } else {
    const std::uint32_t pass[7][4] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4},
                                      {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};
    for (const auto& p : pass) {
      if (p[0] >= w || p[1] >= h) continue;  // empty pass: no rows at all
      for (std::uint32_t y = p[1]; y < h; y += p[3]) emit_row(y, p[0], p[2]);
    }
  }
  Bytes out = "\x89PNG\r\n\x1a\n";
  Bytes ihdr;
  put32be(ihdr, w);
  put32be(ihdr, h);
  ihdr += char(bit_depth), ihdr += char(ct), ihdr += '\0', ihdr += '\0', ihdr += char(interlace);
  png_chunk(out, "IHDR", ihdr);
  if (!plte.empty()) png_chunk(out, "PLTE", plte);
  if (!trns.empty()) png_chunk(out, "tRNS", trns);
  png_chunk(out, "IDAT", zlib_stored(raw));
  png_chunk(out, "IEND", "");
  return out;
}

// ---- hand-made TIFF (uncompressed), for tiles, planes, byte orders, sample formats --------

struct TiffSpec {
  bool big_endian = false;
  std::uint16_t bps = 8, sample_format = 1, planar = 1, photometric = 1;
  bool tiled = false;
  std::uint32_t tile = 16, rows_per_strip = 3;
};

/// A TIFF holding `img` (tight host image) as described by `spec`.
Bytes make_tiff(const Image& img, const TiffSpec& s) {
  const bool be = s.big_endian;
  auto p16 = [&](Bytes& b, unsigned v) {
    if (be)
      b += char(v >> 8), b += char(v & 0xff);
    else
      put16le(b, v);
  };
  auto p32 = [&](Bytes& b, std::uint32_t v) { be ? put32be(b, v) : put32le(b, v); };
  const std::uint32_t w = std::uint32_t(img.width()), h = std::uint32_t(img.height());
  const int spp = img.channels();
  const std::size_t bs = s.bps / 8;
  // A sample in the file's byte order.
  auto sample_bytes = [&](std::uint32_t x, std::uint32_t y, int c) {
    const auto* p = img.row<char>(y) + (std::size_t(x) * spp + c) * bs;
    Bytes v(p, bs);
    if (be) std::reverse(v.begin(), v.end());
    return v;
  };
  Bytes data;
  std::vector<std::uint32_t> offsets, counts;
  const std::uint32_t kData = 8;
  if (s.tiled) {
    for (std::uint32_t ty = 0; ty < h; ty += s.tile)
      for (std::uint32_t tx = 0; tx < w; tx += s.tile) {
        offsets.push_back(kData + std::uint32_t(data.size()));
        for (std::uint32_t y = ty; y < ty + s.tile; ++y)
          for (std::uint32_t x = tx; x < tx + s.tile; ++x)
            for (int c = 0; c < spp; ++c)
              data += (x < w && y < h) ? sample_bytes(x, y, c) : Bytes(bs, '\0');
        counts.push_back(kData + std::uint32_t(data.size()) - offsets.back());
      }
  } else {
    const int planes = s.planar == 2 ? spp : 1;
    for (int pl = 0; pl < planes; ++pl)
      for (std::uint32_t y0 = 0; y0 < h; y0 += s.rows_per_strip) {
        offsets.push_back(kData + std::uint32_t(data.size()));
        for (std::uint32_t y = y0; y < std::min(h, y0 + s.rows_per_strip); ++y)
          for (std::uint32_t x = 0; x < w; ++x)
            for (int c = 0; c < spp; ++c)
              if (planes == 1 || c == pl) data += sample_bytes(x, y, c);
        counts.push_back(kData + std::uint32_t(data.size()) - offsets.back());
      }
  }
  struct Entry {
    std::uint16_t tag, type;
    std::vector<std::uint32_t> v;
  };
  std::vector<Entry> e = {{256, 4, {w}},
                          {257, 4, {h}},
                          {258, 3, std::vector<std::uint32_t>(spp, s.bps)},
                          {259, 3, {1}},
                          {262, 3, {s.photometric}}};
  if (!s.tiled) e.push_back({273, 4, offsets});
  e.push_back({277, 3, {std::uint32_t(spp)}});
  if (!s.tiled) e.push_back({278, 4, {s.rows_per_strip}}), e.push_back({279, 4, counts});
  e.push_back({284, 3, {s.planar}});
  if (s.tiled)
    e.push_back({322, 4, {s.tile}}), e.push_back({323, 4, {s.tile}}),
        e.push_back({324, 4, offsets}), e.push_back({325, 4, counts});
  if (spp == 4) e.push_back({338, 3, {2}});
  e.push_back({339, 3, std::vector<std::uint32_t>(spp, s.sample_format)});

  Bytes out = be ? Bytes("MM\0*", 4) : Bytes("II*\0", 4);
  const std::uint32_t ifd = kData + std::uint32_t(data.size());
  p32(out, ifd);
  out += data;
  // IFD, then the values that do not fit in 4 bytes.
  const std::uint32_t extra_at = ifd + 2 + 12 * std::uint32_t(e.size()) + 4;
  Bytes extra;
  p16(out, unsigned(e.size()));
  for (const auto& en : e) {
    p16(out, en.tag), p16(out, en.type), p32(out, std::uint32_t(en.v.size()));
    Bytes val;
    for (auto v : en.v) en.type == 3 ? p16(val, v) : p32(val, v);
    if (val.size() <= 4) {
      val.resize(4, '\0');
      out += val;
    } else {
      p32(out, extra_at + std::uint32_t(extra.size()));
      extra += val;
    }
  }
  p32(out, 0);
  return out + extra;
}

// ---- hand-made NPY -------------------------------------------------------------------------

Bytes make_npy(int version, const std::string& dict, const Bytes& data) {
  Bytes out = "\x93NUMPY";
  out += char(version), out += '\0';
  std::string h = dict;
  const std::size_t pre = version == 1 ? 10 : 12;
  while ((pre + h.size() + 1) % 64) h += ' ';
  h += '\n';
  if (version == 1)
    put16le(out, unsigned(h.size()));
  else
    put32le(out, std::uint32_t(h.size()));
  return out + h + data;
}

/// The samples of a tight host image as bytes, optionally each sample byte-reversed.
Bytes image_bytes(const Image& img, bool reverse) {
  Bytes b;
  const std::size_t bs = depth_bytes(img.depth());
  for (std::int64_t y = 0; y < img.height(); ++y) {
    const auto* p = img.row<char>(y);
    for (std::int64_t i = 0; i < img.width() * img.channels(); ++i) {
      Bytes v(p + i * bs, bs);
      if (reverse) std::reverse(v.begin(), v.end());
      b += v;
    }
  }
  return b;
}

Image tight_random(std::int64_t w, std::int64_t h, Format fmt, std::mt19937_64& rng) {
  auto t = random_image(w, h, fmt, rng, /*tight=*/true);
  return clone(t.view);
}

// ---- round trips ---------------------------------------------------------------------------

struct WriteCase {
  const char* ext;
  std::vector<Depth> depths;
  std::vector<int> channels;
};

std::vector<WriteCase> exact_cases() {
  std::vector<WriteCase> c = {
      {".png", {Depth::u8, Depth::u16}, {1, 3, 4}},
      {".pgm", {Depth::u8, Depth::u16}, {1}},
      {".ppm", {Depth::u8, Depth::u16}, {3}},
      {".pnm", {Depth::u8, Depth::u16}, {1, 3}},
      {".npy", {Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32}, {1, 2, 3, 4}},
  };
  if (have_tiff())
    c.push_back({".tif", {Depth::u8, Depth::u16, Depth::s16, Depth::f32}, {1, 3, 4}});
  return c;
}

TEST(IoRoundTrip, LosslessFormatsAreBitExactForEveryDepthAndChannelCount) {
  TempDir dir;
  auto rng = make_rng(0x10a1);
  const std::vector<Size> sizes = {{1, 1}, {1, 9}, {9, 1}, {17, 13}, {70, 33}};
  for (const auto& wc : exact_cases())
    for (Depth d : wc.depths)
      for (int ch : wc.channels)
        for (Size s : sizes) {
          const Format fmt{d, ch};
          PIXFLOW_TRACE(testing::Message()
                        << wc.ext << " " << fmt_desc(fmt) << " " << s.w << "x" << s.h);
          auto src = random_image(s.w, s.h, fmt, rng);  // odd offset, padded stride
          const std::string path = dir / (std::string("rt") + wc.ext);
          write_image(path, src);
          Image got = read_image(path);
          ASSERT_EQ(got.format(), fmt);
          ASSERT_EQ(compare(got, src), "");
        }
  EXPECT_EQ(dir.entries().size(), exact_cases().size()) << "temporary files were left behind";
}

TEST(IoRoundTrip, LargeImageRoundTripsThroughPngAndNpy) {
  TempDir dir;
  auto rng = make_rng(0x10a2);
  auto src = random_image(1920, 1080, {Depth::u8, 3}, rng);
  for (const char* name : {"big.png", "big.npy"}) {
    PIXFLOW_TRACE(name);
    write_image(dir / name, src);
    ASSERT_EQ(compare(read_image(dir / name), src), "");
  }
}

/// A smooth test picture: JPEG's error on it is small and stable.
Image smooth_image(std::int64_t w, std::int64_t h, int ch) {
  Image img(w, h, {Depth::u8, ch});
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x)
      for (int c = 0; c < ch; ++c)
        img.row<std::uint8_t>(y)[x * ch + c] = std::uint8_t(
            128 + 90 * std::sin(double(x) / (9 + 3 * c)) * std::cos(double(y) / (11 + 2 * c)));
  return img;
}

TEST(IoRoundTrip, JpegMatchesOpenCVDecodeExactlyAndOriginalWithinTolerance) {
#if PIXFLOW_HAVE_OPENCV
  TempDir dir;
  for (int ch : {1, 3})
    for (Size s : std::vector<Size>{{1, 1}, {1, 9}, {9, 1}, {17, 13}, {160, 90}}) {
      PIXFLOW_TRACE(testing::Message() << "jpeg u8x" << ch << " " << s.w << "x" << s.h);
      Image src = smooth_image(s.w, s.h, ch);
      const std::string path = dir / "q.jpg";
      write_image(path, src, {95});
      Image got = read_image(path);
      ASSERT_EQ(got.format(), (Format{Depth::u8, ch}));
      cv::Mat cvimg = cv::imread(path, cv::IMREAD_UNCHANGED);
      ASSERT_FALSE(cvimg.empty());
      if (ch == 3) cv::cvtColor(cvimg, cvimg, cv::COLOR_BGR2RGB);
      ASSERT_EQ(compare(got, view_of(cvimg)), "") << "pixflow and OpenCV decode differently";
      // Quality 95 on a smooth picture, libjpeg-turbo 2.1.5: measured max error 1 (gray) and
      // 8 (RGB: 4:2:0 chroma subsampling at the strongest colour gradients), mean error <= 0.9.
      // The bounds leave a little room for other libjpeg builds; a wrong channel order or a
      // broken encoder gives errors near 100.
      EXPECT_EQ(compare(got, src, ch == 1 ? 2 : 12), "");
      double sum = 0;
      for (std::int64_t y = 0; y < s.h; ++y)
        for (std::int64_t x = 0; x < s.w; ++x)
          for (int c = 0; c < ch; ++c) sum += std::abs(sample(got, x, y, c) - sample(src, x, y, c));
      EXPECT_LE(sum / double(s.w * s.h * ch), 1.5) << "mean absolute error";
    }
#else
  GTEST_SKIP() << "built without OpenCV (C++): the JPEG cross-check needs cv::imread";
#endif
}

// ---- files written by OpenCV ---------------------------------------------------------------

#if PIXFLOW_HAVE_OPENCV
/// RGB(A) <-> BGR(A) for any depth (cv::cvtColor takes no s16): swaps channels 0 and 2.
cv::Mat swap_rb(const cv::Mat& m) {
  if (m.channels() < 3) return m.clone();
  std::vector<cv::Mat> planes;
  cv::split(m, planes);
  std::swap(planes[0], planes[2]);
  cv::Mat out;
  cv::merge(planes, out);
  return out;
}
cv::Mat to_bgr(const cv::Mat& m) {
  return swap_rb(m);
}
cv::Mat to_rgb(const cv::Mat& m) {
  return swap_rb(m);
}
#endif

TEST(IoOpenCV, ReadsFilesWrittenByOpenCVEqualToImread) {
#if PIXFLOW_HAVE_OPENCV
  TempDir dir;
  auto rng = make_rng(0x10b1);
  struct C {
    const char* ext;
    Depth d;
    int ch;
    std::vector<int> params;
  };
  std::vector<C> cases;
  for (Depth d : {Depth::u8, Depth::u16})
    for (int ch : {1, 3, 4}) cases.push_back({".png", d, ch, {}});
  cases.push_back({".jpg", Depth::u8, 1, {}});
  cases.push_back({".jpg", Depth::u8, 3, {}});
  cases.push_back({".jpg", Depth::u8, 3, {cv::IMWRITE_JPEG_PROGRESSIVE, 1}});
  for (Depth d : {Depth::u8, Depth::u16}) {
    cases.push_back({".pgm", d, 1, {}});
    cases.push_back({".ppm", d, 3, {}});
    cases.push_back({".pgm", d, 1, {cv::IMWRITE_PXM_BINARY, 0}});  // ASCII P2
    cases.push_back({".ppm", d, 3, {cv::IMWRITE_PXM_BINARY, 0}});  // ASCII P3
  }
  if (have_tiff())
    for (Depth d : {Depth::u8, Depth::u16, Depth::f32})
      for (int ch : {1, 3, 4})
        // OpenCV writes f32x3 as LogLuv (lossy, SGILOG) unless asked for no compression.
        cases.push_back({".tif", d, ch,
                         d == Depth::f32 ? std::vector<int>{cv::IMWRITE_TIFF_COMPRESSION, 1}
                                         : std::vector<int>{}});
  for (const auto& c : cases)
    for (Size s : std::vector<Size>{{1, 1}, {1, 9}, {9, 1}, {17, 13}, {67, 41}}) {
      PIXFLOW_TRACE(testing::Message()
                    << "OpenCV " << c.ext << " " << depth_name(c.d) << "x" << c.ch << " " << s.w
                    << "x" << s.h << (c.params.empty() ? "" : " (params)"));
      auto src = random_image(s.w, s.h, {c.d, c.ch}, rng, true);
      const std::string path = dir / (std::string("cv") + c.ext);
      ASSERT_TRUE(cv::imwrite(path, to_bgr(to_mat(src)), c.params));
      cv::Mat want = to_rgb(cv::imread(path, cv::IMREAD_UNCHANGED));
      ASSERT_FALSE(want.empty());
      Image got = read_image(path);
      ASSERT_EQ(compare(got, view_of(want)), "");
      if (std::string(c.ext) != ".jpg") {
        ASSERT_EQ(compare(got, src), "");
      }
    }
#else
  GTEST_SKIP() << "built without OpenCV (C++): nothing to cross-check against";
#endif
}

TEST(IoOpenCV, OpenCVReadsFilesWrittenByPixflow) {
#if PIXFLOW_HAVE_OPENCV
  TempDir dir;
  auto rng = make_rng(0x10b2);
  for (const auto& wc : exact_cases()) {
    if (std::string(wc.ext) == ".npy") continue;
    for (Depth d : wc.depths)
      for (int ch : wc.channels) {
        PIXFLOW_TRACE(testing::Message() << wc.ext << " " << depth_name(d) << "x" << ch);
        auto src = random_image(23, 11, {d, ch}, rng);
        const std::string path = dir / (std::string("px") + wc.ext);
        write_image(path, src);
        cv::Mat got = to_rgb(cv::imread(path, cv::IMREAD_UNCHANGED));
        ASSERT_FALSE(got.empty());
        if (std::string(wc.ext) == ".tif" && d == Depth::u8 && ch == 4) {
          // pixflow writes straight (unassociated) alpha, as PNG has it; OpenCV reads 8-bit
          // RGBA TIFF through TIFFReadRGBAImage, which premultiplies unassociated alpha.
          for (std::int64_t y = 0; y < 11; ++y)
            for (std::int64_t x = 0; x < 23; ++x) {
              const double a = sample(src, x, y, 3);
              ASSERT_EQ(sample(view_of(got), x, y, 3), a);
              for (int c = 0; c < 3; ++c)
                ASSERT_NEAR(sample(view_of(got), x, y, c), sample(src, x, y, c) * a / 255, 1);
            }
          continue;
        }
        ASSERT_EQ(compare(view_of(got), src), "");
      }
  }
#else
  GTEST_SKIP() << "built without OpenCV (C++)";
#endif
}

// ---- hand-made PNG layouts -----------------------------------------------------------------

TEST(IoPng, PaletteGrayAlphaLowBitDepthsAndInterlaceDecodeAsDocumented) {
  TempDir dir;
  auto rng = make_rng(0x10c1);
  struct C {
    int bit_depth, ct;
    bool trns;
  };
  const std::vector<C> cases = {{1, 0, false},  {2, 0, false}, {4, 0, false},  {8, 0, false},
                                {16, 0, false}, {8, 2, false}, {16, 2, false}, {8, 4, false},
                                {16, 4, false}, {8, 6, false}, {16, 6, false}, {1, 3, false},
                                {2, 3, true},   {4, 3, false}, {8, 3, true},   {8, 3, false}};
  for (const auto& c : cases)
    for (bool interlace : {false, true})
      for (Size s : std::vector<Size>{{1, 1}, {3, 2}, {9, 1}, {1, 9}, {17, 13}}) {
        PIXFLOW_TRACE(testing::Message() << "bit_depth " << c.bit_depth << " colour type " << c.ct
                                         << (c.trns ? " +tRNS" : "") << (interlace ? " Adam7" : "")
                                         << " " << s.w << "x" << s.h);
        const int ch = png_channels(c.ct);
        const unsigned maxv = (1u << c.bit_depth) - 1;
        const unsigned npal = c.ct == 3 ? std::min(maxv + 1, 20u) : 0;
        std::vector<unsigned> samples(std::size_t(s.w * s.h * ch));
        for (auto& v : samples) v = unsigned(rng() % (c.ct == 3 ? npal : maxv + 1));
        Bytes plte, trns;
        for (unsigned i = 0; i < npal * 3; ++i) plte += char(rng() & 0xff);
        if (c.trns)
          for (unsigned i = 0; i < npal / 2; ++i) trns += char(rng() & 0xff);  // short tRNS
        const std::string path = dir / "hand.png";
        write_bytes(path, make_png(std::uint32_t(s.w), std::uint32_t(s.h), c.bit_depth, c.ct,
                                   samples, interlace, plte, trns));
        Image got = read_image(path);
        // The documented mapping (docs/io.md).
        const int out_ch = c.ct == 0 ? 1 : c.ct == 2 ? 3 : c.ct == 3 ? (c.trns ? 4 : 3) : 4;
        ASSERT_EQ(got.format(), (Format{c.bit_depth == 16 ? Depth::u16 : Depth::u8, out_ch}));
        for (std::int64_t y = 0; y < s.h; ++y)
          for (std::int64_t x = 0; x < s.w; ++x) {
            const unsigned* px = &samples[std::size_t((y * s.w + x) * ch)];
            unsigned want[4] = {};
            if (c.ct == 3) {
              for (int k = 0; k < 3; ++k) want[k] = std::uint8_t(plte[px[0] * 3 + k]);
              want[3] = px[0] < trns.size() ? std::uint8_t(trns[px[0]]) : 255;
            } else if (c.ct == 4) {
              want[0] = want[1] = want[2] = px[0], want[3] = px[1];
            } else {
              // gray below 8 bits is scaled to 0..255 (libpng's expand: v * 255 / maxv)
              for (int k = 0; k < ch; ++k) want[k] = c.bit_depth < 8 ? px[k] * (255 / maxv) : px[k];
            }
            for (int k = 0; k < out_ch; ++k)
              ASSERT_EQ(sample(got, x, y, k), want[k]) << "pixel " << x << "," << y << " ch " << k;
          }
#if PIXFLOW_HAVE_OPENCV
        if (c.bit_depth == 8 || c.bit_depth < 8) {
          cv::Mat m = to_rgb(cv::imread(path, cv::IMREAD_UNCHANGED));
          ASSERT_EQ(compare(got, view_of(m)), "") << "differs from cv::imread";
        }
#endif
      }
}

// ---- hand-made TIFF layouts ----------------------------------------------------------------

TEST(IoTiff, StripsTilesBothByteOrdersAndSampleFormatsReadUnchanged) {
  if (!have_tiff()) GTEST_SKIP() << "built without libtiff";
  TempDir dir;
  auto rng = make_rng(0x10d1);
  struct C {
    Depth d;
    std::uint16_t bps, sf;
  };
  for (C c : {C{Depth::u8, 8, 1}, C{Depth::u16, 16, 1}, C{Depth::s16, 16, 2}, C{Depth::f32, 32, 3}})
    for (int ch : {1, 3, 4})
      for (bool be : {false, true})
        for (bool tiled : {false, true})
          for (Size s : std::vector<Size>{{1, 1}, {9, 1}, {1, 9}, {17, 13}, {40, 20}}) {
            PIXFLOW_TRACE(testing::Message()
                          << depth_name(c.d) << "x" << ch << (be ? " MM" : " II")
                          << (tiled ? " tiles" : " strips") << " " << s.w << "x" << s.h);
            Image src = tight_random(s.w, s.h, {c.d, ch}, rng);
            TiffSpec spec;
            spec.big_endian = be, spec.bps = c.bps, spec.sample_format = c.sf;
            spec.tiled = tiled, spec.photometric = ch == 1 ? 1 : 2;
            const std::string path = dir / "hand.tif";
            write_bytes(path, make_tiff(src, spec));
            Image got = read_image(path);
            ASSERT_EQ(got.format(), src.format());
            ASSERT_EQ(compare(got, src), "");
          }
}

TEST(IoTiff, UnsupportedLayoutsAreReportedAsUnsupported) {
  if (!have_tiff()) GTEST_SKIP() << "built without libtiff";
  TempDir dir;
  auto rng = make_rng(0x10d2);
  const std::string path = dir / "bad.tif";
  Image rgb = tight_random(8, 5, {Depth::u8, 3}, rng);
  TiffSpec planar;
  planar.planar = 2, planar.photometric = 2;
  write_bytes(path, make_tiff(rgb, planar));
  expect_error([&] { read_image(path); }, Status::unsupported, {path, "PlanarConfiguration"});
  Image two = tight_random(8, 5, {Depth::u8, 2}, rng);
  write_bytes(path, make_tiff(two, {}));
  expect_error([&] { read_image(path); }, Status::unsupported, {path, "samples per pixel"});
  Image s32 = tight_random(8, 5, {Depth::s32, 1}, rng);
  TiffSpec i32;
  i32.bps = 32, i32.sample_format = 2;
  write_bytes(path, make_tiff(s32, i32));
  expect_error([&] { read_image(path); }, Status::unsupported, {path, "bits per sample"});
}

TEST(IoTiff, WithoutLibtiffTiffFilesAreUnsupported) {
  if (have_tiff()) GTEST_SKIP() << "built with libtiff (this checks the TIFF-less build)";
  TempDir dir;
  auto rng = make_rng(0x10d3);
  const std::string path = dir / "x.tif";
  write_bytes(path, make_tiff(tight_random(4, 3, {Depth::u8, 1}, rng), {}));
  expect_error([&] { read_image(path); }, Status::unsupported,
               {path, "pixflow was built without libtiff"});
  fs::remove(path);
  expect_error(
      [&] {
        write_image(path, random_image(4, 3, {Depth::u8, 1}, rng));
      },
      Status::unsupported, {path, "pixflow was built without libtiff"});
  EXPECT_TRUE(dir.entries().empty());
}

// ---- NPY -----------------------------------------------------------------------------------

TEST(IoNpy, HandMadeFilesOfEveryDtypeByteOrderShapeAndVersion) {
  TempDir dir;
  auto rng = make_rng(0x10e1);
  struct D {
    Depth d;
    const char* code;
  };
  for (D dt : {D{Depth::u8, "u1"}, D{Depth::u16, "u2"}, D{Depth::s16, "i2"}, D{Depth::s32, "i4"},
               D{Depth::f32, "f4"}})
    for (char order : {'<', '>', '|'})
      for (int shape_form : {0, 1, 3, 4})  // (H,W), (H,W,1), (H,W,3), (H,W,4)
        for (int version : {1, 2, 3}) {
          if (order == '|' && dt.d != Depth::u8) continue;
          const int ch = shape_form == 0 ? 1 : shape_form;
          const std::string descr = std::string(1, order) + dt.code;
          PIXFLOW_TRACE(testing::Message()
                        << descr << " ch " << ch << " form " << shape_form << " v" << version);
          Image src = tight_random(7, 5, {dt.d, ch}, rng);
          const std::string shape =
              shape_form == 0 ? "(5, 7)" : "(5, 7, " + std::to_string(ch) + ")";
          const bool reverse = order == '>' && depth_bytes(dt.d) > 1;  // host is little-endian
          const std::string path = dir / "hand.npy";
          write_bytes(path, make_npy(version,
                                     "{'descr': '" + descr +
                                         "', 'fortran_order': False, 'shape': " + shape + ", }",
                                     image_bytes(src, reverse)));
          Image got = read_image(path);
          ASSERT_EQ(got.format(), src.format());
          ASSERT_EQ(compare(got, src), "");
        }
  // Key order and spacing are free; "shape" may come first and use Python 2 'L' suffixes.
  Image src = tight_random(3, 2, {Depth::u8, 1}, rng);
  write_bytes(dir / "k.npy",
              make_npy(1, "{\"shape\":(2L,3L),\"fortran_order\":False,\"descr\":\"|u1\"}",
                       image_bytes(src, false)));
  ASSERT_EQ(compare(read_image(dir / "k.npy"), src), "");
}

TEST(IoNpy, UnsupportedDtypesShapesAndFortranOrderAreUnsupported) {
  TempDir dir;
  const std::string path = dir / "bad.npy";
  const Bytes data(1000, '\0');
  struct C {
    std::string dict, part;
  };
  const std::vector<C> cases = {
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", "dtype '<f8'"},
      {"{'descr': '|i1', 'fortran_order': False, 'shape': (2, 3), }", "dtype '|i1'"},
      {"{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3), }", "dtype '|b1'"},
      {"{'descr': '<u2', 'fortran_order': True, 'shape': (2, 3), }", "Fortran"},
      {"{'descr': '<u2', 'fortran_order': False, 'shape': (6,), }", "shape"},
      {"{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3, 5), }", "channel count"},
      {"{'descr': '<u2', 'fortran_order': False, 'shape': (1, 2, 3, 1), }", "shape"},
      {"{'descr': '<u2', 'fortran_order': False, 'shape': (0, 3), }", "empty"},
      {"{'descr': [('a', '<u2')], 'fortran_order': False, 'shape': (2, 3), }", "structured"},
  };
  for (const auto& c : cases) {
    PIXFLOW_TRACE(c.dict);
    write_bytes(path, make_npy(1, c.dict, data));
    expect_error([&] { read_image(path); }, Status::unsupported, {path, c.part});
  }
  Bytes v4 = make_npy(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }", data);
  v4[6] = 4;
  write_bytes(path, v4);
  expect_error([&] { read_image(path); }, Status::unsupported, {path, "version 4"});
}

// ---- bad files -----------------------------------------------------------------------------

/// One valid file of each kind, for the truncation and corruption sweeps.
std::vector<std::pair<std::string, Bytes>> sample_files(const TempDir& dir) {
  auto rng = make_rng(0x10f0);
  std::vector<std::pair<std::string, Bytes>> out;
  auto add = [&](const std::string& name, Format fmt) {
    auto src = random_image(23, 17, fmt, rng);
    write_image(dir / name, src);
    out.emplace_back(name, read_bytes(dir / name));
    fs::remove(dir / name);
  };
  add("a.png", {Depth::u8, 3});
  add("b.png", {Depth::u16, 1});
  add("c.jpg", {Depth::u8, 3});
  add("d.jpg", {Depth::u8, 1});
  add("e.pgm", {Depth::u8, 1});
  add("f.ppm", {Depth::u16, 3});
  add("g.npy", {Depth::f32, 3});
  add("h.npy", {Depth::u8, 1});
  if (have_tiff()) {
    add("i.tif", {Depth::u16, 3});
    Image img = tight_random(23, 17, {Depth::u8, 1}, rng);
    TiffSpec tiles;
    tiles.tiled = true;
    out.emplace_back("j.tif", make_tiff(img, tiles));
    TiffSpec strips;
    strips.big_endian = true;
    out.emplace_back("k.tif", make_tiff(img, strips));
  }
  // ASCII PGM with a trailing newline after the last sample.
  Bytes p2 = "P2\n# a comment\n5 3\n255\n";
  for (int i = 0; i < 15; ++i) p2 += std::to_string(100 + i * 9) + (i % 5 == 4 ? "\n" : " ");
  out.emplace_back("l.pgm", p2);
  return out;
}

/// Cut points: every byte of the first 300, then a spread up to the full size - 1.
std::vector<std::size_t> cut_points(std::size_t size) {
  std::vector<std::size_t> cuts;
  for (std::size_t i = 0; i < std::min<std::size_t>(size, 300); ++i) cuts.push_back(i);
  for (std::size_t i = 300; i < size; i += std::max<std::size_t>(1, size / 97)) cuts.push_back(i);
  if (size > 1) cuts.push_back(size - 1);
  return cuts;
}

TEST(IoCorrupt, TruncatedFilesOfEveryFormatAreIoErrors) {
  TempDir dir;
  for (const auto& [name, bytes] : sample_files(dir)) {
    const std::string path = dir / ("cut_" + name);
    ASSERT_NO_THROW({
      write_bytes(path, bytes);
      read_image(path);
    }) << name;
    // An ASCII file cut inside its last number still reads (e.g. "107" -> "10"); that is
    // undetectable by design, so ASCII files are cut only before their last token.
    std::size_t limit = bytes.size();
    if (name == "l.pgm") limit = bytes.find_last_of(' ', bytes.size() - 2) + 1;
    for (std::size_t cut : cut_points(bytes.size())) {
      if (cut >= limit) continue;
      PIXFLOW_TRACE(testing::Message() << name << " cut at " << cut << " of " << bytes.size());
      write_bytes(path, bytes.substr(0, cut));
      expect_error([&] { read_image(path); }, Status::io_error, {path});
      if (HasFailure()) return;
    }
  }
}

TEST(IoCorrupt, CorruptedHeaderBytesNeverCrash) {
  TempDir dir;
  auto rng = make_rng(0x10f2);
  for (const auto& [name, bytes] : sample_files(dir)) {
    const std::string path = dir / ("bad_" + name);
    const std::size_t header =
        std::min<std::size_t>(bytes.size(), name.ends_with(".tif") ? 8 : 160);
    std::vector<std::size_t> where;
    for (std::size_t i = 0; i < header; ++i) where.push_back(i);
    if (name.ends_with(".tif")) {  // the IFD sits at the end of pixflow's and make_tiff's files
      const std::size_t ifd = bytes.size() > 400 ? bytes.size() - 400 : 0;
      for (std::size_t i = ifd; i < bytes.size(); ++i) where.push_back(i);
    }
    for (std::size_t i : where)
      for (unsigned v :
           {0x00u, 0xffu, unsigned(rng() & 0xff), unsigned(std::uint8_t(bytes[i]) ^ 0x01u)}) {
        Bytes b = bytes;
        if (std::uint8_t(b[i]) == v) continue;
        b[i] = char(v);
        write_bytes(path, b);
        PIXFLOW_TRACE(testing::Message() << name << " byte " << i << " := " << int(v));
        try {
          Image img = read_image(path);
          // Some bytes do not matter (JPEG density, NPY padding, TIFF tags libtiff ignores),
          // but PNG protects its header with a CRC: every change there must be detected.
          if (name.ends_with(".png") && i < 33) ADD_FAILURE() << "PNG header change not detected";
        } catch (const Error& e) {
          const Status st = e.status();
          EXPECT_TRUE(st == Status::io_error || st == Status::unsupported ||
                      st == Status::limit_exceeded)
              << status_name(st) << ": " << e.what();
          if (name.ends_with(".png") && i < 33) {
            EXPECT_EQ(status_name(st), std::string(status_name(Status::io_error))) << e.what();
          }
          EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        } catch (const std::exception& e) {
          ADD_FAILURE() << "not a pixflow::Error: " << e.what();
        }
        if (HasFailure()) return;
      }
  }
}

TEST(IoCorrupt, BadFilesReportIoErrorOrUnsupportedWithThePath) {
  TempDir dir;
  const std::string missing = dir / "missing.png";
  expect_error([&] { read_image(missing); }, Status::io_error, {missing, "cannot open"});
  const std::string empty = dir / "empty.png";
  write_bytes(empty, "");
  expect_error([&] { read_image(empty); }, Status::io_error, {empty, "empty"});
  expect_error([&] { read_image(dir.path().string()); }, Status::io_error, {dir.path().string()});
  const std::string text = dir / "text.png";
  write_bytes(text, "hello, this is not an image");
  expect_error([&] { read_image(text); }, Status::io_error, {text, "signature"});
  write_bytes(text, "GIF89a\x01\x00\x01\x00");
  expect_error([&] { read_image(text); }, Status::unsupported, {text, "GIF"});
  write_bytes(text, "P4\n8 1\n\xff");
  expect_error([&] { read_image(text); }, Status::unsupported, {text, "P4"});
  write_bytes(text, "P5\n8 1\n70000\n");
  expect_error([&] { read_image(text); }, Status::io_error, {text, "maxval"});
  write_bytes(text, "P5\n2 1\n100\n\x05\x65");  // 0x65 = 101 > maxval
  expect_error([&] { read_image(text); }, Status::io_error, {text, "maxval"});
  write_bytes(text, "P2\n2 1\n100\n5 x\n");
  expect_error([&] { read_image(text); }, Status::io_error, {text, "ASCII"});

  // JPEG with four components: CMYK (no Adobe marker) and YCCK (Adobe transform 2). Only the
  // header is needed: pixflow stops at the colour space.
  auto jpeg4 = [](bool adobe) {
    Bytes j = "\xff\xd8";
    if (adobe)
      j += Bytes(
          "\xff\xee\x00\x0e"
          "Adobe\x00\x64\x00\x00\x00\x00\x02",
          16);
    j += Bytes("\xff\xc0\x00\x14\x08\x00\x10\x00\x10\x04", 10);
    for (int c = 1; c <= 4; ++c) j += char(c), j += '\x11', j += '\0';
    j += Bytes("\xff\xda\x00\x0e\x04", 5);
    for (int c = 1; c <= 4; ++c) j += char(c), j += '\0';
    j += Bytes("\x00\x3f\x00\xff\xd9", 5);
    return j;
  };
  const std::string cmyk = dir / "cmyk.jpg";
  write_bytes(cmyk, jpeg4(false));
  expect_error([&] { read_image(cmyk); }, Status::unsupported, {cmyk, "CMYK"});
  write_bytes(cmyk, jpeg4(true));
  expect_error([&] { read_image(cmyk); }, Status::unsupported, {cmyk, "YCCK"});
}

// ---- limits --------------------------------------------------------------------------------

TEST(IoLimits, HugeHeaderSizesAreLimitExceededBeforeAllocating) {
  TempDir dir;
  // PNG: IHDR 2^20 + 1 wide with a valid CRC (and no pixel data at all).
  const std::string png = dir / "wide.png";
  write_bytes(png, wide_png_header());
  expect_error([&] { read_image(png, IoLimits{}); }, Status::limit_exceeded,
               {png, "width 1048577", "max_side"});
  // NPY: shape (100000, 100000): 10^10 pixels.
  const std::string npy = dir / "huge.npy";
  write_bytes(
      npy,
      make_npy(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (100000, 100000), }", ""));
  expect_error([&] { read_image(npy, IoLimits{}); }, Status::limit_exceeded, {npy, "max_pixels"});
  // Overflowing dimensions saturate and fail the limits, never wrap.
  write_bytes(
      npy,
      make_npy(1,
               "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 3), }",
               ""));
  expect_error([&] { read_image(npy, IoLimits{}); }, Status::limit_exceeded, {npy, "height"});
  // With limits out of the way, the short file is caught before allocating 40 GB.
  const IoLimits none{INT64_MAX, INT64_MAX, INT64_MAX};
  write_bytes(
      npy,
      make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000), }", ""));
  expect_error([&] { read_image(npy, none); }, Status::io_error, {npy, "truncated"});
  // PGM 99999999 wide.
  const std::string pgm = dir / "wide.pgm";
  write_bytes(pgm, "P5\n99999999 1\n255\n");
  expect_error([&] { read_image(pgm, IoLimits{}); }, Status::limit_exceeded,
               {pgm, "width 99999999", "max_side"});
  write_bytes(pgm, "P5\n1000 1000\n255\n");
  expect_error([&] { read_image(pgm, none); }, Status::io_error, {pgm, "truncated"});
  write_bytes(pgm, "P2\n1000 1000\n255\n1 2 3\n");
  expect_error([&] { read_image(pgm, none); }, Status::io_error, {pgm, "truncated"});
  // JPEG: SOF claiming 65000 x 65000.
  const std::string jpg = dir / "huge.jpg";
  write_image(jpg, smooth_image(16, 16, 3));
  Bytes j = read_bytes(jpg);
  const std::size_t sof = j.find("\xff\xc0");
  ASSERT_NE(sof, Bytes::npos);
  j[sof + 5] = char(0xfd), j[sof + 6] = char(0xe8), j[sof + 7] = char(0xfd),
          j[sof + 8] = char(0xe8);
  write_bytes(jpg, j);
  expect_error([&] { read_image(jpg, IoLimits{}); }, Status::limit_exceeded, {jpg, "max_pixels"});
  if (have_tiff()) {
    // TIFF: ImageWidth 2^20 + 1 (the strip table then lies, but the limit comes first).
    auto rng = make_rng(0x1101);
    Bytes t = make_tiff(tight_random(4, 4, {Depth::u8, 1}, rng), {});
    const std::uint32_t ifd = std::uint8_t(t[4]) | std::uint8_t(t[5]) << 8;
    ASSERT_EQ(std::uint8_t(t[ifd + 2]), 0);  // first entry: tag 256 (ImageWidth), LONG
    ASSERT_EQ(std::uint8_t(t[ifd + 3]), 1);
    t[ifd + 2 + 8] = 1, t[ifd + 2 + 9] = 0, t[ifd + 2 + 10] = 0x10;
    const std::string tif = dir / "wide.tif";
    write_bytes(tif, t);
    expect_error([&] { read_image(tif, IoLimits{}); }, Status::limit_exceeded,
                 {tif, "width 1048577", "max_side"});
  }
}

TEST(IoLimits, EachLimitIsEnforcedForEveryFormat) {
  TempDir dir;
  auto rng = make_rng(0x1102);
  std::vector<std::string> names = {"l.png", "l.jpg", "l.pgm", "l.ppm", "l.npy"};
  if (have_tiff()) names.push_back("l.tif");
  for (const auto& n : names) {
    PIXFLOW_TRACE(n);
    const int ch = n == "l.pgm" ? 1 : 3;
    const std::string path = dir / n;
    write_image(path, random_image(17, 13, {Depth::u8, ch}, rng));
    IoLimits l;
    l.max_side = 16;
    expect_error([&] { read_image(path, l); }, Status::limit_exceeded, {path, "width 17", "16"});
    l.max_side = 17;
    EXPECT_NO_THROW(read_image(path, l));
    l = {};
    l.max_pixels = 17 * 13 - 1;
    expect_error([&] { read_image(path, l); }, Status::limit_exceeded,
                 {path, "17x13", "max_pixels"});
    l.max_pixels = 17 * 13;
    l.max_bytes = 17 * 13 * ch - 1;
    expect_error([&] { read_image(path, l); }, Status::limit_exceeded, {path, "max_bytes"});
    l.max_bytes = 17 * 13 * ch;
    EXPECT_NO_THROW(read_image(path, l));
  }
  expect_error(
      [&] {
        read_image(dir / "l.png", IoLimits{0, 1, 1});
      },
      Status::invalid_argument, {"limits"});
}

TEST(IoLimits, EnvironmentVariablesSetTheLimitsAndBadValuesAreInvalidArgument) {
  {
    const IoLimits d = IoLimits::from_env();
    EXPECT_EQ(d.max_side, std::int64_t(1) << 20);
    EXPECT_EQ(d.max_pixels, std::int64_t(1) << 27);
    EXPECT_EQ(d.max_bytes, std::int64_t(1) << 30);
    EXPECT_EQ(d.max_side_from, "default");
    EXPECT_EQ(d.max_pixels_from, "default");
    EXPECT_EQ(d.max_bytes_from, "default");
  }
  for (const char* var : {"PIXFLOW_MAX_SIDE", "PIXFLOW_MAX_PIXELS", "PIXFLOW_MAX_BYTES"}) {
    PIXFLOW_TRACE(var);
    {
      const EnvScope e({{var, "1234"}});
      const IoLimits l = IoLimits::from_env();
      const std::string v(var);
      EXPECT_EQ(v == "PIXFLOW_MAX_SIDE"     ? l.max_side
                : v == "PIXFLOW_MAX_PIXELS" ? l.max_pixels
                                            : l.max_bytes,
                1234);
      // The origin of the overridden limit is the variable; the others stay "default".
      EXPECT_EQ(v == "PIXFLOW_MAX_SIDE"     ? l.max_side_from
                : v == "PIXFLOW_MAX_PIXELS" ? l.max_pixels_from
                                            : l.max_bytes_from,
                v);
      EXPECT_EQ(int(l.max_side_from == "default") + int(l.max_pixels_from == "default") +
                    int(l.max_bytes_from == "default"),
                2);
    }
    for (const char* bad : {"", "abc", "0", "-5", "12x", "99999999999999999999999", " 7"}) {
      const EnvScope e({{var, bad}});
      expect_error([] { IoLimits::from_env(); }, Status::invalid_argument, {var});
    }
  }
  TempDir dir;
  auto rng = make_rng(0x1103);
  write_image(dir / "e.png", random_image(17, 13, {Depth::u8, 1}, rng));
  const EnvScope e({{"PIXFLOW_MAX_PIXELS", "100"}});
  expect_error([&] { read_image(dir / "e.png"); }, Status::limit_exceeded,
               {"size 17x13 (221 pixels) exceeds the limit max_pixels = 100 (set by "
                "PIXFLOW_MAX_PIXELS)"});
}

TEST(IoLimits, MessagesNameWhatSetTheLimit) {
  TempDir dir;
  auto rng = make_rng(0x1104);
  const std::string path = dir / "o.png";
  write_image(path, random_image(17, 13, {Depth::u16, 4}, rng));
  // Nobody set it: the message says how to raise it.
  IoLimits l;
  l.max_side = 16;
  l.max_side_from = "--max-side";
  expect_error([&] { read_image(path, l); }, Status::limit_exceeded,
               {path + ": width 17 exceeds the limit max_side = 16 (set by --max-side)"});
  // A value the program chose without naming it.
  l = {};
  l.max_side = 12;
  expect_error([&] { read_image(path, l); }, Status::limit_exceeded,
               {"width 17 exceeds the limit max_side = 12 (set by the calling program)"});
  l = {};
  l.max_bytes = 1000;
  l.max_bytes_from = "PIXFLOW_MAX_BYTES";
  expect_error([&] { read_image(path, l); }, Status::limit_exceeded,
               {"decoded size of 17x13 u16x4 (1768 bytes) exceeds the limit max_bytes = 1000 "
                "(set by PIXFLOW_MAX_BYTES)"});
  // The defaults: a PNG header claiming 2^20 + 1 pixels a side.
  const std::string wide = dir / "wide.png";
  write_bytes(wide, wide_png_header());
  expect_error([&] { read_image(wide, IoLimits{}); }, Status::limit_exceeded,
               {"width 1048577 exceeds the limit max_side = 1048576 (the default; raise it with "
                "--max-side or PIXFLOW_MAX_SIDE)"});
  // 12000 x 12000 = 144 Mpixel: over the default max_pixels (2^27), which names itself.
  Bytes head2 = "\x89PNG\r\n\x1a\n", ihdr2;
  put32be(ihdr2, 12000);
  put32be(ihdr2, 12000);
  ihdr2 += Bytes("\x08\x00\x00\x00\x00", 5);
  png_chunk(head2, "IHDR", ihdr2);
  write_bytes(wide, head2);
  expect_error([&] { read_image(wide, IoLimits{}); }, Status::limit_exceeded,
               {"size 12000x12000 (144000000 pixels) exceeds the limit max_pixels = 134217728 "
                "(the default; raise it with --max-pixels or PIXFLOW_MAX_PIXELS)"});
}

// ---- writes --------------------------------------------------------------------------------

TEST(IoWrite, UnsupportedFormatsAreRejectedAndLeaveNoFile) {
  TempDir dir;
  auto rng = make_rng(0x1201);
  struct C {
    const char* name;
    Format fmt;
    Status st;
    std::vector<std::string> parts;
  };
  std::vector<C> cases = {
      {"a.png", {Depth::s16, 1}, Status::unsupported, {"PNG", "s16"}},
      {"a.png", {Depth::f32, 3}, Status::unsupported, {"PNG", "f32"}},
      {"a.png", {Depth::u8, 2}, Status::unsupported, {"PNG", "2 channels"}},
      {"a.jpg", {Depth::u16, 1}, Status::unsupported, {"JPEG", "u16"}},
      {"a.jpeg", {Depth::u8, 4}, Status::unsupported, {"JPEG", "4 channels"}},
      {"a.pgm", {Depth::u8, 3}, Status::unsupported, {"PGM", "3 channels"}},
      {"a.ppm", {Depth::u8, 1}, Status::unsupported, {"PPM", "1 channels"}},
      {"a.pnm", {Depth::u8, 4}, Status::unsupported, {"PNM", "4 channels"}},
      {"a.pgm", {Depth::f32, 1}, Status::unsupported, {"PGM", "f32"}},
      {"a.bmp", {Depth::u8, 3}, Status::invalid_argument, {"extension", ".bmp"}},
      {"noext", {Depth::u8, 3}, Status::invalid_argument, {"extension"}},
  };
  if (have_tiff())
    cases.push_back({"a.tif", {Depth::s32, 1}, Status::unsupported, {"TIFF", "s32"}});
  else
    cases.push_back({"b.tif", {Depth::u8, 1}, Status::unsupported, {"built without libtiff"}});
  for (const auto& c : cases) {
    PIXFLOW_TRACE(testing::Message() << c.name << " " << fmt_desc(c.fmt));
    auto img = random_image(5, 4, c.fmt, rng);
    const std::string path = dir / c.name;
    expect_error([&] { write_image(path, img); }, c.st, c.parts);
    EXPECT_TRUE(dir.entries().empty()) << "a file was left: " << dir.entries().front();
  }
  // JPEG quality out of range; device images.
  auto rgb = random_image(5, 4, {Depth::u8, 3}, rng);
  expect_error([&] { write_image(dir / "q.jpg", rgb, {0}); }, Status::invalid_argument,
               {"jpeg_quality", "[1, 100]"});
  expect_error([&] { write_image(dir / "q.jpg", rgb, {101}); }, Status::invalid_argument,
               {"jpeg_quality"});
  const ConstImageView dev(rgb.view.data(), 5, 4, rgb.view.stride(), {Depth::u8, 3},
                           Location::cuda(0));
  expect_error([&] { write_image(dir / "d.png", dev); }, Status::invalid_argument,
               {"host", "cuda:0"});
  EXPECT_TRUE(dir.entries().empty());
}

TEST(IoWrite, FailuresAreIoErrorsAndLeaveNoFileBehind) {
  TempDir dir;
  auto rng = make_rng(0x1202);
  auto img = random_image(64, 64, {Depth::u8, 3}, rng);
  // A missing folder; a "folder" that is a regular file.
  const std::string missing = dir / "no/such/dir/x.png";
  expect_error([&] { write_image(missing, img); }, Status::io_error,
               {missing, "cannot open its folder", "No such file or directory"});
  write_bytes(dir / "plain", "x");
  const std::string under_file = dir / "plain/x.png";
  expect_error([&] { write_image(under_file, img); }, Status::io_error, {under_file});
  // The target is an existing directory: the rename fails, the temp file goes.
  fs::create_directory(dir / "target.png");
  expect_error([&] { write_image(dir / "target.png", img); }, Status::io_error,
               {"target.png", "rename"});
  EXPECT_EQ(dir.entries().size(), 2u) << "a temporary file was left";
  // An unwritable folder (root ignores permissions, so only as another user).
  fs::create_directory(dir / "ro");
  fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  if (geteuid() != 0) {
    expect_error([&] { write_image(dir / "ro/x.png", img); }, Status::io_error, {"ro/x.png"});
  } else {
    std::printf("[   NOTE   ] running as root: the unwritable-folder case cannot fail; skipped\n");
  }
  EXPECT_TRUE(fs::is_empty(dir / "ro"));
  // A write that fails half-way (file size limit, as on a full disk) for every format: no
  // output, no temporary file, the old file untouched.
  std::vector<std::string> names = {"big.png", "big.jpg", "big.ppm", "big.npy"};
  if (have_tiff()) names.push_back("big.tif");
  auto noisy = random_image(256, 256, {Depth::u8, 3}, rng);
  for (const auto& n : names) {
    PIXFLOW_TRACE(n);
    const std::string path = dir / n;
    write_bytes(path, "old contents");
    auto old_handler = signal(SIGXFSZ, SIG_IGN);
    rlimit old{};
    getrlimit(RLIMIT_FSIZE, &old);
    rlimit small = old;
    small.rlim_cur = 4096;
    setrlimit(RLIMIT_FSIZE, &small);
    std::string msg;
    try {
      write_image(path, noisy);
    } catch (const Error& e) {
      msg = e.what();
      EXPECT_EQ(status_name(e.status()), std::string(status_name(Status::io_error))) << msg;
    }
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, old_handler);
    EXPECT_NE(msg.find(path), std::string::npos) << "no io_error naming the file: '" << msg << "'";
    EXPECT_EQ(read_bytes(path), "old contents");
  }
  std::vector<std::string> want = {"plain", "target.png", "ro"};
  want.insert(want.end(), names.begin(), names.end());
  std::sort(want.begin(), want.end());
  auto got = dir.entries();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want) << "a temporary file was left";
}

TEST(IoWrite, OverwritesAtomicallyWithTheUsualModeAndAnyStride) {
  TempDir dir;
  auto rng = make_rng(0x1203);
  const std::string path = dir / "x.npy";
  auto a = random_image(9, 7, {Depth::u16, 3}, rng);
  write_image(path, a);
  // A view with a negative-free but odd ROI inside a larger image.
  auto big = random_image(40, 30, {Depth::u16, 3}, rng);
  const ConstImageView roi = ConstImageView(big.view).roi(3, 5, 11, 13);
  write_image(path, roi);
  ASSERT_EQ(compare(read_image(path), roi), "");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"x.npy"});
  const mode_t mask = umask(022);
  umask(mask);
  const auto perms = fs::status(path).permissions();
  EXPECT_EQ(unsigned(perms) & 0777u, 0666u & ~unsigned(mask)) << "mode of a written file";
  EXPECT_EQ(format_from_path("A.JPEG"), FileFormat::jpeg);
  EXPECT_EQ(format_from_path("dir.v2/x.TIF"), FileFormat::tiff);
  EXPECT_EQ(format_from_path("x.pnm"), FileFormat::pnm);
}

TEST(IoRead, FormatComesFromTheSignatureNotTheExtension) {
  TempDir dir;
  auto rng = make_rng(0x1301);
  auto src = random_image(6, 5, {Depth::u8, 3}, rng);
  write_image(dir / "x.png", src);
  fs::rename(dir / "x.png", dir / "x.npy");
  ASSERT_EQ(compare(read_image(dir / "x.npy"), src), "");
  write_image(dir / "y.ppm", src);
  fs::rename(dir / "y.ppm", dir / "y");
  ASSERT_EQ(compare(read_image(dir / "y"), src), "");
}

// ---- header probe --------------------------------------------------------------------------

/// The header read_image's result implies.
ImageHeader header_of(const Image& img, FileFormat ff) {
  return {img.width(), img.height(), img.format(), ff};
}

FileFormat file_format_of(const std::string& name) {
  if (name.ends_with(".png")) return FileFormat::png;
  if (name.ends_with(".jpg")) return FileFormat::jpeg;
  if (name.ends_with(".tif")) return FileFormat::tiff;
  if (name.ends_with(".npy")) return FileFormat::npy;
  return FileFormat::pnm;
}

/// Runs f and returns "<status>: <message>" of the pixflow::Error it throws ("" if none).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(status_name(e.status())) + ": " + e.what();
  }
  return "";
}

TEST(IoHeader, EqualsTheDecodedImagesHeaderForEveryCodecAndLayout) {
  TempDir dir;
  auto rng = make_rng(0x1401);
  std::vector<std::pair<std::string, Bytes>> files = sample_files(dir);
  // Layouts whose decoded format differs from the file's: palette (with and without tRNS),
  // gray+alpha, low bit depths, 16-bit, interlaced.
  struct P {
    int bit_depth, ct;
    bool trns, interlace;
  };
  for (P c : {P{1, 0, false, false}, P{4, 0, false, true}, P{16, 0, false, false},
              P{8, 4, false, false}, P{16, 4, false, true}, P{16, 6, false, false},
              P{8, 3, false, false}, P{8, 3, true, false}, P{2, 3, true, true}}) {
    const std::uint32_t w = 13, h = 7;
    const unsigned maxv = (1u << c.bit_depth) - 1, npal = c.ct == 3 ? std::min(maxv + 1, 16u) : 0;
    std::vector<unsigned> samples(std::size_t(w * h * png_channels(c.ct)));
    for (auto& v : samples) v = unsigned(rng() % (c.ct == 3 ? npal : maxv + 1));
    Bytes plte, trns;
    for (unsigned i = 0; i < npal * 3; ++i) plte += char(rng() & 0xff);
    if (c.trns) trns = Bytes(npal / 2, '\x80');
    files.emplace_back("p" + std::to_string(c.bit_depth) + "_" + std::to_string(c.ct) +
                           (c.trns ? "t" : "") + (c.interlace ? "i" : "") + ".png",
                       make_png(w, h, c.bit_depth, c.ct, samples, c.interlace, plte, trns));
  }
  // More NPY dtypes and shapes, PNM kinds, TIFF layouts.
  for (Format f : {Format{Depth::s32, 2}, Format{Depth::u16, 4}, Format{Depth::f32, 1}}) {
    Image src = tight_random(6, 5, f, rng);
    const std::string shape =
        f.channels == 1 ? "(5, 6)" : "(5, 6, " + std::to_string(f.channels) + ")";
    const std::string descr = f.depth == Depth::s32 ? "<i4" : f.depth == Depth::u16 ? ">u2" : "<f4";
    files.emplace_back(
        "n" + std::to_string(files.size()) + ".npy",
        make_npy(2, "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }",
                 image_bytes(src, descr[0] == '>')));
  }
  files.emplace_back("p3.ppm", Bytes("P3\n2 1\n65535\n1 2 3 4 5 6\n"));
  if (have_tiff())
    for (Format f : {Format{Depth::s16, 1}, Format{Depth::f32, 4}}) {
      TiffSpec spec;
      spec.bps = std::uint16_t(8 * depth_bytes(f.depth));
      spec.sample_format = f.depth == Depth::s16 ? 2 : 3;
      spec.photometric = f.channels == 1 ? 1 : 2;
      spec.tiled = f.channels == 4;
      files.emplace_back("t" + std::to_string(files.size()) + ".tif",
                         make_tiff(tight_random(19, 11, f, rng), spec));
    }
  for (const auto& [name, bytes] : files) {
    PIXFLOW_TRACE(name);
    const std::string path = dir / name;
    write_bytes(path, bytes);
    const Image img = read_image(path);
    EXPECT_EQ(read_image_header(path), header_of(img, file_format_of(name)))
        << "read_image gives " << img.width() << "x" << img.height() << " "
        << to_string(img.format());
  }
}

TEST(IoHeader, ReportsTheSameErrorsAsReadImage) {
  TempDir dir;
  auto rng = make_rng(0x1402);
  std::vector<std::pair<std::string, Bytes>> files;
  auto add = [&](const std::string& name, const Bytes& bytes) { files.emplace_back(name, bytes); };
  // CMYK JPEG (unsupported), a P7 file, an NPY in Fortran order, a TIFF with planes,
  // a corrupt PNG header (bad CRC), text, an empty file.
  Bytes cmyk = "\xff\xd8";
  cmyk += Bytes("\xff\xc0\x00\x14\x08\x00\x10\x00\x10\x04", 10);
  for (int c = 1; c <= 4; ++c) cmyk += char(c), cmyk += '\x11', cmyk += '\0';
  cmyk += Bytes("\xff\xda\x00\x0e\x04", 5);
  for (int c = 1; c <= 4; ++c) cmyk += char(c), cmyk += '\0';
  cmyk += Bytes("\x00\x3f\x00\xff\xd9", 5);
  add("cmyk.jpg", cmyk);
  add("p7.pam", "P7\nWIDTH 1\n");
  add("f.npy",
      make_npy(1, "{'descr': '<u2', 'fortran_order': True, 'shape': (2, 3), }", Bytes(12, 0)));
  Bytes png = make_png(3, 2, 8, 0, std::vector<unsigned>(6, 1), false);
  png[29] ^= 1;  // IHDR CRC
  add("crc.png", png);
  add("text.png", "not an image");
  add("empty.png", "");
  if (have_tiff()) {
    TiffSpec planar;
    planar.planar = 2, planar.photometric = 2;
    add("planar.tif", make_tiff(tight_random(8, 5, {Depth::u8, 3}, rng), planar));
  }
  for (const auto& [name, bytes] : files) {
    PIXFLOW_TRACE(name);
    const std::string path = dir / name;
    write_bytes(path, bytes);
    const std::string want = error_of([&] { read_image(path); });
    EXPECT_NE(want, "");
    EXPECT_EQ(error_of([&] { read_image_header(path); }), want);
  }
  // Limits: the same check, the same message, for every codec.
  for (const auto& [name, bytes] : sample_files(dir)) {
    PIXFLOW_TRACE(name);
    const std::string path = dir / name;
    write_bytes(path, bytes);
    // Every sample file is at least 5 x 3.
    for (IoLimits l : {IoLimits{4, 1 << 20, 1 << 30}, IoLimits{1 << 20, 14, 1 << 30},
                       IoLimits{1 << 20, 1 << 20, 14}}) {
      const std::string want = error_of([&] { read_image(path, l); });
      EXPECT_TRUE(want.starts_with("limit_exceeded: ")) << want;
      EXPECT_EQ(error_of([&] { read_image_header(path, l); }), want);
    }
  }
}

TEST(IoHeader, FileTruncatedAfterItsHeaderPassesTheProbeNotTheRead) {
  TempDir dir;
  auto rng = make_rng(0x1403);
  struct C {
    const char* name;
    Format fmt;
    std::function<std::size_t(const Bytes&)> cut;  // where the header is surely over
  };
  const std::vector<C> cases = {
      // PNG: in the middle of the first IDAT chunk's data.
      {"a.png", {Depth::u8, 3}, [](const Bytes& b) { return b.find("IDAT") + 100; }},
      // JPEG: 100 bytes into the entropy-coded data (after the start-of-scan marker).
      {"b.jpg", {Depth::u8, 3}, [](const Bytes& b) { return b.find("\xff\xda") + 100; }},
      // PGM / NPY: half-way through the samples.
      {"c.pgm", {Depth::u8, 1}, [](const Bytes& b) { return b.size() / 2; }},
      {"d.npy", {Depth::f32, 2}, [](const Bytes& b) { return b.size() / 2; }},
  };
  for (const auto& c : cases) {
    PIXFLOW_TRACE(c.name);
    const std::string path = dir / c.name;
    auto src = random_image(64, 48, c.fmt, rng);
    write_image(path, src);
    const Bytes full = read_bytes(path);
    write_bytes(path, full.substr(0, c.cut(full)));
    EXPECT_EQ(read_image_header(path), (ImageHeader{64, 48, c.fmt, file_format_of(c.name)}));
    expect_error([&] { read_image(path); }, Status::io_error, {path, "truncated", "byte"});
  }
}

TEST(IoHeader, CheckWriteFormatThrowsWhatWriteImageThrows) {
  TempDir dir;
  auto rng = make_rng(0x1404);
  struct C {
    const char* name;
    Format fmt;
  };
  std::vector<C> cases = {
      {"a.png", {Depth::s16, 1}}, {"a.png", {Depth::u8, 2}},  {"a.jpg", {Depth::u16, 1}},
      {"a.jpeg", {Depth::u8, 4}}, {"a.pgm", {Depth::u8, 3}},  {"a.ppm", {Depth::u8, 1}},
      {"a.pnm", {Depth::f32, 1}}, {"a.tif", {Depth::s32, 1}}, {"a.TIFF", {Depth::u8, 3}},
      {"a.bmp", {Depth::u8, 3}},  {"noext", {Depth::u8, 3}},  {"a.png", {Depth::u16, 4}},
      {"a.npy", {Depth::s32, 2}}, {"a.PPM", {Depth::u16, 3}}};
  for (const auto& c : cases) {
    PIXFLOW_TRACE(testing::Message() << c.name << " " << to_string(c.fmt));
    const std::string path = dir / c.name;
    const std::string probe = error_of([&] { check_write_format(path, c.fmt); });
    auto img = random_image(5, 4, c.fmt, rng);
    const std::string write = error_of([&] { write_image(path, img); });
    EXPECT_EQ(probe, write);
    std::error_code ec;
    fs::remove(path, ec);
  }
  EXPECT_TRUE(dir.entries().empty());
}

// ---- truncation messages -------------------------------------------------------------------

TEST(IoCorrupt, TruncatedFilesSayAtWhichByteTheyEnd) {
  TempDir dir;
  auto rng = make_rng(0x1501);
  std::vector<std::pair<std::string, Bytes>> files = sample_files(dir);
  // Larger files too: several IDAT pieces, several JPEG buffers, many rows.
  for (const char* name : {"big.png", "big.jpg", "big.ppm", "big.npy", "big.tif"}) {
    if (std::string(name) == "big.tif" && !have_tiff()) continue;
    const int ch = std::string(name) == "big.npy" ? 4 : 3;
    auto src = std::string(name) == "big.jpg"
                   ? Image(smooth_image(300, 200, 3))
                   : clone(random_image(300, 200, {Depth::u8, ch}, rng).view);
    write_image(dir / name, src);
    files.emplace_back(name, read_bytes(dir / name));
    fs::remove(dir / name);
  }
  int truncated = 0, corrupt = 0;
  for (const auto& [name, bytes] : files) {
    const std::string path = dir / ("cut_" + name);
    std::size_t limit = bytes.size();
    if (name == "l.pgm") limit = bytes.find_last_of(' ', bytes.size() - 2) + 1;  // see above
    for (int k = 1; k < 20; ++k) {
      const std::size_t cut = bytes.size() * std::size_t(k) / 20;
      if (cut >= limit) continue;
      PIXFLOW_TRACE(testing::Message() << name << " cut at " << cut << " of " << bytes.size());
      write_bytes(path, bytes.substr(0, cut));
      const std::string msg = expect_error([&] { read_image(path); }, Status::io_error, {path});
      // The path once; never libpng's bare "Read Error".
      EXPECT_EQ(msg.find(path), msg.rfind(path)) << msg;
      EXPECT_EQ(msg.find("Read Error"), std::string::npos) << msg;
      if (msg.find("file is truncated at byte ") != std::string::npos) {
        ++truncated;
        EXPECT_NE(msg.find("truncated at byte " + std::to_string(cut) + ": expected "),
                  std::string::npos)
            << "where the file ends: " << msg;
      } else if (name.ends_with(".tif") || name.ends_with(".pgm") || name.ends_with(".ppm")) {
        // libtiff may see a bad directory before a short read; an ASCII PGM a bad token.
        ++corrupt;
      } else {
        ++corrupt;
        ADD_FAILURE() << "neither a truncation nor a located error: " << msg;
      }
    }
  }
  std::printf("[   INFO   ] %d cuts reported as truncated, %d as corrupt\n", truncated, corrupt);
  EXPECT_GT(truncated, 0);
}

TEST(IoCorrupt, TiffMessagesNameThePathOnce) {
  if (!have_tiff()) GTEST_SKIP() << "built without libtiff";
  TempDir dir;
  auto rng = make_rng(0x1502);
  const std::string path = dir / "x.tif";
  Bytes t = make_tiff(tight_random(9, 7, {Depth::u8, 1}, rng), {});
  // A cut header: libtiff reports "<name>: Cannot read TIFF header" (the path was printed
  // twice); a cut directory; a directory offset past the end; a bad directory count.
  std::vector<Bytes> bad = {t.substr(0, 5), t.substr(0, 12), t.substr(0, t.size() - 30)};
  Bytes offset = t;
  offset[5] = char(0x7f);
  bad.push_back(offset);
  Bytes count = t;
  const std::size_t ifd = std::uint8_t(t[4]) | std::uint8_t(t[5]) << 8;
  count[ifd] = char(0xff), count[ifd + 1] = char(0xff);
  bad.push_back(count);
  for (const Bytes& b : bad) {
    write_bytes(path, b);
    const std::string msg = error_of([&] { read_image(path); });
    PIXFLOW_TRACE(msg);
    ASSERT_NE(msg, "");
    EXPECT_EQ(msg.find(path), msg.rfind(path)) << msg;
  }
}

// ---- decompression bomb --------------------------------------------------------------------

/// A PNG of w x h RGBA16 zeros, compressed at about 1000:1 (16000 x 16000, 2 GB decoded,
/// is about 2 MB). Each row (a filter byte and zeros) is compressed once with
/// Z_FULL_FLUSH, which makes its blocks independent of what came before, and the blocks are
/// repeated for every row: a real deflate stream, made in milliseconds (libpng writing 2 GB
/// of zeros row by row takes 6 to 19 s here, too slow for a unit test).
Bytes zero_png(std::uint32_t w, std::uint32_t h) {
  const std::size_t row = 1 + std::size_t(w) * 8;
  const std::vector<unsigned char> zeros(row, 0);
  z_stream zs{};
  EXPECT_EQ(deflateInit(&zs, 9), Z_OK);
  auto run = [&](const unsigned char* in, std::size_t n, int flush) {
    Bytes out(n / 500 + 1024, '\0');
    zs.next_in = const_cast<unsigned char*>(in);
    zs.avail_in = uInt(n);
    zs.next_out = reinterpret_cast<unsigned char*>(out.data());
    zs.avail_out = uInt(out.size());
    EXPECT_NE(deflate(&zs, flush), Z_STREAM_ERROR);
    EXPECT_EQ(zs.avail_in, 0u);
    out.resize(out.size() - zs.avail_out);
    return out;
  };
  Bytes z = run(zeros.data(), row, Z_FULL_FLUSH);            // zlib header + the first row
  const Bytes again = run(zeros.data(), row, Z_FULL_FLUSH);  // any later row: the same bytes
  for (std::uint32_t y = 1; y < h; ++y) z += again;
  Bytes end = run(nullptr, 0, Z_FINISH);  // the final empty block, then zlib's Adler-32
  deflateEnd(&zs);
  end.resize(end.size() - 4);
  z += end;
  // Adler-32 of n zero bytes: a = 1, b = n (mod 65521).
  const std::uint64_t n = std::uint64_t(row) * h;
  put32be(z, std::uint32_t(n % 65521) << 16 | 1u);
  Bytes png = "\x89PNG\r\n\x1a\n", ihdr;
  put32be(ihdr, w);
  put32be(ihdr, h);
  ihdr += Bytes("\x10\x06\x00\x00\x00", 5);  // 16-bit RGBA, not interlaced
  png_chunk(png, "IHDR", ihdr);
  png_chunk(png, "IDAT", z);
  png_chunk(png, "IEND", "");
  return png;
}

long max_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

TEST(IoLimits, DecompressionBombIsRefusedByDefaultBeforeAllocating) {
  TempDir dir;
  // The construction makes valid PNGs: a small one decodes to zeros.
  write_bytes(dir / "small.png", zero_png(37, 21));
  const Image small = read_image(dir / "small.png");
  ASSERT_EQ(small.format(), (Format{Depth::u16, 4}));
  ASSERT_EQ(small.width(), 37);
  ASSERT_EQ(small.height(), 21);
  for (std::int64_t y = 0; y < 21; ++y)
    for (std::int64_t i = 0; i < 37 * 4; ++i) ASSERT_EQ(small.row<std::uint16_t>(y)[i], 0);
  const std::string path = dir / "bomb.png";
  write_bytes(path, zero_png(16000, 16000));
  const auto size = fs::file_size(path);
  std::printf("[   INFO   ] 16000x16000 RGBA16 zeros: %ju bytes of PNG\n", std::uintmax_t(size));
  EXPECT_LT(size, 3u << 20);
  const long rss0 = max_rss_kb();
  // 256 Mpixel, 2 GB decoded: both default limits fail; max_pixels is checked first.
  expect_error([&] { read_image(path); }, Status::limit_exceeded,
               {path, "16000x16000", "max_pixels = 134217728", "the default"});
  expect_error([&] { read_image_header(path); }, Status::limit_exceeded, {"max_pixels"});
  IoLimits more_pixels;
  more_pixels.max_pixels = std::int64_t(1) << 30;
  more_pixels.max_pixels_from = "--max-pixels";
  expect_error([&] { read_image(path, more_pixels); }, Status::limit_exceeded,
               {"u16x4 (2048000000 bytes) exceeds the limit max_bytes = 1073741824 (the default"});
  const long grown_mb = (max_rss_kb() - rss0) / 1024;
  std::printf("[   INFO   ] peak RSS grew by %ld MB while refusing it\n", grown_mb);
  EXPECT_LT(grown_mb, 64) << "the refusal came after a large allocation";
}

// ---- atomic writes -------------------------------------------------------------------------

std::vector<std::string> sorted_entries(const std::string& folder) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(folder)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// While alive, write_image uses the named-temporary fallback (as without O_TMPFILE).
struct NamedTemporaries {
  explicit NamedTemporaries(bool on) { detail::io::force_named_temporaries(on); }
  ~NamedTemporaries() { detail::io::force_named_temporaries(false); }
};

bool tmpfile_supported(const std::string& folder) {
#ifdef O_TMPFILE
  const int fd = open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  close(fd);
  return true;
#else
  (void)folder;
  return false;
#endif
}

const char* mode_name(bool named) {
  return named ? "named temporary" : "O_TMPFILE";
}

TEST(IoWrite, TheFolderHoldsExactlyTheOutputsAfterWritesThatSucceedOrFail) {
  auto rng = make_rng(0x1601);
  auto img = random_image(64, 48, {Depth::u8, 3}, rng);
  auto noisy = random_image(256, 256, {Depth::u8, 3}, rng);
  for (bool named : {false, true}) {
    PIXFLOW_TRACE(mode_name(named));
    NamedTemporaries mode(named);
    TempDir dir;
    std::vector<std::string> names = {"a.png", "b.jpg", "c.ppm", "d.npy"};
    if (have_tiff()) names.push_back("e.tif");
    std::sort(names.begin(), names.end());
    for (int round = 0; round < 2; ++round)  // new files, then replacing them
      for (const auto& n : names) write_image(dir / n, img);
    EXPECT_EQ(sorted_entries(dir.path()), names);
    // Failures before any file: a format that cannot hold the image, a bad quality.
    expect_error(
        [&] {
          write_image(dir / "f.png", random_image(4, 4, {Depth::f32, 1}, rng));
        },
        Status::unsupported, {"PNG"});
    expect_error([&] { write_image(dir / "b.jpg", img, {0}); }, Status::invalid_argument,
                 {"jpeg_quality"});
    EXPECT_EQ(sorted_entries(dir.path()), names);
    // Failures half-way (file size limit, as a full disk): the old files stay as they were.
    for (const auto& n : names) {
      PIXFLOW_TRACE(n);
      const Bytes before = read_bytes(dir / n);
      auto old_handler = signal(SIGXFSZ, SIG_IGN);
      rlimit old{};
      getrlimit(RLIMIT_FSIZE, &old);
      rlimit small = old;
      small.rlim_cur = 4096;
      setrlimit(RLIMIT_FSIZE, &small);
      const std::string msg = error_of([&] { write_image(dir / n, noisy); });
      setrlimit(RLIMIT_FSIZE, &old);
      signal(SIGXFSZ, old_handler);
      EXPECT_TRUE(msg.starts_with("io_error: write_image: " + dir / n)) << msg;
      EXPECT_EQ(read_bytes(dir / n), before);
      EXPECT_EQ(sorted_entries(dir.path()), names);
    }
    // Replacing a folder fails at the rename (the data is written first).
    fs::create_directory(dir / "g.png");
    expect_error([&] { write_image(dir / "g.png", img); }, Status::io_error, {"g.png"});
    names.push_back("g.png");
    std::sort(names.begin(), names.end());
    EXPECT_EQ(sorted_entries(dir.path()), names);
    EXPECT_TRUE(fs::is_empty(dir / "g.png"));
  }
}

TEST(IoWrite, EveryValidNameWorksUpToNameMax) {
  auto rng = make_rng(0x1602);
  auto img = random_image(9, 7, {Depth::u16, 3}, rng);
  for (bool named : {false, true}) {
    PIXFLOW_TRACE(mode_name(named));
    NamedTemporaries mode(named);
    TempDir dir;
    // 255 bytes is NAME_MAX on Linux file systems; before, names of 244-255 bytes failed
    // because the temporary name was longer than the output's.
    for (std::size_t len :
         {std::size_t(240), std::size_t(244), std::size_t(250), std::size_t(255)}) {
      PIXFLOW_TRACE(len);
      const std::string name = std::string(len - 4, 'n') + ".png";
      write_image(dir / name, img);
      write_image(dir / name, img);  // and replacing it
      ASSERT_EQ(compare(read_image(dir / name), img), "");
      fs::remove(dir / name);
    }
    const std::string too_long = dir / (std::string(252, 'n') + ".png");
    expect_error([&] { write_image(too_long, img); }, Status::io_error, {"File name too long"});
    EXPECT_TRUE(dir.entries().empty());
  }
}

TEST(IoWrite, ReplacingAFileKeepsItsPermissionBits) {
  auto rng = make_rng(0x1603);
  auto img = random_image(9, 7, {Depth::u8, 1}, rng);
  const mode_t mask = umask(022);
  for (bool named : {false, true}) {
    PIXFLOW_TRACE(mode_name(named));
    NamedTemporaries mode(named);
    TempDir dir;
    for (const char* name : {"m.png", "m.tif", "m.pgm"}) {
      if (std::string(name) == "m.tif" && !have_tiff()) continue;
      PIXFLOW_TRACE(name);
      const std::string path = dir / name;
      write_image(path, img);
      EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, fs::perms(0644))
          << "a new file: 0666 & ~umask";
      for (unsigned m : {0640u, 0600u, 0444u, 0755u}) {
        ASSERT_EQ(chmod(path.c_str(), m), 0);
        write_image(path, img);
        EXPECT_EQ(unsigned(fs::status(path).permissions() & fs::perms::all), m);
      }
    }
  }
  umask(mask);
}

TEST(IoWrite, WritingThroughASymlinkReplacesItsTargetAndKeepsTheLink) {
  auto rng = make_rng(0x1604);
  auto a = random_image(9, 7, {Depth::u8, 3}, rng);
  auto b = random_image(5, 3, {Depth::u8, 3}, rng);
  for (bool named : {false, true}) {
    PIXFLOW_TRACE(mode_name(named));
    NamedTemporaries mode(named);
    TempDir dir;
    fs::create_directory(dir / "real");
    write_image(dir / "real/target.png", a);
    ASSERT_EQ(chmod((dir / "real/target.png").c_str(), 0640), 0);
    // A relative link, and a link to that link (absolute).
    fs::create_symlink("real/target.png", dir / "link.png");
    fs::create_symlink(dir / "link.png", dir / "link2.png");
    for (const char* via : {"link.png", "link2.png"}) {
      PIXFLOW_TRACE(via);
      write_image(dir / via, b);
      EXPECT_TRUE(fs::is_symlink(dir / "link.png"));
      EXPECT_TRUE(fs::is_symlink(dir / "link2.png"));
      EXPECT_EQ(fs::read_symlink(dir / "link.png"), fs::path("real/target.png"));
      ASSERT_EQ(compare(read_image(dir / "real/target.png"), b), "");
      EXPECT_EQ(unsigned(fs::status(dir / "real/target.png").permissions() & fs::perms::all),
                0640u);
      EXPECT_EQ(sorted_entries(dir.path()),
                (std::vector<std::string>{"link.png", "link2.png", "real"}));
      EXPECT_EQ(sorted_entries(dir / "real"), std::vector<std::string>{"target.png"});
      std::swap(a, b);
    }
    // A dangling link: its target is created, in the target's folder.
    fs::create_symlink("real/new.png", dir / "dangling.png");
    write_image(dir / "dangling.png", a);
    EXPECT_TRUE(fs::is_symlink(dir / "dangling.png"));
    ASSERT_EQ(compare(read_image(dir / "real/new.png"), a), "");
    EXPECT_EQ(sorted_entries(dir / "real"), (std::vector<std::string>{"new.png", "target.png"}));
    // A loop is an error, and leaves nothing.
    fs::create_symlink("loop2.png", dir / "loop1.png");
    fs::create_symlink("loop1.png", dir / "loop2.png");
    expect_error([&] { write_image(dir / "loop1.png", a); }, Status::io_error, {"symbolic links"});
    EXPECT_EQ(sorted_entries(dir.path()),
              (std::vector<std::string>{"dangling.png", "link.png", "link2.png", "loop1.png",
                                        "loop2.png", "real"}));
  }
}

/// Forks a child that writes `img` to `path` over and over (after `setup`), lets it run for
/// `delay_ms`, then sends it `sig` and reaps it.
void write_in_child_then_kill(const std::string& path, const ConstImageView& img, int delay_ms,
                              int sig, const std::function<void()>& setup) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      setup();
      for (;;) write_image(path, img);
    } catch (...) {
    }
    _exit(3);
  }
  usleep(useconds_t(delay_ms) * 1000);
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0))
      << "the writer failed on its own (status " << status << ")";
}

/// An image that is cheap to make and takes a noticeable time (about 0.4 s here) to
/// encode as PNG, so that kills land at every stage of a write.
Image slow_png_image() {
  Image img(2000, 2000, {Depth::u16, 3});
  for (std::int64_t y = 0; y < img.height(); ++y) {
    auto* row = img.row<std::uint16_t>(y);
    for (std::int64_t i = 0; i < img.width() * 3; ++i) row[i] = std::uint16_t(i * 7 + y * 13);
  }
  return img;
}

TEST(IoWrite, SigkillDuringWritesLeavesNoTemporaryFile) {
  TempDir dir;
  if (!tmpfile_supported(dir.path().string()))
    GTEST_SKIP() << "O_TMPFILE is not supported here: a named temporary survives SIGKILL";
  const Image img = slow_png_image();
  const std::string out = dir / "out.png";
  const auto t0 = std::chrono::steady_clock::now();
  write_image(out, img);
  const int write_ms = int(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count());
  fs::remove(out);
  std::printf("[   INFO   ] one write takes %d ms\n", write_ms);
  auto rng = make_rng(0x1605);
  const int kills = 6;
  int with_output = 0;
  for (int i = 0; i < kills; ++i) {
    // Half the runs start without the output (a kill in the first write tests a new file),
    // half replace the one left before.
    if (i % 2 == 0) fs::remove(out);
    // Anywhere from early in the first write to well into the second.
    const int delay = int(rng() % unsigned(std::max(1, std::min(2 * write_ms, 1200)))) + 5;
    PIXFLOW_TRACE(testing::Message() << "kill " << i << " after " << delay << " ms");
    write_in_child_then_kill(out, img, delay, SIGKILL, [] {});
    const auto names = sorted_entries(dir.path());
    EXPECT_TRUE(names.empty() || names == std::vector<std::string>{"out.png"})
        << "left: " << ::testing::PrintToString(names);
    if (!names.empty()) {
      ++with_output;
      EXPECT_EQ(read_image_header(out),
                (ImageHeader{2000, 2000, {Depth::u16, 3}, FileFormat::png}));
    }
  }
  std::printf("[   INFO   ] %d of %d kills left an output\n", with_output, kills);
  if (fs::exists(out)) {
    ASSERT_EQ(compare(read_image(out), img), "") << "a partial output";
  }
}

/// For the SIGTERM test: what a CLI's handler does.
extern "C" void remove_and_exit(int) {
  remove_pending_temporaries();
  _exit(0);
}

TEST(IoWrite, ASignalHandlerRemovesNamedTemporaries) {
  TempDir dir;
  const Image img = slow_png_image();
  const std::string out = dir / "out.png";
  auto rng = make_rng(0x1606);
  for (int i = 0; i < 5; ++i) {
    const int delay = int(rng() % 1200) + 5;
    PIXFLOW_TRACE(testing::Message() << "SIGTERM " << i << " after " << delay << " ms");
    write_in_child_then_kill(out, img, delay, SIGTERM, [] {
      detail::io::force_named_temporaries(true);
      struct sigaction sa {};
      sa.sa_handler = remove_and_exit;
      sigaction(SIGTERM, &sa, nullptr);
    });
    const auto names = sorted_entries(dir.path());
    EXPECT_TRUE(names.empty() || names == std::vector<std::string>{"out.png"})
        << "left: " << ::testing::PrintToString(names);
  }
}

}  // namespace
}  // namespace pixflow::test

namespace pixflow::test {
namespace {

// ---- write options and encoding to memory (issue 13) ---------------------------------------

TEST(IoOptions, CompressionLevelsKeepThePixelsAndOrderTheSizes) {
  // A smooth gradient compresses; level 0 stores, 9 squeezes; the pixels never change.
  Image img(96, 64, {Depth::u16, 3});
  for (std::int64_t y = 0; y < img.height(); ++y)
    for (std::int64_t x = 0; x < img.width() * 3; ++x)
      img.row<std::uint16_t>(y)[x] = std::uint16_t(x * 37 + y * 11);
  TempDir dir;
  std::vector<std::string> exts = {".png"};
  if (have_tiff()) exts.push_back(".tif");
  for (const std::string& ext : exts) {
    PIXFLOW_TRACE(ext);
    std::int64_t last = -1;
    for (int level : {0, 1, 9}) {
      WriteOptions o;
      o.compression = level;
      const std::string path = dir / ("c" + std::to_string(level) + ext);
      write_image(path, img, o);
      EXPECT_EQ(compare(read_image(path), img), "");
      const auto size = std::int64_t(fs::file_size(path));
      if (last >= 0) {
        EXPECT_LE(size, last) << "level " << level;
      }
      if (level == 0) {
        EXPECT_GT(size, img.width() * img.height() * 6);  // stored
      }
      last = size;
    }
    for (int bad : {-2, 10}) {
      WriteOptions o;
      o.compression = bad;
      expect_error([&] { write_image(dir / ("bad" + ext), img, o); }, Status::invalid_argument,
                   {"compression", std::to_string(bad)});
    }
    EXPECT_FALSE(fs::exists(dir / ("bad" + ext)));
  }
}

TEST(IoOptions, EncodeImageGivesTheBytesWriteImageWrites) {
  auto rng = make_rng(0x1301);
  const Image img = clone(random_image(23, 17, {Depth::u8, 3}, rng).view);
  TempDir dir;
  WriteOptions o;
  o.jpeg_quality = 40;
  for (const std::string fmt : {"png", ".jpg", "ppm", "npy"}) {
    PIXFLOW_TRACE(fmt);
    const std::string path = dir / ("a" + (fmt[0] == '.' ? fmt : "." + fmt));
    write_image(path, img, o);
    const std::vector<std::byte> bytes = encode_image(img, fmt, o);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
              read_bytes(path));
  }
  expect_error([&] { (void)encode_image(img, "gif"); }, Status::invalid_argument, {"gif"});
  expect_error([&] { (void)encode_image(img, "pgm"); }, Status::unsupported, {"PGM"});
}

TEST(IoOptions, RgbaAsJpegSaysToDropTheAlphaChannel) {
  auto rng = make_rng(0x1302);
  const Image img = clone(random_image(4, 4, {Depth::u8, 4}, rng).view);
  TempDir dir;
  expect_error([&] { write_image(dir / "a.jpg", img); }, Status::unsupported,
               {"JPEG cannot hold u8x4", "drop the alpha channel first"});
  EXPECT_FALSE(fs::exists(dir / "a.jpg"));
}

}  // namespace
}  // namespace pixflow::test

// ---- ICC profile and resolution (issue 13) ---------------------------------------------------

#include <jpeglib.h>
#if PIXFLOW_HAVE_TIFF
#include <tiffio.h>
#endif

namespace pixflow::test {
namespace {

/// A minimal well-formed ICC profile (v2.1 display class, RGB, XYZ PCS, D50, no tags): what
/// libpng checks in an iCCP chunk.
std::vector<std::byte> tiny_icc() {
  // 132 header bytes and 256 bytes that do not compress: libpng 1.6.39 reads the iCCP chunk
  // of the bare 132-byte header (59 bytes deflated) as "too short"; real profiles are longer.
  std::vector<std::byte> p(388);
  for (std::size_t i = 132; i < p.size(); ++i) p[i] = std::byte((i * 2654435761u) >> 13);
  auto be32 = [&](std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) p[at + std::size_t(i)] = std::byte(v >> (24 - 8 * i));
  };
  be32(0, 388);
  be32(8, 0x02100000);
  std::memcpy(&p[12], "mntrRGB XYZ ", 12);
  std::memcpy(&p[36], "acsp", 4);
  be32(68, 0x0000f6d6), be32(72, 0x00010000), be32(76, 0x0000d32d);  // D50
  p[100] = std::byte{'p'};  // some bytes of the profile ID area, so a copy is told from zeros
  be32(128, 0);
  return p;
}

/// Writers and readers through the codec libraries themselves, independent of pixflow.
void libpng_write(const std::string& path, ConstImageView img, const std::vector<std::byte>& icc,
                  png_uint_32 ppm) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  png_init_io(png, f);
  png_set_IHDR(png, info, png_uint_32(img.width()), png_uint_32(img.height()), 8,
               PNG_COLOR_TYPE_RGB, 0, 0, 0);
  png_set_iCCP(png, info, "test", 0, reinterpret_cast<png_const_bytep>(icc.data()),
               png_uint_32(icc.size()));
  png_set_pHYs(png, info, ppm, ppm, PNG_RESOLUTION_METER);
  png_write_info(png, info);
  for (std::int64_t y = 0; y < img.height(); ++y)
    png_write_row(png, reinterpret_cast<png_const_bytep>(img.row_ptr(y)));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  std::fclose(f);
}

ImageMetadata libpng_metadata(const std::string& path) {
  ImageMetadata m;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  png_init_io(png, f);
  png_read_info(png, info);
  png_charp name = nullptr;
  int comp = 0;
  png_bytep prof = nullptr;
  png_uint_32 len = 0, px = 0, py = 0;
  int unit = 0;
  if (png_get_iCCP(png, info, &name, &comp, &prof, &len))
    m.icc.assign(reinterpret_cast<std::byte*>(prof), reinterpret_cast<std::byte*>(prof) + len);
  if (png_get_pHYs(png, info, &px, &py, &unit) && unit == PNG_RESOLUTION_METER)
    m.dpi_x = px * 0.0254, m.dpi_y = py * 0.0254;
  png_destroy_read_struct(&png, &info, nullptr);
  std::fclose(f);
  return m;
}

void libjpeg_write(const std::string& path, ConstImageView img, const std::vector<std::byte>& icc,
                   UINT16 dpi) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  jpeg_stdio_dest(&c, f);
  c.image_width = JDIMENSION(img.width());
  c.image_height = JDIMENSION(img.height());
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  c.density_unit = 1;
  c.X_density = c.Y_density = dpi;
  jpeg_start_compress(&c, TRUE);
  jpeg_write_icc_profile(&c, reinterpret_cast<const JOCTET*>(icc.data()), unsigned(icc.size()));
  for (std::int64_t y = 0; y < img.height(); ++y) {
    JSAMPROW row = const_cast<JSAMPROW>(reinterpret_cast<const JSAMPLE*>(img.row_ptr(y)));
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::fclose(f);
}

ImageMetadata libjpeg_metadata(const std::string& path) {
  ImageMetadata m;
  jpeg_decompress_struct d{};
  jpeg_error_mgr err{};
  d.err = jpeg_std_error(&err);
  jpeg_create_decompress(&d);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  jpeg_stdio_src(&d, f);
  jpeg_save_markers(&d, JPEG_APP0 + 2, 0xffff);
  jpeg_read_header(&d, TRUE);
  JOCTET* icc = nullptr;
  unsigned len = 0;
  if (jpeg_read_icc_profile(&d, &icc, &len)) {
    m.icc.assign(reinterpret_cast<std::byte*>(icc), reinterpret_cast<std::byte*>(icc) + len);
    std::free(icc);
  }
  if (d.saw_JFIF_marker && d.density_unit == 1) m.dpi_x = d.X_density, m.dpi_y = d.Y_density;
  jpeg_destroy_decompress(&d);
  std::fclose(f);
  return m;
}

#if PIXFLOW_HAVE_TIFF
void libtiff_write(const std::string& path, ConstImageView img, const std::vector<std::byte>& icc,
                   float dpi) {
  TIFF* t = TIFFOpen(path.c_str(), "w");
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, std::uint32_t(img.width()));
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, std::uint32_t(img.height()));
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, std::uint16_t(3));
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, std::uint16_t(8));
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
  TIFFSetField(t, TIFFTAG_ICCPROFILE, std::uint32_t(icc.size()), icc.data());
  TIFFSetField(t, TIFFTAG_XRESOLUTION, dpi);
  TIFFSetField(t, TIFFTAG_YRESOLUTION, dpi);
  TIFFSetField(t, TIFFTAG_RESOLUTIONUNIT, std::uint16_t(RESUNIT_INCH));
  std::vector<std::byte> row(std::size_t(img.row_bytes()));
  for (std::int64_t y = 0; y < img.height(); ++y) {
    std::memcpy(row.data(), img.row_ptr(y), row.size());
    TIFFWriteScanline(t, row.data(), std::uint32_t(y), 0);
  }
  TIFFClose(t);
}

ImageMetadata libtiff_metadata(const std::string& path) {
  ImageMetadata m;
  TIFF* t = TIFFOpen(path.c_str(), "r");
  std::uint32_t len = 0;
  void* icc = nullptr;
  if (TIFFGetField(t, TIFFTAG_ICCPROFILE, &len, &icc))
    m.icc.assign(static_cast<std::byte*>(icc), static_cast<std::byte*>(icc) + len);
  float rx = 0, ry = 0;
  std::uint16_t unit = 0;
  if (TIFFGetField(t, TIFFTAG_XRESOLUTION, &rx) && TIFFGetField(t, TIFFTAG_YRESOLUTION, &ry) &&
      TIFFGetField(t, TIFFTAG_RESOLUTIONUNIT, &unit) && unit == RESUNIT_INCH)
    m.dpi_x = rx, m.dpi_y = ry;
  TIFFClose(t);
  return m;
}
#endif

TEST(IoMetadata, ProfileAndResolutionFromTheCodecsSurviveARewriteInEveryFormat) {
  auto rng = make_rng(0x1309);
  const Image img = clone(random_image(12, 8, {Depth::u8, 3}, rng).view);
  const std::vector<std::byte> icc = tiny_icc();
  TempDir dir;
  struct Source {
    std::string name;
    double dpi;
  };
  std::vector<Source> sources = {{"in.png", 11811 * 0.0254}, {"in.jpg", 300}};
  libpng_write(dir / "in.png", img, icc, 11811);  // 300 dpi in pixels per metre
  libjpeg_write(dir / "in.jpg", img, icc, 300);
#if PIXFLOW_HAVE_TIFF
  libtiff_write(dir / "in.tif", img, icc, 300);
  sources.push_back({"in.tif", 300});
#endif
  for (const Source& s : sources) {
    PIXFLOW_TRACE(s.name);
    ImageMetadata m;
    const Image back = read_image(dir / s.name, IoLimits{}, &m);
    EXPECT_EQ(m.icc, icc);
    EXPECT_NEAR(m.dpi_x, s.dpi, 1e-6);
    EXPECT_NEAR(m.dpi_y, s.dpi, 1e-6);
    // Rewritten by pixflow with what it read, checked by the codec libraries.
    WriteOptions o;
    o.metadata = m;
    write_image(dir / "out.png", back, o);
    const ImageMetadata p = libpng_metadata(dir / "out.png");
    EXPECT_EQ(p.icc, icc);
    EXPECT_NEAR(p.dpi_x, 300, 0.01);
    write_image(dir / "out.jpg", back, o);
    const ImageMetadata j = libjpeg_metadata(dir / "out.jpg");
    EXPECT_EQ(j.icc, icc);
    EXPECT_EQ(j.dpi_x, 300);
    EXPECT_EQ(j.dpi_y, 300);
#if PIXFLOW_HAVE_TIFF
    write_image(dir / "out.tif", back, o);
    const ImageMetadata t = libtiff_metadata(dir / "out.tif");
    EXPECT_EQ(t.icc, icc);
    EXPECT_NEAR(t.dpi_x, s.dpi, 1e-3);
#endif
  }
  // Files without either: nothing; the plain read_image is unchanged.
  write_image(dir / "plain.png", img);
  ImageMetadata none;
  none.dpi_x = 5;
  (void)read_image(dir / "plain.png", IoLimits{}, &none);
  EXPECT_EQ(none, ImageMetadata{});
  // A profile libpng refuses for the image (RGB profile on gray) is left out, not an error.
  WriteOptions o;
  o.metadata.icc = icc;
  write_image(dir / "gray.png", clone(random_image(4, 4, {Depth::u8, 1}, rng).view), o);
  EXPECT_TRUE(libpng_metadata(dir / "gray.png").icc.empty());
}

}  // namespace
}  // namespace pixflow::test

// ---- WebP (libwebp, optional) --------------------------------------------------------------

namespace pixflow::test {
namespace {

TEST(IoWebp, LosslessRoundTripsLossyFollowsQualityAndCutsAreErrors) {
  TempDir dir;
  auto rng = make_rng(0x1310);
  const Image rgb = clone(random_image(21, 13, {Depth::u8, 3}, rng).view);
  if (!have_webp()) {
    expect_error([&] { write_image(dir / "a.webp", rgb); }, Status::unsupported, {"libwebp"});
    GTEST_SKIP() << "built without libwebp";
  }
  const Image rgba = clone(random_image(9, 17, {Depth::u8, 4}, rng).view);
  const Image gray = clone(random_image(8, 5, {Depth::u8, 1}, rng).view);
  WriteOptions lossless;
  lossless.lossless = true;
  for (const Image* img : {&rgb, &rgba}) {
    write_image(dir / "a.webp", *img, lossless);
    EXPECT_EQ(compare(read_image(dir / "a.webp"), *img), "");
    const ImageHeader h = read_image_header(dir / "a.webp");
    EXPECT_EQ(h, (ImageHeader{img->width(), img->height(), img->format(), FileFormat::webp}));
  }
  // Gray is written as RGB (g, g, g): WebP has no gray.
  write_image(dir / "g.webp", gray, lossless);
  const Image g3 = read_image(dir / "g.webp");
  ASSERT_EQ(g3.channels(), 3);
  for (std::int64_t y = 0; y < gray.height(); ++y)
    for (std::int64_t x = 0; x < gray.width(); ++x)
      for (int c = 0; c < 3; ++c)
        ASSERT_EQ(g3.row<std::uint8_t>(y)[3 * x + c], gray.row<std::uint8_t>(y)[x]);
  // Lossy: quality changes the size; the image decodes to the same size and format.
  WriteOptions q10, q90;
  q10.jpeg_quality = 10;
  q90.jpeg_quality = 90;
  const Image big = clone(random_image(64, 48, {Depth::u8, 3}, rng).view);
  write_image(dir / "q10.webp", big, q10);
  write_image(dir / "q90.webp", big, q90);
  EXPECT_LT(fs::file_size(dir / "q10.webp"), fs::file_size(dir / "q90.webp"));
  EXPECT_EQ(read_image(dir / "q10.webp").format(), big.format());
  expect_error(
      [&] {
        write_image(dir / "u16.webp", random_image(4, 4, {Depth::u16, 3}, rng));
      },
      Status::unsupported, {"WebP cannot hold u16x3"});
  // Cut files: io_error, never a crash; a cut in the header says "truncated".
  const Bytes whole = read_bytes(dir / "q90.webp");
  for (std::size_t cut : {std::size_t(10), std::size_t(20), whole.size() / 2, whole.size() - 1}) {
    PIXFLOW_TRACE(cut);
    std::ofstream(dir / "cut.webp", std::ios::binary) << whole.substr(0, cut);
    const std::string msg = error_of([&] { (void)read_image(dir / "cut.webp"); });
    EXPECT_TRUE(msg.starts_with("io_error: read_image: " + dir / "cut.webp")) << msg;
  }
  // Other RIFF files stay unsupported.
  std::ofstream(dir / "x.avi", std::ios::binary) << std::string("RIFF\x10\0\0\0AVI LIST", 16);
  expect_error([&] { (void)read_image(dir / "x.avi"); }, Status::unsupported, {"RIFF"});
}

}  // namespace
}  // namespace pixflow::test
