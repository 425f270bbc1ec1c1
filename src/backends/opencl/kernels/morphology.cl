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
