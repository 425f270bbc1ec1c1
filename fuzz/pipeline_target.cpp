// The pipeline target: Pipeline::parse (splitting, op lookup, KEY=VALUE parsing, the
// schema's binding and checks, image operands read through read_image) on arbitrary text.
//
// Image operands (with=, map_x=, map_y=) are file names. So that the fuzzer cannot read
// whatever the machine holds (or block on /dev/stdin), text containing '/' is skipped and
// parse runs with the working directory set to a fixture folder of this process that holds a
// few small images (fixture names below, used by the seeds) and a corrupt and an empty file.
// The previous working directory is restored after every input.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "fuzz/fuzz_util.hpp"
#include "fuzz/targets.hpp"
#include "src/schema/schema.hpp"

namespace pixflow::fuzz {

namespace {

namespace fs = std::filesystem;

Image ramp(std::int64_t w, std::int64_t h, Format f, double scale) {
  Image img(w, h, f);
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t i = 0; i < w * f.channels; ++i) {
      const double v = double((i * 7 + y * 13) % 23) * scale;
      switch (f.depth) {
        case Depth::u8:
          img.row<std::uint8_t>(y)[i] = std::uint8_t(v);
          break;
        case Depth::u16:
          img.row<std::uint16_t>(y)[i] = std::uint16_t(v);
          break;
        case Depth::s16:
          img.row<std::int16_t>(y)[i] = std::int16_t(v);
          break;
        case Depth::s32:
          img.row<std::int32_t>(y)[i] = std::int32_t(v);
          break;
        case Depth::f32:
          img.row<float>(y)[i] = float(v);
          break;
      }
    }
  return img;
}

/// The fixture folder: created once per process, inside scratch_dir().
const fs::path& fixtures() {
  static const fs::path dir = [] {
    const fs::path d = scratch_dir() / "fixtures";
    fs::create_directories(d / "folder");
    write_image((d / "rgb.png").string(), ramp(7, 5, {Depth::u8, 3}, 11));
    write_image((d / "gray.png").string(), ramp(7, 5, {Depth::u8, 1}, 11));
    write_image((d / "gray.pgm").string(), ramp(7, 5, {Depth::u8, 1}, 11));
    write_image((d / "rgb16.npy").string(), ramp(7, 5, {Depth::u16, 3}, 2000));
    write_image((d / "map.npy").string(), ramp(7, 5, {Depth::f32, 1}, 0.25));
    write_image((d / "map_small.npy").string(), ramp(3, 2, {Depth::f32, 1}, 0.5));
    write_image((d / "s32.npy").string(), ramp(7, 5, {Depth::s32, 1}, 1000));
    if (have_tiff()) write_image((d / "f32.tif").string(), ramp(7, 5, {Depth::f32, 1}, 0.1));
    std::ofstream(d / "bad.png", std::ios::binary) << "\x89PNG\r\n\x1a\nnot a png";
    std::ofstream(d / "empty.npy", std::ios::binary);
    return d;
  }();
  return dir;
}

/// Sets the working directory for one input and restores it.
class InDirectory {
 public:
  explicit InDirectory(const fs::path& dir) {
    saved_ = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (saved_ < 0) die("fuzz: cannot open the working directory: ", std::strerror(errno));
    if (chdir(dir.c_str()) != 0) die("fuzz: cannot enter ", dir.string());
  }
  ~InDirectory() {
    if (fchdir(saved_) != 0) die("fuzz: cannot return to the working directory");
    close(saved_);
  }
  InDirectory(const InDirectory&) = delete;
  InDirectory& operator=(const InDirectory&) = delete;

 private:
  int saved_ = -1;
};

/// Longer texts only make parse slower, not different.
constexpr std::size_t kMaxText = 1 << 12;

}  // namespace

int fuzz_pipeline(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxText) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (text.find('/') != std::string_view::npos) return 0;  // file operands stay in fixtures()
  std::size_t bars = 0;
  for (char c : text) bars += c == '|';
  const fs::path& dir = fixtures();
  InDirectory in(dir);
  try {
    const Pipeline p = Pipeline::parse(text, fuzz_limits());
    if (p.size() != bars + 1 || p.names().size() != p.size())
      die("pipeline: parsed ", p.size(), " stages (", p.names().size(), " names) from a text with ",
          bars, " '|'");
    for (const std::string& n : p.names())
      if (!schema::find(n)) die("pipeline: parsed a stage of unknown op '", n, "'");
  } catch (const Error& e) {
    // invalid_argument for the text; an image operand's read_image error as it is.
    check_error_status(
        "pipeline", e,
        {Status::invalid_argument, Status::io_error, Status::unsupported, Status::limit_exceeded});
  }
  return 0;
}

std::vector<Seed> pipeline_seeds() {
  std::vector<Seed> out;
  for (const schema::Op* op : schema::catalogue()) {
    int i = 0;
    for (const std::string& example : op->examples()) {
      std::string text = op->name();
      // The examples name image operands by role (with=like_src); files are fixtures here.
      std::string rest;
      for (std::size_t b = 0; b < example.size();) {
        std::size_t e = example.find(' ', b);
        if (e == std::string::npos) e = example.size();
        const std::string word = example.substr(b, e - b);
        b = e + 1;
        if (word.empty()) continue;
        const std::string key = word.substr(0, word.find('='));
        bool image = false;
        for (const schema::Param& p : op->params())
          image |= p.name == key && p.kind == schema::Kind::image;
        rest += " " + (image ? key + "=rgb.png" : word);
      }
      for (const schema::Param& p : op->params())
        if (p.kind == schema::Kind::image && p.required &&
            rest.find(" " + p.name + "=") == std::string::npos)
          rest += " " + p.name + "=map.npy";
      out.push_back({op->name() + "-" + std::to_string(i++), text + rest});
    }
  }
  return out;
}

}  // namespace pixflow::fuzz
