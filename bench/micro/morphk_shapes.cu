// Micro-benchmark of dilate 5x5 u8x1 (border reflect101) in the rows8 shape at 8192x8192 and
// 1920x1080: morphology.cu's morphk_rows8_kernel body (morph_k::hrow on each window row, vpair
// for each pair of output rows, the rule's pixels outside from the host: u8_3x3::rows8_edge)
// built here from the same pieces with kRows output rows a warp and kBlocks resident blocks a
// SM; <5, 4, 8> is the library's kernel. Timed as pixflow-bench times ops (graph of N calls,
// median of 5 replays / N) beside the device copy; every output poisoned before and checked
// against the host after. Build and run on the GPU machine, from the repository root:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -I include -I . -I src \
//     -o /tmp/mk bench/micro/morphk_shapes.cu && /tmp/mk [size index]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "src/backends/cuda/morph_k_u8_packed.hpp"
#include "src/backends/cuda/u8_3x3.cuh"

using namespace pixflow;
using namespace pixflow::cuda;
using namespace pixflow::cuda::u8_3x3;

#include "micro_timing.cuh"

// u8_3x3.cuh's launchers (not called here) report launch errors through the library's
// device.cu; this file links without the library.
bool pixflow::cuda::debug_sync() {
  return false;
}
[[noreturn]] void pixflow::cuda::throw_cuda_error(cudaError_t err, const char* what, const char*,
                                                  int) {
  printf("%s: %s\n", what, cudaGetErrorString(err));
  exit(1);
}

template <int K, int kRows, int kBlocks>
__global__ void __launch_bounds__(kTX* kR8Warps, kBlocks)
    morphk_variant(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                   DevBorder<std::uint8_t> border, int warp_rows, Rows8Edge<K / 2> edge) {
  const bool aligned8 = view_rows_aligned<8>(dst);
  for_each_rows8_edge<1, K / 2, K / 2, kRows>(
      src, border.value, edge, warp_rows, [&](const Rows8<kRows + K - 1>& w, int x, int y0) {
        unsigned hw[kRows + K - 1][4];
#pragma unroll
        for (int r = 0; r < kRows + K - 1; ++r)
          morph_k::hrow<K, true>(w.left(r), w.b[r], w.c[r], w.right(r), hw[r]);
        unsigned lo[kRows], hi[kRows];
#pragma unroll
        for (int i = 0; i < kRows; i += 2) {
          unsigned o0[4], o1[4];
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            unsigned col[K + 1];
#pragma unroll
            for (int t = 0; t <= K; ++t) col[t] = hw[i + t][j];
            morph_k::vpair<K, true>(col, o0[j], o1[j]);
          }
          lo[i] = morph_k::pack(o0[0], o0[1]), hi[i] = morph_k::pack(o0[2], o0[3]);
          lo[i + 1] = morph_k::pack(o1[0], o1[1]), hi[i + 1] = morph_k::pack(o1[2], o1[3]);
        }
        store_rows8<kRows, kPackedEvictFirst>(dst, x, y0, aligned8, [&](auto&& put) {
#pragma unroll
          for (int i = 0; i < kRows; ++i) put(i, lo[i], hi[i]);
        });
      });
}

static int reflect101(int i, int n) {
  if (n == 1) return 0;
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

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
      const int warp_rows = blocks_y(h, rows);
      const dim3 grid((w + kR8BW - 1) / kR8BW, (warp_rows + kR8Warps - 1) / kR8Warps);
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
    run("rows 4, 8 blocks (lib)", morphk_variant<5, 4, 8>, 4);
    run("rows 4, 6 blocks", morphk_variant<5, 4, 6>, 4);
    run("rows 4, 10 blocks", morphk_variant<5, 4, 10>, 4);
    run("rows 2, 12 blocks", morphk_variant<5, 2, 12>, 2);
    run("rows 8, 5 blocks", morphk_variant<5, 8, 5>, 8);
    run("rows 8, 6 blocks", morphk_variant<5, 8, 6>, 8);
    cudaFree(s);
    cudaFree(d);
  }
  return bad_variants ? 1 : 0;
}
