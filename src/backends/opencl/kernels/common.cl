// Prelude of every pixflow OpenCL program (OpenCL C 1.2). Images arrive as three arguments:
// the buffer, the byte offset of the view's first sample and the row stride in bytes.
// No FMA contraction anywhere: the rules are written for separately rounded operations.
#pragma OPENCL FP_CONTRACT OFF

#define IMG(name) __global uchar *name, ulong name##_off, long name##_stride
#define CIMG(name) __global const uchar *name, ulong name##_off, long name##_stride
// Row y of an image argument as a pointer to T.
#define ROW(T, name, y) ((__global T *)(name + name##_off + (long)(y) * name##_stride))
#define CROW(T, name, y) ((__global const T *)(name + name##_off + (long)(y) * name##_stride))
