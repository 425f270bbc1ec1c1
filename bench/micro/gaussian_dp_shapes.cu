// Micro-benchmark of gaussian sigma=2 (13 x 13 taps) u8x1 (border reflect101) at 8192x8192 and
// 1920x1080, and sigma=8 (49 x 49) at 8192x8192: the library's dot-product kernel
// (src/backends/cuda/gaussian_u8_dp.cuh, gaussian_u8_dp_kernel: blocks that walk down their column
// of tiles, the next tile copied by cp.async during the vertical pass) at t tiles a block
// (gridDim.y = the tile rows / t; the library: one tile a block, gauss_dp_blocks_y; before
// session 20 3 at 8192^2 sigma=2, 8 at sigma=8, 1 at 1920x1080). Timed as pixflow-bench times ops
// (graph of N calls, median of 5 replays / N) beside the device copy; every output poisoned before
// and checked against the host after. Build and run on the GPU machine, from the repository root:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -Xcompiler -fopenmp -I include \
//     -I . -I src -o /tmp/gd bench/micro/gaussian_dp_shapes.cu && /tmp/gd [size index]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "src/backends/cuda/gaussian_u8_dp.cuh"

using namespace pixflow;
using namespace pixflow::cuda;

#include "micro_lib.cuh"
#include "micro_timing.cuh"

template <int KW, int BH>
int run_size(int w, int h, int N, double sigma, cudaStream_t st, int& bad_variants) {
  using S = GaussDpShape<1, KW>;
  std::int32_t tx[KW];
  detail::gaussian_taps_fixed(KW, sigma, detail::kGaussianBitsU8, tx);
  gauss_dp::Taps k;
  if (!gauss_dp::make_taps(tx, KW, tx, KW, 1, k)) return printf("make_taps failed\n"), 1;
  unsigned char *s, *d;
  CK(cudaMalloc(&s, (size_t)w * h));
  CK(cudaMalloc(&d, (size_t)w * h));
  std::vector<unsigned char> hs((size_t)w * h), hd(hs.size()), want(hs.size());
  std::vector<std::int32_t> hh(hs.size());
  srand(7);
  for (auto& x : hs) x = (unsigned char)rand();
#pragma omp parallel for
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      std::int32_t a = 0;
      for (int j = 0; j < KW; ++j) a += hs[(size_t)y * w + reflect101(x + j - KW / 2, w)] * tx[j];
      hh[(size_t)y * w + x] = a;
    }
#pragma omp parallel for
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      long long a = 0;
      for (int j = 0; j < KW; ++j)
        a += (long long)hh[(size_t)reflect101(y + j - KW / 2, h) * w + x] * tx[j];
      want[(size_t)y * w + x] = (unsigned char)((a + (1 << 15)) >> 16);
    }
  CK(cudaMemcpy(s, hs.data(), hs.size(), cudaMemcpyHostToDevice));
  CK(cudaMemset(d, 0xCD, hs.size()));
  const DevView<std::uint8_t> sv{s, w, w, h, 1}, dv{d, w, w, h, 1};
  const DevBorder<std::uint8_t> bd{BorderType::reflect101, 0};
  const int bx = (w + kByteTileBW - 1) / kByteTileBW, rows = (h + BH - 1) / BH;
  const std::size_t smem = gauss_dp_smem(KW, KW, 1, BH);
  auto kernel = gaussian_u8_dp_kernel<1, KW, KW, BH, S::kMinBlocks>;
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  printf("%dx%d (%d taps, BH %d, %d x %d tiles; the library's t: %lld)\n", w, h, KW, BH, bx, rows,
         (rows + gauss_dp_blocks_y(rows) - 1) / gauss_dp_blocks_y(rows));
  printf("  copy1d                  %.2f us\n",
         time_graph(
             st, [&] { cudaMemcpyAsync(d, s, (size_t)w * h, cudaMemcpyDeviceToDevice, st); }, N));
  auto run = [&](const char* name, int gy) {
    const dim3 grid(bx, gy);
    printf(
        "  %-16s gy=%5d  %.2f us\n", name, gy,
        time_graph(
            st,
            [&] { kernel<<<grid, kGaussDpThreads, smem, st>>>(sv, dv, bd, k, rows, true, true); },
            N));
    CK(cudaGetLastError());
    CK(cudaMemcpy(hd.data(), d, hd.size(), cudaMemcpyDeviceToHost));
    long long bad = 0;
    for (size_t i = 0; i < hd.size(); ++i) bad += hd[i] != want[i];
    if (bad) printf("  %s: %lld wrong pixels\n", name, bad), ++bad_variants;
    CK(cudaMemset(d, 0xCD, hd.size()));
    return 0;
  };
  run("lib", int(gauss_dp_blocks_y(rows)));
  for (int t : {1, 2, 3, 4, 8}) {
    char name[32];
    snprintf(name, sizeof name, "%d tiles a block", t);
    run(name, (rows + t - 1) / t);
  }
  run("lib again", int(gauss_dp_blocks_y(rows)));
  cudaFree(s);
  cudaFree(d);
  return 0;
}

int main(int argc, char** argv) {
  const int only = argc > 1 ? atoi(argv[1]) : -1;  // one size (its index) for ncu
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  int bad_variants = 0;
  if (only < 0 || only == 0)
    run_size<13, GaussDpShape<1, 13>::kTall>(8192, 8192, 100, 2.0, st, bad_variants);
  if (only < 0 || only == 1)
    run_size<13, GaussDpShape<1, 13>::kShort>(1920, 1080, 1000, 2.0, st, bad_variants);
  if (only < 0 || only == 2)
    run_size<49, GaussDpShape<1, 49>::kTall>(8192, 8192, 50, 8.0, st, bad_variants);
  return bad_variants ? 1 : 0;
}
