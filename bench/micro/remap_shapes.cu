// Micro-benchmark of remap linear (the bench's smooth maps, bench/maps.hpp; border constant 0)
// at 1920x1080 and 8192x8192, u8x3 / u8x1 / f32x1: the library's ring kernel
// (src/backends/cuda/remap_kernels.cuh, remap_ring_kernel) on the library's grid
// (remap_ring::blocks_y; before session 20: one wave at 1080p, whole waves of up to 16 rows a
// thread at 8192^2) and on grids of 1 to 16 rows a thread. Timed as pixflow-bench times ops
// (graph of N calls, median of 5 replays / N) beside the device copy of the output's bytes;
// every variant's output, poisoned before, must equal the library grid's output (which the test
// suite checks against the reference). Build and run on the GPU machine, from the repository root:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -fmad=false -I include -I . \
//     -I src -o /tmp/rm bench/micro/remap_shapes.cu && /tmp/rm [case index]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/maps.hpp"
#include "src/backends/cuda/remap_kernels.cuh"

using namespace pixflow;
using namespace pixflow::cuda;

#include "micro_lib.cuh"
#include "micro_timing.cuh"

template <class T, int CN>
int run_case(int w, int h, int N, cudaStream_t st, int& bad_variants) {
  const size_t row = (size_t)w * CN * sizeof(T), bytes = row * h;
  unsigned char *s, *d;
  float *mx, *my;
  CK(cudaMalloc(&s, bytes));
  CK(cudaMalloc(&d, bytes));
  CK(cudaMalloc(&mx, (size_t)w * h * 4));
  CK(cudaMalloc(&my, (size_t)w * h * 4));
  std::vector<unsigned char> hs(bytes), want(bytes), got(bytes);  // raw bytes of T samples
  std::vector<float> hx((size_t)w * h), hy((size_t)w * h);
  srand(7);
  if constexpr (sizeof(T) == 1) {
    for (auto& x : hs) x = (unsigned char)rand();
  } else {
    for (size_t i = 0; i < bytes / sizeof(T); ++i) {
      const T v = T(rand() % 1000) / T(4);
      std::memcpy(&hs[i * sizeof(T)], &v, sizeof(T));
    }
  }
  for (int y = 0; y < h; ++y)
    bench::smooth_map_row(y, w, h, &hx[(size_t)y * w], &hy[(size_t)y * w]);
  CK(cudaMemcpy(s, hs.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(mx, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(my, hy.data(), hy.size() * 4, cudaMemcpyHostToDevice));
  const Format f{sizeof(T) == 1 ? Depth::u8 : Depth::f32, CN}, fm{Depth::f32, 1};
  const ConstImageView sv(s, w, h, (long long)row, f, Location::cuda(0));
  const ConstImageView mxv(mx, w, h, (long long)w * 4, fm, Location::cuda(0));
  const ConstImageView myv(my, w, h, (long long)w * 4, fm, Location::cuda(0));
  const ImageView dv(d, w, h, (long long)row, f, Location::cuda(0));
  const RemapParams p{};
  const RemapArgs<T> a = remap_args<T, CN>(sv, mxv, myv, dv, p);
  constexpr int P = remap_px<T, CN>();
  const long long bx = ((w + P - 1) / P + kRemapBX - 1) / kRemapBX;
  const long long thread_rows = (h + kRemapBY - 1) / kRemapBY;
  constexpr bool kWords = sizeof(T) == 1 && CN == 3;  // the library's u8x3 linear word path
  auto kernel = remap_ring_kernel<T, CN, true, kWords>;
  printf("%dx%d %sx%d (%lld x %lld thread rows of %d)\n", w, h, sizeof(T) == 1 ? "u8" : "f32", CN,
         bx, thread_rows, kRemapBY);
  printf("  copy of the output          %.2f us\n",
         time_graph(
             st, [&] { cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice, st); }, N));
  auto run = [&](const char* name, long long gy, bool reference) {
    CK(cudaMemset(d, 0xCD, bytes));
    const dim3 grid((unsigned)bx, (unsigned)gy);
    printf("  %-16s gy=%5lld (%2lld rows a thread)  %.2f us\n", name, gy,
           (thread_rows + gy - 1) / gy,
           time_graph(
               st, [&] { kernel<<<grid, dim3(kRemapBX, kRemapBY), 0, st>>>(a); }, N));
    CK(cudaGetLastError());
    CK(cudaMemcpy((reference ? want : got).data(), d, bytes, cudaMemcpyDeviceToHost));
    if (!reference) {
      long long bad = 0;
      for (size_t i = 0; i < bytes; ++i) bad += got[i] != want[i];
      if (bad)
        printf("  %s: %lld bytes differ from the library grid's\n", name, bad), ++bad_variants;
    }
    return 0;
  };
  const long long lib = remap_ring::blocks_y(bx, h, kRemapBY, kSmCount, sizeof(T) == 1);
  run("lib", lib, true);
  for (int r : {1, 2, 4, 8, 16}) run("rows a thread", (thread_rows + r - 1) / r, false);
  run("lib again", lib, false);
  cudaFree(s);
  cudaFree(d);
  cudaFree(mx);
  cudaFree(my);
  return 0;
}

int main(int argc, char** argv) {
  const int only = argc > 1 ? atoi(argv[1]) : -1;  // one case (its index) for ncu
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  int bad_variants = 0;
  if (only < 0 || only == 0) run_case<std::uint8_t, 3>(1920, 1080, 1000, st, bad_variants);
  if (only < 0 || only == 1) run_case<std::uint8_t, 1>(1920, 1080, 1000, st, bad_variants);
  if (only < 0 || only == 2) run_case<float, 1>(1920, 1080, 1000, st, bad_variants);
  if (only < 0 || only == 3) run_case<std::uint8_t, 1>(8192, 8192, 100, st, bad_variants);
  if (only < 0 || only == 4) run_case<std::uint8_t, 3>(8192, 8192, 50, st, bad_variants);
  if (only < 0 || only == 5) run_case<float, 1>(8192, 8192, 50, st, bad_variants);
  return bad_variants ? 1 : 0;
}
