// The CUDA packed u8 3x3 kernels (src/backends/cuda/u8_3x3.cuh) on grids of many blocks and at
// every source alignment. Sources with 4-byte aligned rows take the rows8 shape (its edges:
// RowsShapeMatchesRefAtEveryEdge, the last test); the others the tile shapes: below
// tall_blocks_fill (launch.cuh) the short one, 128 x 16 outputs a block, one tile each (the
// streaming shape these sizes were chosen for, one wave of blocks walking consecutive tiles, was
// removed after session 13 measured it slower). The sizes give block columns with partial last
// tiles and widths (u8x1 1920x1080: 15 x 68 blocks, the last tile 8 rows; 700x3000: the last
// block column 60 bytes wide; u8x3 1500x900: the last tile 4 rows); the tall shape (4100x2200
// u8x1, 4100x1100 u8x3) runs in the other ManyTiles tests. Destinations are tight (4-byte
// aligned rows: the packed path runs; it falls back to the generic kernels otherwise); sources
// tight (the rows8 shape) and padded at random offsets and strides (mostly unaligned rows: the
// tile shapes, every tile through the edge path, word by word with byte loads). Every op the
// packed kernels serve, every border in turn for every size (constants 300 and -7 outside u8).
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "pixflow/ops.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

Context on(Backend be) {
  Context c;
  c.backend = be;
  return c;
}

struct Op3 {
  const char* name;
  Depth out;
  std::function<void(const ConstImageView&, const ImageView&, const Border&, Backend)> run;
};

std::vector<Op3> packed_ops() {
  return {
      {"median", Depth::u8,
       [](const ConstImageView& s, const ImageView& d, const Border& b, Backend be) {
         median(s, d, MedianParams{3, 3, b}, on(be));
       }},
      {"dilate", Depth::u8,
       [](const ConstImageView& s, const ImageView& d, const Border& b, Backend be) {
         morphology(s, d, MorphOp::dilate, MorphParams{3, 3, 1, b}, on(be));
       }},
      {"erode", Depth::u8,
       [](const ConstImageView& s, const ImageView& d, const Border& b, Backend be) {
         morphology(s, d, MorphOp::erode, MorphParams{3, 3, 1, b}, on(be));
       }},
      {"box", Depth::u8,
       [](const ConstImageView& s, const ImageView& d, const Border& b, Backend be) {
         box(s, d, BoxParams{3, 3, true, b}, on(be));
       }},
      {"box normalize=0", Depth::u8,
       [](const ConstImageView& s, const ImageView& d, const Border& b, Backend be) {
         box(s, d, BoxParams{3, 3, false, b}, on(be));
       }},
      {"gaussian sigma=0.8", Depth::u8,
       [](const ConstImageView& s, const ImageView& d, const Border& b, Backend be) {
         gaussian(s, d, GaussianParams{0.8, 0.0, 3, 3, b}, on(be));
       }},
      {"gaussian sigma=1.1/0.6", Depth::u8,
       [](const ConstImageView& s, const ImageView& d, const Border& b, Backend be) {
         gaussian(s, d, GaussianParams{1.1, 0.6, 3, 3, b}, on(be));
       }},
      {"sobel dx=1", Depth::s16,
       [](const ConstImageView& s, const ImageView& d, const Border& b, Backend be) {
         sobel(s, d, SobelParams{1, 0, 3, 1.0, 0.0, Depth::s16, b}, on(be));
       }},
      {"sobel dx=1 dy=1", Depth::s16,
       [](const ConstImageView& s, const ImageView& d, const Border& b, Backend be) {
         sobel(s, d, SobelParams{1, 1, 3, 1.0, 0.0, Depth::s16, b}, on(be));
       }},
      {"scharr dy=1", Depth::s16,
       [](const ConstImageView& s, const ImageView& d, const Border& b, Backend be) {
         scharr(s, d, ScharrParams{0, 1, 1.0, 0.0, Depth::s16, b}, on(be));
       }},
  };
}

// The 3x3 morphology composites u8x1 (morphology.cu: the rows8 shape with two halo rows, and
// gradient's one), for the rows8 edge test.
std::vector<Op3> composite_ops() {
  std::vector<Op3> ops;
  for (const auto& [name, op] :
       {std::pair{"open", MorphOp::open}, std::pair{"close", MorphOp::close},
        std::pair{"tophat", MorphOp::tophat}, std::pair{"blackhat", MorphOp::blackhat},
        std::pair{"gradient", MorphOp::gradient}})
    ops.push_back(
        {name, Depth::u8,
         [op = op](const ConstImageView& s, const ImageView& d, const Border& b, Backend be) {
           morphology(s, d, op, MorphParams{3, 3, 1, b}, on(be));
         }});
  return ops;
}

// dilate/erode 5x5 and 7x7 (morphology.cu: u8x1 in the rows8 shape with two and three halo
// rows and the rule's pixels outside found on the host, rows8_edge; u8x3 in other kernels), for
// the rows8 edge test: images narrower and shorter than the reach included.
std::vector<Op3> morph_k_ops() {
  std::vector<Op3> ops;
  for (const auto& [name, op, k] :
       {std::tuple{"dilate 5x5", MorphOp::dilate, 5}, std::tuple{"erode 5x5", MorphOp::erode, 5},
        std::tuple{"dilate 7x7", MorphOp::dilate, 7}, std::tuple{"erode 7x7", MorphOp::erode, 7}})
    ops.push_back({name, Depth::u8,
                   [op = op, k = k](const ConstImageView& s, const ImageView& d, const Border& b,
                                    Backend be) {
                     morphology(s, d, op, MorphParams{k, k, 1, b}, on(be));
                   }});
  return ops;
}

TEST(Packed3x3, EveryBackendMatchesRefOnManyShortTiles) {
  auto rng = make_rng(0x5713);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  struct Image3 {
    Size size;
    int cn;
  };
  // 4100x1100 u8x1 runs in the other ManyTiles tests.
  const Image3 images[] = {{{1920, 1080}, 1}, {{2000, 1500}, 1}, {{700, 3000}, 1},
                           {{1920, 1080}, 3}, {{2100, 1100}, 3}, {{700, 3000}, 3},
                           {{1500, 900}, 3}};
  const std::vector<Op3> ops = packed_ops();
  std::size_t turn = 0;
  for (const Image3& im : images) {
    const Size s = im.size;
    for (bool tight_src : {true, false}) {
      // One source a size and alignment (the reference's cost dominates), every op on it.
      auto src = random_image(s.w, s.h, {Depth::u8, im.cn}, rng, tight_src);
      for (const Op3& op : ops) {
        const Border b = borders[turn++ % borders.size()];
        auto want = make_dst(s.w, s.h, {op.out, im.cn}, rng, true);
        op.run(src, want, b, Backend::ref);
        for (Backend be : test_backends()) {
          PIXFLOW_TRACE(testing::Message() << backend_name(be) << " " << op.name << " u8x" << im.cn
                                           << " " << s.w << "x" << s.h << " " << describe(b)
                                           << (tight_src ? " aligned src" : " padded src"));
          auto in = to_backend(be, src, rng, tight_src);
          auto got = make_dst_on(be, s.w, s.h, {op.out, im.cn}, rng, /*tight=*/true);
          op.run(in, got, b, be);
          ASSERT_EQ(compare(to_host(got), want), "");
        }
      }
    }
  }
}

// The tile loaders of the tall and short shapes, for every op the packed kernels serve
// (u8_3x3.cuh load_tile_chunks: 16-byte chunks from bx0 - 16 where the source rows are 16-byte
// aligned and the tile lies inside the image; words where they are 4-byte aligned only, the
// border rule on the edge tiles and for other alignments; then store_rows4's inside and
// clipped stores). The sources are ROIs starting `off` samples into a wider image (64-byte
// aligned rows): u8x1 at bytes 0 and 16 (chunks; at 16 with image bytes left of the ROI that
// the tile must not read: the border rule applies at the ROI's edge), 4 (words), 1 (bytes);
// u8x3 at 16 pixels (48 bytes: chunks) and 4 (12 bytes: words). 600x150 takes the short shape;
// 4100x2200 u8x1 and 1400x2200 u8x3 the tall one
// (33 x 35 blocks of 128 x 64 bytes: partial last block row and column). Destinations tight
// (4-byte aligned rows: the packed path). Borders in turn, constants 300 and -7 among them.
TEST(Packed3x3, EveryOpMatchesRefAtEverySourceAlignment) {
  auto rng = make_rng(0x5714);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  struct Case {
    int cn, off;
    Size s;
  };
  // (At sample 1 the source rows are not 4-byte aligned: the tile shapes, short at 600x150,
  // tall at 4100x2200 and 1400x2200 u8x3; the other offsets take the rows8 shape.)
  const Case cases[] = {{1, 0, {600, 150}},   {1, 16, {600, 150}},  {1, 4, {600, 150}},
                        {1, 1, {600, 150}},   {3, 16, {600, 150}},  {1, 16, {4100, 2200}},
                        {1, 4, {4100, 2200}}, {1, 1, {4100, 2200}}, {3, 16, {1400, 2200}},
                        {3, 4, {1400, 2200}}, {3, 1, {1400, 2200}}};
  const std::vector<Op3> ops = packed_ops();
  std::size_t turn = 0;
  for (const Case& c : cases) {
    TestImage wide = random_image(c.s.w + c.off, c.s.h, {Depth::u8, c.cn}, rng, true);
    const ConstImageView src = ConstImageView(wide.view).roi(c.off, 0, c.s.w, c.s.h);
    std::vector<TestImage> on_backend;
    for (Backend be : test_backends()) on_backend.push_back(to_backend(be, wide.view, rng, true));
    for (const Op3& op : ops) {
      const Border b = borders[turn++ % borders.size()];
      TestImage want = make_dst(c.s.w, c.s.h, {op.out, c.cn}, rng, true);
      op.run(src, want.view, b, Backend::ref);
      std::size_t bi = 0;
      for (Backend be : test_backends()) {
        PIXFLOW_TRACE(testing::Message()
                      << backend_name(be) << " " << op.name << " u8x" << c.cn << " " << c.s.w << "x"
                      << c.s.h << " " << describe(b) << " source at sample " << c.off);
        TestImage got = make_dst_on(be, c.s.w, c.s.h, {op.out, c.cn}, rng, true);
        op.run(ConstImageView(on_backend[bi++].view).roi(c.off, 0, c.s.w, c.s.h), got.view, b, be);
        ASSERT_EQ(compare(to_host(got.view), want.view), "");
      }
    }
  }
}

// The rows8 shape (u8_3x3.cuh: a warp 256 row bytes x 4 rows, a lane 8 bytes, neighbours by
// shuffles; every size whose source rows are 4-byte aligned) at its edges: widths around a lane
// (8 bytes) and a warp (256), lanes past the row's end (their bytes through the border rule:
// the right neighbours of the last pixels), lane 0's left word at the row's start, heights
// below and around a warp's 4 rows (rows through the rule at both ends); sources at sample 0
// (8-byte aligned rows: 8-byte loads) and 4 (4-byte aligned: two word loads), destinations at
// sample 0 and 4 (u8: 4-byte aligned rows, two word stores; s16: 8-byte aligned, two 8-byte
// stores), every op, the morphology composites (u8x1; u8x3 composites run as passes) and
// dilate/erode 5x5 and 7x7, u8x1 and u8x3, borders in turn (constants 300 and -7 among them).
TEST(Packed3x3, RowsShapeMatchesRefAtEveryEdge) {
  auto rng = make_rng(0x5715);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  const Size sizes[] = {{1, 1},  {3, 2},   {4, 5},   {7, 3},   {8, 4},   {9, 6},    {31, 7},
                        {85, 9}, {255, 1}, {256, 2}, {257, 8}, {300, 5}, {517, 17}, {86, 33}};
  std::vector<Op3> ops = packed_ops();
  for (Op3& op : composite_ops()) ops.push_back(op);
  for (Op3& op : morph_k_ops()) ops.push_back(op);
  std::size_t turn = 0;
  for (const Size& s : sizes) {
    for (int cn : {1, 3}) {
      for (int off : {0, 4}) {
        TestImage wide = random_image(s.w + off, s.h, {Depth::u8, cn}, rng, true);
        const ConstImageView src = ConstImageView(wide.view).roi(off, 0, s.w, s.h);
        std::vector<TestImage> on_backend;
        for (Backend be : test_backends())
          on_backend.push_back(to_backend(be, wide.view, rng, true));
        for (const Op3& op : ops) {
          const Border b = borders[turn++ % borders.size()];
          TestImage want = make_dst(s.w, s.h, {op.out, cn}, rng, true);
          op.run(src, want.view, b, Backend::ref);
          std::size_t bi = 0;
          for (Backend be : test_backends()) {
            PIXFLOW_TRACE(testing::Message() << backend_name(be) << " " << op.name << " u8x" << cn
                                             << " " << s.w << "x" << s.h << " " << describe(b)
                                             << " source and destination at sample " << off);
            TestImage got = make_dst_on(be, s.w + off, s.h, {op.out, cn}, rng, true);
            const ImageView got_roi = got.view.roi(off, 0, s.w, s.h);
            op.run(ConstImageView(on_backend[bi++].view).roi(off, 0, s.w, s.h), got_roi, b, be);
            ASSERT_EQ(compare(to_host(got_roi), want.view), "");
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace pixflow::test
