#!/usr/bin/env python3
"""Compares two pixflow-bench --json results case by case: new/old time per case.

  bench/diff_results.py OLD.json NEW.json [--slower 1.03]

Prints every case whose time moved by more than the threshold either way, the geometric mean
of new/old over all cases present in both, and the count of cases slower than the threshold.
Exit status 0 always (a report, not a gate): read the numbers."""
import argparse
import json
import math


def load(path):
    with open(path) as f:
        rows = json.load(f)["rows"]
    return {r["case"]: r for r in rows if r.get("status") == "ok" and r.get("us")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--slower", type=float, default=1.03)
    a = ap.parse_args()
    old, new = load(a.old), load(a.new)
    both = [c for c in new if c in old]
    ratios = {c: new[c]["us"] / old[c]["us"] for c in both}
    slower = [c for c in both if ratios[c] > a.slower]
    faster = [c for c in both if ratios[c] < 1 / a.slower]
    print(f"cases: {len(old)} old, {len(new)} new, {len(both)} in both")
    for title, cases in (("slower", slower), ("faster", faster)):
        print(f"{title} than x{a.slower if title == 'slower' else 1 / a.slower:.3f}: {len(cases)}")
        for c in sorted(cases, key=lambda c: -ratios[c] if title == "slower" else ratios[c]):
            print(f"  {c:55s} {old[c]['us']:10.2f} -> {new[c]['us']:10.2f} us  x{ratios[c]:.3f}")
    if both:
        g = math.exp(sum(math.log(r) for r in ratios.values()) / len(both))
        print(f"geometric mean new/old: {g:.4f}; max x{max(ratios.values()):.3f} "
              f"({max(ratios, key=ratios.get)})")
    only_old = sorted(set(old) - set(new))
    if only_old:
        print(f"only in old ({len(only_old)}): " + ", ".join(only_old[:10]))


if __name__ == "__main__":
    main()
