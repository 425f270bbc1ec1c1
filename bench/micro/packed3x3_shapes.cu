// Micro-benchmark of shapes for the packed u8 3x3 kernels (src/backends/cuda/u8_3x3.cuh),
// built from the library's own pieces: dilate 3x3 u8x1, border reflect101, at 8192x8192 and
// 1920x1080, (a) morph3_u8_kernel as launch_3x3 runs it today (tall: tiles; short: rows path),
// (b) the rows path (no tile, no barrier; load_rows_words) at R = 2, 4, 8 rows a thread for
// every block column inside the row. Timed as pixflow-bench times ops (graph of N calls,
// median of 5 replays / N) beside the device copy; every output poisoned before and checked
// against the host after. Build and run on the GPU machine, from the repository root:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -I include -I . -I src \
//     -o /tmp/p3 bench/micro/packed3x3_shapes.cu && /tmp/p3
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "src/backends/cuda/u8_3x3.cuh"

using namespace pixflow;
using namespace pixflow::cuda;
using namespace pixflow::cuda::u8_3x3;

#define CK(x)                                        \
  do {                                               \
    cudaError_t e = (x);                             \
    if (e) {                                         \
      printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      return 1;                                      \
    }                                                \
  } while (0)

// morph3_u8_kernel's CN = 1 body with the rows path at any R (kRows) or the tile (!kRows).
template <int R, bool kRows, int kMinB>
__global__ void __launch_bounds__(kTX* kTY, kMinB)
    dilate_shape(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                 DevBorder<std::uint8_t> border, bool src_aligned, int rows_of_blocks) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long bx0 = (long long)blockIdx.x * kBW;
  auto out = [&](auto&& words, long long by0) {
    store_rows4<R, kPackedEvictFirst>(dst, int(bx0) + tx * kPX, by0 + ty * R, [&](auto&& put) {
      unsigned p0[R + 2], p1[R + 2], p2[R + 2];
#pragma unroll
      for (int r = 0; r < R + 2; ++r) {
        unsigned wa, wb, wc;
        words(r, wa, wb, wc);
        u8_3x3_dup::columns(wa, wb, wc, p0[r], p1[r], p2[r]);
      }
#pragma unroll
      for (int i = 0; i < R; ++i)
        put(i, u8_3x3_dup::morph3_row<true>(vmax3(p0[i], p0[i + 1], p0[i + 2]),
                                            vmax3(p1[i], p1[i + 1], p1[i + 2]),
                                            vmax3(p2[i], p2[i + 1], p2[i + 2])));
    });
  };
  if constexpr (kRows) {
    if (u8_3x3_edge::rows_x_inside(ctaid_x_again() * kBW, src.w, src_aligned)) {
      for_each_rows_tile<R>(src, border, int(bx0), rows_of_blocks, out);
      return;
    }
  }
  __shared__ __align__(16) unsigned tile[kTileH<R>][kCTileWords];
  const bool al16 = src_aligned && rows_aligned16(src);
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long by0 = (long long)by * kBH<R>;
    load_tile_chunks<R, 1>(tile, src, border, bx0, by0, src_aligned, al16);
    out(tile_words<R>(TileRows<kCTileWords, kCOff>{&tile[0][0]}), by0);
    __syncthreads();
  }
}

template <class F>
float time_graph(cudaStream_t st, F launch, int N) {
  cudaGraph_t g;
  cudaGraphExec_t ge;
  launch();
  cudaStreamSynchronize(st);
  cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal);
  for (int i = 0; i < N; ++i) launch();
  cudaStreamEndCapture(st, &g);
  cudaGraphInstantiate(&ge, g, 0);
  cudaGraphLaunch(ge, st);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  float best[5];
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(a, st);
    cudaGraphLaunch(ge, st);
    cudaEventRecord(b, st);
    cudaEventSynchronize(b);
    cudaEventElapsedTime(&best[r], a, b);
  }
  for (int i = 0; i < 5; ++i)
    for (int j = i + 1; j < 5; ++j)
      if (best[j] < best[i]) {
        float x = best[i];
        best[i] = best[j];
        best[j] = x;
      }
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  return best[2] * 1000.f / N;
}

static int reflect101(int i, int n) {
  if (n == 1) return 0;
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

int main() {
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  int bad_variants = 0;
  const int sizes[3][3] = {{8192, 8192, 200}, {1920, 1080, 1000}, {3840, 2160, 500}};
  for (const auto& sz : sizes) {
    const int w = sz[0], h = sz[1], N = sz[2];
    const int pitch = w;
    unsigned char *s, *d;
    CK(cudaMalloc(&s, (size_t)pitch * h));
    CK(cudaMalloc(&d, (size_t)pitch * h));
    std::vector<unsigned char> hs((size_t)pitch * h), hd(hs.size()), ref(hs.size());
    srand(7);
    for (auto& x : hs) x = (unsigned char)rand();
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        unsigned char m = 0;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const unsigned char v =
                hs[(size_t)reflect101(y + dy, h) * pitch + reflect101(x + dx, w)];
            m = v > m ? v : m;
          }
        ref[(size_t)y * pitch + x] = m;
      }
    CK(cudaMemcpy(s, hs.data(), hs.size(), cudaMemcpyHostToDevice));
    CK(cudaMemset(d, 0xCD, hs.size()));
    const DevView<std::uint8_t> sv{s, pitch, w, h, 1}, dv{d, pitch, w, h, 1};
    const DevBorder<std::uint8_t> bd{BorderType::reflect101, 0};
    auto check = [&](const char* name) {
      cudaMemcpy(hd.data(), d, hd.size(), cudaMemcpyDeviceToHost);
      long long bad = 0;
      for (size_t i = 0; i < hd.size(); ++i) bad += hd[i] != ref[i];
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
                 st,
                 [&] { kern<<<grid, dim3(kTX, kTY), 0, st>>>(sv, dv, bd, true, rob); }, N));
      check(name);
    };
    run("today tall (tile R=8)", morph3_u8_kernel<true, kRowsTall>, kRowsTall);
    run("today short (rows R=2)", morph3_u8_kernel<true, kRowsShort>, kRowsShort);
    run("tile R=8 (copy)", dilate_shape<8, false, 5>, 8);
    run("rows R=2", dilate_shape<2, true, 8>, 2);
    run("rows R=4", dilate_shape<4, true, 6>, 4);
    run("rows R=4 minB4", dilate_shape<4, true, 4>, 4);
    run("rows R=8", dilate_shape<8, true, 5>, 8);
    run("rows R=8 minB4", dilate_shape<8, true, 4>, 4 * 2);
    run("rows R=6", dilate_shape<6, true, 5>, 6);
    cudaFree(s);
    cudaFree(d);
  }
  return bad_variants ? 1 : 0;
}
