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
/// dimension and the limit (io_error for a zero or negative dimension).
void check_size(const std::string& path, std::int64_t w, std::int64_t h, Format fmt,
                const IoLimits& limits);

struct FileCloser {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

/// Bytes from the current position of `f` to its end (-1 when it cannot be told).
std::int64_t bytes_left(std::FILE* f);
/// Reads exactly n bytes or throws io_error ("truncated") naming the path.
void read_exact(std::FILE* f, void* dst, std::size_t n, const std::string& path);

// Decoders: `f` is positioned at the start of the file.
Image read_png(const std::string& path, std::FILE* f, const IoLimits& limits);
Image read_jpeg(const std::string& path, std::FILE* f, const IoLimits& limits);
Image read_pnm(const std::string& path, std::FILE* f, const IoLimits& limits);
Image read_npy(const std::string& path, std::FILE* f, const IoLimits& limits);
/// TIFF opens the file itself (libtiff seeks); `f` is not used.
Image read_tiff(const std::string& path, const IoLimits& limits);

// Encoders: write `img` (host, format already checked by can_write) to `f`; `path` is the
// final name, for messages. Errors from the library become io_error; the caller checks
// the stream's state and removes the temporary file on any failure.
void write_png(const std::string& path, std::FILE* f, ConstImageView img);
void write_jpeg(const std::string& path, std::FILE* f, ConstImageView img, int quality);
void write_pnm(const std::string& path, std::FILE* f, ConstImageView img);
void write_npy(const std::string& path, std::FILE* f, ConstImageView img);
/// TIFF writes through libtiff on the temporary file `tmp_path` (it seeks).
void write_tiff(const std::string& path, const std::string& tmp_path, ConstImageView img);

}  // namespace pixflow::detail::io
