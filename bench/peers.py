#!/usr/bin/env python3
"""Peers of pixflow-bench outside the process: CuPy (cupyx.scipy.ndimage) and CV-CUDA (the
cvcuda wheel, when importable) on the GPU, OpenCV (cv2) on the host CPU and through its OpenCL
T-API (cv2.UMat, the peer of pixflow-bench-opencl), on the cases of pixflow-bench (same names,
so compare.py can join them).

CuPy and CV-CUDA are timed like pixflow-bench (CV-CUDA's ops run on a CuPy stream through
cvcuda.as_stream, on NHWC tensors wrapping CuPy arrays, into preallocated outputs): N calls
captured into a CUDA graph (Stream.begin_capture / end_capture), one warm-up replay, median
of 5 replays under CUDA events, divided by N. Where capture fails (a function allocates or
syncs), events around a loop of N calls: the "method" field says which. OpenCV is timed with
perf_counter, median of a few runs after a warm-up, once with all threads and once with
cv2.setNumThreads(1). OpenCV's OpenCL path: see "OpenCV's OpenCL path" below (a Python loop
ended by cv2.ocl.finish(); CPU fallbacks marked, results checked against the CPU path's).

The run is time-boxed (--budget seconds): cases are run in priority order (1080p, then 8K u8,
then the rest) and the JSON is rewritten after every case, so a cut-off run still reports.
"""
import argparse
import datetime
import json
import math
import os
import shutil
import statistics
import sys
import time
import traceback

SIZES = [(1920, 1080), (8192, 8192)]
FORMATS = ["u8x1", "u8x3", "f32x1"]


def case_list(quick):
    """(name, op, variant, params, fmt, w, h) in the naming of pixflow-bench."""
    cases = []
    sizes = SIZES[:1] if quick else SIZES
    for w, h in sizes:
        for f in FORMATS:
            def add(op, var, fmt_out=None, **p):
                fo = fmt_out or f
                name = " ".join(x for x in [op, var, f if fo == f else f + "->" + fo,
                                            "%dx%d" % (w, h)] if x)
                cases.append(dict(name=name, op=op, variant=var, p=p, fmt=f, out=fo, w=w, h=h))
            for k in (3, 5, 7):
                add("median", "%dx%d" % (k, k), k=k)
            for op in ("dilate", "erode"):
                for k in (3, 5, 15):
                    add(op, "%dx%d" % (k, k), k=k)
            add("open", "3x3", k=3)
            for k in (3, 9, 31):
                add("box", "%dx%d" % (k, k), k=k)
            for sigma in (0, 2, 8):
                add("gaussian", "3x3" if sigma == 0 else "sigma=%d" % sigma, sigma=sigma)
            add("gaussian_iir", "sigma=8", sigma=8)
            out = f.replace("u8", "s16")
            add("sobel", "dx=1 k=3", fmt_out=out)
            if f != "u8x3":
                add("scharr", "dx=1", fmt_out=out)
            add("filter2d", "5x5")
            add("epsilon", "r=4")
            add("bilateral", "d=9", sc=0.3 if f.startswith("f32") else 75.0, ss=75.0)
            add("remap", "linear")
            add("transpose", "")
            add("flip", "h", mode="h")
            add("flip", "v", mode="v")
            add("rotate", "90", angle=90)
            add("rotate", "180", angle=180)
            add("crop", "1888x1064")
            add("pad", "8")
            for op in ("add", "sub", "absdiff", "mul"):
                add(op, "")
            if f.startswith("u8"):
                add("convert", "scale=1/255", fmt_out=f.replace("u8", "f32"))
            add("threshold", "binary", t=0.5 if f.startswith("f32") else 127.0,
                maxval=1.0 if f.startswith("f32") else 255.0)
        for f in ("u8x3", "f32x3"):
            cases.append(dict(name="gray from=rgb %s->%sx1 %dx%d" % (f, f[:-2], w, h), op="gray",
                              variant="from=rgb", p={}, fmt=f, out=f[:-2] + "x1", w=w, h=h))
        n = 4096 if w == 8192 else 1024
        cases.append(dict(name="matmul %d^3 f32x1 %dx%d" % (n, n, n), op="matmul",
                          variant="%d^3" % n, p={}, fmt="f32x1", out="f32x1", w=n, h=n))
    # Priority: 1080p first, then 8K u8x1, then the other 8K cases.
    def prio(c):
        return (0 if c["w"] < 8192 else 1 if c["fmt"] == "u8x1" else 2)
    return sorted(cases, key=prio)


def gauss_ksize(sigma, u8):
    return int(round(sigma * (3 if u8 else 4) * 2 + 1)) | 1


def gauss_window(c):
    """(sigma, window size) of a gaussian case, as pixflow computes them."""
    if c["p"]["sigma"] == 0:
        return 0.3 * ((3 - 1) * 0.5 - 1) + 0.8, 3  # OpenCV's sigma for k=3
    return float(c["p"]["sigma"]), gauss_ksize(c["p"]["sigma"], c["fmt"].startswith("u8"))


FILTER2D = [[-0.02] * 5 for _ in range(5)]
FILTER2D[2][2] = 1.48


def host_input(np, fmt, w, h, seed):
    rng = np.random.default_rng(seed)
    ch = int(fmt.split("x")[1])
    shape = (h, w) if ch == 1 else (h, w, ch)
    if fmt.startswith("u8"):
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    return rng.random(size=shape, dtype=np.float32)


def smooth_maps(np, w, h):
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    mx = 0.5 * w + 1.003 * (x - 0.5 * w) + 4.7 * np.sin(0.0131 * y + 0.4)
    my = 0.5 * h + 0.998 * (y - 0.5 * h) + 3.9 * np.cos(0.0173 * x + 1.1)
    return mx.astype(np.float32), my.astype(np.float32)


# ---- CuPy -----------------------------------------------------------------------------------

def cupy_fn(cp, ndi, c, a, b, maps):
    """A zero-argument callable running the case once on the current stream, or (None, why)."""
    op, p, ch = c["op"], c["p"], int(c["fmt"].split("x")[1])
    spatial = (lambda k: (k, k)) if ch == 1 else (lambda k: (k, k, 1))
    out = None
    note = ""
    if op in ("median", "dilate", "erode", "open", "box", "gaussian", "filter2d", "remap",
              "threshold", "add", "sub", "absdiff", "mul", "flip", "rotate"):
        out = cp.empty_like(a)
    if op == "median":
        return (lambda: ndi.median_filter(a, size=spatial(p["k"]), mode="nearest", output=out)), ""
    if op == "dilate":
        return (lambda: ndi.grey_dilation(a, size=spatial(p["k"]), mode="mirror", output=out)), ""
    if op == "erode":
        return (lambda: ndi.grey_erosion(a, size=spatial(p["k"]), mode="mirror", output=out)), ""
    if op == "open":
        return (lambda: ndi.grey_opening(a, size=spatial(p["k"]), mode="mirror", output=out)), ""
    if op == "box":
        return (lambda: ndi.uniform_filter(a, size=spatial(p["k"]), mode="mirror", output=out)), ""
    if op == "gaussian":
        sigma, k = gauss_window(c)
        trunc = (k // 2) / sigma  # the same radius as pixflow's window
        sig = sigma if ch == 1 else (sigma, sigma, 0)
        return (lambda: ndi.gaussian_filter(a, sig, mode="mirror", truncate=trunc, output=out)), \
            "radius %d" % (k // 2)
    if op in ("sobel", "scharr") and ch == 1:
        o = cp.empty(a.shape, dtype=cp.int16 if a.dtype == cp.uint8 else cp.float32)
        if op == "sobel":
            return (lambda: ndi.sobel(a, axis=1, mode="mirror", output=o)), ""
        kern = cp.asarray([[-3, 0, 3], [-10, 0, 10], [-3, 0, 3]], dtype=cp.float32)
        return (lambda: ndi.correlate(a, kern, mode="mirror", output=o)), "ndimage.correlate"
    if op == "filter2d" and ch == 1:
        kern = cp.asarray(FILTER2D, dtype=cp.float32)
        return (lambda: ndi.correlate(a, kern, mode="mirror", output=out)), ""
    if op == "remap" and ch == 1:
        coords = cp.stack([cp.asarray(maps[1]), cp.asarray(maps[0])])
        return (lambda: ndi.map_coordinates(a, coords, output=out, order=1, mode="constant")), \
            "map_coordinates order=1"
    if op == "transpose":
        return (lambda: cp.ascontiguousarray(a.swapaxes(0, 1))), "allocates its output"
    if op == "flip":
        v = a[:, ::-1] if p["mode"] == "h" else a[::-1]
        return (lambda: cp.copyto(out, v)), "copyto of a reversed view"
    if op == "rotate":
        if p["angle"] == 180:
            return (lambda: cp.copyto(out, a[::-1, ::-1])), "copyto of a reversed view"
        return (lambda: cp.ascontiguousarray(cp.rot90(a, -1))), "allocates its output"
    if op == "crop":
        return (lambda: cp.ascontiguousarray(a[8:1072, 16:1904])), "allocates its output"
    if op == "pad":
        w = ((8, 8), (8, 8)) + ((0, 0),) * (a.ndim - 2)
        return (lambda: cp.pad(a, w)), "allocates its output"
    if op == "add":
        return (lambda: cp.add(a, b, out=out)), "wraps (no saturation)"
    if op == "sub":
        return (lambda: cp.subtract(a, b, out=out)), "wraps (no saturation)"
    if op == "absdiff":
        if a.dtype == cp.uint8:
            k = cp.ElementwiseKernel("uint8 x, uint8 y", "uint8 z", "z = x > y ? x - y : y - x",
                                     "pf_absdiff")
            return (lambda: k(a, b, out)), "ElementwiseKernel"
        return (lambda: cp.abs(cp.subtract(a, b, out=out), out=out)), "two kernels"
    if op == "mul":
        return (lambda: cp.multiply(a, b, out=out)), "wraps (no saturation)"
    if op == "convert":
        o = cp.empty(a.shape, dtype=cp.float32)
        k = cp.ElementwiseKernel("uint8 x", "float32 y", "y = x * (1.0f / 255.0f)", "pf_convert")
        return (lambda: k(a, o)), "ElementwiseKernel"
    if op == "threshold":
        t, mv = p["t"], p["maxval"]
        k = cp.ElementwiseKernel("T x, T t, T m", "T y", "y = x > t ? m : T(0)", "pf_threshold")
        tt, mm = a.dtype.type(math.floor(t) if a.dtype == cp.uint8 else t), a.dtype.type(mv)
        return (lambda: k(a, tt, mm, out)), "ElementwiseKernel"
    if op == "gray":
        o = cp.empty(a.shape[:2], dtype=a.dtype)
        if a.dtype == cp.uint8:
            k = cp.ElementwiseKernel(
                "raw uint8 x", "uint8 y",
                "y = (x[3*i] * 4899 + x[3*i+1] * 9617 + x[3*i+2] * 1868 + 8192) >> 14", "pf_gray")
        else:
            k = cp.ElementwiseKernel(
                "raw float32 x", "float32 y",
                "y = 0.299f * x[3*i] + 0.587f * x[3*i+1] + 0.114f * x[3*i+2]", "pf_grayf")
        return (lambda: k(a, o)), "ElementwiseKernel"
    if op == "matmul":
        o = cp.empty((a.shape[0], b.shape[1]), dtype=cp.float32)
        return (lambda: cp.matmul(a, b, out=o)), "cuBLAS via CuPy"
    return None, "no CuPy equivalent"


def time_cupy(cp, fn, graph_ms, s=None):
    s = s or cp.cuda.Stream(non_blocking=True)
    with s:
        fn()
        s.synchronize()
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record(s)
        for _ in range(3):
            fn()
        e1.record(s)
        e1.synchronize()
        est = cp.cuda.get_elapsed_time(e0, e1) / 3.0
        n = int(min(1000, max(1, math.ceil(graph_ms / max(est, 1e-4)))))
        method, problem = "graph", ""
        g = None
        try:
            s.begin_capture()
            try:
                for _ in range(n):
                    fn()
            finally:
                g = s.end_capture()
            g.launch(stream=s)
            s.synchronize()
        except Exception as ex:  # capture not possible: events around a loop
            method, problem = "loop", "%s: %s" % (type(ex).__name__, str(ex).splitlines()[0][:120])
            g = None
            try:
                s.synchronize()
            except Exception:
                pass
        reps = []
        for _ in range(5):
            e0.record(s)
            if g is not None:
                g.launch(stream=s)
            else:
                for _ in range(n):
                    fn()
            e1.record(s)
            e1.synchronize()
            reps.append(cp.cuda.get_elapsed_time(e0, e1) * 1000.0 / n)
    return dict(us=statistics.median(reps), n=n, method=method, problem=problem)


# ---- CV-CUDA --------------------------------------------------------------------------------

def cvcuda_fn(cvcuda, cp, c, a, b, maps, stream):
    """A zero-argument callable running the case once on `stream` (a cvcuda.Stream wrapping
    the CuPy stream the timer uses), or (None, why). Inputs and outputs are NHWC tensors over
    CuPy arrays, allocated here, outside the timed calls."""
    op, p = c["op"], c["p"]
    h, w = a.shape[0], a.shape[1]
    ch = 1 if a.ndim == 2 else a.shape[2]

    def tensor(x, cn=None):
        return cvcuda.as_tensor(x.reshape(1, h, w, cn or ch), "NHWC")

    src = tensor(a)
    R101 = cvcuda.Border.REFLECT101
    same = lambda: tensor(cp.empty_like(a))
    kw = dict(stream=stream)
    if op == "median":
        dst = same()
        return (lambda: cvcuda.median_blur_into(dst, src, (p["k"], p["k"]), **kw)), ""
    if op in ("dilate", "erode", "open"):
        dst = same()
        mt = {"dilate": cvcuda.MorphologyType.DILATE, "erode": cvcuda.MorphologyType.ERODE,
              "open": cvcuda.MorphologyType.OPEN}[op]
        extra = {"workspace": same()} if op == "open" else {}
        return (lambda: cvcuda.morphology_into(dst, src, mt, (p["k"], p["k"]), (-1, -1),
                                               border=R101, **extra, **kw)), ""
    if op == "box":
        dst = same()
        return (lambda: cvcuda.averageblur_into(dst, src, (p["k"], p["k"]), (-1, -1), R101,
                                                **kw)), "averageblur"
    if op == "gaussian":
        sigma, k = gauss_window(c)
        dst = same()
        return (lambda: cvcuda.gaussian_into(dst, src, (k, k), (sigma, sigma), R101, **kw)), \
            "kernel %dx%d" % (k, k)
    if op == "sobel" and ch == 1:
        # No Sobel in CV-CUDA: its Laplacian (ksize 3, same depth in and out) stands beside it.
        dst = same()
        return (lambda: cvcuda.laplacian_into(dst, src, 3, 1.0, R101, **kw)), \
            "laplacian ksize=3, output in the input's depth"
    if op == "bilateral":
        dst = same()
        return (lambda: cvcuda.bilateral_filter_into(dst, src, 9, p["sc"], p["ss"], R101,
                                                     **kw)), ""
    if op == "remap":
        dst = same()
        m = cp.stack([cp.asarray(maps[0]), cp.asarray(maps[1])], axis=-1).reshape(1, h, w, 2)
        mt = cvcuda.as_tensor(m, "NHWC")
        return (lambda: cvcuda.remap_into(dst, src, mt, cvcuda.Interp.LINEAR,
                                          cvcuda.Interp.NEAREST, cvcuda.Remap.ABSOLUTE, False,
                                          cvcuda.Border.CONSTANT, None, **kw)), \
            "absolute map (one 2-channel tensor)"
    if op == "convert":
        o = cp.empty(a.shape, dtype=cp.float32)
        dst = tensor(o)
        return (lambda: cvcuda.convertto_into(dst, src, 1.0 / 255.0, 0.0, **kw)), "convertto"
    if op == "gray":
        o = cp.empty(a.shape[:2], dtype=a.dtype)
        dst = tensor(o, 1)
        return (lambda: cvcuda.cvtcolor_into(dst, src, cvcuda.ColorConversion.RGB2GRAY,
                                             **kw)), "cvtcolor"
    return None, "no CV-CUDA equivalent"


# ---- OpenCV ---------------------------------------------------------------------------------

def cv_fn(cv2, np, c, a, b, maps):
    """A zero-argument callable running the case once through cv2 on a, b, maps (numpy arrays
    for the CPU column, cv2.UMat for the OpenCL one), or (None, why)."""
    op, p = c["op"], c["p"]
    R101 = cv2.BORDER_REFLECT_101
    u8 = c["fmt"].startswith("u8")
    if op == "median":
        if not u8 and p["k"] > 5:
            return None, "cv2.medianBlur: f32 only up to 5x5"
        return (lambda: cv2.medianBlur(a, p["k"])), ""
    if op in ("dilate", "erode", "open"):
        kern = cv2.getStructuringElement(cv2.MORPH_RECT, (p["k"], p["k"]))
        if op == "dilate":
            return (lambda: cv2.dilate(a, kern, borderType=R101)), ""
        if op == "erode":
            return (lambda: cv2.erode(a, kern, borderType=R101)), ""
        return (lambda: cv2.morphologyEx(a, cv2.MORPH_OPEN, kern, borderType=R101)), ""
    if op == "box":
        return (lambda: cv2.blur(a, (p["k"], p["k"]), borderType=R101)), ""
    if op == "gaussian":
        if p["sigma"] == 0:
            return (lambda: cv2.GaussianBlur(a, (3, 3), 0, borderType=R101)), ""
        return (lambda: cv2.GaussianBlur(a, (0, 0), p["sigma"], borderType=R101)), ""
    if op == "sobel":
        dd = cv2.CV_16S if u8 else cv2.CV_32F
        return (lambda: cv2.Sobel(a, dd, 1, 0, ksize=3, borderType=R101)), ""
    if op == "scharr":
        dd = cv2.CV_16S if u8 else cv2.CV_32F
        return (lambda: cv2.Scharr(a, dd, 1, 0, borderType=R101)), ""
    if op == "filter2d":
        kern = np.asarray(FILTER2D, dtype=np.float32)
        return (lambda: cv2.filter2D(a, -1, kern, borderType=R101)), ""
    if op == "bilateral":
        return (lambda: cv2.bilateralFilter(a, 9, p["sc"], p["ss"], borderType=R101)), ""
    if op == "remap":
        return (lambda: cv2.remap(a, maps[0], maps[1], cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_CONSTANT, borderValue=0)), ""
    if op == "transpose":
        return (lambda: cv2.transpose(a)), ""
    if op == "flip":
        return (lambda: cv2.flip(a, 1 if p["mode"] == "h" else 0)), ""
    if op == "rotate":
        code = cv2.ROTATE_180 if p["angle"] == 180 else cv2.ROTATE_90_CLOCKWISE
        return (lambda: cv2.rotate(a, code)), ""
    if op == "crop":
        return None, "a crop is a view in OpenCV (a[y:y+h, x:x+w]), no copying call"
    if op == "pad":
        return (lambda: cv2.copyMakeBorder(a, 8, 8, 8, 8, cv2.BORDER_CONSTANT, value=0)), ""
    if op == "add":
        return (lambda: cv2.add(a, b)), ""
    if op == "sub":
        return (lambda: cv2.subtract(a, b)), ""
    if op == "absdiff":
        return (lambda: cv2.absdiff(a, b)), ""
    if op == "mul":
        return (lambda: cv2.multiply(a, b)), ""
    if op == "convert" and isinstance(a, cv2.UMat):
        scale = (1.0 / 255.0,) * 4  # a Scalar: every channel
        return (lambda: cv2.multiply(a, scale, dtype=cv2.CV_32F)), \
            "cv2.multiply by the scalar 1/255 into CV_32F (convertTo is not in cv2's Python API)"
    if op == "convert":
        scale = np.float32(1.0 / 255.0)
        return (lambda: np.multiply(a, scale, dtype=np.float32)), \
            "numpy multiply (convertTo is not in cv2's Python API)"
    if op == "threshold":
        return (lambda: cv2.threshold(a, p["t"], p["maxval"], cv2.THRESH_BINARY)), ""
    if op == "gray":
        return (lambda: cv2.cvtColor(a, cv2.COLOR_RGB2GRAY)), ""
    if op == "matmul":
        return (lambda: cv2.gemm(a, b, 1.0, None, 0.0)), ""
    return None, "no OpenCV equivalent"


def time_host(fn, max_s, keep=None):
    """Median wall time of fn (µs) after a warm-up call; keep: a list that receives the last
    call's result (the OpenCL column checks its results against it)."""
    t0 = time.perf_counter()
    out = fn()
    first = time.perf_counter() - t0
    reps = 1 if first > max_s / 2 else 3 if first > 0.05 else 5
    inner = max(1, int(0.01 / max(first, 1e-6))) if first < 0.01 else 1
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            out = fn()
        ts.append((time.perf_counter() - t0) / inner)
    if keep is not None:
        keep.append(out)
    return dict(us=statistics.median(ts) * 1e6, reps=reps, inner=inner)


# ---- OpenCV's OpenCL path (T-API) ----------------------------------------------------------
#
# The CPU column's cv2 calls (cv_fn) on cv2.UMat inputs with cv2.ocl.setUseOpenCL(True), on the
# device OPENCV_OPENCL_DEVICE names (--ocl-device; default ":GPU:0", the first GPU of any
# platform: NVIDIA's on the GPU machine, where PoCL's CPU device is registered too). Timed as the
# issue's numbers were: a Python loop of calls ended by cv2.ocl.finish(), wall time / calls,
# median of a few loops after a warm-up call (which builds OpenCV's OpenCL programs).
#
# OpenCV falls back to its CPU code silently where its OpenCL code does not take the case (the
# UMat is mapped to host memory and back). Such cells must not pass for OpenCL times:
# - known from OpenCV's sources (ocl_known_fallback): not timed;
# - seen in OpenCV's trace (ocl_probe): a child process runs every case once more under
#   OPENCV_TRACE=1 (at 512x512 at most) and the regions nested in the call are
#   read back; >= 20 µs in regions of OpenCV's CPU code (*.simd.hpp, parallel.cpp, IPP, HAL)
#   means the CPU path ran: not timed. An OpenCL call only shows ocl.cpp / copy.cpp / the op's
#   dispatch file / the program cache's file system regions. (A CPU path without trace regions
#   of its own, e.g. transpose's, is not seen this way; the next test remains.)
# - suspected from the timing: the call returns only when its work is done (an OpenCL call
#   returns once its kernels are enqueued; `host_fraction` = time until the call returns / time
#   until cv2.ocl.finish() returns) AND it takes at least 0.8x the CPU column's time AND
#   >= 100 µs (a real OpenCL call can be host-bound only when it is tiny; a fallback also pays
#   the transfers). Such a cell is kept but marked (`fallback`).
# Every OpenCL result is compared with the CPU call's result on the same input (integers within
# 1, f32 within 1e-4 + 1e-4 |x|; matmul 1e-5 K |x| + 1e-4), so that a wrong peer is visible.

def ocl_known_fallback(c):
    """Why OpenCV's OpenCL path does not take case c, from its sources, or ""."""
    if c["op"] == "median" and c["p"]["k"] > 5:
        return "medianBlur's OpenCL kernel takes ksize 3 and 5 only (ocl_medianFilter)"
    return ""


def ocl_key(c):
    return "%s %s %s->%s" % (c["op"], c["variant"], c["fmt"], c["out"])


PROBE_SIZE = 512


def probe_cases(cases):
    """One case per ocl_key (the first of the run's order), at most PROBE_SIZE square: OpenCV's
    OpenCL conditions are on types, parameters and borders, hardly on sizes (and then for
    images smaller than the window), and a CPU path at 8192x8192 would cost seconds."""
    out, seen = [], set()
    for c in cases:
        k = ocl_key(c)
        if k not in seen:
            seen.add(k)
            c = dict(c)
            if c["op"] != "matmul":
                c["w"], c["h"] = min(c["w"], PROBE_SIZE), min(c["h"], PROBE_SIZE)
            out.append(c)
    return out


def ocl_probe_child(args, cases):
    """--ocl-probe: the child side (OPENCV_TRACE is on): each case once (warm-up), then two
    separators (setUseOpenCL, a traced call), the case again, one separator. Writes the keys in
    order; the parent reads the trace once this process has exited (OpenCV writes it then)."""
    import numpy as np
    import cv2
    cv2.ocl.setUseOpenCL(True)
    done = []
    t_start = time.time()
    for c in probe_cases(cases):
        if time.time() - t_start > args.budget:
            break  # exit normally: OpenCV writes the trace of the cases done
        if ocl_known_fallback(c):
            continue
        try:
            w, h = c["w"], c["h"]
            fa = "f32x1" if c["op"] == "matmul" else c["fmt"]
            a, b = host_input(np, fa, w, h, 1), host_input(np, fa, w, h, 2)
            maps = smooth_maps(np, w, h) if c["op"] == "remap" else None
            ua, ub = cv2.UMat(a), cv2.UMat(b)
            um = (cv2.UMat(maps[0]), cv2.UMat(maps[1])) if maps is not None else None
            fn, _ = cv_fn(cv2, np, c, ua, ub, um)
            if fn is None:
                continue
            fn()
            cv2.ocl.finish()
        except Exception:
            continue
        cv2.ocl.setUseOpenCL(True)
        cv2.ocl.setUseOpenCL(True)
        try:
            fn()
            cv2.ocl.finish()
        except Exception:
            pass
        cv2.ocl.setUseOpenCL(True)
        done.append(ocl_key(c))
    with open(args.ocl_probe, "w") as f:
        json.dump(done, f)
    return 0


def ocl_probe(args, cases, budget_s):
    """Runs the probe child and reads its trace: {ocl_key: [CPU regions seen]}; {} on failure
    (then only the timing test marks fallbacks)."""
    import re
    import subprocess
    import tempfile
    tmp = tempfile.mkdtemp(prefix="peers-ocl-probe-")
    order_file = os.path.join(tmp, "order.json")
    env = dict(os.environ, OPENCV_TRACE="1", OPENCV_TRACE_DEPTH_OPENCV="1000",
               OPENCV_TRACE_LOCATION=os.path.join(tmp, "trace"))
    cmd = [sys.executable, os.path.abspath(__file__), "--ocl-probe", order_file,
           "--ocl-device", args.ocl_device, "--filter", args.filter,
           "--budget", str(max(1.0, budget_s - 10))] + (["--quick"] if args.quick else [])
    try:
        subprocess.run(cmd, env=env, timeout=budget_s, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        order = json.load(open(order_file))
        loc = {}
        for line in open(os.path.join(tmp, "trace.txt")):
            m = re.match(r'l,(\d+),"([^"]*)",\d+,"(.*)",(0x[0-9a-f]+)\s*$', line)
            if m:
                loc[m.group(1)] = (m.group(2).rsplit("/", 1)[-1], m.group(3), int(m.group(4), 16))
        sep = set(k for k, v in loc.items() if "setUseOpenCL" in v[1])

        def cpu_region(lid):
            fname, func, flags = loc.get(lid, ("?", "?", 0))
            return fname.endswith(".simd.hpp") or fname == "parallel.cpp" or \
                (flags >> 16) & 15 == 1 or "hal" in func.lower()
        out = {}
        # The Python thread's events: the file whose regions include the separators.
        for tf in sorted(os.listdir(tmp)):
            if not tf.startswith("trace-"):
                continue
            lines = open(os.path.join(tmp, tf)).read().splitlines()
            if not any(l.startswith("b,") and l.split(",")[3] in sep for l in lines):
                continue
            i, stack, prev_sep, collecting = 0, [], False, False
            call_ns, cpu_ns = 0, {}
            for l in lines:
                f = l.split(",")
                if f[0] == "b":
                    lid = f[3]
                    if not stack:  # a top-level region: a separator or part of the call
                        is_sep = lid in sep
                        if is_sep and collecting:
                            if i < len(order):
                                out[order[i]] = dict(
                                    call_us=round(call_ns / 1e3, 1),
                                    cpu_us={k: round(v / 1e3, 1) for k, v in cpu_ns.items()})
                            i += 1
                            collecting = False
                        elif is_sep and prev_sep:
                            collecting, call_ns, cpu_ns = True, 0, {}
                        prev_sep = is_sep
                    stack.append(lid)
                elif f[0] == "e" and stack:
                    lid = stack.pop()
                    dur = int(f[5]) if len(f) > 5 and f[5].isdigit() else 0
                    if not collecting or lid in sep:
                        continue
                    if not stack:
                        call_ns += dur
                    elif cpu_region(lid) and not any(cpu_region(x) for x in stack[1:]):
                        name = loc.get(lid, ("?",))[0]
                        cpu_ns[name] = cpu_ns.get(name, 0) + dur
        return out
    except Exception as ex:
        print("peers.py: OpenCV trace probe failed: %s" % ex, file=sys.stderr)
        return {}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def probe_fallback(p):
    """A CPU path in a probe record: OpenCV's CPU code took >= 20 µs (an OpenCL call also
    converts its small kernel matrices on the host: a few µs of convert.simd.hpp / IPP copies,
    not a fallback; the CPU code of a filter on 512x512 takes hundreds)."""
    if not p:
        return ""
    cpu = sum(p["cpu_us"].values())
    if cpu >= 20:
        return "OpenCV's trace shows its CPU code ran (%s: %.0f of %.0f µs at <= %dx%d)" % (
            ", ".join(sorted(p["cpu_us"])), cpu, p["call_us"], PROBE_SIZE, PROBE_SIZE)
    return ""


def as_array(cv2, r):
    """A cv2 call's result as a numpy array (threshold returns (retval, dst))."""
    if isinstance(r, tuple):
        r = r[-1]
    return r.get() if isinstance(r, cv2.UMat) else r


def time_ocl(cv2, fn, max_s):
    t0 = time.perf_counter()
    fn()
    cv2.ocl.finish()
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    fn()
    cv2.ocl.finish()
    est = time.perf_counter() - t0
    reps = 1 if est > max_s / 2 else 3 if est > 0.05 else 5
    inner = max(1, int(0.01 / max(est, 1e-6))) if est < 0.01 else 1
    ts = []
    out = None
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            out = fn()
        cv2.ocl.finish()
        ts.append((time.perf_counter() - t0) / inner)
    fr = []
    for _ in range(3 if est < 0.05 else 1):
        t0 = time.perf_counter()
        out = fn()
        t1 = time.perf_counter()
        cv2.ocl.finish()
        fr.append((t1 - t0) / max(time.perf_counter() - t0, 1e-9))
    return dict(us=statistics.median(ts) * 1e6, reps=reps, inner=inner,
                first_ms=round(first * 1e3, 2), host_fraction=round(statistics.median(fr), 3)), out


def check_ocl(np, c, got, want):
    """got (OpenCL) against want (CPU) on the same input: rows of both (every row up to 2048
    rows, else the first and last 3 and every 17th)."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return dict(ok=False, note="shape/type %s %s, CPU %s %s" % (
            got.shape, got.dtype, want.shape, want.dtype))
    h = got.shape[0]
    if h > 2048:
        rows = sorted(set([0, 1, 2, h - 3, h - 2, h - 1] + list(range(0, h, 17))))
        got, want = got[rows], want[rows]
    g, w = got.astype(np.float64), want.astype(np.float64)
    d = np.abs(g - w)
    d[np.isnan(g) & np.isnan(w)] = 0
    if np.issubdtype(want.dtype, np.floating):
        k = c["w"] if c["op"] == "matmul" else 0
        tol = (1e-5 * k if k else 1e-4) * np.abs(w) + 1e-4
        text = "1e-5 K |x| + 1e-4" if k else "1e-4 + 1e-4 |x|"
    else:
        tol, text = 1.0, "1"
    off = ~(d <= tol)
    n_off = int(off.sum())
    return dict(ok=n_off == 0, max_diff=float(np.nanmax(d)) if d.size else 0.0, n_off=n_off,
                n=int(d.size), tolerance=text)


def run_ocl(cv2, np, c, a, b, maps, cpu_us, cpu_fn, want, per, probe):
    """The OpenCL cell of case c. cpu_us / want: the CPU column's time and result (None: made
    here with one CPU call of cpu_fn). probe: ocl_probe's result."""
    known = ocl_known_fallback(c)
    if known:
        return dict(us=None, fallback=known, note="CPU path (not timed)")
    seen = probe_fallback(probe.get(ocl_key(c)))
    if seen:
        return dict(us=None, note="CPU path (not timed)", fallback=seen,
                    probe=probe[ocl_key(c)])
    ua, ub = cv2.UMat(a), cv2.UMat(b)
    umaps = (cv2.UMat(maps[0]), cv2.UMat(maps[1])) if maps is not None else None
    fn, note = cv_fn(cv2, np, c, ua, ub, umaps)
    if fn is None:
        return dict(us=None, note=note)
    if want is None:  # the CPU column was not run: one call for the check and the time
        t0 = time.perf_counter()
        want = as_array(cv2, cpu_fn())
        cpu_us = (time.perf_counter() - t0) * 1e6
    r, out = time_ocl(cv2, fn, per)
    r["note"] = note
    r["cpu_us"] = cpu_us
    r["check"] = check_ocl(np, c, as_array(cv2, out), want)
    if r["host_fraction"] >= 0.8 and cpu_us and r["us"] >= max(100.0, 0.8 * cpu_us):
        r["fallback"] = ("suspected: the call returns when its work is done (host fraction "
                         "%.2f) and takes %.2fx the CPU path's time" % (
                             r["host_fraction"], r["us"] / cpu_us))
    return r


# ---- main -----------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", default="peers.json")
    ap.add_argument("--quick", action="store_true", help="1920x1080 only")
    ap.add_argument("--budget", type=float, default=float(os.environ.get("PEERS_BUDGET", 85)),
                    help="seconds for the whole run (default 85)")
    ap.add_argument("--filter", default="", help="substring of case names to run")
    ap.add_argument("--no-opencv1", action="store_true", help="skip the 1-thread OpenCV runs")
    ap.add_argument("--skip", default="",
                    help="comma-separated peers not to run: cupy,cvcuda,opencv,opencv_ocl "
                    "(opencv_ocl without opencv still makes one CPU call a case, its reference)")
    ap.add_argument("--ocl-device", default=os.environ.get("OPENCV_OPENCL_DEVICE", ":GPU:0"),
                    help="OpenCV's OpenCL device as OPENCV_OPENCL_DEVICE takes it, "
                    "PLATFORM:TYPE:DEVICE (default: that variable, else ':GPU:0')")
    ap.add_argument("--ocl-probe", default="", help=argparse.SUPPRESS)  # the probe's child
    args = ap.parse_args()
    if args.ocl_probe:
        os.environ["OPENCV_OPENCL_DEVICE"] = args.ocl_device
        return ocl_probe_child(args, [c for c in case_list(args.quick)
                                      if args.filter in c["name"]])
    skip = set(x for x in args.skip.split(",") if x)
    t_start = time.time()
    doc = dict(tool="peers.py", date=datetime.datetime.now(datetime.timezone.utc).isoformat(),
               budget_s=args.budget, complete=False, rows=[], errors=[])
    try:
        import numpy as np
    except ImportError as ex:
        doc["errors"].append("numpy: %s" % ex)
        json.dump(doc, open(args.json, "w"), indent=1)
        print("peers.py: numpy is missing", file=sys.stderr)
        return 1
    cp = ndi = cv2 = None
    try:
        import cupy as cp
        import cupyx.scipy.ndimage as ndi
        doc["cupy"] = cp.__version__
        doc["gpu"] = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    except Exception as ex:
        doc["errors"].append("cupy: %s" % ex)
        cp = None
    cvcuda = None
    if cp is not None:
        try:
            import cvcuda
            doc["cvcuda"] = getattr(cvcuda, "__version__", "?")
        except Exception as ex:
            doc["errors"].append("cvcuda: %s" % ex)
            cvcuda = None
    # OpenCV reads its device choice when it first initialises OpenCL: set before the import.
    os.environ["OPENCV_OPENCL_DEVICE"] = args.ocl_device
    try:
        import cv2
        doc["opencv"] = cv2.__version__
        doc["opencv_threads"] = cv2.getNumThreads()
    except Exception as ex:
        doc["errors"].append("cv2: %s" % ex)
        cv2 = None
    ocl = cv2 is not None and "opencv_ocl" not in skip
    if ocl:
        try:
            cv2.ocl.setUseOpenCL(True)
            dev = cv2.ocl.Device.getDefault()
            ocl = cv2.ocl.haveOpenCL() and cv2.ocl.useOpenCL() and bool(dev.name())
            doc["opencv_ocl"] = dict(
                selector=args.ocl_device, active=bool(ocl), device=dev.name(),
                vendor=dev.vendorName(), version=dev.version(), driver=dev.driverVersion(),
                type={2: "CPU", 4: "GPU"}.get(dev.type(), str(dev.type())))
            print("peers.py: OpenCV OpenCL device (OPENCV_OPENCL_DEVICE=%s): %s" % (
                args.ocl_device, "%s, %s, %s" % (dev.name(), dev.vendorName(), dev.version())
                if ocl else "none"), flush=True)
            if not ocl:
                doc["errors"].append("cv2.ocl: no OpenCL device for OPENCV_OPENCL_DEVICE=%s" %
                                     args.ocl_device)
        except Exception as ex:
            doc["errors"].append("cv2.ocl: %s" % ex)
            ocl = False
    doc["cpu_count"] = os.cpu_count()

    def save():
        doc["elapsed_s"] = round(time.time() - t_start, 1)
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, args.json)

    inputs = {}

    def get(fmt, w, h, seed):
        key = (fmt, w, h, seed)
        if key not in inputs:
            if len(inputs) > 6:
                inputs.clear()
            inputs[key] = host_input(np, fmt, w, h, seed)
        return inputs[key]

    cases = [c for c in case_list(args.quick) if args.filter in c["name"]]
    probe = {}
    if ocl:
        t0 = time.time()
        probe = ocl_probe(args, cases, max(10.0, args.budget / 4))
        doc["opencv_ocl"]["probe"] = dict(
            seconds=round(time.time() - t0, 1), cases=len(probe),
            cpu_path=sorted(k for k, v in probe.items() if probe_fallback(v)))
        print("peers.py: OpenCV trace probe: %d cases in %.0f s; CPU path: %s" % (
            len(probe), time.time() - t0, ", ".join(doc["opencv_ocl"]["probe"]["cpu_path"])
            or "none"), flush=True)
    all_threads = cv2.getNumThreads() if cv2 else 0
    for i, c in enumerate(cases):
        left = args.budget - (time.time() - t_start)
        row = dict(case=c["name"], op=c["op"], size="%dx%d" % (c["w"], c["h"]), format=c["fmt"])
        if left < 3:
            row["skipped"] = "time budget"
            doc["rows"].append(row)
            continue
        try:
            if c["op"] == "matmul":
                a = get("f32x1", c["w"], c["h"], 1)
                b = get("f32x1", c["w"], c["h"], 2)
            else:
                a = get(c["fmt"], c["w"], c["h"], 1)
                b = get(c["fmt"], c["w"], c["h"], 2)
            maps = smooth_maps(np, c["w"], c["h"]) if c["op"] == "remap" else None
            if cp is not None:
                da, db = cp.asarray(a), cp.asarray(b)
                try:
                    fn, note = (None, "skipped (--skip)") if "cupy" in skip else \
                        cupy_fn(cp, ndi, c, da, db, maps)
                    if fn is None:
                        row["cupy"] = dict(us=None, note=note)
                    else:
                        r = time_cupy(cp, fn, 2.0)
                        r["note"] = note
                        row["cupy"] = r
                except Exception as ex:
                    row["cupy"] = dict(us=None, note="error: %s" % str(ex).splitlines()[0][:160])
                if cvcuda is not None and "cvcuda" not in skip:
                    try:
                        s = cp.cuda.Stream(non_blocking=True)
                        fn, note = cvcuda_fn(cvcuda, cp, c, da, db, maps, cvcuda.as_stream(s))
                        if fn is None:
                            row["cvcuda"] = dict(us=None, note=note)
                        else:
                            r = time_cupy(cp, fn, 2.0, s)
                            r["note"] = note
                            row["cvcuda"] = r
                    except Exception as ex:
                        row["cvcuda"] = dict(us=None,
                                             note="error: %s" % str(ex).splitlines()[0][:160])
                del da, db
                cp.get_default_memory_pool().free_all_blocks()
            want, cpu_us = None, None
            if cv2 is not None and "opencv" not in skip:
                fn, note = cv_fn(cv2, np, c, a, b, maps)
                if fn is None:
                    row["opencv_all"] = dict(us=None, note=note)
                    row["opencv_1"] = dict(us=None, note=note)
                else:
                    per = max(0.5, min(5.0, left / 8))
                    cv2.setNumThreads(all_threads)
                    keep = []
                    r = time_host(fn, per, keep)
                    if ocl:
                        want, cpu_us = as_array(cv2, keep[0]), r["us"]
                    del keep
                    r["note"] = note
                    r["threads"] = all_threads
                    row["opencv_all"] = r
                    # 1 thread is ~cores x slower: skip it where it would eat the budget
                    est1 = r["us"] * 1e-6 * max(1, (os.cpu_count() or 1))
                    if args.no_opencv1 or est1 * 3 > min(per * 2, left / 4):
                        row["opencv_1"] = dict(us=None, note="skipped (estimated %.1f s a call)"
                                               % est1)
                    else:
                        cv2.setNumThreads(1)
                        r1 = time_host(fn, per)
                        r1["note"] = note
                        r1["threads"] = 1
                        row["opencv_1"] = r1
                    cv2.setNumThreads(all_threads)
            if ocl:
                left = args.budget - (time.time() - t_start)
                try:
                    cpu_fn, _ = cv_fn(cv2, np, c, a, b, maps)
                    row["opencv_ocl"] = run_ocl(cv2, np, c, a, b, maps, cpu_us, cpu_fn, want,
                                                max(0.5, min(5.0, left / 8)), probe)
                except Exception as ex:
                    row["opencv_ocl"] = dict(us=None, note="error: %s" %
                                             str(ex).splitlines()[0][:160])
                del want
        except Exception as ex:
            row["error"] = "%s: %s" % (type(ex).__name__, ex)
            traceback.print_exc()
        doc["rows"].append(row)
        cu = row.get("cupy", {}).get("us")
        cc = row.get("cvcuda", {}).get("us")
        oa = row.get("opencv_all", {}).get("us")
        oc = row.get("opencv_ocl", {})
        print("[peers] %-44s cupy %10s (%s)  cvcuda %10s (%s)  opencv-all %10s  opencv-ocl %10s%s"
              % (c["name"], "%.1f" % cu if cu else "-", row.get("cupy", {}).get("method", ""),
                 "%.1f" % cc if cc else "-", row.get("cvcuda", {}).get("method", ""),
                 "%.1f" % oa if oa else "-", "%.1f" % oc["us"] if oc.get("us") else "-",
                 (" CPU path: " + oc["fallback"]) if oc.get("fallback") else
                 (" differs from CPU: %s" % oc["check"]) if not oc.get("check", {"ok": 1})["ok"]
                 else ""), flush=True)
        save()
    doc["complete"] = all("skipped" not in r for r in doc["rows"])
    save()
    n_skip = sum("skipped" in r for r in doc["rows"])
    print("peers.py: %d cases in %.0f s, %d skipped for the time budget; wrote %s" % (
        len(doc["rows"]), time.time() - t_start, n_skip, args.json))
    return 0


if __name__ == "__main__":
    sys.exit(main())
