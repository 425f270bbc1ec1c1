// WebP when pixflow is built without libwebp: reading a WebP file reports unsupported
// (write_image checks have_webp(), through check_write_format, before it creates any file).
#include "src/io/codecs.hpp"

namespace pixflow {

bool have_webp() {
  return false;
}

namespace detail::io {

ImageHeader read_webp(const std::string& path, std::FILE*, const IoLimits&, Image*) {
  read_fail(Status::unsupported, path, "WebP: pixflow was built without libwebp");
}

void write_webp(const std::string& path, std::FILE*, ConstImageView, const WriteOptions&) {
  write_fail(Status::unsupported, path, "WebP: pixflow was built without libwebp");
}

}  // namespace detail::io
}  // namespace pixflow
