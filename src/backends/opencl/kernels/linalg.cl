// dot and matmul (docs/ops/linalg.md, src/ref/linalg.cpp). One work-item per output; the
// sums in the reference's order with separately rounded float operations (FP_CONTRACT OFF).

// dot (the kernel is not named "dot": that is an OpenCL C built-in, clCreateKernel misses it).
// dst(x, y) = ((a0 b0 + a1 b1) + a2 b2) + a3 b3 over the 4 f32 channels.
__kernel void dot_f32x4(CIMG(a), CIMG(b), IMG(d), int w, int h) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= w || y >= h) return;
  __global const float *u = CROW(float, a, y) + 4 * x;
  __global const float *v = CROW(float, b, y) + 4 * x;
  const float s01 = u[0] * v[0] + u[1] * v[1];
  const float s012 = s01 + u[2] * v[2];
  ROW(float, d, y)[x] = s012 + u[3] * v[3];
}

// c(i, j) = sum over k of a(i, k) b(k, j), k in order, for a M x K and b K x N (image width =
// columns). f32 (T_F32): float sum from +0. s32 (T_S32): the exact sum in 128 bits (a
// wrapping low half and a high half, as the reference's __int128), saturated to int.
__kernel void matmul(CIMG(a), CIMG(b), IMG(c), int M, int K, int N) {
  const int j = get_global_id(0), i = get_global_id(1);
  if (j >= N || i >= M) return;
  __global const T *ai = CROW(T, a, i);
  __global const uchar *bb = b + b_off;
#ifdef T_F32
  float s = 0.0f;
  for (int k = 0; k < K; ++k) {
    const float p = ai[k] * ((__global const float *)(bb + (long)k * b_stride))[j];
    s = s + p;
  }
  ROW(float, c, i)[j] = s;
#else
  ulong lo = 0;
  long hi = 0;
  for (int k = 0; k < K; ++k) {
    const long p = (long)ai[k] * (long)((__global const int *)(bb + (long)k * b_stride))[j];
    const ulong old = lo;
    lo += (ulong)p;
    hi += (p < 0 ? -1 : 0) + (lo < old ? 1 : 0);
  }
  // value = hi 2^64 + lo (lo unsigned)
  int r;
  if (hi > 0 || (hi == 0 && (long)lo < 0))
    r = INT_MAX;
  else if (hi < -1 || (hi == -1 && (long)lo >= 0))
    r = INT_MIN;
  else {
    const long v = (long)lo;
    r = v > INT_MAX ? INT_MAX : v < INT_MIN ? INT_MIN : (int)v;
  }
  ROW(int, c, i)[j] = r;
#endif
}
