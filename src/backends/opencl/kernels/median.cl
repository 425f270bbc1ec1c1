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

// median_net: square windows K = 3, 5, 7 by min/max networks (the CPU SIMD median's,
// scripts/gen_median_networks.py): each window row's K samples around x form a run, sorted
// once per source row and shared by the K output rows whose window holds that row; K = 3
// takes the median of its 3 sorted runs (max of mins, median of medians, min of maxes),
// K = 5, 7 take pairs of output rows: their K - 1 shared runs merged once (pair_core) and
// each row's own run added (pair_final). The networks only compare and move, so the result
// is one sample's key, exactly the reference's (f32: totalOrder keys, as median above).
// A work-item computes VW consecutive samples of a row (vector lanes: OpenCL's min / max act
// lane by lane) for RY consecutive rows (RY even for K = 5, 7), keeping a ring of the last
// K + 1 sorted runs. Interior work-items load each run as K vectors (vloadVW at the K column
// offsets: the L1 cache serves the overlap); those whose window crosses the image's left or
// right edge gather lane by lane through the border rule. Built with -DK= -DVW= -DRY= (the
// lane vectors KV of common.cl).
#ifdef K
#define NET_R (K / 2)

// BEGIN generated networks (scripts/gen_median_networks.py --opencl): do not edit.
// k = 3: sorts the 3 runs c[0..2] lane by lane into rank order (3 compare-exchanges).
inline void net3_sort(KV* c) {
  { const KV a = c[1]; c[1] = min(a, c[2]); c[2] = max(a, c[2]); }
  { const KV a = c[0]; c[0] = min(a, c[1]); c[1] = max(a, c[1]); }
  { const KV a = c[2]; c[2] = min(a, c[1]); c[1] = max(a, c[1]); }
  const KV t[3] = {c[0], c[2], c[1]};
  for (int r = 0; r < 3; ++r) c[r] = t[r];
}
// v[c * 3 + r]: rank r of sorted run c; returns the median of the 9.
inline KV net3_window(KV* v) {
  v[3] = max(v[0], v[3]);
  v[6] = max(v[3], v[6]);
  v[2] = min(v[2], v[5]);
  v[2] = min(v[2], v[8]);
  { const KV a = v[1]; v[1] = min(a, v[4]); v[4] = max(a, v[4]); }
  v[4] = min(v[4], v[7]);
  v[4] = max(v[1], v[4]);
  { const KV a = v[6]; v[6] = min(a, v[4]); v[4] = max(a, v[4]); }
  v[4] = min(v[4], v[2]);
  v[4] = max(v[6], v[4]);
  return v[4];
}
// k = 5: sorts the 5 runs c[0..4] lane by lane into rank order (9 compare-exchanges).
inline void net5_sort(KV* c) {
  { const KV a = c[0]; c[0] = min(a, c[1]); c[1] = max(a, c[1]); }
  { const KV a = c[3]; c[3] = min(a, c[4]); c[4] = max(a, c[4]); }
  { const KV a = c[2]; c[2] = min(a, c[3]); c[3] = max(a, c[3]); }
  { const KV a = c[4]; c[4] = min(a, c[3]); c[3] = max(a, c[3]); }
  { const KV a = c[0]; c[0] = min(a, c[2]); c[2] = max(a, c[2]); }
  { const KV a = c[3]; c[3] = min(a, c[2]); c[2] = max(a, c[2]); }
  { const KV a = c[1]; c[1] = min(a, c[4]); c[4] = max(a, c[4]); }
  { const KV a = c[1]; c[1] = min(a, c[3]); c[3] = max(a, c[3]); }
  { const KV a = c[4]; c[4] = min(a, c[2]); c[2] = max(a, c[2]); }
  const KV t[5] = {c[0], c[1], c[3], c[4], c[2]};
  for (int r = 0; r < 5; ++r) c[r] = t[r];
}
// Pairs of output rows: v[r * 5 + i], rank i of shared sorted run r (r < 4);
// q: ranks 7..12 of their merge.
inline void net5_pair_core(KV* v, KV* q) {
  { const KV a = v[0]; v[0] = min(a, v[5]); v[5] = max(a, v[5]); }
  { const KV a = v[4]; v[4] = min(a, v[9]); v[9] = max(a, v[9]); }
  { const KV a = v[4]; v[4] = min(a, v[5]); v[5] = max(a, v[5]); }
  { const KV a = v[2]; v[2] = min(a, v[7]); v[7] = max(a, v[7]); }
  { const KV a = v[2]; v[2] = min(a, v[4]); v[4] = max(a, v[4]); }
  { const KV a = v[7]; v[7] = min(a, v[5]); v[5] = max(a, v[5]); }
  { const KV a = v[1]; v[1] = min(a, v[6]); v[6] = max(a, v[6]); }
  { const KV a = v[3]; v[3] = min(a, v[8]); v[8] = max(a, v[8]); }
  { const KV a = v[3]; v[3] = min(a, v[6]); v[6] = max(a, v[6]); }
  { const KV a = v[1]; v[1] = min(a, v[2]); v[2] = max(a, v[2]); }
  { const KV a = v[3]; v[3] = min(a, v[4]); v[4] = max(a, v[4]); }
  { const KV a = v[6]; v[6] = min(a, v[7]); v[7] = max(a, v[7]); }
  { const KV a = v[8]; v[8] = min(a, v[5]); v[5] = max(a, v[5]); }
  { const KV a = v[10]; v[10] = min(a, v[15]); v[15] = max(a, v[15]); }
  { const KV a = v[14]; v[14] = min(a, v[19]); v[19] = max(a, v[19]); }
  { const KV a = v[14]; v[14] = min(a, v[15]); v[15] = max(a, v[15]); }
  { const KV a = v[12]; v[12] = min(a, v[17]); v[17] = max(a, v[17]); }
  { const KV a = v[12]; v[12] = min(a, v[14]); v[14] = max(a, v[14]); }
  { const KV a = v[17]; v[17] = min(a, v[15]); v[15] = max(a, v[15]); }
  { const KV a = v[11]; v[11] = min(a, v[16]); v[16] = max(a, v[16]); }
  { const KV a = v[13]; v[13] = min(a, v[18]); v[18] = max(a, v[18]); }
  { const KV a = v[13]; v[13] = min(a, v[16]); v[16] = max(a, v[16]); }
  { const KV a = v[11]; v[11] = min(a, v[12]); v[12] = max(a, v[12]); }
  { const KV a = v[13]; v[13] = min(a, v[14]); v[14] = max(a, v[14]); }
  { const KV a = v[16]; v[16] = min(a, v[17]); v[17] = max(a, v[17]); }
  { const KV a = v[18]; v[18] = min(a, v[15]); v[15] = max(a, v[15]); }
  v[10] = max(v[0], v[10]);
  v[5] = min(v[5], v[15]);
  { const KV a = v[5]; v[5] = min(a, v[10]); v[10] = max(a, v[10]); }
  { const KV a = v[4]; v[4] = min(a, v[14]); v[14] = max(a, v[14]); }
  v[5] = max(v[4], v[5]);
  v[14] = min(v[14], v[10]);
  v[12] = max(v[2], v[12]);
  v[7] = min(v[7], v[17]);
  { const KV a = v[7]; v[7] = min(a, v[12]); v[12] = max(a, v[12]); }
  v[5] = max(v[7], v[5]);
  { const KV a = v[12]; v[12] = min(a, v[14]); v[14] = max(a, v[14]); }
  v[11] = max(v[1], v[11]);
  v[9] = min(v[9], v[19]);
  { const KV a = v[9]; v[9] = min(a, v[11]); v[11] = max(a, v[11]); }
  { const KV a = v[6]; v[6] = min(a, v[16]); v[16] = max(a, v[16]); }
  v[9] = max(v[6], v[9]);
  v[16] = min(v[16], v[11]);
  v[13] = max(v[3], v[13]);
  v[8] = min(v[8], v[18]);
  { const KV a = v[8]; v[8] = min(a, v[13]); v[13] = max(a, v[13]); }
  { const KV a = v[8]; v[8] = min(a, v[9]); v[9] = max(a, v[9]); }
  v[13] = min(v[13], v[16]);
  { const KV a = v[8]; v[8] = min(a, v[5]); v[5] = max(a, v[5]); }
  { const KV a = v[9]; v[9] = min(a, v[12]); v[12] = max(a, v[12]); }
  { const KV a = v[13]; v[13] = min(a, v[14]); v[14] = max(a, v[14]); }
  q[0] = v[8];
  q[1] = v[5];
  q[2] = v[9];
  q[3] = v[12];
  q[4] = v[13];
  q[5] = v[14];
}
// The median of the window: q and its own sorted run c (rank 5 of the two lists).
inline KV net5_pair_final(const KV* q, const KV* c) {
  KV m = q[0];
  m = max(m, min(q[1], c[4]));
  m = max(m, min(q[2], c[3]));
  m = max(m, min(q[3], c[2]));
  m = max(m, min(q[4], c[1]));
  m = max(m, min(q[5], c[0]));
  return m;
}
// k = 7: sorts the 7 runs c[0..6] lane by lane into rank order (16 compare-exchanges).
inline void net7_sort(KV* c) {
  { const KV a = c[1]; c[1] = min(a, c[2]); c[2] = max(a, c[2]); }
  { const KV a = c[0]; c[0] = min(a, c[1]); c[1] = max(a, c[1]); }
  { const KV a = c[2]; c[2] = min(a, c[1]); c[1] = max(a, c[1]); }
  { const KV a = c[3]; c[3] = min(a, c[4]); c[4] = max(a, c[4]); }
  { const KV a = c[5]; c[5] = min(a, c[6]); c[6] = max(a, c[6]); }
  { const KV a = c[3]; c[3] = min(a, c[5]); c[5] = max(a, c[5]); }
  { const KV a = c[4]; c[4] = min(a, c[6]); c[6] = max(a, c[6]); }
  { const KV a = c[4]; c[4] = min(a, c[5]); c[5] = max(a, c[5]); }
  { const KV a = c[0]; c[0] = min(a, c[3]); c[3] = max(a, c[3]); }
  { const KV a = c[1]; c[1] = min(a, c[5]); c[5] = max(a, c[5]); }
  { const KV a = c[1]; c[1] = min(a, c[3]); c[3] = max(a, c[3]); }
  { const KV a = c[2]; c[2] = min(a, c[4]); c[4] = max(a, c[4]); }
  { const KV a = c[6]; c[6] = min(a, c[4]); c[4] = max(a, c[4]); }
  { const KV a = c[2]; c[2] = min(a, c[1]); c[1] = max(a, c[1]); }
  { const KV a = c[6]; c[6] = min(a, c[3]); c[3] = max(a, c[3]); }
  { const KV a = c[4]; c[4] = min(a, c[5]); c[5] = max(a, c[5]); }
  const KV t[7] = {c[0], c[2], c[1], c[6], c[3], c[4], c[5]};
  for (int r = 0; r < 7; ++r) c[r] = t[r];
}
// Pairs of output rows: v[r * 7 + i], rank i of shared sorted run r (r < 6);
// q: ranks 17..24 of their merge.
inline void net7_pair_core(KV* v, KV* q) {
  { const KV a = v[0]; v[0] = min(a, v[7]); v[7] = max(a, v[7]); }
  { const KV a = v[4]; v[4] = min(a, v[11]); v[11] = max(a, v[11]); }
  { const KV a = v[4]; v[4] = min(a, v[7]); v[7] = max(a, v[7]); }
  { const KV a = v[2]; v[2] = min(a, v[9]); v[9] = max(a, v[9]); }
  { const KV a = v[6]; v[6] = min(a, v[13]); v[13] = max(a, v[13]); }
  { const KV a = v[6]; v[6] = min(a, v[9]); v[9] = max(a, v[9]); }
  { const KV a = v[2]; v[2] = min(a, v[4]); v[4] = max(a, v[4]); }
  { const KV a = v[6]; v[6] = min(a, v[7]); v[7] = max(a, v[7]); }
  { const KV a = v[9]; v[9] = min(a, v[11]); v[11] = max(a, v[11]); }
  { const KV a = v[1]; v[1] = min(a, v[8]); v[8] = max(a, v[8]); }
  { const KV a = v[5]; v[5] = min(a, v[12]); v[12] = max(a, v[12]); }
  { const KV a = v[5]; v[5] = min(a, v[8]); v[8] = max(a, v[8]); }
  { const KV a = v[3]; v[3] = min(a, v[10]); v[10] = max(a, v[10]); }
  { const KV a = v[3]; v[3] = min(a, v[5]); v[5] = max(a, v[5]); }
  { const KV a = v[10]; v[10] = min(a, v[8]); v[8] = max(a, v[8]); }
  { const KV a = v[1]; v[1] = min(a, v[2]); v[2] = max(a, v[2]); }
  { const KV a = v[3]; v[3] = min(a, v[4]); v[4] = max(a, v[4]); }
  { const KV a = v[5]; v[5] = min(a, v[6]); v[6] = max(a, v[6]); }
  { const KV a = v[10]; v[10] = min(a, v[7]); v[7] = max(a, v[7]); }
  { const KV a = v[8]; v[8] = min(a, v[9]); v[9] = max(a, v[9]); }
  { const KV a = v[12]; v[12] = min(a, v[11]); v[11] = max(a, v[11]); }
  { const KV a = v[14]; v[14] = min(a, v[21]); v[21] = max(a, v[21]); }
  { const KV a = v[18]; v[18] = min(a, v[25]); v[25] = max(a, v[25]); }
  { const KV a = v[18]; v[18] = min(a, v[21]); v[21] = max(a, v[21]); }
  { const KV a = v[16]; v[16] = min(a, v[23]); v[23] = max(a, v[23]); }
  { const KV a = v[20]; v[20] = min(a, v[27]); v[27] = max(a, v[27]); }
  { const KV a = v[20]; v[20] = min(a, v[23]); v[23] = max(a, v[23]); }
  { const KV a = v[16]; v[16] = min(a, v[18]); v[18] = max(a, v[18]); }
  { const KV a = v[20]; v[20] = min(a, v[21]); v[21] = max(a, v[21]); }
  { const KV a = v[23]; v[23] = min(a, v[25]); v[25] = max(a, v[25]); }
  { const KV a = v[15]; v[15] = min(a, v[22]); v[22] = max(a, v[22]); }
  { const KV a = v[19]; v[19] = min(a, v[26]); v[26] = max(a, v[26]); }
  { const KV a = v[19]; v[19] = min(a, v[22]); v[22] = max(a, v[22]); }
  { const KV a = v[17]; v[17] = min(a, v[24]); v[24] = max(a, v[24]); }
  { const KV a = v[17]; v[17] = min(a, v[19]); v[19] = max(a, v[19]); }
  { const KV a = v[24]; v[24] = min(a, v[22]); v[22] = max(a, v[22]); }
  { const KV a = v[15]; v[15] = min(a, v[16]); v[16] = max(a, v[16]); }
  { const KV a = v[17]; v[17] = min(a, v[18]); v[18] = max(a, v[18]); }
  { const KV a = v[19]; v[19] = min(a, v[20]); v[20] = max(a, v[20]); }
  { const KV a = v[24]; v[24] = min(a, v[21]); v[21] = max(a, v[21]); }
  { const KV a = v[22]; v[22] = min(a, v[23]); v[23] = max(a, v[23]); }
  { const KV a = v[26]; v[26] = min(a, v[25]); v[25] = max(a, v[25]); }
  { const KV a = v[28]; v[28] = min(a, v[35]); v[35] = max(a, v[35]); }
  { const KV a = v[32]; v[32] = min(a, v[39]); v[39] = max(a, v[39]); }
  { const KV a = v[32]; v[32] = min(a, v[35]); v[35] = max(a, v[35]); }
  { const KV a = v[30]; v[30] = min(a, v[37]); v[37] = max(a, v[37]); }
  { const KV a = v[34]; v[34] = min(a, v[41]); v[41] = max(a, v[41]); }
  { const KV a = v[34]; v[34] = min(a, v[37]); v[37] = max(a, v[37]); }
  { const KV a = v[30]; v[30] = min(a, v[32]); v[32] = max(a, v[32]); }
  { const KV a = v[34]; v[34] = min(a, v[35]); v[35] = max(a, v[35]); }
  { const KV a = v[37]; v[37] = min(a, v[39]); v[39] = max(a, v[39]); }
  { const KV a = v[29]; v[29] = min(a, v[36]); v[36] = max(a, v[36]); }
  { const KV a = v[33]; v[33] = min(a, v[40]); v[40] = max(a, v[40]); }
  { const KV a = v[33]; v[33] = min(a, v[36]); v[36] = max(a, v[36]); }
  { const KV a = v[31]; v[31] = min(a, v[38]); v[38] = max(a, v[38]); }
  { const KV a = v[31]; v[31] = min(a, v[33]); v[33] = max(a, v[33]); }
  { const KV a = v[38]; v[38] = min(a, v[36]); v[36] = max(a, v[36]); }
  { const KV a = v[29]; v[29] = min(a, v[30]); v[30] = max(a, v[30]); }
  { const KV a = v[31]; v[31] = min(a, v[32]); v[32] = max(a, v[32]); }
  { const KV a = v[33]; v[33] = min(a, v[34]); v[34] = max(a, v[34]); }
  { const KV a = v[38]; v[38] = min(a, v[35]); v[35] = max(a, v[35]); }
  { const KV a = v[36]; v[36] = min(a, v[37]); v[37] = max(a, v[37]); }
  { const KV a = v[40]; v[40] = min(a, v[39]); v[39] = max(a, v[39]); }
  { const KV a = v[0]; v[0] = min(a, v[14]); v[14] = max(a, v[14]); }
  { const KV a = v[7]; v[7] = min(a, v[21]); v[21] = max(a, v[21]); }
  { const KV a = v[7]; v[7] = min(a, v[14]); v[14] = max(a, v[14]); }
  { const KV a = v[4]; v[4] = min(a, v[18]); v[18] = max(a, v[18]); }
  { const KV a = v[11]; v[11] = min(a, v[25]); v[25] = max(a, v[25]); }
  { const KV a = v[11]; v[11] = min(a, v[18]); v[18] = max(a, v[18]); }
  { const KV a = v[4]; v[4] = min(a, v[7]); v[7] = max(a, v[7]); }
  { const KV a = v[11]; v[11] = min(a, v[14]); v[14] = max(a, v[14]); }
  { const KV a = v[18]; v[18] = min(a, v[21]); v[21] = max(a, v[21]); }
  { const KV a = v[2]; v[2] = min(a, v[16]); v[16] = max(a, v[16]); }
  { const KV a = v[9]; v[9] = min(a, v[23]); v[23] = max(a, v[23]); }
  { const KV a = v[9]; v[9] = min(a, v[16]); v[16] = max(a, v[16]); }
  { const KV a = v[6]; v[6] = min(a, v[20]); v[20] = max(a, v[20]); }
  { const KV a = v[6]; v[6] = min(a, v[9]); v[9] = max(a, v[9]); }
  { const KV a = v[20]; v[20] = min(a, v[16]); v[16] = max(a, v[16]); }
  { const KV a = v[2]; v[2] = min(a, v[4]); v[4] = max(a, v[4]); }
  { const KV a = v[6]; v[6] = min(a, v[7]); v[7] = max(a, v[7]); }
  { const KV a = v[9]; v[9] = min(a, v[11]); v[11] = max(a, v[11]); }
  { const KV a = v[20]; v[20] = min(a, v[14]); v[14] = max(a, v[14]); }
  { const KV a = v[16]; v[16] = min(a, v[18]); v[18] = max(a, v[18]); }
  { const KV a = v[23]; v[23] = min(a, v[21]); v[21] = max(a, v[21]); }
  { const KV a = v[1]; v[1] = min(a, v[15]); v[15] = max(a, v[15]); }
  { const KV a = v[8]; v[8] = min(a, v[22]); v[22] = max(a, v[22]); }
  { const KV a = v[8]; v[8] = min(a, v[15]); v[15] = max(a, v[15]); }
  { const KV a = v[5]; v[5] = min(a, v[19]); v[19] = max(a, v[19]); }
  { const KV a = v[13]; v[13] = min(a, v[27]); v[27] = max(a, v[27]); }
  { const KV a = v[13]; v[13] = min(a, v[19]); v[19] = max(a, v[19]); }
  { const KV a = v[5]; v[5] = min(a, v[8]); v[8] = max(a, v[8]); }
  { const KV a = v[13]; v[13] = min(a, v[15]); v[15] = max(a, v[15]); }
  { const KV a = v[19]; v[19] = min(a, v[22]); v[22] = max(a, v[22]); }
  { const KV a = v[3]; v[3] = min(a, v[17]); v[17] = max(a, v[17]); }
  { const KV a = v[12]; v[12] = min(a, v[26]); v[26] = max(a, v[26]); }
  { const KV a = v[12]; v[12] = min(a, v[17]); v[17] = max(a, v[17]); }
  { const KV a = v[10]; v[10] = min(a, v[24]); v[24] = max(a, v[24]); }
  { const KV a = v[10]; v[10] = min(a, v[12]); v[12] = max(a, v[12]); }
  { const KV a = v[24]; v[24] = min(a, v[17]); v[17] = max(a, v[17]); }
  { const KV a = v[3]; v[3] = min(a, v[5]); v[5] = max(a, v[5]); }
  { const KV a = v[10]; v[10] = min(a, v[8]); v[8] = max(a, v[8]); }
  { const KV a = v[12]; v[12] = min(a, v[13]); v[13] = max(a, v[13]); }
  { const KV a = v[24]; v[24] = min(a, v[15]); v[15] = max(a, v[15]); }
  { const KV a = v[17]; v[17] = min(a, v[19]); v[19] = max(a, v[19]); }
  { const KV a = v[26]; v[26] = min(a, v[22]); v[22] = max(a, v[22]); }
  { const KV a = v[1]; v[1] = min(a, v[2]); v[2] = max(a, v[2]); }
  { const KV a = v[3]; v[3] = min(a, v[4]); v[4] = max(a, v[4]); }
  { const KV a = v[5]; v[5] = min(a, v[6]); v[6] = max(a, v[6]); }
  { const KV a = v[10]; v[10] = min(a, v[7]); v[7] = max(a, v[7]); }
  { const KV a = v[8]; v[8] = min(a, v[9]); v[9] = max(a, v[9]); }
  { const KV a = v[12]; v[12] = min(a, v[11]); v[11] = max(a, v[11]); }
  { const KV a = v[13]; v[13] = min(a, v[20]); v[20] = max(a, v[20]); }
  { const KV a = v[24]; v[24] = min(a, v[14]); v[14] = max(a, v[14]); }
  { const KV a = v[15]; v[15] = min(a, v[16]); v[16] = max(a, v[16]); }
  { const KV a = v[17]; v[17] = min(a, v[18]); v[18] = max(a, v[18]); }
  { const KV a = v[19]; v[19] = min(a, v[23]); v[23] = max(a, v[23]); }
  { const KV a = v[26]; v[26] = min(a, v[21]); v[21] = max(a, v[21]); }
  { const KV a = v[22]; v[22] = min(a, v[25]); v[25] = max(a, v[25]); }
  v[28] = max(v[0], v[28]);
  v[28] = max(v[14], v[28]);
  v[35] = max(v[7], v[35]);
  v[21] = min(v[21], v[35]);
  v[21] = min(v[21], v[28]);
  v[32] = max(v[4], v[32]);
  v[18] = min(v[18], v[32]);
  v[11] = min(v[11], v[39]);
  v[18] = max(v[11], v[18]);
  { const KV a = v[18]; v[18] = min(a, v[21]); v[21] = max(a, v[21]); }
  v[30] = max(v[2], v[30]);
  { const KV a = v[16]; v[16] = min(a, v[30]); v[30] = max(a, v[30]); }
  { const KV a = v[9]; v[9] = min(a, v[37]); v[37] = max(a, v[37]); }
  v[25] = min(v[25], v[37]);
  v[16] = max(v[9], v[16]);
  v[25] = min(v[25], v[30]);
  v[34] = max(v[6], v[34]);
  v[23] = min(v[23], v[34]);
  { const KV a = v[20]; v[20] = min(a, v[23]); v[23] = max(a, v[23]); }
  v[16] = max(v[20], v[16]);
  v[23] = min(v[23], v[25]);
  { const KV a = v[16]; v[16] = min(a, v[18]); v[18] = max(a, v[18]); }
  { const KV a = v[23]; v[23] = min(a, v[21]); v[21] = max(a, v[21]); }
  v[29] = max(v[1], v[29]);
  { const KV a = v[15]; v[15] = min(a, v[29]); v[29] = max(a, v[29]); }
  { const KV a = v[8]; v[8] = min(a, v[36]); v[36] = max(a, v[36]); }
  v[22] = min(v[22], v[36]);
  v[15] = max(v[8], v[15]);
  v[22] = min(v[22], v[29]);
  v[33] = max(v[5], v[33]);
  v[19] = min(v[19], v[33]);
  v[13] = min(v[13], v[41]);
  { const KV a = v[13]; v[13] = min(a, v[19]); v[19] = max(a, v[19]); }
  v[15] = max(v[13], v[15]);
  { const KV a = v[19]; v[19] = min(a, v[22]); v[22] = max(a, v[22]); }
  v[31] = max(v[3], v[31]);
  { const KV a = v[17]; v[17] = min(a, v[31]); v[31] = max(a, v[31]); }
  { const KV a = v[12]; v[12] = min(a, v[40]); v[40] = max(a, v[40]); }
  v[27] = min(v[27], v[40]);
  v[17] = max(v[12], v[17]);
  v[27] = min(v[27], v[31]);
  v[38] = max(v[10], v[38]);
  v[26] = min(v[26], v[38]);
  { const KV a = v[24]; v[24] = min(a, v[26]); v[26] = max(a, v[26]); }
  { const KV a = v[24]; v[24] = min(a, v[17]); v[17] = max(a, v[17]); }
  v[26] = min(v[26], v[27]);
  v[15] = max(v[24], v[15]);
  { const KV a = v[17]; v[17] = min(a, v[19]); v[19] = max(a, v[19]); }
  v[26] = min(v[26], v[22]);
  { const KV a = v[15]; v[15] = min(a, v[16]); v[16] = max(a, v[16]); }
  { const KV a = v[17]; v[17] = min(a, v[18]); v[18] = max(a, v[18]); }
  { const KV a = v[19]; v[19] = min(a, v[23]); v[23] = max(a, v[23]); }
  { const KV a = v[26]; v[26] = min(a, v[21]); v[21] = max(a, v[21]); }
  q[0] = v[15];
  q[1] = v[16];
  q[2] = v[17];
  q[3] = v[18];
  q[4] = v[19];
  q[5] = v[23];
  q[6] = v[26];
  q[7] = v[21];
}
// The median of the window: q and its own sorted run c (rank 7 of the two lists).
inline KV net7_pair_final(const KV* q, const KV* c) {
  KV m = q[0];
  m = max(m, min(q[1], c[6]));
  m = max(m, min(q[2], c[5]));
  m = max(m, min(q[3], c[4]));
  m = max(m, min(q[4], c[3]));
  m = max(m, min(q[5], c[2]));
  m = max(m, min(q[6], c[1]));
  m = max(m, min(q[7], c[0]));
  return m;
}
// END generated networks

// Run of source row y (any y: the border rule maps it) for the lanes i0 .. i0 + VW - 1 (lanes
// past the row's end repeat its last sample; they are not stored), sorted.
inline void load_run(KV* run, CIMG(s), int i0, int y, int n, int w, int h, int ch, int btype,
                     KS ckey, bool inner_x) {
  const int sy = border_index(y, h, btype);
  if (sy < 0) {
    for (int j = 0; j < K; ++j) run[j] = (KV)(ckey);
    return;
  }
  __global const T* row = CROW(T, s, sy);
  if (inner_x) {
#pragma unroll
    for (int j = 0; j < K; ++j) run[j] = key_v(VLOAD(row + i0 + (j - NET_R) * ch));
  } else {
    KS lane[VW];
#pragma unroll
    for (int j = 0; j < K; ++j) {
      for (int l = 0; l < VW; ++l) {
        const int i = min(i0 + l, n - 1), x = i / ch, c = i - x * ch;
        const int sx = border_index(x + j - NET_R, w, btype);
        lane[l] = sx < 0 ? ckey : key_s(row[sx * ch + c]);
      }
      run[j] = VLOAD(lane);
    }
  }
  CAT(CAT(net, K), _sort)(run);
}

inline void store_out(KV m, IMG(d), int i0, int y, int n) {
  __global T* out = ROW(T, d, y) + i0;
  if (i0 + VW <= n) {
    VSTORE(from_key_v(m), out);
  } else {
    KS lane[VW];
    VSTORE(m, lane);
    for (int l = 0; l < n - i0; ++l) out[l] = from_key_s(lane[l]);
  }
}

__kernel void median_net(CIMG(s), IMG(d), int w, int h, int ch, int btype, T cval) {
  const int n = w * ch;
  const int i0 = get_global_id(0) * VW, y0 = get_global_id(1) * RY;
  if (i0 >= n || y0 >= h) return;
  const bool inner_x = i0 - NET_R * ch >= 0 && i0 + VW - 1 + NET_R * ch < n;
  const KS ckey = key_s(cval);
  KV ring[K + 1][K];  // sorted runs of source rows y0 - R + j at j % (K + 1)
#if K == 3
  load_run(ring[0], s, s_off, s_stride, i0, y0 - 1, n, w, h, ch, btype, ckey, inner_x);
  load_run(ring[1], s, s_off, s_stride, i0, y0, n, w, h, ch, btype, ckey, inner_x);
#pragma unroll
  for (int o = 0; o < RY; ++o) {
    if (y0 + o >= h) break;
    load_run(ring[(o + 2) % 4], s, s_off, s_stride, i0, y0 + o + 1, n, w, h, ch, btype, ckey,
             inner_x);
    KV v[9];
#pragma unroll
    for (int r = 0; r < 3; ++r)
#pragma unroll
      for (int j = 0; j < 3; ++j) v[r * 3 + j] = ring[(o + r) % 4][j];
    store_out(net3_window(v), d, d_off, d_stride, i0, y0 + o, n);
  }
#else
#pragma unroll
  for (int j = 0; j < K - 1; ++j)
    load_run(ring[j], s, s_off, s_stride, i0, y0 - NET_R + j, n, w, h, ch, btype, ckey, inner_x);
#pragma unroll
  for (int p = 0; p < RY; p += 2) {
    const int y = y0 + p;  // the pair y, y + 1: source rows y - R .. y + 1 + R
    if (y >= h) break;
    load_run(ring[(p + K - 1) % (K + 1)], s, s_off, s_stride, i0, y - NET_R + K - 1, n, w, h, ch,
             btype, ckey, inner_x);
    load_run(ring[(p + K) % (K + 1)], s, s_off, s_stride, i0, y - NET_R + K, n, w, h, ch, btype,
             ckey, inner_x);
    KV v[(K - 1) * K], q[K + 1];
#pragma unroll
    for (int r = 0; r < K - 1; ++r)
#pragma unroll
      for (int j = 0; j < K; ++j) v[r * K + j] = ring[(p + 1 + r) % (K + 1)][j];
    CAT(CAT(net, K), _pair_core)(v, q);
    store_out(CAT(CAT(net, K), _pair_final)(q, ring[p % (K + 1)]), d, d_off, d_stride, i0, y, n);
    if (y + 1 < h)
      store_out(CAT(CAT(net, K), _pair_final)(q, ring[(p + K) % (K + 1)]), d, d_off, d_stride, i0,
                y + 1, n);
  }
#endif
}
#endif  // K
