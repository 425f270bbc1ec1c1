// Micro-benchmark of box u8x1 (normalised, border reflect101) at 9x9 and 31x31, 8192x8192 and
// 2100x8200: the library's warp-strip kernel (src/backends/cuda/box_warp_u8.cuh,
// box_warp_u8_kernel) on the library's plan (box_warp::plan: the fewest rows a segment that fill
// every SM's blocks in one wave) and on shorter segments (several waves; each segment first sums
// kh rows). Timed as pixflow-bench times ops (graph of N calls, median of 5 replays / N) beside
// the device copy; every output poisoned before and checked against the host after. Build and
// run on the GPU machine, from the repository root:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -Xcompiler -fopenmp -I include \
//     -I . -I src -o /tmp/bw bench/micro/box_warp_shapes.cu && /tmp/bw [size index]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "src/backends/cuda/box_warp_u8.cuh"

using namespace pixflow;
using namespace pixflow::cuda;

#include "micro_lib.cuh"
#include "micro_timing.cuh"

template <int KW>
int run_k(int w, int h, int pitch, int N, unsigned char* s, unsigned char* d,
          const std::vector<unsigned char>& hs, cudaStream_t st, int& bad_variants) {
  constexpr int a = KW / 2, n = KW * KW;
  std::vector<unsigned char> hd((size_t)pitch * h), want((size_t)w * h);
  std::vector<int> colsum((size_t)w * h);
#pragma omp parallel for
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int c = 0;
      for (int j = -a; j <= a; ++j) c += hs[(size_t)reflect101(y + j, h) * pitch + x];
      colsum[(size_t)y * w + x] = c;
    }
#pragma omp parallel for
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      long long S = 0;
      for (int j = -a; j <= a; ++j) S += colsum[(size_t)y * w + reflect101(x + j, w)];
      want[(size_t)y * w + x] = (unsigned char)((2 * S + n) / (2 * n));
    }
  const bw::Img si{s, pitch, w, h}, di{d, pitch, w, h};
  auto run = [&](const char* name, bw::Plan pl) {
    const bw::Params k = bw::params_of(KW, KW, Border::reflect101(), pl);
    const dim3 grid(unsigned((pl.strips + bw::kWarps - 1) / bw::kWarps),
                    unsigned(pl.segs < 65535 ? pl.segs : 65535));
    printf("  box %2dx%-2d %-14s seg %4d x %5lld  %.2f us\n", KW, KW, name, pl.seg_rows, pl.segs,
           time_graph(
               st, [&] { box_warp_u8_kernel<KW, false><<<grid, bw::kThreads, 0, st>>>(si, di, k); },
               N));
    CK(cudaGetLastError());
    CK(cudaMemcpy(hd.data(), d, hd.size(), cudaMemcpyDeviceToHost));
    long long bad = 0;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) bad += hd[(size_t)y * pitch + x] != want[(size_t)y * w + x];
    if (bad) printf("  box %d %s: %lld wrong pixels\n", KW, name, bad), ++bad_variants;
    CK(cudaMemset(d, 0xCD, hd.size()));
    return 0;
  };
  const bw::Plan lib = bw::plan(w, h, KW, kSmCount, bw::min_blocks(KW, false));
  run("lib", lib);
  for (int rows : {48, 32, 16, 8}) {
    bw::Plan pl = lib;
    pl.seg_rows = rows;
    pl.segs = (h + rows - 1) / rows;
    run("shorter", pl);
  }
  run("lib again", lib);
  return 0;
}

int main(int argc, char** argv) {
  const int only = argc > 1 ? atoi(argv[1]) : -1;  // one size (its index) for ncu
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  int bad_variants = 0;
  const int sizes[2][3] = {{8192, 8192, 200}, {2100, 8200, 400}};
  for (int si = 0; si < 2; ++si) {
    if (only >= 0 && si != only) continue;
    const int w = sizes[si][0], h = sizes[si][1], N = sizes[si][2];
    const int pitch = (w + 15) / 16 * 16;
    unsigned char *s, *d;
    CK(cudaMalloc(&s, (size_t)pitch * h));
    CK(cudaMalloc(&d, (size_t)pitch * h));
    std::vector<unsigned char> hs((size_t)pitch * h);
    srand(7);
    for (auto& x : hs) x = (unsigned char)rand();
    CK(cudaMemcpy(s, hs.data(), hs.size(), cudaMemcpyHostToDevice));
    CK(cudaMemset(d, 0xCD, hs.size()));
    printf("%dx%d (pitch %d)\n", w, h, pitch);
    printf("  copy1d                                %.2f us\n",
           time_graph(
               st, [&] { cudaMemcpyAsync(d, s, (size_t)w * h, cudaMemcpyDeviceToDevice, st); }, N));
    run_k<9>(w, h, pitch, N, s, d, hs, st, bad_variants);
    run_k<31>(w, h, pitch, N, s, d, hs, st, bad_variants);
    cudaFree(s);
    cudaFree(d);
  }
  return bad_variants ? 1 : 0;
}
