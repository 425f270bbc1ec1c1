// Internal interface between the format-independent part of the I/O layer (io.cpp: format
// detection, limits, atomic writes) and the codecs (one file per format).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "pixflow/io.hpp"
#include "src/base/error.hpp"

namespace pixflow::detail::io {

/// Throws Error(status, "read_image: <path>: <msg...>").
template <class... A>
[[noreturn]] void read_fail(Status s, const std::string& path, const A&... msg) {
  throw Error(s, cat("read_image: ", path, ": ", msg...));
}
/// Throws Error(status, "write_image: <path>: <msg...>").
template <class... A>
[[noreturn]] void write_fail(Status s, const std::string& path, const A&... msg) {
  throw Error(s, cat("write_image: ", path, ": ", msg...));
}

/// Checks a decoded size against the limits with overflow-checked arithmetic, before any
/// allocation: width/height in [1, max_side], width*height <= max_pixels, and
/// width*height*pixel_bytes <= max_bytes. Throws limit_exceeded naming the file, the
/// dimension, the limit and where the limit was set (io_error for a zero or negative
/// dimension).
void check_size(const std::string& path, std::int64_t w, std::int64_t h, Format fmt,
                const IoLimits& limits);

struct FileCloser {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

/// Size of the file behind `f` (-1 when it is not a regular file).
std::int64_t file_size(std::FILE* f);
/// Bytes from the current position of `f` to its end (-1 when it cannot be told).
std::int64_t bytes_left(std::FILE* f);
/// The one wording of every truncation: "file is truncated at byte <size>: expected <need>
/// bytes of <what> from byte <at>" (a read of `need` bytes at `at` came up short in a file of
/// `size` bytes). need < 0: "file is truncated at byte <size>: expected <what>", for readers
/// that do not know how much was missing. size < 0 (not a regular file): "file is
/// truncated: ...", or with need < 0 "at byte <at>" (where the reader met the end).
std::string truncation_message(std::int64_t at, std::int64_t size, std::int64_t need,
                               const std::string& what);
/// Reads exactly n bytes or throws io_error: a short read names the file size, the byte
/// where the read started and `what` was being read (truncation_message).
void read_exact(std::FILE* f, void* dst, std::size_t n, const std::string& path, const char* what);

// Decoders: `f` is positioned at the start of the file. Each reads the header, applies the
// format rules (what read_image returns for each layout, what is unsupported) and
// check_size, and returns the header; then, only when `pixels` is not null, decodes the
// image into *pixels. read_image and read_image_header both come here, so the header rules
// exist once.
// `meta` (png, jpeg, tiff; may be null): filled with the profile and resolution, only when
// `pixels` is not null either.
ImageHeader read_png(const std::string& path, std::FILE* f, const IoLimits& limits, Image* pixels,
                     ImageMetadata* meta = nullptr);
ImageHeader read_jpeg(const std::string& path, std::FILE* f, const IoLimits& limits, Image* pixels,
                      ImageMetadata* meta = nullptr);
ImageHeader read_pnm(const std::string& path, std::FILE* f, const IoLimits& limits, Image* pixels);
ImageHeader read_npy(const std::string& path, std::FILE* f, const IoLimits& limits, Image* pixels);
/// WebP reads the whole file into memory (libwebp's simple API); no metadata.
ImageHeader read_webp(const std::string& path, std::FILE* f, const IoLimits& limits, Image* pixels);
/// TIFF reads through libtiff from the descriptor of `f` (libtiff seeks).
ImageHeader read_tiff(const std::string& path, std::FILE* f, const IoLimits& limits, Image* pixels,
                      ImageMetadata* meta = nullptr);

// Encoders: write `img` (host, format already checked by check_write_format) to `f`; `path`
// is the final name, for messages. Errors from the library become io_error; the caller
// checks the stream's state and discards the unpublished file on any failure.
void write_png(const std::string& path, std::FILE* f, ConstImageView img, const WriteOptions& opt);
void write_jpeg(const std::string& path, std::FILE* f, ConstImageView img, const WriteOptions& opt);
void write_pnm(const std::string& path, std::FILE* f, ConstImageView img);
void write_webp(const std::string& path, std::FILE* f, ConstImageView img, const WriteOptions& opt);
void write_npy(const std::string& path, std::FILE* f, ConstImageView img);
/// TIFF writes through libtiff on a duplicate of `fd` (libtiff seeks and closes what it
/// opened; `fd` stays open for the caller).
void write_tiff(const std::string& path, int fd, ConstImageView img, const WriteOptions& opt);

/// Tests only: true makes write_image use the named-temporary fallback even where O_TMPFILE
/// works, so that the tests cover both ways of writing on one machine.
void force_named_temporaries(bool on);

}  // namespace pixflow::detail::io
