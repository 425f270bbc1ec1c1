// The CUDA median's packed u8 5x5 / 7x7 body (src/backends/cuda/median_u8_packed.hpp and the
// generated networks it runs, median_networks.hpp) run on the CPU: no GPU is needed, so CI
// checks the kernel's arithmetic everywhere. Each test builds the shared tiles exactly as the
// kernel's loader defines them (byte (r, i) = pixel (bx0 - 4 + i, by0 - K/2 + r) by the border
// rule), runs median_rows for every thread of every block, and compares every output byte (both
// 16-bit lanes of both words) with a brute-force median. The backend-versus-reference cases at
// the end run the kernel itself where a GPU is present.
#include <algorithm>
#include <cstring>
#include <vector>

#include "src/backends/cuda/median_u8_packed.hpp"
#include "src/backends/cuda/u8_3x3_cn.hpp"
#include "src/base/numeric.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

namespace mu = pixflow::cuda::median_u8;
using mu::u32;

struct Plane {
  int w = 0, h = 0;
  std::vector<std::uint8_t> px;
  std::uint8_t at(long long x, long long y) const { return px[std::size_t(y * w + x)]; }
};

std::uint8_t bordered(const Plane& p, long long x, long long y, const Border& b) {
  const long long xi = detail::border_index(x, p.w, b.type);
  const long long yi = detail::border_index(y, p.h, b.type);
  if (xi < 0 || yi < 0) return detail::saturate_cast<std::uint8_t>(b.value);
  return p.at(xi, yi);
}

std::uint8_t brute_median(const Plane& p, long long x, long long y, int k, const Border& b) {
  std::uint8_t win[49];
  int n = 0;
  for (int dy = -k / 2; dy <= k / 2; ++dy)
    for (int dx = -k / 2; dx <= k / 2; ++dx) win[n++] = bordered(p, x + dx, y + dy, b);
  std::nth_element(win, win + n / 2, win + n);
  return win[n / 2];
}

// "" when the packed body matches brute force on every pixel of p, else the first mismatch.
// H: rows a thread (the block shape: kRows<K>, or kRowsShort<K> for small images).
template <int K, int H = mu::kRows<K>>
std::string check_plane(const Plane& p, const Border& b) {
  constexpr int R = K / 2, TY = mu::kTY<K>, TH = mu::kTileH<K, H>;
  std::vector<u32> tile(std::size_t(TH) * mu::kTileWords);
  std::vector<std::uint8_t> bytes(std::size_t(TH) * mu::kTileW);
  // 7x7's per-thread scratch (the kernel's shared `cores`): every thread of the block its own
  // slots at the kernel's stride, poisoned before each block (a slot read before its write
  // would show). The threads run in order, and after each one the slots of the threads still to
  // run must hold the poison: a thread that wrote outside its own slots (a race on the GPU,
  // where no barrier orders them) fails here.
  constexpr int kThreads = mu::kTX * TY;
  constexpr u32 kPoison = 0xa5a5a5a5u;
  std::vector<u32> cores(std::size_t(mu::kCoreWords7<H>) * kThreads);
  for (long long by0 = 0; by0 < p.h; by0 += mu::kBH<K, H>)
    for (long long bx0 = 0; bx0 < p.w; bx0 += mu::kBW) {
      for (int r = 0; r < TH; ++r)
        for (int i = 0; i < mu::kTileW; ++i)
          bytes[std::size_t(r * mu::kTileW + i)] = bordered(p, bx0 - 4 + i, by0 - R + r, b);
      std::memcpy(tile.data(), bytes.data(), bytes.size());  // little-endian words, as on the GPU
      std::fill(cores.begin(), cores.end(), kPoison);
      for (int ty = 0; ty < TY; ++ty)
        for (int tx = 0; tx < mu::kTX; ++tx) {
          std::string err;
          auto emit = [&](int i, u32 o) {
            for (int j = 0; j < 4; ++j) {
              const long long x = bx0 + 4 * tx + j, y = by0 + ty * H + i;
              if (x >= p.w || y >= p.h || !err.empty()) continue;
              const int got = int((o >> (8 * j)) & 0xffu);
              const int want = brute_median(p, x, y, K, b);
              if (got != want)
                err = "k=" + std::to_string(K) + " " + describe(b) + " size " +
                      std::to_string(p.w) + "x" + std::to_string(p.h) + " at (" +
                      std::to_string(x) + ", " + std::to_string(y) + "): got " +
                      std::to_string(got) + ", want " + std::to_string(want);
            }
          };
          const int tid = ty * mu::kTX + tx;
          mu::median_rows<K, H>(tile.data(), tx, ty * H, cores.data() + tid, kThreads, emit);
          if (!err.empty()) return err;
          if constexpr (K == 7)
            for (std::size_t n = 0; n < cores.size(); ++n)
              if (int(n % kThreads) > tid && cores[n] != kPoison)
                return "thread " + std::to_string(tid) + " wrote word " + std::to_string(n) +
                       " of the scratch, another thread's slot";
        }
    }
  return "";
}

enum class Pattern { random, equal, ramp, reversed, extremes, ties, stripes };

Plane make_plane(int w, int h, Pattern pat, std::mt19937_64& rng) {
  Plane p{w, h, std::vector<std::uint8_t>(std::size_t(w) * std::size_t(h))};
  std::uniform_int_distribution<int> any(0, 255), bit(0, 1), few(0, 3);
  const int c = any(rng);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int v = 0;
      switch (pat) {
        case Pattern::random:
          v = any(rng);
          break;
        case Pattern::equal:
          v = c;
          break;
        case Pattern::ramp:
          v = (x + 3 * y) & 255;
          break;  // sorted along rows
        case Pattern::reversed:
          v = 255 - ((x + 3 * y) & 255);
          break;  // and reversed
        case Pattern::extremes:
          v = bit(rng) ? 255 : 0;
          break;
        case Pattern::ties:
          v = 126 + few(rng);
          break;
        case Pattern::stripes:
          v = ((x / 2 + y) & 1) ? 255 : 0;
          break;
      }
      p.px[std::size_t(y * w + x)] = std::uint8_t(v);
    }
  return p;
}

const Pattern kPatterns[] = {Pattern::random,   Pattern::equal, Pattern::ramp,   Pattern::reversed,
                             Pattern::extremes, Pattern::ties,  Pattern::stripes};

template <int K, int H = mu::kRows<K>>
void sweep(std::uint64_t salt) {
  auto rng = make_rng(salt);
  // Smaller than the window, one word, partial blocks and several blocks both ways (blocks
  // are 128 x 128 outputs for 5x5, 128 x 32 in its short shape, 128 x 16 for 7x7).
  const std::vector<Size> sizes{{1, 1},  {2, 3},    {3, 2},    {5, 7},
                                {13, 9}, {129, 33}, {300, 70}, {131, 290}};
  for (Size s : sizes)
    for (Pattern pat : kPatterns)
      for (const Border& b : all_borders()) {
        const Plane p = make_plane(int(s.w), int(s.h), pat, rng);
        PIXFLOW_TRACE("pattern " + std::to_string(int(pat)));
        ASSERT_EQ((check_plane<K, H>(p, b)), "");
      }
}

TEST(MedianPacked, Body5x5MatchesBruteForceEveryLane) {
  sweep<5>(0x9e51);
}

// The short block shape of 5x5 (4 rows a thread: two pairs, so a thread's first pair and its
// carried merges both run), which small images take (launch.cuh, tall_blocks_fill).
TEST(MedianPacked, Body5x5ShortShapeMatchesBruteForceEveryLane) {
  static_assert(mu::kRowsShort<5> != mu::kRows<5>, "the short shape is another shape");
  sweep<5, mu::kRowsShort<5>>(0x9e52);
}

TEST(MedianPacked, Body7x7MatchesBruteForceEveryLane) {
  sweep<7>(0x9e71);
}

// median5_u8_kernel (5x5 u8 x 1) as the GPU runs it: a grid of g blocks walking the tiles
// (tile5_origin: block b takes tiles b, b + g, ...), each tile in 16-byte rows (kTile5Pitch
// words, the body's words from kTile5Off): where tile5_inside holds, copied chunk by chunk
// from the image exactly as the threads' cp.async do (tile5_thread_chunk, tile5_chunk; every
// chunk once, every read inside the image), else through the border rule (load_word_tile_u8's
// words, byte (r, i) = pixel (bx0 - 4 + i, by0 - 2 + r)). The tile buffer is poisoned before
// each tile, so a word the body reads but no copy wrote shows; every output pixel must be
// emitted exactly once over the whole grid.
template <int H>
std::string check_plane_walk(const Plane& p, const Border& b, const std::vector<std::uint8_t>& want,
                             bool aligned16, int g) {
  constexpr int K = 5, TY = mu::kTY<K>, TH = mu::kTileH<K, H>, BH = mu::kBH<K, H>;
  constexpr int kThreads = mu::kTX * TY, P = mu::kTile5Pitch;
  const int bx = (p.w + mu::kBW - 1) / mu::kBW, tiles = bx * ((p.h + BH - 1) / BH);
  std::vector<int> seen(std::size_t(p.w) * std::size_t(p.h), 0);
  std::vector<std::uint8_t> bytes(std::size_t(TH) * P * 4);
  std::vector<u32> tile(std::size_t(TH) * P);
  std::vector<int> copied(std::size_t(mu::kTile5ChunksAll<H>));
  int inside_tiles = 0;
  for (int blk = 0; blk < g; ++blk)
    for (int t = blk; t < tiles; t += g) {
      long long bx0, by0;
      mu::tile5_origin(t, bx, BH, bx0, by0);
      std::fill(bytes.begin(), bytes.end(), std::uint8_t(0xa5));
      if (mu::tile5_inside(aligned16, bx0 - 16, by0 - 2, p.w, p.h, TH)) {
        ++inside_tiles;
        std::fill(copied.begin(), copied.end(), 0);
        for (int tid = 0; tid < kThreads; ++tid)
          for (int k = 0; k < mu::kTile5ChunksPerThread<H>; ++k) {
            int i, r, c;
            if (!mu::tile5_thread_chunk<H>(tid, k, i)) continue;
            if (i < 0 || i >= mu::kTile5ChunksAll<H>) return "chunk index out of the tile";
            ++copied[std::size_t(i)];
            mu::tile5_chunk(i, r, c);
            for (int j = 0; j < 16; ++j) {
              const long long x = bx0 - 16 + 16 * c + j, y = by0 - 2 + r;
              if (x < 0 || x >= p.w || y < 0 || y >= p.h) return "an inside tile read outside";
              bytes[std::size_t(r * P * 4 + 16 * c + j)] = p.at(x, y);
            }
          }
        for (int n : copied)
          if (n != 1) return "a chunk copied " + std::to_string(n) + " times";
      } else {
        for (int r = 0; r < TH; ++r)
          for (int i = 0; i < 4 * mu::kTileWords; ++i)
            bytes[std::size_t(r * P * 4 + 4 * mu::kTile5Off + i)] =
                bordered(p, bx0 - 4 + i, by0 - 2 + r, b);
      }
      std::memcpy(tile.data(), bytes.data(), bytes.size());  // little-endian words, as on the GPU
      std::string err;
      for (int ty = 0; ty < TY; ++ty)
        for (int tx = 0; tx < mu::kTX; ++tx)
          mu::median5_rows_shared<H, P>(tile.data() + mu::kTile5Off, tx, ty * H, [&](int i, u32 o) {
            for (int j = 0; j < 4; ++j) {
              const long long x = bx0 + 4 * tx + j, y = by0 + ty * H + i;
              if (x >= p.w || y >= p.h || !err.empty()) continue;
              ++seen[std::size_t(y * p.w + x)];
              const int got = int((o >> (8 * j)) & 0xffu);
              const int w = want[std::size_t(y * p.w + x)];
              if (got != w)
                err = "walk g=" + std::to_string(g) + " " + describe(b) + " size " +
                      std::to_string(p.w) + "x" + std::to_string(p.h) + " aligned16 " +
                      std::to_string(aligned16) + " at (" + std::to_string(x) + ", " +
                      std::to_string(y) + "): got " + std::to_string(got) + ", want " +
                      std::to_string(w);
            }
          });
      if (!err.empty()) return err;
    }
  for (int n : seen)
    if (n != 1) return "an output emitted " + std::to_string(n) + " times";
  // Sizes that have a tile inside the image must have copied it by chunks.
  const bool has_inside = aligned16 && p.w >= 2 * mu::kBW + 16 && p.h >= BH + TH;
  if (has_inside && inside_tiles == 0) return "no tile took the chunk copy";
  return "";
}

template <int H>
void sweep_walk(std::uint64_t salt) {
  auto rng = make_rng(salt);
  // Sizes below one tile, edge tiles only, and with inside tiles (tile rows of 160 bytes from
  // bx0 - 16: bx0 = 128 needs w >= 272; rows: by0 >= 2 and by0 - 2 + TH <= h, so the tile of
  // block (1, 1) just fits at 272 x 130 (tall) and 272 x 66 (short), and just does not one
  // pixel less).
  const std::vector<Size> sizes{{1, 1},     {13, 9},    {129, 33},  {300, 70}, {420, 200},
                                {131, 290}, {272, 130}, {271, 129}, {272, 66}, {271, 65},
                                {272, 65},  {271, 66},  {272, 129}, {271, 130}};
  for (Size s : sizes)
    for (Pattern pat : kPatterns)
      for (const Border& b : all_borders()) {
        const Plane p = make_plane(int(s.w), int(s.h), pat, rng);
        std::vector<std::uint8_t> want(std::size_t(s.w * s.h));
        for (int y = 0; y < p.h; ++y)
          for (int x = 0; x < p.w; ++x)
            want[std::size_t(y * p.w + x)] = brute_median(p, x, y, 5, b);
        PIXFLOW_TRACE("pattern " + std::to_string(int(pat)));
        for (bool aligned16 : {true, false})
          for (int g : {1, 3, 1000}) ASSERT_EQ(check_plane_walk<H>(p, b, want, aligned16, g), "");
      }
}

TEST(MedianPacked, Walk5x5MatchesBruteForceEveryLane) {
  sweep_walk<mu::kRows<5>>(0x9e55);
}

TEST(MedianPacked, Walk5x5ShortShapeMatchesBruteForceEveryLane) {
  sweep_walk<mu::kRowsShort<5>>(0x9e56);
}

// u8 x 3 at 5x5 (median_rows<5, H, 3>: the body over the row's bytes): `p` holds the row bytes
// (p.w = 3 x the pixel width); the tile as the kernel's loader defines it (byte (r, i) = row
// byte bx0 - 8 + i of row by0 - 2 + r, an edge byte's pixel through the border rule,
// pixel_of_byte, its channel kept), every output byte against a brute-force median of its
// channel's window.
std::uint8_t bordered3(const Plane& p, long long e, long long y, const Border& b) {
  long long x;
  int ch;
  cuda::u8_3x3_cn::pixel_of_byte(e, 3, x, ch);
  const long long xi = detail::border_index(x, p.w / 3, b.type);
  const long long yi = detail::border_index(y, p.h, b.type);
  if (xi < 0 || yi < 0) return detail::saturate_cast<std::uint8_t>(b.value);
  return p.at(xi * 3 + ch, yi);
}

constexpr int kCn3K = 5;  // (a namespace constant: GCC 12 crashed on a local one in the lambda)

template <int H>
std::string check_plane_cn3(const Plane& p, const Border& b) {
  constexpr int K = kCn3K, R = K / 2, TY = mu::kTY<K>, TH = mu::kTileH<K, H>;
  constexpr int TW = mu::kTileWCn<3>, M = mu::kMargin<3>;
  std::vector<u32> tile(std::size_t(TH) * mu::kTileWordsCn<3>);
  std::vector<std::uint8_t> bytes(std::size_t(TH) * TW);
  for (long long by0 = 0; by0 < p.h; by0 += mu::kBH<K, H>)
    for (long long bx0 = 0; bx0 < p.w; bx0 += mu::kBW) {
      for (int r = 0; r < TH; ++r)
        for (int i = 0; i < TW; ++i)
          bytes[std::size_t(r * TW + i)] = bordered3(p, bx0 - M + i, by0 - R + r, b);
      std::memcpy(tile.data(), bytes.data(), bytes.size());  // little-endian words, as on the GPU
      for (int ty = 0; ty < TY; ++ty)
        for (int tx = 0; tx < mu::kTX; ++tx) {
          std::string err;
          mu::median_rows<K, H, 3>(tile.data(), tx, ty * H, nullptr, 0, [&](int i, u32 o) {
            for (int j = 0; j < 4; ++j) {
              const long long e = bx0 + 4 * tx + j, y = by0 + ty * H + i;
              if (e >= p.w || y >= p.h || !err.empty()) continue;
              std::uint8_t win[kCn3K * kCn3K];
              int n = 0;
              for (int dy = -kCn3K / 2; dy <= kCn3K / 2; ++dy)
                for (int dx = -kCn3K / 2; dx <= kCn3K / 2; ++dx)
                  win[n++] = bordered3(p, e + 3 * dx, y + dy, b);
              std::nth_element(win, win + n / 2, win + n);
              const int got = int((o >> (8 * j)) & 0xffu), want = win[n / 2];
              if (got != want)
                err = "u8x3 k=5 " + describe(b) + " size " + std::to_string(p.w / 3) + "x" +
                      std::to_string(p.h) + " at byte (" + std::to_string(e) + ", " +
                      std::to_string(y) + "): got " + std::to_string(got) + ", want " +
                      std::to_string(want);
            }
          });
          if (!err.empty()) return err;
        }
    }
  return "";
}

// Both block shapes (16 and 4 rows a thread); pixel widths from 1 (every byte an edge byte) to
// several 128-byte blocks (43 pixels = 129 bytes: a block edge inside a pixel); every border,
// constants outside the u8 range too.
template <int H>
void sweep_cn3(std::uint64_t salt) {
  auto rng = make_rng(salt);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  const std::vector<Size> sizes{{1, 1}, {2, 3}, {3, 2}, {5, 7}, {43, 9}, {100, 33}, {131, 70}};
  for (Size s : sizes)
    for (Pattern pat : kPatterns)
      for (const Border& b : borders) {
        const Plane p = make_plane(int(s.w) * 3, int(s.h), pat, rng);
        PIXFLOW_TRACE("pattern " + std::to_string(int(pat)));
        ASSERT_EQ(check_plane_cn3<H>(p, b), "");
      }
}

TEST(MedianPacked, Body5x5U8x3MatchesBruteForceEveryByte) {
  sweep_cn3<mu::kRows<5>>(0x9e53);
}

TEST(MedianPacked, Body5x5U8x3ShortShapeMatchesBruteForceEveryByte) {
  sweep_cn3<mu::kRowsShort<5>>(0x9e54);
}

// Each lane's median is independent of the other lane's values: lanes that hold the two
// extremes of every window next to lanes of random values (5x5 and 7x7 windows, the networks
// composed as median_rows does: sorted runs, level-1 merges, pair_rest or for 7x7 also
// quad_core and quad_pair, pair_final).
template <int K>
void lanes_apart(std::mt19937_64& rng) {
  using N = cuda::median_net::Net<K>;
  constexpr int NL = (K - 1) / 2, M = K * K / 2;
  std::uniform_int_distribution<int> any(0, 255);
  for (int trial = 0; trial < 2000; ++trial) {
    std::uint8_t lane[2][K * K];
    for (int i = 0; i < K * K; ++i) {
      lane[0][i] = std::uint8_t(any(rng));
      lane[1][i] = (trial & 1) ? std::uint8_t(i % 2 ? 255 : 0) : std::uint8_t(any(rng));
    }
    u32 run[K][K];
    for (int r = 0; r < K; ++r) {
      for (int i = 0; i < K; ++i) run[r][i] = lane[0][r * K + i] | (u32(lane[1][r * K + i]) << 16);
      N::sort_run(run[r]);
    }
    u32 v[NL * 2 * K], q[K + 1];
    for (int t = 0; t < NL; ++t) N::merge_runs(run[1 + 2 * t], run[2 + 2 * t], v + t * 2 * K);
    N::pair_rest(v, q);
    const u32 m = N::pair_final(q, run[0]);
    if constexpr (K == 7) {  // the quads of median7_rows_shared: the same median
      u32 c[N::kQuadRanks], q4[K + 1];
      N::quad_core(v + 2 * K, c);
      N::quad_pair(c, v, q4);
      ASSERT_EQ(N::pair_final(q4, run[0]), m) << "trial " << trial;
    }
    for (int l = 0; l < 2; ++l) {
      std::uint8_t s[K * K];
      std::copy(lane[l], lane[l] + K * K, s);
      std::nth_element(s, s + M, s + K * K);
      ASSERT_EQ(int((m >> (16 * l)) & 0xffffu), int(s[M])) << "trial " << trial << " lane " << l;
    }
  }
}

TEST(MedianPacked, NetworksKeepLanesApart) {
  auto rng = make_rng(0x9e72);
  lanes_apart<5>(rng);
  lanes_apart<7>(rng);
}

// 5x5 u8 x 1's runs (median5_rows_shared): the shared 4-sort and the insertion of each word's
// fifth column sort every input, checked on all 0-1 inputs (the 0-1 principle: a network that
// sorts them sorts everything) and, beyond the principle, on every input of values 0..3 in
// either lane; the key words select (x, x+2) in the high bytes of the lanes.
TEST(MedianPacked, SharedRunsSortEveryInput) {
  for (int values : {2, 4}) {
    int n = 1;
    for (int i = 0; i < 5; ++i) n *= values;
    for (int code = 0; code < n; ++code) {
      u32 x[5];
      for (int i = 0, c = code; i < 5; ++i, c /= values)
        x[i] = u32(c % values) | u32(values - 1 - c % values) << 16;  // lane 1: the mirror
      u32 core[4] = {x[1], x[2], x[3], x[4]}, r[5];
      mu::sort4(core);
      mu::insert_run(x[0], core, r);
      for (int l = 0; l < 2; ++l) {
        int want[5];
        for (int i = 0; i < 5; ++i) want[i] = int((x[i] >> (16 * l)) & 0xffffu);
        std::sort(want, want + 5);
        for (int i = 0; i < 5; ++i)
          ASSERT_EQ(int((r[i] >> (16 * l)) & 0xffffu), want[i])
              << "values " << values << " code " << code << " lane " << l << " rank " << i;
      }
    }
  }
  u32 row[4] = {0x03020100u, 0x07060504u, 0x0b0a0908u, 0x0f0e0d0cu};  // byte i = i
  u32 k[6];
  mu::key_words5(row, 0, k);  // x0 = byte 4
  for (int e = -2; e <= 3; ++e) {
    ASSERT_EQ(int((k[e + 2] >> 8) & 0xffu), 4 + e) << "e " << e;
    ASSERT_EQ(int(k[e + 2] >> 24), 6 + e) << "e " << e;
  }
}

// 7x7 u8 x 1's runs (median7_rows_shared): the shared 6-sort and the insertion of each word's
// seventh column sort every input, on all 0-1 inputs and on every input of values 0..3 in
// either lane; the key words select (x, x+2) in the high bytes of the lanes.
TEST(MedianPacked, SharedRuns7SortEveryInput) {
  for (int values : {2, 4}) {
    int n = 1;
    for (int i = 0; i < 7; ++i) n *= values;
    for (int code = 0; code < n; ++code) {
      u32 x[7];
      for (int i = 0, c = code; i < 7; ++i, c /= values)
        x[i] = u32(c % values) | u32(values - 1 - c % values) << 16;  // lane 1: the mirror
      u32 core[6] = {x[1], x[2], x[3], x[4], x[5], x[6]}, r[7];
      mu::sort6(core);
      for (int l = 0; l < 2; ++l)
        for (int i = 0; i + 1 < 6; ++i)
          ASSERT_LE((core[i] >> (16 * l)) & 0xffffu, (core[i + 1] >> (16 * l)) & 0xffffu)
              << "sort6 values " << values << " code " << code << " lane " << l;
      mu::insert7(x[0], core, r);
      for (int l = 0; l < 2; ++l) {
        int want[7];
        for (int i = 0; i < 7; ++i) want[i] = int((x[i] >> (16 * l)) & 0xffffu);
        std::sort(want, want + 7);
        for (int i = 0; i < 7; ++i)
          ASSERT_EQ(int((r[i] >> (16 * l)) & 0xffffu), want[i])
              << "values " << values << " code " << code << " lane " << l << " rank " << i;
      }
    }
  }
  u32 row[4] = {0x03020100u, 0x07060504u, 0x0b0a0908u, 0x0f0e0d0cu};  // byte i = i
  u32 k[8];
  mu::key_words7(row, 0, k);  // x0 = byte 4
  for (int e = -3; e <= 4; ++e) {
    ASSERT_EQ(int((k[e + 3] >> 8) & 0xffu), 4 + e) << "e " << e;
    ASSERT_EQ(int(k[e + 3] >> 24), 6 + e) << "e " << e;
  }
}

// 7x7 on random planes beyond the sweep's shapes: random sizes (one to three blocks each way,
// partial ones), values over the whole range or few of them (ties across the shared columns
// and the low key bytes), random borders.
TEST(MedianPacked, Body7x7RandomPlanesMatchBruteForce) {
  auto rng = make_rng(0x9e77);
  const std::vector<Border> borders = all_borders();
  std::uniform_int_distribution<int> wd(1, 390), hd(1, 50), bd(0, int(borders.size()) - 1),
      vd(0, 2);
  for (int trial = 0; trial < 24; ++trial) {
    const int w = wd(rng), h = hd(rng), range = vd(rng) == 0 ? 2 : vd(rng) == 1 ? 5 : 256;
    std::uniform_int_distribution<int> v(0, range - 1);
    Plane p{w, h, std::vector<std::uint8_t>(std::size_t(w) * std::size_t(h))};
    for (auto& b : p.px) b = std::uint8_t(range == 256 ? v(rng) : 100 + v(rng));
    const Border& b = borders[std::size_t(bd(rng))];
    PIXFLOW_TRACE("trial " + std::to_string(trial));
    ASSERT_EQ((check_plane<7>(p, b)), "");
  }
}

// The kernel itself (where a GPU is present; the cpu backend elsewhere): images of many
// blocks (interior tiles with word loads, edge tiles through the border rule), every border;
// the large image (the interior, 32 x 17 blocks of 7x7) under two borders only, which keeps
// the reference's time in CI down.
TEST(MedianPacked, EveryBackendMatchesRefManyTiles) {
  auto rng = make_rng(0x9e73);
  for (int k : {5, 7}) {
    for (Size s : std::vector<Size>{{600, 150}, {517, 70}})
      for (const Border& b : all_borders())
        ASSERT_TRUE(backends_match_ref("median", "k=" + std::to_string(k) + " " + border_params(b),
                                       {Depth::u8, 1}, s, rng));
    for (const char* b : {"border=reflect101", "border=constant value=77"})
      ASSERT_TRUE(backends_match_ref("median", "k=" + std::to_string(k) + " " + b, {Depth::u8, 1},
                                     {4100, 1100}, rng));
  }
  // 5x5 in its tall shape (128 x 128 blocks): a grid of >= 1056 of them (launch.cuh,
  // tall_blocks_fill; 8200x2100 = 65 x 17); every size above takes the short shape.
  ASSERT_TRUE(
      backends_match_ref("median", "k=5 border=reflect101", {Depth::u8, 1}, {8200, 2100}, rng));
}

// 5x5 on u8 x 3 (the kernel over row bytes, CN = 3): blocks of 128 row bytes, so 2900x2100
// (8700 bytes: 68 x 17 >= 1056) takes the tall shape and the others the short one; every
// border, constants outside the u8 range too. 7x7 u8 x 3 takes the generic kernel.
TEST(MedianPacked, EveryBackendMatchesRefManyTilesU8x3) {
  auto rng = make_rng(0x9e75);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  for (Size s : std::vector<Size>{{600, 150}, {517, 70}, {300, 97}})
    for (const Border& b : borders)
      ASSERT_TRUE(backends_match_ref("median", "k=5 " + border_params(b), {Depth::u8, 3}, s, rng));
  ASSERT_TRUE(
      backends_match_ref("median", "k=5 border=reflect101", {Depth::u8, 3}, {2900, 2100}, rng));
  for (Size s : std::vector<Size>{{1, 1}, {2, 3}, {130, 1}, {43, 5}})
    ASSERT_TRUE(
        backends_match_ref("median", "k=5 border=constant value=-7", {Depth::u8, 3}, s, rng));
  ASSERT_TRUE(
      backends_match_ref("median", "k=7 border=reflect101", {Depth::u8, 3}, {300, 97}, rng));
}

// Aligned and unaligned sources and destinations on every backend (backends_match_ref draws
// the offsets at random; the packed kernel stores words only to 4-byte aligned destination rows
// and loads words only from 4-byte aligned sources, bytes otherwise).
TEST(MedianPacked, EveryBackendMatchesRefAlignedAndUnaligned) {
  auto rng = make_rng(0x9e74);
  const std::int64_t w = 389, h = 203;
  TestImage src = random_image(w, h, {Depth::u8, 1}, rng);
  for (int k : {5, 7})
    for (const Border& b : all_borders()) {
      Image want(w, h, {Depth::u8, 1});
      median(src, want, {k, k, b}, {Backend::ref});
      for (Backend be : test_backends())
        for (int so : {0, 1})
          for (int dof : {0, 3}) {
            PIXFLOW_TRACE(std::string(backend_name(be)) + " k=" + std::to_string(k) + " " +
                          describe(b) + " src offset " + std::to_string(so) + " dst offset " +
                          std::to_string(dof));
            const Location loc = backend_location(be);
            Image sb(w + 8, h, {Depth::u8, 1}, loc), db(w + 8, h, {Depth::u8, 1}, loc);
            ImageView sv = sb.view().roi(so, 0, w, h), dv = db.view().roi(dof, 0, w, h);
            copy(src, sv);
            median(sv, dv, {k, k, b}, {be});
            ASSERT_EQ(compare(to_host(dv), want), "");
          }
    }
}

}  // namespace
}  // namespace pixflow::test
