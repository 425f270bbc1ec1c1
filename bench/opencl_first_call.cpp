// pixflow-opencl-first-call: the first call of every catalogue op on one OpenCL device, in this
// (fresh) process; what scripts/opencl-cache-timing.sh runs under each cache setting to see
// what the program-binary disk cache adds over the drivers' own caches.
//
//   pixflow-opencl-first-call DEVICE [OP...]
//
// Prints, one per line (times in ms, steady clock, each ending in a synchronize):
//   device <describe_device>
//   platform <platform name>
//   context <first allocation on the device: context and queue creation>
//   op <name> <first call> <second call>     (the op's first example, on 64 x 48 samples of
//                                              u8 where the op takes it, 1 channel where it
//                                              takes one; the second call has every program)
//   stats built N loaded N saved N unsaved N corrupt N rejected N   (program_cache_stats)
// The cache folder is whatever PIXFLOW_OPENCL_CACHE_DIR etc. say (the script sets it).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "pixflow/pixflow.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/schema/schema.hpp"

namespace {

using namespace pixflow;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::map<std::string, std::string> split(const std::string& text) {
  std::map<std::string, std::string> kv;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t j = std::min(text.find(' ', i), text.size());
    const std::string item = text.substr(i, j - i);
    if (const std::size_t eq = item.find('='); eq != std::string::npos)
      kv[item.substr(0, eq)] = item.substr(eq + 1);
    i = j + 1;
  }
  return kv;
}

// A host image of samples 0, 1, 2, ... (mod 251), scaled for f32: any data will do, the
// time is the programs'.
Image pattern(std::int64_t w, std::int64_t h, Format f) {
  Image img(w, h, f);
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t i = 0; i < w * f.channels; ++i) {
      const int v = int((y * w * f.channels + i) % 251);
      switch (f.depth) {
        case Depth::u8:
          img.view().row<std::uint8_t>(y)[i] = std::uint8_t(v);
          break;
        case Depth::u16:
          img.view().row<std::uint16_t>(y)[i] = std::uint16_t(v * 200);
          break;
        case Depth::s16:
          img.view().row<std::int16_t>(y)[i] = std::int16_t(v * 100 - 12000);
          break;
        case Depth::s32:
          img.view().row<std::int32_t>(y)[i] = v * 1000 - 100000;
          break;
        case Depth::f32:
          img.view().row<float>(y)[i] = float(v) / 251.0f;
          break;
      }
    }
  return img;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DEVICE [OP...]\n", argv[0]);
    return 2;
  }
  const int device = std::atoi(argv[1]);
  const std::set<std::string> only(argv + 2, argv + argc);
  const auto& ds = opencl::devices();
  if (device < 0 || device >= int(ds.size())) {
    std::fprintf(stderr, "no OpenCL device %d (%zu found)\n", device, ds.size());
    return 2;
  }
  const Location dev = Location::opencl(device);
  std::printf("device %s\nplatform %s\n", describe_device(dev).c_str(),
              ds[std::size_t(device)].platform_name.c_str());
  try {
    Clock::time_point t0 = Clock::now();
    { Image first(1, 1, {Depth::u8, 1}, dev); }
    synchronize(dev);
    std::printf("context %.1f\n", ms_since(t0));

    const std::int64_t w = 64, h = 48;
    for (const schema::Op* op : schema::catalogue()) {
      if (!only.empty() && !only.count(op->name())) continue;
      const auto& depths = op->depths();
      const auto& chans = op->channels();
      const Depth d =
          std::count(depths.begin(), depths.end(), Depth::u8) ? Depth::u8 : depths.front();
      const int c = std::count(chans.begin(), chans.end(), 1) ? 1 : chans.front();
      const Format f{d, c};
      auto kv = split(op->examples().empty() ? "" : op->examples().front());
      for (const schema::Param& p : op->params())
        if (p.kind == schema::Kind::image && p.required && !kv.count(p.name)) kv[p.name] = "x";
      // Image parameters (a second operand, maps) on the device, made before the clock starts.
      const auto bound = op->bind(kv, [&](const schema::Param& p, const std::string&) {
        const Format pf = p.role == schema::ImageRole::like_src ? f : Format{Depth::f32, 1};
        auto img = std::make_shared<Image>(w, h, pf, dev);
        copy(pattern(w, h, pf), *img);
        return std::shared_ptr<const Image>(img);
      });
      const schema::Shape out = bound->output(Image(w, h, f).view());
      Image src(w, h, f, dev), dst(out.width, out.height, out.format, dev);
      copy(pattern(w, h, f), src);
      synchronize(dev);
      t0 = Clock::now();
      bound->run(src, dst, Context{Backend::opencl});
      synchronize(dev);
      const double first = ms_since(t0);
      t0 = Clock::now();
      bound->run(src, dst, Context{Backend::opencl});
      synchronize(dev);
      std::printf("op %s %.2f %.2f\n", op->name().c_str(), first, ms_since(t0));
      std::fflush(stdout);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  const opencl::ProgramCacheStats s = opencl::program_cache_stats();
  std::printf("stats built %llu loaded %llu saved %llu unsaved %llu corrupt %llu rejected %llu\n",
              (unsigned long long)s.built, (unsigned long long)s.loaded,
              (unsigned long long)s.saved, (unsigned long long)s.unsaved,
              (unsigned long long)s.corrupt, (unsigned long long)s.rejected);
  return 0;
}
