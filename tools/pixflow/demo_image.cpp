// The demo's photo (data/astronaut.png, public domain: data/README.md), embedded in the binary
// at build time, so that `pixflow demo` needs no file beside the installed binary and the
// binary holds no path of the source tree (.incbin reads the file; only its bytes land here).
#include <cstddef>
#include <span>

#include "tools/pixflow/cli.hpp"

asm(".pushsection .rodata\n"
    ".balign 16\n"
    "pixflow_demo_png_begin:\n"
    ".incbin \"" PIXFLOW_DEMO_IMAGE
    "\"\n"
    "pixflow_demo_png_end:\n"
    ".popsection\n");

extern "C" const unsigned char pixflow_demo_png_begin[];
extern "C" const unsigned char pixflow_demo_png_end[];

namespace pixflow::cli {

std::span<const std::byte> demo_image_png() {
  return {reinterpret_cast<const std::byte*>(pixflow_demo_png_begin),
          std::size_t(pixflow_demo_png_end - pixflow_demo_png_begin)};
}

}  // namespace pixflow::cli
