#!/usr/bin/env python3
"""Merges pixflow-bench JSON, pixflow-bench-opencl JSON and peers.py JSON into one side-by-side
Markdown table and a PNG bar chart.

Columns: pixflow µs, NPP µs (same process), CuPy µs, OpenCV µs with all threads and with one,
the device copy of the same traffic, pixflow / copy, best peer / pixflow (> 1: pixflow is
faster), and for 8192x8192 u8 the PERFORMANCE.md target with met / not met; then the OpenCL
group: pixflow-OpenCL wall and device µs, OpenCL / CUDA (target <= 1.25), OpenCV's OpenCL
(T-API) µs and whether pixflow-OpenCL beats it, and the OpenCL check.
"""

OCL_TARGET = 1.25  # issue 11: every case within 1.25x of pixflow-CUDA
import argparse
import json
import math
import sys


def load(path):
    if not path:
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as ex:
        print("compare.py: cannot read %s: %s" % (path, ex), file=sys.stderr)
        return None


def num(v):
    return v if isinstance(v, (int, float)) and math.isfinite(v) and v > 0 else None


def cell(v, prec=1):
    return "%.*f" % (prec, v) if num(v) is not None else ""


def ocl_cells(m, pf, n):
    """The OpenCL group's cells of merged row m (pf: pixflow-CUDA's µs); counts into n."""
    o, dev = m.get("ocl"), m.get("ocl_dev")
    st = m.get("ocl_status", "")
    if o is None:
        o_cell = ("-" if not st else "n/a" if st.startswith("n/a") else
                  "not reached" if st.startswith("not reached") or st.startswith("running")
                  else st.split(" (")[0])
    else:
        o_cell = cell(o)
    ratio = ""
    if o is not None and pf and not m.get("ocl_failed") and not m.get("failed"):
        r = o / pf
        n["ratio"] += 1
        n["ratio_met"] += r <= OCL_TARGET
        n["ratio_dev_met"] += dev is not None and dev / pf <= OCL_TARGET
        ratio = "%.2f %s" % (r, "✓" if r <= OCL_TARGET else "✗")
        if dev is not None:
            ratio += " (%.2f)" % (dev / pf)
    cv = m.get("cvocl")
    if m.get("cvocl_fallback"):
        cv_cell = "CPU path"
    else:
        cv_cell = cell(cv) + ("≠" if cv is not None and m.get("cvocl_differs") else "")
    vs = ""
    if cv is not None and not m.get("cvocl_fallback") and o is not None and \
            not m.get("ocl_failed"):
        n["cv"] += 1
        n["cv_beat"] += o < cv
        vs = "%.2f" % (cv / o)
    check = "**FAILED**" if m.get("ocl_failed") else m.get("ocl_check", "")
    if check == "not run":
        check = ""
    return [o_cell, cell(dev), ratio, cv_cell, vs, check]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", help="pixflow-bench --json output")
    ap.add_argument("--opencl", help="pixflow-bench-opencl --json output")
    ap.add_argument("--peers", action="append", default=[],
                    help="peers.py --json output; repeatable: a later file fills the peers an "
                    "earlier one lacks (e.g. a CV-CUDA-only run of another day)")
    ap.add_argument("--md", default="RESULTS.md")
    ap.add_argument("--png", default="chart.png")
    args = ap.parse_args()
    bench = load(args.bench)
    ocl = load(args.opencl)
    peer_runs = [p for p in (load(path) for path in args.peers) if p]
    if bench is None and ocl is None and not peer_runs:
        print("compare.py: nothing to compare (no readable --bench, --opencl or --peers)",
              file=sys.stderr)
        return 1

    rows = {}  # case name -> merged row
    order = []

    def row(name):
        if name not in rows:
            rows[name] = dict(case=name)
            order.append(name)
        return rows[name]

    for r in (bench or {}).get("rows", []):
        m = row(r["case"])
        m["size"], m["format"], m["op"] = r.get("size", ""), r.get("format", ""), r.get("op", "")
        m["status"] = r.get("status", "")
        m["pixflow"] = num(r.get("us"))
        m["capturable"] = r.get("capturable", True)
        m["copy"] = num(r.get("copy_us"))
        npp = r.get("npp") or {}
        m["npp"] = num(npp.get("us"))
        m["npp_fn"] = npp.get("function", "")
        m["check"] = r.get("check", "")
        m["failed"] = bool(r.get("failed"))
        m["target"] = r.get("target_us")
    for r in (ocl or {}).get("rows", []):
        m = row(r["case"])
        m.setdefault("size", r.get("size", ""))
        m.setdefault("format", r.get("format", ""))
        m.setdefault("op", r.get("op", ""))
        m["ocl"] = num(r.get("us"))
        m["ocl_dev"] = num(r.get("device_us"))
        m["ocl_status"] = r.get("status", "")
        m["ocl_check"] = r.get("check", "")
        m["ocl_failed"] = bool(r.get("failed"))
    for peers in peer_runs:
        for r in peers.get("rows", []):
            m = row(r["case"])
            m.setdefault("size", r.get("size", ""))
            m.setdefault("format", r.get("format", ""))
            m.setdefault("op", r.get("op", ""))
            for key, field in (("cupy", "cupy"), ("cvcuda", "cvcuda"), ("cv_all", "opencv_all"),
                               ("cv_1", "opencv_1")):
                if m.get(key) is None:
                    m[key] = num((r.get(field) or {}).get("us"))
                    if key in ("cupy", "cvcuda"):
                        m[key + "_method"] = (r.get(field) or {}).get("method", "")
            oc = r.get("opencv_ocl")
            if oc and "cvocl" not in m and (num(oc.get("us")) or oc.get("fallback")):
                m["cvocl"] = num(oc.get("us"))
                m["cvocl_fallback"] = oc.get("fallback", "")
                chk = oc.get("check") or {}
                m["cvocl_differs"] = chk.get("ok") is False

    out = []
    meta = []
    if bench:
        meta.append("pixflow-bench: %s, driver %s, runtime %s, %s%s" % (
            bench.get("gpu"), bench.get("driver_version"), bench.get("runtime_version"),
            bench.get("date"), "" if bench.get("complete", True) else
            " (INCOMPLETE: %s)" % bench.get("stopped", "")))
    if ocl:
        n_nr = sum(1 for r in ocl.get("rows", []) if not num(r.get("us")) and
                   not r.get("status", "").startswith("n/a") and not r.get("failed"))
        meta.append("pixflow-bench-opencl: %s, %s%s" % (
            ocl.get("device") or ocl.get("gpu"), ocl.get("date"),
            "" if ocl.get("complete", True) else " (INCOMPLETE: %s; %d cases without a time)" %
            (ocl.get("stopped") or "cut off", n_nr)) +
            (" (merged: %s)" % ocl["merged"] if ocl.get("merged") else ""))
    for peers in peer_runs:
        dev = (peers.get("opencv_ocl") or {})
        meta.append("peers.py: CuPy %s, CV-CUDA %s, OpenCV %s (%s threads%s), %s%s" % (
            peers.get("cupy", "-"), peers.get("cvcuda", "-"), peers.get("opencv", "-"),
            peers.get("opencv_threads", "?"),
            "; OpenCL: %s, %s" % (dev.get("device"), dev.get("version")) if dev.get("active")
            else "",
            peers.get("date", ""), "" if peers.get("complete", True) else
            " (some cases skipped for the time budget)"))
    out.append("# pixflow benchmark results\n")
    out += ["- " + m for m in meta]
    out.append("")
    out.append("Times in µs per call (CUDA graph replay / N; OpenCV wall time on the host). "
               "`copy`: device-to-device copy with the same read + write traffic. "
               "`pf/copy`: pixflow / copy (1.0 = at the bandwidth floor). "
               "`best peer/pf`: fastest peer / pixflow (> 1: pixflow is faster). "
               "`target`: PERFORMANCE.md, 8192x8192 u8 only. CuPy and CV-CUDA times marked * "
               "were taken with events around a loop (capture failed). CV-CUDA's sobel row "
               "is its Laplacian (ksize 3, output in the input's depth).\n")
    if ocl or any(r.get("cvocl") is not None or r.get("cvocl_fallback") for r in rows.values()):
        out.append("OpenCL group: `pf-OCL` pixflow's OpenCL backend (pixflow-bench-opencl), wall "
                   "clock per call: batches of calls each ended by clFinish, median / calls "
                   "(OpenCL has no graphs: the host's per-enqueue cost is in). `OCL dev`: the "
                   "same calls queued behind a user event and released at once, timed between "
                   "profiled markers (device time without host gaps; empty where the op blocks "
                   "while enqueuing). `OCL/CUDA`: pf-OCL / pixflow (CUDA graph replay), "
                   "target ≤ %.2f (✓ / ✗), the device-time ratio in brackets. `OpenCV-OCL`: "
                   "OpenCV's OpenCL path (cv2.UMat, a Python loop ended by cv2.ocl.finish()); "
                   "`CPU path`: OpenCV ran its CPU code (its sources, its trace, or the call "
                   "timing say so), not an OpenCL time; `≠`: its result differs from OpenCV's "
                   "CPU result. `vs OpenCV-OCL`: OpenCV-OCL / pf-OCL (> 1: pixflow-OpenCL is "
                   "faster). `OCL check`: pixflow-OpenCL against the reference.\n" % OCL_TARGET)
    hdr = ["case", "pixflow", "NPP", "CV-CUDA", "CuPy", "OpenCV-all", "OpenCV-1", "copy",
           "pf/copy", "best peer/pf", "target", "check"]
    with_ocl = bool(ocl) or any("cvocl" in r for r in rows.values())
    if with_ocl:
        hdr += ["pf-OCL", "OCL dev", "OCL/CUDA", "OpenCV-OCL", "vs OpenCV-OCL", "OCL check"]
    n_ocl = {"ratio": 0, "ratio_met": 0, "ratio_dev_met": 0, "cv": 0, "cv_beat": 0}
    out.append("| " + " | ".join(hdr) + " |")
    out.append("|" + "---|" * len(hdr))
    chart = []
    n_met = n_target = 0
    for name in order:
        m = rows[name]
        pf = m.get("pixflow")
        status = m.get("status", "")
        if pf is None:
            pf_cell = ("-" if not status else "not capturable" if m.get("capturable") is False
                       else "n/a" if status.startswith("n/a") else status.split(" (")[0])
        else:
            pf_cell = cell(pf)
        peers_us = [v for v in (m.get("npp"), m.get("cvcuda"), m.get("cupy"), m.get("cv_all"),
                                m.get("cv_1")) if num(v)]
        best = min(peers_us) if peers_us else None
        ratio_copy = pf / m["copy"] if pf and m.get("copy") else None
        ratio_peer = best / pf if pf and best else None
        tgt = m.get("target")
        tgt_cell = ""
        if num(tgt):
            n_target += 1
            if pf is None or m.get("failed"):
                tgt_cell = "≤ %g: not met (%s)" % (tgt, "FAILED check" if m.get("failed")
                                                   else "no result")
            elif pf <= tgt:
                n_met += 1
                tgt_cell = "≤ %g: **met**" % tgt
            else:
                tgt_cell = "≤ %g: not met" % tgt
        check = m.get("check", "")
        if m.get("failed"):
            check = "**FAILED**"
        cupy = cell(m.get("cupy")) + ("*" if m.get("cupy") and m.get("cupy_method") == "loop"
                                      else "")
        cvc = cell(m.get("cvcuda")) + ("*" if m.get("cvcuda") and
                                       m.get("cvcuda_method") == "loop" else "")
        cells = [name, pf_cell, cell(m.get("npp")), cvc, cupy, cell(m.get("cv_all")),
                 cell(m.get("cv_1")), cell(m.get("copy")), cell(ratio_copy, 2),
                 cell(ratio_peer, 2), tgt_cell, check]
        if with_ocl:
            cells += ocl_cells(m, pf, n_ocl)
        out.append("| " + " | ".join(cells) + " |")
        if "8192x8192" in name and m.get("format") == "u8x1":
            chart.append((name.replace(" u8x1 8192x8192", "").replace(" u8x1->s16x1 8192x8192",
                                                                       " ->s16"),
                          pf, m.get("npp"), m.get("cvcuda"), m.get("cupy"), m.get("cv_all"),
                          m.get("copy"), m.get("ocl"),
                          None if m.get("cvocl_fallback") else m.get("cvocl")))
    out.append("")
    if n_target:
        out.append("Targets met (8192x8192 u8): %d of %d.\n" % (n_met, n_target))
    if with_ocl and n_ocl["ratio"]:
        out.append("pixflow-OpenCL within %.2fx of pixflow-CUDA: %d of %d cases timed on both "
                   "(wall clock; by device time: %d).\n" % (
                       OCL_TARGET, n_ocl["ratio_met"], n_ocl["ratio"], n_ocl["ratio_dev_met"]))
    if with_ocl and n_ocl["cv"]:
        out.append("pixflow-OpenCL faster than OpenCV's OpenCL path: %d of %d cases where "
                   "OpenCV ran OpenCL code.\n" % (n_ocl["cv_beat"], n_ocl["cv"]))
    failed = [n for n in order if rows[n].get("failed")]
    if failed:
        out.append("FAILED correctness checks: " + ", ".join(failed) + "\n")
    ofailed = [n for n in order if rows[n].get("ocl_failed")]
    if ofailed:
        out.append("FAILED OpenCL checks or calls: " + ", ".join(ofailed) + "\n")
    with open(args.md, "w") as f:
        f.write("\n".join(out) + "\n")
    print("compare.py: %d cases -> %s" % (len(order), args.md))

    # Chart: 8K u8 cases (else whatever exists), log-scale µs per library.
    if not chart:
        for name in order:
            m = rows[name]
            if m.get("format") == "u8x1":
                chart.append((name, m.get("pixflow"), m.get("npp"), m.get("cvcuda"),
                              m.get("cupy"), m.get("cv_all"), m.get("copy"), m.get("ocl"),
                              None if m.get("cvocl_fallback") else m.get("cvocl")))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("compare.py: matplotlib missing, no %s" % args.png, file=sys.stderr)
        return 0
    if not chart:
        print("compare.py: no u8x1 cases to chart", file=sys.stderr)
        return 0
    labels = [c[0] for c in chart]
    series = [("pixflow", 1), ("NPP", 2), ("CV-CUDA", 3), ("CuPy", 4), ("OpenCV-all", 5),
              ("copy", 6)]
    if with_ocl:
        series += [("pixflow OpenCL", 7), ("OpenCV OpenCL", 8)]
    fig, ax = plt.subplots(figsize=(max(8, 0.5 * len(labels)), 5.5))
    width = 0.84 / len(series)
    for j, (lab, idx) in enumerate(series):
        xs = [i + (j - (len(series) - 1) / 2) * width for i in range(len(chart))]
        ys = [c[idx] if num(c[idx]) else 0 for c in chart]
        ax.bar(xs, ys, width, label=lab)
    ax.set_yscale("log")
    ax.set_ylabel("µs per call (log)")
    ax.set_xticks(range(len(chart)))
    ax.set_xticklabels(labels, rotation=70, ha="right", fontsize=7)
    ax.set_title("pixflow vs peers, u8 1-channel" + (" 8192x8192" if "8192" not in labels[0]
                                                    else ""))
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    print("compare.py: chart -> %s" % args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
