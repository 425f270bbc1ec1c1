// Prelude of every pixflow OpenCL program (OpenCL C 1.2). Images arrive as three arguments:
// the buffer, the byte offset of the view's first sample and the row stride in bytes.
// No FMA contraction anywhere: the rules are written for separately rounded operations.
#pragma OPENCL FP_CONTRACT OFF

#define IMG(name) __global uchar *name, ulong name##_off, long name##_stride
#define CIMG(name) __global const uchar *name, ulong name##_off, long name##_stride
// Row y of an image argument as a pointer to T.
#define ROW(T, name, y) ((__global T *)(name + name##_off + (long)(y) * name##_stride))
#define CROW(T, name, y) ((__global const T *)(name + name##_off + (long)(y) * name##_stride))

// Border rules (pixflow::BorderType's order: replicate, reflect, reflect101, wrap, constant)
// of src/base/numeric.hpp border_index: maps p outside [0, len) into it, for any distance
// (the rule repeats); -1 for constant outside. len >= 1.
#define BORDER_REPLICATE 0
#define BORDER_REFLECT 1
#define BORDER_REFLECT101 2
#define BORDER_WRAP 3
#define BORDER_CONSTANT 4
inline int border_index(int p, int len, int type) {
  if (p >= 0 && p < len) return p;
  if (type == BORDER_REPLICATE) return p < 0 ? 0 : len - 1;
  if (type == BORDER_REFLECT) {
    const int period = 2 * len;
    int q = p % period;
    if (q < 0) q += period;
    return q < len ? q : period - 1 - q;
  }
  if (type == BORDER_REFLECT101) {
    if (len == 1) return 0;
    const int period = 2 * len - 2;
    int q = p % period;
    if (q < 0) q += period;
    return q < len ? q : period - q;
  }
  if (type == BORDER_WRAP) {
    const int q = p % len;
    return q < 0 ? q + len : q;
  }
  return -1;
}

// The ordering ops' f32 order (src/base/numeric.hpp order_key / from_order_key): IEEE
// totalOrder as signed 32-bit keys, equal only for identical bits; the map is its own inverse.
inline int order_key(float v) {
  const int i = as_int(v);
  return i ^ ((i >> 31) & 0x7fffffff);
}
inline float from_order_key(int k) {
  return as_float(k ^ ((k >> 31) & 0x7fffffff));
}

// Lane vectors of the ordering kernels (median_net, morph_small), defined when a program is
// built with -DVW= (lanes: 1, 2, 4, 8, 16) and a depth (-DT=, T_F32...): KS / KV the scalar /
// vector key (integers: the sample; f32: order_key's int, whose signed order is totalOrder),
// TV the sample vector, VLOAD / VSTORE VW samples at any sample-aligned address, key_s /
// key_v and from_key_s / from_key_v the key maps. OpenCL's min / max act lane by lane.
// -DWIDE_KEYS: u8 / u16 samples as int keys (32-bit lanes; whether the device's compiler does
// better with those or with the narrow types is a GPU A/B, median.cpp / morphology.cpp).
// -DKEY16: u8 samples as ushort keys (16-bit lanes, median.cpp's u16 / u16x2). KEYS_U16 tells
// that the keys are ushort (u8 with KEY16, u16 without WIDE_KEYS). -DWORDS (median.cl's word
// kernel) defines its own types.
#if defined(VW) && defined(T) && !defined(WORDS)
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#if defined(T_F32)
#define KS int
#define key_s(v) order_key(v)
#define from_key_s(k) from_order_key(k)
#elif defined(WIDE_KEYS)  // integer samples as int keys (no sub-word lanes on the device)
#define KS int
#define key_s(v) ((int)(v))
#define from_key_s(k) ((T)(k))
#elif defined(KEY16) && defined(T_U8)  // u8 samples as ushort keys
#define KS ushort
#define KEYS_U16 1
#define key_s(v) ((ushort)(v))
#define from_key_s(k) ((T)(k))
#else
#define KS T
#define key_s(v) (v)
#define from_key_s(k) (k)
#if defined(T_U16)
#define KEYS_U16 1
#endif
#endif
#if VW == 1
typedef KS KV;
typedef T TV;
#define VLOAD(p) (*(p))
#define VSTORE(v, p) (*(p) = (v))
#define AS_KV(v) as_int(v)
#define AS_TV(v) as_float(v)
#else
typedef CAT(KS, VW) KV;
typedef CAT(T, VW) TV;
#define VLOAD(p) CAT(vload, VW)(0, p)
#define VSTORE(v, p) CAT(vstore, VW)(v, 0, p)
#define AS_KV(v) CAT(as_int, VW)(v)
#define AS_TV(v) CAT(as_float, VW)(v)
#endif
#if defined(T_F32)
inline KV key_v(TV v) {
  const KV i = AS_KV(v);
  return i ^ ((i >> 31) & 0x7fffffff);
}
inline TV from_key_v(KV k) {
  return AS_TV(k ^ ((k >> 31) & 0x7fffffff));
}
#elif defined(WIDE_KEYS)
#if VW == 1
#define key_v(v) ((int)(v))
#define from_key_v(k) ((T)(k))
#else
#define key_v(v) CAT(convert_int, VW)(v)
#define from_key_v(k) CAT(CAT(convert_, T), VW)(k)
#endif
#elif defined(KEY16) && defined(T_U8)
#if VW == 1
#define key_v(v) ((ushort)(v))
#define from_key_v(k) ((T)(k))
#else
#define key_v(v) CAT(convert_ushort, VW)(v)
#define from_key_v(k) CAT(CAT(convert_, T), VW)(k)
#endif
#else
#define key_v(v) (v)
#define from_key_v(k) (k)
#endif
#endif  // VW
