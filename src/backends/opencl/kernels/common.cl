// Prelude of every pixflow OpenCL program (OpenCL C 1.2). Images arrive as three arguments:
// the buffer, the byte offset of the view's first sample and the row stride in bytes.
// No FMA contraction anywhere: the rules are written for separately rounded operations.
#pragma OPENCL FP_CONTRACT OFF

#define IMG(name) __global uchar *name, ulong name##_off, long name##_stride
#define CIMG(name) __global const uchar *name, ulong name##_off, long name##_stride
// Row y of an image argument as a pointer to T.
#define ROW(T, name, y) ((__global T *)(name + name##_off + (long)(y) * name##_stride))
#define CROW(T, name, y) ((__global const T *)(name + name##_off + (long)(y) * name##_stride))

// The shared rule subset (src/base/rules, the same C the reference and CUDA compile):
// border.h's px_border_index_i32 (the five border modes, any distance; -1 for constant
// outside) and px_order_key / px_from_order_key (the ordering ops' f32 order). The build
// (cmake/embed_cl.cmake) writes the header's text in place of the #include. BORDER_* and
// border_index / order_key / from_order_key are the kernels' names for them.
#include "src/base/rules/border.h"
#define BORDER_REPLICATE PX_BORDER_REPLICATE
#define BORDER_REFLECT PX_BORDER_REFLECT
#define BORDER_REFLECT101 PX_BORDER_REFLECT101
#define BORDER_WRAP PX_BORDER_WRAP
#define BORDER_CONSTANT PX_BORDER_CONSTANT
#define border_index(p, len, type) px_border_index_i32(p, len, type)
#define order_key(v) px_order_key(v)
#define from_order_key(k) px_from_order_key(k)

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
// px_order_key lane by lane (the vector form of the shared rule: OpenCL's vector operators).
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
