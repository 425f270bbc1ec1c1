// epsilon (docs/ops/epsilon.md, src/ref/epsilon.cpp): one work-item per destination pixel,
// every channel; the (2r+1)^2 window read through border_index (constant: the border value,
// saturated to T on the host, is a pixel like any other), rows dy outer, columns dx inner as
// the reference. Built per sample type: T_U8 or T_F32.
//   u8:  |v - centre| <= t with t = min(floor(t), 255) from the host (both sides are
//        integers, so this is the reference's double comparison); integer sum, result
//        (2 sum + n) / (2 n) (round half up).
//   f32: the comparison and the sum in double (cl_khr_fp64), float(sum / n).
#ifdef T_F32
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel void epsilon(CIMG(s), IMG(d), int w, int h, int cn, int r, int border,
#ifdef T_F32
                      double t, float cval
#else
                      int t, int cval
#endif
) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= w || y >= h) return;
  __global const uchar *base = s + s_off;
  __global T *out = ROW(T, d, y) + x * cn;
  for (int c = 0; c < cn; ++c) {
    const T centre = CROW(T, s, y)[x * cn + c];
#ifdef T_F32
    const double dc = (double)centre;
    double sum = 0.0;
#else
    const int ic = (int)centre;
    int sum = 0;
#endif
    int n = 0;
    for (int dy = -r; dy <= r; ++dy) {
      const int yy = border_index(y + dy, h, border);
      __global const T *row = (__global const T *)(base + (long)(yy < 0 ? 0 : yy) * s_stride);
      for (int dx = -r; dx <= r; ++dx) {
        const int xx = border_index(x + dx, w, border);
#ifdef T_F32
        const float v = (xx < 0 || yy < 0) ? cval : row[xx * cn + c];
        if (fabs((double)v - dc) <= t) {
          ++n;
          sum += (double)v;
        }
#else
        const int v = (xx < 0 || yy < 0) ? cval : (int)row[xx * cn + c];
        if ((int)abs(v - ic) <= t) {
          ++n;
          sum += v;
        }
#endif
      }
    }
    // n >= 1 unless the centre is NaN (f32: 0 / 0, NaN, as the reference).
#ifdef T_F32
    out[c] = (float)(sum / (double)n);
#else
    out[c] = (T)((2 * sum + n) / (2 * n));
#endif
  }
}
