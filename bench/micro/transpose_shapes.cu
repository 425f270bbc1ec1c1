// Micro-benchmark of transpose u8x1 (tight, 4-byte aligned rows) at 1920x1080 (a partial last tile
// row of 56 rows), 8192x8192 (whole tiles) and 1000x1077 (partial tiles both ways, a partial last
// output word): the library's kernel (src/backends/cuda/transpose_u8.cuh, transpose_u8_kernel) on
// its grid. Timed as pixflow-bench times ops (graph of N calls, median of 5 replays / N) beside
// the device copy; every output poisoned before and checked against the host after. Build and
// run on the GPU machine, from the repository root:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -I include -I . -I src \
//     -o /tmp/tr bench/micro/transpose_shapes.cu && /tmp/tr
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/transpose_u8.cuh"

using namespace pixflow;
using namespace pixflow::cuda;

#include "micro_lib.cuh"
#include "micro_timing.cuh"

int main() {
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  int bad_variants = 0;
  const int sizes[3][3] = {{1920, 1080, 1000}, {8192, 8192, 200}, {1000, 1077, 1000}};
  for (const auto& sz : sizes) {
    const int w = sz[0], h = sz[1], N = sz[2];
    const int dstride = (h + 3) / 4 * 4;  // the output's rows 4-byte aligned
    unsigned char *s, *d;
    CK(cudaMalloc(&s, (size_t)w * h));
    CK(cudaMalloc(&d, (size_t)dstride * w));
    std::vector<unsigned char> hs((size_t)w * h), hd((size_t)dstride * w);
    srand(7);
    for (auto& x : hs) x = (unsigned char)rand();
    CK(cudaMemcpy(s, hs.data(), hs.size(), cudaMemcpyHostToDevice));
    CK(cudaMemset(d, 0xCD, hd.size()));
    constexpr int T8 = kTransposeU8Tile, TH = kTransposeU8Threads;
    const dim3 grid = grid_2d(w, h, T8, T8);
    printf("%dx%d\n  copy1d   %.2f us\n", w, h,
           time_graph(
               st, [&] { cudaMemcpyAsync(d, s, (size_t)w * h, cudaMemcpyDeviceToDevice, st); }, N));
    CK(cudaMemset(d, 0xCD, hd.size()));
    printf("  library  %.2f us\n", time_graph(
                                       st,
                                       [&] {
                                         transpose_u8_kernel<U8Tiles::transpose>
                                             <<<grid, dim3(TH, TH), 0, st>>>(s, w, d, dstride, w, h,
                                                                             blocks_y(h, T8));
                                       },
                                       N));
    CK(cudaGetLastError());
    CK(cudaMemcpy(hd.data(), d, hd.size(), cudaMemcpyDeviceToHost));
    long long bad = 0;
    for (int x = 0; x < w; ++x)
      for (int y = 0; y < h; ++y) bad += hd[(size_t)x * dstride + y] != hs[(size_t)y * w + x];
    if (bad) printf("  %lld wrong bytes\n", bad), ++bad_variants;
    cudaFree(s);
    cudaFree(d);
  }
  return bad_variants ? 1 : 0;
}
