// morph_pass (docs/ops/morphology.md, src/ref/morphology.cpp): dst(x, y) = max (dilate) or
// min (erode) over columns x - ax .. x - ax + kw - 1 and rows y - ay .. y - ay + kh - 1,
// outside samples by the border rule; with a constant border an outside row or column
// contributes the border value saturated to the depth (cval). Built per depth: T is the
// sample type, T_U8 / T_U16 / T_F32 tell which.
//
// The extreme of a set does not depend on the order it is taken in (integers; f32 in
// totalOrder on the keys of src/base/numeric.hpp order_key, equal only for identical bits),
// so the pass is separable as in the reference: morph_cols takes the extreme over the window's
// rows into an intermediate image of the source's format (with cval where a window row is
// outside), morph_rows the extreme of that over the window's columns (cval where a column is
// outside). One work-item per sample (x over width * channels, y over rows).
//
// Only the set of positions the border rule maps the window to matters, so window_run
// shortens the window to a run of positions giving the same set: replicate and constant map
// every position below 0 as -1 and every one past the end as len (the run is clamped to
// [-1, len]); reflect, reflect101 and wrap depend only on the position modulo their period,
// so a run of one period covers any longer window. A work-item's loop is at most
// min(k, 2 * len + 2) long whatever the window (iterations enlarge it up to 25401).

#if defined(T_F32)
#define key_of(v) order_key(v)
#define from_key(k) from_order_key(k)
#elif defined(T_U8)
#define key_of(v) ((int)(v))
#define from_key(k) ((uchar)(k))
#else
#define key_of(v) ((int)(v))
#define from_key(k) ((ushort)(k))
#endif

// Positions p0 .. p0 + k - 1 (k >= 1) of a line of len samples -> a run *lo .. *hi whose
// border_index values are the same set.
inline void window_run(int p0, int k, int len, int type, int* lo, int* hi) {
  if (type == BORDER_REPLICATE || type == BORDER_CONSTANT) {
    *lo = clamp(p0, -1, len);
    *hi = clamp(p0 + (k - 1), -1, len);
    return;
  }
  const int period = type == BORDER_REFLECT ? 2 * len
                     : type == BORDER_REFLECT101 ? (len == 1 ? 1 : 2 * len - 2)
                                                 : len;
  *lo = p0;
  *hi = p0 + (min(k, period) - 1);
}

__kernel void morph_cols(CIMG(s), IMG(t), int n, int h, int kh, int ay, int btype, T cval,
                         int is_max) {
  const int i = get_global_id(0), y = get_global_id(1);
  if (i >= n || y >= h) return;
  int lo, hi;
  window_run(y - ay, kh, h, btype, &lo, &hi);
  const int ckey = key_of(cval);
  int acc = 0;
  for (int j = lo; j <= hi; ++j) {
    const int sy = border_index(j, h, btype);
    const int v = sy < 0 ? ckey : key_of(CROW(T, s, sy)[i]);
    acc = j == lo ? v : is_max ? max(acc, v) : min(acc, v);
  }
  ROW(T, t, y)[i] = from_key(acc);
}

__kernel void morph_rows(CIMG(t), IMG(d), int w, int h, int ch, int kw, int ax, int btype,
                         T cval, int is_max) {
  const int i = get_global_id(0), y = get_global_id(1);
  if (i >= w * ch || y >= h) return;
  const int x = i / ch, c = i - x * ch;
  int lo, hi;
  window_run(x - ax, kw, w, btype, &lo, &hi);
  const int ckey = key_of(cval);
  __global const T* row = CROW(T, t, y);
  int acc = 0;
  for (int j = lo; j <= hi; ++j) {
    const int sx = border_index(j, w, btype);
    const int v = sx < 0 ? ckey : key_of(row[sx * ch + c]);
    acc = j == lo ? v : is_max ? max(acc, v) : min(acc, v);
  }
  ROW(T, d, y)[i] = from_key(acc);
}

// morph_small: the whole window in one kernel for small windows (KW x KH compile-time, anchor
// at run time), no intermediate image and one launch instead of two. A work-item computes VW
// consecutive samples of a row (lanes; the horizontal neighbour of a sample is ch samples
// away) for RY consecutive rows: each source row's extreme over the KW columns (KW - 1 min /
// max) goes into a ring of the last KH, and each output row is the extreme of its KH ring
// entries. Interior work-items load with vloadVW at the KW column offsets (the L1 cache serves
// the overlap); those whose window crosses the left or right edge gather lane by lane through
// the border rule (constant: cval). Built with -DKW= -DKH= -DVW= -DRY= -DIS_MAX=0|1 (the lane
// vectors KV of common.cl).
#if defined(KW) && defined(KH) && defined(RY)
#if IS_MAX
#define EXT(a, b) max(a, b)
#else
#define EXT(a, b) min(a, b)
#endif

// The extreme over the KW columns of source row y (any y: the border rule maps it) for the
// lanes i0 .. i0 + VW - 1 (lanes past the row's end repeat its last sample, never stored).
inline KV row_extreme(CIMG(s), int i0, int y, int n, int w, int h, int ch, int ax, int btype,
                      KS ckey, bool inner_x) {
  const int sy = border_index(y, h, btype);
  if (sy < 0) return (KV)(ckey);
  __global const T* row = CROW(T, s, sy);
  KV acc;
  if (inner_x) {
    __global const T* p = row + i0 - ax * ch;
    acc = key_v(VLOAD(p));
#pragma unroll
    for (int j = 1; j < KW; ++j) acc = EXT(acc, key_v(VLOAD(p + j * ch)));
    return acc;
  }
  KS lane[VW];
  for (int l = 0; l < VW; ++l) {
    const int i = min(i0 + l, n - 1), x = i / ch, c = i - x * ch;
    KS a = 0;
    for (int j = 0; j < KW; ++j) {
      const int sx = border_index(x - ax + j, w, btype);
      const KS v = sx < 0 ? ckey : key_s(row[sx * ch + c]);
      a = j == 0 ? v : EXT(a, v);
    }
    lane[l] = a;
  }
  return VLOAD(lane);
}

__kernel void morph_small(CIMG(s), IMG(d), int w, int h, int ch, int ax, int ay, int btype,
                          T cval) {
  const int n = w * ch;
  const int i0 = get_global_id(0) * VW, y0 = get_global_id(1) * RY;
  if (i0 >= n || y0 >= h) return;
  const bool inner_x = i0 - ax * ch >= 0 && i0 + VW - 1 + (KW - 1 - ax) * ch < n;
  const KS ckey = key_s(cval);
  KV ring[KH];  // the extreme of source row y0 - ay + j at j % KH
#pragma unroll
  for (int j = 0; j < KH - 1; ++j)
    ring[j] = row_extreme(s, s_off, s_stride, i0, y0 - ay + j, n, w, h, ch, ax, btype, ckey,
                          inner_x);
#pragma unroll
  for (int o = 0; o < RY; ++o) {
    const int y = y0 + o;
    if (y >= h) break;
    ring[(o + KH - 1) % KH] = row_extreme(s, s_off, s_stride, i0, y - ay + KH - 1, n, w, h, ch,
                                          ax, btype, ckey, inner_x);
    KV m = ring[o % KH];
#pragma unroll
    for (int r = 1; r < KH; ++r) m = EXT(m, ring[(o + r) % KH]);
    __global T* out = ROW(T, d, y) + i0;
    if (i0 + VW <= n) {
      VSTORE(from_key_v(m), out);
    } else {
      KS lane[VW];
      VSTORE(m, lane);
      for (int l = 0; l < n - i0; ++l) out[l] = from_key_s(lane[l]);
    }
  }
}
#endif  // KW && KH

// van Herk / Gil-Werman passes for larger windows (compile-time KH or KW up to 63): about 3
// min / max per sample whatever the window, where morph_cols / morph_rows take K - 1. A
// work-item takes K consecutive outputs along the pass, whose windows (starts a0 .. a0 + K -
// 1) all hold position c = a0 + K - 1: suffix extremes S[j] = ext(x[a0 + j .. c]) once, then
// output j = ext(S[j], x[c + 1 .. c + j]) with the prefix carried along; 2K - 1 loads for K
// outputs. The intermediate image holds the column pass's result as morph_cols does. Built
// with -DKH= (morph_cols_vh, VW lanes along the row) or -DKW= (morph_rows_vh, one sample a
// work-item), -DIS_MAX=, -DVW=.
#if defined(KH) && !defined(KW)
#if IS_MAX
#define EXT(a, b) max(a, b)
#else
#define EXT(a, b) min(a, b)
#endif
// Lanes i0 .. i0 + VW - 1 of source row y (border rule; constant: cval), as keys.
inline KV load_lanes(CIMG(s), int i0, int y, int n, int h, int btype, KS ckey) {
  const int sy = border_index(y, h, btype);
  if (sy < 0) return (KV)(ckey);
  __global const T* row = CROW(T, s, sy) + i0;
  if (i0 + VW <= n) return key_v(VLOAD(row));
  KS lane[VW];
  for (int l = 0; l < VW; ++l) lane[l] = key_s(row[min(l, n - 1 - i0)]);
  return VLOAD(lane);
}

__kernel void morph_cols_vh(CIMG(s), IMG(t), int n, int h, int ay, int btype, T cval) {
  const int i0 = get_global_id(0) * VW, y0 = get_global_id(1) * KH;
  if (i0 >= n || y0 >= h) return;
  const KS ckey = key_s(cval);
  const int a0 = y0 - ay, c = a0 + KH - 1;
  KV suf[KH];
  suf[KH - 1] = load_lanes(s, s_off, s_stride, i0, c, n, h, btype, ckey);
#pragma unroll
  for (int j = KH - 2; j >= 0; --j)
    suf[j] = EXT(suf[j + 1], load_lanes(s, s_off, s_stride, i0, a0 + j, n, h, btype, ckey));
  KV pre = suf[0];
#pragma unroll
  for (int j = 0; j < KH; ++j) {
    if (y0 + j >= h) break;
    if (j > 0) {
      const KV v = load_lanes(s, s_off, s_stride, i0, c + j, n, h, btype, ckey);
      pre = j == 1 ? v : EXT(pre, v);
    }
    const KV m = j == 0 ? suf[0] : EXT(suf[j], pre);
    __global T* out = ROW(T, t, y0 + j) + i0;
    if (i0 + VW <= n) {
      VSTORE(from_key_v(m), out);
    } else {
      KS lane[VW];
      VSTORE(m, lane);
      for (int l = 0; l < n - i0; ++l) out[l] = from_key_s(lane[l]);
    }
  }
}
#endif  // KH

#if defined(KW) && !defined(KH)
#if IS_MAX
#define EXT(a, b) max(a, b)
#else
#define EXT(a, b) min(a, b)
#endif
// Sample p of channel c of a row through the border rule (constant: cval), as a key.
inline KS load_at(__global const T* row, int p, int w, int ch, int c, int btype, KS ckey) {
  const int sx = border_index(p, w, btype);
  return sx < 0 ? ckey : key_s(row[sx * ch + c]);
}

__kernel void morph_rows_vh(CIMG(t), IMG(d), int w, int h, int ch, int ax, int btype, T cval) {
  const int g = get_global_id(0), y = get_global_id(1);
  const int segs = (w + KW - 1) / KW;
  if (g >= segs * ch || y >= h) return;
  const int seg = g / ch, c = g - seg * ch;
  const int x0 = seg * KW, a0 = x0 - ax, mid = a0 + KW - 1;
  const KS ckey = key_s(cval);
  __global const T* row = CROW(T, t, y);
  const bool inner = a0 >= 0 && a0 + 2 * KW - 2 < w;
#define AT(p) ((KS)(inner ? key_s(row[(p) * ch + c]) : load_at(row, p, w, ch, c, btype, ckey)))
  KS suf[KW];
  suf[KW - 1] = AT(mid);
#pragma unroll
  for (int j = KW - 2; j >= 0; --j) suf[j] = EXT(suf[j + 1], AT(a0 + j));
  KS pre = suf[0];
  __global T* out = ROW(T, d, y);
#pragma unroll
  for (int j = 0; j < KW; ++j) {
    if (x0 + j >= w) break;
    if (j > 0) {
      const KS v = AT(mid + j);
      pre = j == 1 ? v : EXT(pre, v);
    }
    out[(x0 + j) * ch + c] = from_key_s(j == 0 ? suf[0] : EXT(suf[j], pre));
  }
#undef AT
}
#endif  // KW

// morph_comp: the composites open, close, tophat, blackhat (OP: MorphOp's order, 2 3 5 6) and
// gradient (4) in one launch for one channel and small centred odd windows, with no
// intermediate image (core's sequence: each pass applies the border rule to its own input,
// then arith's saturating sub; src/core/ops/morphology.cpp). A work-group computes a tile of
// CTX x CTY outputs through local memory, separably: the source tile (the tile plus both
// passes' halos, loaded through the border rule) -> row extremes -> the first pass's image E
// over the tile plus the second pass's halo -> row extremes of E -> the output. E outside the
// image follows the rule from E's own samples: position p reads E at border_index(p), which
// lies inside the computed region for the rules other than wrap with a centred window (the
// host sends wrap through core's passes). gradient: dilate and erode of the same source tile.
// Built with -DKW= -DKH= (odd, anchors KW / 2, KH / 2), -DOP= and the lane vectors at VW=1.
#if defined(OP) && defined(KW) && defined(KH)
#define CTX 64
#define CTY 32
#define HX (KW / 2)
#define HY (KH / 2)
#define EW (CTX + 2 * HX)  // E's region: the tile plus the second pass's halo
#define EH (CTY + 2 * HY)
#define SW (EW + 2 * HX)  // the source tile: E's region plus the first pass's halo
#define SH (EH + 2 * HY)
#if OP == 2 || OP == 5  // open, tophat: erode then dilate
#define EXT1(a, b) min(a, b)
#define EXT2(a, b) max(a, b)
#else  // close, blackhat: dilate then erode; gradient: EXT1 max, EXT2 min, both of the source
#define EXT1(a, b) max(a, b)
#define EXT2(a, b) min(a, b)
#endif

__kernel __attribute__((reqd_work_group_size(64, 4, 1))) void morph_comp(CIMG(s), IMG(d), int w,
                                                                          int h, int btype,
                                                                          T cval) {
  __local KS a[SH * SW];  // the source tile, then E
  __local KS b[SH * EW];  // row extremes of the source, then of E
#if OP == 4
  __local KS b2[SH * EW];  // gradient: the second extreme's rows
#endif
  const int lid = get_local_id(1) * 64 + get_local_id(0);
  const int ox = get_group_id(0) * CTX, oy = get_group_id(1) * CTY;
  const KS ckey = key_s(cval);
  // Source tile: positions (ox - 2HX .., oy - 2HY ..).
  for (int i = lid; i < SH * SW; i += 256) {
    const int r = i / SW, q = i - r * SW;
    const int sy = border_index(oy - 2 * HY + r, h, btype);
    const int sx = border_index(ox - 2 * HX + q, w, btype);
    a[i] = (sy < 0 || sx < 0) ? ckey : key_s(CROW(T, s, sy)[sx]);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // Row extremes over KW of every source row, for E's columns.
  for (int i = lid; i < SH * EW; i += 256) {
    const int r = i / EW, q = i - r * EW;
    KS m = a[r * SW + q];
#if OP == 4
    KS m2 = m;
#endif
    for (int j = 1; j < KW; ++j) {
      const KS v = a[r * SW + q + j];
      m = EXT1(m, v);
#if OP == 4
      m2 = EXT2(m2, v);
#endif
    }
    b[i] = m;
#if OP == 4
    b2[i] = m2;
#endif
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#if OP == 4
  // gradient: dilate - erode at the tile's outputs (E's region offset by the halo).
  for (int i = lid; i < CTX * CTY; i += 256) {
    const int r = i / CTX, q = i - r * CTX;
    const int x = ox + q, y = oy + r;
    if (x >= w || y >= h) continue;
    KS hi = b[(r + HY) * EW + q + HX], lo = b2[(r + HY) * EW + q + HX];
    for (int j = 1; j < KH; ++j) {
      hi = EXT1(hi, b[(r + HY + j) * EW + q + HX]);
      lo = EXT2(lo, b2[(r + HY + j) * EW + q + HX]);
    }
#if defined(T_F32)
    ROW(T, d, y)[x] = from_key_s(hi) - from_key_s(lo);
#else
    ROW(T, d, y)[x] = sub_sat(hi, lo);
#endif
  }
#else
  // E over its region (positions ox - HX .., oy - HY ..), in a (row stride EW); only the
  // samples inside the image are read below.
  for (int i = lid; i < EH * EW; i += 256) {
    const int r = i / EW, q = i - r * EW;
    KS m = b[r * EW + q];
    for (int j = 1; j < KH; ++j) m = EXT1(m, b[(r + j) * EW + q]);
    a[i] = m;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // Row extremes of E over KW for the tile's columns, E's rows; positions outside the image
  // by the rule from E's own samples.
  for (int i = lid; i < EH * CTX; i += 256) {
    const int r = i / CTX, q = i - r * CTX;
    const int ey = border_index(oy - HY + r, h, btype);
    KS m = ckey;
    if (ey >= 0) {
      // Positions that only outputs past the image's end need may map outside the region:
      // clamped (their values are never stored).
      const int ly = clamp(ey - (oy - HY), 0, EH - 1);
      for (int j = 0; j < KW; ++j) {
        const int ex = border_index(ox - HX + q + j, w, btype);
        const KS v = ex < 0 ? ckey : a[ly * EW + clamp(ex - (ox - HX), 0, EW - 1)];
        m = j == 0 ? v : EXT2(m, v);
      }
    }
    b[i] = m;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = lid; i < CTX * CTY; i += 256) {
    const int r = i / CTX, q = i - r * CTX;
    const int x = ox + q, y = oy + r;
    if (x >= w || y >= h) continue;
    KS m = b[r * CTX + q];
    for (int j = 1; j < KH; ++j) m = EXT2(m, b[(r + j) * CTX + q]);
#if OP == 2 || OP == 3
    ROW(T, d, y)[x] = from_key_s(m);
#else
    const T src = CROW(T, s, y)[x];
#if defined(T_F32)
#if OP == 5
    ROW(T, d, y)[x] = src - from_key_s(m);
#else
    ROW(T, d, y)[x] = from_key_s(m) - src;
#endif
#elif OP == 5
    ROW(T, d, y)[x] = sub_sat(src, (T)from_key_s(m));
#else
    ROW(T, d, y)[x] = sub_sat((T)from_key_s(m), src);
#endif
#endif
  }
#endif
}
#endif  // OP
