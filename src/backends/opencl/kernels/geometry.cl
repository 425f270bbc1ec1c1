// The simple geometry ops (docs/ops/flip.md, rotate.md, crop.md, pad.md): pixels move as
// opaque groups of PN units of type U (the pixel's bytes: U = uint for pixels a multiple of
// 4 bytes, ushort of 2, uchar otherwise; the host picks the widest unit both views' offsets
// and strides allow), so one program serves every depth and channel count.
//
// geom_rows (ROWS): whole rows, or a contiguous run of each row, copied in units V (uint4,
//   uint2, uint, ushort or uchar: the widest dividing the row's bytes and both views' offsets
//   and strides); source row sy0 + sydir * y. crop, flip v, pad's interior.
// geom_map (MAP): one work-item a pixel of a launched rectangle; output column
//   ox = ox0 + i + (i >= xsplit ? xgap : 0) (the gap skips pad's interior), source column
//   border_index(sx0 + sxdir * ox, sw, type) (the border rule of src/base/rules/border.h, which
//   gives in-range coordinates back unchanged: flip h and rotate 180 use it with sxdir -1);
//   rows alike; -1 (constant outside) takes the constant pixel `cv`. flip h / both, rotate 180,
//   pad's border strips.
// rot90 (ROT90): rotate 90 / 270 as the transpose of pointwise.cl's transpose_pix (32x32-pixel
//   tiles through local memory, 32x8 work-items, 4 rows each) with the output mirrored on the
//   way out: reads and writes stay along rows.

#if defined(ROWS)
__kernel void geom_rows(CIMG(s), IMG(d), int nv, int rows, int sy0, int sydir) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= nv || y >= rows) return;
  ROW(V, d, y)[x] = CROW(V, s, sy0 + sydir * y)[x];
}
#endif

#if defined(MAP)
typedef union {
  uint4 v;
  U u[16 / sizeof(U)];
} Pixel;

__kernel void geom_map(CIMG(s), IMG(d), int nx, int ny, int ox0, int xsplit, int xgap, int sx0,
                       int sxdir, int sw, int oy0, int ysplit, int ygap, int sy0, int sydir, int sh,
                       int type, uint4 cv) {
  const int i = get_global_id(0), j = get_global_id(1);
  if (i >= nx || j >= ny) return;
  const int ox = ox0 + i + (i >= xsplit ? xgap : 0);
  const int oy = oy0 + j + (j >= ysplit ? ygap : 0);
  const int sx = border_index(sx0 + sxdir * ox, sw, type);
  const int sy = border_index(sy0 + sydir * oy, sh, type);
  __global U *o = ROW(U, d, oy) + ox * PN;
  if (sx < 0 || sy < 0) {
    Pixel c;
    c.v = cv;
    for (int k = 0; k < PN; ++k) o[k] = c.u[k];
  } else {
    __global const U *p = CROW(U, s, sy) + sx * PN;
    for (int k = 0; k < PN; ++k) o[k] = p[k];
  }
}
#endif

#if defined(ROT90)
// w, h: the source's size; cw 1: clockwise (dst(h-1-y, x) = src(x, y)), 0: counter-clockwise
// (dst(y, w-1-x) = src(x, y)); dst is h wide, w tall.
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void rot90(CIMG(s), IMG(d), int w, int h,
                                                                     int tiles_x, int cw) {
  __local U tile[32][33 * PN];
  const int id = get_group_id(0);
  const int x0 = (id % tiles_x) * 32, y0 = (id / tiles_x) * 32;
  const int lid = get_local_id(0), tx = lid & 31, ty = lid >> 5;
  for (int i = 0; i < 4; ++i) {
    const int yy = ty + 8 * i;
    if (x0 + tx < w && y0 + yy < h) {
      __global const U *p = CROW(U, s, y0 + yy) + (x0 + tx) * PN;
      for (int c = 0; c < PN; ++c) tile[tx][yy * PN + c] = p[c];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = 0; i < 4; ++i) {
    const int xx = ty + 8 * i;  // source column x0 + xx, source row y0 + tx
    const int x = x0 + xx, y = y0 + tx;
    if (x < w && y < h) {
      const int oy = cw ? x : w - 1 - x, ox = cw ? h - 1 - y : y;
      __global U *p = ROW(U, d, oy) + ox * PN;
      for (int c = 0; c < PN; ++c) p[c] = tile[xx][tx * PN + c];
    }
  }
}
#endif
