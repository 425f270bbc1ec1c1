// `pixflow demo`: a showcase on the bundled photo (data/astronaut.png): salt-and-pepper
// noise, its removal with a 3x3 median, Sobel edges, and a contact sheet of the four.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pixflow/pixflow.hpp"
#include "tools/pixflow/cli.hpp"

namespace pixflow::cli {

namespace fs = std::filesystem;

namespace {

constexpr double kNoiseFraction = 0.05;  // ~5% of the pixels become black or white
constexpr int kGap = 8;                  // pixels between the contact sheet's panels

double time_ms(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void step(const std::string& what, double ms) {
  std::printf("  %-44s %9.2f ms\n", what.c_str(), ms);
}

// Salt and pepper: each pixel independently, with probability kNoiseFraction, gets all its
// colour channels set to 0 or 255 (alpha is kept). Only the raw mt19937_64 output is used,
// so the noise is the same on every platform for a given seed.
Image add_noise(const Image& src, std::uint64_t seed) {
  Image out = clone(src);
  std::mt19937_64 rng(seed);
  const int colour = std::min(out.channels(), 3);
  const std::uint64_t threshold = std::uint64_t(kNoiseFraction * 1e6);
  for (std::int64_t y = 0; y < out.height(); ++y) {
    std::uint8_t* row = out.row<std::uint8_t>(y);
    for (std::int64_t x = 0; x < out.width(); ++x) {
      const std::uint64_t r = rng();
      if (r % 1000000 >= threshold) continue;
      const std::uint8_t v = (r >> 32) & 1 ? 255 : 0;
      for (int c = 0; c < colour; ++c) row[x * out.channels() + c] = v;
    }
  }
  return out;
}

// |d/dx| + |d/dy| of the gray image, saturated to u8.
Image sobel_edges(ConstImageView rgb_or_gray) {
  Image g;
  if (rgb_or_gray.channels() == 1) {
    g = clone(rgb_or_gray);
  } else {
    g = Image(rgb_or_gray.width(), rgb_or_gray.height(), Format{Depth::u8, 1});
    gray(rgb_or_gray, g);
  }
  const Format s16{Depth::s16, 1}, u8{Depth::u8, 1};
  Image dx(g.width(), g.height(), s16), dy(g.width(), g.height(), s16);
  SobelParams px;
  px.dx = 1;
  px.dy = 0;
  sobel(g, dx, px);
  SobelParams py;
  py.dx = 0;
  py.dy = 1;
  sobel(g, dy, py);
  ConvertParams abs_u8;
  abs_u8.to = Depth::u8;
  abs_u8.abs = true;
  Image ax(g.width(), g.height(), u8), ay(g.width(), g.height(), u8),
      edges(g.width(), g.height(), u8);
  convert(dx, ax, abs_u8);
  convert(dy, ay, abs_u8);
  arith(ax, ay, edges, ArithOp::add);
  return edges;
}

// The panels side by side with kGap white pixels between them; gray panels become RGB and
// alpha is dropped.
Image contact_sheet(const std::vector<const Image*>& panels) {
  std::int64_t w = 0, h = 0;
  for (const Image* p : panels) {
    w += p->width();
    h = std::max(h, p->height());
  }
  w += kGap * std::int64_t(panels.size() - 1);
  Image sheet(w, h, Format{Depth::u8, 3});
  for (std::int64_t y = 0; y < h; ++y) std::fill_n(sheet.row<std::uint8_t>(y), w * 3, 255);
  std::int64_t x0 = 0;
  for (const Image* p : panels) {
    const int ch = p->channels();
    for (std::int64_t y = 0; y < p->height(); ++y) {
      const std::uint8_t* s = p->row<std::uint8_t>(y);
      std::uint8_t* d = sheet.row<std::uint8_t>(y) + x0 * 3;
      for (std::int64_t x = 0; x < p->width(); ++x)
        for (int c = 0; c < 3; ++c) d[x * 3 + c] = s[x * ch + (ch == 1 ? 0 : c)];
    }
    x0 += p->width() + kGap;
  }
  return sheet;
}

}  // namespace

int demo_command(const DemoOptions& opt) {
  const fs::path dir(opt.output_dir);

  Image original, noisy, denoised, edges, sheet;
  std::printf("pixflow demo (CPU backend, %u threads)\n", std::thread::hardware_concurrency());
  if (opt.input.empty())
    step("decode the embedded astronaut.png",
         time_ms([&] { original = decode_image(demo_image_png(), "astronaut.png (embedded)"); }));
  else
    step("read " + opt.input, time_ms([&] { original = read_image(opt.input); }));
  if (original.depth() != Depth::u8 ||
      !(original.channels() == 1 || original.channels() == 3 || original.channels() == 4))
    throw Error(Status::unsupported, "demo: the input must be u8 with 1, 3 or 4 channels (got " +
                                         to_string(original.format()) + ")");
  std::printf("  input: %lldx%lld %s\n", static_cast<long long>(original.width()),
              static_cast<long long>(original.height()), to_string(original.format()).c_str());

  step("salt-and-pepper noise (5%, seed " + std::to_string(opt.seed) + ")",
       time_ms([&] { noisy = add_noise(original, opt.seed); }));
  step("median k=3 (denoise)", time_ms([&] {
         denoised = Image(noisy.width(), noisy.height(), noisy.format());
         MedianParams mp;
         mp.kw = mp.kh = 3;
         median(noisy, denoised, mp);
       }));
  step("gray | sobel dx, dy | convert abs=1 | add",
       time_ms([&] { edges = sobel_edges(denoised); }));
  step("contact sheet", time_ms([&] {
         sheet = contact_sheet({&original, &noisy, &denoised, &edges});
       }));

  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw Error(Status::io_error,
                "demo: cannot create output directory '" + opt.output_dir + "': " + ec.message());
  const std::pair<const char*, const Image*> files[] = {{"original.png", &original},
                                                        {"noisy.png", &noisy},
                                                        {"denoised.png", &denoised},
                                                        {"edges.png", &edges},
                                                        {"contact_sheet.png", &sheet}};
  for (const auto& [name, img] : files) {
    const std::string path = (dir / name).string();
    step("wrote " + path, time_ms([&] { write_image(path, *img); }));
  }
  std::cout << std::flush;
  return kOk;
}

}  // namespace pixflow::cli
