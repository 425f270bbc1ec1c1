// TIFF when pixflow is built without libtiff: reading a TIFF file reports unsupported
// (write_image checks have_tiff(), through check_write_format, before it creates any file).
#include "src/io/codecs.hpp"

namespace pixflow {

bool have_tiff() {
  return false;
}

namespace detail::io {

ImageHeader read_tiff(const std::string& path, std::FILE*, const IoLimits&, Image*,
                      ImageMetadata*) {
  read_fail(Status::unsupported, path, "TIFF: pixflow was built without libtiff");
}

void write_tiff(const std::string& path, int, ConstImageView, const WriteOptions&) {
  write_fail(Status::unsupported, path, "TIFF: pixflow was built without libtiff");
}

}  // namespace detail::io
}  // namespace pixflow
