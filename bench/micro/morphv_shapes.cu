// Micro-benchmark of dilate 15x15 u8x1 (border reflect101) at 8192x8192 and 2100x8200: the
// library's kernel (src/backends/cuda/morphv_u8.cuh, morphv_u8_kernel: one 256 x 64 tile a
// block, the chunked tiles copied by cp.async) on the library's grid and on grids of fewer
// block rows, whose blocks walk down their column (2 and 4 tiles a block: the kernel's by
// loop). Timed as pixflow-bench times ops (graph of N calls, median of 5 replays / N) beside
// the device copy; every output poisoned before and checked against the host after. Measured in
// session 20 (H100; bench/NOTES.md): 8192^2 71.8 us one tile a block (the tile through
// registers: 86), 78.8 on a wave of 660 blocks walking the tiles with the next tile's copy in
// flight (a variant not kept).
// Build and run on the GPU machine, from the repository root:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -I include -I . -I src \
//     -o /tmp/mv bench/micro/morphv_shapes.cu && /tmp/mv [size index]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "src/backends/cuda/common/separable.cuh"
#include "src/backends/cuda/morphv_u8.cuh"

using namespace pixflow;
using namespace pixflow::cuda;

#include "micro_lib.cuh"
#include "micro_timing.cuh"

int main(int argc, char** argv) {
  const int only = argc > 1 ? atoi(argv[1]) : -1;  // one size (its index) for ncu
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  int bad_variants = 0;
  const int sizes[2][3] = {{8192, 8192, 200}, {2100, 8200, 400}};
  for (int si = 0; si < 2; ++si) {
    if (only >= 0 && si != only) continue;
    const int w = sizes[si][0], h = sizes[si][1], N = sizes[si][2];
    const int pitch = (w + 15) / 16 * 16;  // 16-byte aligned rows: the chunked tiles
    unsigned char *s, *d;
    CK(cudaMalloc(&s, (size_t)pitch * h));
    CK(cudaMalloc(&d, (size_t)pitch * h));
    std::vector<unsigned char> hs((size_t)pitch * h), hd(hs.size()), want((size_t)w * h),
        rowmax((size_t)w * h);
    srand(7);
    for (auto& x : hs) x = (unsigned char)rand();
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        int m = 0;
        for (int k = -7; k <= 7; ++k)
          m = std::max<int>(m, hs[(size_t)y * pitch + reflect101(x + k, w)]);
        rowmax[(size_t)y * w + x] = (unsigned char)m;
      }
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        int m = 0;
        for (int k = -7; k <= 7; ++k)
          m = std::max<int>(m, rowmax[(size_t)reflect101(y + k, h) * w + x]);
        want[(size_t)y * w + x] = (unsigned char)m;
      }
    CK(cudaMemcpy(s, hs.data(), hs.size(), cudaMemcpyHostToDevice));
    CK(cudaMemset(d, 0xCD, hs.size()));
    const DevView<std::uint8_t> sv{s, pitch, w, h, 1}, dv{d, pitch, w, h, 1};
    const DevBorder<std::uint8_t> bd{BorderType::reflect101, 0};
    const int bx = (w + kMkBW - 1) / kMkBW, rows = (h + kMvBH - 1) / kMvBH;
    printf("%dx%d (pitch %d, %d x %d tiles)\n", w, h, pitch, bx, rows);
    printf("  copy1d                         %.2f us\n",
           time_graph(
               st, [&] { cudaMemcpyAsync(d, s, (size_t)w * h, cudaMemcpyDeviceToDevice, st); }, N));
    auto run = [&](const char* name, int gy) {
      const dim3 grid(bx, gy);
      printf("  %-22s gy=%5d  %.2f us\n", name, gy,
             time_graph(
                 st,
                 [&] {
                   morphv_u8_kernel<true, 15>
                       <<<grid, dim3(kMorphKTX, kMorphKTY), 0, st>>>(sv, dv, bd, true, true, rows);
                 },
                 N));
      CK(cudaGetLastError());
      CK(cudaMemcpy(hd.data(), d, hd.size(), cudaMemcpyDeviceToHost));
      long long bad = 0;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) bad += hd[(size_t)y * pitch + x] != want[(size_t)y * w + x];
      if (bad) printf("  %s: %lld wrong pixels\n", name, bad), ++bad_variants;
      CK(cudaMemset(d, 0xCD, hd.size()));
      return 0;
    };
    run("one tile a block (lib)", rows);
    run("2 tiles a block", (rows + 1) / 2);
    run("4 tiles a block", (rows + 3) / 4);
    run("one tile a block again", rows);
    cudaFree(s);
    cudaFree(d);
  }
  return bad_variants ? 1 : 0;
}
