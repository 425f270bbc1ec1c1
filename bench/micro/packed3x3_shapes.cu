// Micro-benchmark of shapes for the packed u8 3x3 kernels (src/backends/cuda/u8_3x3.cuh),
// built from the library's own pieces: dilate 3x3 u8x1, border reflect101, at 8192x8192 and
// 1920x1080, (a) morph3_u8_kernel as launch_3x3 runs it today (tall: tiles; short: rows path),
// (b) the rows8 shape (morph3 / median3 / linear3_rows8_kernel), (c) the median's rows8 body
// at 4 and 8 output rows a warp (median_r8_variant, session 19: 8 rows no faster), each
// checked. Timed as
// pixflow-bench times ops (graph of N calls, median of 5 replays / N) beside the device copy; every
// output poisoned before and checked against the host after. Build and run on the GPU machine, from
// the repository root:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -I include -I . -I src \
//     -o /tmp/p3 bench/micro/packed3x3_shapes.cu && /tmp/p3
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "src/backends/cuda/u8_3x3.cuh"

using namespace pixflow;
using namespace pixflow::cuda;
using namespace pixflow::cuda::u8_3x3;

#include "micro_lib.cuh"
#include "micro_timing.cuh"

// The 3x3 median in the rows8 shape (median3_rows8_kernel's body) with kRows output rows a warp
// and kBlocks resident blocks a SM (the rule's pixel and row outside from the host).
template <int kRows, int kBlocks>
__global__ void __launch_bounds__(kTX* kR8Warps, kBlocks)
    median_r8_variant(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                      DevBorder<std::uint8_t> border, int warp_rows, Rows8Edge<1> edge) {
  constexpr int W = u8_3x3_dup::kWideCols<1>;
  const bool aligned8 = view_rows_aligned<8>(dst);
  for_each_rows8_edge<1, 1, 1, kRows>(
      src, border.value, edge, warp_rows, [&](const Rows8<kRows + 2>& w, int x, int y0) {
        unsigned lo[kRows], hi[kRows];
        median3_wide_body<kRows, 1>(
            [&](int r, unsigned(&out)[W]) {
              u8_3x3_dup::columns_wide<1>(w.left(r), w.b[r], w.c[r], w.right(r), out);
            },
            [&](int i, unsigned l, unsigned h) { lo[i] = l, hi[i] = h; });
        store_rows8<kRows, kPackedEvictFirst>(dst, x, y0, aligned8, [&](auto&& put) {
#pragma unroll
          for (int i = 0; i < kRows; ++i) put(i, lo[i], hi[i]);
        });
      });
}

int main(int argc, char** argv) {
  const int only = argc > 1 ? atoi(argv[1]) : -1;  // one size (its index) for ncu
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  int bad_variants = 0;
  const int sizes[4][3] = {
      {8192, 8192, 200}, {1920, 1080, 1000}, {3840, 2160, 500}, {2048, 1080, 1000}};
  for (int si = 0; si < 4; ++si) {
    if (only >= 0 && si != only) continue;
    const auto& sz = sizes[si];
    const int w = sz[0], h = sz[1], N = sz[2];
    const int pitch = w;
    unsigned char *s, *d;
    CK(cudaMalloc(&s, (size_t)pitch * h));
    CK(cudaMalloc(&d, (size_t)pitch * h));
    std::vector<unsigned char> hs((size_t)pitch * h), hd(hs.size()), ref(hs.size());
    srand(7);
    for (auto& x : hs) x = (unsigned char)rand();
    // References (border reflect101): dilate, median, box mean (sum / 9 rounded to nearest).
    std::vector<unsigned char> ref_med(hs.size()), ref_box(hs.size());
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        unsigned char v[9];
        int k = 0, sum = 0;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx)
            v[k++] = hs[(size_t)reflect101(y + dy, h) * pitch + reflect101(x + dx, w)];
        unsigned char m = 0;
        for (int i = 0; i < 9; ++i) m = v[i] > m ? v[i] : m, sum += v[i];
        std::sort(v, v + 9);
        ref[(size_t)y * pitch + x] = m;
        ref_med[(size_t)y * pitch + x] = v[4];
        ref_box[(size_t)y * pitch + x] = (unsigned char)((2 * sum + 9) / 18);
      }
    CK(cudaMemcpy(s, hs.data(), hs.size(), cudaMemcpyHostToDevice));
    CK(cudaMemset(d, 0xCD, hs.size()));
    const DevView<std::uint8_t> sv{s, pitch, w, h, 1}, dv{d, pitch, w, h, 1};
    const DevBorder<std::uint8_t> bd{BorderType::reflect101, 0};
    const std::vector<unsigned char>* want = &ref;
    auto check = [&](const char* name) {
      cudaMemcpy(hd.data(), d, hd.size(), cudaMemcpyDeviceToHost);
      long long bad = 0;
      for (size_t i = 0; i < hd.size(); ++i) bad += hd[i] != (*want)[i];
      if (bad) printf("  %s: %lld wrong pixels\n", name, bad), ++bad_variants;
      cudaMemset(d, 0xCD, hd.size());
    };
    printf("%dx%d\n", w, h);
    printf("  copy1d                   %.2f us\n",
           time_graph(
               st, [&] { cudaMemcpyAsync(d, s, (size_t)w * h, cudaMemcpyDeviceToDevice, st); }, N));
    auto run = [&](const char* name, auto kern, int R) {
      const int bh = R * kTY;
      const dim3 grid = grid_2d(w, h, kBW, bh);
      const int rob = blocks_y(h, bh);
      printf("  %-24s grid %4ux%-4u %.2f us\n", name, grid.x, grid.y,
             time_graph(
                 st, [&] { kern<<<grid, dim3(kTX, kTY), 0, st>>>(sv, dv, bd, true, rob); }, N));
      check(name);
    };
    // (Session 18's first run of this file tried the short shape's rows path at taller R:
    // bench/NOTES.md.)
    run("today tall (tile R=8)", morph3_u8_kernel<true, kRowsTall>, kRowsTall);
    run("today short (rows R=2)", morph3_u8_kernel<true, kRowsShort>, kRowsShort);
    auto run8 = [&](const char* name, auto kern, auto... extra) {
      const Rows8Grid g = rows8_grid(w, h, kR8Rows);
      const dim3 grid = g.grid;
      const int warp_rows = g.warp_rows;
      printf("  %-24s grid %4ux%-4u %.2f us\n", name, grid.x, grid.y,
             time_graph(
                 st,
                 [&] {
                   kern<<<grid, dim3(kTX, kR8Warps), 0, st>>>(sv, dv, bd, true, warp_rows,
                                                              extra...);
                 },
                 N));
      check(name);
    };
    run8("dilate rows8", morph3_rows8_kernel<true, 1>);
    want = &ref_med;
    run("median today wide (R=16)", median3_wide_u8_kernel<kMedTallR>, kMedTallR);
    run("median today short", median3_u8_kernel<kRowsShort>, kRowsShort);
    run8("median rows8", median3_rows8_kernel<1>);
    {
      const Rows8Edge<1> edge = rows8_edge<1>(ConstImageView(s, w, h, pitch, Format{Depth::u8, 1}),
                                              Border::reflect101(), 1);
      auto run8r = [&](const char* name, auto kern, int rows) {
        const Rows8Grid g = rows8_grid(w, h, rows);
        const dim3 grid = g.grid;
        const int warp_rows = g.warp_rows;
        printf("  %-24s grid %4ux%-4u %.2f us\n", name, grid.x, grid.y,
               time_graph(
                   st,
                   [&] { kern<<<grid, dim3(kTX, kR8Warps), 0, st>>>(sv, dv, bd, warp_rows, edge); },
                   N));
        check(name);
      };
      run8r("median r8 4 rows, 8", median_r8_variant<4, 8>, 4);
      run8r("median r8 8 rows, 5", median_r8_variant<8, 5>, 8);
      run8r("median r8 8 rows, 6", median_r8_variant<8, 6>, 8);
      run8r("median r8 8 rows, 8", median_r8_variant<8, 8>, 8);
    }
    want = &ref_box;
    run8("box rows8", linear3_rows8_kernel<1>, Linear3{1, 1, 1, 1, 0});
    cudaFree(s);
    cudaFree(d);
  }
  return bad_variants ? 1 : 0;
}
