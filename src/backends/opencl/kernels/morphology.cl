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
#if defined(KW) && defined(KH) && defined(RY) && !defined(MPK) && !defined(MPC)
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

// morph_u8: dilate / erode (and gradient, both and their difference) on u8 for small windows
// (KW x KH up to 7 x 7, CH channels, anchor AX, AY; the window's reach, max(AX, KW - 1 - AX) *
// CH bytes, at most HB bytes each side), a work-item BW row bytes (4, 8 or 16: one 16-, 8- or
// 4-byte load a row, the halo a word or two either side) of RY rows (even). Where morph_small
// takes a sample a lane and reads each source byte through KW byte loads, here a row's bytes
// come in as words and are spread into registers (a byte each), and everything after is in
// registers with compile-time indices:
// - the row extreme of BW bytes over KW taps CH bytes apart: a chain of KW - 1 a byte
//   (MPK_DIRECT=1; a compiler for Hopper takes two links an instruction, VIMNMX3), or by
//   doubling (L2[i] = ext(b[i], b[i + CH]), L4[i] = ext(L2[i], L2[i + 2 CH]); a window of K
//   taps is ext(L_P[i], L_P[i + (K - P) CH]) with P the largest power of two <= K, windows
//   overlapping: the extreme does not mind): about 2 (3 taps) or 3 (5 taps) a byte;
// - the column extreme of output rows in pairs over a ring of KH + 1 rows of row extremes:
//   chains of KH - 1 (MPK_DIRECT), or m = ext(rows o + 1 .. o + KH - 1), then out(o) =
//   ext(row o, m), out(o + 1) = ext(m, row o + KH): KH / 2 a byte a row.
// Rows through border_index once a row (constant: cval); bytes through the rule only in the
// work-items whose byte range reaches past either end of the row (the gather below), else
// word loads (aligned where the view's offset and stride are a multiple of BW, else vload4).
// Stores as words where the destination allows, else bytes; clipped to the image.
// Built with -DMPK=1 -DKW= -DKH= -DAX= -DAY= -DCH= -DBW= -DRY= -DHB= (4 or 8) -DIS_MAX=
// -DMPK_DIRECT= and -DMPK_GRAD=1 for gradient (dilate - erode: never negative, the same window).
#if defined(MPK) || defined(MPC) || defined(MPV)
#define NB (BW + 2 * HB)  // bytes a row: the halo, the work-item's BW, the halo
#define NW (BW / 4)       // words of the work-item's own bytes

// The extreme the pass takes (mx: max, else min; a compile-time constant after inlining).
inline uchar mext(bool mx, uchar a, uchar b) {
  return mx ? max(a, b) : min(a, b);
}

// wv = source bytes x0 - HB .. x0 + BW + HB - 1 of row y as NB / 4 words (byte q of the
// run in word q / 4 at bits 8 (q % 4)), through the rule; cval where it says so. (Words, not
// bytes, leave this function: every path writes whole words at compile-time indices, which
// keeps them in registers; a byte array written on three paths went to local memory.)
inline void mpk_row(CIMG(s), int x0, int y, int n, int w, int h, int btype, uchar cval,
                    bool inner_x, bool aligned, uint* wv) {
  const int sy = border_index(y, h, btype);
  if (sy < 0) {
#pragma unroll
    for (int j = 0; j < NB / 4; ++j) wv[j] = (uint)cval * 0x01010101u;
    return;
  }
  __global const uchar* row = CROW(uchar, s, sy);
  if (inner_x) {
    __global const uchar* p = row + x0;
    if (aligned) {
#if HB == 8
      const uint2 vl = *(__global const uint2*)(p - 8), vr = *(__global const uint2*)(p + BW);
      wv[0] = vl.s0, wv[1] = vl.s1, wv[NB / 4 - 2] = vr.s0, wv[NB / 4 - 1] = vr.s1;
#else
      wv[0] = *(__global const uint*)(p - 4), wv[NB / 4 - 1] = *(__global const uint*)(p + BW);
#endif
#if BW == 16
      const uint4 v = *(__global const uint4*)p;
      wv[HB / 4] = v.s0, wv[HB / 4 + 1] = v.s1, wv[HB / 4 + 2] = v.s2, wv[HB / 4 + 3] = v.s3;
#elif BW == 8
      const uint2 v = *(__global const uint2*)p;
      wv[HB / 4] = v.s0, wv[HB / 4 + 1] = v.s1;
#else
      wv[HB / 4] = *(__global const uint*)p;
#endif
    } else {
#pragma unroll
      for (int j = 0; j < NB / 4; ++j) wv[j] = as_uint(vload4(0, p - HB + 4 * j));
    }
    return;
  }
  // The gather: positions past the row's end (also those only outputs past it read) and
  // before its start through the rule, pixel by pixel.
#pragma unroll
  for (int j = 0; j < NB / 4; ++j) {
    uint word = 0;
#ifdef PIXFLOW_OCLGRIND
#pragma unroll 1  // oclgrind 21.10 runs clang's vectorized form of the 4 bytes wrong (NOTES)
#else
#pragma unroll
#endif
    for (int k = 0; k < 4; ++k) {
      // The byte's index in the row (-1: cval), then one load.
      const int gi = x0 - HB + 4 * j + k;
      int at = gi;
      if (gi < 0 || gi >= n) {
        const int c = ((gi % CH) + CH) % CH;
        const int bx = border_index((gi - c) / CH, w, btype);
        at = bx < 0 ? -1 : bx * CH + c;
      }
      const uint v = at < 0 ? cval : row[at];
      word |= v << (8 * k);
    }
    wv[j] = word;
  }
}

// The bytes of wv, b[q] = byte q.
inline void mpk_bytes(const uint* wv, uchar* b) {
#pragma unroll
  for (int q = 0; q < NB; ++q) b[q] = (uchar)(wv[q / 4] >> (8 * (q % 4)));
}

// e[i] = the extreme (mx) of b[m0 + i + j CH], j < KW (up to 17), for i < BW (b: NB bytes;
// m0 + BW - 1 + (KW - 1) CH < NB).
inline void mpk_hext(const uchar* b, int m0, bool mx, uchar* e) {
#if (MPK_DIRECT && KW <= 8) || KW == 1
#pragma unroll
  for (int i = 0; i < BW; ++i) {
    uchar v = b[m0 + i];
#pragma unroll
    for (int j = 1; j < KW; ++j) v = mext(mx, v, b[m0 + i + j * CH]);
    e[i] = v;
  }
#else
  // Doubling (also for windows past 8 taps whatever MPK_DIRECT says): L2[i] (taps i, i + CH)
  // for i < BW + (KW - 2) CH, L4 (4 taps) for i < BW + (KW - 4) CH, L8 (8 taps) for i < BW +
  // (KW - 8) CH; each reads only taps of real outputs' windows (< m0 + BW + (KW - 1) CH).
  uchar l2[BW + 15 * CH];
#pragma unroll
  for (int i = 0; i < BW + (KW - 2) * CH; ++i) l2[i] = mext(mx, b[m0 + i], b[m0 + i + CH]);
#if KW == 2
#pragma unroll
  for (int i = 0; i < BW; ++i) e[i] = l2[i];
#elif KW == 3
#pragma unroll
  for (int i = 0; i < BW; ++i) e[i] = mext(mx, l2[i], l2[i + CH]);
#else
  uchar l4[BW + 13 * CH];
#pragma unroll
  for (int i = 0; i < BW + (KW - 4) * CH; ++i) l4[i] = mext(mx, l2[i], l2[i + 2 * CH]);
#if KW <= 8
#pragma unroll
  for (int i = 0; i < BW; ++i) e[i] = KW == 4 ? l4[i] : mext(mx, l4[i], l4[i + (KW - 4) * CH]);
#else
  uchar l8[BW + 9 * CH];
#pragma unroll
  for (int i = 0; i < BW + (KW - 8) * CH; ++i) l8[i] = mext(mx, l4[i], l4[i + 4 * CH]);
#pragma unroll
  for (int i = 0; i < BW; ++i) e[i] = mext(mx, l8[i], l8[i + (KW - 8) * CH]);
#endif
#endif
#endif
}

// The row extremes of source row y for the work-item's bytes: e (IS_MAX's), e2 the other
// (gradient only).
inline void mpk_hrow(CIMG(s), int x0, int y, int n, int w, int h, int btype, uchar cval,
                     bool inner_x, bool aligned, uchar* e, uchar* e2) {
  uint wv[NB / 4];
  mpk_row(s, s_off, s_stride, x0, y, n, w, h, btype, cval, inner_x, aligned, wv);
  uchar b[NB];
  mpk_bytes(wv, b);
  mpk_hext(b, HB - AX * CH, IS_MAX, e);
#if MPK_GRAD
  mpk_hext(b, HB - AX * CH, !IS_MAX, e2);
#endif
}

// Output rows o and o + 1 (column extremes, mx) from the ring r of KH + 1 rows of row
// extremes (row o of the window at slot o % (KH + 1)).
inline void mpk_vpair(uchar r[][BW], int o, bool mx, uchar* out0, uchar* out1) {
#if MPK_DIRECT || KH == 1
#pragma unroll
  for (int i = 0; i < BW; ++i) {
    uchar v = r[o % (KH + 1)][i];
#pragma unroll
    for (int t = 1; t < KH; ++t) v = mext(mx, v, r[(o + t) % (KH + 1)][i]);
    out0[i] = v;
  }
#pragma unroll
  for (int i = 0; i < BW; ++i) {
    uchar v = r[(o + 1) % (KH + 1)][i];
#pragma unroll
    for (int t = 1; t < KH; ++t) v = mext(mx, v, r[(o + 1 + t) % (KH + 1)][i]);
    out1[i] = v;
  }
#else
#pragma unroll
  for (int i = 0; i < BW; ++i) {
    uchar m = r[(o + 1) % (KH + 1)][i];
#pragma unroll
    for (int t = 2; t < KH; ++t) m = mext(mx, m, r[(o + t) % (KH + 1)][i]);
    out0[i] = mext(mx, r[o % (KH + 1)][i], m);
    out1[i] = mext(mx, m, r[(o + KH) % (KH + 1)][i]);
  }
#endif
}

// Output row y (< h) from its bytes o: one store of BW bytes where the work-item's bytes lie
// in the row and the destination is aligned, else bytes up to the row's end.
inline void mpk_store(IMG(d), int x0, int y, int n, bool dal, const uchar* o) {
  __global uchar* p = ROW(uchar, d, y) + x0;
  uint c[NW];
#pragma unroll
  for (int j = 0; j < NW; ++j)
    c[j] = (uint)o[4 * j] | ((uint)o[4 * j + 1] << 8) | ((uint)o[4 * j + 2] << 16) |
           ((uint)o[4 * j + 3] << 24);
  if (x0 + BW <= n) {
    if (dal) {
#if BW == 16
      *(__global uint4*)p = (uint4)(c[0], c[1], c[2], c[3]);
#elif BW == 8
      *(__global uint2*)p = (uint2)(c[0], c[1]);
#else
      *(__global uint*)p = c[0];
#endif
    } else {
#pragma unroll
      for (int j = 0; j < NW; ++j) vstore4(as_uchar4(c[j]), 0, p + 4 * j);
    }
  } else {
#pragma unroll
    for (int i = 0; i < BW; ++i)
      if (i < n - x0) p[i] = o[i];
  }
}

#if defined(MPK)
__kernel void morph_u8(CIMG(s), IMG(d), int w, int h, int btype, uchar cval) {
  const int n = w * CH;
  const int x0 = get_global_id(0) * BW, y0 = get_global_id(1) * RY;
  if (x0 >= n || y0 >= h) return;
  const bool inner_x = x0 - HB >= 0 && x0 + BW + HB <= n;
  // Word loads and stores need the view's rows aligned to the access (x0 is a multiple of BW;
  // the halo words of 8 or 4 bytes sit at multiples of their size: BW >= HB).
  const bool aligned = ((s_off | (ulong)s_stride) & (BW - 1)) == 0;
  const bool dal = ((d_off | (ulong)d_stride) & (BW - 1)) == 0;
  // Row extremes of source rows y0 - AY + t at slot t % (KH + 1) (r2: gradient's other).
  uchar r[KH + 1][BW];
#if MPK_GRAD
  uchar r2[KH + 1][BW];
#define R2(t) r2[t]
#else
#define R2(t) r[t]  // unused
#endif
#pragma unroll
  for (int t = 0; t < KH - 1; ++t)
    mpk_hrow(s, s_off, s_stride, x0, y0 - AY + t, n, w, h, btype, cval, inner_x, aligned, r[t],
             R2(t));
#pragma unroll
  for (int o = 0; o < RY; o += 2) {
    if (y0 + o >= h) break;
    // Rows o + KH - 1 and o + KH (ring slots mod KH + 1; they held rows o - 2, o - 1).
#pragma unroll
    for (int t = o + KH - 1; t <= o + KH; ++t)
      mpk_hrow(s, s_off, s_stride, x0, y0 - AY + t, n, w, h, btype, cval, inner_x, aligned,
               r[t % (KH + 1)], R2(t % (KH + 1)));
    uchar out0[BW], out1[BW];
    mpk_vpair(r, o, IS_MAX, out0, out1);
#if MPK_GRAD
    uchar lo0[BW], lo1[BW];
    mpk_vpair(r2, o, !IS_MAX, lo0, lo1);
#pragma unroll
    for (int i = 0; i < BW; ++i) {
      out0[i] = (uchar)(out0[i] - lo0[i]);
      out1[i] = (uchar)(out1[i] - lo1[i]);
    }
#endif
    mpk_store(d, d_off, d_stride, x0, y0 + o, n, dal, out0);
    if (y0 + o + 1 >= h) break;
    mpk_store(d, d_off, d_stride, x0, y0 + o + 1, n, dal, out1);
  }
#undef R2
}
#endif  // MPK

// morph_u8_comp: open, close, tophat, blackhat (MPC: MorphOp's order, 2 3 5 6) of one u8
// channel with a centred odd window up to 5 x 5 in one launch, in morph_u8's shape (a
// work-item BW row bytes of RY rows, everything in registers), as core's sequence: the first
// pass's image E over the work-item's bytes plus the second pass's halo (HX = KW / 2 bytes
// either side, HY = KH / 2 rows above and below), E outside the image by the rule from E's
// own samples, the second pass over E, then arith's saturating sub for tophat / blackhat.
// - Rows: the row extremes (EXT1) of source rows y0 - 2 HY .. go through a ring of KH; E row
//   a is their column extreme while a lies in the image; an E row outside it is E at
//   border_index(a) (constant: cval), computed again from its KH source rows (only the
//   work-items at the top and bottom). Then E's row extremes (EXT2) into a ring of KH, and
//   each output row their column extreme.
// - Columns: E's bytes at positions outside the image (only in work-items within HX of
//   either end) are E's bytes at border_index(position), which lie in the work-item's E
//   (positions more than HX past the row's end feed no output inside it and are left).
//   wrap is not taken (its E reads the image's far side; the host sends it to core's passes).
// Built with -DMPC=2|3|5|6 -DKW= -DKH= (odd) -DAX=KW/2 -DAY=KH/2 -DCH=1 -DHB=4 -DBW= -DRY=
// -DIS_MAX= (EXT1's: 0 open, tophat; 1 close, blackhat) -DMPK_DIRECT=1.
#if defined(MPC)
#define HX (KW / 2)
#define HY (KH / 2)
#define EB (BW + 2 * HX)  // E's bytes a row: the work-item's and the second pass's halo

// e[i] = EXT1 over b[HB - 2 HX + i + j], j < KW, for i < EB (E's row extremes).
inline void mpc_hext1(const uchar* b, uchar* e) {
#pragma unroll
  for (int i = 0; i < EB; ++i) {
    uchar v = b[HB - 2 * HX + i];
#pragma unroll
    for (int j = 1; j < KW; ++j) v = mext(IS_MAX, v, b[HB - 2 * HX + i + j]);
    e[i] = v;
  }
}

// EXT1's row extremes of source row y over E's columns.
inline void mpc_hrow(CIMG(s), int x0, int y, int w, int h, int btype, uchar cval, bool inner_x,
                     bool aligned, uchar* e) {
  uint wv[NB / 4];
  mpk_row(s, s_off, s_stride, x0, y, w, w, h, btype, cval, inner_x, aligned, wv);
  uchar b[NB];
  mpk_bytes(wv, b);
  mpc_hext1(b, e);
}

__kernel void morph_u8_comp(CIMG(s), IMG(d), int w, int h, int btype, uchar cval) {
  const int x0 = get_global_id(0) * BW, y0 = get_global_id(1) * RY;
  if (x0 >= w || y0 >= h) return;
  const bool inner_x = x0 - HB >= 0 && x0 + BW + HB <= w;
  const bool aligned = ((s_off | (ulong)s_stride) & (BW - 1)) == 0;
  const bool dal = ((d_off | (ulong)d_stride) & (BW - 1)) == 0;
  const bool edge_x = x0 - HX < 0 || x0 + BW + HX > w;  // E positions outside the image
  uchar r1[KH][EB];  // EXT1 row extremes of source row y0 - 2 HY + u at u % KH
  uchar r2[KH][BW];  // EXT2 row extremes of E row y0 - HY + t at t % KH
#pragma unroll
  for (int u = 0; u < KH - 1; ++u)
    mpc_hrow(s, s_off, s_stride, x0, y0 - 2 * HY + u, w, h, btype, cval, inner_x, aligned,
             r1[u]);
#pragma unroll
  for (int t = 0; t < RY + 2 * HY; ++t) {
    // E row a = y0 - HY + t feeds output rows t - 2 HY .. t of the work-item.
    if (y0 + t - 2 * HY >= h) break;
    mpc_hrow(s, s_off, s_stride, x0, y0 - 2 * HY + t + KH - 1, w, h, btype, cval, inner_x,
             aligned, r1[(t + KH - 1) % KH]);
    const int a = y0 - HY + t;
    uchar e[EB];
    if (a >= 0 && a < h) {
#pragma unroll
      for (int i = 0; i < EB; ++i) {
        uchar v = r1[t % KH][i];
#pragma unroll
        for (int j = 1; j < KH; ++j) v = mext(IS_MAX, v, r1[(t + j) % KH][i]);
        e[i] = v;
      }
    } else {
      const int ea = border_index(a, h, btype);
#pragma unroll
      for (int i = 0; i < EB; ++i) e[i] = cval;
      if (ea >= 0) {
#pragma unroll
        for (int j = 0; j < KH; ++j) {
          uchar x[EB];
          mpc_hrow(s, s_off, s_stride, x0, ea - HY + j, w, h, btype, cval, inner_x, aligned, x);
#pragma unroll
          for (int i = 0; i < EB; ++i) e[i] = j == 0 ? x[i] : mext(IS_MAX, e[i], x[i]);
        }
      }
    }
    if (edge_x) {
#pragma unroll
      for (int q = 0; q < EB; ++q) {
        const int p = x0 - HX + q;
        if (p < 0 || (p >= w && p < w + HX)) {
          const int ep = border_index(p, w, btype);
          uchar v = cval;
          if (ep >= 0) {
            const int k = ep - (x0 - HX);  // in [0, EB) and inside the image (see above)
#pragma unroll
            for (int q2 = 0; q2 < EB; ++q2) v = q2 == k ? e[q2] : v;
          }
          e[q] = v;
        }
      }
    }
    // EXT2 over E's KW columns of each output byte.
#pragma unroll
    for (int i = 0; i < BW; ++i) {
      uchar v = e[i];
#pragma unroll
      for (int j = 1; j < KW; ++j) v = mext(!IS_MAX, v, e[i + j]);
      r2[t % KH][i] = v;
    }
    if (t >= 2 * HY) {
      const int o = t - 2 * HY, y = y0 + o;
      uchar out[BW];
#pragma unroll
      for (int i = 0; i < BW; ++i) {
        uchar v = r2[o % KH][i];
#pragma unroll
        for (int j = 1; j < KH; ++j) v = mext(!IS_MAX, v, r2[(o + j) % KH][i]);
        out[i] = v;
      }
#if MPC == 5 || MPC == 6
      // tophat: src - open, blackhat: close - src (saturating; the source row again: L1).
      uint wv[NB / 4];
      mpk_row(s, s_off, s_stride, x0, y, w, w, h, btype, cval, inner_x, aligned, wv);
      uchar b[NB];
      mpk_bytes(wv, b);
#pragma unroll
      for (int i = 0; i < BW; ++i)
        out[i] = MPC == 5 ? (uchar)(b[HB + i] - min(b[HB + i], out[i]))   // a - min(a, b):
                          : (uchar)(out[i] - min(out[i], b[HB + i]));  // sub_sat, 2 ops
#endif
      mpk_store(d, d_off, d_stride, x0, y, w, dal, out);
    }
  }
}
#endif  // MPC

// morph_u8_vh: the column pass of a large window on u8 (KH up to 63) for the two-pass
// schedule of PIXFLOW_OCL_MORPH=packed (morph_u8 with KH = 1 takes the rows): van Herk /
// Gil-Werman as morph_cols_vh (a work-item KH consecutive output rows, whose windows all hold
// source row c = y0 - ay + KH - 1: suffix extremes S[j] of rows y0 - ay + j .. c, then output
// j = ext(S[j], rows c + 1 .. c + j); 2 KH - 1 row loads for KH outputs, about 3 min / max a
// byte), on BW bytes of the row a work-item (4 or 8: one word load a row where the view is
// aligned, the channels do not matter to a column pass), a byte a register. Built with
// -DMPV=1 -DKH= -DBW= -DIS_MAX= (and the MPK helpers' -DKW=1 -DAX=0 -DCH=1 -DHB=4).
#if defined(MPV)
// Bytes x0 .. x0 + BW - 1 of the row at p (past the row's end 0).
inline void mpv_load(__global const uchar* p, int x0, int n, bool aligned, uchar* b) {
  uint c[NW];
  if (x0 + BW <= n && aligned) {
#if BW == 8
    const uint2 v = *(__global const uint2*)p;
    c[0] = v.s0, c[1] = v.s1;
#else
    c[0] = *(__global const uint*)p;
#endif
  } else if (x0 + BW <= n) {
#pragma unroll
    for (int j = 0; j < NW; ++j) c[j] = as_uint(vload4(0, p + 4 * j));
  } else {
#pragma unroll
    for (int j = 0; j < NW; ++j) {
      uint word = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (x0 + 4 * j + k < n) word |= (uint)p[4 * j + k] << (8 * k);
      c[j] = word;
    }
  }
#pragma unroll
  for (int q = 0; q < BW; ++q) b[q] = (uchar)(c[q / 4] >> (8 * (q % 4)));
}

// The same for row y through the rule (cval where it says so).
inline void mpv_row(CIMG(s), int x0, int y, int n, int h, int btype, uchar cval, bool aligned,
                    uchar* b) {
  const int sy = border_index(y, h, btype);
  if (sy < 0) {
#pragma unroll
    for (int q = 0; q < BW; ++q) b[q] = cval;
  } else {
    mpv_load(CROW(uchar, s, sy) + x0, x0, n, aligned, b);
  }
}

__kernel void morph_u8_vh(CIMG(s), IMG(d), int n, int h, int ay, int btype, uchar cval) {
  const int x0 = get_global_id(0) * BW, y0 = get_global_id(1) * KH;
  if (x0 >= n || y0 >= h) return;
  const bool aligned = ((s_off | (ulong)s_stride) & (BW - 1)) == 0;
  const bool dal = ((d_off | (ulong)d_stride) & (BW - 1)) == 0;
  const int a0 = y0 - ay, c = a0 + KH - 1;
  // Every row inside the image (most work-items): a row pointer stepped by the stride, no
  // border rule and no multiply a row.
  const bool inner_y = a0 >= 0 && c + KH - 1 < h;
  __global const uchar* pc = CROW(uchar, s, inner_y ? c : 0) + x0;
#define MPV_ROW(y, ptr, b)                                      \
  if (inner_y)                                                  \
    mpv_load(ptr, x0, n, aligned, b);                           \
  else                                                          \
    mpv_row(s, s_off, s_stride, x0, y, n, h, btype, cval, aligned, b)
  uchar suf[KH][BW];
  MPV_ROW(c, pc, suf[KH - 1]);
  __global const uchar* p = pc;
#pragma unroll
  for (int j = KH - 2; j >= 0; --j) {
    uchar b[BW];
    p -= s_stride;
    MPV_ROW(a0 + j, p, b);
#pragma unroll
    for (int i = 0; i < BW; ++i) suf[j][i] = mext(IS_MAX, suf[j + 1][i], b[i]);
  }
  mpk_store(d, d_off, d_stride, x0, y0, n, dal, suf[0]);
  uchar pre[BW];
  p = pc;
#pragma unroll
  for (int j = 1; j < KH; ++j) {
    if (y0 + j >= h) break;
    uchar b[BW], out[BW];
    p += s_stride;
    MPV_ROW(c + j, p, b);
#pragma unroll
    for (int i = 0; i < BW; ++i) {
      pre[i] = j == 1 ? b[i] : mext(IS_MAX, pre[i], b[i]);
      out[i] = mext(IS_MAX, suf[j][i], pre[i]);
    }
    mpk_store(d, d_off, d_stride, x0, y0 + j, n, dal, out);
  }
#undef MPV_ROW
}
#endif  // MPV
#endif  // MPK || MPC || MPV
