// Micro-benchmark of dilate 5x5 u8x1 (border reflect101) in the rows8 shape at 8192x8192 and
// 1920x1080: the library's kernel (src/backends/cuda/morphk_rows8.cuh, morphk_rows8_kernel) at
// kRows output rows a warp and kBlocks resident blocks a SM; the library runs <5, 4, 8> and,
// where its grid fills the GPU, <5, 8, 6>. Timed as pixflow-bench times ops (graph of N calls,
// median of 5 replays / N) beside the device copy; every output poisoned before and checked
// against the host after. Build and run on the GPU machine, from the repository root:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -I include -I . -I src \
//     -o /tmp/mk bench/micro/morphk_shapes.cu && /tmp/mk [size index]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "src/backends/cuda/morphk_rows8.cuh"

using namespace pixflow;
using namespace pixflow::cuda;
using namespace pixflow::cuda::u8_3x3;

#include "micro_lib.cuh"
#include "micro_timing.cuh"

int main(int argc, char** argv) {
  const int only = argc > 1 ? atoi(argv[1]) : -1;  // one size (its index) for ncu
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  int bad_variants = 0;
  const int sizes[2][3] = {{8192, 8192, 200}, {1920, 1080, 1000}};
  for (int si = 0; si < 2; ++si) {
    if (only >= 0 && si != only) continue;
    const int w = sizes[si][0], h = sizes[si][1], N = sizes[si][2];
    unsigned char *s, *d;
    CK(cudaMalloc(&s, (size_t)w * h));
    CK(cudaMalloc(&d, (size_t)w * h));
    std::vector<unsigned char> hs((size_t)w * h), hd(hs.size()), want(hs.size()), rowmax(hs.size());
    srand(7);
    for (auto& x : hs) x = (unsigned char)rand();
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        int m = 0;
        for (int k = -2; k <= 2; ++k)
          m = std::max<int>(m, hs[(size_t)y * w + reflect101(x + k, w)]);
        rowmax[(size_t)y * w + x] = (unsigned char)m;
      }
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        int m = 0;
        for (int k = -2; k <= 2; ++k)
          m = std::max<int>(m, rowmax[(size_t)reflect101(y + k, h) * w + x]);
        want[(size_t)y * w + x] = (unsigned char)m;
      }
    CK(cudaMemcpy(s, hs.data(), hs.size(), cudaMemcpyHostToDevice));
    CK(cudaMemset(d, 0xCD, hs.size()));
    const DevView<std::uint8_t> sv{s, w, w, h, 1}, dv{d, w, w, h, 1};
    const DevBorder<std::uint8_t> bd{BorderType::reflect101, 0};
    const ConstImageView host_view(s, w, h, w, Format{Depth::u8, 1});
    const Rows8Edge<2> edge = rows8_edge<2>(host_view, Border::reflect101(), 1);
    printf("%dx%d\n", w, h);
    printf("  copy1d                  %.2f us\n",
           time_graph(
               st, [&] { cudaMemcpyAsync(d, s, (size_t)w * h, cudaMemcpyDeviceToDevice, st); }, N));
    auto run = [&](const char* name, auto kern, int rows) {
      const Rows8Grid g = rows8_grid(w, h, rows);
      const dim3 grid = g.grid;
      const int warp_rows = g.warp_rows;
      printf(
          "  %-22s  %.2f us\n", name,
          time_graph(
              st, [&] { kern<<<grid, dim3(kTX, kR8Warps), 0, st>>>(sv, dv, bd, warp_rows, edge); },
              N));
      cudaMemcpy(hd.data(), d, hd.size(), cudaMemcpyDeviceToHost);
      long long bad = 0;
      for (size_t i = 0; i < hd.size(); ++i) bad += hd[i] != want[i];
      if (bad) printf("  %s: %lld wrong pixels\n", name, bad), ++bad_variants;
      cudaMemset(d, 0xCD, hd.size());
    };
    run("rows 4, 8 blocks (lib)", morphk_r8::morphk_rows8_kernel<true, 5, 4, 8>, 4);
    run("rows 4, 6 blocks", morphk_r8::morphk_rows8_kernel<true, 5, 4, 6>, 4);
    run("rows 4, 10 blocks", morphk_r8::morphk_rows8_kernel<true, 5, 4, 10>, 4);
    run("rows 2, 12 blocks", morphk_r8::morphk_rows8_kernel<true, 5, 2, 12>, 2);
    run("rows 8, 5 blocks", morphk_r8::morphk_rows8_kernel<true, 5, 8, 5>, 8);
    run("rows 8, 6 blocks", morphk_r8::morphk_rows8_kernel<true, 5, 8, 6>, 8);
    cudaFree(s);
    cudaFree(d);
  }
  return bad_variants ? 1 : 0;
}
