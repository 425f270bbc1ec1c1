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
//
// Lane types (median.cpp's switch): KS / KV of common.cl (int, uchar / ushort, or ushort keys of
// u8 with -DKEY16), the networks' KMIN / KMAX OpenCL's min / max; with ushort keys and
// -DPIXFLOW_PTX_U16X2 (NVIDIA, sm_90 and later) KMIN / KMAX take the lanes two at a time, as
// 32-bit words, by PTX min.u16x2 / max.u16x2 (Hopper's VIMNMX.U16x2): one instruction for two
// lanes where NVIDIA's compiler otherwise emits one min.u16 a lane.
//
// -DWORDS (u8, one channel; VW = 4 or 8): the word kernel. A work-item's samples in quads
// i .. i + 3 (i = i0 + 4q), each quad two 32-bit words of two 16-bit keys, as the CUDA packed
// median (src/backends/cuda/median_u8_packed.hpp): lane word A = samples (i, i + 2), B = (i + 1,
// i + 3), each key = sample << 8 | the byte before it. Keys order as their high bytes do (ties
// broken by the low byte), so the key of rank r has the sample of rank r in its high byte: the
// median is exact. The 4 bytes of the row at i + t - 1 are, read as a little-endian word, the
// keys of samples i + t and i + t + 2: column t of A and column t - 1 of B. So a row's K + 1
// words W(t), t = -R .. R + 1, give A's columns W(-R .. R) and B's W(-R + 1 .. R + 1): the
// K - 1 shared are sorted once (netK_sort_words) and each word's own inserted. Interior
// work-items read the words with 3 aligned 32-bit loads a quad and funnel shifts (-DALIGNED4:
// the views' offsets and strides are multiples of 4) or vload4 at any offset; edge work-items
// gather key by key through the border rule (low byte 0: the order is the same).
#ifdef K
#define NET_R (K / 2)

#if defined(PIXFLOW_PTX_U16X2)
inline uint pmin2(uint a, uint b) {
  uint r;
  __asm__("min.u16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
inline uint pmax2(uint a, uint b) {
  uint r;
  __asm__("max.u16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
#else
inline uint pmin2(uint a, uint b) {
  return as_uint(min(as_ushort2(a), as_ushort2(b)));
}
inline uint pmax2(uint a, uint b) {
  return as_uint(max(as_ushort2(a), as_ushort2(b)));
}
#endif

#if defined(WORDS)
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define NQ (VW / 4)
typedef uint KS;  // a lane word: two keys
#define key_s(v) (((uint)(v) << 8) * 0x10001u)
#if NQ == 1
typedef uint KH;   // the shared columns' words of the quads
typedef uint2 KV;  // A, B
#define LW 2       // lane words a work-item
#define SPREAD(h) ((KV)(h))
inline KH HMIN(KH a, KH b) {
  return pmin2(a, b);
}
inline KH HMAX(KH a, KH b) {
  return pmax2(a, b);
}
inline KV KMIN(KV a, KV b) {
  return (KV)(pmin2(a.x, b.x), pmin2(a.y, b.y));
}
inline KV KMAX(KV a, KV b) {
  return (KV)(pmax2(a.x, b.x), pmax2(a.y, b.y));
}
#elif NQ == 2
typedef uint2 KH;
typedef uint4 KV;  // A, B of quad 0, A, B of quad 1
#define LW 4
#define SPREAD(h) ((h).xxyy)
inline KH HMIN(KH a, KH b) {
  return (KH)(pmin2(a.x, b.x), pmin2(a.y, b.y));
}
inline KH HMAX(KH a, KH b) {
  return (KH)(pmax2(a.x, b.x), pmax2(a.y, b.y));
}
inline KV KMIN(KV a, KV b) {
  return (KV)(pmin2(a.x, b.x), pmin2(a.y, b.y), pmin2(a.z, b.z), pmin2(a.w, b.w));
}
inline KV KMAX(KV a, KV b) {
  return (KV)(pmax2(a.x, b.x), pmax2(a.y, b.y), pmax2(a.z, b.z), pmax2(a.w, b.w));
}
#else
#error "WORDS takes VW = 4 or 8"
#endif
#elif defined(PIXFLOW_PTX_U16X2) && defined(KEYS_U16) && VW >= 2
// ushort lanes two at a time: KV = ushortVW as VW / 2 words.
#if VW == 2
#define UW uint
#define AS_UW as_uint
#define PAIRS(f, r, a, b) r = f(a, b)
#elif VW == 4
#define UW uint2
#define AS_UW as_uint2
#define PAIRS(f, r, a, b) r = (UW)(f(a.s0, b.s0), f(a.s1, b.s1))
#elif VW == 8
#define UW uint4
#define AS_UW as_uint4
#define PAIRS(f, r, a, b) r = (UW)(f(a.s0, b.s0), f(a.s1, b.s1), f(a.s2, b.s2), f(a.s3, b.s3))
#else
#define UW uint8
#define AS_UW as_uint8
#define PAIRS(f, r, a, b)                                                             \
  r = (UW)(f(a.s0, b.s0), f(a.s1, b.s1), f(a.s2, b.s2), f(a.s3, b.s3), f(a.s4, b.s4), \
           f(a.s5, b.s5), f(a.s6, b.s6), f(a.s7, b.s7))
#endif
inline KV KMIN(KV a, KV b) {
  const UW x = AS_UW(a), y = AS_UW(b);
  UW r;
  PAIRS(pmin2, r, x, y);
  return CAT(as_ushort, VW)(r);
}
inline KV KMAX(KV a, KV b) {
  const UW x = AS_UW(a), y = AS_UW(b);
  UW r;
  PAIRS(pmax2, r, x, y);
  return CAT(as_ushort, VW)(r);
}
#else
#define KMIN min
#define KMAX max
#endif

// BEGIN generated networks (scripts/gen_median_networks.py --opencl): do not edit.
// k = 3: sorts the 3 runs c[0..2] lane by lane into rank order (3 compare-exchanges).
inline void net3_sort(KV* c) {
  { const KV a = c[1]; c[1] = KMIN(a, c[2]); c[2] = KMAX(a, c[2]); }
  { const KV a = c[0]; c[0] = KMIN(a, c[1]); c[1] = KMAX(a, c[1]); }
  { const KV a = c[2]; c[2] = KMIN(a, c[1]); c[1] = KMAX(a, c[1]); }
  const KV t[3] = {c[0], c[2], c[1]};
  for (int r = 0; r < 3; ++r) c[r] = t[r];
}
// k = 3, word kernel (WORDS): the runs of the lane words A (.x / .xz) and B (.y / .w), whose
// windows share 2 columns: the shared s[0..1] sorted once (1 compare-exchanges on
// KH), then A's own column x.x and B's x.y inserted (4 min/max on KV): c, rank order.
#ifdef WORDS
inline void net3_sort_words(KH* s, KV x, KV* c) {
  { const KH a = s[0]; s[0] = HMIN(a, s[1]); s[1] = HMAX(a, s[1]); }
  c[0] = KMIN(SPREAD(s[0]), x);
  c[1] = KMAX(SPREAD(s[0]), KMIN(SPREAD(s[1]), x));
  c[2] = KMAX(SPREAD(s[1]), x);
}
#endif
// v[c * 3 + r]: rank r of sorted run c; returns the median of the 9.
inline KV net3_window(KV* v) {
  v[3] = KMAX(v[0], v[3]);
  v[6] = KMAX(v[3], v[6]);
  v[2] = KMIN(v[2], v[5]);
  v[2] = KMIN(v[2], v[8]);
  { const KV a = v[1]; v[1] = KMIN(a, v[4]); v[4] = KMAX(a, v[4]); }
  v[4] = KMIN(v[4], v[7]);
  v[4] = KMAX(v[1], v[4]);
  { const KV a = v[6]; v[6] = KMIN(a, v[4]); v[4] = KMAX(a, v[4]); }
  v[4] = KMIN(v[4], v[2]);
  v[4] = KMAX(v[6], v[4]);
  return v[4];
}
// k = 5: sorts the 5 runs c[0..4] lane by lane into rank order (9 compare-exchanges).
inline void net5_sort(KV* c) {
  { const KV a = c[0]; c[0] = KMIN(a, c[1]); c[1] = KMAX(a, c[1]); }
  { const KV a = c[3]; c[3] = KMIN(a, c[4]); c[4] = KMAX(a, c[4]); }
  { const KV a = c[2]; c[2] = KMIN(a, c[3]); c[3] = KMAX(a, c[3]); }
  { const KV a = c[4]; c[4] = KMIN(a, c[3]); c[3] = KMAX(a, c[3]); }
  { const KV a = c[0]; c[0] = KMIN(a, c[2]); c[2] = KMAX(a, c[2]); }
  { const KV a = c[3]; c[3] = KMIN(a, c[2]); c[2] = KMAX(a, c[2]); }
  { const KV a = c[1]; c[1] = KMIN(a, c[4]); c[4] = KMAX(a, c[4]); }
  { const KV a = c[1]; c[1] = KMIN(a, c[3]); c[3] = KMAX(a, c[3]); }
  { const KV a = c[4]; c[4] = KMIN(a, c[2]); c[2] = KMAX(a, c[2]); }
  const KV t[5] = {c[0], c[1], c[3], c[4], c[2]};
  for (int r = 0; r < 5; ++r) c[r] = t[r];
}
// k = 5, word kernel (WORDS): the runs of the lane words A (.x / .xz) and B (.y / .w), whose
// windows share 4 columns: the shared s[0..3] sorted once (5 compare-exchanges on
// KH), then A's own column x.x and B's x.y inserted (8 min/max on KV): c, rank order.
#ifdef WORDS
inline void net5_sort_words(KH* s, KV x, KV* c) {
  { const KH a = s[0]; s[0] = HMIN(a, s[1]); s[1] = HMAX(a, s[1]); }
  { const KH a = s[2]; s[2] = HMIN(a, s[3]); s[3] = HMAX(a, s[3]); }
  { const KH a = s[0]; s[0] = HMIN(a, s[2]); s[2] = HMAX(a, s[2]); }
  { const KH a = s[1]; s[1] = HMIN(a, s[3]); s[3] = HMAX(a, s[3]); }
  { const KH a = s[1]; s[1] = HMIN(a, s[2]); s[2] = HMAX(a, s[2]); }
  c[0] = KMIN(SPREAD(s[0]), x);
  c[1] = KMAX(SPREAD(s[0]), KMIN(SPREAD(s[1]), x));
  c[2] = KMAX(SPREAD(s[1]), KMIN(SPREAD(s[2]), x));
  c[3] = KMAX(SPREAD(s[2]), KMIN(SPREAD(s[3]), x));
  c[4] = KMAX(SPREAD(s[3]), x);
}
#endif
// Pairs of output rows: v[r * 5 + i], rank i of shared sorted run r (r < 4);
// q: ranks 7..12 of their merge.
inline void net5_pair_core(KV* v, KV* q) {
  { const KV a = v[0]; v[0] = KMIN(a, v[5]); v[5] = KMAX(a, v[5]); }
  { const KV a = v[4]; v[4] = KMIN(a, v[9]); v[9] = KMAX(a, v[9]); }
  { const KV a = v[4]; v[4] = KMIN(a, v[5]); v[5] = KMAX(a, v[5]); }
  { const KV a = v[2]; v[2] = KMIN(a, v[7]); v[7] = KMAX(a, v[7]); }
  { const KV a = v[2]; v[2] = KMIN(a, v[4]); v[4] = KMAX(a, v[4]); }
  { const KV a = v[7]; v[7] = KMIN(a, v[5]); v[5] = KMAX(a, v[5]); }
  { const KV a = v[1]; v[1] = KMIN(a, v[6]); v[6] = KMAX(a, v[6]); }
  { const KV a = v[3]; v[3] = KMIN(a, v[8]); v[8] = KMAX(a, v[8]); }
  { const KV a = v[3]; v[3] = KMIN(a, v[6]); v[6] = KMAX(a, v[6]); }
  { const KV a = v[1]; v[1] = KMIN(a, v[2]); v[2] = KMAX(a, v[2]); }
  { const KV a = v[3]; v[3] = KMIN(a, v[4]); v[4] = KMAX(a, v[4]); }
  { const KV a = v[6]; v[6] = KMIN(a, v[7]); v[7] = KMAX(a, v[7]); }
  { const KV a = v[8]; v[8] = KMIN(a, v[5]); v[5] = KMAX(a, v[5]); }
  { const KV a = v[10]; v[10] = KMIN(a, v[15]); v[15] = KMAX(a, v[15]); }
  { const KV a = v[14]; v[14] = KMIN(a, v[19]); v[19] = KMAX(a, v[19]); }
  { const KV a = v[14]; v[14] = KMIN(a, v[15]); v[15] = KMAX(a, v[15]); }
  { const KV a = v[12]; v[12] = KMIN(a, v[17]); v[17] = KMAX(a, v[17]); }
  { const KV a = v[12]; v[12] = KMIN(a, v[14]); v[14] = KMAX(a, v[14]); }
  { const KV a = v[17]; v[17] = KMIN(a, v[15]); v[15] = KMAX(a, v[15]); }
  { const KV a = v[11]; v[11] = KMIN(a, v[16]); v[16] = KMAX(a, v[16]); }
  { const KV a = v[13]; v[13] = KMIN(a, v[18]); v[18] = KMAX(a, v[18]); }
  { const KV a = v[13]; v[13] = KMIN(a, v[16]); v[16] = KMAX(a, v[16]); }
  { const KV a = v[11]; v[11] = KMIN(a, v[12]); v[12] = KMAX(a, v[12]); }
  { const KV a = v[13]; v[13] = KMIN(a, v[14]); v[14] = KMAX(a, v[14]); }
  { const KV a = v[16]; v[16] = KMIN(a, v[17]); v[17] = KMAX(a, v[17]); }
  { const KV a = v[18]; v[18] = KMIN(a, v[15]); v[15] = KMAX(a, v[15]); }
  v[10] = KMAX(v[0], v[10]);
  v[5] = KMIN(v[5], v[15]);
  { const KV a = v[5]; v[5] = KMIN(a, v[10]); v[10] = KMAX(a, v[10]); }
  { const KV a = v[4]; v[4] = KMIN(a, v[14]); v[14] = KMAX(a, v[14]); }
  v[5] = KMAX(v[4], v[5]);
  v[14] = KMIN(v[14], v[10]);
  v[12] = KMAX(v[2], v[12]);
  v[7] = KMIN(v[7], v[17]);
  { const KV a = v[7]; v[7] = KMIN(a, v[12]); v[12] = KMAX(a, v[12]); }
  v[5] = KMAX(v[7], v[5]);
  { const KV a = v[12]; v[12] = KMIN(a, v[14]); v[14] = KMAX(a, v[14]); }
  v[11] = KMAX(v[1], v[11]);
  v[9] = KMIN(v[9], v[19]);
  { const KV a = v[9]; v[9] = KMIN(a, v[11]); v[11] = KMAX(a, v[11]); }
  { const KV a = v[6]; v[6] = KMIN(a, v[16]); v[16] = KMAX(a, v[16]); }
  v[9] = KMAX(v[6], v[9]);
  v[16] = KMIN(v[16], v[11]);
  v[13] = KMAX(v[3], v[13]);
  v[8] = KMIN(v[8], v[18]);
  { const KV a = v[8]; v[8] = KMIN(a, v[13]); v[13] = KMAX(a, v[13]); }
  { const KV a = v[8]; v[8] = KMIN(a, v[9]); v[9] = KMAX(a, v[9]); }
  v[13] = KMIN(v[13], v[16]);
  { const KV a = v[8]; v[8] = KMIN(a, v[5]); v[5] = KMAX(a, v[5]); }
  { const KV a = v[9]; v[9] = KMIN(a, v[12]); v[12] = KMAX(a, v[12]); }
  { const KV a = v[13]; v[13] = KMIN(a, v[14]); v[14] = KMAX(a, v[14]); }
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
  m = KMAX(m, KMIN(q[1], c[4]));
  m = KMAX(m, KMIN(q[2], c[3]));
  m = KMAX(m, KMIN(q[3], c[2]));
  m = KMAX(m, KMIN(q[4], c[1]));
  m = KMAX(m, KMIN(q[5], c[0]));
  return m;
}
// k = 7: sorts the 7 runs c[0..6] lane by lane into rank order (16 compare-exchanges).
inline void net7_sort(KV* c) {
  { const KV a = c[1]; c[1] = KMIN(a, c[2]); c[2] = KMAX(a, c[2]); }
  { const KV a = c[0]; c[0] = KMIN(a, c[1]); c[1] = KMAX(a, c[1]); }
  { const KV a = c[2]; c[2] = KMIN(a, c[1]); c[1] = KMAX(a, c[1]); }
  { const KV a = c[3]; c[3] = KMIN(a, c[4]); c[4] = KMAX(a, c[4]); }
  { const KV a = c[5]; c[5] = KMIN(a, c[6]); c[6] = KMAX(a, c[6]); }
  { const KV a = c[3]; c[3] = KMIN(a, c[5]); c[5] = KMAX(a, c[5]); }
  { const KV a = c[4]; c[4] = KMIN(a, c[6]); c[6] = KMAX(a, c[6]); }
  { const KV a = c[4]; c[4] = KMIN(a, c[5]); c[5] = KMAX(a, c[5]); }
  { const KV a = c[0]; c[0] = KMIN(a, c[3]); c[3] = KMAX(a, c[3]); }
  { const KV a = c[1]; c[1] = KMIN(a, c[5]); c[5] = KMAX(a, c[5]); }
  { const KV a = c[1]; c[1] = KMIN(a, c[3]); c[3] = KMAX(a, c[3]); }
  { const KV a = c[2]; c[2] = KMIN(a, c[4]); c[4] = KMAX(a, c[4]); }
  { const KV a = c[6]; c[6] = KMIN(a, c[4]); c[4] = KMAX(a, c[4]); }
  { const KV a = c[2]; c[2] = KMIN(a, c[1]); c[1] = KMAX(a, c[1]); }
  { const KV a = c[6]; c[6] = KMIN(a, c[3]); c[3] = KMAX(a, c[3]); }
  { const KV a = c[4]; c[4] = KMIN(a, c[5]); c[5] = KMAX(a, c[5]); }
  const KV t[7] = {c[0], c[2], c[1], c[6], c[3], c[4], c[5]};
  for (int r = 0; r < 7; ++r) c[r] = t[r];
}
// k = 7, word kernel (WORDS): the runs of the lane words A (.x / .xz) and B (.y / .w), whose
// windows share 6 columns: the shared s[0..5] sorted once (12 compare-exchanges on
// KH), then A's own column x.x and B's x.y inserted (12 min/max on KV): c, rank order.
#ifdef WORDS
inline void net7_sort_words(KH* s, KV x, KV* c) {
  { const KH a = s[1]; s[1] = HMIN(a, s[2]); s[2] = HMAX(a, s[2]); }
  { const KH a = s[0]; s[0] = HMIN(a, s[1]); s[1] = HMAX(a, s[1]); }
  { const KH a = s[2]; s[2] = HMIN(a, s[1]); s[1] = HMAX(a, s[1]); }
  { const KH a = s[4]; s[4] = HMIN(a, s[5]); s[5] = HMAX(a, s[5]); }
  { const KH a = s[3]; s[3] = HMIN(a, s[4]); s[4] = HMAX(a, s[4]); }
  { const KH a = s[5]; s[5] = HMIN(a, s[4]); s[4] = HMAX(a, s[4]); }
  { const KH a = s[0]; s[0] = HMIN(a, s[3]); s[3] = HMAX(a, s[3]); }
  { const KH a = s[1]; s[1] = HMIN(a, s[4]); s[4] = HMAX(a, s[4]); }
  { const KH a = s[1]; s[1] = HMIN(a, s[3]); s[3] = HMAX(a, s[3]); }
  { const KH a = s[2]; s[2] = HMIN(a, s[5]); s[5] = HMAX(a, s[5]); }
  { const KH a = s[2]; s[2] = HMIN(a, s[1]); s[1] = HMAX(a, s[1]); }
  { const KH a = s[5]; s[5] = HMIN(a, s[3]); s[3] = HMAX(a, s[3]); }
  c[0] = KMIN(SPREAD(s[0]), x);
  c[1] = KMAX(SPREAD(s[0]), KMIN(SPREAD(s[2]), x));
  c[2] = KMAX(SPREAD(s[2]), KMIN(SPREAD(s[1]), x));
  c[3] = KMAX(SPREAD(s[1]), KMIN(SPREAD(s[5]), x));
  c[4] = KMAX(SPREAD(s[5]), KMIN(SPREAD(s[3]), x));
  c[5] = KMAX(SPREAD(s[3]), KMIN(SPREAD(s[4]), x));
  c[6] = KMAX(SPREAD(s[4]), x);
}
#endif
// Pairs of output rows: v[r * 7 + i], rank i of shared sorted run r (r < 6);
// q: ranks 17..24 of their merge.
inline void net7_pair_core(KV* v, KV* q) {
  { const KV a = v[0]; v[0] = KMIN(a, v[7]); v[7] = KMAX(a, v[7]); }
  { const KV a = v[4]; v[4] = KMIN(a, v[11]); v[11] = KMAX(a, v[11]); }
  { const KV a = v[4]; v[4] = KMIN(a, v[7]); v[7] = KMAX(a, v[7]); }
  { const KV a = v[2]; v[2] = KMIN(a, v[9]); v[9] = KMAX(a, v[9]); }
  { const KV a = v[6]; v[6] = KMIN(a, v[13]); v[13] = KMAX(a, v[13]); }
  { const KV a = v[6]; v[6] = KMIN(a, v[9]); v[9] = KMAX(a, v[9]); }
  { const KV a = v[2]; v[2] = KMIN(a, v[4]); v[4] = KMAX(a, v[4]); }
  { const KV a = v[6]; v[6] = KMIN(a, v[7]); v[7] = KMAX(a, v[7]); }
  { const KV a = v[9]; v[9] = KMIN(a, v[11]); v[11] = KMAX(a, v[11]); }
  { const KV a = v[1]; v[1] = KMIN(a, v[8]); v[8] = KMAX(a, v[8]); }
  { const KV a = v[5]; v[5] = KMIN(a, v[12]); v[12] = KMAX(a, v[12]); }
  { const KV a = v[5]; v[5] = KMIN(a, v[8]); v[8] = KMAX(a, v[8]); }
  { const KV a = v[3]; v[3] = KMIN(a, v[10]); v[10] = KMAX(a, v[10]); }
  { const KV a = v[3]; v[3] = KMIN(a, v[5]); v[5] = KMAX(a, v[5]); }
  { const KV a = v[10]; v[10] = KMIN(a, v[8]); v[8] = KMAX(a, v[8]); }
  { const KV a = v[1]; v[1] = KMIN(a, v[2]); v[2] = KMAX(a, v[2]); }
  { const KV a = v[3]; v[3] = KMIN(a, v[4]); v[4] = KMAX(a, v[4]); }
  { const KV a = v[5]; v[5] = KMIN(a, v[6]); v[6] = KMAX(a, v[6]); }
  { const KV a = v[10]; v[10] = KMIN(a, v[7]); v[7] = KMAX(a, v[7]); }
  { const KV a = v[8]; v[8] = KMIN(a, v[9]); v[9] = KMAX(a, v[9]); }
  { const KV a = v[12]; v[12] = KMIN(a, v[11]); v[11] = KMAX(a, v[11]); }
  { const KV a = v[14]; v[14] = KMIN(a, v[21]); v[21] = KMAX(a, v[21]); }
  { const KV a = v[18]; v[18] = KMIN(a, v[25]); v[25] = KMAX(a, v[25]); }
  { const KV a = v[18]; v[18] = KMIN(a, v[21]); v[21] = KMAX(a, v[21]); }
  { const KV a = v[16]; v[16] = KMIN(a, v[23]); v[23] = KMAX(a, v[23]); }
  { const KV a = v[20]; v[20] = KMIN(a, v[27]); v[27] = KMAX(a, v[27]); }
  { const KV a = v[20]; v[20] = KMIN(a, v[23]); v[23] = KMAX(a, v[23]); }
  { const KV a = v[16]; v[16] = KMIN(a, v[18]); v[18] = KMAX(a, v[18]); }
  { const KV a = v[20]; v[20] = KMIN(a, v[21]); v[21] = KMAX(a, v[21]); }
  { const KV a = v[23]; v[23] = KMIN(a, v[25]); v[25] = KMAX(a, v[25]); }
  { const KV a = v[15]; v[15] = KMIN(a, v[22]); v[22] = KMAX(a, v[22]); }
  { const KV a = v[19]; v[19] = KMIN(a, v[26]); v[26] = KMAX(a, v[26]); }
  { const KV a = v[19]; v[19] = KMIN(a, v[22]); v[22] = KMAX(a, v[22]); }
  { const KV a = v[17]; v[17] = KMIN(a, v[24]); v[24] = KMAX(a, v[24]); }
  { const KV a = v[17]; v[17] = KMIN(a, v[19]); v[19] = KMAX(a, v[19]); }
  { const KV a = v[24]; v[24] = KMIN(a, v[22]); v[22] = KMAX(a, v[22]); }
  { const KV a = v[15]; v[15] = KMIN(a, v[16]); v[16] = KMAX(a, v[16]); }
  { const KV a = v[17]; v[17] = KMIN(a, v[18]); v[18] = KMAX(a, v[18]); }
  { const KV a = v[19]; v[19] = KMIN(a, v[20]); v[20] = KMAX(a, v[20]); }
  { const KV a = v[24]; v[24] = KMIN(a, v[21]); v[21] = KMAX(a, v[21]); }
  { const KV a = v[22]; v[22] = KMIN(a, v[23]); v[23] = KMAX(a, v[23]); }
  { const KV a = v[26]; v[26] = KMIN(a, v[25]); v[25] = KMAX(a, v[25]); }
  { const KV a = v[28]; v[28] = KMIN(a, v[35]); v[35] = KMAX(a, v[35]); }
  { const KV a = v[32]; v[32] = KMIN(a, v[39]); v[39] = KMAX(a, v[39]); }
  { const KV a = v[32]; v[32] = KMIN(a, v[35]); v[35] = KMAX(a, v[35]); }
  { const KV a = v[30]; v[30] = KMIN(a, v[37]); v[37] = KMAX(a, v[37]); }
  { const KV a = v[34]; v[34] = KMIN(a, v[41]); v[41] = KMAX(a, v[41]); }
  { const KV a = v[34]; v[34] = KMIN(a, v[37]); v[37] = KMAX(a, v[37]); }
  { const KV a = v[30]; v[30] = KMIN(a, v[32]); v[32] = KMAX(a, v[32]); }
  { const KV a = v[34]; v[34] = KMIN(a, v[35]); v[35] = KMAX(a, v[35]); }
  { const KV a = v[37]; v[37] = KMIN(a, v[39]); v[39] = KMAX(a, v[39]); }
  { const KV a = v[29]; v[29] = KMIN(a, v[36]); v[36] = KMAX(a, v[36]); }
  { const KV a = v[33]; v[33] = KMIN(a, v[40]); v[40] = KMAX(a, v[40]); }
  { const KV a = v[33]; v[33] = KMIN(a, v[36]); v[36] = KMAX(a, v[36]); }
  { const KV a = v[31]; v[31] = KMIN(a, v[38]); v[38] = KMAX(a, v[38]); }
  { const KV a = v[31]; v[31] = KMIN(a, v[33]); v[33] = KMAX(a, v[33]); }
  { const KV a = v[38]; v[38] = KMIN(a, v[36]); v[36] = KMAX(a, v[36]); }
  { const KV a = v[29]; v[29] = KMIN(a, v[30]); v[30] = KMAX(a, v[30]); }
  { const KV a = v[31]; v[31] = KMIN(a, v[32]); v[32] = KMAX(a, v[32]); }
  { const KV a = v[33]; v[33] = KMIN(a, v[34]); v[34] = KMAX(a, v[34]); }
  { const KV a = v[38]; v[38] = KMIN(a, v[35]); v[35] = KMAX(a, v[35]); }
  { const KV a = v[36]; v[36] = KMIN(a, v[37]); v[37] = KMAX(a, v[37]); }
  { const KV a = v[40]; v[40] = KMIN(a, v[39]); v[39] = KMAX(a, v[39]); }
  { const KV a = v[0]; v[0] = KMIN(a, v[14]); v[14] = KMAX(a, v[14]); }
  { const KV a = v[7]; v[7] = KMIN(a, v[21]); v[21] = KMAX(a, v[21]); }
  { const KV a = v[7]; v[7] = KMIN(a, v[14]); v[14] = KMAX(a, v[14]); }
  { const KV a = v[4]; v[4] = KMIN(a, v[18]); v[18] = KMAX(a, v[18]); }
  { const KV a = v[11]; v[11] = KMIN(a, v[25]); v[25] = KMAX(a, v[25]); }
  { const KV a = v[11]; v[11] = KMIN(a, v[18]); v[18] = KMAX(a, v[18]); }
  { const KV a = v[4]; v[4] = KMIN(a, v[7]); v[7] = KMAX(a, v[7]); }
  { const KV a = v[11]; v[11] = KMIN(a, v[14]); v[14] = KMAX(a, v[14]); }
  { const KV a = v[18]; v[18] = KMIN(a, v[21]); v[21] = KMAX(a, v[21]); }
  { const KV a = v[2]; v[2] = KMIN(a, v[16]); v[16] = KMAX(a, v[16]); }
  { const KV a = v[9]; v[9] = KMIN(a, v[23]); v[23] = KMAX(a, v[23]); }
  { const KV a = v[9]; v[9] = KMIN(a, v[16]); v[16] = KMAX(a, v[16]); }
  { const KV a = v[6]; v[6] = KMIN(a, v[20]); v[20] = KMAX(a, v[20]); }
  { const KV a = v[6]; v[6] = KMIN(a, v[9]); v[9] = KMAX(a, v[9]); }
  { const KV a = v[20]; v[20] = KMIN(a, v[16]); v[16] = KMAX(a, v[16]); }
  { const KV a = v[2]; v[2] = KMIN(a, v[4]); v[4] = KMAX(a, v[4]); }
  { const KV a = v[6]; v[6] = KMIN(a, v[7]); v[7] = KMAX(a, v[7]); }
  { const KV a = v[9]; v[9] = KMIN(a, v[11]); v[11] = KMAX(a, v[11]); }
  { const KV a = v[20]; v[20] = KMIN(a, v[14]); v[14] = KMAX(a, v[14]); }
  { const KV a = v[16]; v[16] = KMIN(a, v[18]); v[18] = KMAX(a, v[18]); }
  { const KV a = v[23]; v[23] = KMIN(a, v[21]); v[21] = KMAX(a, v[21]); }
  { const KV a = v[1]; v[1] = KMIN(a, v[15]); v[15] = KMAX(a, v[15]); }
  { const KV a = v[8]; v[8] = KMIN(a, v[22]); v[22] = KMAX(a, v[22]); }
  { const KV a = v[8]; v[8] = KMIN(a, v[15]); v[15] = KMAX(a, v[15]); }
  { const KV a = v[5]; v[5] = KMIN(a, v[19]); v[19] = KMAX(a, v[19]); }
  { const KV a = v[13]; v[13] = KMIN(a, v[27]); v[27] = KMAX(a, v[27]); }
  { const KV a = v[13]; v[13] = KMIN(a, v[19]); v[19] = KMAX(a, v[19]); }
  { const KV a = v[5]; v[5] = KMIN(a, v[8]); v[8] = KMAX(a, v[8]); }
  { const KV a = v[13]; v[13] = KMIN(a, v[15]); v[15] = KMAX(a, v[15]); }
  { const KV a = v[19]; v[19] = KMIN(a, v[22]); v[22] = KMAX(a, v[22]); }
  { const KV a = v[3]; v[3] = KMIN(a, v[17]); v[17] = KMAX(a, v[17]); }
  { const KV a = v[12]; v[12] = KMIN(a, v[26]); v[26] = KMAX(a, v[26]); }
  { const KV a = v[12]; v[12] = KMIN(a, v[17]); v[17] = KMAX(a, v[17]); }
  { const KV a = v[10]; v[10] = KMIN(a, v[24]); v[24] = KMAX(a, v[24]); }
  { const KV a = v[10]; v[10] = KMIN(a, v[12]); v[12] = KMAX(a, v[12]); }
  { const KV a = v[24]; v[24] = KMIN(a, v[17]); v[17] = KMAX(a, v[17]); }
  { const KV a = v[3]; v[3] = KMIN(a, v[5]); v[5] = KMAX(a, v[5]); }
  { const KV a = v[10]; v[10] = KMIN(a, v[8]); v[8] = KMAX(a, v[8]); }
  { const KV a = v[12]; v[12] = KMIN(a, v[13]); v[13] = KMAX(a, v[13]); }
  { const KV a = v[24]; v[24] = KMIN(a, v[15]); v[15] = KMAX(a, v[15]); }
  { const KV a = v[17]; v[17] = KMIN(a, v[19]); v[19] = KMAX(a, v[19]); }
  { const KV a = v[26]; v[26] = KMIN(a, v[22]); v[22] = KMAX(a, v[22]); }
  { const KV a = v[1]; v[1] = KMIN(a, v[2]); v[2] = KMAX(a, v[2]); }
  { const KV a = v[3]; v[3] = KMIN(a, v[4]); v[4] = KMAX(a, v[4]); }
  { const KV a = v[5]; v[5] = KMIN(a, v[6]); v[6] = KMAX(a, v[6]); }
  { const KV a = v[10]; v[10] = KMIN(a, v[7]); v[7] = KMAX(a, v[7]); }
  { const KV a = v[8]; v[8] = KMIN(a, v[9]); v[9] = KMAX(a, v[9]); }
  { const KV a = v[12]; v[12] = KMIN(a, v[11]); v[11] = KMAX(a, v[11]); }
  { const KV a = v[13]; v[13] = KMIN(a, v[20]); v[20] = KMAX(a, v[20]); }
  { const KV a = v[24]; v[24] = KMIN(a, v[14]); v[14] = KMAX(a, v[14]); }
  { const KV a = v[15]; v[15] = KMIN(a, v[16]); v[16] = KMAX(a, v[16]); }
  { const KV a = v[17]; v[17] = KMIN(a, v[18]); v[18] = KMAX(a, v[18]); }
  { const KV a = v[19]; v[19] = KMIN(a, v[23]); v[23] = KMAX(a, v[23]); }
  { const KV a = v[26]; v[26] = KMIN(a, v[21]); v[21] = KMAX(a, v[21]); }
  { const KV a = v[22]; v[22] = KMIN(a, v[25]); v[25] = KMAX(a, v[25]); }
  v[28] = KMAX(v[0], v[28]);
  v[28] = KMAX(v[14], v[28]);
  v[35] = KMAX(v[7], v[35]);
  v[21] = KMIN(v[21], v[35]);
  v[21] = KMIN(v[21], v[28]);
  v[32] = KMAX(v[4], v[32]);
  v[18] = KMIN(v[18], v[32]);
  v[11] = KMIN(v[11], v[39]);
  v[18] = KMAX(v[11], v[18]);
  { const KV a = v[18]; v[18] = KMIN(a, v[21]); v[21] = KMAX(a, v[21]); }
  v[30] = KMAX(v[2], v[30]);
  { const KV a = v[16]; v[16] = KMIN(a, v[30]); v[30] = KMAX(a, v[30]); }
  { const KV a = v[9]; v[9] = KMIN(a, v[37]); v[37] = KMAX(a, v[37]); }
  v[25] = KMIN(v[25], v[37]);
  v[16] = KMAX(v[9], v[16]);
  v[25] = KMIN(v[25], v[30]);
  v[34] = KMAX(v[6], v[34]);
  v[23] = KMIN(v[23], v[34]);
  { const KV a = v[20]; v[20] = KMIN(a, v[23]); v[23] = KMAX(a, v[23]); }
  v[16] = KMAX(v[20], v[16]);
  v[23] = KMIN(v[23], v[25]);
  { const KV a = v[16]; v[16] = KMIN(a, v[18]); v[18] = KMAX(a, v[18]); }
  { const KV a = v[23]; v[23] = KMIN(a, v[21]); v[21] = KMAX(a, v[21]); }
  v[29] = KMAX(v[1], v[29]);
  { const KV a = v[15]; v[15] = KMIN(a, v[29]); v[29] = KMAX(a, v[29]); }
  { const KV a = v[8]; v[8] = KMIN(a, v[36]); v[36] = KMAX(a, v[36]); }
  v[22] = KMIN(v[22], v[36]);
  v[15] = KMAX(v[8], v[15]);
  v[22] = KMIN(v[22], v[29]);
  v[33] = KMAX(v[5], v[33]);
  v[19] = KMIN(v[19], v[33]);
  v[13] = KMIN(v[13], v[41]);
  { const KV a = v[13]; v[13] = KMIN(a, v[19]); v[19] = KMAX(a, v[19]); }
  v[15] = KMAX(v[13], v[15]);
  { const KV a = v[19]; v[19] = KMIN(a, v[22]); v[22] = KMAX(a, v[22]); }
  v[31] = KMAX(v[3], v[31]);
  { const KV a = v[17]; v[17] = KMIN(a, v[31]); v[31] = KMAX(a, v[31]); }
  { const KV a = v[12]; v[12] = KMIN(a, v[40]); v[40] = KMAX(a, v[40]); }
  v[27] = KMIN(v[27], v[40]);
  v[17] = KMAX(v[12], v[17]);
  v[27] = KMIN(v[27], v[31]);
  v[38] = KMAX(v[10], v[38]);
  v[26] = KMIN(v[26], v[38]);
  { const KV a = v[24]; v[24] = KMIN(a, v[26]); v[26] = KMAX(a, v[26]); }
  { const KV a = v[24]; v[24] = KMIN(a, v[17]); v[17] = KMAX(a, v[17]); }
  v[26] = KMIN(v[26], v[27]);
  v[15] = KMAX(v[24], v[15]);
  { const KV a = v[17]; v[17] = KMIN(a, v[19]); v[19] = KMAX(a, v[19]); }
  v[26] = KMIN(v[26], v[22]);
  { const KV a = v[15]; v[15] = KMIN(a, v[16]); v[16] = KMAX(a, v[16]); }
  { const KV a = v[17]; v[17] = KMIN(a, v[18]); v[18] = KMAX(a, v[18]); }
  { const KV a = v[19]; v[19] = KMIN(a, v[23]); v[23] = KMAX(a, v[23]); }
  { const KV a = v[26]; v[26] = KMIN(a, v[21]); v[21] = KMAX(a, v[21]); }
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
  m = KMAX(m, KMIN(q[1], c[6]));
  m = KMAX(m, KMIN(q[2], c[5]));
  m = KMAX(m, KMIN(q[3], c[4]));
  m = KMAX(m, KMIN(q[4], c[3]));
  m = KMAX(m, KMIN(q[5], c[2]));
  m = KMAX(m, KMIN(q[6], c[1]));
  m = KMAX(m, KMIN(q[7], c[0]));
  return m;
}
// END generated networks

#if defined(WORDS)
// The words W(t - R), t = 0 .. K, of the quad at sample i of row `row` (see above).
inline void quad_words(uint* wd, __global const uchar* row, int i) {
#if defined(ALIGNED4)
  const __global uint* p = (const __global uint*)(row + i);
  const uint a[3] = {p[-1], p[0], p[1]};
#pragma unroll
  for (int t = 0; t <= K; ++t) {
    const int b = t - NET_R + 3, m = b >> 2, sh = (b & 3) * 8;  // byte i + t - R - 1 = a's b
#if defined(PIXFLOW_OCLGRIND)
    // the same bytes by a shuffle: clang makes llvm.fshl of the shifts, which oclgrind 21.10
    // cannot interpret (runtime.cpp, linear.cl shl_ch)
    const uchar o = (uchar)(b & 3);
    wd[t] = sh == 0 ? a[m]
                    : as_uint(shuffle2(as_uchar4(a[m]), as_uchar4(a[m + 1]),
                                       (uchar4)(o, o + 1, o + 2, o + 3)));
#else
    wd[t] = sh == 0 ? a[m] : (a[m] >> sh) | (a[m + 1] << (32 - sh));
#endif
  }
#else
#pragma unroll
  for (int t = 0; t <= K; ++t) wd[t] = as_uint(vload4(0, row + i + t - NET_R - 1));
#endif
}

// The sorted runs of source row y for the quads of samples i0 .. i0 + VW - 1 (lanes past the
// row's end repeat its last sample; they are not stored).
inline void load_run(KV* run, CIMG(s), int i0, int y, int n, int w, int h, int ch, int btype,
                     KS ckey, bool inner_x) {
  const int sy = border_index(y, h, btype);
  if (sy < 0) {
    for (int j = 0; j < K; ++j) run[j] = (KV)(ckey);
    return;
  }
  __global const uchar* row = CROW(uchar, s, sy);
  if (inner_x) {
    uint w0[K + 1];
    quad_words(w0, row, i0);
    KH sh[K - 1];
#if NQ == 1
#pragma unroll
    for (int j = 0; j < K - 1; ++j) sh[j] = w0[j + 1];
    const KV x = (KV)(w0[0], w0[K]);
#else
    uint w1[K + 1];
    quad_words(w1, row, i0 + 4);
#pragma unroll
    for (int j = 0; j < K - 1; ++j) sh[j] = (KH)(w0[j + 1], w1[j + 1]);
    const KV x = (KV)(w0[0], w0[K], w1[0], w1[K]);
#endif
    CAT(CAT(net, K), _sort_words)(sh, x, run);
  } else {
    uint lane[LW];
#pragma unroll
    for (int j = 0; j < K; ++j) {
      for (int l = 0; l < LW; ++l) {
        // lane word l: quad l / 2, samples i and i + 2, i = i0 + 4 (l / 2) + l % 2
        uint word = 0;
        for (int e = 0; e < 2; ++e) {
          const int x = min(i0 + 4 * (l >> 1) + (l & 1) + 2 * e, n - 1);
          const int sx = border_index(x + j - NET_R, w, btype);
          word |= (sx < 0 ? ckey & 0xff00u : (uint)row[sx] << 8) << (16 * e);
        }
        lane[l] = word;
      }
      run[j] = CAT(vload, LW)(0, lane);
    }
    CAT(CAT(net, K), _sort)(run);
  }
}

inline void store_out(KV m, IMG(d), int i0, int y, int n) {
  __global uchar* out = ROW(uchar, d, y) + i0;
  uint o[NQ];
  uint lw[LW];
  CAT(vstore, LW)(m, 0, lw);
#pragma unroll
  for (int q = 0; q < NQ; ++q)
    o[q] = ((lw[2 * q] >> 8) & 0x00ff00ffu) | (lw[2 * q + 1] & 0xff00ff00u);
  if (i0 + VW <= n) {
#pragma unroll
    for (int q = 0; q < NQ; ++q) {
#if defined(ALIGNED4)
      ((__global uint*)out)[q] = o[q];
#else
      vstore4(as_uchar4(o[q]), q, out);
#endif
    }
  } else {
    for (int l = 0; l < n - i0; ++l) out[l] = (uchar)(o[l >> 2] >> (8 * (l & 3)));
  }
}
#else
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
#endif  // WORDS

__kernel void median_net(CIMG(s), IMG(d), int w, int h, int ch, int btype, T cval) {
  const int n = w * ch;
  const int i0 = get_global_id(0) * VW, y0 = get_global_id(1) * RY;
  if (i0 >= n || y0 >= h) return;
#if defined(WORDS)
  // the 32-bit words i0 - 4 .. i0 + VW + 3 (samples i0 - R - 1 .. i0 + VW + R - 1) in the row
  const bool inner_x = i0 >= 4 && i0 + VW + 4 <= n;
#else
  const bool inner_x = i0 - NET_R * ch >= 0 && i0 + VW - 1 + NET_R * ch < n;
#endif
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
