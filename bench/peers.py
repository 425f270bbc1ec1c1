#!/usr/bin/env python3
"""Peers of pixflow-bench outside the process: CuPy (cupyx.scipy.ndimage) and CV-CUDA (the
cvcuda wheel, when importable) on the GPU, OpenCV (cv2) on the host CPU, on the cases of
pixflow-bench (same names, so compare.py can join them).

CuPy and CV-CUDA are timed like pixflow-bench (CV-CUDA's ops run on a CuPy stream through
cvcuda.as_stream, on NHWC tensors wrapping CuPy arrays, into preallocated outputs): N calls
captured into a CUDA graph (Stream.begin_capture / end_capture), one warm-up replay, median
of 5 replays under CUDA events, divided by N. Where capture fails (a function allocates or
syncs), events around a loop of N calls: the "method" field says which. OpenCV is timed with
perf_counter, median of a few runs after a warm-up, once with all threads and once with
cv2.setNumThreads(1).

The run is time-boxed (--budget seconds): cases are run in priority order (1080p, then 8K u8,
then the rest) and the JSON is rewritten after every case, so a cut-off run still reports.
"""
import argparse
import datetime
import json
import math
import os
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
              "threshold", "add", "sub", "absdiff", "mul"):
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
    op, p = c["op"], c["p"]
    R101 = cv2.BORDER_REFLECT_101
    if op == "median":
        if a.dtype == np.float32 and p["k"] > 5:
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
        dd = cv2.CV_16S if a.dtype == np.uint8 else cv2.CV_32F
        return (lambda: cv2.Sobel(a, dd, 1, 0, ksize=3, borderType=R101)), ""
    if op == "scharr":
        dd = cv2.CV_16S if a.dtype == np.uint8 else cv2.CV_32F
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
    if op == "add":
        return (lambda: cv2.add(a, b)), ""
    if op == "sub":
        return (lambda: cv2.subtract(a, b)), ""
    if op == "absdiff":
        return (lambda: cv2.absdiff(a, b)), ""
    if op == "mul":
        return (lambda: cv2.multiply(a, b)), ""
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


def time_host(fn, max_s):
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    reps = 1 if first > max_s / 2 else 3 if first > 0.05 else 5
    inner = max(1, int(0.01 / max(first, 1e-6))) if first < 0.01 else 1
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        ts.append((time.perf_counter() - t0) / inner)
    return dict(us=statistics.median(ts) * 1e6, reps=reps, inner=inner)


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
                    help="comma-separated peers not to run: cupy,cvcuda,opencv")
    args = ap.parse_args()
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
    try:
        import cv2
        doc["opencv"] = cv2.__version__
        doc["opencv_threads"] = cv2.getNumThreads()
    except Exception as ex:
        doc["errors"].append("cv2: %s" % ex)
        cv2 = None
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
            if cv2 is not None and "opencv" not in skip:
                fn, note = cv_fn(cv2, np, c, a, b, maps)
                if fn is None:
                    row["opencv_all"] = dict(us=None, note=note)
                    row["opencv_1"] = dict(us=None, note=note)
                else:
                    per = max(0.5, min(5.0, left / 8))
                    cv2.setNumThreads(all_threads)
                    r = time_host(fn, per)
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
        except Exception as ex:
            row["error"] = "%s: %s" % (type(ex).__name__, ex)
            traceback.print_exc()
        doc["rows"].append(row)
        cu = row.get("cupy", {}).get("us")
        cc = row.get("cvcuda", {}).get("us")
        oa = row.get("opencv_all", {}).get("us")
        print("[peers] %-44s cupy %10s (%s)  cvcuda %10s (%s)  opencv-all %10s" % (
            c["name"], "%.1f" % cu if cu else "-", row.get("cupy", {}).get("method", ""),
            "%.1f" % cc if cc else "-", row.get("cvcuda", {}).get("method", ""),
            "%.1f" % oa if oa else "-"), flush=True)
        save()
    doc["complete"] = all("skipped" not in r for r in doc["rows"])
    save()
    n_skip = sum("skipped" in r for r in doc["rows"])
    print("peers.py: %d cases in %.0f s, %d skipped for the time budget; wrote %s" % (
        len(doc["rows"]), time.time() - t_start, n_skip, args.json))
    return 0


if __name__ == "__main__":
    sys.exit(main())
