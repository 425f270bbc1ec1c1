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
