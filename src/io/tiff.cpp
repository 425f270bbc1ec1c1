// TIFF through libtiff (compiled only when libtiff is found; no_tiff.cpp otherwise).
// Samples are read unchanged: u8/u16/s16/f32 (SampleFormat uint/int/IEEE float), 1, 3 or 4
// samples per pixel, contiguous (chunky) planar configuration, strips or tiles, any
// compression libtiff decodes. Only the first image (directory) of a file is read.
// Errors and warnings go to per-file handlers (TIFF*OpenExt, libtiff >= 4.5), never to
// libtiff's global handlers, so concurrent reads do not interfere. Reads go through client
// procedures on the file's descriptor that notice a short read, so that a truncated file
// says where it ends.
#include <fcntl.h>
#include <sys/stat.h>
#include <tiffio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <vector>

#include "src/io/codecs.hpp"

namespace pixflow {

bool have_tiff() {
  return true;
}

namespace detail::io {

namespace {

struct TiffErrors {
  std::string name;   // the name libtiff was given: it often repeats it, messages say it once
  std::string first;  // the first error message libtiff reported
};

/// Removes every "<name>: " that libtiff put in a message (many start "%s: " with the file
/// name): pixflow's message already starts with the path.
std::string without_name(std::string text, const std::string& name) {
  const std::string n = name + ": ";
  for (std::size_t at = text.find(n); at != std::string::npos; at = text.find(n, at))
    text.erase(at, n.size());
  return text;
}

extern "C" int tiff_error_cb(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  auto* e = static_cast<TiffErrors*>(user);
  if (e->first.empty()) {
    char buf[512];
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    const std::string text = without_name(buf, e->name);
    const bool module_is_name = !module || e->name == module;
    e->first = module_is_name ? text : cat(module, ": ", text);
  }
  return 1;  // handled: libtiff's global handler stays quiet
}
extern "C" int tiff_warning_cb(TIFF*, void*, const char*, const char*, va_list) {
  return 1;
}

struct TiffCloser {
  void operator()(TIFF* t) const noexcept { TIFFClose(t); }
};
using TiffPtr = std::unique_ptr<TIFF, TiffCloser>;

/// Open options with pixflow's handlers (and a cap on libtiff's single allocations).
struct Options {
  TIFFOpenOptions* opts = TIFFOpenOptionsAlloc();
  Options(TiffErrors& errors, std::int64_t max_alloc) {
    if (!opts) throw Error(Status::out_of_memory, "libtiff: cannot allocate open options");
    TIFFOpenOptionsSetErrorHandlerExtR(opts, tiff_error_cb, &errors);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, tiff_warning_cb, nullptr);
    if (max_alloc > 0) TIFFOpenOptionsSetMaxSingleMemAlloc(opts, tmsize_t(max_alloc));
  }
  Options(const Options&) = delete;
  Options& operator=(const Options&) = delete;
  ~Options() { TIFFOpenOptionsFree(opts); }
};

/// The reader's client data: the descriptor (owned by the caller's FILE*), and the first
/// short read, if any.
struct ReadIo {
  int fd = -1;
  bool truncated = false;
  std::int64_t cut_at = 0, cut_need = 0;
};

extern "C" tmsize_t tiff_read(thandle_t h, void* buf, tmsize_t n) {
  auto* io = static_cast<ReadIo*>(h);
  const off_t at = ::lseek(io->fd, 0, SEEK_CUR);
  tmsize_t done = 0;
  while (done < n) {
    const ssize_t r = ::read(io->fd, static_cast<char*>(buf) + done, std::size_t(n - done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    done += r;
  }
  if (done < n && !io->truncated) {
    io->truncated = true;
    io->cut_at = at;
    io->cut_need = n;
  }
  return done;
}
extern "C" tmsize_t tiff_no_write(thandle_t, void*, tmsize_t) {
  errno = EBADF;
  return -1;
}
extern "C" toff_t tiff_seek(thandle_t h, toff_t off, int whence) {
  const off_t r = ::lseek(static_cast<ReadIo*>(h)->fd, off_t(off), whence);
  return r < 0 ? toff_t(-1) : toff_t(r);
}
extern "C" int tiff_close(thandle_t) {
  return 0;  // the descriptor belongs to the caller's FILE*
}
extern "C" toff_t tiff_size(thandle_t h) {
  struct stat st {};
  return ::fstat(static_cast<ReadIo*>(h)->fd, &st) == 0 ? toff_t(st.st_size) : 0;
}
extern "C" int tiff_no_map(thandle_t, void**, toff_t*) {
  return 0;  // no memory mapping: every byte goes through tiff_read, which counts
}
extern "C" void tiff_no_unmap(thandle_t, void*, toff_t) {}

}  // namespace

ImageHeader read_tiff(const std::string& path, std::FILE* f, const IoLimits& limits, Image* pixels,
                      ImageMetadata* meta) {
  TiffErrors errors{path, {}};
  ReadIo io;
  io.fd = fileno(f);
  const std::int64_t size = file_size(f);
  // A corrupt or truncated file: libtiff's message, and where the file ends when a read
  // came up short.
  auto fail = [&](const std::string& what) {
    if (io.truncated)
      read_fail(Status::io_error, path,
                truncation_message(io.cut_at, size, io.cut_need, "TIFF data"),
                " (libtiff: ", errors.first.empty() ? what : errors.first, ")");
    read_fail(Status::io_error, path, "corrupt TIFF: ", errors.first.empty() ? what : errors.first);
  };
  // The FILE* has read ahead; libtiff starts from the first byte.
  if (::lseek(io.fd, 0, SEEK_SET) != 0)
    read_fail(Status::io_error, path, "cannot seek: ", std::strerror(errno));
  // libtiff's single allocations (strip/tile buffers, tag arrays) stay within the decoded-size
  // limit plus slack for metadata.
  Options opts(errors, std::min<std::int64_t>(limits.max_bytes, INT64_MAX / 2) + (64 << 20));
  TiffPtr t(TIFFClientOpenExt(path.c_str(), "rm", &io, tiff_read, tiff_no_write, tiff_seek,
                              tiff_close, tiff_size, tiff_no_map, tiff_no_unmap, opts.opts));
  if (!t) fail("cannot open");
  TIFF* tif = t.get();
  std::uint32_t w = 0, h = 0;
  std::uint16_t spp = 1, bps = 1, fmt_tag = SAMPLEFORMAT_UINT, planar = PLANARCONFIG_CONTIG,
                photometric = PHOTOMETRIC_MINISBLACK;
  if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h))
    fail("no image size");
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bps);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &fmt_tag);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
  TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric);

  Depth depth = Depth::u8;
  if (bps == 8 && fmt_tag == SAMPLEFORMAT_UINT)
    depth = Depth::u8;
  else if (bps == 16 && fmt_tag == SAMPLEFORMAT_UINT)
    depth = Depth::u16;
  else if (bps == 16 && fmt_tag == SAMPLEFORMAT_INT)
    depth = Depth::s16;
  else if (bps == 32 && fmt_tag == SAMPLEFORMAT_IEEEFP)
    depth = Depth::f32;
  else
    read_fail(Status::unsupported, path, "TIFF with ", bps, " bits per sample and SampleFormat ",
              fmt_tag, " is not supported (u8, u16, s16, f32)");
  if (spp != 1 && spp != 3 && spp != 4)
    read_fail(Status::unsupported, path, "TIFF with ", spp,
              " samples per pixel is not supported (1, 3, 4)");
  if (planar != PLANARCONFIG_CONTIG)
    read_fail(Status::unsupported, path,
              "TIFF with separate planes (PlanarConfiguration 2) is not supported");
  if (photometric == PHOTOMETRIC_PALETTE || photometric == PHOTOMETRIC_YCBCR ||
      photometric == PHOTOMETRIC_SEPARATED || photometric == PHOTOMETRIC_CIELAB ||
      photometric == PHOTOMETRIC_ICCLAB || photometric == PHOTOMETRIC_ITULAB ||
      photometric == PHOTOMETRIC_LOGL || photometric == PHOTOMETRIC_LOGLUV)
    read_fail(Status::unsupported, path, "TIFF photometric interpretation ", photometric,
              " is not supported (min-is-black/white, RGB)");
  const Format fmt{depth, int(spp)};
  check_size(path, w, h, fmt, limits);
  const ImageHeader header{std::int64_t(w), std::int64_t(h), fmt, FileFormat::tiff};
  if (!pixels) return header;
  const std::int64_t row_bytes = std::int64_t(w) * std::int64_t(fmt.pixel_bytes());
  if (meta) {
    std::uint32_t len = 0;
    void* icc = nullptr;
    if (TIFFGetField(tif, TIFFTAG_ICCPROFILE, &len, &icc) && icc && len) {
      const auto* b = static_cast<const std::byte*>(icc);
      meta->icc.assign(b, b + len);
    }
    float rx = 0, ry = 0;
    std::uint16_t unit = RESUNIT_INCH;
    TIFFGetFieldDefaulted(tif, TIFFTAG_RESOLUTIONUNIT, &unit);
    if (TIFFGetField(tif, TIFFTAG_XRESOLUTION, &rx) &&
        TIFFGetField(tif, TIFFTAG_YRESOLUTION, &ry) && rx > 0 && ry > 0 && std::isfinite(rx) &&
        std::isfinite(ry) && (unit == RESUNIT_INCH || unit == RESUNIT_CENTIMETER)) {
      const double k = unit == RESUNIT_INCH ? 1.0 : 2.54;
      meta->dpi_x = rx * k;
      meta->dpi_y = ry * k;
    }
  }

  Image img(w, h, fmt);
  if (TIFFIsTiled(tif)) {
    std::uint32_t tw = 0, th = 0;
    if (!TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw) || !TIFFGetField(tif, TIFFTAG_TILELENGTH, &th) ||
        tw == 0 || th == 0)
      read_fail(Status::io_error, path, "corrupt TIFF: bad tile size");
    // The tile buffer must not be what a corrupt header makes huge: a tile may exceed the
    // image (a 256x256 tile on a 17x13 image is common) but not by more than one tile of
    // 1024 or a 16-pixel rounding.
    auto tile_cap = [](std::uint32_t side) {
      return std::max<std::uint64_t>(1024, (std::uint64_t(side) + 15) / 16 * 16);
    };
    if (tw > tile_cap(w) || th > tile_cap(h))
      read_fail(Status::io_error, path, "corrupt TIFF: tile size ", tw, "x", th, " does not fit a ",
                w, "x", h, " image");
    const tmsize_t tile_bytes = TIFFTileSize(tif);
    const std::int64_t tile_row = std::int64_t(tw) * std::int64_t(fmt.pixel_bytes());
    if (tile_bytes <= 0 || tile_bytes != tmsize_t(tile_row * th))
      read_fail(Status::io_error, path, "corrupt TIFF: tile size ", tile_bytes, " for ", tw, "x",
                th, " tiles");
    std::vector<std::byte> tile(static_cast<std::size_t>(tile_bytes));
    for (std::uint32_t ty = 0; ty < h; ty += th)
      for (std::uint32_t tx = 0; tx < w; tx += tw) {
        if (TIFFReadTile(tif, tile.data(), tx, ty, 0, 0) < 0 || !errors.first.empty())
          fail("cannot read a tile");
        const std::uint32_t cw = std::min(tw, w - tx), chh = std::min(th, h - ty);
        for (std::uint32_t r = 0; r < chh; ++r)
          std::memcpy(img.row<std::byte>(ty + r) + std::int64_t(tx) * fmt.pixel_bytes(),
                      tile.data() + std::int64_t(r) * tile_row,
                      std::size_t(cw) * fmt.pixel_bytes());
      }
  } else {
    if (TIFFScanlineSize64(tif) != std::uint64_t(row_bytes))
      read_fail(Status::io_error, path, "corrupt TIFF: scanline size ", TIFFScanlineSize64(tif),
                " (want ", row_bytes, ")");
    for (std::uint32_t y = 0; y < h; ++y)
      if (TIFFReadScanline(tif, img.row<std::byte>(y), y, 0) < 0 || !errors.first.empty())
        fail("cannot read a scanline");
  }
  *pixels = std::move(img);
  return header;
}

void write_tiff(const std::string& path, int fd, ConstImageView img, const WriteOptions& opt) {
  TiffErrors errors{path, {}};
  Options opts(errors, 0);
  // libtiff closes the descriptor it was given (TIFFClose): give it a duplicate.
  const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0)
    write_fail(Status::io_error, path, "cannot open the new file: ", std::strerror(errno));
  TiffPtr t(TIFFFdOpenExt(copy, path.c_str(), "w", opts.opts));
  if (!t) {
    ::close(copy);  // on failure libtiff leaves it open
    write_fail(Status::io_error, path,
               "libtiff: ", errors.first.empty() ? "cannot open" : errors.first);
  }
  TIFF* tif = t.get();
  const int ch = img.channels();
  std::uint16_t sf = SAMPLEFORMAT_UINT;
  if (img.depth() == Depth::s16) sf = SAMPLEFORMAT_INT;
  if (img.depth() == Depth::f32) sf = SAMPLEFORMAT_IEEEFP;
  bool ok = img.width() <= 0xffffffffLL && img.height() <= 0xffffffffLL;
  ok = ok && TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, std::uint32_t(img.width())) &&
       TIFFSetField(tif, TIFFTAG_IMAGELENGTH, std::uint32_t(img.height())) &&
       TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, std::uint16_t(ch)) &&
       TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, std::uint16_t(8 * depth_bytes(img.depth()))) &&
       TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, sf) &&
       TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
       TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, ch == 1 ? PHOTOMETRIC_MINISBLACK : PHOTOMETRIC_RGB) &&
       TIFFSetField(tif, TIFFTAG_COMPRESSION,
                    opt.compression == 0 ? COMPRESSION_NONE : COMPRESSION_ADOBE_DEFLATE) &&
       TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, TIFFDefaultStripSize(tif, 0));
  // Deflate's level (libtiff's default is zlib's, 6); 0 above means no compression.
  if (ok && opt.compression > 0) ok = TIFFSetField(tif, TIFFTAG_ZIPQUALITY, opt.compression);
  const ImageMetadata& m = opt.metadata;
  if (ok && !m.icc.empty() && m.icc.size() <= 0xffffffffu)
    ok = TIFFSetField(tif, TIFFTAG_ICCPROFILE, std::uint32_t(m.icc.size()), m.icc.data());
  if (ok && m.dpi_x > 0 && m.dpi_y > 0)
    ok = TIFFSetField(tif, TIFFTAG_XRESOLUTION, float(m.dpi_x)) &&
         TIFFSetField(tif, TIFFTAG_YRESOLUTION, float(m.dpi_y)) &&
         TIFFSetField(tif, TIFFTAG_RESOLUTIONUNIT, std::uint16_t(RESUNIT_INCH));
  if (ok && ch == 4) {
    const std::uint16_t extra[] = {EXTRASAMPLE_UNASSALPHA};
    ok = TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, extra);
  }
  std::vector<std::byte> row(std::size_t(img.row_bytes()));
  for (std::int64_t y = 0; ok && y < img.height(); ++y) {
    // TIFFWriteScanline may modify the buffer (predictors): write from a copy.
    std::memcpy(row.data(), img.row_ptr(y), row.size());
    ok = TIFFWriteScanline(tif, row.data(), std::uint32_t(y), 0) >= 0;
  }
  ok = ok && TIFFFlush(tif) && errors.first.empty();
  TIFF* raw = t.release();
  TIFFClose(raw);  // TIFFClose reports no status; the flush above wrote everything
  if (!ok || !errors.first.empty())
    write_fail(Status::io_error, path,
               "libtiff: ", errors.first.empty() ? "write failed" : errors.first);
}

}  // namespace detail::io
}  // namespace pixflow
