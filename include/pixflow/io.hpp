// Image files: PNG, JPEG, TIFF, PGM/PPM, NPY (docs/contract.md §1), through libpng, libjpeg-turbo
// and libtiff. Decoders check header sizes against IoLimits with overflow-checked
// arithmetic before any allocation. Details: docs/io.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pixflow/image.hpp"

namespace pixflow {

/// Decoder limits, checked against each file's header before any pixel memory is allocated:
/// width and height <= max_side, width x height <= max_pixels, and the decoded size
/// (width x height x pixel bytes) <= max_bytes. A file over a limit is limit_exceeded.
///
/// Defaults, and why: max_side = 2^20 (no real image is a million pixels on a side; the
/// limit catches corrupt headers), max_pixels = 2^27 (134 Mpixel) and max_bytes = 2^30
/// (1 GiB decoded). A few kilobytes of PNG or JPEG can declare gigapixels (a "decompression
/// bomb"), so a limit has to be on by default: Pillow warns above MAX_IMAGE_PIXELS =
/// 89,478,485 pixels and refuses twice that (178,956,970); libvips bounds only each side
/// (VIPS_MAX_COORD) and its maintainers advise checking the size of untrusted images
/// (about 100 Mpixel) before processing. pixflow's 134 Mpixel sits between those, above
/// every common camera and scanner. A pipeline holds about three times the decoded image
/// at its peak (input, output, one intermediate), so 1 GiB decoded bounds a run near
/// 3 GiB of memory. Raise them for larger images (PIXFLOW_MAX_* or the CLI's --max-*).
///
/// Each limit carries where its value came from (`max_side_from`, ...), which the
/// limit_exceeded message names so that a user knows what to change: "default" (not set;
/// the message then says how to raise it), an environment variable ("PIXFLOW_MAX_SIDE",
/// set by from_env), or a command-line option ("--max-side", set by the CLI). A program
/// that sets a limit itself may name its own setting there; a value that differs from the
/// default while its origin still says "default" is reported as set by the program.
struct IoLimits {
  static constexpr std::int64_t kDefaultMaxSide = std::int64_t(1) << 20;
  static constexpr std::int64_t kDefaultMaxPixels = std::int64_t(1) << 27;
  static constexpr std::int64_t kDefaultMaxBytes = std::int64_t(1) << 30;

  std::int64_t max_side = kDefaultMaxSide;
  std::int64_t max_pixels = kDefaultMaxPixels;
  std::int64_t max_bytes = kDefaultMaxBytes;
  std::string max_side_from = "default";
  std::string max_pixels_from = "default";
  std::string max_bytes_from = "default";

  /// The defaults, each overridden by PIXFLOW_MAX_SIDE, PIXFLOW_MAX_PIXELS, PIXFLOW_MAX_BYTES
  /// when set (decimal, > 0; anything else is invalid_argument naming the variable); the
  /// origin of an overridden limit is the variable's name.
  static IoLimits from_env();
};

enum class FileFormat { png, jpeg, tiff, pnm, npy, webp };
/// From the extension (.png .jpg .jpeg .tif .tiff .pgm .ppm .pnm .npy .webp),
/// case-insensitive; throws invalid_argument for others.
FileFormat format_from_path(const std::string& path);
/// False when pixflow was built without libtiff.
bool have_tiff();
/// False when pixflow was built without libwebp.
bool have_webp();

/// Reads a file (format from its contents' signature, not the extension). Throws io_error
/// for unreadable, truncated or corrupt files (a truncated file's message says at which
/// byte it ends), limit_exceeded for sizes over `limits`, unsupported for valid files of a
/// kind pixflow does not take (e.g. CMYK JPEG). Messages start "read_image: <path>: ".
Image read_image(const std::string& path, const IoLimits& limits = IoLimits::from_env());

/// What a file says beside its pixels that pixflow carries from an input to an output: the
/// colour profile and the resolution. PNG holds them as iCCP and pHYs (pixels per metre),
/// JPEG as APP2 ICC_PROFILE markers and the JFIF density, TIFF as the InterColorProfile tag
/// and XResolution/YResolution with ResolutionUnit; PGM/PPM and NPY hold neither.
struct ImageMetadata {
  std::vector<std::byte> icc;   ///< the ICC profile, as stored; empty: none
  double dpi_x = 0, dpi_y = 0;  ///< pixels per inch; 0: not given (or only an aspect ratio)
  bool operator==(const ImageMetadata&) const = default;
};

/// read_image that also fills `*metadata` (when not null) with the file's ICC profile and
/// resolution; everything the file does not hold is left empty/0.
Image read_image(const std::string& path, const IoLimits& limits, ImageMetadata* metadata);

/// Decodes the bytes of an image file held in memory (PNG, JPEG, TIFF, PGM/PPM, NPY) exactly
/// as read_image decodes that file; `name` stands for the path in messages. The bytes are
/// copied into an unnamed file (memfd on Linux) that the codecs read.
Image decode_image(std::span<const std::byte> bytes, const std::string& name = "<memory>",
                   const IoLimits& limits = IoLimits::from_env(),
                   ImageMetadata* metadata = nullptr);

/// What read_image would return, from the file's header alone: its size and the format
/// the decoded image will have (e.g. a palette PNG gives u8x3, gray+alpha gives x4).
struct ImageHeader {
  std::int64_t width = 0, height = 0;
  Format format{};
  FileFormat file_format = FileFormat::png;
  constexpr bool operator==(const ImageHeader&) const = default;
};
/// Reads only the header of a file (the same code read_image runs before it decodes the
/// pixels), so that a program can check many inputs cheaply before any work: the same
/// signature detection, format rules and limit checks, with the same errors (unsupported
/// layouts, limit_exceeded, corrupt headers; messages start "read_image: <path>: "). Data
/// after the header is not read: a file truncated after its header passes here and fails
/// in read_image.
ImageHeader read_image_header(const std::string& path,
                              const IoLimits& limits = IoLimits::from_env());

struct WriteOptions {
  /// JPEG quality, 1..100 (libjpeg's scale), also WebP's lossy quality; others ignore it.
  int jpeg_quality = 95;
  /// WebP: lossless instead of lossy (jpeg_quality then unused); others ignore it.
  bool lossless = false;
  /// PNG: the zlib level, 0 (stored) .. 9 (smallest, slowest). TIFF: 0 writes uncompressed
  /// strips, 1..9 Deflate at that level. -1: the codec's default (zlib's 6; TIFF Deflate 6).
  /// JPEG, PGM/PPM and NPY ignore it. Anything outside -1..9 is invalid_argument.
  int compression = -1;
  /// Written where the format holds it (see ImageMetadata): a profile that libpng finds does
  /// not fit the image (a gray profile on RGB) is left out rather than failing the write;
  /// resolutions are rounded to what the format stores (PNG: pixels per metre, JPEG: whole
  /// dots per inch, 1..65535).
  ImageMetadata metadata;
};
/// Throws what write_image throws for a path and format before it touches the file system:
/// invalid_argument for an unknown extension, unsupported for a format that cannot hold
/// `fmt` (e.g. s16 as PNG) or TIFF in a build without libtiff. write_image calls it, so a
/// program can check its outputs before it reads any input.
void check_write_format(const std::string& path, Format fmt);

/// Writes `img` (host) in the format of the path's extension, atomically: readers see the
/// old file or the complete new one, never a partial one, and nothing is left behind.
/// - On Linux the image is encoded into an unnamed file (O_TMPFILE) in the destination's
///   folder, then linked in under its name; if the destination exists, the unnamed file is
///   linked to a short temporary name (.pixflow-XXXXXX) and renamed over it, so such a
///   name exists only for the microseconds between the link and the rename. A process
///   killed at any other moment (even by SIGKILL) leaves no file behind.
/// - Where O_TMPFILE is not available (older kernels, some file systems, other systems) the
///   image is encoded into a named temporary file .pixflow-XXXXXX in the destination's
///   folder and renamed over it; the temporary name has a fixed length, so every valid
///   output name (up to NAME_MAX bytes) works. Such a file survives SIGKILL; a CLI removes
///   it on SIGINT/SIGTERM with remove_pending_temporaries().
/// - Replacing an existing file keeps its permission bits (rwx for user, group, others; a
///   new file gets 0666 & ~umask); the owner, hard links and extended attributes are not
///   carried over (the result is a new file).
/// - A symlink is followed: the write goes to the link's final target, in the target's
///   folder, and the link stays a link (a dangling link's target is created).
/// - On any failure (encoder error, full disk, unwritable folder) neither the output nor a
///   temporary file is left, and an existing file is untouched. No fsync is done: the
///   result is atomic for readers, not durable across a power cut.
/// Throws check_write_format's errors, invalid_argument for a device or empty image or a
/// bad jpeg_quality, io_error (naming the path) for failures of the file system.
void write_image(const std::string& path, ConstImageView img, const WriteOptions& opt = {});

/// Encodes `img` (host) into memory, as write_image would write it to a file, in the format
/// that `format` names as an extension, with or without the dot ("png", ".jpg", "pgm"):
/// for standard output, sockets, or a format that no file name says. Throws what
/// write_image throws (messages name "<memory>.EXT"); nothing is returned on failure.
std::vector<std::byte> encode_image(ConstImageView img, const std::string& format,
                                    const WriteOptions& opt = {});

/// Removes the named temporary files of writes in progress (the fallback where O_TMPFILE
/// is not available, and the moment before the rename over an existing file). Async-
/// signal-safe: it reads a fixed, lock-free table and only calls unlinkat(2), so a CLI's
/// SIGINT/SIGTERM handler may call it before it exits. Those writes then fail (io_error).
void remove_pending_temporaries() noexcept;

}  // namespace pixflow
