// median (docs/ops/median.md, src/ref/median.cpp): dst = element kw*kh/2 (ascending order) of
// the kw x kh window centred on the sample, samples outside the image by the border rule
// (constant: the border value saturated to the depth, passed in as cval). One work-item per
// output sample (x over width * channels, y over rows). Built per depth: T is the sample type,
// T_U8 / T_U16 / T_F32 tell which.
//
// Selection by counting, exact for any window: on unsigned keys that order the samples as the
// reference does (integers: the value; f32: totalOrder, src/base/numeric.hpp order_key with the
// sign bit flipped so that unsigned comparison keeps its order), the median is the largest key
// r with #{samples < r} <= n/2, found bit by bit from the top (KEY_BITS passes, each counting
// the window). Keys are equal only for identical bits, so the result is one sample's bits.
// Windows of up to SMALL_N samples are read once into private memory; larger ones (up to
// 255 x 255) are counted from the image on every pass, so private memory stays bounded.

#if defined(T_F32)
#define KEY_BITS 32
// order_key(v) ^ 0x80000000: totalOrder as unsigned keys (common.cl).
#define key_of(v) ((uint)order_key(v) ^ 0x80000000u)
#define from_key(k) from_order_key((int)((k) ^ 0x80000000u))
#elif defined(T_U8)
#define KEY_BITS 8
#define key_of(v) ((uint)(v))
#define from_key(k) ((uchar)(k))
#else
#define KEY_BITS 16
#define key_of(v) ((uint)(v))
#define from_key(k) ((ushort)(k))
#endif

#define SMALL_N 81

__kernel void median(CIMG(s), IMG(d), int w, int h, int ch, int kw, int kh, int btype, T cval) {
  const int i = get_global_id(0), y = get_global_id(1);
  if (i >= w * ch || y >= h) return;
  const int x = i / ch, c = i - x * ch;
  const int rx = kw / 2, ry = kh / 2, n = kw * kh, mid = n / 2;
  const uint ckey = key_of(cval);
  uint r = 0;
  if (n <= SMALL_N) {
    uint win[SMALL_N];
    int m = 0;
    for (int dy = -ry; dy <= ry; ++dy) {
      const int sy = border_index(y + dy, h, btype);
      for (int dx = -rx; dx <= rx; ++dx) {
        const int sx = border_index(x + dx, w, btype);
        win[m++] = (sy < 0 || sx < 0) ? ckey : key_of(CROW(T, s, sy)[sx * ch + c]);
      }
    }
    for (int b = KEY_BITS - 1; b >= 0; --b) {
      const uint t = r | (1u << b);
      int below = 0;
      for (int j = 0; j < n; ++j) below += win[j] < t ? 1 : 0;
      if (below <= mid) r = t;
    }
  } else {
    for (int b = KEY_BITS - 1; b >= 0; --b) {
      const uint t = r | (1u << b);
      const int cbelow = ckey < t ? 1 : 0;
      int below = 0;
      for (int dy = -ry; dy <= ry; ++dy) {
        const int sy = border_index(y + dy, h, btype);
        if (sy < 0) {  // a whole window row of the constant
          below += cbelow * kw;
          continue;
        }
        __global const T* row = CROW(T, s, sy);
        for (int dx = -rx; dx <= rx; ++dx) {
          const int sx = border_index(x + dx, w, btype);
          below += sx < 0 ? cbelow : (key_of(row[sx * ch + c]) < t ? 1 : 0);
        }
      }
      if (below <= mid) r = t;
    }
  }
  ROW(T, d, y)[i] = from_key(r);
}
