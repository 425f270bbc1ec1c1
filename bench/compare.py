#!/usr/bin/env python3
"""Merges pixflow-bench JSON and peers.py JSON into one side-by-side Markdown table and a PNG
bar chart.

Columns: pixflow µs, NPP µs (same process), CuPy µs, OpenCV µs with all threads and with one,
the device copy of the same traffic, pixflow / copy, best peer / pixflow (> 1: pixflow is
faster), and for 8192x8192 u8 the PERFORMANCE.md target with met / not met.
"""
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", help="pixflow-bench --json output")
    ap.add_argument("--peers", action="append", default=[],
                    help="peers.py --json output; repeatable: a later file fills the peers an "
                    "earlier one lacks (e.g. a CV-CUDA-only run of another day)")
    ap.add_argument("--md", default="RESULTS.md")
    ap.add_argument("--png", default="chart.png")
    args = ap.parse_args()
    bench = load(args.bench)
    peer_runs = [p for p in (load(path) for path in args.peers) if p]
    if bench is None and not peer_runs:
        print("compare.py: nothing to compare (no readable --bench or --peers)", file=sys.stderr)
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

    out = []
    meta = []
    if bench:
        meta.append("pixflow-bench: %s, driver %s, runtime %s, %s%s" % (
            bench.get("gpu"), bench.get("driver_version"), bench.get("runtime_version"),
            bench.get("date"), "" if bench.get("complete", True) else
            " (INCOMPLETE: %s)" % bench.get("stopped", "")))
    for peers in peer_runs:
        meta.append("peers.py: CuPy %s, CV-CUDA %s, OpenCV %s (%s threads), %s%s" % (
            peers.get("cupy", "-"), peers.get("cvcuda", "-"), peers.get("opencv", "-"),
            peers.get("opencv_threads", "?"),
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
    hdr = ["case", "pixflow", "NPP", "CV-CUDA", "CuPy", "OpenCV-all", "OpenCV-1", "copy",
           "pf/copy", "best peer/pf", "target", "check"]
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
        out.append("| " + " | ".join([
            name, pf_cell, cell(m.get("npp")), cvc, cupy, cell(m.get("cv_all")),
            cell(m.get("cv_1")), cell(m.get("copy")), cell(ratio_copy, 2), cell(ratio_peer, 2),
            tgt_cell, check]) + " |")
        if "8192x8192" in name and m.get("format") == "u8x1":
            chart.append((name.replace(" u8x1 8192x8192", "").replace(" u8x1->s16x1 8192x8192",
                                                                       " ->s16"),
                          pf, m.get("npp"), m.get("cvcuda"), m.get("cupy"), m.get("cv_all"),
                          m.get("copy")))
    out.append("")
    if n_target:
        out.append("Targets met (8192x8192 u8): %d of %d.\n" % (n_met, n_target))
    failed = [n for n in order if rows[n].get("failed")]
    if failed:
        out.append("FAILED correctness checks: " + ", ".join(failed) + "\n")
    with open(args.md, "w") as f:
        f.write("\n".join(out) + "\n")
    print("compare.py: %d cases -> %s" % (len(order), args.md))

    # Chart: 8K u8 cases (else whatever exists), log-scale µs per library.
    if not chart:
        for name in order:
            m = rows[name]
            if m.get("format") == "u8x1":
                chart.append((name, m.get("pixflow"), m.get("npp"), m.get("cvcuda"),
                              m.get("cupy"), m.get("cv_all"), m.get("copy")))
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
    fig, ax = plt.subplots(figsize=(max(8, 0.5 * len(labels)), 5.5))
    width = 0.14
    for j, (lab, idx) in enumerate(series):
        xs = [i + (j - 2.5) * width for i in range(len(chart))]
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
