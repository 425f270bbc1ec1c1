// Micro-benchmark of the packed 3x3 composites u8x1 (src/backends/cuda/comp3_u8.cuh): open,
// close, tophat, blackhat, border reflect101, at 8192x8192 and 1920x1080, in (a) the tall / short
// tile kernels (morph3_comp_u8_kernel), (b) the rows8 kernel (morph3_comp_rows8_kernel<K, kRows,
// kBlocks>) at 4 and 8 output rows a warp and several resident-block bounds (the library runs
// <K, 4, 6> and, at 8192^2, <K, 8, kComp3R8TallBlocks<K>>). Session 19
// also tried here one first pass over a lane's 8 outputs instead of two 4-byte groups, and the
// between pairs as two IMADs (FMA pipe) or a funnel shift instead of a PRMT: none was faster
// (bench/NOTES.md, session 19). Timed as pixflow-bench times ops (graph of N calls, median of 5
// replays / N) beside the device copy; every output poisoned before and checked against the host
// (two reference passes) after. Build and run on the GPU machine, from the repository root:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -I include -I . -I src \
//     -o /tmp/c3 bench/micro/comp3_shapes.cu && /tmp/c3 [size index]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "src/backends/cuda/comp3_u8.cuh"

using namespace pixflow;
using namespace pixflow::cuda;
using namespace pixflow::cuda::u8_3x3;

#include "micro_lib.cuh"
#include "micro_timing.cuh"

static std::vector<unsigned char> pass3(const std::vector<unsigned char>& in, int w, int h,
                                        bool is_max) {
  std::vector<unsigned char> out(in.size());
  for (int y = 0; y < h; ++y) {
    const unsigned char* r[3];
    for (int k = 0; k < 3; ++k) r[k] = &in[(size_t)reflect101(y + k - 1, h) * w];
    for (int x = 0; x < w; ++x) {
      const int xs[3] = {reflect101(x - 1, w), x, reflect101(x + 1, w)};
      int acc = is_max ? 0 : 255;
      for (int k = 0; k < 3; ++k)
        for (int j = 0; j < 3; ++j)
          acc = is_max ? std::max<int>(acc, r[k][xs[j]]) : std::min<int>(acc, r[k][xs[j]]);
      out[(size_t)y * w + x] = (unsigned char)acc;
    }
  }
  return out;
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
    std::vector<unsigned char> hs((size_t)w * h), hd(hs.size());
    srand(7);
    for (auto& x : hs) x = (unsigned char)rand();
    const auto ero = pass3(hs, w, h, false), dil = pass3(hs, w, h, true);
    std::vector<unsigned char> want[4];
    want[comp3_u8::kOpen] = pass3(ero, w, h, true);
    want[comp3_u8::kClose] = pass3(dil, w, h, false);
    want[comp3_u8::kTophat] = hs;
    want[comp3_u8::kBlackhat] = hs;
    for (size_t i = 0; i < hs.size(); ++i) {
      want[comp3_u8::kTophat][i] = (unsigned char)(hs[i] - want[comp3_u8::kOpen][i]);
      want[comp3_u8::kBlackhat][i] = (unsigned char)(want[comp3_u8::kClose][i] - hs[i]);
    }
    CK(cudaMemcpy(s, hs.data(), hs.size(), cudaMemcpyHostToDevice));
    CK(cudaMemset(d, 0xCD, hs.size()));
    const DevView<std::uint8_t> sv{s, w, w, h, 1}, dv{d, w, w, h, 1};
    const DevBorder<std::uint8_t> bd{BorderType::reflect101, 0};
    auto check = [&](const char* name, int k) {
      cudaMemcpy(hd.data(), d, hd.size(), cudaMemcpyDeviceToHost);
      long long bad = 0;
      for (size_t i = 0; i < hd.size(); ++i) bad += hd[i] != want[k][i];
      if (bad) printf("  %s: %lld wrong pixels\n", name, bad), ++bad_variants;
      cudaMemset(d, 0xCD, hd.size());
    };
    printf("%dx%d\n", w, h);
    printf("  copy1d                          %.2f us\n",
           time_graph(
               st, [&] { cudaMemcpyAsync(d, s, (size_t)w * h, cudaMemcpyDeviceToDevice, st); }, N));
    const bool tall = tall_blocks_fill((w + kBW - 1) / kBW, h, kBH<kRowsTall>);
    auto run_tile = [&](const char* name, int k, auto kern, int R) {
      const int bh = kBH<kRowsTall> / kRowsTall * R;
      const dim3 grid = grid_2d(w, h, kBW, bh);
      printf(
          "  %-9s %-22s %.2f us\n", name, tall ? "tiles tall" : "tiles short",
          time_graph(
              st, [&] { kern<<<grid, dim3(kTX, kTY), 0, st>>>(sv, dv, bd, true, blocks_y(h, bh)); },
              N));
      check(name, k);
    };
    const Rows8Edge<1> edge =
        rows8_edge<1>(ConstImageView(s, w, h, w, Format{Depth::u8, 1}), Border::reflect101(), 1);
    auto run8e = [&](const char* name, const char* what, int k, auto kern, int rows) {
      const Rows8Grid g = rows8_grid(w, h, rows);
      const dim3 grid = g.grid;
      const int warp_rows = g.warp_rows;
      printf(
          "  %-9s %-22s %.2f us\n", name, what,
          time_graph(
              st, [&] { kern<<<grid, dim3(kTX, kR8Warps), 0, st>>>(sv, dv, bd, warp_rows, edge); },
              N));
      check(name, k);
    };
    auto family = [&](const char* name, auto kc) {
      constexpr int K = decltype(kc)::value;
      if (tall)
        run_tile(name, K, comp3::morph3_comp_u8_kernel<K, kRowsTall>, kRowsTall);
      else
        run_tile(name, K, comp3::morph3_comp_u8_kernel<K, kRowsShort>, kRowsShort);
      run8e(name, "rows8 4 rows, 6 blocks", K, comp3::morph3_comp_rows8_kernel<K, 4, 6>, 4);
      run8e(name, "rows8 4 rows, 7 blocks", K, comp3::morph3_comp_rows8_kernel<K, 4, 7>, 4);
      run8e(name, "rows8 8 rows, 4 blocks", K, comp3::morph3_comp_rows8_kernel<K, 8, 4>, 8);
      run8e(name, "rows8 8 rows, 5 blocks", K, comp3::morph3_comp_rows8_kernel<K, 8, 5>, 8);
      run8e(name, "rows8 8 rows, 6 blocks", K, comp3::morph3_comp_rows8_kernel<K, 8, 6>, 8);
    };
    family("open", std::integral_constant<int, comp3_u8::kOpen>{});
    family("close", std::integral_constant<int, comp3_u8::kClose>{});
    family("tophat", std::integral_constant<int, comp3_u8::kTophat>{});
    family("blackhat", std::integral_constant<int, comp3_u8::kBlackhat>{});
    cudaFree(s);
    cudaFree(d);
  }
  return bad_variants ? 1 : 0;
}
