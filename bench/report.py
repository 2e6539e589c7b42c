#!/usr/bin/env python3
"""bench/report.py — summary.md and PNG plots of one benchmark-suite run.

    bench/report.py RESULTS_DIR [--note TEXT] [--no-plots]
    bench/report.py --doc FILE [--plots DIR [--plots-link PREFIX]] [--command TEXT]
                    [--sizes LIST|all] RESULTS_DIR

Reads RESULTS_DIR/opencl.csv and opencl.meta.json (cldm-bench-suite) and, if present,
cuda.csv and cuda.meta.json (cldm-bench-cuda), and writes RESULTS_DIR/summary.md (tables:
every figure next to its baselines of the same run as ratios) and RESULTS_DIR/*.png (with
matplotlib; skipped with a message where it is missing). A note given with --note is kept in
RESULTS_DIR/note.txt, so that running the script again keeps it. Plain Python 3 otherwise.

With --doc it writes instead the Markdown section that docs/performance.md holds for the run's
device into FILE ('-': stdout), and its plots into DIR (report_doc.py); case 1's sizes LIST
(default 16,64,256,1024,4096; all: every size of the run).
"""
import argparse
import csv
import json
import os
import sys
from collections import defaultdict

MIB = 1 << 20


def load_rows(path):
    table = {}
    order = []
    if not os.path.exists(path):
        return table, order
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["impl"], r["case"], r["kernel"], int(r["size"]), int(r["n"]), r["param"],
                   r["metric"])
            table[key] = (float(r["value"]), float(r["median"]), int(r["ops"]))
            order.append(key)
    return table, order


def load_meta(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


class Data:
    def __init__(self, d):
        self.dir = d
        self.rows, self.order = load_rows(os.path.join(d, "opencl.csv"))
        cuda_rows, cuda_order = load_rows(os.path.join(d, "cuda.csv"))
        self.rows.update(cuda_rows)
        self.order += cuda_order
        self.meta = load_meta(os.path.join(d, "opencl.meta.json")) or {}
        self.cuda_meta = load_meta(os.path.join(d, "cuda.meta.json"))
        self.has_cuda = bool(cuda_rows)

    def get(self, impl, case, kernel, size, n, param, metric, median=False):
        v = self.rows.get((impl, case, kernel, size, n, param, metric))
        if v is None:
            return None
        return v[1] if median else v[0]

    def ops(self, impl, case, kernel, size, n, param, metric):
        v = self.rows.get((impl, case, kernel, size, n, param, metric))
        return v[2] if v else None

    def keys(self, impl, case, metric=None, kernel=None):
        """(size, n, param) of the rows of a case, in file order, without repeats."""
        seen, out = set(), []
        for k in self.order:
            if k[0] == impl and k[1] == case and (metric is None or k[6] == metric) and \
                    (kernel is None or k[2] == kernel):
                t = (k[3], k[4], k[5])
                if t not in seen:
                    seen.add(t)
                    out.append(t)
        return out


def fmt(v, digits=3):
    if v is None:
        return "–"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1000:
        return "%.0f" % v
    if a >= 100:
        return "%.1f" % v
    if a >= 10:
        return "%.2f" % v
    return "%.*f" % (digits, v)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "–"
    r = a / b
    return "%.2g" % r if 0 < r < 0.01 else "%.2f" % r  # (against CUDA: 0.00032, not 0.00)


def size_str(b):
    if b >= MIB and b % MIB == 0:
        return "%d MiB" % (b // MIB)
    if b >= 1024 and b % 1024 == 0:
        return "%d KiB" % (b // 1024)
    return "%d B" % b


def rate(ops, ms):
    if ops is None or not ms:
        return None
    return ops / ms / 1e3  # million per second


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(r) + " |")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- sections

def sec_alloc(d, case, title, text, label):
    """Cases 1-3: malloc / free / malloc+free next to bump and prealloc (and CUDA)."""
    keys = d.keys("opencl", case, "time", "malloc")
    if not keys:
        return ""
    g = lambda impl, kern, s, n, p, metric="time": d.get(impl, case, kern, s, n, p, metric)
    cold = bool(d.keys("opencl", case, "cold", "malloc"))
    head = [label[0], "N", "allocs", "malloc ms", "M/s", "÷ bump", "÷ prealloc", "free ms",
            "free ÷ check", "m+f ms", "m+f ÷ bump"]
    if cold:
        head += ["cold malloc ms", "cold ÷ cold bump"]
    rows = []
    for s, n, p in keys:
        m, f, mf = g("opencl", "malloc", s, n, p), g("opencl", "free", s, n, p), \
            g("opencl", "malloc_free", s, n, p)
        b, pre = g("opencl", "bump", s, n, p), g("opencl", "prealloc", s, n, p)
        chk = g("opencl", "check", s, n, p)
        ops = d.ops("opencl", case, "malloc", s, n, p, "time")
        row = [label[1](s, n, p), str(n), str(ops), fmt(m), fmt(rate(ops, m), 1),
               ratio(m, b), ratio(m, pre), fmt(f), ratio(f, chk), fmt(mf), ratio(mf, b)]
        if cold:
            cm = g("opencl", "malloc", s, n, p, "cold")
            row += [fmt(cm), ratio(cm, g("opencl", "bump", s, n, p, "cold"))]
        rows.append(row)
    out = "## %s\n\n%s\n\n" % (title, text) + table(head, rows)
    if d.has_cuda:
        head = [label[0], "N", "malloc ms", "CUDA ms", "÷ CUDA", "free ms", "CUDA ms", "÷ CUDA",
                "m+f ms", "CUDA ms", "÷ CUDA", "CUDA malloc ÷ CUDA bump"]
        if cold:
            head += ["CUDA cold ms", "cold ÷ CUDA cold", "CUDA cold ÷ CUDA cold bump"]
        rows = []
        for s, n, p in keys:
            m, cm = g("opencl", "malloc", s, n, p), g("cuda", "malloc", s, n, p)
            f, cf = g("opencl", "free", s, n, p), g("cuda", "free", s, n, p)
            mf, cmf = g("opencl", "malloc_free", s, n, p), g("cuda", "malloc_free", s, n, p)
            row = [label[1](s, n, p), str(n), fmt(m), fmt(cm), ratio(m, cm), fmt(f),
                   fmt(cf), ratio(f, cf), fmt(mf), fmt(cmf), ratio(mf, cmf),
                   ratio(cm, g("cuda", "bump", s, n, p))]
            if cold:
                cc = g("cuda", "malloc", s, n, p, "cold")
                row += [fmt(cc), ratio(g("opencl", "malloc", s, n, p, "cold"), cc),
                        ratio(cc, g("cuda", "bump", s, n, p, "cold"))]
            rows.append(row)
        out += "\nNext to CUDA's device malloc (same GPU, same heap size, same run):\n\n" + \
            table(head, rows)
    return out + "\n"


def sec_util(d):
    keys = d.keys("opencl", "utilisation", "utilisation")
    if not keys:
        return ""
    head = ["S", "blocks", "obtained ÷ heap", "allocator's own count ÷ heap", "fill ms",
            "M/s", "free ms"]
    if d.has_cuda:
        head += ["CUDA blocks", "CUDA obtained ÷ heap", "CUDA fill ms", "fill ÷ CUDA"]
    rows = []
    for s, n, p in keys:
        u = d.get("opencl", "utilisation", "fill", s, n, p, "utilisation")
        a = d.get("opencl", "utilisation", "fill", s, n, p, "in_use")
        t = d.get("opencl", "utilisation", "fill", s, n, p, "time")
        blocks = d.ops("opencl", "utilisation", "fill", s, n, p, "utilisation")
        r = [size_str(s), str(blocks), fmt(u, 4), fmt(a, 4), fmt(t), fmt(rate(blocks, t), 3),
             fmt(d.get("opencl", "utilisation", "fill_free", s, n, p, "time"))]
        if d.has_cuda:
            cu = d.get("cuda", "utilisation", "fill", s, n, p, "utilisation")
            ct = d.get("cuda", "utilisation", "fill", s, n, p, "time")
            r += [str(d.ops("cuda", "utilisation", "fill", s, n, p, "utilisation") or "–"),
                  fmt(cu, 4), fmt(ct), ratio(t, ct)]
        rows.append(r)
    n = keys[0][1]
    return ("## 4. Heap utilisation\n\n%d work-items allocate S-byte blocks until malloc returns "
            "NULL, on the %s fill heap. \"obtained ÷ heap\" is the bytes requested and granted "
            "over the heap size (the lowest of the repetitions); the bump-pointer ceiling is 1 "
            "by definition. The allocator's own count is its bytes-in-use statistic "
            "(CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT, requests rounded to its size classes).\n\n"
            % (n, size_str(d.meta.get("fill_heap_usable") or d.meta.get("fill_heap", 0)))) + \
        table(head, rows) + "\n"


def frag_series(d, impl, kind, metric):
    out = {}
    for s, n, p in d.keys(impl, "fragmentation", metric, kind):
        out[int(p)] = d.get(impl, "fragmentation", kind, s, n, p, metric)
    return out


def sec_frag(d):
    if not d.keys("opencl", "fragmentation"):
        return ""
    heap = d.meta.get("fill_heap_usable") or d.meta.get("fill_heap") or 1
    n = d.keys("opencl", "fragmentation")[0][1]
    out = ("## 5. Fragmentation\n\nRandom sizes 16-%d B, %d blocks per round, on the %s fill "
           "heap. Each round runs once.\n\n" % (d.keys("opencl", "fragmentation")[0][0], n,
                                                 size_str(heap)))
    span = frag_series(d, "opencl", "steady", "span")
    rspan = frag_series(d, "opencl", "steady", "round_span")
    mt = frag_series(d, "opencl", "steady", "malloc_time")
    head = ["round", "range touched so far", "range of this round", "malloc ms"]
    cspan = frag_series(d, "cuda", "steady", "span") if d.has_cuda else {}
    cmt = frag_series(d, "cuda", "steady", "malloc_time") if d.has_cuda else {}
    if d.has_cuda:
        head += ["CUDA range so far", "CUDA malloc ms"]
    rows = []
    for r in sorted(span):
        row = [str(r), "%.2f MiB" % (span[r] / MIB), "%.2f MiB" % (rspan[r] / MIB), fmt(mt[r])]
        if d.has_cuda:
            row += ["%.2f MiB" % (cspan[r] / MIB) if r in cspan else "–", fmt(cmt.get(r))]
        rows.append(row)
    out += ("**Steady**: every round mallocs the blocks and frees them all; an allocator that "
            "reuses memory keeps the range of addresses touched flat.\n\n") + table(head, rows)
    fill = frag_series(d, "opencl", "fill", "fill")
    fmt_ = frag_series(d, "opencl", "fill", "malloc_time")
    nulls = frag_series(d, "opencl", "fill", "nulls")
    fspan = frag_series(d, "opencl", "fill", "span")
    peak = frag_series(d, "opencl", "fill", "peak_fill")
    peak_use = frag_series(d, "opencl", "fill", "peak_in_use")
    head = ["round", "heap full (before)", "peak: requested / in use", "malloc ms", "÷ round 0",
            "NULLs", "range touched ÷ heap"]
    cfill = frag_series(d, "cuda", "fill", "fill") if d.has_cuda else {}
    cft = frag_series(d, "cuda", "fill", "malloc_time") if d.has_cuda else {}
    cnull = frag_series(d, "cuda", "fill", "nulls") if d.has_cuda else {}
    if d.has_cuda:
        head += ["CUDA heap full", "CUDA malloc ms", "CUDA ÷ round 0", "CUDA NULLs", "÷ CUDA"]
    rows = []
    t0, c0 = fmt_.get(0), cft.get(0)
    for r in sorted(fill):
        pk = ("%.1f / %.1f %%" % (100 * peak[r], 100 * peak_use[r])
              if r in peak and r in peak_use else "–")
        row = [str(r), "%.1f %%" % (100 * fill[r]), pk, fmt(fmt_[r]), ratio(fmt_[r], t0),
               "%d" % nulls[r], "%.3f" % (fspan[r] / heap)]
        if d.has_cuda:
            row += ["%.1f %%" % (100 * cfill[r]) if r in cfill else "–", fmt(cft.get(r)),
                    ratio(cft.get(r), c0), "%d" % cnull[r] if r in cnull else "–",
                    ratio(fmt_[r], cft.get(r))]
        rows.append(row)
    out += ("\n**Fill** (the slowdown curve): every round mallocs the blocks and frees half of "
            "them (chosen at random), so the heap fills up; malloc time per round against how "
            "full the heap was before it, until half a round gets NULL. \"peak\": with every "
            "block of the round live, before its frees: bytes requested, and bytes in use "
            "(rounded up to size classes) by the allocator's own count.\n\n") + table(head, rows)
    one = frag_series(d, "opencl", "fill_one", "fill")
    if one:
        size = d.keys("opencl", "fragmentation", "fill", "fill_one")[0][0]
        ot = frag_series(d, "opencl", "fill_one", "malloc_time")
        on = frag_series(d, "opencl", "fill_one", "nulls")
        cfill = frag_series(d, "cuda", "fill_one", "fill") if d.has_cuda else {}
        cft = frag_series(d, "cuda", "fill_one", "malloc_time") if d.has_cuda else {}
        cnull = frag_series(d, "cuda", "fill_one", "nulls") if d.has_cuda else {}
        head = ["round", "heap full (before)", "malloc ms", "÷ round 0", "NULLs"]
        if d.has_cuda:
            head += ["CUDA heap full", "CUDA malloc ms", "CUDA ÷ round 0", "CUDA NULLs", "÷ CUDA"]
        rows = []
        t0, c0 = ot.get(0), cft.get(0)
        for r in sorted(one):
            row = [str(r), "%.1f %%" % (100 * one[r]), fmt(ot[r]), ratio(ot[r], t0),
                   "%d" % on[r]]
            if d.has_cuda:
                row += ["%.1f %%" % (100 * cfill[r]) if r in cfill else "–", fmt(cft.get(r)),
                        ratio(cft.get(r), c0), "%d" % cnull[r] if r in cnull else "–",
                        ratio(ot[r], cft.get(r))]
            rows.append(row)
        out += ("\n**Fill, one size**: every round mallocs %d blocks of %d B and keeps them all, "
                "until half a round gets NULL: the slowdown of one size class as the heap fills, "
                "without holes.\n\n" % (d.keys("opencl", "fragmentation", "fill", "fill_one")[0][1],
                                         size)) + table(head, rows)
    return out + "\n"


def sec_oom(d):
    keys = d.keys("opencl", "oom", "obtained")
    if not keys:
        return ""
    head = ["round", "S", "obtained ÷ heap", "÷ first round of S", "failing launch ms",
            "µs per failing malloc", "late successes"]
    if d.has_cuda:
        head += ["CUDA obtained ÷ heap", "CUDA ÷ first", "CUDA failing launch ms", "÷ CUDA"]
    rows = []
    for s, n, p in keys:
        g = lambda impl, k, m: d.get(impl, "oom", k, s, n, p, m)
        ft = g("opencl", "malloc_full", "time")
        row = [p, size_str(s), fmt(g("opencl", "fill", "obtained"), 4),
               fmt(g("opencl", "fill", "recovered"), 4), fmt(ft),
               fmt(ft * 1e3 / n if ft is not None else None, 2),
               "%d" % g("opencl", "malloc_full", "late_successes")]
        if d.has_cuda:
            cft = g("cuda", "malloc_full", "time")
            row += [fmt(g("cuda", "fill", "obtained"), 4), fmt(g("cuda", "fill", "recovered"), 4),
                    fmt(cft), ratio(ft, cft)]
        rows.append(row)
    return ("## 6. Out of memory\n\nThe heap is exhausted %d times in a row (%d work-items "
            "allocate until NULL, everything freed in between, no reset), the block size "
            "changing between rounds; \"÷ first round of S\" is the capacity recovered after "
            "the frees. A failing launch is %d mallocs on the full heap, all of which should "
            "return NULL (\"late successes\" counts those that did not).\n\n"
            % (len(keys), keys[0][1], keys[0][1])) + table(head, rows) + "\n"


def sec_workload(d):
    keys = d.keys("opencl", "workload", "produce", "malloc")
    if not keys:
        return ""
    head = ["N", "values", "malloc ms", "÷ prefix", "÷ bump", "prefix ms", "bump ms", "free ms",
            "read back: malloc ms", "compact ms"]
    if d.has_cuda:
        head += ["CUDA malloc ms", "CUDA prefix ms", "malloc ÷ CUDA malloc", "CUDA malloc ÷ CUDA prefix"]
    rows = []
    for s, n, p in keys:
        g = lambda impl, k, m: d.get(impl, "workload", k, s, n, p, m)
        m, pr, b = g("opencl", "malloc", "produce"), g("opencl", "prefix", "produce"), \
            g("opencl", "bump", "produce")
        row = [str(n), str(d.ops("opencl", "workload", "malloc", s, n, p, "produce")), fmt(m),
               ratio(m, pr), ratio(m, b), fmt(pr), fmt(b), fmt(g("opencl", "malloc", "free")),
               fmt(g("opencl", "malloc", "consume")), fmt(g("opencl", "prefix", "consume"))]
        if d.has_cuda:
            cm, cp = g("cuda", "malloc", "produce"), g("cuda", "prefix", "produce")
            row += [fmt(cm), fmt(cp), ratio(m, cm), ratio(cm, cp)]
        rows.append(row)
    return ("## 7. A real workload: list building\n\nEach work-item emits 0-%d values (16 on "
            "average, like the neighbours a graph expansion finds). **malloc**: one kernel, each "
            "work-item mallocs its own array and fills it. **prefix**: the classic version "
            "without malloc, count + exclusive prefix sum (three kernels) + fill into one "
            "compact array allocated beforehand at its bound (time = the sum of the five "
            "kernels). **bump**: one kernel reserving space with an atomic_add (the ceiling). "
            "\"read back\" is a kernel summing every value through the pointers / the compact "
            "array. Sums checked on every repetition.\n\n" % (2 * 16)) + table(head, rows) + "\n"


def sec_overhead(d):
    g = lambda impl, k, p, m, med=True: d.get(impl, "overhead", k, 0, 256, p, m, median=med)
    if g("opencl", "noalloc", "layer", "enqueue") is None:
        return ""
    head = ["kernel", "figure", "with the layer µs", "without µs", "÷ without"]
    if d.has_cuda:
        head += ["CUDA µs", "÷ CUDA"]
    rows = []
    for k, label in (("noalloc", "non-allocating k_noalloc"), ("alloc", "allocating k_overhead_alloc")):
        for m, what in (("enqueue", "clEnqueueNDRangeKernel"), ("finish", "enqueue + clFinish")):
            a = g("opencl", k, "layer", m)
            b = g("opencl", "noalloc", "nolayer", m)
            row = [label, what, fmt(a, 1), fmt(b, 1), ratio(a, b)]
            if d.has_cuda:
                c = g("cuda", k, "cuda", m)
                row += [fmt(c, 1), ratio(a, c)]
            rows.append(row)
    out = ("## 8. Layer overhead\n\nHost-clock latencies of %s launches of %d work-items each, "
           "median (the best is in the CSV). \"without\" is this program run again without "
           "the layer; the allocating kernel cannot run without it, so it is compared with the "
           "non-allocating kernel without the layer (its extra cost is the layer's heap "
           "binding plus the kernel's allocations).\n\n" % (d.meta.get("latency_reps", "?"), 256)) + \
        table(head, rows)
    cg = lambda k, p, m: d.get("opencl", "overhead", k, 0, 0, p, m, median=True)
    rows = []
    for k, p, what in (("program_alloc", "layer", "allocating module, lowered by the layer"),
                       ("program_lowered", "nolayer", "the same module lowered at build time, no layer"),
                       ("program_noalloc", "layer", "non-allocating module, with the layer"),
                       ("program_noalloc", "nolayer", "non-allocating module, no layer"),
                       ("program_noalloc_source", "nolayer", "non-allocating, from source, no layer")):
        c = cg(k, p, "create")
        if c is None:
            continue
        rows.append([what, fmt(c), fmt(cg(k, p, "build"))])
    if rows:
        base = cg("program_lowered", "nolayer", "create")
        lay = cg("program_alloc", "layer", "create")
        out += ("\nProgram creation (clCreateProgramWithIL, median of %s) and the first "
                "clBuildProgram (which the driver may serve from its cache):\n\n"
                % d.meta.get("create_reps", "the repetitions")) + \
            table(["module", "create ms", "first build ms"], rows)
        if base and lay:
            out += "\nLowering in the layer: creation %.2f ÷ the pre-lowered module's.\n" % (lay / base)
    return out + "\n"


def multi_shapes(d):
    """Case 9: [(size, n, [device numbers])] in file order, from its warm malloc rows."""
    shapes, devices = [], {}
    for s, n, p in d.keys("opencl", "multidevice", "time", "malloc"):
        mode, _, dev = p.partition("-")
        if mode not in ("alone", "together") or not dev.isdigit():
            continue
        if (s, n) not in devices:
            devices[(s, n)] = []
            shapes.append((s, n))
        if int(dev) not in devices[(s, n)]:
            devices[(s, n)].append(int(dev))
    return [(s, n, sorted(devices[(s, n)])) for s, n in shapes]


def multi_get(d, kernel, s, n, param, metric="time"):
    return d.get("opencl", "multidevice", kernel, s, n, param, metric)


def multi_devices_text(d):
    """'device 0: NAME, device 1: NAME' from the meta data (case 9's devices), or ''."""
    names = d.meta.get("multi_devices") or []
    heaps = d.meta.get("multi_heap_usable") or []
    return ", ".join("device %d: %s%s" % (i, name, " (heap %s)" % size_str(heaps[i])
                                           if i < len(heaps) and heaps[i] else "")
                     for i, name in enumerate(names))


MULTI_MEASURES = (("malloc", "time"), ("malloc", "cold"), ("free", "time"), ("bump", "time"))


def multi_alone_together(d, s, n, i):
    """Device i's (alone, together) kernel ms for each of MULTI_MEASURES, in that order."""
    return [(multi_get(d, kernel, s, n, "alone-%d" % i, metric),
             multi_get(d, kernel, s, n, "together-%d" % i, metric))
            for kernel, metric in MULTI_MEASURES]


def multi_concurrency(d, kernel, s, n, devs):
    """(sum over the devices of the host clock alone, the host clock together, their ratio)."""
    alone = [multi_get(d, kernel, s, n, "alone-%d" % i, "wall") for i in devs]
    total = sum(alone) if all(a is not None for a in alone) else None
    together = multi_get(d, kernel, s, n, "together-all", "wall")
    return total, together, ratio(total, together)


def sec_multi(d):
    shapes = multi_shapes(d)
    if not shapes:
        return ""
    head = ["S", "N per device", "device", "malloc alone ms", "together ms", "÷ alone",
            "cold alone ms", "cold together ms", "÷ alone", "free alone ms", "together ms",
            "÷ alone", "bump alone ms", "together ms", "÷ alone"]
    rows = []
    for s, n, devs in shapes:
        for i in devs:
            row = [size_str(s), str(n), str(i)]
            for a, t in multi_alone_together(d, s, n, i):
                row += [fmt(a), fmt(t), ratio(t, a)]
            rows.append(row)
    out = ("## 9. Several devices\n\nOne context of %d devices (%s), one heap each, the suite's "
           "programs built once for all of them. Case 1's launch shapes (N work-items per device "
           "each malloc S bytes, then free them in a second launch) run on each device alone "
           "while the others idle, then on all of them at once, one host thread per device "
           "enqueuing, the threads released together. \"÷ alone\": the device's kernel time "
           "together ÷ alone, in the same run (above 1: the other devices' work slowed it). The "
           "bump-pointer kernel does not allocate: its ratio is what running together costs "
           "without the allocator (devices sharing hardware, such as a CPU driver's devices "
           "sharing the host's cores). Cold: the first launch of the shape on heaps just reset "
           "(after the warm-up, so that the heaps' memory was touched in both modes).\n\n"
           % (len(shapes[0][2]), multi_devices_text(d) or "?")) + table(head, rows)
    head = ["S", "N per device", "malloc: alone, summed ms", "together ms", "concurrency",
            "free: alone, summed ms", "together ms", "concurrency"]
    rows = []
    for s, n, devs in shapes:
        row = [size_str(s), str(n)]
        for kernel in ("malloc", "free"):
            total, together, r = multi_concurrency(d, kernel, s, n, devs)
            row += [fmt(total), fmt(together), r]
        rows.append(row)
    out += ("\nOn the host clock, from the first enqueue to the last completion: the devices' "
            "launches alone summed, against all of them together. Concurrency near the number "
            "of devices: the launches ran side by side; near 1: one after another.\n\n") + \
        table(head, rows)
    return out + "\n"


# ---------------------------------------------------------------- plots

def plots(d):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report.py: matplotlib is not installed (Debian: python3-matplotlib): no plots",
              file=sys.stderr)
        return []
    made = []
    styles = {("opencl", "malloc"): ("cldm malloc", "C0", "-"),
              ("opencl", "free"): ("cldm free", "C1", "-"),
              ("opencl", "malloc_free"): ("cldm malloc+free", "C2", "-"),
              ("opencl", "bump"): ("bump pointer", "C7", ":"),
              ("opencl", "prealloc"): ("preallocated", "k", ":"),
              ("cuda", "malloc"): ("CUDA malloc", "C3", "--"),
              ("cuda", "free"): ("CUDA free", "C4", "--"),
              ("cuda", "malloc_free"): ("CUDA malloc+free", "C5", "--"),
              ("cuda", "bump"): ("CUDA bump", "C8", "-."),
              }
    title = "%s, %s" % (d.meta.get("device", "?"), d.meta.get("date", "")[:10])

    def save(fig, name):
        path = os.path.join(d.dir, name)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        made.append(name)

    # 1: rate against size
    keys = d.keys("opencl", "throughput", "time", "malloc")
    if keys:
        fig, ax = plt.subplots(figsize=(8, 5))
        for (impl, kern), (label, color, ls) in styles.items():
            xs, ys = [], []
            for s, n, p in keys:
                t = d.get(impl, "throughput", kern, s, n, p, "time")
                if t:
                    xs.append(s)
                    ys.append(rate(d.ops(impl, "throughput", kern, s, n, p, "time"), t))
            if xs:
                ax.plot(xs, ys, ls, color=color, marker="o", ms=3, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("block size S (bytes); N work-items as the heap allows")
        ax.set_ylabel("million operations / s")
        ax.set_title("1. Throughput — " + title)
        ax.grid(True, which="both", alpha=.3)
        ax.legend(fontsize=8)
        save(fig, "throughput.png")
    # 2: rate against N per S_max
    keys = d.keys("opencl", "mixed", "time", "malloc")
    if keys:
        fig, ax = plt.subplots(figsize=(8, 5))
        for smax in sorted({k[0] for k in keys}):
            for (impl, kern) in (("opencl", "malloc"), ("opencl", "bump"), ("cuda", "malloc")):
                xs, ys = [], []
                for s, n, p in keys:
                    t = d.get(impl, "mixed", kern, s, n, p, "time")
                    if s == smax and t:
                        xs.append(n)
                        ys.append(rate(d.ops(impl, "mixed", kern, s, n, p, "time"), t))
                if xs:
                    label, color, ls = styles[(impl, kern)]
                    ax.plot(xs, ys, ls, marker="o" if smax > 256 else "s", ms=3,
                            label="%s, 16-%d B" % (label, smax))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("work-items N")
        ax.set_ylabel("million mallocs / s")
        ax.set_title("2. Mixed sizes — " + title)
        ax.grid(True, which="both", alpha=.3)
        ax.legend(fontsize=8)
        save(fig, "mixed.png")
    # 3: time against k
    keys = d.keys("opencl", "divergent", "time", "malloc")
    if keys:
        fig, ax = plt.subplots(figsize=(8, 5))
        for size in sorted({k[0] for k in keys}):
            for (impl, kern) in (("opencl", "malloc"), ("opencl", "bump"), ("opencl", "prealloc"),
                                 ("cuda", "malloc")):
                xs, ys = [], []
                for s, n, p in keys:
                    t = d.get(impl, "divergent", kern, s, n, p, "time")
                    if s == size and t:
                        xs.append(int(p))
                        ys.append(t)
                if xs:
                    label, color, ls = styles[(impl, kern)]
                    ax.plot(xs, ys, ls, marker="o" if size > 64 else "s", ms=3,
                            label="%s, S = %s" % (label, size_str(size)))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("k (every k-th work-item allocates)")
        ax.set_ylabel("kernel ms")
        ax.set_title("3. Divergent callers — " + title)
        ax.grid(True, which="both", alpha=.3)
        ax.legend(fontsize=8)
        save(fig, "divergent.png")
    # 4: utilisation bars
    keys = d.keys("opencl", "utilisation", "utilisation")
    if keys:
        fig, ax = plt.subplots(figsize=(8, 4))
        xs = list(range(len(keys)))
        w = .4 if d.has_cuda else .6
        ax.bar([x - (w / 2 if d.has_cuda else 0) for x in xs],
               [d.get("opencl", "utilisation", "fill", s, n, p, "utilisation") or 0 for s, n, p in keys],
               w, label="cldm", color="C0")
        if d.has_cuda:
            ax.bar([x + w / 2 for x in xs],
                   [d.get("cuda", "utilisation", "fill", s, n, p, "utilisation") or 0 for s, n, p in keys],
                   w, label="CUDA", color="C3")
        ax.set_xticks(xs, [size_str(k[0]) for k in keys], fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("bytes obtained ÷ heap")
        ax.set_title("4. Utilisation — " + title)
        ax.legend(fontsize=8)
        save(fig, "utilisation.png")
    # 5: slowdown curve and steady range
    if d.keys("opencl", "fragmentation"):
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.5))
        for impl, color, label in (("opencl", "C0", "cldm"), ("cuda", "C3", "CUDA")):
            fill = frag_series(d, impl, "fill", "fill")
            t = frag_series(d, impl, "fill", "malloc_time")
            if fill:
                rs = sorted(fill)
                a1.plot([100 * fill[r] for r in rs], [t[r] for r in rs], marker="o", ms=3,
                        color=color, label=label + ", mixed, half kept")
            fill = frag_series(d, impl, "fill_one", "fill")
            t = frag_series(d, impl, "fill_one", "malloc_time")
            if fill:
                rs = sorted(fill)
                a1.plot([100 * fill[r] for r in rs], [t[r] for r in rs], marker="s", ms=3,
                        linestyle="--", color=color, label=label + ", one size, all kept")
            span = frag_series(d, impl, "steady", "span")
            if span:
                rs = sorted(span)
                a2.plot(rs, [span[r] / MIB for r in rs], marker="o", ms=3, color=color, label=label)
        a1.set_xlabel("heap full before the round (%)")
        a1.set_ylabel("malloc kernel ms")
        a1.set_yscale("log")
        a1.set_title("5. Slowdown as the heap fills")
        a1.grid(True, which="both", alpha=.3)
        a1.legend(fontsize=8)
        a2.set_xlabel("round (malloc all, free all)")
        a2.set_ylabel("address range touched (MiB)")
        top = max([v / MIB for impl in ("opencl", "cuda")
                   for v in frag_series(d, impl, "steady", "span").values()] or [1])
        a2.set_ylim(0, top * 1.2)
        a2.set_title("5. Range touched, steady rounds")
        a2.grid(True, alpha=.3)
        a2.legend(fontsize=8)
        fig.suptitle(title, fontsize=9)
        save(fig, "fragmentation.png")
    # 6: obtained per round
    keys = d.keys("opencl", "oom", "obtained")
    if keys:
        fig, ax = plt.subplots(figsize=(8, 4))
        xs = list(range(len(keys)))
        w = .4 if d.has_cuda else .6
        ax.bar([x - (w / 2 if d.has_cuda else 0) for x in xs],
               [d.get("opencl", "oom", "fill", s, n, p, "obtained") or 0 for s, n, p in keys],
               w, label="cldm", color="C0")
        if d.has_cuda:
            ax.bar([x + w / 2 for x in xs],
                   [d.get("cuda", "oom", "fill", s, n, p, "obtained") or 0 for s, n, p in keys],
                   w, label="CUDA", color="C3")
        ax.set_xticks(xs, ["round %s\n%s" % (p, size_str(s)) for s, n, p in keys], fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("bytes obtained ÷ heap")
        ax.set_title("6. Repeated exhaustion — " + title)
        ax.legend(fontsize=8)
        save(fig, "oom.png")
    # 7: produce time against N
    keys = d.keys("opencl", "workload", "produce", "malloc")
    if keys:
        fig, ax = plt.subplots(figsize=(8, 5))
        for impl, kern, label, color, ls in (
                ("opencl", "malloc", "cldm malloc", "C0", "-"),
                ("opencl", "prefix", "count + scan + fill", "k", ":"),
                ("opencl", "bump", "bump pointer", "C7", ":"),
                ("cuda", "malloc", "CUDA malloc", "C3", "--"),
                ("cuda", "prefix", "CUDA count + scan + fill", "C5", "--")):
            xs = [n for s, n, p in keys if d.get(impl, "workload", kern, s, n, p, "produce")]
            ys = [d.get(impl, "workload", kern, s, n, p, "produce") for s, n, p in keys
                  if d.get(impl, "workload", kern, s, n, p, "produce")]
            if xs:
                ax.plot(xs, ys, ls, color=color, marker="o", ms=3, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("work-items N")
        ax.set_ylabel("kernel ms to produce the output")
        ax.set_title("7. List building — " + title)
        ax.grid(True, which="both", alpha=.3)
        ax.legend(fontsize=8)
        save(fig, "workload.png")
    # 8: latency bars
    g = lambda impl, k, p, m: d.get(impl, "overhead", k, 0, 256, p, m, median=True)
    if g("opencl", "noalloc", "layer", "enqueue") is not None:
        bars = [("noalloc\nno layer", g("opencl", "noalloc", "nolayer", "enqueue"),
                 g("opencl", "noalloc", "nolayer", "finish"), "k"),
                ("noalloc\nlayer", g("opencl", "noalloc", "layer", "enqueue"),
                 g("opencl", "noalloc", "layer", "finish"), "C0"),
                ("alloc\nlayer", g("opencl", "alloc", "layer", "enqueue"),
                 g("opencl", "alloc", "layer", "finish"), "C2")]
        if d.has_cuda:
            bars += [("noalloc\nCUDA", g("cuda", "noalloc", "cuda", "enqueue"),
                      g("cuda", "noalloc", "cuda", "finish"), "C3"),
                     ("alloc\nCUDA", g("cuda", "alloc", "cuda", "enqueue"),
                      g("cuda", "alloc", "cuda", "finish"), "C5")]
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
        for ax, idx, what in ((a1, 1, "enqueue"), (a2, 2, "enqueue + finish")):
            ax.bar(range(len(bars)), [b[idx] or 0 for b in bars], color=[b[3] for b in bars])
            ax.set_xticks(range(len(bars)), [b[0] for b in bars], fontsize=8)
            ax.set_ylabel("µs (median)")
            ax.set_title("8. " + what)
        fig.suptitle(title, fontsize=9)
        save(fig, "overhead.png")
    return made


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--note", help="a note for the top of summary.md (kept in note.txt)")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--doc", metavar="FILE", help="docs/performance.md's section into FILE")
    ap.add_argument("--plots", metavar="DIR", help="--doc: where its plots go (none without)")
    ap.add_argument("--plots-link", metavar="PREFIX",
                    help="--doc: the plots' path in the Markdown (default: DIR's name + /)")
    ap.add_argument("--command", help="--doc: the command that reproduces the run "
                    "(default: the folder's command.txt)")
    ap.add_argument("--sizes", default="16,64,256,1024,4096",
                    help="--doc: case 1's block sizes in the tables (comma-separated, or all)")
    a = ap.parse_args()
    d = Data(a.dir)
    if not d.rows and (a.doc or not d.meta):
        print("report.py: no rows in %s/opencl.csv" % a.dir, file=sys.stderr)
        return 1
    if a.doc:
        import report_doc
        try:
            sizes = None if a.sizes == "all" else [int(x) for x in a.sizes.split(",")]
        except ValueError:
            ap.error("--sizes: comma-separated byte counts, or all")
        return report_doc.write(d, a.doc, a.plots, a.plots_link, a.command, sizes)
    note_path = os.path.join(a.dir, "note.txt")
    if a.note:
        with open(note_path, "w") as f:
            f.write(a.note.strip() + "\n")
    note = open(note_path).read().strip() if os.path.exists(note_path) else ""
    m = d.meta
    made = [] if a.no_plots else plots(d)
    out = ["# Benchmark suite: %s\n" % m.get("device", "?")]
    out.append("Run of %s on host `%s` (%s CPUs): `cldm-bench-suite` (OpenCL through the "
               "cl_ext_device_malloc layer) on **%s** (%s, %s; %s compute units), %s scale, "
               "%s.%s\n" % (m.get("date", "?"), m.get("host", "?"), m.get("host_cpus", "?"),
                            m.get("device", "?"),
                            m.get("platform", "?"), m.get("device_version", "?"),
                            m.get("compute_units", "?"), m.get("scale", "?"),
                            # a run stopped from outside never wrote its time (-1)
                            "%.0f s" % m["seconds"] if m.get("seconds", 0) >= 0
                            else "stopped before its end",
                                (" `cldm-bench-cuda` (CUDA's device malloc, %s) on the same GPU "
                                 "in the same run, %.0f s." % (d.cuda_meta.get("device"),
                                                               d.cuda_meta.get("seconds", 0)))
                                if d.cuda_meta else ""))
    if note:
        out.append("**Note:** %s\n" % note)
    out.append("Heap %s for cases 1-3 and 7, %s for cases 4-6, the default 8 MiB for case 8 "
               "(%s: the same sizes set with "
               "`clSetDeviceHeapSizeEXT`%s); up to %s work-items per launch, work-groups of %s. "
               "Times are kernel execution times (OpenCL event profiling%s), the best of %s "
               "repetitions after one warm-up (medians in the CSV); every repetition is checked "
               "(no NULL where the heap has room, no overlapping blocks, ids written into the "
               "blocks intact at free, the heap empty afterwards).\n"
               % (size_str(m.get("heap_usable") or m.get("heap", 0)),
                  size_str(m.get("fill_heap_usable") or m.get("fill_heap", 0)),
                  "usable sizes", " and `cudaDeviceSetLimit(cudaLimitMallocHeapSize)`" if d.has_cuda else "",
                  m.get("n_max"), m.get("local_size"), "; CUDA events" if d.has_cuda else "",
                  m.get("reps")))
    budgets = [x for x in (m.get("budget_s"), (d.cuda_meta or {}).get("budget_s")) if x]
    if budgets:
        out.append("Cases 1-3 ran with a time budget of %g s per case (`--budget`): launch "
                   "shapes reached after it are missing from the tables, and figures after the "
                   "budget ran out rest on fewer repetitions (the CSV's `reps` column); run.log "
                   "lists what was skipped.\n" % max(budgets))
    stopped = [(impl, x.get("stopped")) for impl, x in (("OpenCL", m), ("CUDA", d.cuda_meta or {}))
               if x.get("stopped")]
    if stopped:
        out.append("Each case ran in a process of its own with a time limit (`--case-timeout`); "
                   "stopped before their end: %s.\n"
                   % "; ".join("%s case(s) %s" % (impl, c) for impl, c in stopped))
    out.append("**Ratios** are time ratios A ÷ B of one run: above 1, A is slower. "
               "\"÷ bump\": against a bump-pointer kernel (one atomic_add per block, no reuse: the "
               "ceiling); \"÷ prealloc\": against writing preallocated buffers (no allocation); "
               "\"free ÷ check\": the free launch against a launch that reads each block's first "
               "word (the check of the ids before the free, in a launch of its own)"
               "%s.\n" % ("; \"÷ CUDA\": against CUDA's device malloc" if d.has_cuda else ""))
    if not d.rows:  # a run whose cases measured nothing, such as case 9 on one device
        out.append("**No figures**: the cases run (%s) wrote no rows; run.log says why.\n"
                   % m.get("cases", "?"))
    fails = (m.get("failures") or "").strip()
    cfails = ((d.cuda_meta or {}).get("failures") or "").strip()
    if fails or cfails:
        out.append("**Failed checks** (the figures of these cases are missing):\n\n```\n%s\n```\n"
                   % "\n".join(x for x in (fails, cfails) if x))
    out.append(sec_alloc(d, "throughput", "1. Throughput",
                         "N work-items each malloc S bytes in one launch (malloc), free them in "
                         "a second (free; their ids are checked in a launch of its own before "
                         "it, check), and malloc + free in one (m+f). N is the largest "
                         "power of two up to %s whose blocks fill at most half the heap. "
                         "\"cold\": the first malloc launch of the shape on a fresh heap (reset, "
                         "or for CUDA a new context), next to the first bump launch of the shape."
                         % m.get("n_max"),
                         ("S", lambda s, n, p: size_str(s))))
    out.append(sec_alloc(d, "mixed", "2. Mixed sizes",
                         "Random sizes, uniform in [16 B, S_max], scaling in N.",
                         ("S_max", lambda s, n, p: size_str(s))))
    out.append(sec_alloc(d, "divergent", "3. Divergent callers",
                         "Only every k-th work-item allocates (the others take the branch "
                         "around malloc); \"allocs\" is N / k.",
                         ("S, k", lambda s, n, p: "%s, k=%s" % (size_str(s), p))))
    out.append(sec_util(d))
    out.append(sec_frag(d))
    out.append(sec_oom(d))
    out.append(sec_workload(d))
    out.append(sec_overhead(d))
    out.append(sec_multi(d))
    if made:
        out.append("## Plots\n\n" + "\n".join("![%s](%s)" % (p[:-4], p) for p in made) + "\n")
    out.append("Files: `opencl.csv`%s (schema in bench/README.md), `opencl.meta.json`%s.\n"
               % (", `cuda.csv`" if d.has_cuda else "", ", `cuda.meta.json`" if d.cuda_meta else ""))
    with open(os.path.join(a.dir, "summary.md"), "w") as f:
        f.write("\n".join(out))
    print("report.py: wrote %s/summary.md%s" % (a.dir, " and %d plots" % len(made) if made else ""),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
