#!/usr/bin/env python3
"""What the Python package adds per call over the C++ API (issue 12: under 5 µs).

For each case (op, size, framework) four loops of N calls on the same arrays, each ended by one
synchronisation of the stream, median of --repeats runs, in µs per call:
  cpp       the op's C++ function in a C++ loop (BoundOp.time_loop: the schema-bound call a
            pipeline stage makes, no Python in the loop): the C++ API's own cost;
  native    the native call from Python (BoundOp.call: the arrays' attributes read in C++, the
            stream, the run), without the generated function's keyword handling;
  py_out    pixflow.<op>(src, **params, out=out): the package's whole call;
  py_before the call as the package made it before the native call (session 25: the arrays
            described in Python, then BoundOp.run), for a before/after in the same run;
  py_alloc  pixflow.<op>(src, **params): with the output allocated by the array's framework.
`added` = py_out - cpp (medians); `added_rounds` the same per round. The loops run
interleaved, one of each per round. On a GPU the loops measure max(host cost, device time) per call: small
images (256x256) show the host cost, 1080p shows whether it stays hidden behind the kernels.
CV-CUDA's Python call on the same op is timed the same way where `cvcuda` imports.
Results are checked: every loop's output equals the CPU result of the same call.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time

import numpy as np

import pixflow

CASES = [("add", {"value": 3}), ("median", {"k": 3}), ("gaussian", {"sigma": 2.0}),
         ("box", {"k": 5})]
SIZES = [(256, 256), (1920, 1080)]


def timed(fn, sync, n: int, repeats: int) -> float:
    fn()
    sync()
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        runs.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(runs)


def frameworks(only: list[str]) -> list[tuple[str, object, object, object]]:
    """(name, to_device, to_host, sync) of the frameworks present."""
    out = []
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            out.append(("cupy", cupy.asarray, cupy.asnumpy,
                        lambda: cupy.cuda.get_current_stream().synchronize()))
    except Exception:  # noqa: BLE001 - absent or no GPU
        pass
    try:
        import torch

        if torch.cuda.is_available():
            out.append(("torch", lambda a: torch.from_numpy(a).cuda(),
                        lambda a: a.cpu().numpy(), torch.cuda.synchronize))
    except Exception:  # noqa: BLE001
        pass
    out.append(("numpy", lambda a: a, lambda a: a, lambda: None))  # last: the slowest loops
    return [f for f in out if not only or f[0] in only]


def cvcuda_call(op: str, params: dict):
    """CV-CUDA's Python call of the same op into a preallocated output, on NHWC tensors over
    CuPy arrays (as bench/peers.py calls it), or None where it has no such op or no cvcuda.
    Its results are not compared (its borders and rounding differ; peers.py says where)."""
    try:
        import cupy
        import cvcuda
    except ImportError:
        return None
    r101 = cvcuda.Border.REFLECT101 if hasattr(cvcuda, "Border") else None
    if op == "median":
        def run(src, dst, stream):
            cvcuda.median_blur_into(dst, src, (params["k"], params["k"]), stream=stream)
    elif op == "gaussian":  # pixflow's u8 window for sigma 2: 2 * ceil(3 sigma) + 1 = 13
        def run(src, dst, stream):
            cvcuda.gaussian_into(dst, src, (13, 13), (params["sigma"], params["sigma"]), r101,
                                 stream=stream)
    elif op == "box":
        def run(src, dst, stream):
            cvcuda.averageblur_into(dst, src, (params["k"], params["k"]), (-1, -1), r101,
                                    stream=stream)
    else:
        return None
    return run, cupy, cvcuda


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--frameworks", default="", help="comma list (default: every one present)")
    args = ap.parse_args()
    rows = []
    rng = np.random.default_rng(0)
    for fw, to_dev, to_host, sync in frameworks([f for f in args.frameworks.split(",") if f]):
        for op, params in CASES:
            fn = getattr(pixflow, op)
            for w, h in SIZES:
                host = rng.integers(0, 256, size=(h, w), dtype=np.uint8)
                want = fn(host, **params)
                src = to_dev(host)
                out = fn(src, **params)
                # About 0.1 s a loop: n from one timed call (at least 20, at most 2000).
                t0 = time.perf_counter()
                fn(src, **params, out=out)
                sync()
                one = time.perf_counter() - t0
                n = max(20, min(2000, int(0.1 / max(one, 1e-6))))
                bound = pixflow._bind(op, params, {})
                stream = pixflow._stream(pixflow._framework(src), src, None)
                row = {"framework": fw, "op": op, "params": params, "size": f"{w}x{h}",
                       "calls": n}
                # The four loops interleaved, --repeats rounds, median per column: drift of
                # the machine (the C++ loop alone moved by 5 µs between runs) hits every column
                # alike instead of the one that happened to run then.
                loops = {
                    "cpp": lambda: bound.time_loop(src, out, stream, n) * 1e6,
                    "native": lambda: timed(lambda: bound.call(src, out, None, None, None), sync,
                                            n, 1),
                    "py_out": lambda: timed(lambda: fn(src, **params, out=out), sync, n, 1),
                    "py_before": lambda: timed(
                        lambda: pixflow._run(bound, src, out, None, None, None), sync, n, 1),
                    "py_alloc": lambda: timed(lambda: fn(src, **params), sync, n, 1),
                }
                got = {k: [] for k in loops}
                for _ in range(args.repeats):
                    for k, loop in loops.items():
                        got[k].append(loop())
                for k, v in got.items():
                    row[k] = statistics.median(v)
                row["added_rounds"] = [p - c for p, c in zip(got["py_out"], got["cpp"])]
                row["added"] = row["py_out"] - row["cpp"]
                row["check"] = "ok" if np.array_equal(to_host(out), want) else "MISMATCH"
                cv = cvcuda_call(op, params) if fw == "cupy" else None
                if cv is not None:
                    run, cupy, cvcuda = cv
                    t_src = cvcuda.as_tensor(src.reshape(1, h, w, 1), "NHWC")
                    d_out = cupy.empty_like(src)
                    t_dst = cvcuda.as_tensor(d_out.reshape(1, h, w, 1), "NHWC")
                    s = cvcuda.as_stream(cupy.cuda.get_current_stream())
                    try:
                        row["cvcuda"] = timed(lambda: run(t_src, t_dst, s), sync, n,
                                              args.repeats)
                    except Exception as ex:  # noqa: BLE001 - reported, not fatal
                        row["cvcuda_error"] = str(ex).splitlines()[0][:160]
                rows.append(row)
                print(f"{fw:6} {op:9} {w}x{h:<5} cpp {row['cpp']:8.2f}  native "
                      f"{row['native']:8.2f}  py_out {row['py_out']:8.2f}  py_alloc "
                      f"{row['py_alloc']:8.2f}  before {row['py_before']:8.2f}  added {row['added']:6.2f} µs"
                      + (f"  cvcuda {row['cvcuda']:8.2f}" if "cvcuda" in row else "")
                      + f"  {row['check']}", flush=True)
    meta = {"when": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "pixflow": pixflow.__version__, "python": sys.version.split()[0],
            "devices": [d["description"] for d in pixflow.info()["devices"]]}
    try:
        import cvcuda  # noqa: F401

        meta["cvcuda"] = cvcuda.__version__
    except ImportError:
        meta["cvcuda"] = "not installed"
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    return 0 if all(r["check"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
