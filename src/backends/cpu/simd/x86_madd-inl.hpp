// PIXFLOW_X86_MADD: 1 on the x86 targets from SSE4 up, where Highway's
// ReorderWidenMulAccumulate on int16 is pmaddwd (every product pair summed into the first
// accumulator) and InterleaveLower/Upper with ReorderDemote2To (packs) round-trip the lane
// order within 128-bit blocks; 0 elsewhere (NEON, ... and EMU128, which runs on x86 too but
// follows the generic lane rules: a GPU-machine run with gcc 13 caught that). Included once per
// target, after <hwy/highway.h>, so it has no include guard.
#undef PIXFLOW_X86_MADD
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSE4
#define PIXFLOW_X86_MADD 1
#else
#define PIXFLOW_X86_MADD 0
#endif
