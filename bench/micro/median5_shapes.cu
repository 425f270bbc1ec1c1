// Micro-benchmark of median 5x5 u8x1 (border reflect101) at 8192x8192 and 1920x1080: the
// library's kernel (src/backends/cuda/median5_u8.cuh, median5_u8_kernel: blocks that walk the
// tiles, the next tile copied by cp.async while the current one sorts) on grids of g blocks:
// one wave (kSmCount x the blocks a SM, what the library launches), two waves, and one block
// a tile (no tile copied ahead). Timed as pixflow-bench times ops (graph of N calls, median of
// 5 replays / N) beside the device copy; every output poisoned before and checked against the
// host after. Build and run on the GPU machine, from the repository root:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -Xcompiler -fopenmp -I include \
//     -I . -I src -o /tmp/m5 bench/micro/median5_shapes.cu && /tmp/m5 [size index]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "src/backends/cuda/median5_u8.cuh"

using namespace pixflow;
using namespace pixflow::cuda;
using namespace pixflow::cuda::median_u8;

#include "micro_lib.cuh"
#include "micro_timing.cuh"

template <int H>
int run_size(int w, int h, int N, cudaStream_t st, int& bad_variants) {
  unsigned char *s, *d;
  CK(cudaMalloc(&s, (size_t)w * h));
  CK(cudaMalloc(&d, (size_t)w * h));
  std::vector<unsigned char> hs((size_t)w * h), hd(hs.size()), want(hs.size());
  srand(7);
  for (auto& x : hs) x = (unsigned char)rand();
#pragma omp parallel for
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      unsigned char v[25];
      int n = 0;
      for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx)
          v[n++] = hs[(size_t)reflect101(y + dy, h) * w + reflect101(x + dx, w)];
      std::nth_element(v, v + 12, v + 25);
      want[(size_t)y * w + x] = v[12];
    }
  CK(cudaMemcpy(s, hs.data(), hs.size(), cudaMemcpyHostToDevice));
  CK(cudaMemset(d, 0xCD, hs.size()));
  const DevView<std::uint8_t> sv{s, w, w, h, 1}, dv{d, w, w, h, 1};
  const DevBorder<std::uint8_t> bd{BorderType::reflect101, 0};
  const int bx = (w + kBW - 1) / kBW, tiles = bx * ((h + kBH<5, H> - 1) / kBH<5, H>);
  constexpr int kPerSm = kMinBlocksFor<5, H>;
  printf("%dx%d (H %d, %d tiles, %d blocks a SM)\n", w, h, H, tiles, kPerSm);
  printf("  copy1d                        %.2f us\n",
         time_graph(
             st, [&] { cudaMemcpyAsync(d, s, (size_t)w * h, cudaMemcpyDeviceToDevice, st); }, N));
  auto run = [&](const char* name, int g) {
    g = std::min(g, tiles);
    printf("  %-22s g=%5d  %.2f us\n", name, g,
           time_graph(
               st,
               [&] {
                 median5_u8_kernel<H>
                     <<<g, dim3(kTX, kTY<5>), 0, st>>>(sv, dv, bd, true, true, true, bx, tiles);
               },
               N));
    CK(cudaGetLastError());
    CK(cudaMemcpy(hd.data(), d, hd.size(), cudaMemcpyDeviceToHost));
    long long bad = 0;
    for (size_t i = 0; i < hd.size(); ++i) bad += hd[i] != want[i];
    if (bad) printf("  %s: %lld wrong pixels\n", name, bad), ++bad_variants;
    CK(cudaMemset(d, 0xCD, hd.size()));
    return 0;
  };
  const int wave = int(kSmCount) * kPerSm;
  run("one wave (lib)", wave);
  run("two waves", 2 * wave);
  run("four waves", 4 * wave);
  run("one block a tile", tiles);
  run("one wave (lib) again", wave);
  cudaFree(s);
  cudaFree(d);
  return 0;
}

int main(int argc, char** argv) {
  const int only = argc > 1 ? atoi(argv[1]) : -1;  // one size (its index) for ncu
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  int bad_variants = 0;
  if (only < 0 || only == 0) run_size<kRows<5>>(8192, 8192, 100, st, bad_variants);
  if (only < 0 || only == 1) run_size<kRowsShort<5>>(1920, 1080, 1000, st, bad_variants);
  if (only < 0 || only == 2) run_size<2>(1920, 1080, 1000, st, bad_variants);  // 2 rows a thread
  return bad_variants ? 1 : 0;
}
