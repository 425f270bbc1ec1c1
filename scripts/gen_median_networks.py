#!/usr/bin/env python3
"""Writes src/backends/cpu/simd/median_networks-inl.hpp: the min/max networks of the SIMD
median (src/backends/cpu/simd/median.cpp) for square windows k = 3, 5, 7 (k = 3: a window
network over k sorted columns; k = 5, 7: pairs of output rows, below).

Pairs of output rows (k = 5, 7): the window of output row y is k sorted runs (rows y - k/2 ..
y + k/2, each run the k samples of the row around x, sorted once per source row); rows y and
y + 1 share k - 1 runs. `pair_core` merges the shared runs (the same balanced odd-even merge),
pruned to the k + 1 ranks that can be the median once one more run of k joins (ranks
m - k .. m of the (k-1)k merged, m = k*k/2); `pair_final` then takes rank k of those k + 1
and the extra run, as the largest of min(q[i], run[k - i]) (the k-th smallest of two sorted
lists). Both are checked together over every 0-1 input with sorted runs ((k+1)^k cases, as
bitsets: one bit per case, Min = and, Max = or).

Per window (k = 3: the classic max-of-mins / median-of-medians / min-of-maxes network): k
columns, each already sorted (by the column network, shared by the k outputs
that use the column), are merged by Batcher's odd-even merge (any sizes) in a balanced tree;
only the comparators that reach the median's wire are kept, and a comparator of which one
output is needed becomes a single Min or Max (the pruning of a selection network). Every
network is checked here exhaustively by the 0-1 principle before it is written (all 0-1
inputs with sorted columns: (k+1)^k cases, and 2^k for the column sorts).

Run: python3 scripts/gen_median_networks.py > src/backends/cpu/simd/median_networks-inl.hpp

With --cuda it writes src/backends/cuda/median_networks.hpp instead: the same run sorts and the
pairs of rows with shared level-1 merges (level1_network; k = 5, 7, checked the same way) on
packed 32-bit words (two 16-bit lanes; every
Min/Max one VIMNMX.U16x2 on Hopper, px:: in src/backends/cuda/packed_u16x2.hpp), compiled by
nvcc for the CUDA median and by the host compiler for its CPU test (tests/median_packed_test.cpp).
pair_final there reduces with 3-input maxima (VIMNMX3), pair_rest is written as single
assignments with chained min (max) folded into 3-input ones (fused_ssa), and k = 7 also gets
quads of output rows (quad_network: quad_core, quad_pair). Each is checked in the form
written, over every 0-1 input, composed with the level-1 merges and pair_final.

Run: python3 scripts/gen_median_networks.py --cuda > src/backends/cuda/median_networks.hpp

With --opencl FILE it rewrites the part of FILE (src/backends/opencl/kernels/median.cl) between
its "BEGIN/END generated networks" lines: the same run sorts, k = 3 window and k = 5, 7 pairs of
rows as OpenCL C functions on the kernel's key vector type KV, through KMIN / KMAX (OpenCL's min /
max, which work lane by lane on vectors, so one call runs the network for every lane; the word
kernel's u16x2 min / max there), and for the word kernel the run sorts with shared columns
(check_insert).

Run: python3 scripts/gen_median_networks.py --opencl src/backends/opencl/kernels/median.cl
"""
import itertools
import sys


def merge(a, b, ops):
    """Odd-even merge of sorted wire lists a and b; appends (lo, hi) comparators."""
    if not a:
        return list(b)
    if not b:
        return list(a)
    if len(a) == 1 and len(b) == 1:
        ops.append((a[0], b[0]))
        return [a[0], b[0]]
    e = merge(a[0::2], b[0::2], ops)
    o = merge(a[1::2], b[1::2], ops)
    out = [e[0]]
    i = 0
    while i < len(o):
        if i + 1 < len(e):
            ops.append((o[i], e[i + 1]))
            out += [o[i], e[i + 1]]
        else:
            out.append(o[i])
        i += 1
    out += e[len(o) + 1:]
    return out


def merge_tree(lists, ops):
    """Merges sorted wire lists pairwise, level by level (a balanced tree); the merged list."""
    while len(lists) > 1:
        nxt = []
        for i in range(0, len(lists) - 1, 2):
            nxt.append(merge(lists[i], lists[i + 1], ops))
        if len(lists) % 2:
            nxt.append(lists[-1])
        lists = nxt
    return lists[0]


def sort_net(wires, ops):
    """A sorting network by recursive merging (columns are small: k <= 7)."""
    if len(wires) <= 1:
        return list(wires)
    h = len(wires) // 2
    return merge(sort_net(wires[:h], ops), sort_net(wires[h:], ops), ops)


def run(ops, vals):
    v = list(vals)
    for lo, hi in ops:
        a, b = v[lo], v[hi]
        v[lo], v[hi] = min(a, b), max(a, b)
    return v


def prune(ops, out_wires):
    """Keeps what reaches out_wires: ('cx', lo, hi) | ('min', lo, hi) | ('max', lo, hi)."""
    need = set(out_wires)
    kept = []
    for lo, hi in reversed(ops):
        nl, nh = lo in need, hi in need
        if nl and nh:
            kept.append(('cx', lo, hi))
        elif nl:
            kept.append(('min', lo, hi))
            need.add(hi)
        elif nh:
            kept.append(('max', lo, hi))
            need.add(lo)
    kept.reverse()
    return kept


def run_pruned(ops, vals):
    v = list(vals)
    for kind, lo, hi in ops:
        a, b = v[lo], v[hi]
        if kind == 'cx':
            v[lo], v[hi] = min(a, b), max(a, b)
        elif kind == 'min':
            v[lo] = min(a, b)
        else:
            v[hi] = max(a, b)
    return v


def window_network(k):
    if k == 3:
        # The classic: the largest column minimum, the median of the column medians and the
        # smallest column maximum, then their median (12 Min/Max; the merge gives 20).
        return [('max', 0, 3), ('max', 3, 6),             # v6 = max of ranks 0
                ('min', 2, 5), ('min', 2, 8),             # v2 = min of ranks 2
                ('cx', 1, 4), ('min', 4, 7), ('max', 1, 4),  # v4 = median of ranks 1
                ('cx', 6, 4), ('min', 4, 2), ('max', 6, 4)], 4
    cols = [[c * k + r for r in range(k)] for c in range(k)]  # wire c*k + r: rank r of col c
    ops = []
    final = merge_tree(cols, ops)
    out = final[(k * k) // 2]
    return prune(ops, [out]), out


def check_window(k, ops, out):
    n = k * k
    # 0-1 principle over sorted columns: column c holds z_c zeros then ones.
    for zs in itertools.product(range(k + 1), repeat=k):
        vals = [0] * n
        for c, z in enumerate(zs):
            for r in range(k):
                vals[c * k + r] = 0 if r < z else 1
        want = sorted(vals)[n // 2]
        if run_pruned(ops, vals)[out] != want:
            raise SystemExit(f"k={k}: network wrong for {zs}")


def pair_network(k):
    """(pruned core ops on wires r*k + i of the k-1 shared runs, the k+1 output wires)."""
    m = (k * k) // 2
    ops = []
    merged = merge_tree([[c * k + r for r in range(k)] for c in range(k - 1)], ops)
    outs = [merged[r] for r in range(m - k, m + 1)]
    return prune(ops, outs), outs


def check_pair(k, ops, outs, core=None):
    # Case index = sum of z_c (k+1)^c over the k runs (runs 0 .. k-2 shared, run k-1 the
    # extra one); z_c = the zeros of run c. A wire's bitset: the cases where it holds 1.
    base = k + 1
    ncase = base ** k
    full = (1 << ncase) - 1

    def ones_where_rank_at_least(c, r):  # run c's rank r is 1 iff z_c <= r
        blk = base ** c
        period = '0' * ((k - r) * blk) + '1' * ((r + 1) * blk)  # z = k .. 0, high bits first
        return int(period * (ncase // (blk * base)), 2)

    if core is not None:
        q = core([[ones_where_rank_at_least(c, r) for r in range(k)] for c in range(k - 1)])
    else:
        v = {}
        for c in range(k - 1):
            for r in range(k):
                v[c * k + r] = ones_where_rank_at_least(c, r)
        q = [run_bits(ops, v)[w] for w in outs]
    run = [ones_where_rank_at_least(k - 1, r) for r in range(k)]
    got = q[0]
    for i in range(1, k + 1):
        got |= q[i] & run[k - i]
    m = (k * k) // 2
    want = 0  # median 1 iff at most m zeros in all
    bits = []
    for idx in range(ncase):
        t, z = idx, 0
        for _ in range(k):
            z += t % base
            t //= base
        bits.append('1' if z <= m else '0')
    want = int(''.join(reversed(bits)), 2)
    if got & full != want:
        raise SystemExit(f"pair network k={k} wrong")


def run_bits(ops, v):
    """Runs a pruned network on bitsets (one bit per 0-1 case: Min = and, Max = or)."""
    v = dict(v)
    for kind, lo, hi in ops:
        a, b = v[lo], v[hi]
        if kind == 'cx':
            v[lo], v[hi] = a & b, a | b
        elif kind == 'min':
            v[lo] = a & b
        else:
            v[hi] = a | b
    return v


def level1_network(k):
    """Pairs of rows with shared level-1 merges (CUDA): the k - 1 shared runs merge in pairs
    (runs 2s, 2s + 1: merge_runs, the full odd-even merge of two runs, kept and reused by the
    next pair of output rows, whose shared runs are these shifted by two); pair_rest merges
    the (k - 1) / 2 merged lists (wires s * 2k + r) pruned to the k + 1 ranks m - k .. m."""
    m = (k * k) // 2
    mops = []
    mout = merge(list(range(k)), list(range(k, 2 * k)), mops)
    rops = []
    final = merge_tree([[s * 2 * k + r for r in range(2 * k)] for s in range((k - 1) // 2)], rops)
    outs = [final[r] for r in range(m - k, m + 1)]
    return [('cx', lo, hi) for lo, hi in mops], mout, prune(rops, outs), outs


def check_level1(k, mops, mout, rops, outs):
    def core(runs):
        v = {}
        for s in range((k - 1) // 2):
            w = run_bits(mops, {i: runs[2 * s + i // k][i % k] for i in range(2 * k)})
            for r in range(2 * k):
                v[s * 2 * k + r] = w[mout[r]]
        nodes, roots = fused_ssa(rops, outs)
        return run_ssa_bits(nodes, roots, v)
    check_pair(k, None, None, core)


def fused_ssa(ops, outs):
    """The pruned network `ops` as single-assignment nodes, a min (max) whose only consumer is
    another min (max) of two inputs folded into it as a 3-input one (VIMNMX3): returns
    (nodes, roots); a node is (name, op, args), an arg a node name or ('v', wire)."""
    cur = {}
    nodes = {}
    order = []

    def get(w):
        return cur.get(w, ('v', w))

    def new(op, a, b):
        n = ('t', len(order))
        nodes[n] = [op, [a, b]]
        order.append(n)
        return n

    for kind, lo, hi in ops:
        a, b = get(lo), get(hi)
        if kind in ('cx', 'min'):
            cur_lo = new('min', a, b)
        if kind in ('cx', 'max'):
            cur[hi] = new('max', a, b)
        if kind in ('cx', 'min'):
            cur[lo] = cur_lo
    roots = [get(w) for w in outs]
    uses = {}
    for n in order:
        for a in nodes[n][1]:
            uses[a] = uses.get(a, 0) + 1
    for r in roots:
        uses[r] = uses.get(r, 0) + 1
    dead = set()
    for n in order:
        op, args = nodes[n]
        for a in list(args):
            if len(args) < 3 and a in nodes and a not in dead and nodes[a][0] == op and \
                    len(nodes[a][1]) == 2 and uses[a] == 1:
                args.remove(a)
                args[:0] = nodes[a][1]
                dead.add(a)
    return [(n, nodes[n][0], nodes[n][1]) for n in order if n not in dead], roots


def run_ssa_bits(nodes, roots, v):
    val = {}

    def get(a):
        return v[a[1]] if a[0] == 'v' else val[a]
    for n, op, args in nodes:
        x = get(args[0])
        for a in args[1:]:
            x = (x & get(a)) if op == 'min' else (x | get(a))
        val[n] = x
    return [get(r) for r in roots]


def quad_network(k):
    """Quads of output rows (k = 7): rows y .. y+3 share k - 3 runs = two level-1 lists; their
    merge (quad_core) is pruned to the ranks lo .. m that can still be the median once the
    3k samples of three more runs join; each pair (y, y+1) / (y+2, y+3) then merges that with
    its own level-1 list (quad_pair), pruned to the k + 1 ranks of pair_rest. Returns (core
    nodes, core roots, pair nodes, pair roots, lo); wires: core v[s * 2k + r], pair c[0 ..]
    at 0 .., the level-1 list at 1000 + r."""
    m = (k * k) // 2
    n2 = 2 * k
    ops = []
    out = merge_tree([[s * n2 + r for r in range(n2)] for s in range((k - 3) // 2)], ops)
    lo = max(0, m - 3 * k)
    couts = [out[r] for r in range(lo, m + 1)]
    cn, cr = fused_ssa(prune(ops, couts), couts)
    q = list(range(len(couts)))
    el = list(range(1000, 1000 + n2))
    ops = []
    out2 = merge(q, el, ops)
    pouts = [out2[r - lo] for r in range(m - k, m + 1)]
    pn, pr = fused_ssa(prune(ops, pouts), pouts)
    return cn, cr, pn, pr, lo


def check_quad(k, mops, mout):
    cn, cr, pn, pr, lo = quad_network(k)

    def level1(a, b):
        w = run_bits(mops, {i: (a if i < k else b)[i % k] for i in range(2 * k)})
        return [w[mout[r]] for r in range(2 * k)]

    for own_first in (True, False):  # the pair's own list above (y, y+1) or below (y+2, y+3)
        def core(runs):
            ls = [level1(runs[2 * s], runs[2 * s + 1]) for s in range((k - 1) // 2)]
            own, shared = (ls[0], ls[1:]) if own_first else (ls[-1], ls[:-1])
            c = run_ssa_bits(cn, cr, {s * 2 * k + r: shared[s][r]
                                      for s in range(len(shared)) for r in range(2 * k)})
            v = {i: c[i] for i in range(len(c))}
            v.update({1000 + r: own[r] for r in range(2 * k)})
            return run_ssa_bits(pn, pr, v)
        check_pair(k, None, None, core)


def emit_ssa(w, nodes, roots, arg, outname):
    for n, op, args in nodes:
        f = ('px::vmin' if op == 'min' else 'px::vmax') + ('3' if len(args) == 3 else '')
        w(f"    const u32 t{n[1]} = {f}(" + ", ".join(arg(a) for a in args) + ");\n")
    for t, r in enumerate(roots):
        w(f"    {outname}[{t}] = {arg(r)};\n")


def check_sort(k, ops, order):
    for bits in itertools.product((0, 1), repeat=k):
        v = run(ops, bits)
        if [v[w] for w in order] != sorted(bits):
            raise SystemExit(f"column sort k={k} wrong for {bits}")


def emit_pruned(w, ops):
    """Writes a pruned network on the vector array v (kinds as prune() gives them)."""
    for kind, lo, hi in ops:
        if kind == 'cx':
            w(f"    {{ const V a = v[{lo}]; v[{lo}] = hn::Min(a, v[{hi}]); v[{hi}] = hn::Max(a, v[{hi}]); }}\n")
        elif kind == 'min':
            w(f"    v[{lo}] = hn::Min(v[{lo}], v[{hi}]);\n")
        else:
            w(f"    v[{hi}] = hn::Max(v[{lo}], v[{hi}]);\n")


def main():
    w = sys.stdout.write
    w("// Generated by scripts/gen_median_networks.py: do not edit. Min/max networks of the SIMD\n")
    w("// median (median.cpp): column sorts and pruned odd-even merges of k sorted columns.\n")
    w("// Highway per-target include (after <hwy/highway.h>, outside any namespace).\n")
    w("#if defined(PIXFLOW_MEDIAN_NETWORKS_INL_H_) == defined(HWY_TARGET_TOGGLE)\n")
    w("#ifdef PIXFLOW_MEDIAN_NETWORKS_INL_H_\n#undef PIXFLOW_MEDIAN_NETWORKS_INL_H_\n")
    w("#else\n#define PIXFLOW_MEDIAN_NETWORKS_INL_H_\n#endif\n\n")
    w("HWY_BEFORE_NAMESPACE();\nnamespace pixflow::cpu::HWY_NAMESPACE {\n")
    w("namespace hn = hwy::HWY_NAMESPACE;\n\n")
    w("template <int K>\nstruct MedianNet;\n\n")
    for k in (3, 5, 7):
        sops = []
        order = sort_net(list(range(k)), sops)  # order[r]: the wire of rank r
        check_sort(k, sops, order)
        if k == 3:
            wops, out = window_network(k)
            check_window(k, wops, out)
            nmin = sum(1 for o in wops if o[0] != 'cx')
            ncx = len(wops) - nmin
            w(f"// k = {k}: column sort {len(sops)} compare-exchanges; window {ncx} compare-exchanges\n")
            w(f"// + {nmin} single min/max = {2 * ncx + nmin} Min/Max per output vector.\n")
        else:
            w(f"// k = {k}: run sort {len(sops)} compare-exchanges; pairs of output rows below.\n")
        w(f"template <>\nstruct MedianNet<{k}> {{\n")
        w("  template <class V>\n  static HWY_INLINE void sort_column(V* c) {\n")
        for lo, hi in sops:
            w(f"    {{ const V a = c[{lo}]; c[{lo}] = hn::Min(a, c[{hi}]); c[{hi}] = hn::Max(a, c[{hi}]); }}\n")
        if order != list(range(k)):
            w(f"    const V t[{k}] = {{" + ", ".join(f"c[{o}]" for o in order) + "};\n")
            w(f"    for (int r = 0; r < {k}; ++r) c[r] = t[r];  // rank order\n")
        w("  }\n")
        if k == 3:
            w(f"  // v[c * {k} + r]: rank r of window column c; returns the median.\n")
            w("  template <class V>\n  static HWY_INLINE V window(V* v) {\n")
            emit_pruned(w, wops)
            w(f"    return v[{out}];\n  }}\n")
        if k in (5, 7):
            pops, outs = pair_network(k)
            check_pair(k, pops, outs)
            pmin = sum(1 for o in pops if o[0] != 'cx')
            pcx = len(pops) - pmin
            w(f"  // Pairs of rows: v[r * {k} + i], rank i of shared run r (r < {k - 1}); q: the {k + 1}\n")
            w(f"  // ranks {(k * k) // 2 - k}..{(k * k) // 2} of their merge ({pcx} compare-exchanges + {pmin} single\n")
            w(f"  // min/max = {2 * pcx + pmin} Min/Max).\n")
            w("  template <class V>\n  static HWY_INLINE void pair_core(V* v, V* q) {\n")
            emit_pruned(w, pops)
            for t, wire in enumerate(outs):
                w(f"    q[{t}] = v[{wire}];\n")
            w("  }\n")
            w(f"  // The median of q and one more sorted run c: rank {k} of the two ({2 * k} Min/Max).\n")
            w("  template <class V>\n  static HWY_INLINE V pair_final(const V* q, const V* c) {\n")
            w("    V m = q[0];\n")
            for i in range(1, k + 1):
                w(f"    m = hn::Max(m, hn::Min(q[{i}], c[{k - i}]));\n")
            w("    return m;\n  }\n")
        w("};\n\n")
    w("}  // namespace pixflow::cpu::HWY_NAMESPACE\nHWY_AFTER_NAMESPACE();\n\n")
    w("#endif  // include guard\n")


def emit_pruned_packed(w, ops):
    for kind, lo, hi in ops:
        if kind == 'cx':
            w(f"    {{ const u32 a = v[{lo}]; v[{lo}] = px::vmin(a, v[{hi}]); v[{hi}] = px::vmax(a, v[{hi}]); }}\n")
        elif kind == 'min':
            w(f"    v[{lo}] = px::vmin(v[{lo}], v[{hi}]);\n")
        else:
            w(f"    v[{hi}] = px::vmax(v[{lo}], v[{hi}]);\n")



def emit_pruned_cl(w, ops, arr="v", ty="KV", mn="KMIN", mx="KMAX"):
    for kind, lo, hi in ops:
        if kind == 'cx':
            w(f"  {{ const {ty} a = {arr}[{lo}]; {arr}[{lo}] = {mn}(a, {arr}[{hi}]); {arr}[{hi}] = {mx}(a, {arr}[{hi}]); }}\n")
        elif kind == 'min':
            w(f"  {arr}[{lo}] = {mn}({arr}[{lo}], {arr}[{hi}]);\n")
        else:
            w(f"  {arr}[{hi}] = {mx}({arr}[{lo}], {arr}[{hi}]);\n")


def check_insert(k, sops, order):
    """The shared-columns run sort of the OpenCL word kernel: k - 1 shared samples sorted by
    sops (order: their rank order), then one more sample x inserted (out[0] = min(s0, x),
    out[i] = max(s[i-1], min(s[i], x)), out[k-1] = max(s[k-2], x)); every 0-1 input."""
    for bits in itertools.product((0, 1), repeat=k):
        v = run(sops, bits[:k - 1])
        s = [v[o] for o in order]
        x = bits[k - 1]
        out = [min(s[0], x)] + [max(s[i - 1], min(s[i], x)) for i in range(1, k - 1)] + [max(s[k - 2], x)]
        if out != sorted(bits):
            raise SystemExit(f"shared run sort k={k} wrong for {bits}")


def main_opencl(path):
    begin = "// BEGIN generated networks (scripts/gen_median_networks.py --opencl): do not edit.\n"
    end = "// END generated networks\n"
    text = open(path).read()
    if begin not in text or end not in text:
        raise SystemExit(f"{path}: no generated-networks markers")
    out = []
    w = out.append
    for k in (3, 5, 7):
        sops = []
        order = sort_net(list(range(k)), sops)
        check_sort(k, sops, order)
        w(f"// k = {k}: sorts the {k} runs c[0..{k - 1}] lane by lane into rank order ({len(sops)} compare-exchanges).\n")
        w(f"inline void net{k}_sort(KV* c) {{\n")
        emit_pruned_cl(w, [('cx', lo, hi) for lo, hi in sops], "c")
        if order != list(range(k)):
            w(f"  const KV t[{k}] = {{" + ", ".join(f"c[{o}]" for o in order) + "};\n")
            w(f"  for (int r = 0; r < {k}; ++r) c[r] = t[r];\n")
        w("}\n")
        hops = []
        horder = sort_net(list(range(k - 1)), hops)
        check_insert(k, hops, horder)
        w(f"// k = {k}, word kernel (WORDS): the runs of the lane words A (.x / .xz) and B (.y / .w), whose\n")
        w(f"// windows share {k - 1} columns: the shared s[0..{k - 2}] sorted once ({len(hops)} compare-exchanges on\n")
        w(f"// KH), then A's own column x.x and B's x.y inserted ({2 * (k - 1)} min/max on KV): c, rank order.\n")
        w("#ifdef WORDS\n")
        w(f"inline void net{k}_sort_words(KH* s, KV x, KV* c) {{\n")
        emit_pruned_cl(w, [('cx', lo, hi) for lo, hi in hops], "s", "KH", "HMIN", "HMAX")
        o = horder
        w(f"  c[0] = KMIN(SPREAD(s[{o[0]}]), x);\n")
        for i in range(1, k - 1):
            w(f"  c[{i}] = KMAX(SPREAD(s[{o[i - 1]}]), KMIN(SPREAD(s[{o[i]}]), x));\n")
        w(f"  c[{k - 1}] = KMAX(SPREAD(s[{o[k - 2]}]), x);\n")
        w("}\n#endif\n")
        if k == 3:
            wops, wout = window_network(k)
            check_window(k, wops, wout)
            w(f"// v[c * {k} + r]: rank r of sorted run c; returns the median of the {k * k}.\n")
            w(f"inline KV net{k}_window(KV* v) {{\n")
            emit_pruned_cl(w, wops)
            w(f"  return v[{wout}];\n}}\n")
        else:
            pops, outs = pair_network(k)
            check_pair(k, pops, outs)
            w(f"// Pairs of output rows: v[r * {k} + i], rank i of shared sorted run r (r < {k - 1});\n")
            w(f"// q: ranks {(k * k) // 2 - k}..{(k * k) // 2} of their merge.\n")
            w(f"inline void net{k}_pair_core(KV* v, KV* q) {{\n")
            emit_pruned_cl(w, pops)
            for t, wire in enumerate(outs):
                w(f"  q[{t}] = v[{wire}];\n")
            w("}\n")
            w(f"// The median of the window: q and its own sorted run c (rank {k} of the two lists).\n")
            w(f"inline KV net{k}_pair_final(const KV* q, const KV* c) {{\n  KV m = q[0];\n")
            for i in range(1, k + 1):
                w(f"  m = KMAX(m, KMIN(q[{i}], c[{k - i}]));\n")
            w("  return m;\n}\n")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    open(path, "w").write(head + begin + "".join(out) + end + tail)


def main_cuda():
    w = sys.stdout.write
    w("// Generated by scripts/gen_median_networks.py --cuda: do not edit. The packed networks of\n")
    w("// the CUDA median for u8 5x5 / 7x7 (median.cu): per 32-bit word two pixels in 16-bit lanes,\n")
    w("// px::vmin / vmax one VIMNMX.U16x2 each on Hopper. The CPU's run sorts and final\n")
    w("// (median_networks-inl.hpp); the shared merge of a pair of rows split into level-1 merges\n")
    w("// (merge_runs, reused by the next pair) and the pruned rest (pair_rest); for 7x7 also quads of\n")
    w("// output rows (quad_core, quad_pair). All checked over\n")
    w("// every 0-1 input by the generator. Host and device code (tests/median_packed_test.cpp runs\n")
    w("// them on the CPU).\n")
    w("#pragma once\n\n#include <cstdint>\n\n#include \"src/backends/cuda/packed_u16x2.hpp\"\n\n")
    w("namespace pixflow::cuda::median_net {\n\nusing px::u32;\n\ntemplate <int K>\nstruct Net;\n\n")
    for k in (5, 7):
        sops = []
        order = sort_net(list(range(k)), sops)
        check_sort(k, sops, order)
        nfinal = k + k // 2 + (k % 2)
        w(f"template <>\nstruct Net<{k}> {{\n")
        w(f"  static constexpr int kSortOps = {2 * len(sops)};   // min/max per run sort\n")
        w(f"  static constexpr int kFinalOps = {nfinal};  // per pair_final ({k} min, then 3-input max)\n")
        w(f"  // Sorts the {k} words c[0..{k - 1}] per lane, into rank order.\n")
        w("  static PIXFLOW_HD void sort_run(u32* c) {\n")
        for lo, hi in sops:
            w(f"    {{ const u32 a = c[{lo}]; c[{lo}] = px::vmin(a, c[{hi}]); c[{hi}] = px::vmax(a, c[{hi}]); }}\n")
        if order != list(range(k)):
            w(f"    const u32 t[{k}] = {{" + ", ".join(f"c[{o}]" for o in order) + "};\n")
            w(f"    for (int r = 0; r < {k}; ++r) c[r] = t[r];\n")
        w("  }\n")
        mops, mout, rops, routs = level1_network(k)
        check_level1(k, mops, mout, rops, routs)
        w(f"  static constexpr int kMergeOps = {2 * len(mops)};  // per merge_runs\n")
        rnodes, rroots = fused_ssa(rops, routs)
        rmin = sum(1 for o in rops if o[0] != 'cx')
        nfused = sum(1 for n in rnodes if len(n[2]) == 3)
        w(f"  static constexpr int kRestOps = {len(rnodes)};  // per pair_rest ({nfused} of them 3-input)\n")
        w(f"  // m[0..{2 * k - 1}]: the merge of the sorted runs x and y (full odd-even merge).\n")
        w("  static PIXFLOW_HD void merge_runs(const u32* x, const u32* y, u32* m) {\n")
        w(f"    u32 v[{2 * k}];\n")
        w(f"    for (int i = 0; i < {k}; ++i) {{\n      v[i] = x[i];\n      v[{k} + i] = y[i];\n    }}\n")
        emit_pruned_packed(w, mops)
        for r, wire in enumerate(mout):
            w(f"    m[{r}] = v[{wire}];\n")
        w("  }\n")
        w(f"  // v[s * {2 * k} + r]: rank r of merge_runs s (s < {(k - 1) // 2}, runs 2s and 2s + 1 of the\n")
        w(f"  // shared ones); q: ranks {(k * k) // 2 - k}..{(k * k) // 2} of their merge. {2 * (len(rops) - rmin) + rmin} min/max as pruned,\n")
        w("  // {nfused} fewer with each min (max) that feeds only another min (max) folded into it.\n".replace("{nfused}", str(nfused)))
        w("  static PIXFLOW_HD void pair_rest(const u32* v, u32* q) {\n")

        def arg(a):
            return f"v[{a[1]}]" if a[0] == 'v' else f"t{a[1]}"
        for n, op, args in rnodes:
            f = ('px::vmin' if op == 'min' else 'px::vmax') + ('3' if len(args) == 3 else '')
            w(f"    const u32 t{n[1]} = {f}(" + ", ".join(arg(a) for a in args) + ");\n")
        for t, r in enumerate(rroots):
            w(f"    q[{t}] = {arg(r)};\n")
        w("  }\n")
        if k == 7:
            check_quad(k, mops, mout)
            cn, cr, pn, pr, lo = quad_network(k)
            m = (k * k) // 2
            w(f"  static constexpr int kQuadCoreOps = {len(cn)};  // per quad_core\n")
            w(f"  static constexpr int kQuadPairOps = {len(pn)};  // per quad_pair\n")
            w(f"  static constexpr int kQuadRanks = {len(cr)};\n")
            w(f"  // Quads of output rows: v[s * {2 * k} + r], rank r of the level-1 list s (s < 2) of the\n")
            w(f"  // {k - 3} runs shared by four output rows; c: ranks {lo}..{m} of their merge.\n")
            w("  static PIXFLOW_HD void quad_core(const u32* v, u32* c) {\n")
            emit_ssa(w, cn, cr, lambda a: f"v[{a[1]}]" if a[0] == 'v' else f"t{a[1]}", "c")
            w("  }\n")
            w(f"  // q (as pair_rest's) from quad_core's c and a pair's own level-1 list e.\n")
            w("  static PIXFLOW_HD void quad_pair(const u32* c, const u32* e, u32* q) {\n")
            emit_ssa(w, pn, pr, lambda a: (f"c[{a[1]}]" if a[1] < 1000 else f"e[{a[1] - 1000}]")
                     if a[0] == 'v' else f"t{a[1]}", "q")
            w("  }\n")
        w(f"  // The median of q and one more sorted run c: rank {k} of the two.\n")
        w("  static PIXFLOW_HD u32 pair_final(const u32* q, const u32* c) {\n")
        terms = ["q[0]"] + [f"px::vmin(q[{i}], c[{k - i}])" for i in range(1, k + 1)]
        w(f"    u32 m = px::vmax3({terms[0]}, {terms[1]}, {terms[2]});\n")
        rest = terms[3:]
        while len(rest) >= 2:
            w(f"    m = px::vmax3(m, {rest[0]}, {rest[1]});\n")
            rest = rest[2:]
        if rest:
            w(f"    m = px::vmax(m, {rest[0]});\n")
        w("    return m;\n  }\n};\n\n")
    w("}  // namespace pixflow::cuda::median_net\n")


if len(sys.argv) > 1 and sys.argv[1] == '--cuda':
    main_cuda()
elif len(sys.argv) > 2 and sys.argv[1] == '--opencl':
    main_opencl(sys.argv[2])
else:
    main()
